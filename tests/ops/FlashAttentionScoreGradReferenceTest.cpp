//===- FlashAttentionScoreGradReferenceTest.cpp - The oracle checked ------===//
//
// The float64 reference of
// ../shared/spec/flash_attention_unpadding_score_grad_v5.md section 4
// against closed forms (scenario 1) and against finite differences of the
// test-data builder's float64 forward of section 3 (scenario 18): every
// pseType and pse form, sink on and off, every sparse mode, dropout on and
// off, rope. The builder and the reference read the arguments
// independently, so agreement checks both readings.
//
//===----------------------------------------------------------------------===//
#include "ops/flash_attention_score_grad/FlashAttentionScoreGradTwin.h"
#include "ops/flash_attention_score_grad/FlashAttentionScoreGradData.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <ostream>
#include <string>
#include <vector>

using namespace tilejit;
using namespace tilejit::ops;
using host::DataType;

namespace {

/// Runs the reference into the builder's second output set.
void runReference(fag::Data &data) {
  const auto args = data.argsWithFreshOutputs();
  flashAttentionScoreGradReference(args);
}

//===----------------------------------------------------------------------===//
// Scenario 1: the closed form
//===----------------------------------------------------------------------===//

fag::Config scalarConfig(bool sink) {
  fag::Config c;
  c.seqQ = {1};
  c.seqKv = {1};
  c.d = 1;
  c.sink = sink;
  c.sinkValues = {0.3f};
  c.seed = 7;
  return c;
}

TEST(FlashAttentionScoreGradReference, ClosedFormSingleKey) {
  fag::Data data(scalarConfig(false));
  runReference(data);
  // One key: P = 1, O = v, Δ = dy·v = dP, so dS = 0.
  const double dy = data.input("dy", 0);
  EXPECT_EQ(data.output("dq", 1)[0], 0.0);
  EXPECT_EQ(data.output("dk", 1)[0], 0.0);
  EXPECT_NEAR(data.output("dv", 1)[0], dy, 1e-7);
  EXPECT_EQ(data.output("dsink", 1)[0], 0.0); // no sink: zeros
}

TEST(FlashAttentionScoreGradReference, ClosedFormSingleKeyWithSink) {
  fag::Data data(scalarConfig(true));
  runReference(data);
  const double q = data.input("query", 0), k = data.input("keyIn", 0);
  const double v = data.input("value", 0), dy = data.input("dy", 0);
  const double theta = 0.3f;
  const double sigma = 1.0; // D^-0.5 with D = 1
  const double s = sigma * q * k;
  const double p = 1 / (1 + std::exp(theta - s)); // sigmoid(s - θ)
  const double ds = p * (1 - p) * dy * v;         // P·(dP − P·dP)
  EXPECT_NEAR(data.output("dq", 1)[0], sigma * ds * k, 1e-6);
  EXPECT_NEAR(data.output("dk", 1)[0], sigma * ds * q, 1e-6);
  EXPECT_NEAR(data.output("dv", 1)[0], p * dy, 1e-6);
  EXPECT_NEAR(data.output("dsink", 1)[0], -(1 - p) * p * dy * v, 1e-6);
}

//===----------------------------------------------------------------------===//
// Readings that must not change the result
//===----------------------------------------------------------------------===//

fag::Config smallConfig() {
  fag::Config c;
  c.seqQ = {3, 5, 0, 4};
  c.seqKv = {4, 3, 2, 4};
  c.n1 = 4;
  c.n2 = 2;
  c.d = 5;
  c.dv = 3;
  c.sink = true;
  c.mask = fag::MaskForm::PerBatchHead;
  c.maskDensity = 0.3;
  c.sparseMode = 1;
  c.pse = fag::PseForm::Full;
  c.pseType = 0;
  c.keepProb = 0.8;
  c.extraTokensQ = 2;
  c.extraTokensKv = 1;
  c.trailingEmptyBatches = 1;
  return c;
}

void expectSameOutputs(fag::Data &a, fag::Data &b) {
  for (const char *name : {"dq", "dk", "dv", "dsink"})
    EXPECT_EQ(a.output(name, 1), b.output(name, 1)) << name;
}

TEST(FlashAttentionScoreGradReference, StridedViewsReadAndWrittenThroughStrides) {
  fag::Config c = smallConfig();
  fag::Data plain(c);
  c.strided = true;
  fag::Data strided(c);
  runReference(plain);
  runReference(strided);
  expectSameOutputs(plain, strided);
  EXPECT_TRUE(strided.outputGapsIntact(1));
}

TEST(FlashAttentionScoreGradReference, StatsLayoutsAgree) {
  fag::Config c = smallConfig();
  fag::Data tnd(c);
  c.statsTnd = false;
  fag::Data legacy(c);
  runReference(tnd);
  runReference(legacy);
  expectSameOutputs(tnd, legacy);
}

TEST(FlashAttentionScoreGradReference, TokensOutsideBatchesGetZeros) {
  fag::Data data(smallConfig());
  runReference(data);
  const int64_t n1 = 4, n2 = 2, d = 5, dv = 3;
  const int64_t t1 = 12, t2 = 13; // batch tokens; one more kv, two more q
  const std::vector<double> dq = data.output("dq", 1);
  const std::vector<double> dk = data.output("dk", 1), dvv = data.output("dv", 1);
  for (size_t e = static_cast<size_t>(t1 * n1 * d); e < dq.size(); ++e)
    EXPECT_EQ(dq[e], 0.0);
  for (size_t e = static_cast<size_t>(t2 * n2 * d); e < dk.size(); ++e)
    EXPECT_EQ(dk[e], 0.0);
  for (size_t e = static_cast<size_t>(t2 * n2 * dv); e < dvv.size(); ++e)
    EXPECT_EQ(dvv[e], 0.0);
}

//===----------------------------------------------------------------------===//
// Scenario 18: finite differences of the forward
//===----------------------------------------------------------------------===//

double loss(const fag::Data &data) {
  const fag::Forward f = data.forward();
  double sum = 0;
  for (size_t e = 0; e < f.o.size(); ++e)
    sum += data.input("dy", static_cast<int64_t>(e)) * f.o[e];
  return sum;
}

struct FdCase {
  std::string name;
  fag::Config config;
};

void PrintTo(const FdCase &c, std::ostream *os) { *os << c.name; }

/// Second-order central difference with the steps actually stored (the
/// perturbed value is rounded to the tensor's dtype).
double derivative(fag::Data &data, const std::string &name, int64_t e, double eps, double f0) {
  const double x0 = data.input(name, e);
  data.setInput(name, e, x0 + eps);
  const double h1 = data.input(name, e) - x0;
  const double fp = loss(data);
  data.setInput(name, e, x0 - eps);
  const double h2 = x0 - data.input(name, e);
  const double fm = loss(data);
  data.setInput(name, e, x0);
  return (h2 * h2 * (fp - f0) + h1 * h1 * (f0 - fm)) / (h1 * h2 * (h1 + h2));
}

class FlashAttentionScoreGradReferenceFd : public ::testing::TestWithParam<FdCase> {};

TEST_P(FlashAttentionScoreGradReferenceFd, GradientsMatchFiniteDifferences) {
  fag::Data data(GetParam().config);
  runReference(data);
  const double f0 = loss(data);
  struct Pair {
    const char *input, *grad;
    double eps, rtol;
  };
  const Pair pairs[] = {{"query", "dq", 1e-3, 2e-5},       {"keyIn", "dk", 1e-3, 2e-5},
                        {"value", "dv", 1e-3, 2e-5},       {"sink", "dsink", 1e-3, 2e-5},
                        {"queryRope", "dqRope", 1e-2, 2e-3}, {"keyInRope", "dkRope", 1e-2, 2e-3}};
  int checked = 0;
  for (const Pair &p : pairs) {
    const int64_t n = data.inputNumel(p.input);
    if (n == 0)
      continue;
    const std::vector<double> grad = data.output(p.grad, 1);
    double scale = 0;
    for (double g : grad)
      scale = std::max(scale, std::fabs(g));
    const int64_t samples = std::min<int64_t>(n, 14);
    for (int64_t s = 0; s < samples; ++s) {
      const int64_t e = (s * n) / samples + (s * 7) % std::max<int64_t>(1, n / samples);
      const double fd = derivative(data, p.input, e, p.eps, f0);
      const double ref = grad[static_cast<size_t>(e)];
      EXPECT_NEAR(ref, fd, p.rtol * scale + 1e-7) << p.grad << "[" << e << "]";
      ++checked;
    }
  }
  EXPECT_GT(checked, 0);
}

fag::Config fdBase() {
  fag::Config c;
  c.seqQ = {3, 5, 0, 4};
  c.seqKv = {4, 3, 2, 4};
  c.n1 = 2;
  c.n2 = 1;
  c.d = 4;
  c.dv = 3;
  c.extraTokensQ = 1;
  c.extraTokensKv = 1;
  c.scale = 0.7;
  return c;
}

void setMode(fag::Config &c, int64_t mode) {
  c.sparseMode = mode;
  c.mask = fag::MaskForm::Compressed;
  switch (mode) {
  case 0:
    c.mask = fag::MaskForm::Shared;
    c.maskDensity = 0.25;
    c.preTokens = 2;
    c.nextTokens = 1;
    break;
  case 1:
    c.mask = fag::MaskForm::PerBatchHead;
    c.maskDensity = 0.3;
    break;
  case 4:
    c.preTokens = 2;
    c.nextTokens = 1;
    break;
  case 6:
    c.prefix.clear();
    for (size_t u = 0; u < c.seqQ.size(); ++u)
      c.prefix.push_back(std::min(c.seqKv[u], std::max<int64_t>(0, c.seqKv[u] - c.seqQ[u]) + 1));
    break;
  case 7:
    c.preTokens = 4;
    c.nextTokens = 0;
    break;
  case 8:
    c.preTokens = 4;
    c.nextTokens = 1;
    break;
  default:
    break;
  }
}

std::vector<FdCase> fdCases() {
  std::vector<FdCase> cases;
  const char *pseNames[] = {"NoPse", "Type0Full", "Type1PerKv", "Type2Slopes", "Type3SlopesB"};
  for (int64_t mode : {0, 1, 2, 3, 4, 6, 7, 8})
    for (int pse = 0; pse < 5; ++pse)
      for (bool sink : {false, true})
        for (bool drop : {false, true}) {
          fag::Config c = fdBase();
          setMode(c, mode);
          switch (pse) {
          case 1:
            c.pse = fag::PseForm::Full;
            c.pseType = 0;
            break;
          case 2:
            c.pse = fag::PseForm::PerKv;
            c.pseType = 1;
            break;
          case 3:
            c.pse = fag::PseForm::Slopes;
            c.pseType = 2;
            break;
          case 4:
            c.pse = fag::PseForm::Slopes;
            c.pseType = 3;
            c.pseBatches = 4;
            c.qStartGiven = c.kvStartGiven = true;
            c.qStart = 3;
            c.kvStart = 1;
            break;
          default:
            break;
          }
          c.sink = sink;
          if (drop)
            c.keepProb = 0.75;
          c.seed = static_cast<uint64_t>(100 + cases.size());
          cases.push_back({"Mode" + std::to_string(mode) + pseNames[pse] +
                               (sink ? "Sink" : "") + (drop ? "Dropout" : ""),
                           c});
        }
  // The ALiBi-compressed bias (equal lengths, causal modes), Bp = 1 and B.
  for (int64_t mode : {2, 3})
    for (int64_t type : {0, 1})
      for (int64_t bp : {1, 3}) {
        fag::Config c = fdBase();
        c.seqQ = {4, 5, 3};
        c.seqKv = {4, 5, 3};
        setMode(c, mode);
        c.pse = fag::PseForm::AlibiCompressed;
        c.pseType = type;
        c.pseBatches = bp;
        c.sink = bp == 3;
        c.seed = static_cast<uint64_t>(100 + cases.size());
        cases.push_back({"Mode" + std::to_string(mode) + "Alibi" + std::to_string(type) + "Bp" +
                             std::to_string(bp),
                         c});
      }
  // Rope (bf16 parts over fp32 q, k, v so that O stays exact enough).
  for (int64_t mode : {0, 3}) {
    fag::Config c = fdBase();
    setMode(c, mode);
    c.dr = 8;
    c.d = 8;
    c.sink = mode == 3;
    c.seed = static_cast<uint64_t>(100 + cases.size());
    cases.push_back({"Mode" + std::to_string(mode) + "Rope", c});
  }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(FlashAttentionScoreGradReference, FlashAttentionScoreGradReferenceFd, ::testing::ValuesIn(fdCases()),
                         [](const ::testing::TestParamInfo<FdCase> &info) {
                           return info.param.name;
                         });

} // namespace
