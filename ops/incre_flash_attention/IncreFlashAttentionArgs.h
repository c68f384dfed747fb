//===- IncreFlashAttentionArgs.h - aclnn parameters ------------*- C++ -*-===//
///
/// \file
/// The parameters of aclnnIncreFlashAttentionV4GetWorkspaceSize
/// (include/aclnnop/aclnn_incre_flash_attention_v4.h), in the upstream order,
/// written once (ops/aclnn/AclnnParams.h): they make
/// aclnn::IncreFlashAttentionV4Args, the argument struct of phase 1, here, and
/// the two C entry points in IncreFlashAttentionAclnn.cpp.
///
//===----------------------------------------------------------------------===//
#ifndef TILEJIT_OPS_INCRE_FLASH_ATTENTION_INCREFLASHATTENTIONARGS_H
#define TILEJIT_OPS_INCRE_FLASH_ATTENTION_INCREFLASHATTENTIONARGS_H

#include "ops/aclnn/AclnnParams.h"

// clang-format off
#define TILEJIT_INCRE_FLASH_ATTENTION_V4_PARAMS(X)                           \
  X(Tensor, query)                                                           \
  X(TensorList, key)                                                         \
  X(TensorList, value)                                                       \
  X(Tensor, pseShift)                                                        \
  X(Tensor, attenMask)                                                       \
  X(IntArray, actualSeqLengths)                                              \
  X(Tensor, dequantScale1)                                                   \
  X(Tensor, quantScale1)                                                     \
  X(Tensor, dequantScale2)                                                   \
  X(Tensor, quantScale2)                                                     \
  X(Tensor, quantOffset2)                                                    \
  X(Tensor, antiquantScale)                                                  \
  X(Tensor, antiquantOffset)                                                 \
  X(Tensor, blocktable)                                                      \
  X(Tensor, kvPaddingSize)                                                   \
  X(Int, numHeads)                                                           \
  X(Double, scaleValue)                                                      \
  X(String, inputLayout)                                                     \
  X(Int, numKeyValueHeads)                                                   \
  X(Int, blockSize)                                                          \
  X(Int, innerPrecise)                                                       \
  X(Tensor, attentionOut)
// clang-format on

namespace tilejit::aclnn {
TILEJIT_ACLNN_ARGS(IncreFlashAttentionV4,
                   TILEJIT_INCRE_FLASH_ATTENTION_V4_PARAMS);
} // namespace tilejit::aclnn

namespace tilejit::ops {
/// Registers prepareIncreFlashAttentionV4 as the phase 1 of
/// aclnnIncreFlashAttentionV4 (called by registerBuiltinOperators,
/// ops/Operators.h).
void registerIncreFlashAttentionV4();
} // namespace tilejit::ops

#endif
