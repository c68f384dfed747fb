//===- FlashAttentionScoreGradValidate.cpp - Section 7, in order ----------===//
//
// Every rule of section 7 of
// ../shared/spec/flash_attention_unpadding_score_grad_v5.md in the spec's
// order (the first failure wins): 161001 for a missing required pointer,
// 161002 for everything else, with a message naming the argument and the
// rule. On success the Problem holds the normalised call. Beyond the spec,
// every view must lie inside its storage, so that no kernel reads or writes
// outside a tensor.
//
//===----------------------------------------------------------------------===//
#include "ops/flash_attention_score_grad/FlashAttentionScoreGrad.h"

#include <algorithm>
#include <cstring>
#include <string>

namespace tilejit::ops::fag {

using runtime::DataType;
using runtime::Status;
using runtime::TensorView;
namespace status = runtime::status;

namespace {

Status invalid(const auto &...parts) { return Status::error(status::ParamInvalid, parts...); }
Status nullptrError(const auto &...parts) {
  return Status::error(status::ParamNullptr, parts...);
}

std::string shapeOf(const TensorView &t) { return runtime::shapeToString(t.shape); }

/// An optional tensor: absent when null or 0-dim.
std::optional<TensorView> optional(const TensorView *t) {
  if (!t || t->rank() == 0)
    return std::nullopt;
  return *t;
}

bool isFloatKind(DataType t) {
  return t == DataType::Float16 || t == DataType::BFloat16 || t == DataType::Float;
}

/// (a + b) without overflow, saturated.
int64_t addSat(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r))
    return a > 0 ? INT64_MAX : INT64_MIN;
  return r;
}
/// −a without overflow, saturated.
int64_t negSat(int64_t a) { return a == INT64_MIN ? INT64_MAX : -a; }

struct Named {
  const TensorView *t;
  const char *name;
};

Status checkRank3(std::initializer_list<Named> list) {
  for (const Named &n : list)
    if (n.t && n.t->rank() != 3)
      return invalid(n.name, ": rank must be 3 for layout TND, got ", n.t->rank(), " (",
                     shapeOf(*n.t), ")");
  return Status::ok();
}

Status checkDims(const TensorView &t, const char *name, std::vector<int64_t> want,
                 const char *rule) {
  if (t.shape != want)
    return invalid(name, ": shape must be ", runtime::shapeToString(want), " (", rule,
                   "), got ", shapeOf(t));
  return Status::ok();
}

/// Section 5.1 / 5.2: the mask form the declared shape gives in `mode`.
Status maskForm(const Problem &p, const TensorView &m, MaskForm &form) {
  const std::vector<int64_t> &s = m.shape;
  if (p.sparseMode == 0 || p.sparseMode == 1) {
    if (s == std::vector<int64_t>{p.sqMax, p.skvMax} ||
        s == std::vector<int64_t>{1, 1, p.sqMax, p.skvMax}) {
      form = MaskForm::Shared;
      return Status::ok();
    }
    if (s == std::vector<int64_t>{p.b, 1, p.sqMax, p.skvMax}) {
      form = MaskForm::PerBatch;
      return Status::ok();
    }
    if (s == std::vector<int64_t>{p.b, p.n1, p.sqMax, p.skvMax}) {
      form = MaskForm::PerBatchHead;
      return Status::ok();
    }
    return invalid("attenMaskOptional: shape ", shapeOf(m), " does not fit sparseMode ",
                   p.sparseMode, " (expected [Sqmax, Skvmax] = [", p.sqMax, ", ", p.skvMax,
                   "], or 4-D [1|B|B, 1|1|N1, Sqmax, Skvmax] with B = ", p.b, ", N1 = ", p.n1,
                   ")");
  }
  const int64_t rows = p.sparseMode == 6 ? 3072 : 2048;
  const bool last = s.size() >= 2 && s[s.size() - 2] == rows && s.back() == 2048;
  const bool lead = s.size() == 2 ||
                    (s.size() == 4 && ((s[0] == 1 && s[1] == 1) || (s[0] == p.b && s[1] == 1) ||
                                       (s[0] == p.b && s[1] == p.n1)));
  if (!last || !lead)
    return invalid("attenMaskOptional: shape ", shapeOf(m), " does not fit sparseMode ",
                   p.sparseMode, " (expected the compressed [", rows,
                   ", 2048], or 4-D with leading (1, 1), (B, 1) or (B, N1))");
  form = MaskForm::Compressed;
  return Status::ok();
}

/// Section 5.3: the token checks of one batch (`which` names the rule).
Status tokenCheck(const Problem &p, int64_t bi, bool mode0) {
  const int64_t pre = p.preTokens, nxt = p.nextTokens;
  const int64_t sq = p.sq(bi), skv = p.skv(bi);
  // Mode 0: -pre > skv or -nxt > sq; modes 4, 7, 8: -pre > sq or -nxt > skv.
  const int64_t preBound = mode0 ? skv : sq, nxtBound = mode0 ? sq : skv;
  if (negSat(pre) > preBound)
    return invalid("preTokens: ", pre, " reaches past the ", mode0 ? "key" : "query",
                   " length ", preBound, " of batch ", bi, " (sparseMode ", p.sparseMode,
                   " requires -preTokens <= ", mode0 ? "skv" : "sq", ")");
  if (negSat(nxt) > nxtBound)
    return invalid("nextTokens: ", nxt, " reaches past the ", mode0 ? "query" : "key",
                   " length ", nxtBound, " of batch ", bi, " (sparseMode ", p.sparseMode,
                   " requires -nextTokens <= ", mode0 ? "sq" : "skv", ")");
  if (addSat(pre, nxt) <= 0)
    return invalid("preTokens, nextTokens: preTokens + nextTokens must be > 0 (sparseMode ",
                   p.sparseMode, "), got ", pre, " + ", nxt);
  return Status::ok();
}

} // namespace

Status validate(const aclnn::FlashAttentionUnpaddingScoreGradV5Args &a, Problem &p) {
  // 1. Layout.
  if (!a.inputLayout)
    return nullptrError("inputLayout must not be null");
  if (std::strcmp(a.inputLayout, "TND") != 0)
    return invalid("inputLayout: \"", a.inputLayout, "\" is not supported (expected \"TND\")");
  // 2. Required pointers.
  if (Status s = runtime::requireNonNull({{"query", a.query},
                                          {"keyIn", a.keyIn},
                                          {"value", a.value},
                                          {"dy", a.dy},
                                          {"attentionInOptional", a.attentionInOptional},
                                          {"dqOut", a.dqOut},
                                          {"dkOut", a.dkOut},
                                          {"dvOut", a.dvOut}});
      !s)
    return s;
  // 3. The empty problem.
  if (a.dqOut->isEmpty() && a.dkOut->isEmpty() && a.dvOut->isEmpty() &&
      (!a.dpseOut || a.dpseOut->isEmpty())) {
    p.empty = true;
    return Status::ok();
  }
  // 4. headNum.
  if (a.headNum <= 0)
    return invalid("headNum: must be > 0, got ", a.headNum);
  // 5. Ranks.
  const std::optional<TensorView> qRope = optional(a.queryRope), kRope = optional(a.keyInRope);
  if (Status s = checkRank3({{a.query, "query"},
                             {a.keyIn, "keyIn"},
                             {a.value, "value"},
                             {a.dy, "dy"},
                             {a.attentionInOptional, "attentionInOptional"},
                             {a.dqOut, "dqOut"},
                             {a.dkOut, "dkOut"},
                             {a.dvOut, "dvOut"},
                             {qRope ? a.queryRope : nullptr, "queryRope"},
                             {kRope ? a.keyInRope : nullptr, "keyInRope"}});
      !s)
    return s;
  const std::optional<TensorView> sink = optional(a.sinkInOptional);
  const bool dsinkGiven = a.dsinkOut && !(a.dsinkOut->rank() == 1 && a.dsinkOut->dim(0) == 0);
  if (sink && dsinkGiven && (sink->rank() != 1 || a.dsinkOut->rank() != 1))
    return invalid("sinkInOptional, dsinkOut: must be 1-D, got ", shapeOf(*sink), " and ",
                   shapeOf(*a.dsinkOut));
  const TensorView &q = *a.query, &k = *a.keyIn, &v = *a.value;
  // 6. Head dims.
  if (q.dim(2) != k.dim(2))
    return invalid("keyIn: head dim ", k.dim(2), " must equal query's ", q.dim(2));
  if (v.dim(2) > q.dim(2))
    return invalid("value: head dim ", v.dim(2), " must not exceed query's ", q.dim(2),
                   " (Dv <= D)");
  // 7. Rope.
  const std::optional<TensorView> attenMask = optional(a.attenMaskOptional);
  const std::optional<TensorView> pse = optional(a.pseShiftOptional);
  const std::optional<TensorView> dropMask = optional(a.dropMaskOptional);
  const float keep = static_cast<float>(a.keepProb);
  if (qRope.has_value() != kRope.has_value())
    return nullptrError(qRope ? "keyInRope" : "queryRope",
                        " must not be null when ", qRope ? "queryRope" : "keyInRope",
                        " is given (rope parts come in pairs)");
  if (qRope) {
    if (qRope->dim(2) > q.dim(2) || kRope->dim(2) > q.dim(2))
      return invalid("queryRope, keyInRope: rope dims ", qRope->dim(2), ", ", kRope->dim(2),
                     " must not exceed D = ", q.dim(2));
    for (Named n : {Named{&q, "query"}, Named{&k, "keyIn"}, Named{&v, "value"},
                    Named{&*qRope, "queryRope"}, Named{&*kRope, "keyInRope"}})
      if (n.t->dtype != DataType::BFloat16)
        return invalid(n.name, ": dtype ", n.t->dtype, " is not supported with rope (expected BFLOAT16)");
    if (a.sparseMode == 6)
      return invalid("sparseMode: 6 (prefix) is not supported with rope");
    if (!attenMask)
      return nullptrError("attenMaskOptional must not be null when rope is given");
    if (pse)
      return invalid("pseShiftOptional: must be absent when rope is given");
    if (dropMask)
      return invalid("dropMaskOptional: must be absent when rope is given");
    if (keep < 1.0f)
      return invalid("keepProb: must be 1 when rope is given, got ", a.keepProb);
    if (qRope->dim(2) != kRope->dim(2) || qRope->dim(2) % 8 != 0 || q.dim(2) % 8 != 0)
      return invalid("queryRope, keyInRope: rope dims (", qRope->dim(2), ", ", kRope->dim(2),
                     ") must be equal and multiples of 8, and D (", q.dim(2),
                     ") a multiple of 8");
    if (!a.dqRopeOut || !a.dkRopeOut)
      return nullptrError(!a.dqRopeOut ? "dqRopeOut" : "dkRopeOut",
                          " must not be null when rope is given");
    if (Status s = checkRank3({{a.dqRopeOut, "dqRopeOut"}, {a.dkRopeOut, "dkRopeOut"}}); !s)
      return s;
  }
  // 8. Dtypes.
  if (!isFloatKind(q.dtype))
    return invalid("query: dtype ", q.dtype, " is not supported (expected FLOAT16, BFLOAT16 or FLOAT)");
  for (Named n : {Named{&k, "keyIn"}, Named{&v, "value"}, Named{a.dy, "dy"},
                  Named{a.attentionInOptional, "attentionInOptional"}, Named{a.dqOut, "dqOut"},
                  Named{a.dkOut, "dkOut"}, Named{a.dvOut, "dvOut"},
                  Named{qRope ? a.dqRopeOut : nullptr, "dqRopeOut"},
                  Named{qRope ? a.dkRopeOut : nullptr, "dkRopeOut"}})
    if (n.t && n.t->dtype != q.dtype)
      return invalid(n.name, ": dtype ", n.t->dtype, " must equal query's dtype ", q.dtype);
  // 9. Shapes.
  p.dtype = q.dtype;
  p.t1 = q.dim(0);
  p.n1 = q.dim(1);
  p.d = q.dim(2);
  p.t2 = k.dim(0);
  p.n2 = k.dim(1);
  p.dv = v.dim(2);
  p.dr = qRope ? qRope->dim(2) : 0;
  if (a.headNum != p.n1)
    return invalid("headNum: ", a.headNum, " must equal query.shape[1] = ", p.n1);
  if (p.n2 == 0 || p.n1 % p.n2 != 0)
    return invalid("keyIn: head count ", p.n2, " must be > 0 and divide query's ", p.n1);
  if (p.n1 > 256)
    return invalid("query: head count ", p.n1, " must be <= 256");
  if (p.d < 1 || p.d > 768)
    return invalid("query: head dim ", p.d, " must be in [1, 768]");
  p.g = p.n1 / p.n2;
  if (v.dim(0) != p.t2 || v.dim(1) != p.n2)
    return invalid("value: shape ", shapeOf(v), " must agree with keyIn ", shapeOf(k),
                   " on [T2, N2]");
  for (Named n : {Named{a.dy, "dy"}, Named{a.attentionInOptional, "attentionInOptional"}})
    if (Status s = checkDims(*n.t, n.name, {p.t1, p.n1, p.dv}, "[T1, N1] of query, Dv of value");
        !s)
      return s;
  if (Status s = checkDims(*a.dqOut, "dqOut", q.shape, "query's shape"); !s)
    return s;
  if (Status s = checkDims(*a.dkOut, "dkOut", k.shape, "keyIn's shape"); !s)
    return s;
  if (Status s = checkDims(*a.dvOut, "dvOut", v.shape, "value's shape"); !s)
    return s;
  if (qRope) {
    if (Status s = checkDims(*qRope, "queryRope", {p.t1, p.n1, p.dr}, "[T1, N1] of query"); !s)
      return s;
    if (Status s = checkDims(*kRope, "keyInRope", {p.t2, p.n2, p.dr}, "[T2, N2] of keyIn"); !s)
      return s;
    if (Status s = checkDims(*a.dqRopeOut, "dqRopeOut", qRope->shape, "queryRope's shape"); !s)
      return s;
    if (Status s = checkDims(*a.dkRopeOut, "dkRopeOut", kRope->shape, "keyInRope's shape"); !s)
      return s;
  }
  // 10. Sequence arrays.
  if (!a.actualSeqQLenOptional || !a.actualSeqKvLenOptional)
    return invalid(!a.actualSeqQLenOptional ? "actualSeqQLenOptional" : "actualSeqKvLenOptional",
                   ": must not be null (layout TND needs cumulative lengths)");
  const runtime::IntArray &cq = *a.actualSeqQLenOptional, &ck = *a.actualSeqKvLenOptional;
  if (cq.size() != ck.size())
    return invalid("actualSeqKvLenOptional: length ", ck.size(),
                   " must equal actualSeqQLenOptional's ", cq.size());
  if (cq.size() == 0)
    return invalid("actualSeqQLenOptional: must not be empty");
  for (auto [arr, name, limit, tname] :
       {std::tuple{&cq, "actualSeqQLenOptional", p.t1, "T1"},
        std::tuple{&ck, "actualSeqKvLenOptional", p.t2, "T2"}}) {
    for (int64_t i = 0; i < arr->size(); ++i) {
      if ((*arr)[i] < 0)
        return invalid(name, ": entry ", i, " is negative (", (*arr)[i], ")");
      if (i > 0 && (*arr)[i] < (*arr)[i - 1])
        return invalid(name, ": values must not decrease (entry ", i, " is ", (*arr)[i],
                       " after ", (*arr)[i - 1], ")");
    }
    if ((*arr)[arr->size() - 1] > limit)
      return invalid(name, ": the last offset ", (*arr)[arr->size() - 1], " exceeds ", tname,
                     " = ", limit);
  }
  p.cq = cq.values;
  p.ck = ck.values;
  p.bin = cq.size();
  p.b = p.bin;
  while (p.b > 0 && p.sq(p.b - 1) == 0 && p.skv(p.b - 1) == 0)
    --p.b;
  for (int64_t i = 0; i < p.bin; ++i) {
    p.sqMax = std::max(p.sqMax, p.sq(i));
    p.skvMax = std::max(p.skvMax, p.skv(i));
  }
  // 11. Sparse mode and mask.
  p.sparseMode = a.sparseMode;
  p.preTokens = a.preTokens;
  p.nextTokens = a.nextTokens;
  if (p.sparseMode < 0 || p.sparseMode > 8 || p.sparseMode == 5)
    return invalid("sparseMode: ", a.sparseMode,
                   " is not supported (expected 0, 1, 2, 3, 4, 6, 7 or 8)");
  if (p.sparseMode == 7 || p.sparseMode == 8) {
    for (int64_t i = 0; i < p.bin; ++i)
      if (p.sq(i) > 0) {
        p.bandBatch = i;
        if (p.sparseMode == 8)
          break;
      }
  }
  if (attenMask) {
    if (attenMask->dtype != DataType::Bool && attenMask->dtype != DataType::UInt8)
      return invalid("attenMaskOptional: dtype ", attenMask->dtype,
                     " is not supported (expected BOOL or UINT8)");
    if (Status s = maskForm(p, *attenMask, p.mask); !s)
      return s;
    if (p.sparseMode == 0 || p.sparseMode == 4) {
      for (int64_t i = 0; i < p.b; ++i)
        if (Status s = tokenCheck(p, i, p.sparseMode == 0); !s)
          return s;
    } else if ((p.sparseMode == 7 || p.sparseMode == 8) && p.bandBatch >= 0) {
      if (Status s = tokenCheck(p, p.bandBatch, false); !s)
        return s;
    }
  }
  // 12. The position bias.
  p.pseType = a.pseType;
  if (a.pseType < 0 || a.pseType > 3)
    return invalid("pseType: ", a.pseType, " is not supported (expected 0 to 3)");
  if (!pse && a.pseType != 1)
    return invalid("pseType: must be 1 when pseShiftOptional is absent, got ", a.pseType);
  if (pse) {
    const TensorView &e = *pse;
    if (p.pseType <= 1 && e.dtype != q.dtype)
      return invalid("pseShiftOptional: dtype ", e.dtype, " must equal query's dtype ",
                     q.dtype, " for pseType ", p.pseType);
    if (p.pseType >= 2 && e.dtype != DataType::Float)
      return invalid("pseShiftOptional: dtype ", e.dtype, " must be FLOAT (slopes) for pseType ",
                     p.pseType);
    for (int64_t i = 0; i < p.bin; ++i)
      if (p.sq(i) == 0 && i < p.b)
        return invalid("pseShiftOptional: not supported when a batch has no query tokens "
                       "(batch ", i, ")");
    if (p.sparseMode == 7)
      return invalid("pseShiftOptional: not supported in sparseMode 7");
    int64_t packed = 0;
    for (int64_t i = 0; i < p.bin; ++i)
      packed += p.sq(i) * p.skv(i);
    if (p.pseType >= 2) {
      if (e.shape == std::vector<int64_t>{p.n1}) {
        p.pseBatches = 1;
      } else if (e.shape == std::vector<int64_t>{p.b, p.n1}) {
        p.pseBatches = p.b;
      } else {
        return invalid("pseShiftOptional: slopes shape ", shapeOf(e), " must be [N1] = [",
                       p.n1, "] or [B, N1] = [", p.b, ", ", p.n1, "]");
      }
      p.pse = PseForm::Slopes;
    } else if (e.rank() == 4) {
      if (!((e.dim(0) == 1 || e.dim(0) == p.b) && e.dim(1) == p.n1 && e.dim(2) == 1024 &&
            e.dim(3) == p.skvMax))
        return invalid("pseShiftOptional: shape ", shapeOf(e),
                       " must be [Bp, N1, 1024, Skvmax] = [1|", p.b, ", ", p.n1, ", 1024, ",
                       p.skvMax, "]");
      for (int64_t i = 0; i < p.bin; ++i)
        if (p.sq(i) != p.skv(i))
          return invalid("pseShiftOptional: the compressed ALiBi bias needs sq = skv in every "
                         "batch (batch ", i, " has ", p.sq(i), " and ", p.skv(i), ")");
      const bool causalTokens = p.preTokens >= p.sqMax && p.nextTokens == 0;
      const bool causal = attenMask && (p.sparseMode == 2 || p.sparseMode == 3 ||
                                        p.sparseMode == 8 ||
                                        ((p.sparseMode == 0 || p.sparseMode == 4) && causalTokens));
      if (!causal)
        return invalid("pseShiftOptional: the compressed ALiBi bias needs a causal mask "
                       "(sparseMode 2 or 3, or 0/4 with preTokens >= Sqmax and nextTokens = 0)");
      p.pse = PseForm::AlibiCompressed;
      p.pseBatches = e.dim(0);
    } else if (e.rank() == 1 && e.dim(0) == p.n1 * p.t2) {
      p.pse = PseForm::PerKv;
    } else if (e.rank() == 1 && e.dim(0) == p.n1 * packed) {
      p.pse = PseForm::Full;
    } else {
      return invalid("pseShiftOptional: shape ", shapeOf(e),
                     " is not supported (expected [Bp, N1, 1024, Skvmax], [N1 * T2] = [",
                     p.n1 * p.t2, "] or [N1 * sum(sq * skv)] = [", p.n1 * packed, "])");
    }
    if (a.qStartIdxOptional && a.kvStartIdxOptional && a.qStartIdxOptional->size() > 0 &&
        a.kvStartIdxOptional->size() > 0) {
      p.qStart = (*a.qStartIdxOptional)[0];
      p.kvStart = (*a.kvStartIdxOptional)[0];
    }
  }
  // 13. Dropout.
  if (!(keep > 0.0f) || keep > 1.0f)
    return invalid("keepProb: must be in (0, 1], got ", a.keepProb);
  p.keepProb = keep;
  p.dropout = keep < 1.0f;
  if (p.dropout) {
    if (!dropMask)
      return nullptrError("dropMaskOptional must not be null when keepProb < 1");
    if (dropMask->dtype != DataType::UInt8 || dropMask->rank() != 1)
      return invalid("dropMaskOptional: must be a 1-D UINT8 tensor, got ",
                     dropMask->describe());
    int64_t bits = 0;
    for (int64_t i = 0; i < p.bin; ++i)
      bits += p.sq(i) * p.skv(i);
    bits *= p.n1;
    if (dropMask->dim(0) < (bits + 7) / 8)
      return invalid("dropMaskOptional: ", dropMask->dim(0), " bytes are fewer than the ",
                     (bits + 7) / 8, " the bit-packed mask of N1 * sum(sq * skv) = ", bits,
                     " bits needs");
    p.dropMask = dropMask;
  }
  // 14. Forward statistics.
  for (auto [t, name] : {std::pair{a.softmaxMaxOptional, "softmaxMaxOptional"},
                         std::pair{a.softmaxSumOptional, "softmaxSumOptional"}}) {
    if (!t || t->rank() == 0)
      return nullptrError(name, " must not be null (the backward reads the forward's row "
                                "statistics)");
    if (t->dtype != DataType::Float)
      return invalid(name, ": dtype ", t->dtype, " is not supported (expected FLOAT)");
    if (Status s = checkDims(*t, name, {p.t1, p.n1, 8}, "[T1, N1, 8]"); !s)
      return s;
  }
  // 15. Sink.
  if (sink) {
    if (sink->dtype != DataType::Float || sink->shape != std::vector<int64_t>{p.n1})
      return invalid("sinkInOptional: must be FLOAT [N1] = [", p.n1, "], got ",
                     sink->describe());
  }
  if (dsinkGiven && (a.dsinkOut->dtype != DataType::Float ||
                     a.dsinkOut->shape != std::vector<int64_t>{p.n1}))
    return invalid("dsinkOut: must be FLOAT [N1] = [", p.n1, "], got ", a.dsinkOut->describe());
  // 16. Prefix (mode 6).
  if (p.sparseMode == 6) {
    if (!a.prefixOptional || a.prefixOptional->size() != p.b)
      return invalid("prefixOptional: sparseMode 6 needs exactly B = ", p.b, " entries, got ",
                     a.prefixOptional ? a.prefixOptional->size() : 0);
    for (int64_t i = 0; i < p.b; ++i) {
      const int64_t pf = (*a.prefixOptional)[i], sq = p.sq(i), skv = p.skv(i);
      const int64_t lo = sq > skv ? 0 : skv - sq;
      if (pf < lo || pf > skv)
        return invalid("prefixOptional: entry ", i, " is ", pf, ", outside [", lo, ", ", skv,
                       "] (batch ", i, ": sq = ", sq, ", skv = ", skv, ")");
    }
    p.prefix = a.prefixOptional->values;
  }
  // Every view inside its storage: nothing reads or writes past a tensor.
  const TensorView *views[] = {&q, &k, &v, a.dy, a.attentionInOptional, a.softmaxMaxOptional,
                               a.softmaxSumOptional, a.dqOut, a.dkOut, a.dvOut};
  const char *viewNames[] = {"query", "keyIn", "value", "dy", "attentionInOptional",
                             "softmaxMaxOptional", "softmaxSumOptional", "dqOut", "dkOut",
                             "dvOut"};
  for (size_t i = 0; i < std::size(views); ++i)
    if (!views[i]->fitsStorage())
      return invalid(viewNames[i], ": the view ", views[i]->describe(),
                     " reaches outside its storage");
  for (auto [t, name] : {std::pair{qRope ? &*qRope : nullptr, "queryRope"},
                         std::pair{kRope ? &*kRope : nullptr, "keyInRope"},
                         std::pair{qRope ? a.dqRopeOut : nullptr, "dqRopeOut"},
                         std::pair{qRope ? a.dkRopeOut : nullptr, "dkRopeOut"},
                         std::pair{pse ? &*pse : nullptr, "pseShiftOptional"},
                         std::pair{p.dropout ? &*dropMask : nullptr, "dropMaskOptional"},
                         std::pair{attenMask ? &*attenMask : nullptr, "attenMaskOptional"},
                         std::pair{sink ? &*sink : nullptr, "sinkInOptional"},
                         std::pair{dsinkGiven ? a.dsinkOut : nullptr, "dsinkOut"}})
    if (t && !t->fitsStorage())
      return invalid(name, ": the view ", t->describe(), " reaches outside its storage");

  // The normalised call.
  p.q = q;
  p.k = k;
  p.v = v;
  p.dy = *a.dy;
  p.o = *a.attentionInOptional;
  p.m = *a.softmaxMaxOptional;
  p.l = *a.softmaxSumOptional;
  p.dq = *a.dqOut;
  p.dk = *a.dkOut;
  p.dvOut = *a.dvOut;
  p.qRope = qRope;
  p.kRope = kRope;
  if (qRope) {
    p.dqRope = *a.dqRopeOut;
    p.dkRope = *a.dkRopeOut;
  }
  p.pseT = pse;
  p.attenMask = attenMask;
  if (!attenMask)
    p.mask = MaskForm::None;
  p.sinkT = sink;
  p.sink = sink.has_value();
  if (dsinkGiven)
    p.dsink = *a.dsinkOut;
  p.scale = static_cast<float>(a.scaleValue);
  p.statsTnd = a.softmaxInLayout && std::strcmp(a.softmaxInLayout, "same_as_input") == 0;
  return Status::ok();
}

} // namespace tilejit::ops::fag
