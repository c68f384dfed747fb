//===- NsaCompressWithCacheArgs.h - aclnn parameters -----------*- C++ -*-===//
///
/// \file
/// The parameters of aclnnNsaCompressWithCacheGetWorkspaceSize
/// (include/aclnnop/aclnn_nsa_compress_with_cache.h), in the upstream order,
/// written once (ops/aclnn/AclnnParams.h): they make
/// aclnn::NsaCompressWithCacheArgs, the argument struct of phase 1, here, and
/// the two C entry points in NsaCompressWithCacheAclnn.cpp.
///
//===----------------------------------------------------------------------===//
#ifndef TILEJIT_OPS_NSA_COMPRESS_WITH_CACHE_NSACOMPRESSWITHCACHEARGS_H
#define TILEJIT_OPS_NSA_COMPRESS_WITH_CACHE_NSACOMPRESSWITHCACHEARGS_H

#include "ops/aclnn/AclnnParams.h"

// clang-format off
#define TILEJIT_NSA_COMPRESS_WITH_CACHE_PARAMS(X)                            \
  X(Tensor, input)                                                           \
  X(Tensor, weight)                                                          \
  X(Tensor, slotMapping)                                                     \
  X(IntArray, actSeqLenOptional)                                             \
  X(Tensor, blockTableOptional)                                              \
  X(String, layoutOptional)                                                  \
  X(Int, compressBlockSize)                                                  \
  X(Int, compressStride)                                                     \
  X(Int, actSeqLenType)                                                      \
  X(Int, pageBlockSize)                                                      \
  X(OutTensor, outputCache)
// clang-format on

namespace tilejit::aclnn {
TILEJIT_ACLNN_ARGS(NsaCompressWithCache,
                   TILEJIT_NSA_COMPRESS_WITH_CACHE_PARAMS);
} // namespace tilejit::aclnn

namespace tilejit::ops {
/// Registers prepareNsaCompressWithCache as the phase 1 of
/// aclnnNsaCompressWithCache (called by registerBuiltinOperators,
/// ops/Operators.h).
void registerNsaCompressWithCache();
} // namespace tilejit::ops

#endif
