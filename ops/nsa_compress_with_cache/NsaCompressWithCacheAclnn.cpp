//===- NsaCompressWithCacheAclnn.cpp - C entry points ---------------------===//
//
// aclnnNsaCompressWithCacheGetWorkspaceSize and aclnnNsaCompressWithCache, made
// from the parameter table (NsaCompressWithCacheArgs.h), and the operator's
// registration.
//
//===----------------------------------------------------------------------===//
#include "aclnnop/aclnn_nsa_compress_with_cache.h"
#include "ops/aclnn/AclnnCommon.h"
#include "ops/host/OpRegistry.h"
#include "ops/nsa_compress_with_cache/NsaCompressWithCache.h"
#include "ops/nsa_compress_with_cache/NsaCompressWithCacheArgs.h"

TILEJIT_ACLNN_ENTRIES(NsaCompressWithCache,
                      TILEJIT_NSA_COMPRESS_WITH_CACHE_PARAMS)

void tilejit::ops::registerNsaCompressWithCache() {
  host::OpRegistry<aclnn::NsaCompressWithCacheArgs>::install(
      &prepareNsaCompressWithCache);
}
