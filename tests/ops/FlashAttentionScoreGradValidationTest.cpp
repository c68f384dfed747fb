//===- FlashAttentionScoreGradValidationTest.cpp - Section 7, rule by rule ===//
//
// Section 7 of ../shared/spec/flash_attention_unpadding_score_grad_v5.md:
// one negative test per rule and sub-rule through the public C API (exact
// status, the key part of the message, a null executor, untouched outputs),
// starting each time from a small valid problem (fp16, T = 8, N = 2,
// D = 16, one batch) with one thing broken; and positive tests of the
// normalisation fag::validate leaves in the Problem (batches, band batch,
// mask and pse forms, start indices, statistics layout, empty problems).
//
//===----------------------------------------------------------------------===//
#include "acl/acl.h"
#include "aclnnop/aclnn_flash_attention_score_grad.h"
#include "ops/aclnn/AclObjects.h"
#include "ops/flash_attention_score_grad/FlashAttentionScoreGrad.h"
#include "ops/host/DataType.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

using namespace tilejit;
using ops::fag::MaskForm;
using ops::fag::Problem;
using ops::fag::PseForm;
using host::DataType;

namespace {

constexpr int32_t kNull = ACLNN_ERR_PARAM_NULLPTR;    // 161001
constexpr int32_t kInvalid = ACLNN_ERR_PARAM_INVALID; // 161002
constexpr unsigned char kSentinel = 0xA5;

/// gtest's HasSubstr without gmock: `text` contains `key`.
testing::AssertionResult hasSubstr(const char *textExpr, const char *keyExpr,
                                   const std::string &text,
                                   const std::string &key) {
  if (text.find(key) != std::string::npos)
    return testing::AssertionSuccess();
  return testing::AssertionFailure()
         << textExpr << " (\"" << text << "\") does not contain " << keyExpr
         << " (\"" << key << "\")";
}

/// A host tensor: owned storage and its aclTensor view. Contiguous unless
/// strides are given; the storage holds `storageElems` elements (default:
/// exactly what the view addresses).
struct Tensor {
  DataType dtype;
  std::vector<int64_t> shape;
  std::vector<unsigned char> bytes;
  aclTensor *handle = nullptr;

  Tensor(DataType t, std::vector<int64_t> dims,
         std::vector<int64_t> strides = {}, int64_t offset = 0,
         int64_t storageElems = -1)
      : dtype(t), shape(std::move(dims)) {
    if (storageElems < 0) {
      storageElems = 1 + offset;
      const std::vector<int64_t> st =
          strides.empty() ? host::contiguousStrides(shape) : strides;
      bool empty = false;
      for (size_t i = 0; i < shape.size(); ++i) {
        storageElems += (shape[i] - 1) * st[i];
        empty |= shape[i] == 0;
      }
      if (empty)
        storageElems = 0;
    }
    bytes.assign(static_cast<size_t>(std::max<int64_t>(storageElems, 1) *
                                     host::elementSize(t)),
                 0);
    std::vector<int64_t> storage{storageElems};
    handle =
        aclCreateTensor(shape.data(), shape.size(), static_cast<aclDataType>(t),
                        strides.empty() ? nullptr : strides.data(), offset,
                        ACL_FORMAT_ND, storage.data(), 1, bytes.data());
  }
  Tensor(const Tensor &) = delete;
  Tensor &operator=(const Tensor &) = delete;
  ~Tensor() { aclDestroyTensor(handle); }
};

using TensorPtr = std::unique_ptr<Tensor>;

TensorPtr make(DataType t, std::vector<int64_t> dims) {
  return std::make_unique<Tensor>(t, std::move(dims));
}

/// A compressed mask's shape over one stored element (strides 0): the
/// content is never read, only the shape is checked.
TensorPtr compressedMask(std::vector<int64_t> dims,
                         DataType t = DataType::Bool) {
  std::vector<int64_t> zero(dims.size(), 0);
  return std::make_unique<Tensor>(t, std::move(dims), std::move(zero), 0, 1);
}

const aclTensor *h(const TensorPtr &t) { return t ? t->handle : nullptr; }

struct IntArrayDeleter {
  void operator()(aclIntArray *a) const { aclDestroyIntArray(a); }
};
using IntArrayPtr = std::unique_ptr<aclIntArray, IntArrayDeleter>;

IntArrayPtr makeArray(const std::optional<std::vector<int64_t>> &v) {
  if (!v)
    return nullptr;
  return IntArrayPtr(aclCreateIntArray(v->data(), v->size()));
}

/// One call's arguments: every parameter of GetWorkspaceSize, starting from
/// a valid problem that `rebuild` makes from the sizes.
struct Case {
  DataType dtype = DataType::Float16;
  int64_t t1 = 8, t2 = 8, n1 = 2, n2 = 2, d = 16, dv = 16;

  TensorPtr query, queryRope, keyIn, keyInRope, value, dy, pse, dropMask,
      paddingMask, attenMask, softmaxMax, softmaxSum, softmaxIn, attentionIn,
      sinkIn, dqOut, dqRopeOut, dkOut, dkRopeOut, dvOut, dpseOut, dsinkOut;
  std::optional<std::vector<int64_t>> prefix, cq, ck, qStart, kvStart;
  double scale = 0.25, keepProb = 1.0;
  int64_t preTokens = 65536, nextTokens = 65536, headNum = 2, innerPrecise = 0,
          sparseMode = 0, pseType = 1;
  const char *layout = "TND";
  const char *softmaxInLayout = "same_as_input";
  bool passWorkspaceSize = true, passExecutor = true;

  // The arrays of the last args() call (they must outlive it).
  IntArrayPtr aPrefix, aCq, aCk, aQStart, aKvStart;

  Case() { rebuild(); }

  /// The required tensors for the current sizes and dtype, and one batch
  /// of all tokens (optional tensors are kept).
  void rebuild() {
    query = make(dtype, {t1, n1, d});
    keyIn = make(dtype, {t2, n2, d});
    value = make(dtype, {t2, n2, dv});
    dy = make(dtype, {t1, n1, dv});
    attentionIn = make(dtype, {t1, n1, dv});
    softmaxMax = make(DataType::Float, {t1, n1, 8});
    softmaxSum = make(DataType::Float, {t1, n1, 8});
    dqOut = make(dtype, {t1, n1, d});
    dkOut = make(dtype, {t2, n2, d});
    dvOut = make(dtype, {t2, n2, dv});
    headNum = n1;
    cq = std::vector<int64_t>{t1};
    ck = std::vector<int64_t>{t2};
  }

  /// Valid rope parts (bf16, Dr = 8) with the mask rope requires.
  void addRope(int64_t dr = 8) {
    dtype = DataType::BFloat16;
    rebuild();
    queryRope = make(DataType::BFloat16, {t1, n1, dr});
    keyInRope = make(DataType::BFloat16, {t2, n2, dr});
    dqRopeOut = make(DataType::BFloat16, {t1, n1, dr});
    dkRopeOut = make(DataType::BFloat16, {t2, n2, dr});
    attenMask = make(DataType::Bool, {t1, t2});
  }

  /// Sets the sequence arrays and resizes the tokens to their last values.
  void setSeqs(std::vector<int64_t> q, std::vector<int64_t> k) {
    t1 = q.back();
    t2 = k.back();
    rebuild();
    cq = std::move(q);
    ck = std::move(k);
  }

  std::vector<Tensor *> outputs() const {
    std::vector<Tensor *> outs;
    for (const TensorPtr *t :
         {&dqOut, &dqRopeOut, &dkOut, &dkRopeOut, &dvOut, &dpseOut, &dsinkOut})
      if (*t)
        outs.push_back(t->get());
    return outs;
  }
  void fillOutputs() {
    for (Tensor *t : outputs())
      std::fill(t->bytes.begin(), t->bytes.end(), kSentinel);
  }
  bool outputsUntouched() const {
    for (Tensor *t : outputs())
      for (unsigned char c : t->bytes)
        if (c != kSentinel)
          return false;
    return true;
  }

  /// The operator's argument struct (the handles are TensorViews).
  aclnn::FlashAttentionUnpaddingScoreGradV5Args args() {
    aPrefix = makeArray(prefix);
    aCq = makeArray(cq);
    aCk = makeArray(ck);
    aQStart = makeArray(qStart);
    aKvStart = makeArray(kvStart);
    aclnn::FlashAttentionUnpaddingScoreGradV5Args a;
    a.query = h(query);
    a.queryRope = h(queryRope);
    a.keyIn = h(keyIn);
    a.keyInRope = h(keyInRope);
    a.value = h(value);
    a.dy = h(dy);
    a.pseShiftOptional = h(pse);
    a.dropMaskOptional = h(dropMask);
    a.paddingMaskOptional = h(paddingMask);
    a.attenMaskOptional = h(attenMask);
    a.softmaxMaxOptional = h(softmaxMax);
    a.softmaxSumOptional = h(softmaxSum);
    a.softmaxInOptional = h(softmaxIn);
    a.attentionInOptional = h(attentionIn);
    a.sinkInOptional = h(sinkIn);
    a.prefixOptional = aPrefix.get();
    a.actualSeqQLenOptional = aCq.get();
    a.actualSeqKvLenOptional = aCk.get();
    a.qStartIdxOptional = aQStart.get();
    a.kvStartIdxOptional = aKvStart.get();
    a.scaleValue = scale;
    a.keepProb = keepProb;
    a.preTokens = preTokens;
    a.nextTokens = nextTokens;
    a.headNum = headNum;
    a.inputLayout = layout;
    a.innerPrecise = innerPrecise;
    a.sparseMode = sparseMode;
    a.pseType = pseType;
    a.softmaxInLayout = softmaxInLayout;
    a.dqOut = h(dqOut);
    a.dqRopeOut = h(dqRopeOut);
    a.dkOut = h(dkOut);
    a.dkRopeOut = h(dkRopeOut);
    a.dvOut = h(dvOut);
    a.dpseOut = h(dpseOut);
    a.dsinkOut = h(dsinkOut);
    return a;
  }

  struct Result {
    int32_t rc;
    std::string message;
    aclOpExecutor *executor;
    uint64_t workspaceSize;
  };

  /// Phase 1 through the C API.
  Result call() {
    aclnn::FlashAttentionUnpaddingScoreGradV5Args a = args();
    uint64_t ws = 12345;
    auto *garbage = reinterpret_cast<aclOpExecutor *>(uintptr_t{0x1});
    aclOpExecutor *exec = garbage;
    auto cast = [](const host::TensorView *t) {
      return static_cast<const aclTensor *>(t);
    };
    auto arr = [](const host::IntArray *v) {
      return static_cast<const aclIntArray *>(v);
    };
    const int32_t rc = aclnnFlashAttentionUnpaddingScoreGradV5GetWorkspaceSize(
        cast(a.query), cast(a.queryRope), cast(a.keyIn), cast(a.keyInRope),
        cast(a.value), cast(a.dy), cast(a.pseShiftOptional),
        cast(a.dropMaskOptional), cast(a.paddingMaskOptional),
        cast(a.attenMaskOptional), cast(a.softmaxMaxOptional),
        cast(a.softmaxSumOptional), cast(a.softmaxInOptional),
        cast(a.attentionInOptional), cast(a.sinkInOptional),
        arr(a.prefixOptional), arr(a.actualSeqQLenOptional),
        arr(a.actualSeqKvLenOptional), arr(a.qStartIdxOptional),
        arr(a.kvStartIdxOptional), scale, keepProb, preTokens, nextTokens,
        headNum, const_cast<char *>(layout), innerPrecise, sparseMode, pseType,
        const_cast<char *>(softmaxInLayout), cast(a.dqOut), cast(a.dqRopeOut),
        cast(a.dkOut), cast(a.dkRopeOut), cast(a.dvOut), cast(a.dpseOut),
        cast(a.dsinkOut), passWorkspaceSize ? &ws : nullptr,
        passExecutor ? &exec : nullptr);
    const char *m = aclGetRecentErrMsg();
    return {rc, m ? m : "", exec == garbage ? nullptr : exec, ws};
  }

  /// fag::validate directly.
  host::Status validate(Problem &p) { return ops::fag::validate(args(), p); }
};

/// Phase 1 must fail with `code`, a message containing `key`, a null
/// executor and every output byte untouched.
void expectRejected(Case &c, int32_t code, const std::string &key) {
  c.fillOutputs();
  Case::Result r = c.call();
  EXPECT_EQ(r.rc, code) << r.message;
  EXPECT_PRED_FORMAT2(hasSubstr, r.message, key);
  EXPECT_EQ(r.executor, nullptr);
  EXPECT_TRUE(c.outputsUntouched()) << "an output was written";
  if (r.rc == 0 && r.executor)
    aclDestroyAclOpExecutor(r.executor);
}

/// fag::validate must accept `c`; returns the Problem.
Problem expectValid(Case &c) {
  Problem p;
  host::Status s = c.validate(p);
  EXPECT_TRUE(s.isOk()) << s.code() << " " << s.message();
  return p;
}

//===----------------------------------------------------------------------===//
// The baseline
//===----------------------------------------------------------------------===//

// Referencing phase 1 also links the object file holding its registrar.
TEST(FlashAttentionScoreGradValidation, PhaseOneIsRegistered) {
  EXPECT_EQ(
      host::OpRegistry<aclnn::FlashAttentionUnpaddingScoreGradV5Args>::get(),
      &ops::prepareFlashAttentionScoreGrad);
}

TEST(FlashAttentionScoreGradValidation, BaselineIsValid) {
  Case c;
  c.scale = 0.1; // not exact in float
  Problem p = expectValid(c);
  EXPECT_FALSE(p.empty);
  EXPECT_EQ(p.dtype, DataType::Float16);
  EXPECT_EQ(p.t1, 8);
  EXPECT_EQ(p.t2, 8);
  EXPECT_EQ(p.n1, 2);
  EXPECT_EQ(p.n2, 2);
  EXPECT_EQ(p.g, 1);
  EXPECT_EQ(p.d, 16);
  EXPECT_EQ(p.dv, 16);
  EXPECT_EQ(p.dr, 0);
  EXPECT_EQ(p.bin, 1);
  EXPECT_EQ(p.b, 1);
  EXPECT_EQ(p.sqMax, 8);
  EXPECT_EQ(p.skvMax, 8);
  EXPECT_EQ(p.scale, 0.1f);
  EXPECT_EQ(p.keepProb, 1.0f);
  EXPECT_FALSE(p.dropout);
  EXPECT_EQ(p.mask, MaskForm::None);
  EXPECT_EQ(p.pse, PseForm::None);
  EXPECT_EQ(p.pseType, 1);
  EXPECT_FALSE(p.sink);
  EXPECT_TRUE(p.statsTnd);
  EXPECT_EQ(p.bandBatch, -1);
  EXPECT_FALSE(p.qRope || p.kRope || p.pseT || p.dropMask || p.attenMask ||
               p.sinkT || p.dqRope || p.dkRope || p.dsink);
  EXPECT_EQ(p.q.shape, (std::vector<int64_t>{8, 2, 16}));
  EXPECT_EQ(p.dvOut.shape, (std::vector<int64_t>{8, 2, 16}));
  EXPECT_EQ(p.m.dtype, DataType::Float);
}

//===----------------------------------------------------------------------===//
// Rules 1-3
//===----------------------------------------------------------------------===//

// spec_rule: fag-7.1
TEST(FlashAttentionScoreGradValidation, Rule1LayoutNull) {
  Case c;
  c.layout = nullptr;
  expectRejected(c, kNull, "inputLayout must not be null");
}

// spec_rule: fag-7.1
TEST(FlashAttentionScoreGradValidation, Rule1LayoutNotTnd) {
  for (const char *layout : {"BSND", "tnd", "TND ", ""}) {
    SCOPED_TRACE(layout);
    Case c;
    c.layout = layout;
    c.query.reset(); // rule 1 comes before rule 2
    expectRejected(c, kInvalid,
                   "inputLayout: \"" + std::string(layout) +
                       "\" is not supported");
  }
}

// spec_rule: fag-7.2
TEST(FlashAttentionScoreGradValidation, Rule2RequiredPointers) {
  const std::pair<TensorPtr Case::*, const char *> required[] = {
      {&Case::query, "query"},
      {&Case::keyIn, "keyIn"},
      {&Case::value, "value"},
      {&Case::dy, "dy"},
      {&Case::attentionIn, "attentionInOptional"},
      {&Case::dqOut, "dqOut"},
      {&Case::dkOut, "dkOut"},
      {&Case::dvOut, "dvOut"}};
  for (auto [member, name] : required) {
    SCOPED_TRACE(name);
    Case c;
    (c.*member).reset();
    c.headNum = 0; // rule 2 comes before rule 4
    expectRejected(c, kNull, std::string(name) + " must not be null");
  }
}

// spec_rule: fag-7.2
TEST(FlashAttentionScoreGradValidation, Rule2WorkspaceSizeAndExecutor) {
  Case c;
  c.passWorkspaceSize = false;
  expectRejected(c, kNull, "workspaceSize must not be null");
  Case e;
  e.passExecutor = false;
  e.fillOutputs();
  Case::Result r = e.call();
  EXPECT_EQ(r.rc, kNull);
  EXPECT_PRED_FORMAT2(hasSubstr, r.message, "executor must not be null");
  EXPECT_TRUE(e.outputsUntouched());
}

// spec_rule: fag-7.3
TEST(FlashAttentionScoreGradValidation, Rule3EmptyProblemSucceeds) {
  Case c;
  c.t1 = c.t2 = 0;
  c.rebuild();
  c.cq = c.ck = std::vector<int64_t>{0};
  c.headNum = -3; // rule 3 comes before every later rule
  c.softmaxMax.reset();
  c.dpseOut = make(DataType::Float16, {0});
  c.fillOutputs();
  Case::Result r = c.call();
  ASSERT_EQ(r.rc, 0) << r.message;
  EXPECT_EQ(r.workspaceSize, 0u);
  ASSERT_NE(r.executor, nullptr);
  EXPECT_EQ(
      aclnnFlashAttentionUnpaddingScoreGradV5(nullptr, 0, r.executor, nullptr),
      0);
  EXPECT_TRUE(c.outputsUntouched());

  Problem p = expectValid(c);
  EXPECT_TRUE(p.empty);
}

// spec_rule: fag-7.3
TEST(FlashAttentionScoreGradValidation, Rule3NonEmptyDpseIsNotEmpty) {
  Case c;
  c.t1 = c.t2 = 0;
  c.rebuild();
  c.cq = c.ck = std::vector<int64_t>{0};
  c.headNum = 0;
  c.dpseOut = make(DataType::Float16, {1, 2, 1, 1});
  expectRejected(c, kInvalid, "headNum: must be > 0, got 0");
}

//===----------------------------------------------------------------------===//
// Rules 4-6
//===----------------------------------------------------------------------===//

// spec_rule: fag-7.4
TEST(FlashAttentionScoreGradValidation, Rule4HeadNumNotPositive) {
  for (int64_t n : {0, -2}) {
    Case c;
    c.headNum = n;
    expectRejected(c, kInvalid,
                   "headNum: must be > 0, got " + std::to_string(n));
  }
}

// spec_rule: fag-7.5
TEST(FlashAttentionScoreGradValidation, Rule5RankOfRequiredTensors) {
  const std::pair<TensorPtr Case::*, const char *> tensors[] = {
      {&Case::query, "query"},
      {&Case::keyIn, "keyIn"},
      {&Case::value, "value"},
      {&Case::dy, "dy"},
      {&Case::attentionIn, "attentionInOptional"},
      {&Case::dqOut, "dqOut"},
      {&Case::dkOut, "dkOut"},
      {&Case::dvOut, "dvOut"}};
  for (auto [member, name] : tensors) {
    SCOPED_TRACE(name);
    Case c;
    c.*member = make(c.dtype, {8, 2, 16, 1});
    expectRejected(c, kInvalid,
                   std::string(name) + ": rank must be 3 (TND), got 4");
    c.*member = make(c.dtype, {8, 32});
    expectRejected(c, kInvalid,
                   std::string(name) + ": rank must be 3 (TND), got 2");
  }
}

// spec_rule: fag-7.5
TEST(FlashAttentionScoreGradValidation, Rule5RankOfRopeTensors) {
  Case c;
  c.addRope();
  c.queryRope = make(DataType::BFloat16, {8, 16});
  expectRejected(c, kInvalid, "queryRope: rank must be 3 (TND), got 2");
  Case k;
  k.addRope();
  k.keyInRope = make(DataType::BFloat16, {8, 2, 8, 1});
  expectRejected(k, kInvalid, "keyInRope: rank must be 3 (TND), got 4");
  Case o;
  o.addRope();
  o.dkRopeOut = make(DataType::BFloat16, {8, 16});
  expectRejected(o, kInvalid, "dkRopeOut: rank must be 3 (TND), got 2");
}

// spec_rule: fag-7.5
TEST(FlashAttentionScoreGradValidation, Rule5SinkRanks) {
  Case c;
  c.sinkIn = make(DataType::Float, {2, 1});
  c.dsinkOut = make(DataType::Float, {2});
  expectRejected(c, kInvalid, "sinkInOptional: rank must be 1, got 2");
  Case d;
  d.sinkIn = make(DataType::Float, {2});
  d.dsinkOut = make(DataType::Float, {1, 2});
  expectRejected(d, kInvalid, "dsinkOut: rank must be 1, got 2");
}

// spec_rule: fag-7.6
TEST(FlashAttentionScoreGradValidation, Rule6KeyHeadDim) {
  Case c;
  c.keyIn = make(c.dtype, {8, 2, 8});
  expectRejected(
      c, kInvalid,
      "keyIn: head dim (shape[2]) 8 must equal query's head dim D = 16");
}

// spec_rule: fag-7.6
TEST(FlashAttentionScoreGradValidation, Rule6ValueHeadDimAboveD) {
  Case c;
  c.dv = 32;
  c.rebuild();
  c.dv = 16;
  c.dqOut = make(c.dtype, {8, 2, 16});
  expectRejected(c, kInvalid,
                 "value: head dim Dv (shape[2]) 32 must not exceed D = 16");
}

//===----------------------------------------------------------------------===//
// Rule 7: rope
//===----------------------------------------------------------------------===//

// spec_rule: fag-7.7
TEST(FlashAttentionScoreGradValidation, Rule7RopeValid) {
  Case c;
  c.addRope();
  Problem p = expectValid(c);
  EXPECT_EQ(p.dr, 8);
  EXPECT_TRUE(p.qRope && p.kRope && p.dqRope && p.dkRope);
  EXPECT_EQ(p.mask, MaskForm::Shared);
}

// spec_rule: fag-7.7
TEST(FlashAttentionScoreGradValidation, Rule7RopeOnlyOneGiven) {
  Case c;
  c.addRope();
  c.keyInRope.reset();
  expectRejected(c, kNull,
                 "keyInRope must not be null when queryRope is given");
  Case k;
  k.addRope();
  k.queryRope = make(DataType::BFloat16, {}); // 0-dim: absent
  expectRejected(k, kNull,
                 "queryRope must not be null when keyInRope is given");
}

// spec_rule: fag-7.7
TEST(FlashAttentionScoreGradValidation, Rule7RopeDimAboveD) {
  Case c;
  c.addRope(24);
  expectRejected(c, kInvalid, "queryRope: rope dim 24 must not exceed D = 16");
}

// spec_rule: fag-7.7
TEST(FlashAttentionScoreGradValidation, Rule7RopeNeedsBf16) {
  Case c;
  c.addRope();
  c.dtype = DataType::Float16;
  c.rebuild();
  expectRejected(c, kInvalid,
                 "query: dtype FLOAT16 must be BFLOAT16 when rope is given");
  Case r;
  r.addRope();
  r.keyInRope = make(DataType::Float16, {8, 2, 8});
  expectRejected(
      r, kInvalid,
      "keyInRope: dtype FLOAT16 must be BFLOAT16 when rope is given");
}

// spec_rule: fag-7.7
TEST(FlashAttentionScoreGradValidation, Rule7RopeSparseMode6) {
  Case c;
  c.addRope();
  c.sparseMode = 6;
  expectRejected(c, kInvalid,
                 "sparseMode: 6 (prefix) is not supported with rope");
}

// spec_rule: fag-7.7
TEST(FlashAttentionScoreGradValidation, Rule7RopeNeedsMask) {
  Case c;
  c.addRope();
  c.attenMask.reset();
  expectRejected(c, kNull,
                 "attenMaskOptional must not be null when rope is given");
}

// spec_rule: fag-7.7
TEST(FlashAttentionScoreGradValidation, Rule7RopeRejectsPse) {
  Case c;
  c.addRope();
  c.pse = make(DataType::BFloat16, {2 * 8});
  expectRejected(c, kInvalid,
                 "pseShiftOptional: must be absent when rope is given");
}

// spec_rule: fag-7.7
TEST(FlashAttentionScoreGradValidation, Rule7RopeRejectsDropMask) {
  Case c;
  c.addRope();
  c.dropMask = make(DataType::UInt8, {16});
  expectRejected(c, kInvalid,
                 "dropMaskOptional: must be absent when rope is given");
}

// spec_rule: fag-7.7
TEST(FlashAttentionScoreGradValidation, Rule7RopeRejectsDropout) {
  Case c;
  c.addRope();
  c.keepProb = 0.9;
  expectRejected(c, kInvalid, "keepProb: 0.9 must be 1 when rope is given");
}

// spec_rule: fag-7.7
TEST(FlashAttentionScoreGradValidation, Rule7RopeDims) {
  Case c;
  c.addRope();
  c.keyInRope = make(DataType::BFloat16, {8, 2, 16});
  expectRejected(c, kInvalid,
                 "keyInRope: rope dim 16 must equal queryRope's rope dim 8");
  Case m;
  m.addRope(4);
  expectRejected(m, kInvalid, "queryRope: rope dim 4 must be a multiple of 8");
  Case d;
  d.d = d.dv = 12;
  d.addRope();
  expectRejected(
      d, kInvalid,
      "query: head dim D = 12 must be a multiple of 8 when rope is given");
}

// spec_rule: fag-7.7
TEST(FlashAttentionScoreGradValidation, Rule7RopeOutputsNull) {
  Case c;
  c.addRope();
  c.dqRopeOut.reset();
  expectRejected(c, kNull, "dqRopeOut must not be null when rope is given");
  Case k;
  k.addRope();
  k.dkRopeOut.reset();
  expectRejected(k, kNull, "dkRopeOut must not be null when rope is given");
}

// spec_rule: fag-7.7
TEST(FlashAttentionScoreGradValidation,
     Rule7RopeOutputsOfShapeZeroAreNotWritten) {
  Case c;
  c.addRope();
  c.dqRopeOut = make(DataType::BFloat16, {0});
  Problem p = expectValid(c);
  EXPECT_FALSE(p.dqRope);
  EXPECT_TRUE(p.dkRope);
}

//===----------------------------------------------------------------------===//
// Rules 8-9: dtypes and shapes
//===----------------------------------------------------------------------===//

// spec_rule: fag-7.8
TEST(FlashAttentionScoreGradValidation, Rule8QueryDtype) {
  for (DataType t : {DataType::Int32, DataType::Double, DataType::Int8}) {
    Case c;
    c.dtype = t;
    c.rebuild();
    expectRejected(c, kInvalid,
                   "query: dtype " + std::string(host::dataTypeName(t)) +
                       " is not supported");
  }
}

// spec_rule: fag-7.8
TEST(FlashAttentionScoreGradValidation, Rule8OtherDtypesMustEqualQuery) {
  const std::pair<TensorPtr Case::*, const char *> tensors[] = {
      {&Case::keyIn, "keyIn"}, {&Case::value, "value"},
      {&Case::dy, "dy"},       {&Case::attentionIn, "attentionInOptional"},
      {&Case::dqOut, "dqOut"}, {&Case::dkOut, "dkOut"},
      {&Case::dvOut, "dvOut"}};
  for (auto [member, name] : tensors) {
    SCOPED_TRACE(name);
    Case c;
    c.*member = make(DataType::Int32, (c.*member)->shape);
    expectRejected(c, kInvalid,
                   std::string(name) +
                       ": dtype INT32 must equal query's dtype FLOAT16");
  }
  Case r;
  r.addRope();
  r.dqRopeOut = make(DataType::Float16, {8, 2, 8});
  expectRejected(r, kInvalid,
                 "dqRopeOut: dtype FLOAT16 must equal query's dtype BFLOAT16");
}

// spec_rule: fag-7.9
TEST(FlashAttentionScoreGradValidation, Rule9HeadNumMustMatch) {
  Case c;
  c.headNum = 4;
  expectRejected(c, kInvalid, "headNum: 4 must equal query.shape[1] (N1 = 2)");
}

// spec_rule: fag-7.9
TEST(FlashAttentionScoreGradValidation, Rule9KvHeads) {
  Case z;
  z.n2 = 0;
  z.rebuild();
  expectRejected(z, kInvalid, "keyIn: kv head count N2 (shape[1]) must be > 0");
  Case c;
  c.n1 = 3;
  c.rebuild();
  expectRejected(
      c, kInvalid,
      "keyIn: query heads N1 = 3 must be a multiple of kv heads N2 = 2");
}

// spec_rule: fag-7.9
TEST(FlashAttentionScoreGradValidation, Rule9TooManyHeads) {
  Case c;
  c.t1 = c.t2 = 1;
  c.n1 = 257;
  c.n2 = 1;
  c.rebuild();
  expectRejected(c, kInvalid, "query: head count N1 = 257 must be <= 256");
}

// spec_rule: fag-7.9
TEST(FlashAttentionScoreGradValidation, Rule9HeadDimRange) {
  for (int64_t d : {0, 769}) {
    Case c;
    c.t1 = c.t2 = 1;
    c.d = c.dv = d;
    c.rebuild();
    c.dpseOut = make(c.dtype, {1}); // D = 0 alone would be an empty problem
    expectRejected(c, kInvalid,
                   "query: head dim D = " + std::to_string(d) +
                       " must be in [1, 768]");
  }
}

// spec_rule: fag-7.9
TEST(FlashAttentionScoreGradValidation, Rule9KeyValueAgree) {
  Case c;
  c.value = make(c.dtype, {7, 2, 16});
  expectRejected(
      c, kInvalid,
      "value: shape [7, 2, 16] must agree with keyIn's [T2, N2] = [8, 2]");
}

// spec_rule: fag-7.9
TEST(FlashAttentionScoreGradValidation, Rule9DyAndAttentionInAgree) {
  Case c;
  c.dy = make(c.dtype, {8, 1, 16});
  expectRejected(c, kInvalid,
                 "dy: shape [8, 1, 16] must be [T1, N1, Dv] = [8, 2, 16]");
  Case o;
  o.attentionIn = make(o.dtype, {8, 2, 8});
  expectRejected(
      o, kInvalid,
      "attentionInOptional: shape [8, 2, 8] must be [T1, N1, Dv] = [8, 2, 16]");
}

// spec_rule: fag-7.9
TEST(FlashAttentionScoreGradValidation, Rule9RopeInputsAgree) {
  Case c;
  c.addRope();
  c.queryRope = make(DataType::BFloat16, {7, 2, 8});
  expectRejected(c, kInvalid,
                 "queryRope: shape [7, 2, 8] must agree with query's [T1, N1]");
  Case k;
  k.addRope();
  k.keyInRope = make(DataType::BFloat16, {8, 1, 8});
  expectRejected(k, kInvalid,
                 "keyInRope: shape [8, 1, 8] must agree with keyIn's [T2, N2]");
}

// spec_rule: fag-7.9
TEST(FlashAttentionScoreGradValidation, Rule9OutputShapes) {
  const std::pair<TensorPtr Case::*, const char *> outs[] = {
      {&Case::dqOut,
       "dqOut: shape [8, 2, 8] must equal query's shape [8, 2, 16]"},
      {&Case::dkOut,
       "dkOut: shape [8, 2, 8] must equal keyIn's shape [8, 2, 16]"},
      {&Case::dvOut,
       "dvOut: shape [8, 2, 8] must equal value's shape [8, 2, 16]"}};
  for (auto [member, message] : outs) {
    Case c;
    c.*member = make(c.dtype, {8, 2, 8});
    expectRejected(c, kInvalid, message);
  }
  Case r;
  r.addRope();
  r.dkRopeOut = make(DataType::BFloat16, {8, 2, 16});
  expectRejected(
      r, kInvalid,
      "dkRopeOut: shape [8, 2, 16] must equal keyInRope's shape [8, 2, 8]");
}

//===----------------------------------------------------------------------===//
// Rule 10: the sequence arrays
//===----------------------------------------------------------------------===//

// spec_rule: fag-7.10
TEST(FlashAttentionScoreGradValidation, Rule10ArraysNull) {
  Case c;
  c.cq.reset();
  expectRejected(c, kInvalid, "actualSeqQLenOptional: must not be null");
  Case k;
  k.ck.reset();
  expectRejected(k, kInvalid, "actualSeqKvLenOptional: must not be null");
}

// spec_rule: fag-7.10
TEST(FlashAttentionScoreGradValidation, Rule10ArraysDifferentLengths) {
  Case c;
  c.ck = std::vector<int64_t>{4, 8};
  expectRejected(c, kInvalid,
                 "actualSeqKvLenOptional: length 2 must equal "
                 "actualSeqQLenOptional's length 1");
}

// spec_rule: fag-7.10
TEST(FlashAttentionScoreGradValidation, Rule10ArraysEmpty) {
  Case c;
  c.cq = c.ck = std::vector<int64_t>{};
  expectRejected(c, kInvalid, "actualSeqQLenOptional: must not be empty");
}

// spec_rule: fag-7.10
TEST(FlashAttentionScoreGradValidation, Rule10NegativeValue) {
  Case c;
  c.cq = std::vector<int64_t>{-1, 8};
  c.ck = std::vector<int64_t>{4, 8};
  expectRejected(
      c, kInvalid,
      "actualSeqQLenOptional: values must not be negative (entry 0 is -1)");
}

// spec_rule: fag-7.10
TEST(FlashAttentionScoreGradValidation, Rule10DecreasingValues) {
  Case c;
  c.cq = std::vector<int64_t>{2, 4, 7, 5};
  c.ck = std::vector<int64_t>{2, 4, 6, 8};
  expectRejected(
      c, kInvalid,
      "actualSeqQLenOptional: values must not decrease (entry 3 is 5 after 7)");
  Case k;
  k.cq = std::vector<int64_t>{4, 8};
  k.ck = std::vector<int64_t>{6, 3};
  expectRejected(k, kInvalid,
                 "actualSeqKvLenOptional: values must not decrease (entry 1 is "
                 "3 after 6)");
}

// spec_rule: fag-7.10
TEST(FlashAttentionScoreGradValidation, Rule10LastValueAboveTokens) {
  Case c;
  c.cq = std::vector<int64_t>{9};
  expectRejected(c, kInvalid,
                 "actualSeqQLenOptional: last value 9 must not exceed T1 = 8");
  Case k;
  k.ck = std::vector<int64_t>{3, 9};
  k.cq = std::vector<int64_t>{3, 8};
  expectRejected(k, kInvalid,
                 "actualSeqKvLenOptional: last value 9 must not exceed T2 = 8");
}

//===----------------------------------------------------------------------===//
// Rule 11: sparse mode, mask, tokens
//===----------------------------------------------------------------------===//

// spec_rule: fag-7.11
TEST(FlashAttentionScoreGradValidation, Rule11SparseModeOutOfSet) {
  Case c;
  c.sparseMode = 5;
  expectRejected(c, kInvalid,
                 "sparseMode: 5 (prefix, non-compressed) is not supported");
  for (int64_t mode : {-1, 9}) {
    Case o;
    o.sparseMode = mode;
    expectRejected(o, kInvalid,
                   "sparseMode: " + std::to_string(mode) +
                       " is not one of 0, 1, 2, 3, 4, 6, 7, 8");
  }
}

// spec_rule: fag-7.11
TEST(FlashAttentionScoreGradValidation, Rule11MaskDtype) {
  Case c;
  c.attenMask = make(DataType::Float16, {8, 8});
  expectRejected(c, kInvalid,
                 "attenMaskOptional: dtype FLOAT16 is not supported (expected "
                 "BOOL or UINT8)");
}

// spec_rule: fag-7.11
TEST(FlashAttentionScoreGradValidation, Rule11ExplicitMaskShape) {
  const std::vector<std::vector<int64_t>> bad = {{8, 7},          {8, 8, 1},
                                                 {2, 1, 8, 8},    {1, 3, 8, 8},
                                                 {1, 1, 1, 8, 8}, {2048, 2048}};
  for (const auto &shape : bad) {
    SCOPED_TRACE(host::shapeToString(shape));
    Case c;
    c.attenMask = make(DataType::UInt8, shape);
    expectRejected(c, kInvalid,
                   "attenMaskOptional: shape " + host::shapeToString(shape) +
                       " does not fit sparseMode 0");
  }
}

// spec_rule: fag-7.11
TEST(FlashAttentionScoreGradValidation, Rule11CompressedMaskShape) {
  const std::vector<std::pair<int64_t, std::vector<int64_t>>> bad = {
      {2, {8, 8}},
      {3, {2048, 1024}},
      {4, {1, 2048, 2048}},
      {7, {2, 1, 2048, 2048}},
      {8, {1, 3, 2048, 2048}},
      {6, {2048, 2048}},
      {2, {3072, 2048}}};
  for (const auto &[mode, shape] : bad) {
    SCOPED_TRACE(mode);
    Case c;
    c.sparseMode = mode;
    c.attenMask = compressedMask(shape);
    expectRejected(c, kInvalid,
                   "attenMaskOptional: shape " + host::shapeToString(shape) +
                       " does not fit sparseMode " + std::to_string(mode));
  }
}

// spec_rule: fag-7.11
TEST(FlashAttentionScoreGradValidation, Rule11TokensMode0) {
  // Two batches: (sq, skv) = (3, 5), (5, 3).
  auto make0 = [](int64_t pre, int64_t nxt) {
    auto c = std::make_unique<Case>();
    c->setSeqs({3, 8}, {5, 8});
    c->attenMask = make(DataType::Bool, {5, 5});
    c->preTokens = pre;
    c->nextTokens = nxt;
    return c;
  };
  auto c = make0(-4, 10); // -pre = 4 > skv_1 = 3
  expectRejected(
      *c, kInvalid,
      "preTokens: -4 must be >= -skv = -3 of batch 1 in sparseMode 0");
  c = make0(10, -4); // -nxt = 4 > sq_0 = 3
  expectRejected(
      *c, kInvalid,
      "nextTokens: -4 must be >= -sq = -3 of batch 0 in sparseMode 0");
  c = make0(2, -2);
  expectRejected(*c, kInvalid,
                 "preTokens + nextTokens: 2 + -2 must be > 0 in sparseMode 0");
  c = make0(-3, 4); // at the bounds
  expectValid(*c);
  // Without a mask the tokens are not checked (rule 0).
  c = make0(-100, -100);
  c->attenMask.reset();
  expectValid(*c);
}

// spec_rule: fag-7.11
TEST(FlashAttentionScoreGradValidation, Rule11TokensMode4) {
  auto make4 = [](int64_t pre, int64_t nxt) {
    auto c = std::make_unique<Case>();
    c->setSeqs({3, 8}, {5, 8});
    c->sparseMode = 4;
    c->attenMask = compressedMask({2048, 2048});
    c->preTokens = pre;
    c->nextTokens = nxt;
    return c;
  };
  auto c = make4(-4, 10); // -pre = 4 > sq_0 = 3
  expectRejected(
      *c, kInvalid,
      "preTokens: -4 must be >= -sq = -3 of batch 0 in sparseMode 4");
  c = make4(10, -4); // -nxt = 4 > skv_1 = 3
  expectRejected(
      *c, kInvalid,
      "nextTokens: -4 must be >= -skv = -3 of batch 1 in sparseMode 4");
  c = make4(0, 0);
  expectRejected(*c, kInvalid,
                 "preTokens + nextTokens: 0 + 0 must be > 0 in sparseMode 4");
  c = make4(std::numeric_limits<int64_t>::min(),
            std::numeric_limits<int64_t>::min());
  expectRejected(*c, kInvalid, "preTokens: ");
  c = make4(-3, 4);
  expectValid(*c);
}

// spec_rule: fag-7.11
TEST(FlashAttentionScoreGradValidation, Rule11TokensModes7And8BandBatchOnly) {
  // Batches (sq, skv) = (2, 2), (6, 3), (0, 3): the band batch is 1 in
  // mode 7 (the last with sq > 0) and 0 in mode 8 (the first).
  for (int64_t mode : {7, 8}) {
    SCOPED_TRACE(mode);
    Case c;
    c.setSeqs({2, 8, 8}, {2, 5, 8});
    c.sparseMode = mode;
    c.attenMask = compressedMask({2048, 2048});
    const int64_t beta = mode == 7 ? 1 : 0;
    const int64_t sqBeta = mode == 7 ? 6 : 2, skvBeta = mode == 7 ? 3 : 2;
    c.preTokens = -sqBeta - 1;
    c.nextTokens = 100;
    expectRejected(c, kInvalid,
                   "preTokens: " + std::to_string(-sqBeta - 1) +
                       " must be >= -sq = -" + std::to_string(sqBeta) +
                       " of batch " + std::to_string(beta));
    c.preTokens = 100;
    c.nextTokens = -skvBeta - 1;
    expectRejected(c, kInvalid,
                   "nextTokens: " + std::to_string(-skvBeta - 1) +
                       " must be >= -skv = -" + std::to_string(skvBeta) +
                       " of batch " + std::to_string(beta));
    c.preTokens = 1;
    c.nextTokens = -1;
    expectRejected(c, kInvalid,
                   "preTokens + nextTokens: 1 + -1 must be > 0 in sparseMode " +
                       std::to_string(mode));
  }
}

// spec_rule: fag-7.11
TEST(FlashAttentionScoreGradValidation, Rule11TokensNotCheckedInModes1236) {
  for (int64_t mode : {1, 2, 3, 6}) {
    SCOPED_TRACE(mode);
    Case c;
    c.sparseMode = mode;
    c.attenMask = mode == 1   ? make(DataType::Bool, {8, 8})
                  : mode == 6 ? compressedMask({3072, 2048})
                              : compressedMask({2048, 2048});
    c.prefix = std::vector<int64_t>{0};
    c.preTokens = -100;
    c.nextTokens = -100;
    expectValid(c);
  }
}

//===----------------------------------------------------------------------===//
// Rule 12: position bias
//===----------------------------------------------------------------------===//

// spec_rule: fag-7.12
TEST(FlashAttentionScoreGradValidation, Rule12PseTypeRange) {
  for (int64_t t : {-1, 4}) {
    Case c;
    c.pseType = t;
    expectRejected(c, kInvalid,
                   "pseType: " + std::to_string(t) + " must be in [0, 3]");
  }
}

// spec_rule: fag-7.12
TEST(FlashAttentionScoreGradValidation, Rule12PseAbsentNeedsType1) {
  for (int64_t t : {0, 2, 3}) {
    Case c;
    c.pseType = t;
    c.pse = make(DataType::Float, {}); // 0-dim: absent
    expectRejected(c, kInvalid,
                   "pseType: " + std::to_string(t) + " needs pseShiftOptional");
  }
}

// spec_rule: fag-7.12
TEST(FlashAttentionScoreGradValidation, Rule12PseDtype) {
  Case c;
  c.pse = make(DataType::Float, {2 * 8});
  expectRejected(
      c, kInvalid,
      "pseShiftOptional: dtype FLOAT must be FLOAT16 (query's dtype");
  Case s;
  s.pseType = 2;
  s.pse = make(DataType::Float16, {2});
  expectRejected(s, kInvalid,
                 "pseShiftOptional: dtype FLOAT16 must be FLOAT (slopes");
}

// spec_rule: fag-7.12
TEST(FlashAttentionScoreGradValidation, Rule12PseShape) {
  Case c;
  c.pse = make(DataType::Float16, {17});
  expectRejected(c, kInvalid,
                 "pseShiftOptional: shape [17] is not supported for pseType 1");
  Case a;
  a.pseType = 0;
  a.sparseMode = 2;
  a.attenMask = compressedMask({2048, 2048});
  a.pse = make(DataType::Float16, {1, 2, 1024, 9});
  expectRejected(a, kInvalid,
                 "pseShiftOptional: shape [1, 2, 1024, 9] is not supported");
  Case s;
  s.pseType = 3;
  s.pse = make(DataType::Float, {3});
  expectRejected(s, kInvalid,
                 "pseShiftOptional: shape [3] is not supported for pseType 3");
}

// spec_rule: fag-7.12
TEST(FlashAttentionScoreGradValidation, Rule12AlibiNeedsCausalMask) {
  Case none;
  none.pse = make(DataType::Float16, {1, 2, 1024, 8});
  expectRejected(none, kInvalid,
                 "needs a causal mask (an attenMask in sparseMode 0, 2, 3, 4 "
                 "or 8), got no mask");
  Case m1;
  m1.sparseMode = 1;
  m1.attenMask = make(DataType::Bool, {8, 8});
  m1.pse = make(DataType::Float16, {1, 2, 1024, 8});
  expectRejected(m1, kInvalid, "got sparseMode 1");
  Case m6;
  m6.sparseMode = 6;
  m6.attenMask = compressedMask({3072, 2048});
  m6.prefix = std::vector<int64_t>{0};
  m6.pse = make(DataType::Float16, {1, 2, 1024, 8});
  expectRejected(m6, kInvalid, "not supported in sparseMode 6");
  Case m0;
  m0.attenMask = make(DataType::Bool, {8, 8});
  m0.preTokens = 8;
  m0.nextTokens = 1;
  m0.pse = make(DataType::Float16, {1, 2, 1024, 8});
  expectRejected(m0, kInvalid,
                 "needs a causal band in sparseMode 0 (preTokens >= Sqmax = 8 "
                 "and nextTokens = 0)");
}

// spec_rule: fag-7.12
TEST(FlashAttentionScoreGradValidation, Rule12AlibiNeedsEqualLengths) {
  Case c;
  c.setSeqs({4, 8}, {3, 8});
  c.sparseMode = 3;
  c.attenMask = compressedMask({2048, 2048});
  c.pse = make(DataType::Float16, {2, 2, 1024, 5});
  expectRejected(c, kInvalid,
                 "needs sq_b = skv_b in every batch (batch 0 has 4 and 3)");
}

// spec_rule: fag-7.12
TEST(FlashAttentionScoreGradValidation, Rule12PseWithEmptyQueryBatch) {
  Case c;
  c.setSeqs({0, 8}, {3, 8});
  c.pseType = 2;
  c.pse = make(DataType::Float, {2});
  expectRejected(
      c, kInvalid,
      "not supported when a batch has no query tokens (batch 0 has sq = 0)");
}

// spec_rule: fag-7.12
TEST(FlashAttentionScoreGradValidation, Rule12PseInMode7) {
  Case c;
  c.sparseMode = 7;
  c.attenMask = compressedMask({2048, 2048});
  c.pseType = 3;
  c.pse = make(DataType::Float, {2});
  expectRejected(c, kInvalid,
                 "pseShiftOptional: not supported in sparseMode 7");
}

//===----------------------------------------------------------------------===//
// Rules 13-16
//===----------------------------------------------------------------------===//

// spec_rule: fag-7.13
TEST(FlashAttentionScoreGradValidation, Rule13KeepProbRange) {
  for (double kp : {0.0, -0.5, 1.5, std::nan("")}) {
    SCOPED_TRACE(kp);
    Case c;
    c.keepProb = kp;
    expectRejected(c, kInvalid, "must be in (0, 1]");
  }
  Case tiny;
  tiny.keepProb = 1e-300;
  tiny.dropMask = make(DataType::UInt8, {16});
  expectRejected(tiny, kInvalid, "rounds to 0 in float32");
}

// spec_rule: fag-7.13
TEST(FlashAttentionScoreGradValidation, Rule13DropMaskMissing) {
  Case c;
  c.keepProb = 0.9;
  expectRejected(c, kNull,
                 "dropMaskOptional must not be null when keepProb < 1");
  c.dropMask = make(DataType::UInt8, {}); // 0-dim: absent
  expectRejected(c, kNull,
                 "dropMaskOptional must not be null when keepProb < 1");
}

// spec_rule: fag-7.13
TEST(FlashAttentionScoreGradValidation, Rule13DropMaskDtypeRankLength) {
  Case c;
  c.keepProb = 0.9;
  c.dropMask = make(DataType::Bool, {16});
  expectRejected(c, kInvalid, "dropMaskOptional: dtype BOOL must be UINT8");
  c.dropMask = make(DataType::UInt8, {4, 4});
  expectRejected(c, kInvalid, "dropMaskOptional: rank must be 1, got 2");
  // N1 * 8 * 8 = 128 bits = 16 bytes.
  c.dropMask = make(DataType::UInt8, {15});
  expectRejected(c, kInvalid,
                 "dropMaskOptional: 15 bytes are too short, N1 * sum sq_b * "
                 "skv_b = 128 bits need 16");
  // (sq, skv) = (3, 5), (5, 3): 2 * 30 = 60 bits = 8 bytes (rounded up).
  Case v;
  v.setSeqs({3, 8}, {5, 8});
  v.keepProb = 0.5;
  v.dropMask = make(DataType::UInt8, {7});
  expectRejected(v, kInvalid, "60 bits need 8");
  v.dropMask = make(DataType::UInt8, {8});
  Problem p = expectValid(v);
  EXPECT_TRUE(p.dropout);
  EXPECT_EQ(p.keepProb, 0.5f);
  EXPECT_TRUE(p.dropMask);
}

// spec_rule: fag-7.14
TEST(FlashAttentionScoreGradValidation, Rule14StatisticsMissing) {
  Case c;
  c.softmaxMax.reset();
  c.softmaxSum.reset();
  expectRejected(c, kNull, "softmaxMaxOptional must not be null");
  Case s;
  s.softmaxSum = make(DataType::Float, {}); // 0-dim: absent
  expectRejected(s, kNull, "softmaxSumOptional must not be null");
}

// spec_rule: fag-7.14
TEST(FlashAttentionScoreGradValidation, Rule14StatisticsDtypeAndShape) {
  Case c;
  c.softmaxMax = make(DataType::Float16, {8, 2, 8});
  expectRejected(c, kInvalid,
                 "softmaxMaxOptional: dtype FLOAT16 must be FLOAT");
  Case r;
  r.softmaxSum = make(DataType::Float, {8, 16});
  expectRejected(r, kInvalid, "softmaxSumOptional: rank must be 3, got 2");
  Case s;
  s.softmaxSum = make(DataType::Float, {8, 2, 1});
  expectRejected(
      s, kInvalid,
      "softmaxSumOptional: shape [8, 2, 1] must be [T1, N1, 8] = [8, 2, 8]");
  Case n;
  n.softmaxMax =
      make(DataType::Float, {2, 8, 8}); // legacy [N, T, 8] is not accepted
  expectRejected(n, kInvalid,
                 "softmaxMaxOptional: shape [2, 8, 8] must be [T1, N1, 8]");
}

// spec_rule: fag-7.15
TEST(FlashAttentionScoreGradValidation, Rule15Sink) {
  Case c;
  c.sinkIn = make(DataType::Float16, {2});
  expectRejected(c, kInvalid, "sinkInOptional: dtype FLOAT16 must be FLOAT");
  Case l;
  l.sinkIn = make(DataType::Float, {3});
  expectRejected(l, kInvalid, "sinkInOptional: shape [3] must be [N1] = [2]");
  Case r; // rank 2 without dsinkOut gets past rule 5
  r.sinkIn = make(DataType::Float, {1, 2});
  expectRejected(r, kInvalid,
                 "sinkInOptional: shape [1, 2] must be [N1] = [2]");
}

// spec_rule: fag-7.15
TEST(FlashAttentionScoreGradValidation, Rule15DsinkOut) {
  Case c;
  c.dsinkOut = make(DataType::Float16, {2});
  expectRejected(c, kInvalid, "dsinkOut: dtype FLOAT16 must be FLOAT");
  Case l;
  l.sinkIn = make(DataType::Float, {2});
  l.dsinkOut = make(DataType::Float, {3});
  expectRejected(l, kInvalid, "dsinkOut: shape [3] must be [N1] = [2]");
}

// spec_rule: fag-7.15
TEST(FlashAttentionScoreGradValidation, Rule15SinkValid) {
  Case c;
  c.sinkIn = make(DataType::Float, {2});
  c.dsinkOut = make(DataType::Float, {2});
  Problem p = expectValid(c);
  EXPECT_TRUE(p.sink);
  EXPECT_TRUE(p.sinkT && p.dsink);
  c.dsinkOut = make(DataType::Int32, {0}); // not written
  p = expectValid(c);
  EXPECT_FALSE(p.dsink);
  c.sinkIn.reset(); // dθ = 0 is written without a sink
  c.dsinkOut = make(DataType::Float, {2});
  p = expectValid(c);
  EXPECT_FALSE(p.sink);
  EXPECT_TRUE(p.dsink);
}

// spec_rule: fag-7.16
TEST(FlashAttentionScoreGradValidation, Rule16Prefix) {
  auto make6 = [] {
    auto c = std::make_unique<Case>();
    // (sq, skv) = (3, 5), (5, 3): prefix in [2, 5] and [0, 3].
    c->setSeqs({3, 8}, {5, 8});
    c->sparseMode = 6;
    c->attenMask = compressedMask({3072, 2048});
    return c;
  };
  auto c = make6();
  expectRejected(
      *c, kInvalid,
      "prefixOptional: must have B = 2 entries in sparseMode 6, got null");
  c->prefix = std::vector<int64_t>{2};
  expectRejected(
      *c, kInvalid,
      "prefixOptional: must have B = 2 entries in sparseMode 6, got 1");
  c->prefix = std::vector<int64_t>{1, 0};
  expectRejected(
      *c, kInvalid,
      "prefixOptional: entry 0 is 1, must be in [2, 5] (sq = 3, skv = 5)");
  c->prefix = std::vector<int64_t>{5, 4};
  expectRejected(
      *c, kInvalid,
      "prefixOptional: entry 1 is 4, must be in [0, 3] (sq = 5, skv = 3)");
  c->prefix = std::vector<int64_t>{2, -1};
  expectRejected(*c, kInvalid, "prefixOptional: entry 1 is -1");
  c->prefix = std::vector<int64_t>{5, 0};
  Problem p = expectValid(*c);
  EXPECT_EQ(p.prefix, (std::vector<int64_t>{5, 0}));
  EXPECT_EQ(p.mask, MaskForm::Compressed);
  // Prefix is ignored outside mode 6.
  c->sparseMode = 3;
  c->attenMask = compressedMask({2048, 2048});
  c->prefix = std::vector<int64_t>{100};
  p = expectValid(*c);
  EXPECT_TRUE(p.prefix.empty());
}

// spec_rule: fag-7.16
TEST(FlashAttentionScoreGradValidation, Rule16PrefixCountsEffectiveBatches) {
  Case c;
  // (3, 5), (5, 3), then a trailing (0, 0) batch: B = 2 prefix entries.
  c.setSeqs({3, 8, 8}, {5, 8, 8});
  c.sparseMode = 6;
  c.attenMask = compressedMask({3072, 2048});
  c.prefix = std::vector<int64_t>{2, 3, 0};
  expectRejected(
      c, kInvalid,
      "prefixOptional: must have B = 2 entries in sparseMode 6, got 3");
  c.prefix = std::vector<int64_t>{2, 3};
  Problem p = expectValid(c);
  EXPECT_EQ(p.b, 2);
  EXPECT_EQ(p.band(1).prefix, 3);
  EXPECT_EQ(p.band(2).prefix, 0); // the trailing batch has no entry
}

//===----------------------------------------------------------------------===//
// Beyond the list: views inside their storage, packed masks large enough
//===----------------------------------------------------------------------===//

// spec_rule: desc-storage
TEST(FlashAttentionScoreGradValidation, ViewsMustFitStorage) {
  Case c;
  c.query = std::make_unique<Tensor>(c.dtype, std::vector<int64_t>{8, 2, 16},
                                     std::vector<int64_t>{32, 16, 1}, 0, 255);
  expectRejected(
      c, kInvalid,
      "query: the view reaches element index 255 but its storage holds "
      "255 elements");
  Case o; // an offset past the end, on an output
  o.dvOut = std::make_unique<Tensor>(o.dtype, std::vector<int64_t>{8, 2, 16},
                                     std::vector<int64_t>{32, 16, 1}, 4, 256);
  expectRejected(o, kInvalid,
                 "dvOut: the view reaches element index 259 but its storage "
                 "holds 256 elements");
  Case m; // a padded explicit mask whose row stride overruns
  m.attenMask =
      std::make_unique<Tensor>(DataType::Bool, std::vector<int64_t>{8, 8},
                               std::vector<int64_t>{16, 1}, 0, 64);
  expectRejected(
      m, kInvalid,
      "attenMaskOptional: the view reaches element index 119 but its "
      "storage holds 64 elements");
  Case s;
  s.keepProb = 0.9;
  s.dropMask =
      std::make_unique<Tensor>(DataType::UInt8, std::vector<int64_t>{16},
                               std::vector<int64_t>{2}, 0, 16);
  expectRejected(
      s, kInvalid,
      "dropMaskOptional: the view reaches element index 30 but its "
      "storage holds 16 elements");
  Case ok; // padded strides that fit are fine
  ok.keyIn =
      std::make_unique<Tensor>(ok.dtype, std::vector<int64_t>{8, 2, 16},
                               std::vector<int64_t>{64, 32, 1}, 3, 8 * 64 + 3);
  expectValid(ok);
}

TEST(FlashAttentionScoreGradValidation, HugeSequenceProductsAreRejected) {
  // Cumulative ends that would overflow N1 * sum sq_b * skv_b.
  Case c;
  const int64_t big = int64_t{1} << 40;
  c.query = std::make_unique<Tensor>(c.dtype, std::vector<int64_t>{big, 2, 16},
                                     std::vector<int64_t>{0, 0, 0}, 0, 1);
  c.keyIn = std::make_unique<Tensor>(c.dtype, std::vector<int64_t>{big, 2, 16},
                                     std::vector<int64_t>{0, 0, 0}, 0, 1);
  c.value = std::make_unique<Tensor>(c.dtype, std::vector<int64_t>{big, 2, 16},
                                     std::vector<int64_t>{0, 0, 0}, 0, 1);
  for (TensorPtr *t : {&c.dy, &c.attentionIn, &c.dqOut})
    *t = std::make_unique<Tensor>(c.dtype, std::vector<int64_t>{big, 2, 16},
                                  std::vector<int64_t>{0, 0, 0}, 0, 1);
  for (TensorPtr *t : {&c.dkOut, &c.dvOut})
    *t = std::make_unique<Tensor>(c.dtype, std::vector<int64_t>{big, 2, 16},
                                  std::vector<int64_t>{0, 0, 0}, 0, 1);
  c.cq = c.ck = std::vector<int64_t>{big};
  expectRejected(c, kInvalid, "exceeds the int64 range");
}

//===----------------------------------------------------------------------===//
// Normalisation (positive)
//===----------------------------------------------------------------------===//

TEST(FlashAttentionScoreGradValidation, TrailingEmptyBatchesAreDropped) {
  Case c;
  c.setSeqs({3, 3, 8, 8, 8}, {4, 6, 8, 8, 8});
  Problem p = expectValid(c);
  EXPECT_EQ(p.bin, 5);
  EXPECT_EQ(p.b, 3);
  EXPECT_EQ(p.sqMax, 5);
  EXPECT_EQ(p.skvMax, 4);
  EXPECT_EQ(p.cq, (std::vector<int64_t>{3, 3, 8, 8, 8}));
  EXPECT_EQ(p.ck, (std::vector<int64_t>{4, 6, 8, 8, 8}));
  // A trailing batch with only kv tokens still counts.
  c.setSeqs({3, 3}, {4, 6});
  p = expectValid(c);
  EXPECT_EQ(p.b, 2);
}

TEST(FlashAttentionScoreGradValidation, BandBatchSkipsEmptyBatches) {
  Case c;
  // (sq, skv): (0, 2), (3, 2), (5, 4), (0, 1), (0, 0)
  c.setSeqs({0, 3, 8, 8, 8}, {2, 4, 8, 9, 9});
  c.attenMask = compressedMask({2048, 2048});
  c.sparseMode = 7;
  EXPECT_EQ(expectValid(c).bandBatch, 2);
  c.sparseMode = 8;
  EXPECT_EQ(expectValid(c).bandBatch, 1);
  c.sparseMode = 3;
  EXPECT_EQ(expectValid(c).bandBatch, -1);
  c.sparseMode = 7;
  c.attenMask.reset(); // chosen without a mask too
  Problem p = expectValid(c);
  EXPECT_EQ(p.bandBatch, 2);
  EXPECT_EQ(p.mask, MaskForm::None);
  // No batch with sq > 0.
  c.setSeqs({0}, {4});
  c.sparseMode = 8;
  EXPECT_EQ(expectValid(c).bandBatch, -1);
}

TEST(FlashAttentionScoreGradValidation, MaskFormPerShape) {
  struct Form {
    std::vector<int64_t> shape;
    MaskForm form;
  };
  // B = 2 batches (3, 5), (5, 3): Sqmax = Skvmax = 5; N1 = 2.
  const Form forms[] = {{{5, 5}, MaskForm::Shared},
                        {{1, 1, 5, 5}, MaskForm::Shared},
                        {{2, 1, 5, 5}, MaskForm::PerBatch},
                        {{2, 2, 5, 5}, MaskForm::PerBatchHead}};
  for (const Form &f : forms) {
    SCOPED_TRACE(host::shapeToString(f.shape));
    for (int64_t mode : {0, 1}) {
      Case c;
      c.setSeqs({3, 8}, {5, 8});
      c.sparseMode = mode;
      c.preTokens = c.nextTokens = 3;
      c.attenMask = make(DataType::UInt8, f.shape);
      Problem p = expectValid(c);
      EXPECT_EQ(p.mask, f.form);
      EXPECT_TRUE(p.attenMask);
    }
  }
  for (int64_t mode : {2, 3, 4, 6, 7, 8}) {
    SCOPED_TRACE(mode);
    const int64_t rows = mode == 6 ? 3072 : 2048;
    const std::vector<std::vector<int64_t>> shapes = {{rows, 2048},
                                                      {1, 1, rows, 2048},
                                                      {2, 1, rows, 2048},
                                                      {2, 2, rows, 2048}};
    for (const std::vector<int64_t> &shape : shapes) {
      Case c;
      c.setSeqs({3, 8}, {5, 8});
      c.sparseMode = mode;
      c.prefix = std::vector<int64_t>{2, 0};
      c.attenMask = compressedMask(shape, DataType::UInt8);
      EXPECT_EQ(expectValid(c).mask, MaskForm::Compressed);
    }
  }
  Case none;
  none.attenMask = make(DataType::Float, {}); // 0-dim: absent, dtype unchecked
  Problem p = expectValid(none);
  EXPECT_EQ(p.mask, MaskForm::None);
  EXPECT_FALSE(p.attenMask);
}

TEST(FlashAttentionScoreGradValidation, PseFormPerShape) {
  // B = 2 batches (3, 3), (5, 5); N1 = 2, T2 = 8, sum sq * skv = 34.
  auto base = [] {
    auto c = std::make_unique<Case>();
    c->setSeqs({3, 8}, {3, 8});
    return c;
  };
  auto c = base();
  c->sparseMode = 3;
  c->attenMask = compressedMask({2048, 2048});
  c->pseType = 0;
  c->pse = make(DataType::Float16, {1, 2, 1024, 5});
  Problem p = expectValid(*c);
  EXPECT_EQ(p.pse, PseForm::AlibiCompressed);
  EXPECT_EQ(p.pseBatches, 1);
  EXPECT_EQ(p.pseType, 0);
  EXPECT_TRUE(p.pseT);
  c->pse = make(DataType::Float16, {2, 2, 1024, 5});
  EXPECT_EQ(expectValid(*c).pseBatches, 2);
  // Mode 0 with causal tokens, mode 4 and mode 8 likewise.
  for (int64_t mode : {0, 4, 8}) {
    c->sparseMode = mode;
    c->attenMask =
        mode == 0 ? make(DataType::Bool, {5, 5}) : compressedMask({2048, 2048});
    c->preTokens = 5;
    c->nextTokens = 0;
    EXPECT_EQ(expectValid(*c).pse, PseForm::AlibiCompressed) << mode;
  }

  c = base();
  c->pse = make(DataType::Float16, {2 * 8});
  EXPECT_EQ(expectValid(*c).pse, PseForm::PerKv);
  c->pse = make(DataType::Float16, {2 * 34});
  EXPECT_EQ(expectValid(*c).pse, PseForm::Full);

  c = base();
  c->pseType = 2;
  c->pse = make(DataType::Float, {2});
  p = expectValid(*c);
  EXPECT_EQ(p.pse, PseForm::Slopes);
  EXPECT_EQ(p.pseBatches, 1);
  c->pseType = 3;
  c->pse = make(DataType::Float, {2, 2});
  p = expectValid(*c);
  EXPECT_EQ(p.pse, PseForm::Slopes);
  EXPECT_EQ(p.pseBatches, 2);
  EXPECT_EQ(p.pseType, 3);
}

TEST(FlashAttentionScoreGradValidation, StartIndicesUsedOnlyWhenBothGiven) {
  Case c;
  c.pseType = 2;
  c.pse = make(DataType::Float, {2});
  c.qStart = std::vector<int64_t>{5, 99};
  c.kvStart = std::vector<int64_t>{-3};
  Problem p = expectValid(c);
  EXPECT_EQ(p.qStart, 5);
  EXPECT_EQ(p.kvStart, -3);
  c.kvStart.reset();
  p = expectValid(c);
  EXPECT_EQ(p.qStart, 0);
  EXPECT_EQ(p.kvStart, 0);
  c.kvStart = std::vector<int64_t>{};
  p = expectValid(c);
  EXPECT_EQ(p.qStart, 0);
  EXPECT_EQ(p.kvStart, 0);
}

TEST(FlashAttentionScoreGradValidation, StatsLayoutString) {
  const std::pair<const char *, bool> layouts[] = {{"same_as_input", true},
                                                   {"", false},
                                                   {nullptr, false},
                                                   {"SAME_AS_INPUT", false},
                                                   {"NTD", false}};
  for (auto [layout, tnd] : layouts) {
    Case c;
    c.softmaxInLayout = layout;
    EXPECT_EQ(expectValid(c).statsTnd, tnd) << (layout ? layout : "null");
  }
}

TEST(FlashAttentionScoreGradValidation, IgnoredArguments) {
  Case c;
  c.paddingMask = make(DataType::Int32, {3});
  c.softmaxIn = make(DataType::Int32, {3});
  c.dpseOut = make(DataType::Int32, {3});
  c.innerPrecise = 12345;
  c.dropMask = make(DataType::Int32, {1}); // keepProb = 1: ignored
  Problem p = expectValid(c);
  EXPECT_FALSE(p.dropout);
  EXPECT_FALSE(p.dropMask);
  // A keepProb that rounds to 1 in float32 is no dropout either.
  c.keepProb = 1.0 - 1e-12;
  EXPECT_FALSE(expectValid(c).dropout);
}

TEST(FlashAttentionScoreGradValidation, GqaAndSmallerDv) {
  Case c;
  c.n1 = 4;
  c.n2 = 1;
  c.dv = 8;
  c.rebuild();
  Problem p = expectValid(c);
  EXPECT_EQ(p.g, 4);
  EXPECT_EQ(p.dv, 8);
}

// spec_rule: fag-7.17
TEST(FlashAttentionScoreGradValidation, Rule17NoQueryTokensIsNotEmpty) {
  Case c;
  c.t1 = 0;
  c.rebuild();
  Problem p = expectValid(c);
  EXPECT_FALSE(p.empty);
  EXPECT_EQ(p.t1, 0);
  EXPECT_EQ(p.b, 1);
  EXPECT_EQ(p.sqMax, 0);
  // Through the C API: success in both phases, and what the rule says
  // must happen: dk = dv = 0 and dθ = 0 (no query row sees a key), every
  // element written (the sentinel is gone). dq has no elements.
  c.sinkIn = make(DataType::Float, {c.n1});
  c.dsinkOut = make(DataType::Float, {c.n1});
  c.fillOutputs();
  Case::Result r = c.call();
  ASSERT_EQ(r.rc, 0) << r.message;
  ASSERT_NE(r.executor, nullptr);
  std::vector<unsigned char> workspace(std::max<uint64_t>(r.workspaceSize, 1));
  ASSERT_EQ(aclnnFlashAttentionUnpaddingScoreGradV5(workspace.data(), r.workspaceSize,
                                                    r.executor, nullptr),
            0)
      << aclGetRecentErrMsg();
  auto expectZeros = [](const Tensor &t, const char *name) {
    const int64_t n = host::shapeNumel(t.shape);
    ASSERT_GT(n, 0) << name;
    for (int64_t i = 0; i < n; ++i) {
      double x;
      if (t.dtype == DataType::Float16) {
        uint16_t h;
        std::memcpy(&h, t.bytes.data() + 2 * i, 2);
        x = host::halfBitsToFloat(h);
      } else {
        float f;
        std::memcpy(&f, t.bytes.data() + 4 * i, 4);
        x = f;
      }
      ASSERT_EQ(x, 0.0) << name << "[" << i << "]";
    }
  };
  expectZeros(*c.dkOut, "dk");
  expectZeros(*c.dvOut, "dv");
  expectZeros(*c.dsinkOut, "dsink");
}

TEST(FlashAttentionScoreGradValidation, NoKvTokensPasses) {
  Case c;
  c.t2 = 0;
  c.rebuild();
  c.attenMask = make(DataType::Bool, {8, 0});
  Problem p = expectValid(c);
  EXPECT_FALSE(p.empty);
  EXPECT_EQ(p.t2, 0);
  EXPECT_EQ(p.skvMax, 0);
  EXPECT_EQ(p.mask, MaskForm::Shared);
}

TEST(FlashAttentionScoreGradValidation, ErrorLeavesProblemUntouched) {
  Case c;
  c.headNum = 3;
  Problem p;
  p.t1 = 77;
  p.bandBatch = 5;
  host::Status s = c.validate(p);
  EXPECT_EQ(s.code(), kInvalid);
  EXPECT_EQ(p.t1, 77);
  EXPECT_EQ(p.bandBatch, 5);
  EXPECT_TRUE(p.cq.empty());
}

} // namespace
