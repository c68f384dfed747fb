//===- FagTwin.h - The hand-written backward's entry points -----*- C++ -*-===//
///
/// \file
/// Between the twin's dispatcher (FlashAttentionScoreGradHandwritten.cpp,
/// which decides what the twin covers) and its ISA builds. The builds take a
/// validated Problem whose q, k, v, dy, O, statistics and outputs are
/// contiguous, with no rope, pse, dropout or explicit mask.
///
//===----------------------------------------------------------------------===//
#ifndef TILEJIT_OPS_FLASH_ATTENTION_SCORE_GRAD_FAGTWIN_H
#define TILEJIT_OPS_FLASH_ATTENTION_SCORE_GRAD_FAGTWIN_H

#include "ops/flash_attention_score_grad/FlashAttentionScoreGrad.h"

namespace tilejit::ops::fag {

/// Section 4 with AVX-512F/BW FMAs (f32 panels). With `bf16Dot` (bf16
/// inputs on a host with AVX512-BF16) the products run on bf16 pairs
/// (`vdpbf16ps`), P and dS rounded to bf16 as section 8 allows.
void scoreGradAvx512(const Problem &p, bool bf16Dot);

} // namespace tilejit::ops::fag

#endif
