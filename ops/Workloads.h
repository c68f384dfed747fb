//===- Workloads.h - The built-in workloads that `tilejit demo` runs -*- C++ -*-===//
///
/// \file
/// Every built-in workload (the sample kernels of the core, then each
/// operator) runs on default shapes, checks the generated kernel against its
/// reference and times it against its hand-written twin. `tilejit demo` prints
/// these results; `tilejit dump` lists the built-in kernels.
///
//===----------------------------------------------------------------------===//
#ifndef TILEJIT_OPS_WORKLOADS_H
#define TILEJIT_OPS_WORKLOADS_H

#include "jit/Compiler.h"
#include "ops/host/Executor.h"

#include <functional>
#include <string>
#include <vector>

namespace tilejit::ops {

/// One workload's outcome; the fields of `tilejit demo --json`.
struct WorkloadResult {
  std::string name;
  std::string tilingKey;
  bool compiled = false;   ///< false when the kernel came from a cache
  double compileMs = 0;    ///< this request's compile time (0 on a hit)
  double maxAbsErr = 0;    ///< against the reference
  bool passed = false;     ///< within the workload's tolerance
  double generatedUs = 0;  ///< median time of the generated kernel
  double handwrittenUs = 0;///< median time of the hand-written twin
  std::string error;       ///< non-empty if the workload could not run
};

/// Runs an operator call once through its two phases for a workload: the
/// kernel's tiling key and compile time go into `r`. False, with `r.error`
/// set, if either phase fails.
template <typename Args>
bool runFirstCall(const Args &args,
                  host::Status (*prepare)(const Args &, host::Executor &),
                  WorkloadResult &r) {
  host::Executor first(Args::kOpName);
  host::Status s = prepare(args, first);
  if (!s) {
    r.error = s.message();
    return false;
  }
  if (!first.kernelUses().empty()) {
    const host::KernelUse &use = first.kernelUses()[0];
    r.tilingKey = use.kernel->key().str();
    r.compiled = use.compiled;
    r.compileMs = use.compiled ? use.kernel->times().total : 0;
  }
  std::vector<unsigned char> workspace(first.workspaceSize());
  if (host::Status run = first.run({workspace.data(), workspace.size()}); !run) {
    r.error = run.message();
    return false;
  }
  return true;
}

struct Workload {
  std::string name;
  std::string description;
  std::function<WorkloadResult()> run;
};

/// Every built-in workload, in demo order.
const std::vector<Workload> &workloads();

/// A built-in kernel with the specialisation its default workload uses.
struct BuiltinKernel {
  std::string name;        ///< e.g. "softmax"
  std::string sourcePath;  ///< e.g. "ops/samples/softmax.tile"
  std::string kernel;      ///< kernel name inside the source
  jit::Specialization spec;
};

/// Every built-in kernel (for `tilejit dump`).
const std::vector<BuiltinKernel> &builtinKernels();

/// Each operator's demo workloads and built-in kernels, defined in its folder
/// (ops/<operator>/<Operator>Workloads.cpp); workloads() and builtinKernels()
/// list them after the samples. Referencing them also links each operator's
/// aclnn registration into programs that use the static library.
std::vector<Workload> scatterPaKvCacheWorkloads();
std::vector<BuiltinKernel> scatterPaKvCacheKernels();
std::vector<Workload> gatherPaKvCacheWorkloads();
std::vector<BuiltinKernel> gatherPaKvCacheKernels();
std::vector<Workload> increFlashAttentionV4Workloads();
std::vector<BuiltinKernel> increFlashAttentionV4Kernels();
std::vector<Workload> nsaCompressWithCacheWorkloads();
std::vector<BuiltinKernel> nsaCompressWithCacheKernels();
std::vector<Workload> flashAttentionScoreGradWorkloads();
std::vector<BuiltinKernel> flashAttentionScoreGradKernels();

} // namespace tilejit::ops

#endif
