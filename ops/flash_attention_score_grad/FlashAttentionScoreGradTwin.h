//===- FlashAttentionScoreGradTwin.h - The backward's reference and twin -*- C++ -*-===//
///
/// \file
/// What the operator of FlashAttentionScoreGrad.h is proved and measured
/// against: the float64 reference and the hand-written twin (whose ISA
/// build meets its dispatcher in FagTwin.h). Test support
/// (tilejit_testsupport, ops/CMakeLists.txt): linked by the tests, the
/// benchmarks and the `tilejit` command line, not part of libtilejit.so.
///
//===----------------------------------------------------------------------===//
#ifndef TILEJIT_OPS_FLASH_ATTENTION_SCORE_GRAD_FLASHATTENTIONSCOREGRADTWIN_H
#define TILEJIT_OPS_FLASH_ATTENTION_SCORE_GRAD_FLASHATTENTIONSCOREGRADTWIN_H

#include "ops/flash_attention_score_grad/FlashAttentionScoreGrad.h"

namespace tilejit::ops {

/// The float64 reference: section 4 element by element through the views'
/// strides, from the given M, L and O. `args` must pass phase 1.
void flashAttentionScoreGradReference(const aclnn::FlashAttentionUnpaddingScoreGradV5Args &args);

/// The hand-written twin: vectorised, multi-threaded C++ over contiguous
/// tensors. Returns false (and does nothing) for what it does not cover.
/// `args` must pass phase 1.
bool flashAttentionScoreGradHandwritten(
    const aclnn::FlashAttentionUnpaddingScoreGradV5Args &args);

} // namespace tilejit::ops

#endif
