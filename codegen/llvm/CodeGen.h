//===- CodeGen.h - Tile IR to an llvm::Module --------------------*- C++ -*-===//
///
/// \file
/// Lowers one planned Tile IR kernel (after the default pass pipeline) to an
/// llvm::Module with explicit vector types at the target's width: the vector
/// unit (elementwise ops, fused loops, reductions, conversions, math), the
/// cube unit (`mma` as a register-blocked FMA micro-kernel), and data movement
/// (masked loads/stores for tails, gathers). The module defines the three
/// symbols of runtime/Runtime.h for the given stem and declares the row-move
/// functions it calls, which the runtime library (lowerRuntimeLibrary)
/// defines. Knows nothing of caches or JIT state.
///
//===----------------------------------------------------------------------===//
#ifndef TILEJIT_CODEGEN_LLVM_CODEGEN_H
#define TILEJIT_CODEGEN_LLVM_CODEGEN_H

#include "codegen/passes/Target.h"
#include "dsl/ir/IR.h"
#include "dsl/support/Diagnostics.h"

#include "llvm/Support/Error.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace llvm {
class LLVMContext;
class Module;
class TargetMachine;
} // namespace llvm

namespace tilejit::codegen {

/// Lowers `kernel` into a new module in `ctx`. Fails (with diagnostics) only
/// on IR that the verifier should have rejected or on unsupported forms.
std::unique_ptr<llvm::Module> lowerToLLVM(const ir::Kernel &kernel,
                                          llvm::LLVMContext &ctx,
                                          const TargetInfo &target,
                                          const std::string &symbolStem,
                                          DiagnosticEngine &diags);

/// The names of the runtime library's functions: the row-move functions of
/// the partial-tile slow paths (every element width, direction and mask
/// reading), which kernel modules only declare.
std::vector<std::string> runtimeLibraryFunctions();

/// The runtime library of the kernels for `target`: a module defining its
/// functions, or only the one named `only` (one of
/// runtimeLibraryFunctions()). A JIT compiles each once and links every
/// kernel against them. Fails (with diagnostics) only on an internal error.
std::unique_ptr<llvm::Module> lowerRuntimeLibrary(llvm::LLVMContext &ctx,
                                                  const TargetInfo &target,
                                                  DiagnosticEngine &diags,
                                                  const std::string &only = "");

/// Optimises a generated module for `tm`: at `optLevel` 0 LLVM's O0
/// pipeline, at 1..3 the kernel pipeline (see Optimize.cpp): the scalar and
/// loop clean-up generated kernels need, without vectorisers or unrolling.
/// With `passTimes`, the wall time of each pass is printed there (the
/// `passes` dump).
void optimizeModule(llvm::Module &module, llvm::TargetMachine &tm,
                    unsigned optLevel, llvm::raw_ostream *passTimes = nullptr);

} // namespace tilejit::codegen

#endif
