//===- OpArgs.h - The arguments of the five aclnn operators -----*- C++ -*-===//
///
/// \file
/// One struct per operator, one field per parameter of its
/// aclnnXxxGetWorkspaceSize in the upstream order (minus workspaceSize and
/// executor, which the common layer handles). Tensors arrive as
/// `const TensorView *`, int arrays as `const IntArray *`, tensor lists as
/// `const TensorList *`: nullptr exactly when the caller passed NULL.
/// Strings are the caller's C strings (may be null). These pointers live
/// only during phase 1; a launch closure must copy what it needs.
///
/// An operator registers its phase 1 with
/// `TILEJIT_REGISTER_ACLNN_OP(aclnn::XxxArgs, prepare)`
/// (ops/runtime/OpRegistry.h).
///
//===----------------------------------------------------------------------===//
#ifndef TILEJIT_OPS_ACLNN_OPARGS_H
#define TILEJIT_OPS_ACLNN_OPARGS_H

#include "ops/runtime/OpRegistry.h"
#include "ops/runtime/TensorView.h"

#include <cstdint>

namespace tilejit::aclnn {

using runtime::IntArray;
using runtime::TensorList;
using runtime::TensorView;

/// aclnnScatterPaKvCacheGetWorkspaceSize.
struct ScatterPaKvCacheArgs {
  static constexpr const char *kOpName = "aclnnScatterPaKvCache";
  const TensorView *key = nullptr;
  const TensorView *keyCacheRef = nullptr;
  const TensorView *slotMapping = nullptr;
  const TensorView *value = nullptr;
  const TensorView *valueCacheRef = nullptr;
  const TensorView *compressLensOptional = nullptr;
  const TensorView *compressSeqOffsetOptional = nullptr;
  const TensorView *seqLensOptional = nullptr;
  const char *cacheModeOptional = nullptr;
  const char *scatterModeOptional = nullptr;
  const IntArray *stridesOptional = nullptr;
  const IntArray *offsetsOptional = nullptr;
};

/// aclnnGatherPaKvCacheGetWorkspaceSize.
struct GatherPaKvCacheArgs {
  static constexpr const char *kOpName = "aclnnGatherPaKvCache";
  const TensorView *keyCache = nullptr;
  const TensorView *valueCache = nullptr;
  const TensorView *blockTables = nullptr;
  const TensorView *seqLens = nullptr;
  const TensorView *keyRef = nullptr;
  const TensorView *valueRef = nullptr;
  const TensorView *seqOffsetOptional = nullptr;
  const char *cacheMode = nullptr;
  bool isSeqLensCumsum = false;
};

/// aclnnIncreFlashAttentionV4GetWorkspaceSize.
struct IncreFlashAttentionV4Args {
  static constexpr const char *kOpName = "aclnnIncreFlashAttentionV4";
  const TensorView *query = nullptr;
  const TensorList *key = nullptr;
  const TensorList *value = nullptr;
  const TensorView *pseShift = nullptr;
  const TensorView *attenMask = nullptr;
  const IntArray *actualSeqLengths = nullptr;
  const TensorView *dequantScale1 = nullptr;
  const TensorView *quantScale1 = nullptr;
  const TensorView *dequantScale2 = nullptr;
  const TensorView *quantScale2 = nullptr;
  const TensorView *quantOffset2 = nullptr;
  const TensorView *antiquantScale = nullptr;
  const TensorView *antiquantOffset = nullptr;
  const TensorView *blocktable = nullptr;
  const TensorView *kvPaddingSize = nullptr;
  int64_t numHeads = 0;
  double scaleValue = 1.0;
  const char *inputLayout = nullptr;
  int64_t numKeyValueHeads = 0;
  int64_t blockSize = 0;
  int64_t innerPrecise = 0;
  const TensorView *attentionOut = nullptr;
};

/// aclnnNsaCompressWithCacheGetWorkspaceSize.
struct NsaCompressWithCacheArgs {
  static constexpr const char *kOpName = "aclnnNsaCompressWithCache";
  const TensorView *input = nullptr;
  const TensorView *weight = nullptr;
  const TensorView *slotMapping = nullptr;
  const IntArray *actSeqLenOptional = nullptr;
  const TensorView *blockTableOptional = nullptr;
  const char *layoutOptional = nullptr;
  int64_t compressBlockSize = 0;
  int64_t compressStride = 0;
  int64_t actSeqLenType = 0;
  int64_t pageBlockSize = 0;
  const TensorView *outputCache = nullptr;
};

/// aclnnFlashAttentionUnpaddingScoreGradV5GetWorkspaceSize.
struct FlashAttentionUnpaddingScoreGradV5Args {
  static constexpr const char *kOpName =
      "aclnnFlashAttentionUnpaddingScoreGradV5";
  const TensorView *query = nullptr;
  const TensorView *queryRope = nullptr;
  const TensorView *keyIn = nullptr;
  const TensorView *keyInRope = nullptr;
  const TensorView *value = nullptr;
  const TensorView *dy = nullptr;
  const TensorView *pseShiftOptional = nullptr;
  const TensorView *dropMaskOptional = nullptr;
  const TensorView *paddingMaskOptional = nullptr;
  const TensorView *attenMaskOptional = nullptr;
  const TensorView *softmaxMaxOptional = nullptr;
  const TensorView *softmaxSumOptional = nullptr;
  const TensorView *softmaxInOptional = nullptr;
  const TensorView *attentionInOptional = nullptr;
  const TensorView *sinkInOptional = nullptr;
  const IntArray *prefixOptional = nullptr;
  const IntArray *actualSeqQLenOptional = nullptr;
  const IntArray *actualSeqKvLenOptional = nullptr;
  const IntArray *qStartIdxOptional = nullptr;
  const IntArray *kvStartIdxOptional = nullptr;
  double scaleValue = 1.0;
  double keepProb = 1.0;
  int64_t preTokens = 0;
  int64_t nextTokens = 0;
  int64_t headNum = 0;
  const char *inputLayout = nullptr;
  int64_t innerPrecise = 0;
  int64_t sparseMode = 0;
  int64_t pseType = 0;
  const char *softmaxInLayout = nullptr;
  const TensorView *dqOut = nullptr;
  const TensorView *dqRopeOut = nullptr;
  const TensorView *dkOut = nullptr;
  const TensorView *dkRopeOut = nullptr;
  const TensorView *dvOut = nullptr;
  const TensorView *dpseOut = nullptr;
  const TensorView *dsinkOut = nullptr;
};

} // namespace tilejit::aclnn

#endif
