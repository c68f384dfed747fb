//===- AclnnOps.cpp - The aclnn entry points of the five operators --------===//
//
// Each GetWorkspaceSize packs its C arguments into the operator's Args
// struct and calls prepareOp; each phase 2 calls runOp. Nothing here knows
// an operator's rules: those come from the Prepare function the operator
// registers (ops/host/OpRegistry.h).
//
//===----------------------------------------------------------------------===//
#include "aclnnop/aclnn_flash_attention_score_grad.h"
#include "aclnnop/aclnn_gather_pa_kv_cache.h"
#include "aclnnop/aclnn_incre_flash_attention_v4.h"
#include "aclnnop/aclnn_nsa_compress_with_cache.h"
#include "aclnnop/aclnn_scatter_pa_kv_cache.h"
#include "ops/aclnn/AclnnCommon.h"
#include "ops/host/Stream.h"

#include <memory>

using namespace tilejit;
using host::Status;

namespace tilejit::aclnn {

aclnnStatus runOp(const char *opName, void *workspace, uint64_t workspaceSize,
                  aclOpExecutor *executor, aclrtStream stream) {
  auto fail = [&](int32_t code, const std::string &message) {
    return host::recordError(Status(code, message), opName);
  };
  if (!executor)
    return fail(ACLNN_ERR_PARAM_NULLPTR, "executor must not be null");
  if (!workspace && workspaceSize > 0)
    return fail(ACLNN_ERR_PARAM_NULLPTR,
                "workspace is null but workspaceSize is " +
                    std::to_string(workspaceSize));
  // The stream first: a refused call must not consume the executor. The
  // reference keeps the stream alive through the submit even if another
  // thread destroys it meanwhile.
  std::shared_ptr<host::Stream> s;
  if (stream) {
    s = host::findStream(stream);
    if (!s)
      return fail(ACLNN_ERR_PARAM_INVALID,
                  "stream is not a live stream from aclrtCreateStream");
  }
  std::shared_ptr<aclOpExecutor> owned;
  if (aclnnStatus st = acquireExecutor(opName, executor, workspaceSize, owned))
    return st;

  // The task holds the executor: a single-use one is freed after it ran, a
  // repeatable one destroyed while this launch is queued after it too.
  host::LaunchContext context{workspace, workspaceSize};
  std::string name = opName;
  host::Stream::Task task = [owned = std::move(owned), context, name] {
    Status status = owned->run(context);
    if (!status.isOk())
      return Status(status.code(), name + ": " + status.message());
    return status;
  };
  Status status = host::runOnStream(s.get(), std::move(task));
  if (!status.isOk())
    return host::recordError(status);
  return ACLNN_SUCCESS;
}

} // namespace tilejit::aclnn

extern "C" {

//===----------------------------------------------------------------------===//
// ScatterPaKvCache
//===----------------------------------------------------------------------===//

aclnnStatus aclnnScatterPaKvCacheGetWorkspaceSize(
    const aclTensor *key, const aclTensor *keyCacheRef,
    const aclTensor *slotMapping, const aclTensor *value,
    const aclTensor *valueCacheRef, const aclTensor *compressLensOptional,
    const aclTensor *compressSeqOffsetOptional,
    const aclTensor *seqLensOptional, char *cacheModeOptional,
    char *scatterModeOptional, const aclIntArray *stridesOptional,
    const aclIntArray *offsetsOptional, uint64_t *workspaceSize,
    aclOpExecutor **executor) {
  aclnn::ScatterPaKvCacheArgs args;
  args.key = key;
  args.keyCacheRef = keyCacheRef;
  args.slotMapping = slotMapping;
  args.value = value;
  args.valueCacheRef = valueCacheRef;
  args.compressLensOptional = compressLensOptional;
  args.compressSeqOffsetOptional = compressSeqOffsetOptional;
  args.seqLensOptional = seqLensOptional;
  args.cacheModeOptional = cacheModeOptional;
  args.scatterModeOptional = scatterModeOptional;
  args.stridesOptional = stridesOptional;
  args.offsetsOptional = offsetsOptional;
  return aclnn::prepareOp(args, workspaceSize, executor);
}

aclnnStatus aclnnScatterPaKvCache(void *workspace, uint64_t workspaceSize,
                                  aclOpExecutor *executor, aclrtStream stream) {
  return aclnn::runOp(aclnn::ScatterPaKvCacheArgs::kOpName, workspace,
                      workspaceSize, executor, stream);
}

//===----------------------------------------------------------------------===//
// GatherPaKvCache
//===----------------------------------------------------------------------===//

aclnnStatus aclnnGatherPaKvCacheGetWorkspaceSize(
    const aclTensor *keyCache, const aclTensor *valueCache,
    const aclTensor *blockTables, const aclTensor *seqLens,
    const aclTensor *keyRef, const aclTensor *valueRef,
    const aclTensor *seqOffsetOptional, char *cacheMode,
    const bool isSeqLensCumsum, uint64_t *workspaceSize,
    aclOpExecutor **executor) {
  aclnn::GatherPaKvCacheArgs args;
  args.keyCache = keyCache;
  args.valueCache = valueCache;
  args.blockTables = blockTables;
  args.seqLens = seqLens;
  args.keyRef = keyRef;
  args.valueRef = valueRef;
  args.seqOffsetOptional = seqOffsetOptional;
  args.cacheMode = cacheMode;
  args.isSeqLensCumsum = isSeqLensCumsum;
  return aclnn::prepareOp(args, workspaceSize, executor);
}

aclnnStatus aclnnGatherPaKvCache(void *workspace, uint64_t workspaceSize,
                                 aclOpExecutor *executor, aclrtStream stream) {
  return aclnn::runOp(aclnn::GatherPaKvCacheArgs::kOpName, workspace,
                      workspaceSize, executor, stream);
}

//===----------------------------------------------------------------------===//
// IncreFlashAttentionV4
//===----------------------------------------------------------------------===//

aclnnStatus aclnnIncreFlashAttentionV4GetWorkspaceSize(
    const aclTensor *query, const aclTensorList *key,
    const aclTensorList *value, const aclTensor *pseShift,
    const aclTensor *attenMask, const aclIntArray *actualSeqLengths,
    const aclTensor *dequantScale1, const aclTensor *quantScale1,
    const aclTensor *dequantScale2, const aclTensor *quantScale2,
    const aclTensor *quantOffset2, const aclTensor *antiquantScale,
    const aclTensor *antiquantOffset, const aclTensor *blocktable,
    const aclTensor *kvPaddingSize, int64_t numHeads, double scaleValue,
    char *inputLayout, int64_t numKeyValueHeads, int64_t blockSize,
    int64_t innerPrecise, const aclTensor *attentionOut,
    uint64_t *workspaceSize, aclOpExecutor **executor) {
  aclnn::IncreFlashAttentionV4Args args;
  args.query = query;
  args.key = key;
  args.value = value;
  args.pseShift = pseShift;
  args.attenMask = attenMask;
  args.actualSeqLengths = actualSeqLengths;
  args.dequantScale1 = dequantScale1;
  args.quantScale1 = quantScale1;
  args.dequantScale2 = dequantScale2;
  args.quantScale2 = quantScale2;
  args.quantOffset2 = quantOffset2;
  args.antiquantScale = antiquantScale;
  args.antiquantOffset = antiquantOffset;
  args.blocktable = blocktable;
  args.kvPaddingSize = kvPaddingSize;
  args.numHeads = numHeads;
  args.scaleValue = scaleValue;
  args.inputLayout = inputLayout;
  args.numKeyValueHeads = numKeyValueHeads;
  args.blockSize = blockSize;
  args.innerPrecise = innerPrecise;
  args.attentionOut = attentionOut;
  return aclnn::prepareOp(args, workspaceSize, executor);
}

aclnnStatus aclnnIncreFlashAttentionV4(void *workspace, uint64_t workspaceSize,
                                       aclOpExecutor *executor,
                                       const aclrtStream stream) {
  return aclnn::runOp(aclnn::IncreFlashAttentionV4Args::kOpName, workspace,
                      workspaceSize, executor, stream);
}

//===----------------------------------------------------------------------===//
// NsaCompressWithCache
//===----------------------------------------------------------------------===//

aclnnStatus aclnnNsaCompressWithCacheGetWorkspaceSize(
    const aclTensor *input, const aclTensor *weight,
    const aclTensor *slotMapping, const aclIntArray *actSeqLenOptional,
    const aclTensor *blockTableOptional, char *layoutOptional,
    int64_t compressBlockSize, int64_t compressStride, int64_t actSeqLenType,
    int64_t pageBlockSize, aclTensor *outputCache, uint64_t *workspaceSize,
    aclOpExecutor **executor) {
  aclnn::NsaCompressWithCacheArgs args;
  args.input = input;
  args.weight = weight;
  args.slotMapping = slotMapping;
  args.actSeqLenOptional = actSeqLenOptional;
  args.blockTableOptional = blockTableOptional;
  args.layoutOptional = layoutOptional;
  args.compressBlockSize = compressBlockSize;
  args.compressStride = compressStride;
  args.actSeqLenType = actSeqLenType;
  args.pageBlockSize = pageBlockSize;
  args.outputCache = outputCache;
  return aclnn::prepareOp(args, workspaceSize, executor);
}

aclnnStatus aclnnNsaCompressWithCache(void *workspace, uint64_t workspaceSize,
                                      aclOpExecutor *executor,
                                      aclrtStream stream) {
  return aclnn::runOp(aclnn::NsaCompressWithCacheArgs::kOpName, workspace,
                      workspaceSize, executor, stream);
}

//===----------------------------------------------------------------------===//
// FlashAttentionUnpaddingScoreGradV5
//===----------------------------------------------------------------------===//

aclnnStatus aclnnFlashAttentionUnpaddingScoreGradV5GetWorkspaceSize(
    const aclTensor *query, const aclTensor *queryRope, const aclTensor *keyIn,
    const aclTensor *keyInRope, const aclTensor *value, const aclTensor *dy,
    const aclTensor *pseShiftOptional, const aclTensor *dropMaskOptional,
    const aclTensor *paddingMaskOptional, const aclTensor *attenMaskOptional,
    const aclTensor *softmaxMaxOptional, const aclTensor *softmaxSumOptional,
    const aclTensor *softmaxInOptional, const aclTensor *attentionInOptional,
    const aclTensor *sinkInOptional, const aclIntArray *prefixOptional,
    const aclIntArray *actualSeqQLenOptional,
    const aclIntArray *actualSeqKvLenOptional,
    const aclIntArray *qStartIdxOptional, const aclIntArray *kvStartIdxOptional,
    double scaleValue, double keepProb, int64_t preTokens, int64_t nextTokens,
    int64_t headNum, char *inputLayout, int64_t innerPrecise,
    int64_t sparseMode, int64_t pseType, char *softmaxInLayout,
    const aclTensor *dqOut, const aclTensor *dqRopeOut, const aclTensor *dkOut,
    const aclTensor *dkRopeOut, const aclTensor *dvOut,
    const aclTensor *dpseOut, const aclTensor *dsinkOut,
    uint64_t *workspaceSize, aclOpExecutor **executor) {
  aclnn::FlashAttentionUnpaddingScoreGradV5Args args;
  args.query = query;
  args.queryRope = queryRope;
  args.keyIn = keyIn;
  args.keyInRope = keyInRope;
  args.value = value;
  args.dy = dy;
  args.pseShiftOptional = pseShiftOptional;
  args.dropMaskOptional = dropMaskOptional;
  args.paddingMaskOptional = paddingMaskOptional;
  args.attenMaskOptional = attenMaskOptional;
  args.softmaxMaxOptional = softmaxMaxOptional;
  args.softmaxSumOptional = softmaxSumOptional;
  args.softmaxInOptional = softmaxInOptional;
  args.attentionInOptional = attentionInOptional;
  args.sinkInOptional = sinkInOptional;
  args.prefixOptional = prefixOptional;
  args.actualSeqQLenOptional = actualSeqQLenOptional;
  args.actualSeqKvLenOptional = actualSeqKvLenOptional;
  args.qStartIdxOptional = qStartIdxOptional;
  args.kvStartIdxOptional = kvStartIdxOptional;
  args.scaleValue = scaleValue;
  args.keepProb = keepProb;
  args.preTokens = preTokens;
  args.nextTokens = nextTokens;
  args.headNum = headNum;
  args.inputLayout = inputLayout;
  args.innerPrecise = innerPrecise;
  args.sparseMode = sparseMode;
  args.pseType = pseType;
  args.softmaxInLayout = softmaxInLayout;
  args.dqOut = dqOut;
  args.dqRopeOut = dqRopeOut;
  args.dkOut = dkOut;
  args.dkRopeOut = dkRopeOut;
  args.dvOut = dvOut;
  args.dpseOut = dpseOut;
  args.dsinkOut = dsinkOut;
  return aclnn::prepareOp(args, workspaceSize, executor);
}

aclnnStatus aclnnFlashAttentionUnpaddingScoreGradV5(void *workspace,
                                                    uint64_t workspaceSize,
                                                    aclOpExecutor *executor,
                                                    const aclrtStream stream) {
  return aclnn::runOp(aclnn::FlashAttentionUnpaddingScoreGradV5Args::kOpName,
                      workspace, workspaceSize, executor, stream);
}

} // extern "C"
