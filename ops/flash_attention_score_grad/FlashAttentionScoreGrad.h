//===- FlashAttentionScoreGrad.h - FlashAttentionUnpaddingScoreGradV5 -*- C++ -*-===//
///
/// \file
/// The flash-attention backward on packed variable-length sequences (TND):
/// the operator of ../shared/spec/flash_attention_unpadding_score_grad_v5.md
/// (section numbers below refer to it). Given q, k, v (and the bf16 rope
/// parts), dY, the forward output O and the forward row statistics M and L,
/// it computes dQ, dK, dV (dQrope, dKrope) and the sink gradient dθ, every
/// product with f32 accumulation, in a fixed summation order (bitwise equal
/// run to run and for any thread count).
///
/// Phase 1 (`prepareFlashAttentionScoreGrad`, the aclnn GetWorkspaceSize)
/// validates every argument in section 7's order (`validateFlashAttention
/// ScoreGrad`), plans the work and gets the kernels; phase 2 only launches.
///
//===----------------------------------------------------------------------===//
#ifndef TILEJIT_OPS_FLASH_ATTENTION_SCORE_GRAD_FLASHATTENTIONSCOREGRAD_H
#define TILEJIT_OPS_FLASH_ATTENTION_SCORE_GRAD_FLASHATTENTIONSCOREGRAD_H

#include "ops/flash_attention_score_grad/FlashAttentionScoreGradArgs.h"
#include "ops/host/Executor.h"
#include "ops/host/Status.h"

#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

namespace tilejit::ops::fag {

/// How an explicit attenMask is read (section 5.1), or that it is a
/// compressed mask evaluated analytically (5.2), or absent (rule 0).
enum class MaskForm {
  None,         ///< no mask: every position is kept
  Shared,       ///< [Sqmax, Skvmax] or [1, 1, Sqmax, Skvmax]: A[i * Skvmax + j]
  PerBatch,     ///< [B, 1, Sqmax, Skvmax], read packed per batch
  PerBatchHead, ///< [B, N1, Sqmax, Skvmax], read packed per batch and head
  Compressed,   ///< modes 2, 3, 4, 6, 7, 8: shape checked, content never read
};

/// The position bias (section 6).
enum class PseForm {
  None,
  AlibiCompressed, ///< [Bp, N1, 1024, Skvmax], Bp in {1, B} (6.1)
  PerKv,           ///< 1-D [N1 * T2]: E[N1 * ck[b-1] + h * skv_b + j]
  Full,            ///< 1-D [N1 * sum sq_b * skv_b], packed
  Slopes,          ///< pseType 2/3: fp32 slopes [N1] or [B, N1] (6.2)
};

/// Everything phase 1 learnt from the arguments: validated, normalised, and
/// owning copies of the views (the C objects may die before phase 2).
struct Problem {
  host::DataType dtype = host::DataType::Undefined; ///< q, k, v, dy, O, dq, dk, dv
  int64_t t1 = 0, t2 = 0;          ///< query / key tokens (declared)
  int64_t n1 = 0, n2 = 0, g = 1;   ///< query heads, kv heads, n1 / n2
  int64_t d = 0, dv = 0, dr = 0;   ///< head dims of q/k, v, rope (0: no rope)
  int64_t bin = 0;                 ///< length of the sequence arrays
  int64_t b = 0;                   ///< effective batches (bin minus trailing (0, 0))
  std::vector<int64_t> cq, ck;     ///< cumulative ends, bin entries each
  int64_t sqMax = 0, skvMax = 0;
  float scale = 1.0f;              ///< σ rounded to f32
  float keepProb = 1.0f;           ///< κ rounded to f32
  int64_t sparseMode = 0, preTokens = 0, nextTokens = 0;
  MaskForm mask = MaskForm::None;
  PseForm pse = PseForm::None;
  int64_t pseType = 1;
  int64_t pseBatches = 0;          ///< Bp (alibi), or B / 1 for slopes [B, N1] / [N1]
  int64_t qStart = 0, kvStart = 0; ///< used by slopes only (both given, else 0)
  bool dropout = false;            ///< κ < 1 (the mask is ignored otherwise)
  bool sink = false;
  bool statsTnd = false;           ///< softmaxInLayout == "same_as_input"
  std::vector<int64_t> prefix;     ///< mode 6: b entries
  int64_t bandBatch = -1;          ///< modes 7 and 8: β (-1 when no batch has sq > 0)
  bool empty = false;              ///< rule 3: nothing to compute, success

  // Owning copies of the views; absent optionals count as not given.
  host::TensorView q, k, v, dy, o, m, l;
  std::optional<host::TensorView> qRope, kRope, pseT, dropMask, attenMask, sinkT;
  host::TensorView dq, dk, dvOut;
  std::optional<host::TensorView> dqRope, dkRope, dsink; ///< absent or shape [0]: not written

  int64_t qBegin(int64_t bi) const { return bi == 0 ? 0 : cq[static_cast<size_t>(bi - 1)]; }
  int64_t kBegin(int64_t bi) const { return bi == 0 ? 0 : ck[static_cast<size_t>(bi - 1)]; }
  int64_t sq(int64_t bi) const { return cq[static_cast<size_t>(bi)] - qBegin(bi); }
  int64_t skv(int64_t bi) const { return ck[static_cast<size_t>(bi)] - kBegin(bi); }

  /// Batch bi's analytic keep rule (section 5, before any explicit mask is
  /// consulted): (i, j) is kept iff lo <= j - i <= hi, or j < prefix.
  struct Band {
    int64_t lo, hi, prefix;
  };
  static constexpr int64_t kUnbounded = std::numeric_limits<int64_t>::max() / 4;
  Band band(int64_t bi) const;
};

/// Section 7, every rule in order, filling `p` (untouched outputs on error).
host::Status validate(const aclnn::FlashAttentionUnpaddingScoreGradV5Args &args,
                         Problem &p);

} // namespace tilejit::ops::fag

namespace tilejit::ops {

/// Phase 1: validates `args` and fills `executor` (workspace for the f32
/// partials, a launch closure owning copies of what it needs). Writes
/// nothing.
host::Status prepareFlashAttentionScoreGrad(
    const aclnn::FlashAttentionUnpaddingScoreGradV5Args &args, host::Executor &executor);

/// Validates and runs synchronously on the calling thread (allocating the
/// workspace itself).
host::Status
flashAttentionScoreGrad(const aclnn::FlashAttentionUnpaddingScoreGradV5Args &args);

} // namespace tilejit::ops

#endif
