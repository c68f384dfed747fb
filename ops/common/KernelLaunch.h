//===- KernelLaunch.h - A prepared kernel launch as phase 2 -----*- C++ -*-===//
///
/// \file
/// The phase 2 of an operator that runs one kernel: phase 1 gets the kernel
/// and packs its arguments (ops/host/Kernels.h, KernelArgs.h) into a
/// KernelLaunch; setKernelLaunch makes it the executor's launch, giving each
/// concurrent run of a repeatable executor its own scratch (RunStates).
///
//===----------------------------------------------------------------------===//
#ifndef TILEJIT_OPS_COMMON_KERNELLAUNCH_H
#define TILEJIT_OPS_COMMON_KERNELLAUNCH_H

#include "jit/Compiler.h"
#include "ops/host/Executor.h"

#include <cstdint>
#include <memory>
#include <vector>

namespace tilejit::ops {

/// One prepared launch of a kernel: phase 1 fills it, phase 2 runs it.
struct KernelLaunch {
  std::shared_ptr<const jit::CompiledKernel> kernel;
  rt::ArgPack args;
  host::KernelUse use; ///< the kernel's key and whether it was compiled
  /// Memory the kernel writes besides its outputs (`args` point into it),
  /// if any: each concurrent run gets its own (RunStates).
  std::vector<int64_t> scratch;
};

/// Makes `launch` the executor's phase 2 (errors name `op`) and records its
/// kernel use. Runs share `launch` (read only) unless it has scratch.
void setKernelLaunch(host::Executor &executor,
                     std::shared_ptr<const KernelLaunch> launch,
                     const char *op);

} // namespace tilejit::ops

#endif
