//===- Kernels.h - How an operator gets and launches kernels ----*- C++ -*-===//
///
/// \file
/// The JIT seen from an operator's host side: the process's compiler, a
/// compiled kernel for a specialisation, a launch, and how many programs a
/// grid should have. Here the JIT's llvm::Error becomes an aclnn status
/// (561003 for a kernel that cannot be had, 561000 for a launch that fails):
/// nothing above sees an llvm::Error.
///
//===----------------------------------------------------------------------===//
#ifndef TILEJIT_OPS_HOST_KERNELS_H
#define TILEJIT_OPS_HOST_KERNELS_H

#include "jit/Compiler.h"
#include "ops/host/Executor.h"
#include "ops/host/Status.h"

#include <algorithm>
#include <memory>
#include <string>

namespace tilejit::host {

/// The process's compiler for the host, or 561003 saying why there is none
/// (a bad TILEJIT_TARGET or TILEJIT_L1D_BYTES, a CPU without AVX2): an
/// operator reports it rather than abort its caller.
Status hostCompiler(jit::Compiler *&compiler);

/// A compiled kernel for an operator, or 561003 naming the kernel and the
/// compiler's message. `use`, if given, receives its key and compile time.
Status getKernel(const jit::KernelSource &source, const std::string &kernel,
                 const jit::Specialization &spec,
                 std::shared_ptr<const jit::CompiledKernel> &out,
                 KernelUse *use = nullptr);

/// Launches `kernel` and turns a launch error into 561000 naming `what`.
Status launchKernel(const jit::CompiledKernel &kernel, const rt::ArgPack &args,
                    const char *what);

/// The cores a launch may use (OpenMP's count, capped by
/// TILEJIT_NUM_THREADS).
int64_t launchThreads();

/// The number of programs a grid-stride kernel should use for `work` units:
/// enough to keep every core busy, at most `work`, at least 1.
int64_t programsFor(int64_t work);

/// Bytes one program should move at least before another is worth a thread
/// (a fork and join cost microseconds, more than a decode-sized call moves).
inline constexpr int64_t kBytesPerProgram = 64 << 10;

/// programsFor over `chunks` independent units of work moving `bytes` in
/// all: one program (no fork) for decode-sized calls.
inline int64_t programsForBytes(int64_t chunks, int64_t bytes) {
  return programsFor(std::min(chunks, bytes / kBytesPerProgram));
}

} // namespace tilejit::host

#endif
