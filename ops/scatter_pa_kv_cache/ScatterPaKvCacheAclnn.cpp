//===- ScatterPaKvCacheAclnn.cpp - C entry points -------------------------===//
//
// aclnnScatterPaKvCacheGetWorkspaceSize and aclnnScatterPaKvCache, made from
// the parameter table (ScatterPaKvCacheArgs.h), and the operator's
// registration.
//
//===----------------------------------------------------------------------===//
#include "aclnnop/aclnn_scatter_pa_kv_cache.h"
#include "ops/aclnn/AclnnCommon.h"
#include "ops/host/OpRegistry.h"
#include "ops/scatter_pa_kv_cache/ScatterPaKvCache.h"
#include "ops/scatter_pa_kv_cache/ScatterPaKvCacheArgs.h"

TILEJIT_ACLNN_ENTRIES(ScatterPaKvCache, TILEJIT_SCATTER_PA_KV_CACHE_PARAMS)

void tilejit::ops::registerScatterPaKvCache() {
  host::OpRegistry<aclnn::ScatterPaKvCacheArgs>::install(
      &prepareScatterPaKvCache);
}
