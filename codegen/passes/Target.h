//===- Target.h - What the passes and codegen know of the target -*- C++ -*-===//
///
/// \file
/// The target description the Tile IR passes decide with (select-mma's form,
/// the register blocking, ...) and codegen/llvm lowers for. Plain data, no
/// LLVM: the passes include it; codegen/llvm/CodeGen.h re-exports it; the JIT
/// fills it in from the host (jit/KernelJIT.cpp) and `tile-opt --target`
/// from fixed descriptions.
///
//===----------------------------------------------------------------------===//
#ifndef TILEJIT_CODEGEN_PASSES_TARGET_H
#define TILEJIT_CODEGEN_PASSES_TARGET_H

#include <cstdint>
#include <string>

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

} // namespace tilejit::codegen

#endif
