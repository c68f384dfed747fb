//===- FlashAttentionScoreGradAclnn.cpp - C entry points ------------------===//
//
// aclnnFlashAttentionUnpaddingScoreGradV5GetWorkspaceSize and
// aclnnFlashAttentionUnpaddingScoreGradV5, made from the parameter table
// (FlashAttentionScoreGradArgs.h), and the operator's registration.
//
//===----------------------------------------------------------------------===//
#include "aclnnop/aclnn_flash_attention_score_grad.h"
#include "ops/aclnn/AclnnCommon.h"
#include "ops/flash_attention_score_grad/FlashAttentionScoreGrad.h"
#include "ops/flash_attention_score_grad/FlashAttentionScoreGradArgs.h"
#include "ops/host/OpRegistry.h"

TILEJIT_ACLNN_ENTRIES(FlashAttentionUnpaddingScoreGradV5,
                      TILEJIT_FLASH_ATTENTION_UNPADDING_SCORE_GRAD_V5_PARAMS)

void tilejit::ops::registerFlashAttentionUnpaddingScoreGradV5() {
  host::OpRegistry<aclnn::FlashAttentionUnpaddingScoreGradV5Args>::install(
      &prepareFlashAttentionScoreGrad);
}
