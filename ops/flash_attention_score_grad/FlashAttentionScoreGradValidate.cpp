// Temporary: fills the Problem without checking (replaced by section 7's validation).
#include "ops/flash_attention_score_grad/FlashAttentionScoreGrad.h"

#include <algorithm>
#include <cstring>

namespace tilejit::ops::fag {

using runtime::Status;

Status validate(const aclnn::FlashAttentionUnpaddingScoreGradV5Args &a, Problem &p) {
  auto present = [](const runtime::TensorView *t) -> std::optional<runtime::TensorView> {
    if (!t || t->rank() == 0)
      return std::nullopt;
    return *t;
  };
  p.dtype = a.query->dtype;
  p.t1 = a.query->dim(0);
  p.n1 = a.query->dim(1);
  p.d = a.query->dim(2);
  p.t2 = a.keyIn->dim(0);
  p.n2 = a.keyIn->dim(1);
  p.dv = a.value->dim(2);
  p.g = p.n1 / p.n2;
  p.q = *a.query;
  p.k = *a.keyIn;
  p.v = *a.value;
  p.dy = *a.dy;
  p.o = *a.attentionInOptional;
  p.m = *a.softmaxMaxOptional;
  p.l = *a.softmaxSumOptional;
  p.dq = *a.dqOut;
  p.dk = *a.dkOut;
  p.dvOut = *a.dvOut;
  p.qRope = present(a.queryRope);
  p.kRope = present(a.keyInRope);
  p.dr = p.qRope ? p.qRope->dim(2) : 0;
  p.dqRope = present(a.dqRopeOut);
  p.dkRope = present(a.dkRopeOut);
  p.pseT = present(a.pseShiftOptional);
  p.attenMask = present(a.attenMaskOptional);
  p.sinkT = present(a.sinkInOptional);
  p.sink = p.sinkT.has_value();
  p.dsink = present(a.dsinkOut);
  p.cq = a.actualSeqQLenOptional->values;
  p.ck = a.actualSeqKvLenOptional->values;
  p.bin = static_cast<int64_t>(p.cq.size());
  p.b = p.bin;
  while (p.b > 0 && p.sq(p.b - 1) == 0 && p.skv(p.b - 1) == 0)
    --p.b;
  for (int64_t i = 0; i < p.bin; ++i) {
    p.sqMax = std::max(p.sqMax, p.sq(i));
    p.skvMax = std::max(p.skvMax, p.skv(i));
  }
  p.scale = static_cast<float>(a.scaleValue);
  p.keepProb = static_cast<float>(a.keepProb);
  p.dropout = p.keepProb < 1.0f;
  if (p.dropout)
    p.dropMask = present(a.dropMaskOptional);
  p.sparseMode = a.sparseMode;
  p.preTokens = a.preTokens;
  p.nextTokens = a.nextTokens;
  p.pseType = a.pseType;
  p.statsTnd = a.softmaxInLayout && std::strcmp(a.softmaxInLayout, "same_as_input") == 0;
  if (p.attenMask) {
    if (p.sparseMode >= 2) {
      p.mask = MaskForm::Compressed;
    } else if (p.attenMask->rank() == 2 || p.attenMask->dim(0) == 1) {
      p.mask = MaskForm::Shared;
    } else {
      p.mask = p.attenMask->dim(1) == 1 ? MaskForm::PerBatch : MaskForm::PerBatchHead;
    }
  }
  if (p.sparseMode == 6)
    p.prefix = a.prefixOptional->values;
  if (p.sparseMode == 7 || p.sparseMode == 8) {
    for (int64_t i = 0; i < p.bin; ++i)
      if (p.sq(i) > 0) {
        p.bandBatch = i;
        if (p.sparseMode == 8)
          break;
      }
  }
  if (p.pseT) {
    if (p.pseType >= 2) {
      p.pse = PseForm::Slopes;
      p.pseBatches = p.pseT->rank() == 2 ? p.pseT->dim(0) : 1;
    } else if (p.pseT->rank() == 4) {
      p.pse = PseForm::AlibiCompressed;
      p.pseBatches = p.pseT->dim(0);
    } else {
      p.pse = p.pseT->dim(0) == p.n1 * p.t2 ? PseForm::PerKv : PseForm::Full;
    }
  }
  if (a.qStartIdxOptional && a.kvStartIdxOptional && a.qStartIdxOptional->size() > 0 &&
      a.kvStartIdxOptional->size() > 0) {
    p.qStart = (*a.qStartIdxOptional)[0];
    p.kvStart = (*a.kvStartIdxOptional)[0];
  }
  p.empty = p.dq.isEmpty() && p.dk.isEmpty() && p.dvOut.isEmpty();
  return Status::ok();
}

} // namespace tilejit::ops::fag
