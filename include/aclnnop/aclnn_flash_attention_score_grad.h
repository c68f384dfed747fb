/*===- aclnn_flash_attention_score_grad.h - FA backward -----------*- C -*-===//
 *
 * \file
 * The two-phase aclnn entry points of FlashAttentionUnpaddingScoreGradV5
 * (flash-attention backward, TND), with the prototypes of the upstream document
 * (see docs/aclnn.md). Usable from C and C++.
 *
 *===----------------------------------------------------------------------===*/
#ifndef TILEJIT_ACLNNOP_ACLNN_FLASH_ATTENTION_SCORE_GRAD_H
#define TILEJIT_ACLNNOP_ACLNN_FLASH_ATTENTION_SCORE_GRAD_H

#include "aclnn/aclnn_base.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Phase 1: validates the arguments and prepares the executor. */
ACL_FUNC_VISIBILITY aclnnStatus
aclnnFlashAttentionUnpaddingScoreGradV5GetWorkspaceSize(
    const aclTensor *query, const aclTensor *queryRope ACLNN_OPTIONAL,
    const aclTensor *keyIn, const aclTensor *keyInRope ACLNN_OPTIONAL,
    const aclTensor *value, const aclTensor *dy,
    const aclTensor *pseShiftOptional ACLNN_OPTIONAL,
    const aclTensor *dropMaskOptional ACLNN_OPTIONAL,
    const aclTensor *paddingMaskOptional ACLNN_OPTIONAL,
    const aclTensor *attenMaskOptional ACLNN_OPTIONAL,
    const aclTensor *softmaxMaxOptional, const aclTensor *softmaxSumOptional,
    const aclTensor *softmaxInOptional ACLNN_OPTIONAL,
    const aclTensor *attentionInOptional,
    const aclTensor *sinkInOptional ACLNN_OPTIONAL,
    const aclIntArray *prefixOptional ACLNN_OPTIONAL,
    const aclIntArray *actualSeqQLenOptional ACLNN_OPTIONAL,
    const aclIntArray *actualSeqKvLenOptional ACLNN_OPTIONAL,
    const aclIntArray *qStartIdxOptional ACLNN_OPTIONAL,
    const aclIntArray *kvStartIdxOptional ACLNN_OPTIONAL, double scaleValue,
    double keepProb, int64_t preTokens, int64_t nextTokens, int64_t headNum,
    char *inputLayout, int64_t innerPrecise, int64_t sparseMode,
    int64_t pseType, char *softmaxInLayout ACLNN_OPTIONAL,
    const aclTensor *dqOut, const aclTensor *dqRopeOut ACLNN_OPTIONAL,
    const aclTensor *dkOut, const aclTensor *dkRopeOut ACLNN_OPTIONAL,
    const aclTensor *dvOut, const aclTensor *dpseOut ACLNN_OPTIONAL,
    const aclTensor *dsinkOut ACLNN_OPTIONAL, uint64_t *workspaceSize,
    aclOpExecutor **executor);

/** Phase 2: runs the executor on `stream`. */
ACL_FUNC_VISIBILITY aclnnStatus aclnnFlashAttentionUnpaddingScoreGradV5(
    void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
    const aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* TILEJIT_ACLNNOP_ACLNN_FLASH_ATTENTION_SCORE_GRAD_H */
