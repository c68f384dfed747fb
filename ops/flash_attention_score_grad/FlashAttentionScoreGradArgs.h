//===- FlashAttentionScoreGradArgs.h - aclnn parameters --------*- C++ -*-===//
///
/// \file
/// The parameters of aclnnFlashAttentionUnpaddingScoreGradV5GetWorkspaceSize
/// (include/aclnnop/aclnn_flash_attention_score_grad.h), in the upstream order,
/// written once (ops/aclnn/AclnnParams.h): they make
/// aclnn::FlashAttentionUnpaddingScoreGradV5Args, the argument struct of phase
/// 1, here, and the two C entry points in FlashAttentionScoreGradAclnn.cpp.
///
//===----------------------------------------------------------------------===//
#ifndef TILEJIT_OPS_FLASH_ATTENTION_SCORE_GRAD_FLASHATTENTIONSCOREGRADARGS_H
#define TILEJIT_OPS_FLASH_ATTENTION_SCORE_GRAD_FLASHATTENTIONSCOREGRADARGS_H

#include "ops/aclnn/AclnnParams.h"

// clang-format off
#define TILEJIT_FLASH_ATTENTION_UNPADDING_SCORE_GRAD_V5_PARAMS(X)            \
  X(Tensor, query)                                                           \
  X(Tensor, queryRope)                                                       \
  X(Tensor, keyIn)                                                           \
  X(Tensor, keyInRope)                                                       \
  X(Tensor, value)                                                           \
  X(Tensor, dy)                                                              \
  X(Tensor, pseShiftOptional)                                                \
  X(Tensor, dropMaskOptional)                                                \
  X(Tensor, paddingMaskOptional)                                             \
  X(Tensor, attenMaskOptional)                                               \
  X(Tensor, softmaxMaxOptional)                                              \
  X(Tensor, softmaxSumOptional)                                              \
  X(Tensor, softmaxInOptional)                                               \
  X(Tensor, attentionInOptional)                                             \
  X(Tensor, sinkInOptional)                                                  \
  X(IntArray, prefixOptional)                                                \
  X(IntArray, actualSeqQLenOptional)                                         \
  X(IntArray, actualSeqKvLenOptional)                                        \
  X(IntArray, qStartIdxOptional)                                             \
  X(IntArray, kvStartIdxOptional)                                            \
  X(Double, scaleValue)                                                      \
  X(Double, keepProb)                                                        \
  X(Int, preTokens)                                                          \
  X(Int, nextTokens)                                                         \
  X(Int, headNum)                                                            \
  X(String, inputLayout)                                                     \
  X(Int, innerPrecise)                                                       \
  X(Int, sparseMode)                                                         \
  X(Int, pseType)                                                            \
  X(String, softmaxInLayout)                                                 \
  X(Tensor, dqOut)                                                           \
  X(Tensor, dqRopeOut)                                                       \
  X(Tensor, dkOut)                                                           \
  X(Tensor, dkRopeOut)                                                       \
  X(Tensor, dvOut)                                                           \
  X(Tensor, dpseOut)                                                         \
  X(Tensor, dsinkOut)
// clang-format on

namespace tilejit::aclnn {
TILEJIT_ACLNN_ARGS(FlashAttentionUnpaddingScoreGradV5,
                   TILEJIT_FLASH_ATTENTION_UNPADDING_SCORE_GRAD_V5_PARAMS);
} // namespace tilejit::aclnn

namespace tilejit::ops {
/// Registers prepareFlashAttentionScoreGrad as the phase 1 of
/// aclnnFlashAttentionUnpaddingScoreGradV5 (called by registerBuiltinOperators,
/// ops/Operators.h).
void registerFlashAttentionUnpaddingScoreGradV5();
} // namespace tilejit::ops

#endif
