//===- Executor.h - The prepared work of one operator call ------*- C++ -*-===//
///
/// \file
/// Phase 1 of an aclnn call (aclnnXxxGetWorkspaceSize) validates the
/// arguments and fills an Executor: the workspace size it needs and a launch
/// closure that does the work. Phase 2 (aclnnXxx) runs the closure on a
/// stream. The C handle aclOpExecutor is an Executor.
///
/// The closure must own everything it reads: copy the TensorViews, arrays
/// and attributes it needs (they are cheap), never keep pointers to the C
/// argument objects, which the caller may destroy between the two phases.
/// An executor with no closure (an empty problem) runs as a no-op.
///
//===----------------------------------------------------------------------===//
#ifndef TILEJIT_OPS_HOST_EXECUTOR_H
#define TILEJIT_OPS_HOST_EXECUTOR_H

#include "ops/host/Status.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace tilejit::jit {
class CompiledKernel;
}

namespace tilejit::host {

/// What a launch closure gets from phase 2.
struct LaunchContext {
  void *workspace = nullptr;  ///< the caller's workspace (may be null if 0)
  uint64_t workspaceSize = 0; ///< its size in bytes (>= the size asked for)
};

/// A compiled kernel phase 1 obtained (for `tilejit demo` and tools): its
/// tiling key and compile times are `kernel->key()` and `kernel->times()`.
/// Holding the kernel (not a copy of its key text) keeps phase 1 of a
/// decode-sized call free of string copies.
struct KernelUse {
  std::shared_ptr<const jit::CompiledKernel> kernel;
  bool compiled = false; ///< false when it came from a cache
};

/// The prepared work of one operator call.
class Executor {
public:
  /// The work itself; runs on the stream's thread.
  using LaunchFn = std::function<Status(const LaunchContext &)>;

  /// An executor for the operator `opName` (e.g. "aclnnScatterPaKvCache").
  explicit Executor(std::string opName) : opName_(std::move(opName)) {}

  /// The operator's aclnn name.
  const std::string &opName() const { return opName_; }

  /// The workspace phase 2 must provide, in bytes (default 0).
  uint64_t workspaceSize() const { return workspaceSize_; }
  /// Sets the workspace size phase 2 must provide.
  void setWorkspaceSize(uint64_t bytes) { workspaceSize_ = bytes; }

  /// Sets the launch closure.
  void setLaunch(LaunchFn launch) { launch_ = std::move(launch); }

  /// True if the executor may run more than once
  /// (aclSetAclOpExecutorRepeatable).
  bool isRepeatable() const { return repeatable_; }
  /// Marks the executor reusable; the caller then destroys it.
  void setRepeatable(bool repeatable) { repeatable_ = repeatable; }

  /// Records a kernel the launch will run.
  void addKernelUse(KernelUse use) { kernels_.push_back(std::move(use)); }
  /// The kernels the launch will run, in the order phase 1 obtained them.
  const std::vector<KernelUse> &kernelUses() const { return kernels_; }

  /// Runs the closure (no-op success when there is none).
  Status run(const LaunchContext &context) const {
    if (!launch_)
      return Status::ok();
    return launch_(context);
  }

private:
  std::string opName_;
  uint64_t workspaceSize_ = 0;
  LaunchFn launch_;
  std::vector<KernelUse> kernels_;
  bool repeatable_ = false;
};

/// The one-call C++ API of an operator: phase 1 (`prepare`), then phase 2
/// with the workspace phase 1 asked for. It trusts its views as C++ code
/// built them (the C API checks every descriptor first, in prepareOp; the
/// validation tests reshape views here to reach each shape rule).
template <typename Args>
Status prepareAndRun(const Args &args,
                     Status (*prepare)(const Args &, Executor &)) {
  Executor executor(Args::kOpName);
  if (Status s = prepare(args, executor); !s)
    return s;
  // Uninitialised, as a device workspace is: no kernel reads workspace it
  // did not write, and zero-filling megabytes of it would cost more than
  // some calls.
  const size_t size = executor.workspaceSize();
  auto workspace = std::make_unique_for_overwrite<unsigned char[]>(size);
  return executor.run(LaunchContext{workspace.get(), size});
}

} // namespace tilejit::host

#endif
