//===- GatherPaKvCacheArgs.h - aclnn parameters ----------------*- C++ -*-===//
///
/// \file
/// The parameters of aclnnGatherPaKvCacheGetWorkspaceSize
/// (include/aclnnop/aclnn_gather_pa_kv_cache.h), in the upstream order, written
/// once (ops/aclnn/AclnnParams.h): they make aclnn::GatherPaKvCacheArgs, the
/// argument struct of phase 1, here, and the two C entry points in
/// GatherPaKvCacheAclnn.cpp.
///
//===----------------------------------------------------------------------===//
#ifndef TILEJIT_OPS_GATHER_PA_KV_CACHE_GATHERPAKVCACHEARGS_H
#define TILEJIT_OPS_GATHER_PA_KV_CACHE_GATHERPAKVCACHEARGS_H

#include "ops/aclnn/AclnnParams.h"

// clang-format off
#define TILEJIT_GATHER_PA_KV_CACHE_PARAMS(X)                                 \
  X(Tensor, keyCache)                                                        \
  X(Tensor, valueCache)                                                      \
  X(Tensor, blockTables)                                                     \
  X(Tensor, seqLens)                                                         \
  X(Tensor, keyRef)                                                          \
  X(Tensor, valueRef)                                                        \
  X(Tensor, seqOffsetOptional)                                               \
  X(String, cacheMode)                                                       \
  X(Bool, isSeqLensCumsum)
// clang-format on

namespace tilejit::aclnn {
TILEJIT_ACLNN_ARGS(GatherPaKvCache, TILEJIT_GATHER_PA_KV_CACHE_PARAMS);
} // namespace tilejit::aclnn

namespace tilejit::ops {
/// Registers prepareGatherPaKvCache as the phase 1 of aclnnGatherPaKvCache
/// (called by registerBuiltinOperators, ops/Operators.h).
void registerGatherPaKvCache();
} // namespace tilejit::ops

#endif
