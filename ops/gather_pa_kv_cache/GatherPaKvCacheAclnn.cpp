//===- GatherPaKvCacheAclnn.cpp - C entry points --------------------------===//
//
// aclnnGatherPaKvCacheGetWorkspaceSize and aclnnGatherPaKvCache, made from the
// parameter table (GatherPaKvCacheArgs.h), and the operator's registration.
//
//===----------------------------------------------------------------------===//
#include "aclnnop/aclnn_gather_pa_kv_cache.h"
#include "ops/aclnn/AclnnCommon.h"
#include "ops/gather_pa_kv_cache/GatherPaKvCache.h"
#include "ops/gather_pa_kv_cache/GatherPaKvCacheArgs.h"
#include "ops/host/OpRegistry.h"

TILEJIT_ACLNN_ENTRIES(GatherPaKvCache, TILEJIT_GATHER_PA_KV_CACHE_PARAMS)

void tilejit::ops::registerGatherPaKvCache() {
  host::OpRegistry<aclnn::GatherPaKvCacheArgs>::install(
      &prepareGatherPaKvCache);
}
