/*===- aclnn_incre_flash_attention_v4.h - IncreFlashAttentionV4 -*- C -*-===//
 *
 * \file
 * The two-phase aclnn entry points of IncreFlashAttentionV4 (incremental decode
 * attention), with the prototypes of the upstream document (see docs/aclnn.md).
 * Usable from C and C++.
 *
 *===----------------------------------------------------------------------===*/
#ifndef TILEJIT_ACLNNOP_ACLNN_INCRE_FLASH_ATTENTION_V4_H
#define TILEJIT_ACLNNOP_ACLNN_INCRE_FLASH_ATTENTION_V4_H

#include "aclnn/aclnn_base.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Phase 1: validates the arguments and prepares the executor. */
ACL_FUNC_VISIBILITY aclnnStatus aclnnIncreFlashAttentionV4GetWorkspaceSize(
    const aclTensor *query, const aclTensorList *key,
    const aclTensorList *value, const aclTensor *pseShift ACLNN_OPTIONAL,
    const aclTensor *attenMask ACLNN_OPTIONAL,
    const aclIntArray *actualSeqLengths ACLNN_OPTIONAL,
    const aclTensor *dequantScale1 ACLNN_OPTIONAL,
    const aclTensor *quantScale1 ACLNN_OPTIONAL,
    const aclTensor *dequantScale2 ACLNN_OPTIONAL,
    const aclTensor *quantScale2 ACLNN_OPTIONAL,
    const aclTensor *quantOffset2 ACLNN_OPTIONAL,
    const aclTensor *antiquantScale ACLNN_OPTIONAL,
    const aclTensor *antiquantOffset ACLNN_OPTIONAL,
    const aclTensor *blocktable ACLNN_OPTIONAL,
    const aclTensor *kvPaddingSize ACLNN_OPTIONAL, int64_t numHeads,
    double scaleValue, char *inputLayout, int64_t numKeyValueHeads,
    int64_t blockSize, int64_t innerPrecise, const aclTensor *attentionOut,
    uint64_t *workspaceSize, aclOpExecutor **executor);

/** Phase 2: runs the executor on `stream`. */
ACL_FUNC_VISIBILITY aclnnStatus
aclnnIncreFlashAttentionV4(void *workspace, uint64_t workspaceSize,
                           aclOpExecutor *executor, const aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* TILEJIT_ACLNNOP_ACLNN_INCRE_FLASH_ATTENTION_V4_H */
