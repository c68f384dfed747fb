//===- CodeGen.h - Tile IR to an llvm::Module --------------------*- C++ -*-===//
///
/// \file
/// Lowers one planned Tile IR kernel (after the default pass pipeline) to an
/// llvm::Module with explicit vector types at the target's width: the vector
/// unit (elementwise ops, fused loops, reductions, conversions, math), the
/// cube unit (`mma` as a register-blocked FMA micro-kernel), and data movement
/// (masked loads/stores for tails, gathers). The module defines the three
/// symbols of runtime/Runtime.h for the given stem. Knows nothing of caches or JIT
/// state.
///
//===----------------------------------------------------------------------===//
#ifndef TILEJIT_CODEGEN_LLVM_CODEGEN_H
#define TILEJIT_CODEGEN_LLVM_CODEGEN_H

#include "dsl/ir/IR.h"
#include "dsl/support/Diagnostics.h"

#include "llvm/Support/Error.h"

#include <cstdint>
#include <memory>
#include <string>

namespace llvm {
class LLVMContext;
class Module;
class TargetMachine;
} // namespace llvm

namespace tilejit::codegen {

/// What codegen needs to know of the target.
struct TargetInfo {
  std::string triple, cpu, features; ///< as given to the TargetMachine
  unsigned vectorBits = 256;         ///< 512 for AVX-512, 256 for AVX2
  bool hasF16C = true, hasFMA = true;
  /// AVX512-BF16: `vdpbf16ps`, pairs of bf16 products summed into f32 lanes.
  bool hasBf16Dot = false;
  /// `vdpbf16ps` sums more products per cycle than the f32 FMAs: the mma
  /// with many rows takes bf16 operands as pairs only then.
  bool bf16DotFast = false;
  /// AMX with bf16 (`tdpbf16ps` on 16 x 16 f32 tiles): the mma with many
  /// rows takes bf16 operands there.
  bool hasAmxBf16 = false;
  /// The L1 data cache of one core in bytes (0: unknown).
  unsigned l1dBytes = 0;
  unsigned f32Lanes() const { return vectorBits / 32; }
  /// Whether a prefetched region of `bytes` is requested into L2 only: half
  /// the L1 or more could not stay in it beside the data being worked on
  /// (CodeGenPrefetch; the hand-written twins and benchmarks follow it).
  bool prefetchesIntoL2(int64_t bytes) const {
    return l1dBytes != 0 && 2 * bytes >= static_cast<int64_t>(l1dBytes);
  }
};

/// Lowers `kernel` into a new module in `ctx`. Fails (with diagnostics) only
/// on IR that the verifier should have rejected or on unsupported forms.
std::unique_ptr<llvm::Module> lowerToLLVM(const ir::Kernel &kernel,
                                          llvm::LLVMContext &ctx,
                                          const TargetInfo &target,
                                          const std::string &symbolStem,
                                          DiagnosticEngine &diags);

/// Optimises a generated module for `tm`: at `optLevel` 0 LLVM's O0
/// pipeline, at 1..3 the kernel pipeline (see Optimize.cpp): the scalar and
/// loop clean-up generated kernels need, without vectorisers or unrolling.
void optimizeModule(llvm::Module &module, llvm::TargetMachine &tm,
                    unsigned optLevel);

} // namespace tilejit::codegen

#endif
