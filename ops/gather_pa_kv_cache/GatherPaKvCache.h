//===- GatherPaKvCache.h - GatherPaKvCache: the C++ API ---------*- C++ -*-===//
///
/// \file
/// Copies the cached tokens of every batch entry, block by block along its
/// block-table row, into dense key/value outputs: the operator of
/// ../shared/spec/gather_pa_kv_cache.md, cache modes Norm ([nb, bs, N, D]
/// caches, [T, N, D] outputs) and PA_NZ ([nb, N*D/E, bs, E] caches, [T, N*D]
/// outputs), every dtype of the spec's list, INT32 or INT64 indices.
///
/// Phase 1 (`prepareGatherPaKvCache`, registered as the aclnn operator's
/// GetWorkspaceSize) checks every rule of section 5 in its order and returns
/// the first failure (161001, 161002 or 561002, with a message naming the
/// argument and the rule); it then picks one of the kernels of
/// gather_pa_kv_cache.tile, compiles (or finds) it and packs its arguments.
/// Phase 2 only launches. Nothing is written when phase 1 fails. Device data
/// (block tables, lengths, offsets) is only read by the kernel.
///
/// Layouts: every view is accepted. Norm with caches whose blocks are
/// contiguous and contiguous outputs takes the flat kernel (one run of
/// cnt * N * D elements per block); any other Norm view takes the strided
/// row kernel; PA_NZ takes the views as they are.
///
//===----------------------------------------------------------------------===//
#ifndef TILEJIT_OPS_GATHER_PA_KV_CACHE_GATHERPAKVCACHE_H
#define TILEJIT_OPS_GATHER_PA_KV_CACHE_GATHERPAKVCACHE_H

#include "ops/gather_pa_kv_cache/GatherPaKvCacheArgs.h"
#include "ops/host/Executor.h"
#include "ops/host/Status.h"

namespace tilejit::ops {

/// Phase 1: validates `args` (section 5, in order) and fills `executor`
/// (workspace 0, a launch closure that owns copies of everything it needs;
/// no closure for empty tensors). Writes nothing.
host::Status prepareGatherPaKvCache(const aclnn::GatherPaKvCacheArgs &args,
                                       host::Executor &executor);

/// Validates and runs synchronously on the calling thread.
host::Status gatherPaKvCache(const aclnn::GatherPaKvCacheArgs &args);

} // namespace tilejit::ops

#endif
