//===- FlashAttentionScoreGradValidate.cpp - Section 7, rule by rule ------===//
//
// Phase 1's checks of ../shared/spec/flash_attention_unpadding_score_grad_v5.md
// section 7 in the spec's order (the first failure wins), and the normalised
// Problem they leave behind. 161001 only for missing required pointers,
// 161002 for everything else.
//
// Beyond the spec's list, so that no kernel ever reads or writes outside a
// tensor: the rope parts must agree with q and k on [T, N], packed counts
// (N1 * sum sq_b * skv_b) must fit in int64, a dropout mask must be 1-D,
// and every view the Problem keeps must fit its storage (checked last,
// after rule 16).
//
//===----------------------------------------------------------------------===//
#include "ops/flash_attention_score_grad/FlashAttentionScoreGrad.h"

#include <algorithm>
#include <cassert>
#include <cstring>
#include <limits>
#include <string>
#include <utility>

namespace tilejit::ops::fag {

using host::DataType;
using host::IntArray;
using host::Status;
using host::TensorView;
namespace status = host::status;
using Args = aclnn::FlashAttentionUnpaddingScoreGradV5Args;

namespace {

Status invalid(const auto &...parts) {
  return Status::error(status::ParamInvalid, parts...);
}
Status missing(const auto &...parts) {
  return Status::error(status::ParamNullptr, parts...);
}

std::string shapeOf(const TensorView &t) {
  return host::shapeToString(t.shape);
}

/// An optional input: null or 0-dim counts as not given (section 1).
const TensorView *given(const TensorView *t) {
  return t && t->rank() > 0 ? t : nullptr;
}

/// An optional output: also shape [0] means "do not write" (section 1).
const TensorView *written(const TensorView *t) {
  t = given(t);
  return t && !(t->rank() == 1 && t->dim(0) == 0) ? t : nullptr;
}

bool isFloatType(DataType t) {
  return t == DataType::Float16 || t == DataType::BFloat16 ||
         t == DataType::Float;
}

/// True if `t` has exactly `dims`.
bool hasShape(const TensorView &t, std::initializer_list<int64_t> dims) {
  return t.shape == std::vector<int64_t>(dims);
}

constexpr __int128 kInt64Max = std::numeric_limits<int64_t>::max();

/// True if some dimension is 0 (without forming the product, which may
/// overflow for absurd shapes). A 0-dim tensor has one element.
bool hasNoElements(const TensorView &t) {
  return std::find(t.shape.begin(), t.shape.end(), 0) != t.shape.end();
}

/// The element count in 128 bits (dims are non-negative and at most 8).
__int128 elementCount(const TensorView &t) {
  __int128 n = 1;
  for (int64_t s : t.shape) {
    n *= s;
    if (n > kInt64Max)
      return kInt64Max + 1;
  }
  return n;
}

/// Runs the rules in order on one argument set, building the Problem.
class Validator {
public:
  explicit Validator(const Args &args) : a(args) {}

  Status run(Problem &out) {
    using Rule = Status (Validator::*)();
    // requiredPointers also detects rule 3 (the empty problem): it ends the
    // list there with success.
    static constexpr Rule rules[] = {
        &Validator::layout,       &Validator::requiredPointers,
        &Validator::headNum,      &Validator::ranks,
        &Validator::headDims,     &Validator::rope,
        &Validator::dtypes,       &Validator::shapes,
        &Validator::sequences,    &Validator::sparseModeAndMask,
        &Validator::positionBias, &Validator::dropout,
        &Validator::statistics,   &Validator::sinkRule,
        &Validator::prefixRule,   &Validator::storage};
    for (Rule rule : rules) {
      if (Status s = (this->*rule)(); !s)
        return s;
      if (p.empty)
        break;
    }
    out = std::move(p);
    return Status::ok();
  }

private:
  const Args &a;
  Problem p;
  // The optional tensors after the "absent" rules of section 1.
  const TensorView *qRope = nullptr, *kRope = nullptr;
  int64_t pairs = 0;       // sum over batches of sq_b * skv_b
  int64_t packedElems = 0; // N1 * pairs

  //===--------------------------------------------------------------------===//
  // Rules 1-3: layout, required pointers, the empty problem
  //===--------------------------------------------------------------------===//

  Status layout() {
    if (!a.inputLayout)
      return missing("inputLayout must not be null");
    if (std::strcmp(a.inputLayout, "TND") != 0)
      return invalid("inputLayout: \"", a.inputLayout,
                     "\" is not supported (must be exactly \"TND\")");
    return Status::ok();
  }

  Status requiredPointers() {
    // workspaceSize and executor are checked by the common layer (prepareOp).
    if (Status s = host::requireNonNull(
            {{"query", a.query},
             {"keyIn", a.keyIn},
             {"value", a.value},
             {"dy", a.dy},
             {"attentionInOptional", a.attentionInOptional},
             {"dqOut", a.dqOut},
             {"dkOut", a.dkOut},
             {"dvOut", a.dvOut}});
        !s)
      return s;
    // Rule 3: nothing to compute.
    if (hasNoElements(*a.dqOut) && hasNoElements(*a.dkOut) &&
        hasNoElements(*a.dvOut) && (!a.dpseOut || hasNoElements(*a.dpseOut))) {
      p.empty = true;
      p.q = *a.query;
      p.k = *a.keyIn;
      p.v = *a.value;
      p.dy = *a.dy;
      p.o = *a.attentionInOptional;
      p.dq = *a.dqOut;
      p.dk = *a.dkOut;
      p.dvOut = *a.dvOut;
    }
    return Status::ok();
  }

  //===--------------------------------------------------------------------===//
  // Rules 4-9: heads, ranks, head dims, rope, dtypes, shapes
  //===--------------------------------------------------------------------===//

  Status headNum() {
    if (a.headNum <= 0)
      return invalid("headNum: must be > 0, got ", a.headNum);
    return Status::ok();
  }

  Status ranks() {
    qRope = given(a.queryRope);
    kRope = given(a.keyInRope);
    const bool anyRope = qRope || kRope;
    const std::pair<const TensorView *, const char *> tensors[] = {
        {a.query, "query"},
        {a.keyIn, "keyIn"},
        {a.value, "value"},
        {a.dy, "dy"},
        {a.attentionInOptional, "attentionInOptional"},
        {a.dqOut, "dqOut"},
        {a.dkOut, "dkOut"},
        {a.dvOut, "dvOut"},
        {qRope, "queryRope"},
        {kRope, "keyInRope"},
        {anyRope ? written(a.dqRopeOut) : nullptr, "dqRopeOut"},
        {anyRope ? written(a.dkRopeOut) : nullptr, "dkRopeOut"}};
    for (auto [t, name] : tensors)
      if (t && t->rank() != 3)
        return invalid(name, ": rank must be 3 (TND), got ", t->rank(), " (",
                       shapeOf(*t), ")");
    const TensorView *sink = given(a.sinkInOptional);
    const TensorView *dsink = given(a.dsinkOut);
    if (sink && dsink) {
      if (sink->rank() != 1)
        return invalid("sinkInOptional: rank must be 1, got ", sink->rank(),
                       " (", shapeOf(*sink), ")");
      if (dsink->rank() != 1)
        return invalid("dsinkOut: rank must be 1, got ", dsink->rank(), " (",
                       shapeOf(*dsink), ")");
    }
    return Status::ok();
  }

  Status headDims() {
    const int64_t d = a.query->dim(2);
    if (a.keyIn->dim(2) != d)
      return invalid("keyIn: head dim (shape[2]) ", a.keyIn->dim(2),
                     " must equal query's head dim D = ", d);
    if (a.value->dim(2) > d)
      return invalid("value: head dim Dv (shape[2]) ", a.value->dim(2),
                     " must not exceed D = ", d);
    return Status::ok();
  }

  /// Rule 7, in the spec's order.
  Status rope() {
    if (!qRope && !kRope)
      return Status::ok();
    if (!kRope)
      return missing("keyInRope must not be null when queryRope is given");
    if (!qRope)
      return missing("queryRope must not be null when keyInRope is given");
    const int64_t d = a.query->dim(2);
    const int64_t drq = qRope->dim(2), drk = kRope->dim(2);
    if (drq > d)
      return invalid("queryRope: rope dim ", drq, " must not exceed D = ", d);
    if (drk > d)
      return invalid("keyInRope: rope dim ", drk, " must not exceed D = ", d);
    const std::pair<const TensorView *, const char *> bf16[] = {
        {a.query, "query"},
        {a.keyIn, "keyIn"},
        {a.value, "value"},
        {qRope, "queryRope"},
        {kRope, "keyInRope"}};
    for (auto [t, name] : bf16)
      if (t->dtype != DataType::BFloat16)
        return invalid(name, ": dtype ", t->dtype,
                       " must be BFLOAT16 when rope is given");
    if (a.sparseMode == 6)
      return invalid("sparseMode: 6 (prefix) is not supported with rope");
    if (!given(a.attenMaskOptional))
      return missing("attenMaskOptional must not be null when rope is given");
    if (given(a.pseShiftOptional))
      return invalid("pseShiftOptional: must be absent when rope is given");
    if (given(a.dropMaskOptional))
      return invalid("dropMaskOptional: must be absent when rope is given");
    if (static_cast<float>(a.keepProb) < 1.0f)
      return invalid("keepProb: ", a.keepProb,
                     " must be 1 when rope is given (no dropout)");
    if (drk != drq)
      return invalid("keyInRope: rope dim ", drk,
                     " must equal queryRope's rope dim ", drq);
    if (drq % 8 != 0)
      return invalid("queryRope: rope dim ", drq, " must be a multiple of 8");
    if (d % 8 != 0)
      return invalid("query: head dim D = ", d,
                     " must be a multiple of 8 when rope is given");
    if (!given(a.dqRopeOut))
      return missing("dqRopeOut must not be null when rope is given");
    if (!given(a.dkRopeOut))
      return missing("dkRopeOut must not be null when rope is given");
    return Status::ok();
  }

  Status dtypes() {
    const DataType dt = a.query->dtype;
    if (!isFloatType(dt))
      return invalid("query: dtype ", dt,
                     " is not supported (expected FLOAT16, BFLOAT16 or FLOAT)");
    const std::pair<const TensorView *, const char *> same[] = {
        {a.keyIn, "keyIn"},
        {a.value, "value"},
        {a.dy, "dy"},
        {a.attentionInOptional, "attentionInOptional"},
        {a.dqOut, "dqOut"},
        {a.dkOut, "dkOut"},
        {a.dvOut, "dvOut"},
        {qRope ? written(a.dqRopeOut) : nullptr, "dqRopeOut"},
        {qRope ? written(a.dkRopeOut) : nullptr, "dkRopeOut"}};
    for (auto [t, name] : same)
      if (t && t->dtype != dt)
        return invalid(name, ": dtype ", t->dtype, " must equal query's dtype ",
                       dt);
    p.dtype = dt;
    return Status::ok();
  }

  Status shapes() {
    const TensorView &q = *a.query, &k = *a.keyIn, &v = *a.value;
    const int64_t t1 = q.dim(0), n1 = q.dim(1), d = q.dim(2);
    const int64_t t2 = k.dim(0), n2 = k.dim(1), dv = v.dim(2);
    if (a.headNum != n1)
      return invalid("headNum: ", a.headNum,
                     " must equal query.shape[1] (N1 = ", n1, ")");
    if (n2 == 0)
      return invalid("keyIn: kv head count N2 (shape[1]) must be > 0");
    if (n1 % n2 != 0)
      return invalid("keyIn: query heads N1 = ", n1,
                     " must be a multiple of kv heads N2 = ", n2);
    if (n1 > 256)
      return invalid("query: head count N1 = ", n1, " must be <= 256");
    if (d < 1 || d > 768)
      return invalid("query: head dim D = ", d, " must be in [1, 768]");
    if (v.dim(0) != t2 || v.dim(1) != n2)
      return invalid("value: shape ", shapeOf(v),
                     " must agree with keyIn's [T2, N2] = [", t2, ", ", n2,
                     "]");
    const std::pair<const TensorView *, const char *> rows[] = {
        {a.dy, "dy"}, {a.attentionInOptional, "attentionInOptional"}};
    for (auto [t, name] : rows)
      if (!hasShape(*t, {t1, n1, dv}))
        return invalid(name, ": shape ", shapeOf(*t),
                       " must be [T1, N1, Dv] = [", t1, ", ", n1, ", ", dv,
                       "]");
    if (qRope && !hasShape(*qRope, {t1, n1, qRope->dim(2)}))
      return invalid("queryRope: shape ", shapeOf(*qRope),
                     " must agree with query's [T1, N1] = [", t1, ", ", n1,
                     "]");
    if (kRope && !hasShape(*kRope, {t2, n2, kRope->dim(2)}))
      return invalid("keyInRope: shape ", shapeOf(*kRope),
                     " must agree with keyIn's [T2, N2] = [", t2, ", ", n2,
                     "]");
    struct Out {
      const TensorView *out;
      const char *name;
      const TensorView *in;
      const char *inName;
    };
    const Out outs[] = {{a.dqOut, "dqOut", a.query, "query"},
                        {a.dkOut, "dkOut", a.keyIn, "keyIn"},
                        {a.dvOut, "dvOut", a.value, "value"},
                        {qRope ? written(a.dqRopeOut) : nullptr, "dqRopeOut",
                         qRope, "queryRope"},
                        {kRope ? written(a.dkRopeOut) : nullptr, "dkRopeOut",
                         kRope, "keyInRope"}};
    for (const Out &o : outs)
      if (o.out && o.out->shape != o.in->shape)
        return invalid(o.name, ": shape ", shapeOf(*o.out), " must equal ",
                       o.inName, "'s shape ", shapeOf(*o.in));
    p.t1 = t1;
    p.t2 = t2;
    p.n1 = n1;
    p.n2 = n2;
    p.g = n1 / n2;
    p.d = d;
    p.dv = dv;
    p.dr = qRope ? qRope->dim(2) : 0;
    return Status::ok();
  }

  //===--------------------------------------------------------------------===//
  // Rule 10: the cumulative sequence arrays
  //===--------------------------------------------------------------------===//

  Status sequences() {
    const IntArray *cq = a.actualSeqQLenOptional,
                   *ck = a.actualSeqKvLenOptional;
    if (!cq)
      return invalid("actualSeqQLenOptional: must not be null with layout TND");
    if (!ck)
      return invalid("actualSeqKvLenOptional: must not be null with layout "
                     "TND");
    if (cq->size() != ck->size())
      return invalid("actualSeqKvLenOptional: length ", ck->size(),
                     " must equal actualSeqQLenOptional's length ", cq->size());
    if (cq->size() == 0)
      return invalid("actualSeqQLenOptional: must not be empty");
    const std::pair<const IntArray *, const char *> arrays[] = {
        {cq, "actualSeqQLenOptional"}, {ck, "actualSeqKvLenOptional"}};
    for (auto [arr, name] : arrays)
      for (int64_t i = 0; i < arr->size(); ++i) {
        if ((*arr)[i] < 0)
          return invalid(name, ": values must not be negative (entry ", i,
                         " is ", (*arr)[i], ")");
        if (i > 0 && (*arr)[i] < (*arr)[i - 1])
          return invalid(name, ": values must not decrease (entry ", i, " is ",
                         (*arr)[i], " after ", (*arr)[i - 1], ")");
      }
    if (cq->values.back() > p.t1)
      return invalid("actualSeqQLenOptional: last value ", cq->values.back(),
                     " must not exceed T1 = ", p.t1);
    if (ck->values.back() > p.t2)
      return invalid("actualSeqKvLenOptional: last value ", ck->values.back(),
                     " must not exceed T2 = ", p.t2);
    p.cq = cq->values;
    p.ck = ck->values;
    p.bin = cq->size();
    p.b = 0;
    for (int64_t bi = 0; bi < p.bin; ++bi) {
      const int64_t sq = p.sq(bi), skv = p.skv(bi);
      if (sq > 0 || skv > 0)
        p.b = bi + 1;
      p.sqMax = std::max(p.sqMax, sq);
      p.skvMax = std::max(p.skvMax, skv);
      int64_t prod = 0;
      if (__builtin_mul_overflow(sq, skv, &prod) ||
          __builtin_add_overflow(pairs, prod, &pairs))
        return invalid("actualSeqQLenOptional, actualSeqKvLenOptional: the "
                       "sum of sq_b * skv_b exceeds the int64 range");
    }
    if (__builtin_mul_overflow(pairs, p.n1, &packedElems))
      return invalid("actualSeqQLenOptional, actualSeqKvLenOptional: N1 * "
                     "sum of sq_b * skv_b exceeds the int64 range");
    return Status::ok();
  }

  //===--------------------------------------------------------------------===//
  // Rule 11: sparse mode, mask dtype and shape, tokens (section 5)
  //===--------------------------------------------------------------------===//

  /// "[Sqmax, Skvmax] = [a, b]"-style list of the accepted leading dims.
  std::string expectedMaskShapes(int64_t rows, int64_t cols) const {
    const std::string tail =
        std::to_string(rows) + ", " + std::to_string(cols) + "]";
    return "[" + tail + ", [1, 1, " + tail + ", [B, 1, " + tail +
           " or [B, N1, " + tail + " with B = " + std::to_string(p.b) +
           ", N1 = " + std::to_string(p.n1);
  }

  Status explicitMaskForm(const TensorView &m) {
    const int64_t rows = p.sqMax, cols = p.skvMax;
    auto bad = [&] {
      return invalid("attenMaskOptional: shape ", shapeOf(m),
                     " does not fit sparseMode ", a.sparseMode, " (expected ",
                     expectedMaskShapes(rows, cols), ")");
    };
    if (m.rank() == 2) {
      if (!hasShape(m, {rows, cols}))
        return bad();
      p.mask = MaskForm::Shared;
      return Status::ok();
    }
    if (m.rank() != 4 || m.dim(2) != rows || m.dim(3) != cols)
      return bad();
    if (m.dim(0) == 1 && m.dim(1) == 1)
      p.mask = MaskForm::Shared; // also [B, 1, ...] with B = 1: same reading
    else if (m.dim(0) == p.b && m.dim(1) == 1)
      p.mask = MaskForm::PerBatch;
    else if (m.dim(0) == p.b && m.dim(1) == p.n1)
      p.mask = MaskForm::PerBatchHead;
    else
      return bad();
    // The batched forms are read packed; their padded shape always holds
    // enough elements (sq_b <= Sqmax, skv_b <= Skvmax for every b < B).
    assert((p.mask == MaskForm::Shared ||
            elementCount(m) >=
                (p.mask == MaskForm::PerBatch ? pairs : packedElems)) &&
           "a batched mask too small for its packed reading");
    return Status::ok();
  }

  Status compressedMaskForm(const TensorView &m) {
    const int64_t rows = a.sparseMode == 6 ? 3072 : 2048;
    const bool lastTwo =
        m.rank() >= 2 && m.dim(-2) == rows && m.dim(-1) == 2048;
    const bool leading =
        m.rank() == 2 ||
        (m.rank() == 4 &&
         ((m.dim(0) == 1 && m.dim(1) == 1) ||
          (m.dim(0) == p.b && (m.dim(1) == 1 || m.dim(1) == p.n1))));
    if (!lastTwo || !leading)
      return invalid("attenMaskOptional: shape ", shapeOf(m),
                     " does not fit sparseMode ", a.sparseMode,
                     " (expected the compressed [", rows, ", 2048], or [1, 1, ",
                     rows, ", 2048], [B, 1, ", rows, ", 2048] or [B, N1, ",
                     rows, ", 2048] with B = ", p.b, ", N1 = ", p.n1, ")");
    p.mask = MaskForm::Compressed;
    return Status::ok();
  }

  /// Section 5.3 for batch `bi`: `lenPre` bounds -preTokens, `lenNext`
  /// bounds -nextTokens.
  Status tokens(int64_t bi, int64_t lenPre, const char *preName,
                int64_t lenNext, const char *nextName) const {
    const int64_t pre = a.preTokens, nxt = a.nextTokens;
    if (pre < -lenPre)
      return invalid("preTokens: ", pre, " must be >= -", preName, " = -",
                     lenPre, " of batch ", bi, " in sparseMode ", a.sparseMode);
    if (nxt < -lenNext)
      return invalid("nextTokens: ", nxt, " must be >= -", nextName, " = -",
                     lenNext, " of batch ", bi, " in sparseMode ",
                     a.sparseMode);
    if (static_cast<__int128>(pre) + nxt <= 0)
      return invalid("preTokens + nextTokens: ", pre, " + ", nxt,
                     " must be > 0 in sparseMode ", a.sparseMode);
    return Status::ok();
  }

  Status sparseModeAndMask() {
    const int64_t mode = a.sparseMode;
    if (mode == 5)
      return invalid("sparseMode: 5 (prefix, non-compressed) is not "
                     "supported with layout TND");
    if (mode < 0 || mode > 8)
      return invalid("sparseMode: ", mode,
                     " is not one of 0, 1, 2, 3, 4, 6, 7, 8");
    p.sparseMode = mode;
    p.preTokens = a.preTokens;
    p.nextTokens = a.nextTokens;
    if (mode == 7)
      for (int64_t bi = p.bin; bi-- > 0 && p.bandBatch < 0;)
        if (p.sq(bi) > 0)
          p.bandBatch = bi;
    if (mode == 8)
      for (int64_t bi = 0; bi < p.bin && p.bandBatch < 0; ++bi)
        if (p.sq(bi) > 0)
          p.bandBatch = bi;

    const TensorView *m = given(a.attenMaskOptional);
    if (!m)
      return Status::ok(); // rule 0: every position kept, no token checks
    if (m->dtype != DataType::Bool && m->dtype != DataType::UInt8)
      return invalid("attenMaskOptional: dtype ", m->dtype,
                     " is not supported (expected BOOL or UINT8)");
    if (Status s = mode <= 1 ? explicitMaskForm(*m) : compressedMaskForm(*m);
        !s)
      return s;
    p.attenMask = *m;

    if (mode == 0 || mode == 4) {
      for (int64_t bi = 0; bi < p.b; ++bi) {
        Status s = mode == 0 ? tokens(bi, p.skv(bi), "skv", p.sq(bi), "sq")
                             : tokens(bi, p.sq(bi), "sq", p.skv(bi), "skv");
        if (!s)
          return s;
      }
    }
    if ((mode == 7 || mode == 8) && p.bandBatch >= 0)
      return tokens(p.bandBatch, p.sq(p.bandBatch), "sq", p.skv(p.bandBatch),
                    "skv");
    return Status::ok();
  }

  //===--------------------------------------------------------------------===//
  // Rule 12: the position bias (section 6)
  //===--------------------------------------------------------------------===//

  /// Section 6.1's requirements on the ALiBi-compressed form.
  Status alibiRequirements() const {
    for (int64_t bi = 0; bi < p.b; ++bi)
      if (p.sq(bi) != p.skv(bi))
        return invalid("pseShiftOptional: the ALiBi-compressed form needs "
                       "sq_b = skv_b in every batch (batch ",
                       bi, " has ", p.sq(bi), " and ", p.skv(bi), ")");
    const int64_t mode = p.sparseMode;
    if (p.mask == MaskForm::None || mode == 1)
      return invalid("pseShiftOptional: the ALiBi-compressed form needs a "
                     "causal mask (an attenMask in sparseMode 0, 2, 3, 4 or "
                     "8), got ",
                     p.mask == MaskForm::None ? "no mask" : "sparseMode 1");
    if (mode == 6)
      return invalid("pseShiftOptional: the ALiBi-compressed form is not "
                     "supported in sparseMode 6 (the prefix columns lie above "
                     "the diagonal)");
    if ((mode == 0 || mode == 4 || mode == 8) &&
        (p.preTokens < p.sqMax || p.nextTokens != 0))
      return invalid("pseShiftOptional: the ALiBi-compressed form needs a "
                     "causal band in sparseMode ",
                     mode, " (preTokens >= Sqmax = ", p.sqMax,
                     " and nextTokens = 0), got preTokens ", p.preTokens,
                     ", nextTokens ", p.nextTokens);
    return Status::ok();
  }

  Status positionBias() {
    if (a.pseType < 0 || a.pseType > 3)
      return invalid("pseType: ", a.pseType, " must be in [0, 3]");
    p.pseType = a.pseType;
    const TensorView *e = given(a.pseShiftOptional);
    if (!e) {
      if (a.pseType != 1)
        return invalid("pseType: ", a.pseType,
                       " needs pseShiftOptional (without a pse, pseType must "
                       "be 1)");
      return Status::ok();
    }
    const bool slopes = a.pseType >= 2;
    const DataType want = slopes ? DataType::Float : p.dtype;
    if (e->dtype != want)
      return invalid("pseShiftOptional: dtype ", e->dtype, " must be ", want,
                     slopes ? " (slopes for pseType 2 and 3)"
                            : " (query's dtype for pseType 0 and 1)");
    if (slopes) {
      if (hasShape(*e, {p.n1})) {
        p.pseBatches = 1;
      } else if (hasShape(*e, {p.b, p.n1})) {
        p.pseBatches = p.b;
      } else {
        return invalid("pseShiftOptional: shape ", shapeOf(*e),
                       " is not supported for pseType ", a.pseType,
                       " (expected slopes [N1] = [", p.n1, "] or [B, N1] = [",
                       p.b, ", ", p.n1, "])");
      }
      p.pse = PseForm::Slopes;
    } else {
      int64_t perKv = 0;
      const bool perKvFits = !__builtin_mul_overflow(p.n1, p.t2, &perKv);
      if (e->rank() == 4 && (e->dim(0) == 1 || e->dim(0) == p.b) &&
          e->dim(1) == p.n1 && e->dim(2) == 1024 && e->dim(3) == p.skvMax) {
        p.pse = PseForm::AlibiCompressed;
        p.pseBatches = e->dim(0);
        if (Status s = alibiRequirements(); !s)
          return s;
      } else if (e->rank() == 1 && perKvFits && e->dim(0) == perKv) {
        p.pse = PseForm::PerKv; // preferred when both 1-D lengths agree (as the reference)
      } else if (e->rank() == 1 && e->dim(0) == packedElems) {
        p.pse = PseForm::Full;
      } else {
        return invalid("pseShiftOptional: shape ", shapeOf(*e),
                       " is not supported for pseType ", a.pseType,
                       " (expected [Bp, N1, 1024, Skvmax] = [1 or ", p.b, ", ",
                       p.n1, ", 1024, ", p.skvMax, "], [N1 * T2] = [", perKv,
                       "] or [N1 * sum sq_b * skv_b] = [", packedElems, "])");
      }
    }
    // Section 6.3.
    for (int64_t bi = 0; bi < p.b; ++bi)
      if (p.sq(bi) == 0)
        return invalid("pseShiftOptional: not supported when a batch has no "
                       "query tokens (batch ",
                       bi, " has sq = 0)");
    if (p.sparseMode == 7)
      return invalid("pseShiftOptional: not supported in sparseMode 7");
    p.pseT = *e;
    return Status::ok();
  }

  //===--------------------------------------------------------------------===//
  // Rules 13-16: dropout, statistics, sink, prefix
  //===--------------------------------------------------------------------===//

  Status dropout() {
    const double kp = a.keepProb;
    if (!(kp > 0.0 && kp <= 1.0))
      return invalid("keepProb: ", kp, " must be in (0, 1]");
    p.keepProb = static_cast<float>(kp);
    if (p.keepProb <= 0.0f)
      return invalid("keepProb: ", kp, " rounds to 0 in float32");
    p.dropout = p.keepProb < 1.0f;
    if (!p.dropout)
      return Status::ok(); // the mask is ignored even if given
    const TensorView *m = given(a.dropMaskOptional);
    if (!m)
      return missing("dropMaskOptional must not be null when keepProb < 1 (",
                     kp, ")");
    if (m->dtype != DataType::UInt8)
      return invalid("dropMaskOptional: dtype ", m->dtype,
                     " must be UINT8 (bit-packed)");
    if (m->rank() != 1)
      return invalid("dropMaskOptional: rank must be 1, got ", m->rank(), " (",
                     shapeOf(*m), ")");
    const int64_t need = packedElems / 8 + (packedElems % 8 != 0);
    if (m->dim(0) < need)
      return invalid("dropMaskOptional: ", m->dim(0),
                     " bytes are too short, N1 * sum sq_b * skv_b = ",
                     packedElems, " bits need ", need);
    p.dropMask = *m;
    return Status::ok();
  }

  Status statistics() {
    const std::pair<const TensorView *, const char *> stats[] = {
        {given(a.softmaxMaxOptional), "softmaxMaxOptional"},
        {given(a.softmaxSumOptional), "softmaxSumOptional"}};
    for (auto [t, name] : stats)
      if (!t)
        return missing(name,
                       " must not be null (the forward's row statistics)");
    for (auto [t, name] : stats) {
      if (t->dtype != DataType::Float)
        return invalid(name, ": dtype ", t->dtype, " must be FLOAT");
      if (t->rank() != 3)
        return invalid(name, ": rank must be 3, got ", t->rank(), " (",
                       shapeOf(*t), ")");
      if (!hasShape(*t, {p.t1, p.n1, 8}))
        return invalid(name, ": shape ", shapeOf(*t),
                       " must be [T1, N1, 8] = [", p.t1, ", ", p.n1, ", 8]");
    }
    p.m = *stats[0].first;
    p.l = *stats[1].first;
    p.statsTnd = a.softmaxInLayout &&
                 std::strcmp(a.softmaxInLayout, "same_as_input") == 0;
    return Status::ok();
  }

  Status sinkRule() {
    if (const TensorView *s = given(a.sinkInOptional)) {
      if (s->dtype != DataType::Float)
        return invalid("sinkInOptional: dtype ", s->dtype, " must be FLOAT");
      if (!hasShape(*s, {p.n1}))
        return invalid("sinkInOptional: shape ", shapeOf(*s),
                       " must be [N1] = [", p.n1, "]");
      p.sink = true;
      p.sinkT = *s;
    }
    if (const TensorView *ds = written(a.dsinkOut)) {
      if (ds->dtype != DataType::Float)
        return invalid("dsinkOut: dtype ", ds->dtype, " must be FLOAT");
      if (!hasShape(*ds, {p.n1}))
        return invalid("dsinkOut: shape ", shapeOf(*ds), " must be [N1] = [",
                       p.n1, "] (or [0]: not written)");
      p.dsink = *ds;
    }
    return Status::ok();
  }

  Status prefixRule() {
    if (p.sparseMode != 6)
      return Status::ok();
    const IntArray *pre = a.prefixOptional;
    const int64_t n = pre ? pre->size() : 0;
    if (n != p.b)
      return invalid("prefixOptional: must have B = ", p.b,
                     " entries in sparseMode 6, got ",
                     pre ? std::to_string(n) : std::string("null"));
    for (int64_t bi = 0; bi < n; ++bi) {
      const int64_t sq = p.sq(bi), skv = p.skv(bi), v = (*pre)[bi];
      const int64_t lo = sq > skv ? 0 : skv - sq;
      if (v < lo || v > skv)
        return invalid("prefixOptional: entry ", bi, " is ", v,
                       ", must be in [", lo, ", ", skv, "] (sq = ", sq,
                       ", skv = ", skv, ")");
    }
    if (pre)
      p.prefix = pre->values;
    return Status::ok();
  }

  //===--------------------------------------------------------------------===//
  // The views the Problem keeps, and their storage
  //===--------------------------------------------------------------------===//

  Status storage() {
    p.q = *a.query;
    p.k = *a.keyIn;
    p.v = *a.value;
    p.dy = *a.dy;
    p.o = *a.attentionInOptional;
    p.dq = *a.dqOut;
    p.dk = *a.dkOut;
    p.dvOut = *a.dvOut;
    if (qRope) {
      p.qRope = *qRope;
      p.kRope = *kRope;
      if (const TensorView *t = written(a.dqRopeOut))
        p.dqRope = *t;
      if (const TensorView *t = written(a.dkRopeOut))
        p.dkRope = *t;
    }
    if (a.qStartIdxOptional && a.kvStartIdxOptional &&
        a.qStartIdxOptional->size() > 0 && a.kvStartIdxOptional->size() > 0) {
      p.qStart = (*a.qStartIdxOptional)[0];
      p.kvStart = (*a.kvStartIdxOptional)[0];
    }
    p.scale = static_cast<float>(a.scaleValue);

    const std::pair<const TensorView *, const char *> views[] = {
        {&p.q, "query"},
        {p.qRope ? &*p.qRope : nullptr, "queryRope"},
        {&p.k, "keyIn"},
        {p.kRope ? &*p.kRope : nullptr, "keyInRope"},
        {&p.v, "value"},
        {&p.dy, "dy"},
        {p.pseT ? &*p.pseT : nullptr, "pseShiftOptional"},
        {p.dropMask ? &*p.dropMask : nullptr, "dropMaskOptional"},
        {p.attenMask ? &*p.attenMask : nullptr, "attenMaskOptional"},
        {&p.m, "softmaxMaxOptional"},
        {&p.l, "softmaxSumOptional"},
        {&p.o, "attentionInOptional"},
        {p.sinkT ? &*p.sinkT : nullptr, "sinkInOptional"},
        {&p.dq, "dqOut"},
        {p.dqRope ? &*p.dqRope : nullptr, "dqRopeOut"},
        {&p.dk, "dkOut"},
        {p.dkRope ? &*p.dkRope : nullptr, "dkRopeOut"},
        {&p.dvOut, "dvOut"},
        {p.dsink ? &*p.dsink : nullptr, "dsinkOut"}};
    for (auto [t, name] : views)
      if (t && !t->fitsStorage())
        return invalid(name, ": view ", t->describe(),
                       " does not fit its storage ",
                       host::shapeToString(t->storageShape));
    return Status::ok();
  }
};

} // namespace

Status validate(const Args &args, Problem &p) { return Validator(args).run(p); }

} // namespace tilejit::ops::fag
