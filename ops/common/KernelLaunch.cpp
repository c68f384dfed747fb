//===- KernelLaunch.cpp - A prepared kernel launch as phase 2 -------------===//
#include "ops/common/KernelLaunch.h"

#include "ops/common/RunStates.h"
#include "ops/host/Kernels.h"

namespace tilejit::ops {

using host::launchKernel;

namespace {
/// A run's own scratch and the pack pointing into it.
struct ScratchRun {
  rt::ArgPack args;
  std::vector<int64_t> scratch;

  static std::unique_ptr<ScratchRun> over(const rt::ArgPack &args,
                                          const std::vector<int64_t> &from) {
    auto r = std::make_unique<ScratchRun>();
    r->args = args;
    relocateBuffer(from, r->scratch, r->args);
    return r;
  }
  std::unique_ptr<ScratchRun> clone() const { return over(args, scratch); }
};
} // namespace

void setKernelLaunch(host::Executor &executor,
                     std::shared_ptr<const KernelLaunch> launch, const char *op) {
  executor.addKernelUse(launch->use);
  if (launch->scratch.empty()) {
    executor.setLaunch([launch = std::move(launch), op](const host::LaunchContext &) {
      return launchKernel(*launch->kernel, launch->args, op);
    });
    return;
  }
  // The phase-1 scratch goes with `launch`; the pool makes its own.
  auto states = std::make_shared<RunStates<ScratchRun>>(
      ScratchRun::over(launch->args, launch->scratch));
  executor.setLaunch([kernel = launch->kernel, states, op](const host::LaunchContext &) {
    return states->run([&](ScratchRun &r) { return launchKernel(*kernel, r.args, op); });
  });
}

} // namespace tilejit::ops
