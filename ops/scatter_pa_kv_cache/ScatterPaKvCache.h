//===- ScatterPaKvCache.h - ScatterPaKvCache: the C++ API -------*- C++ -*-===//
///
/// \file
/// Writes this step's key/value vectors into a paged KV cache, in every
/// scenario of ../shared/spec/scatter_pa_kv_cache.md: S2 (ND, contiguous or
/// Nct windows), S6 (key only), S1 (PA_NZ), S4 (Alibi), S5 (Rope, Omni) and
/// S3 (4-D key, TAIL or MEAN).
///
/// Phase 1 (`prepareScatterPaKvCache`, registered as the aclnn operator's
/// GetWorkspaceSize) checks every rule of the spec in its order and returns
/// the first failure (161001, 161002 or 561002, with a message naming the
/// argument and the rule); it then picks the scenario, compiles (or finds)
/// the kernel and packs its arguments. Phase 2 only launches. Nothing is
/// written when phase 1 fails.
///
/// The kernels (scatter_pa_kv_cache.tile) move elements by width, so every
/// dtype of the spec's list is served by three kernels per width.
///
//===----------------------------------------------------------------------===//
#ifndef TILEJIT_OPS_SCATTER_PA_KV_CACHE_SCATTERPAKVCACHE_H
#define TILEJIT_OPS_SCATTER_PA_KV_CACHE_SCATTERPAKVCACHE_H

#include "ops/host/Executor.h"
#include "ops/host/Status.h"
#include "ops/scatter_pa_kv_cache/ScatterPaKvCacheArgs.h"

namespace tilejit::ops {

/// Phase 1: validates `args` and fills `executor` (workspace 0, a launch
/// closure that owns copies of everything it needs). Writes nothing.
host::Status prepareScatterPaKvCache(const aclnn::ScatterPaKvCacheArgs &args,
                                        host::Executor &executor);

/// Validates and runs synchronously on the calling thread.
host::Status scatterPaKvCache(const aclnn::ScatterPaKvCacheArgs &args);

} // namespace tilejit::ops

#endif
