//===- ScatterPaKvCacheArgs.h - aclnn parameters ---------------*- C++ -*-===//
///
/// \file
/// The parameters of aclnnScatterPaKvCacheGetWorkspaceSize
/// (include/aclnnop/aclnn_scatter_pa_kv_cache.h), in the upstream order,
/// written once (ops/aclnn/AclnnParams.h): they make
/// aclnn::ScatterPaKvCacheArgs, the argument struct of phase 1, here, and the
/// two C entry points in ScatterPaKvCacheAclnn.cpp.
///
//===----------------------------------------------------------------------===//
#ifndef TILEJIT_OPS_SCATTER_PA_KV_CACHE_SCATTERPAKVCACHEARGS_H
#define TILEJIT_OPS_SCATTER_PA_KV_CACHE_SCATTERPAKVCACHEARGS_H

#include "ops/aclnn/AclnnParams.h"

// clang-format off
#define TILEJIT_SCATTER_PA_KV_CACHE_PARAMS(X)                                \
  X(Tensor, key)                                                             \
  X(Tensor, keyCacheRef)                                                     \
  X(Tensor, slotMapping)                                                     \
  X(Tensor, value)                                                           \
  X(Tensor, valueCacheRef)                                                   \
  X(Tensor, compressLensOptional)                                            \
  X(Tensor, compressSeqOffsetOptional)                                       \
  X(Tensor, seqLensOptional)                                                 \
  X(String, cacheModeOptional)                                               \
  X(String, scatterModeOptional)                                             \
  X(IntArray, stridesOptional)                                               \
  X(IntArray, offsetsOptional)
// clang-format on

namespace tilejit::aclnn {
TILEJIT_ACLNN_ARGS(ScatterPaKvCache, TILEJIT_SCATTER_PA_KV_CACHE_PARAMS);
} // namespace tilejit::aclnn

namespace tilejit::ops {
/// Registers prepareScatterPaKvCache as the phase 1 of aclnnScatterPaKvCache
/// (called by registerBuiltinOperators, ops/Operators.h).
void registerScatterPaKvCache();
} // namespace tilejit::ops

#endif
