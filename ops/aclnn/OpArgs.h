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
/// (ops/host/OpRegistry.h).
///
//===----------------------------------------------------------------------===//
#ifndef TILEJIT_OPS_ACLNN_OPARGS_H
#define TILEJIT_OPS_ACLNN_OPARGS_H

#include "ops/host/OpRegistry.h"
#include "ops/host/TensorView.h"

#include <cstdint>
#include <string>
#include <type_traits>

namespace tilejit::aclnn {

using host::IntArray;
using host::TensorList;
using host::TensorView;

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
  /// Calls `f(name, pointer)` for every tensor and tensor-list argument, in
  /// parameter order.
  template <typename F> void forEachTensor(F &&f) const {
    f("key", key);
    f("keyCacheRef", keyCacheRef);
    f("slotMapping", slotMapping);
    f("value", value);
    f("valueCacheRef", valueCacheRef);
    f("compressLensOptional", compressLensOptional);
    f("compressSeqOffsetOptional", compressSeqOffsetOptional);
    f("seqLensOptional", seqLensOptional);
  }
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
  /// Calls `f(name, pointer)` for every tensor and tensor-list argument, in
  /// parameter order.
  template <typename F> void forEachTensor(F &&f) const {
    f("keyCache", keyCache);
    f("valueCache", valueCache);
    f("blockTables", blockTables);
    f("seqLens", seqLens);
    f("keyRef", keyRef);
    f("valueRef", valueRef);
    f("seqOffsetOptional", seqOffsetOptional);
  }
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
  /// Calls `f(name, pointer)` for every tensor and tensor-list argument, in
  /// parameter order.
  template <typename F> void forEachTensor(F &&f) const {
    f("query", query);
    f("key", key);
    f("value", value);
    f("pseShift", pseShift);
    f("attenMask", attenMask);
    f("dequantScale1", dequantScale1);
    f("quantScale1", quantScale1);
    f("dequantScale2", dequantScale2);
    f("quantScale2", quantScale2);
    f("quantOffset2", quantOffset2);
    f("antiquantScale", antiquantScale);
    f("antiquantOffset", antiquantOffset);
    f("blocktable", blocktable);
    f("kvPaddingSize", kvPaddingSize);
    f("attentionOut", attentionOut);
  }
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
  /// Calls `f(name, pointer)` for every tensor and tensor-list argument, in
  /// parameter order.
  template <typename F> void forEachTensor(F &&f) const {
    f("input", input);
    f("weight", weight);
    f("slotMapping", slotMapping);
    f("blockTableOptional", blockTableOptional);
    f("outputCache", outputCache);
  }
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
  /// Calls `f(name, pointer)` for every tensor and tensor-list argument, in
  /// parameter order.
  template <typename F> void forEachTensor(F &&f) const {
    f("query", query);
    f("queryRope", queryRope);
    f("keyIn", keyIn);
    f("keyInRope", keyInRope);
    f("value", value);
    f("dy", dy);
    f("pseShiftOptional", pseShiftOptional);
    f("dropMaskOptional", dropMaskOptional);
    f("paddingMaskOptional", paddingMaskOptional);
    f("attenMaskOptional", attenMaskOptional);
    f("softmaxMaxOptional", softmaxMaxOptional);
    f("softmaxSumOptional", softmaxSumOptional);
    f("softmaxInOptional", softmaxInOptional);
    f("attentionInOptional", attentionInOptional);
    f("sinkInOptional", sinkInOptional);
    f("dqOut", dqOut);
    f("dqRopeOut", dqRopeOut);
    f("dkOut", dkOut);
    f("dkRopeOut", dkRopeOut);
    f("dvOut", dvOut);
    f("dpseOut", dpseOut);
    f("dsinkOut", dsinkOut);
  }
};

/// The descriptor check (host::checkDescriptor) of every tensor argument
/// of `args` that is not null, and of every entry of its tensor lists
/// ("key[1]"), in parameter order; the first failure is returned. Runs
/// before any operator rule, in phase 1 of every operator.
template <typename ArgsT> host::Status checkTensorArgs(const ArgsT &args) {
  host::Status result;
  auto check = [&](const char *name, const auto *arg) {
    if (!result.isOk() || !arg)
      return;
    if constexpr (std::is_same_v<std::remove_cvref_t<decltype(*arg)>,
                                 TensorList>) {
      for (int64_t i = 0; i < arg->size() && result.isOk(); ++i)
        if (const TensorView *entry = arg->at(i))
          result = host::checkDescriptor(
              *entry, std::string(name) + "[" + std::to_string(i) + "]");
    } else {
      result = host::checkDescriptor(*arg, name);
    }
  };
  args.forEachTensor(check);
  return result;
}

} // namespace tilejit::aclnn

#endif
