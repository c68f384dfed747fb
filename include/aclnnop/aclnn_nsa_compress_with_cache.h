/*===- aclnn_nsa_compress_with_cache.h - NsaCompressWithCache -*- C -*-===//
 *
 * \file
 * The two-phase aclnn entry points of NsaCompressWithCache (NSA key/value
 * compression into a cache), with the prototypes of the upstream document (see
 * docs/aclnn.md). Usable from C and C++.
 *
 *===----------------------------------------------------------------------===*/
#ifndef TILEJIT_ACLNNOP_ACLNN_NSA_COMPRESS_WITH_CACHE_H
#define TILEJIT_ACLNNOP_ACLNN_NSA_COMPRESS_WITH_CACHE_H

#include "aclnn/aclnn_base.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Phase 1: validates the arguments and prepares the executor. */
ACL_FUNC_VISIBILITY aclnnStatus aclnnNsaCompressWithCacheGetWorkspaceSize(
    const aclTensor *input, const aclTensor *weight,
    const aclTensor *slotMapping,
    const aclIntArray *actSeqLenOptional ACLNN_OPTIONAL,
    const aclTensor *blockTableOptional ACLNN_OPTIONAL,
    char *layoutOptional ACLNN_OPTIONAL, int64_t compressBlockSize,
    int64_t compressStride, int64_t actSeqLenType, int64_t pageBlockSize,
    aclTensor *outputCache, uint64_t *workspaceSize, aclOpExecutor **executor);

/** Phase 2: runs the executor on `stream`. */
ACL_FUNC_VISIBILITY aclnnStatus
aclnnNsaCompressWithCache(void *workspace, uint64_t workspaceSize,
                          aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* TILEJIT_ACLNNOP_ACLNN_NSA_COMPRESS_WITH_CACHE_H */
