/*===- aclnn_scatter_pa_kv_cache.h - ScatterPaKvCache -*- C -*-===//
 *
 * \file
 * The two-phase aclnn entry points of ScatterPaKvCache (write tokens into a
 * paged KV cache), with the prototypes of the upstream document (see
 * docs/aclnn.md). Usable from C and C++.
 *
 *===----------------------------------------------------------------------===*/
#ifndef TILEJIT_ACLNNOP_ACLNN_SCATTER_PA_KV_CACHE_H
#define TILEJIT_ACLNNOP_ACLNN_SCATTER_PA_KV_CACHE_H

#include "aclnn/aclnn_base.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Phase 1: validates the arguments and prepares the executor. */
ACL_FUNC_VISIBILITY aclnnStatus aclnnScatterPaKvCacheGetWorkspaceSize(
    const aclTensor *key, const aclTensor *keyCacheRef,
    const aclTensor *slotMapping, const aclTensor *value,
    const aclTensor *valueCacheRef,
    const aclTensor *compressLensOptional ACLNN_OPTIONAL,
    const aclTensor *compressSeqOffsetOptional ACLNN_OPTIONAL,
    const aclTensor *seqLensOptional ACLNN_OPTIONAL,
    char *cacheModeOptional ACLNN_OPTIONAL,
    char *scatterModeOptional ACLNN_OPTIONAL,
    const aclIntArray *stridesOptional ACLNN_OPTIONAL,
    const aclIntArray *offsetsOptional ACLNN_OPTIONAL, uint64_t *workspaceSize,
    aclOpExecutor **executor);

/** Phase 2: runs the executor on `stream`. */
ACL_FUNC_VISIBILITY aclnnStatus aclnnScatterPaKvCache(void *workspace,
                                                      uint64_t workspaceSize,
                                                      aclOpExecutor *executor,
                                                      aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* TILEJIT_ACLNNOP_ACLNN_SCATTER_PA_KV_CACHE_H */
