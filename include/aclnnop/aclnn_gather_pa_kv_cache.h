/*===- aclnn_gather_pa_kv_cache.h - GatherPaKvCache -*- C -*-===//
 *
 * \file
 * The two-phase aclnn entry points of GatherPaKvCache (read sequences out of a
 * paged KV cache), with the prototypes of the upstream document (see
 * docs/aclnn.md). Usable from C and C++.
 *
 *===----------------------------------------------------------------------===*/
#ifndef TILEJIT_ACLNNOP_ACLNN_GATHER_PA_KV_CACHE_H
#define TILEJIT_ACLNNOP_ACLNN_GATHER_PA_KV_CACHE_H

#include "aclnn/aclnn_base.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Phase 1: validates the arguments and prepares the executor. */
ACL_FUNC_VISIBILITY aclnnStatus aclnnGatherPaKvCacheGetWorkspaceSize(
    const aclTensor *keyCache, const aclTensor *valueCache,
    const aclTensor *blockTables, const aclTensor *seqLens,
    const aclTensor *keyRef, const aclTensor *valueRef,
    const aclTensor *seqOffsetOptional ACLNN_OPTIONAL,
    char *cacheMode ACLNN_OPTIONAL, const bool isSeqLensCumsum,
    uint64_t *workspaceSize, aclOpExecutor **executor);

/** Phase 2: runs the executor on `stream`. */
ACL_FUNC_VISIBILITY aclnnStatus aclnnGatherPaKvCache(void *workspace,
                                                     uint64_t workspaceSize,
                                                     aclOpExecutor *executor,
                                                     aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* TILEJIT_ACLNNOP_ACLNN_GATHER_PA_KV_CACHE_H */
