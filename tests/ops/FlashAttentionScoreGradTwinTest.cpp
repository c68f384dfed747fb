//===- FlashAttentionScoreGradTwinTest.cpp - The hand-written twin --------===//
//
// The twin (FlashAttentionScoreGradHandwritten*.cpp) against the float64
// reference with section 8's tolerances, over what it covers: no mask and
// the compressed modes, GQA and MQA, fp32, bf16 and fp16, varlen with empty
// batches, D = 64, 72, 128, both statistics layouts, a sink; bitwise equal
// for one and two threads; and false (nothing written) for what it leaves to
// the operator.
//
//===----------------------------------------------------------------------===//
#include "ops/flash_attention_score_grad/FagTwin.h"
#include "ops/flash_attention_score_grad/FlashAttentionScoreGradTwin.h"
#include "ops/flash_attention_score_grad/FlashAttentionScoreGradData.h"
#include "tests/ops/FlashAttentionScoreGradChecks.h"
#include "ops/samples/SamplesTwin.h"

#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <ostream>
#include <string>
#include <vector>

using namespace tilejit;
using namespace tilejit::ops;
using host::DataType;
using test_support::expectClose;
using test_support::Tolerance;
using test_support::toleranceFor;
using Args = aclnn::FlashAttentionUnpaddingScoreGradV5Args;

namespace {


struct Case {
  std::string name;
  fag::Config config;
};

void PrintTo(const Case &c, std::ostream *os) { *os << c.name; }

fag::Config make(DataType t, std::vector<int64_t> sq, std::vector<int64_t> skv, int64_t n1,
                 int64_t n2, int64_t d, int64_t mode = -1, int64_t pre = 65536,
                 int64_t nxt = 65536) {
  fag::Config c;
  c.dtype = t;
  c.seqQ = std::move(sq);
  c.seqKv = std::move(skv);
  c.n1 = n1;
  c.n2 = n2;
  c.d = d;
  if (mode >= 0) {
    c.sparseMode = mode;
    c.mask = fag::MaskForm::Compressed;
    c.preTokens = pre;
    c.nextTokens = nxt;
  }
  return c;
}

std::vector<Case> cases() {
  const DataType f32 = DataType::Float, f16 = DataType::Float16, bf16 = DataType::BFloat16;
  std::vector<Case> out;
  auto add = [&](std::string name, fag::Config c) {
    c.seed = 500 + out.size();
    out.push_back({std::move(name), std::move(c)});
  };
  add("F32NoMaskD64", make(f32, {100, 64}, {100, 70}, 2, 2, 64));
  {
    fag::Config c = make(f32, {70, 0, 130}, {90, 5, 130}, 4, 1, 72, 3);
    c.sink = true;
    add("F32CausalGqa4x1D72Sink", c);
  }
  add("Bf16BandD128", make(bf16, {200}, {200}, 4, 1, 128, 4, 50, 0));
  {
    fag::Config c = make(f16, {30, 100}, {40, 120}, 4, 2, 64, 7, 200, 0);
    c.trailingEmptyBatches = 2;
    add("F16Mode7Gqa4x2", c);
  }
  {
    fag::Config c = make(bf16, {3, 17, 0, 64, 5}, {5, 17, 9, 0, 1}, 2, 1, 128);
    c.sink = true;
    add("Bf16VarlenEmptyBatchesSink", c);
  }
  {
    fag::Config c = make(f32, {40, 90}, {50, 90}, 2, 1, 64, 6);
    c.prefix = {15, 30};
    add("F32PrefixMode6", c);
  }
  add("F16LeftUpCausalMode2", make(f16, {50}, {80}, 2, 2, 72, 2));
  add("Bf16Mode8", make(bf16, {3, 8, 12}, {4, 9, 13}, 2, 1, 64, 8, 65536, 0));
  add("F32CausalGqa8x2Split", make(f32, {300}, {300}, 8, 2, 64, 3));
  {
    fag::Config c = make(bf16, {33, 65}, {47, 65}, 4, 4, 72, 3);
    c.statsTnd = false;
    c.extraTokensQ = 3;
    c.extraTokensKv = 2;
    add("Bf16LegacyStatsExtraTokens", c);
  }
  add("F16NoMaskMqa", make(f16, {129}, {67}, 4, 1, 128));
  return out;
}

class FlashAttentionScoreGradTwin : public ::testing::TestWithParam<Case> {};

TEST_P(FlashAttentionScoreGradTwin, MatchesReference) {
  if (std::string(handwrittenIsa()) != "avx512")
    GTEST_SKIP() << "the twin runs on AVX-512 hosts only";
  fag::Data data(GetParam().config);
  const Args refArgs = data.argsWithFreshOutputs();
  flashAttentionScoreGradReference(refArgs);
  data.resetOutputs(0);
  ASSERT_TRUE(flashAttentionScoreGradHandwritten(data.args()));
  const Tolerance t = toleranceFor(data.config().dtype);
  for (const char *name : {"dq", "dk", "dv"})
    expectClose(data.output(name, 0), data.output(name, 1), t, name);
  const std::vector<double> x = data.output("dsink", 0), r = data.output("dsink", 1);
  const std::vector<double> scale = fag::sinkGradScale(refArgs);
  ASSERT_EQ(x.size(), r.size());
  for (size_t h = 0; h < r.size(); ++h)
    EXPECT_LE(std::fabs(x[h] - r[h]), t.sinkC * scale[h] + 1e-7)
        << "dsink[" << h << "] = " << x[h] << ", reference " << r[h];
}

TEST_P(FlashAttentionScoreGradTwin, BitwiseEqualForOneAndTwoThreads) {
  if (std::string(handwrittenIsa()) != "avx512")
    GTEST_SKIP() << "the twin runs on AVX-512 hosts only";
  fag::Data data(GetParam().config);
  const int saved = omp_get_max_threads();
  std::vector<std::vector<double>> runs[2];
  for (int threads : {1, 2}) {
    omp_set_num_threads(threads);
    data.resetOutputs(0);
    ASSERT_TRUE(flashAttentionScoreGradHandwritten(data.args()));
    for (const char *name : {"dq", "dk", "dv", "dsink"})
      runs[threads - 1].push_back(data.output(name, 0));
  }
  omp_set_num_threads(saved);
  for (size_t o = 0; o < runs[0].size(); ++o)
    EXPECT_TRUE(runs[0][o] == runs[1][o]) << "output " << o << " differs across thread counts";
}

INSTANTIATE_TEST_SUITE_P(Cases, FlashAttentionScoreGradTwin, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<Case> &i) { return i.param.name; });

// bf16 in both forms whatever the host would choose: f32 panels, and S and
// dP on bf16 pairs where the host has AVX512-BF16.
TEST(FlashAttentionScoreGradTwinBf16Forms, MatchReference) {
  if (std::string(handwrittenIsa()) != "avx512")
    GTEST_SKIP() << "the twin runs on AVX-512 hosts only";
  fag::Config c = make(DataType::BFloat16, {70, 0, 130}, {90, 5, 130}, 4, 2, 72, 3);
  c.sink = true;
  fag::Data data(c);
  const Args refArgs = data.argsWithFreshOutputs();
  flashAttentionScoreGradReference(refArgs);
  fag::Problem p;
  ASSERT_TRUE(fag::validate(data.args(), p));
  const bool hostDot = __builtin_cpu_supports("avx512bf16");
  for (bool dot : {false, true}) {
    if (dot && !hostDot)
      continue;
    data.resetOutputs(0);
    fag::scoreGradAvx512(p, dot);
    const Tolerance t = toleranceFor(DataType::BFloat16);
    for (const char *name : {"dq", "dk", "dv"})
      expectClose(data.output(name, 0), data.output(name, 1), t,
                  std::string(name) + (dot ? " (bf16 pairs)" : " (f32 panels)"));
  }
  // The f32 panels were checked above on any AVX-512 host.
  if (!hostDot)
    GTEST_SKIP() << "no AVX512-BF16 on this host: the twin's bf16-pair form (S and dP on "
                    "vdpbf16ps) is not tested, only its f32 panels";
}

TEST(FlashAttentionScoreGradTwinCoverage, LeavesExplicitMasksAndStridesToTheOperator) {
  fag::Config c = make(DataType::Float, {16}, {16}, 1, 1, 16);
  c.sparseMode = 0;
  c.mask = fag::MaskForm::Shared;
  c.maskDensity = 0.2;
  {
    fag::Data data(c);
    EXPECT_FALSE(flashAttentionScoreGradHandwritten(data.args()));
    EXPECT_EQ(data.output("dq", 0)[0], fag::outputSentinel(DataType::Float));
  }
  c.mask = fag::MaskForm::None;
  c.strided = true;
  fag::Data data(c);
  EXPECT_FALSE(flashAttentionScoreGradHandwritten(data.args()));
}

} // namespace
