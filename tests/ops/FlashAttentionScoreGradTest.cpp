//===- FlashAttentionScoreGradTest.cpp - The operator against the oracle --===//
//
// Section 10 of ../shared/spec/flash_attention_unpadding_score_grad_v5.md,
// items 1-17 and 20 (18, the finite differences, lives in
// FlashAttentionScoreGradReferenceTest.cpp; 19, the validation rules,
// belongs to the validation tests): the operator's dQ, dK, dV, dQrope,
// dKrope and dθ against the float64 reference run on a second set of
// outputs, with section 8's per-dtype tolerances (element-wise, relative
// RMS, the dθ rule), outputs that must stay at the sentinel, and bitwise
// determinism across runs and thread counts.
//
//===----------------------------------------------------------------------===//
#include "ops/flash_attention_score_grad/FlashAttentionScoreGradTwin.h"
#include "ops/flash_attention_score_grad/FlashAttentionScoreGradData.h"
#include "tests/ops/FlashAttentionScoreGradChecks.h"
#include "ops/host/Status.h"
#include "jit/Compiler.h"

#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <ostream>
#include <set>
#include <string>
#include <vector>

using namespace tilejit;
using namespace tilejit::ops;
using host::DataType;
using test_support::expectClose;
using test_support::Tolerance;
using test_support::expectSinkClose;
using test_support::toleranceFor;
using Args = aclnn::FlashAttentionUnpaddingScoreGradV5Args;

namespace {

host::Status runOperator(const Args &args) { return flashAttentionScoreGrad(args); }

//===----------------------------------------------------------------------===//
// Section 8's checks
//===----------------------------------------------------------------------===//



/// Runs the reference into set 1 and the operator on set 0, then compares
/// every output.
void checkAgainstReference(fag::Data &data) {
  const Args refArgs = data.argsWithFreshOutputs();
  flashAttentionScoreGradReference(refArgs);
  data.resetOutputs(0);
  const host::Status s = runOperator(data.args());
  ASSERT_TRUE(s) << s.code() << " " << s.message();
  const fag::Config &c = data.config();
  const Tolerance t = toleranceFor(c.dtype);
  for (const char *name : {"dq", "dk", "dv"})
    expectClose(data.output(name, 0), data.output(name, 1), t, name);
  if (c.dr > 0)
    for (const char *name : {"dqRope", "dkRope"})
      expectClose(data.output(name, 0), data.output(name, 1), toleranceFor(DataType::BFloat16),
                  name);
  expectSinkClose(data.output("dsink", 0), data.output("dsink", 1), fag::sinkGradScale(refArgs),
                  t.sinkC);
  if (c.strided) {
    EXPECT_TRUE(data.outputGapsIntact(0)) << "the operator wrote between a strided view's elements";
  }
}

//===----------------------------------------------------------------------===//
// The scenario table
//===----------------------------------------------------------------------===//

struct Scenario {
  std::string name;
  fag::Config config;
};

void PrintTo(const Scenario &s, std::ostream *os) { *os << s.name; }

fag::Config base(DataType dtype, std::vector<int64_t> sq, std::vector<int64_t> skv, int64_t n1 = 2,
                 int64_t n2 = 1, int64_t d = 16) {
  fag::Config c;
  c.dtype = dtype;
  c.seqQ = std::move(sq);
  c.seqKv = std::move(skv);
  c.n1 = n1;
  c.n2 = n2;
  c.d = d;
  return c;
}

void compressed(fag::Config &c, int64_t mode, int64_t pre = 65536, int64_t nxt = 65536) {
  c.sparseMode = mode;
  c.mask = fag::MaskForm::Compressed;
  c.preTokens = pre;
  c.nextTokens = nxt;
}

std::vector<Scenario> scenarios() {
  std::vector<Scenario> out;
  auto add = [&](std::string name, fag::Config c) {
    c.seed = 1000 + out.size();
    out.push_back({std::move(name), std::move(c)});
  };
  const DataType f32 = DataType::Float, f16 = DataType::Float16, bf16 = DataType::BFloat16;

  // 1. The minimal case.
  add("S01Minimal", base(f32, {1}, {1}, 1, 1, 1));

  // 2. The upstream example.
  {
    fag::Config c = base(f16, {256}, {256}, 1, 1, 128);
    c.sparseMode = 0;
    c.mask = fag::MaskForm::Shared;
    c.maskDensity = 0;
    c.sink = true;
    c.sinkValues = {0.0f};
    add("S02UpstreamExample", c);
  }

  // 3. Varlen with empty batches and trailing (0, 0) batches.
  for (DataType t : {f32, bf16}) {
    fag::Config c = base(t, {3, 17, 0, 64, 5}, {5, 17, 9, 0, 1}, 2, 1, 24);
    c.trailingEmptyBatches = 2;
    c.sink = true;
    add(std::string("S03Varlen") + (t == f32 ? "F32" : "Bf16"), c);
  }

  // 4. GQA and MQA, per-query-head sinks.
  {
    fag::Config c = base(f16, {9, 14}, {11, 14}, 8, 2, 32);
    c.sink = true;
    c.sinkValues = {-1, 0.5f, 2, -0.25f, 1, 0, -2, 0.75f};
    add("S04Gqa8x2", c);
    c.n2 = 1;
    add("S04Mqa8x1", c);
  }

  // 5. Every mode with sq < skv, sq = skv and sq > skv where allowed.
  const std::vector<std::pair<int64_t, int64_t>> shapes = {{20, 33}, {24, 24}, {30, 17}};
  for (int64_t mode : {0, 1, 2, 3, 4, 6, 7, 8})
    for (const auto &[sq, skv] : shapes) {
      if (sq > skv && (mode == 3 || mode == 7))
        continue; // the documents require sq <= skv
      fag::Config c = base(f32, {sq, 5, sq}, {skv, 7, skv});
      if (mode == 0 || mode == 1) {
        c.sparseMode = mode;
        c.mask = mode == 0 ? fag::MaskForm::Shared : fag::MaskForm::PerBatchHead;
        c.maskDensity = 0.2;
        c.preTokens = mode == 0 ? 40 : 0;
        c.nextTokens = mode == 0 ? 40 : 0;
      } else if (mode == 4) {
        compressed(c, 4, 6, 3);
      } else if (mode == 6) {
        compressed(c, 6);
        for (size_t u = 0; u < c.seqQ.size(); ++u)
          c.prefix.push_back(c.seqQ[u] > c.seqKv[u] ? c.seqKv[u] / 2 : c.seqKv[u] - c.seqQ[u] + 2);
      } else if (mode == 7) {
        compressed(c, 7, 65536, 0);
      } else if (mode == 8) {
        compressed(c, 8, 65536, 65536);
      } else {
        compressed(c, mode);
      }
      c.sink = sq > skv; // rows of mode 6 with j < prefix empty otherwise
      add("S05Mode" + std::to_string(mode) + "Sq" + std::to_string(sq) + "Skv" +
              std::to_string(skv),
          c);
    }
  {
    // Mode 0 with negative tokens (fully masked rows: with a sink) and band
    // edges where pre + nxt = 1.
    fag::Config c = base(f16, {12, 9}, {15, 9});
    c.mask = fag::MaskForm::Shared;
    c.maskDensity = 0.1;
    c.sink = true;
    c.preTokens = 10;
    c.nextTokens = -2;
    add("S05Mode0NegativeNext", c);
    c.preTokens = -2;
    c.nextTokens = 8;
    add("S05Mode0NegativePre", c);
    c.preTokens = 0;
    c.nextTokens = 1;
    add("S05Mode0BandWidthOne", c);
    fag::Config m4 = base(f16, {12, 9}, {15, 9});
    compressed(m4, 4, 1, 0);
    add("S05Mode4BandWidthOne", m4);
  }

  // 6. The documents' mode-7 and mode-8 examples; band batch next to empty
  // batches.
  {
    fag::Config c = base(f32, {3, 2}, {3, 6});
    compressed(c, 7, 6, -2);
    add("S06Mode7Example", c);
    fag::Config d = base(f32, {3, 5, 4}, {4, 5, 4});
    compressed(d, 8, 4, 1);
    add("S06Mode8Example", d);
    fag::Config e = base(f32, {3, 5, 0}, {4, 5, 3});
    compressed(e, 7, 6, 0);
    add("S06Mode7LastBatchEmptyQ", e);
    fag::Config f = base(f32, {0, 3, 5}, {2, 4, 5});
    compressed(f, 8, 4, 1);
    add("S06Mode8FirstBatchEmptyQ", f);
  }

  // 7. Mode 6 with prefix at its bounds; long sequences.
  {
    fag::Config c = base(f32, {10, 16}, {16, 10});
    compressed(c, 6);
    c.sink = true; // prefix 0 with sq > skv leaves rows fully masked
    c.prefix = {6, 0};
    add("S07Mode6PrefixLow", c);
    c.prefix = {16, 10};
    add("S07Mode6PrefixHigh", c);
    fag::Config l = base(bf16, {2100}, {2100}, 1, 1, 8);
    compressed(l, 6);
    l.prefix = {700};
    add("S07Mode6Long", l);
    fag::Config m = base(f16, {3000}, {3000}, 1, 1, 8);
    compressed(m, 3);
    add("S07Mode3Long", m);
  }

  // 8. Explicit masks in every form, bool and uint8.
  for (fag::MaskForm form :
       {fag::MaskForm::Shared, fag::MaskForm::PerBatch, fag::MaskForm::PerBatchHead})
    for (bool asBool : {false, true}) {
      fag::Config c = base(f32, {13, 13}, {19, 19});
      c.sparseMode = 1;
      c.mask = form;
      c.maskBool = asBool;
      c.maskDensity = 0.3;
      const std::string formName = form == fag::MaskForm::Shared     ? "Shared"
                                   : form == fag::MaskForm::PerBatch ? "PerBatch"
                                                                     : "PerBatchHead";
      add("S08Mask" + formName + (asBool ? "Bool" : "Uint8"), c);
      if (form == fag::MaskForm::Shared) {
        c.mask4d = true;
        add("S08MaskShared4d" + std::string(asBool ? "Bool" : "Uint8"), c);
      }
    }
  {
    fag::Config c = base(f32, {5, 13, 8}, {9, 6, 8});
    c.sparseMode = 1;
    c.mask = fag::MaskForm::PerBatchHead;
    c.maskDensity = 0.3;
    add("S08MaskPackedVarlen", c);
    c.mask = fag::MaskForm::PerBatch;
    add("S08MaskPackedVarlenPerBatch", c);
  }

  // 9. External bias: ALiBi-compressed (types 0 and 1, Bp = 1 and B,
  // Sqmax below and above 1024) and both 1-D forms.
  for (int64_t type : {0, 1})
    for (int64_t bp : {1, 2}) {
      fag::Config c = base(f16, {40, 27}, {40, 27});
      compressed(c, 3);
      c.pse = fag::PseForm::AlibiCompressed;
      c.pseType = type;
      c.pseBatches = bp;
      add("S09AlibiType" + std::to_string(type) + "Bp" + std::to_string(bp), c);
    }
  {
    fag::Config c = base(f32, {1100}, {1100}, 1, 1, 8);
    compressed(c, 2);
    c.pse = fag::PseForm::AlibiCompressed;
    c.pseType = 1;
    add("S09AlibiLong", c);
    fag::Config k = base(f16, {7, 12, 9}, {10, 12, 5});
    k.pse = fag::PseForm::PerKv;
    k.pseType = 0;
    add("S09PerKvBias", k);
    k.pse = fag::PseForm::Full;
    k.pseType = 1;
    add("S09FullBias", k);
  }

  // 10. ALiBi slopes.
  for (int64_t type : {2, 3})
    for (int64_t bp : {1, 3}) {
      fag::Config c = base(f32, {7, 12, 9}, {10, 12, 5});
      c.pse = fag::PseForm::Slopes;
      c.pseType = type;
      c.pseBatches = bp;
      add("S10SlopesType" + std::to_string(type) + "Batches" + std::to_string(bp), c);
      c.qStartGiven = c.kvStartGiven = true;
      c.qStart = 5;
      c.kvStart = 2;
      add("S10SlopesType" + std::to_string(type) + "Batches" + std::to_string(bp) + "Starts", c);
      c.kvStartGiven = false;
      add("S10SlopesType" + std::to_string(type) + "Batches" + std::to_string(bp) + "QStartOnly",
          c);
    }

  // 11. Dropout.
  {
    fag::Config c = base(f16, {11, 6, 13}, {13, 21, 5}, 2, 2);
    c.keepProb = 0.9;
    c.dropMaskExtraBytes = 7;
    add("S11Dropout", c);
    c.sink = true;
    add("S11DropoutSink", c);
    c.keepProb = 1.0;
    c.dropMaskAlways = true;
    add("S11KeepOneMaskIgnored", c);
  }

  // 12. Sinks.
  {
    fag::Config c = base(f32, {9, 15}, {12, 15}, 4, 2);
    c.sink = true;
    c.sinkValues = {20, 20, 20, 20};
    add("S12SinkLarge", c);
    c.sinkValues = {-20, -20, -20, -20};
    add("S12SinkSmall", c);
    c.sinkValues = {20, -20, 0.5f, -0.5f};
    add("S12SinkMixed", c);
    fag::Config m = base(f32, {12, 9}, {15, 9}, 4, 2);
    m.mask = fag::MaskForm::Shared;
    m.sink = true;
    m.preTokens = 10;
    m.nextTokens = -3;
    add("S12SinkFullyMaskedRows", m);
    fag::Config g = base(bf16, {9, 15}, {12, 15}, 8, 2);
    g.sink = true;
    g.keepProb = 0.85;
    add("S12SinkDropoutGqa", g);
  }

  // 13. Rope.
  {
    fag::Config c = base(bf16, {40, 24}, {40, 24}, 2, 1, 128);
    c.dr = 64;
    compressed(c, 2);
    add("S13Rope", c);
  }

  // 15. Dtypes and head dims (Dv < D included).
  {
    const DataType types[] = {f32, f16, bf16};
    int idx = 0;
    for (int64_t d : {1, 3, 64, 72, 88, 128, 192, 256, 768}) {
      for (int k = 0; k < (d == 128 ? 3 : 1); ++k) {
        const DataType t = types[(idx++) % 3];
        fag::Config c = base(t, {5, 9}, {7, 9}, 2, 1, d);
        c.sink = d % 2 == 0;
        add("S15D" + std::to_string(d) + (t == f32 ? "F32" : t == f16 ? "F16" : "Bf16"), c);
      }
    }
    fag::Config v = base(f16, {9, 6}, {7, 11}, 2, 1, 64);
    v.dv = 40;
    add("S15DvSmaller", v);
    v.dtype = bf16;
    v.d = 72;
    v.dv = 1;
    add("S15DvOne", v);
  }

  // 17. T2 = 0 with T1 > 0: dq = 0, dθ = 0. And section 7 rule 17: T1 = 0
  // with T2 > 0 succeeds with dk = dv = 0 and dθ = 0 (the reference's zeros
  // are compared exactly), in one batch and in two (GQA, f16).
  {
    fag::Config c = base(f32, {6}, {0});
    c.sink = true;
    add("S17NoKeys", c);
    fag::Config q = base(f32, {0}, {6});
    q.sink = true;
    add("S17NoQueries", q);
    fag::Config g = base(f16, {0, 0}, {3, 7}, 4, 2, 32);
    g.sink = true;
    add("S17NoQueriesTwoBatchesGqa", g);
  }

  // 20. Non-contiguous strided views of everything.
  {
    fag::Config c = base(f16, {11, 6, 13}, {13, 21, 5}, 4, 2, 24);
    c.dv = 20;
    c.strided = true;
    c.mask = fag::MaskForm::PerBatchHead;
    c.sparseMode = 1;
    c.maskDensity = 0.2;
    c.pse = fag::PseForm::Full;
    c.pseType = 0;
    c.keepProb = 0.9;
    c.sink = true;
    c.statsTnd = false;
    c.extraTokensQ = 3;
    c.extraTokensKv = 2;
    add("S20StridedEverything", c);
    fag::Config r = base(bf16, {17, 9}, {17, 9}, 2, 2, 64);
    r.dr = 64;
    r.strided = true;
    compressed(r, 3);
    add("S20StridedRope", r);
    fag::Config a = base(f32, {20, 9}, {20, 9}, 2, 1, 16);
    a.strided = true;
    compressed(a, 3);
    a.pse = fag::PseForm::AlibiCompressed;
    a.pseBatches = 2;
    a.pseType = 1;
    add("S20StridedAlibi", a);
  }
  return out;
}

class FlashAttentionScoreGradScenario : public ::testing::TestWithParam<Scenario> {};

TEST_P(FlashAttentionScoreGradScenario, MatchesReference) {
  fag::Data data(GetParam().config);
  checkAgainstReference(data);
}

INSTANTIATE_TEST_SUITE_P(FlashAttentionScoreGrad, FlashAttentionScoreGradScenario,
                         ::testing::ValuesIn(scenarios()),
                         [](const ::testing::TestParamInfo<Scenario> &info) {
                           return info.param.name;
                         });

//===----------------------------------------------------------------------===//
// Scenarios with their own checks
//===----------------------------------------------------------------------===//

/// Item 1: the closed form straight from the operator.
TEST(FlashAttentionScoreGradScenarioChecks, MinimalClosedForm) {
  fag::Data data(base(DataType::Float, {1}, {1}, 1, 1, 1));
  ASSERT_TRUE(runOperator(data.args()));
  EXPECT_EQ(data.output("dq")[0], 0.0);
  EXPECT_EQ(data.output("dk")[0], 0.0);
  EXPECT_NEAR(data.output("dv")[0], data.input("dy", 0), 1e-6);
  EXPECT_EQ(data.output("dsink")[0], 0.0);
}

/// Item 13: each rope rejection of section 7.7 (the operator validates).
TEST(FlashAttentionScoreGradScenarioChecks, RopeRejections) {
  fag::Config c = base(DataType::BFloat16, {16}, {16}, 2, 1, 64);
  c.dr = 64;
  compressed(c, 2);
  fag::Data data(c);
  auto expectCode = [&](const Args &a, int32_t code, const char *what) {
    const host::Status s = runOperator(a);
    EXPECT_EQ(s.code(), code) << what << ": " << s.message();
  };
  {
    Args a = data.args();
    a.keyInRope = nullptr;
    expectCode(a, host::status::ParamNullptr, "only queryRope");
  }
  {
    Args a = data.args();
    a.attenMaskOptional = nullptr;
    expectCode(a, host::status::ParamNullptr, "rope without a mask");
  }
  {
    Args a = data.args();
    a.keepProb = 0.9;
    expectCode(a, host::status::ParamInvalid, "rope with keepProb < 1");
  }
  {
    Args a = data.args();
    a.sparseMode = 6;
    expectCode(a, host::status::ParamInvalid, "rope in mode 6");
  }
  {
    Args a = data.args();
    a.dqRopeOut = nullptr;
    expectCode(a, host::status::ParamNullptr, "rope without dqRopeOut");
  }
  {
    fag::Config f = c;
    f.dtype = DataType::Float16;
    fag::Data wrong(f);
    expectCode(wrong.args(), host::status::ParamInvalid, "rope with fp16 q, k, v");
  }
  {
    fag::Config f = c;
    f.dr = 12; // not a multiple of 8
    fag::Data wrong(f);
    expectCode(wrong.args(), host::status::ParamInvalid, "rope dim not a multiple of 8");
  }
  {
    fag::Config f = c;
    f.dr = 72; // larger than D
    fag::Data wrong(f);
    expectCode(wrong.args(), host::status::ParamInvalid, "rope dim larger than D");
  }
  {
    fag::Config f = c;
    f.pse = fag::PseForm::Full;
    f.pseType = 0;
    fag::Data wrong(f);
    expectCode(wrong.args(), host::status::ParamInvalid, "rope with pse");
  }
  {
    fag::Config f = c;
    f.dropMaskAlways = true;
    fag::Data wrong(f);
    expectCode(wrong.args(), host::status::ParamInvalid, "rope with a dropMask");
  }
}

fag::Config layoutConfig(bool tnd) {
  fag::Config c = base(DataType::Float16, {7, 0, 12, 5}, {9, 4, 12, 6}, 4, 2, 32);
  c.sink = true;
  c.keepProb = 0.9;
  c.statsTnd = tnd;
  return c;
}

/// Item 14: the same statistics in either layout give identical outputs.
TEST(FlashAttentionScoreGradScenarioChecks, StatsLayoutsBitwiseEqual) {
  fag::Data tnd(layoutConfig(true)), legacy(layoutConfig(false));
  ASSERT_TRUE(runOperator(tnd.args()));
  ASSERT_TRUE(runOperator(legacy.args()));
  for (const char *name : {"dq", "dk", "dv", "dsink"})
    EXPECT_EQ(tnd.output(name), legacy.output(name)) << name;
  checkAgainstReference(legacy);
}

/// Item 14: Δ comes from attentionIn, dθ from sum P dP; an inconsistent O
/// shows the difference, and the operator must reproduce it.
TEST(FlashAttentionScoreGradScenarioChecks, InconsistentAttentionIn) {
  fag::Config c = base(DataType::Float, {9, 14}, {12, 14}, 2, 1, 16);
  c.sink = true;
  fag::Data data(c);
  for (int64_t e = 0; e < data.inputNumel("attentionIn"); e += 3)
    data.setInput("attentionIn", e, data.input("attentionIn", e) * 1.5 + 0.1);
  checkAgainstReference(data);
  // The perturbation is visible: dq differs from the consistent problem's.
  fag::Data consistent(c);
  const Args a = consistent.argsWithFreshOutputs();
  flashAttentionScoreGradReference(a);
  EXPECT_NE(consistent.output("dq", 1), data.output("dq", 1));
}

/// Item 16: two runs, and one versus two (and three) threads, are bitwise
/// equal. A launch uses OpenMP's thread count at the time of the call
/// (TILEJIT_NUM_THREADS is read once per process and only caps it), so the
/// count is set per run with omp_set_num_threads.
TEST(FlashAttentionScoreGradScenarioChecks, Deterministic) {
  fag::Config c = base(DataType::Float16, {37, 0, 65, 20}, {50, 9, 65, 31}, 4, 1, 64);
  c.sink = true;
  c.keepProb = 0.9;
  fag::Data data(c);
  const int saved = omp_get_max_threads();
  auto runWith = [&](int threads) {
    omp_set_num_threads(threads);
    data.resetOutputs(0);
    const host::Status s = runOperator(data.args());
    omp_set_num_threads(saved);
    EXPECT_TRUE(s) << s.message();
    std::vector<std::vector<double>> outs;
    for (const char *name : {"dq", "dk", "dv", "dsink"})
      outs.push_back(data.output(name));
    return outs;
  };
  const auto first = runWith(saved);
  EXPECT_EQ(first, runWith(saved)) << "two runs";
  EXPECT_EQ(runWith(1), runWith(2)) << "one versus two threads";
  EXPECT_EQ(first, runWith(1)) << "default versus one thread";
  EXPECT_EQ(first, runWith(3)) << "default versus three threads";
}

/// bf16 on a host with fast bf16 products (AMX tiles, or AMD's
/// `vdpbf16ps`): the operator's main kernel takes bf16 operands (BFP), and
/// meets section 8's bounds. A shape no other test uses, so the request is
/// new.
TEST(FlashAttentionScoreGradScenarioChecks, Bf16ProductKernels) {
  auto compiler = jit::Compiler::instance(jit::TargetLevel::Host);
  ASSERT_TRUE(static_cast<bool>(compiler)) << llvm::toString(compiler.takeError());
  fag::Config c = base(DataType::BFloat16, {70, 0, 130}, {90, 5, 130}, 4, 2, 56);
  c.sink = true;
  fag::Data data(c);
  compiler->startRecording();
  const auto seen = compiler->recordedRequests();
  const std::set<jit::Compiler::Request> before(seen.begin(), seen.end());
  checkAgainstReference(data);
  std::vector<jit::Specialization> mains;
  for (const auto &r : compiler->recordedRequests())
    if (r.kernel == "fag_main" && !before.count(r))
      mains.push_back(r.spec);
  ASSERT_EQ(mains.size(), 1u);
  const jit::SpecValue *bfpValue = mains[0].find("BFP");
  const bool bfp = bfpValue && *bfpValue == jit::SpecValue(true);
  EXPECT_EQ(bfp, compiler->hasFastBf16Products());
  if (!compiler->hasFastBf16Products())
    GTEST_SKIP() << "no AMX-BF16 and no fast AVX512-BF16 for the operators' compiler on this "
                    "host: the bf16-product kernels (fag_main with BFP) are not tested, only "
                    "the f32 products";
}

/// Item 17: T1 = T2 = 0 succeeds and writes nothing.
TEST(FlashAttentionScoreGradScenarioChecks, EmptyProblemWritesNothing) {
  fag::Config c = base(DataType::Float, {0}, {0}, 2, 1, 8);
  c.sink = true;
  fag::Data data(c);
  const host::Status s = runOperator(data.args());
  ASSERT_TRUE(s) << s.message();
  for (double x : data.output("dsink"))
    EXPECT_EQ(x, fag::outputSentinel(DataType::Float));
}

/// Outputs that are absent or of shape [0] are not written; dsink without a
/// sink is zeros.
TEST(FlashAttentionScoreGradScenarioChecks, AbsentAndEmptyOutputs) {
  fag::Config c = base(DataType::Float, {5, 7}, {6, 7}, 2, 1, 8);
  fag::Data data(c);
  checkAgainstReference(data); // no sink: dsink compared with the reference's zeros
  for (double x : data.output("dsink"))
    EXPECT_EQ(x, 0.0);

  fag::Config s = c;
  s.sink = true;
  fag::Data withSink(s);
  Args a = withSink.args();
  a.dsinkOut = nullptr;
  ASSERT_TRUE(runOperator(a));
  for (double x : withSink.output("dsink"))
    EXPECT_EQ(x, fag::outputSentinel(DataType::Float)); // not given: untouched

  withSink.resetOutputs(0);
  host::TensorView empty = *withSink.args().dsinkOut;
  empty.shape = {0};
  empty.strides = {1};
  a.dsinkOut = &empty;
  ASSERT_TRUE(runOperator(a));
  for (double x : withSink.output("dsink"))
    EXPECT_EQ(x, fag::outputSentinel(DataType::Float)); // shape [0]: not written
}

} // namespace
