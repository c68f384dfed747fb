//===- SelectMma.h - How each mma is computed ---------------------*- C++ -*-===//
///
/// \file
/// The `select-mma` pass decides, for the target (PassContext::target), how
/// each `mma` (a [M, K] x b [K, N] + acc, operands possibly transposed) is
/// computed, and writes it on the op: `form`, `dpbf16`, `block` and
/// `pack_a`/`pack_b` (dsl/ir/IR.h). codegen/llvm (CodeGenMma.cpp) only
/// follows them. "Few rows" is M <= 8 on AVX-512 (16 f32 lanes), M <= 4 on
/// AVX2 (8 lanes): decode attention's query group.
///
/// ## Forms, and the order each sums in
/// The result is acc + sum_k a[m, k] * b[k, n], in f32; the forms differ in
/// the order of that sum (and so in the rounding), which is why the form is
/// visible here rather than chosen out of sight in codegen (docs/dsl.md 8.7):
/// - `broadcast` (the default): an accumulator vector per block element,
///   starting from acc, one fma per k in ascending k: broadcast(a[m, k]) *
///   b[k, n : n + lanes]. `block = [rows, vectors]` is the register block
///   (AVX-512 8 x 2, AVX2 6 x 2 with many rows; with few rows all M rows x
///   up to 24 (12) accumulators split evenly over the column blocks). b is
///   packed to f32 (transposed when transB) with many rows unless it is f32
///   already, or whenever transB; a is packed to f32 [M, K] when it is not
///   f32 or is transposed.
/// - `dot` (transB with few rows): b's rows are contiguous along K, as a's;
///   lane l of an accumulator holds the products of k = l mod lanes in
///   ascending k, starting from 0; the lanes are summed by a halving tree
///   of shuffles, then added to acc. `block = [M, R]`: R rows of b a pass,
///   M x R accumulators within the register file. a is packed as for
///   broadcast; b never.
/// - `dpbf16` on dot or broadcast (bf16 x bf16, few rows, AVX512-BF16, not
///   transA; broadcast also needs K even and N a multiple of 32):
///   `vdpbf16ps` sums the exact products of k and k + 1 into each lane (so
///   pairs of products are added before the accumulator; bf16 subnormals
///   read as zero); no conversion, no packing of a.
/// - `bf16pairs` (bf16 x bf16, many rows, K even, where `vdpbf16ps` outruns
///   the f32 FMAs: TargetInfo::bf16DotFast): b packed into a panel of pairs
///   [K / 2, N] (and a into pairs [K / 2, M] when transA); 8 x 2 blocks of
///   accumulators starting from acc, one `vdpbf16ps` per pair in ascending
///   k.
/// - `amx` (as bf16pairs, on AMX-BF16 with M and N multiples of 16 and K of
///   32): `tdpbf16ps` on 16 x 16 f32 tiles, 32 k a step in ascending k, the
///   pairs inside a step summed as the hardware does.
///
/// ## Packing and hoisting
/// `pack_a = N` / `pack_b = N`: the operand is copied (converted, transposed
/// or paired) into a scratch panel before the mma; the copy is hoisted out
/// of the N innermost `for` loops around the mma, those in which the operand
/// does not change (a key block's transposed panel serves every query block
/// of the flash-attention backward); 0: right before the mma. A bf16pairs
/// panel of b is laid out a column block (block cols x lanes columns) after
/// another, each contiguous.
///
/// ## Accumulators from a splat
/// `acc_splat`: acc is a `splat` that no other op reads, and the form keeps
/// its accumulators in registers (broadcast without dpbf16, bf16pairs; K >
/// 0): they start
/// at the splat's value and the splat's tile is never written or read (a
/// product from zero saves two passes over its result tile).
///
//===----------------------------------------------------------------------===//
#ifndef TILEJIT_CODEGEN_PASSES_SELECTMMA_H
#define TILEJIT_CODEGEN_PASSES_SELECTMMA_H

#include "codegen/passes/PassContext.h"

namespace tilejit::passes {

/// Rows up to which an mma takes the few-rows forms at this target (8 with
/// 16 f32 lanes, 4 with 8).
int64_t mmaFewRows(const codegen::TargetInfo &target);

/// Sets form, dpbf16, block and pack_a/pack_b on every mma. Idempotent.
bool selectMma(ir::Kernel &kernel, const PassContext &ctx);

} // namespace tilejit::passes

#endif
