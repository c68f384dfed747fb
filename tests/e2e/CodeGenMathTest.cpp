//===- CodeGenMathTest.cpp - Error bounds of the exp/log polynomials ------===//
//
// Sweeps every 97th f32 bit pattern of the interesting range (and the special
// values) through JIT-compiled exp and log, on both vector widths, against
// double-precision libm, and checks the documented bounds (CodeGenMath.cpp).
//
//===----------------------------------------------------------------------===//
#include "jit/Compiler.h"
#include "tests/e2e/TargetLevels.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

using namespace tilejit;
using tilejit::test_support::levels;

namespace {

const char *kMath = R"(
kernel unary<OP: enum(EXP, LOG), BN: i64 = 4096>(x: gm<f32>[N], y: gm<f32>[N]) grid(cdiv(N, BN)) {
  let i = program_id(0) * BN;
  let t = load(x, [i], [BN]);
  if OP == EXP { store(y, [i], exp(t)); } else { store(y, [i], log(t)); }
}
)";

/// Error of `got` against exact `want`, in units of the last place of `want`
/// rounded to f32 (subnormal spacing for tiny results).
double ulpError(float got, double want) {
  float w = static_cast<float>(want);
  if (std::isinf(w) || w == 0)
    return got == w ? 0 : 1e9;
  int e;
  std::frexp(w, &e);
  double ulp = std::ldexp(1.0, std::max(e - 24, -149));
  return std::abs(static_cast<double>(got) - want) / ulp;
}

std::vector<float> run(jit::Compiler &c, const char *op, const std::vector<float> &x) {
  static jit::KernelSource src("math.tile", kMath);
  std::vector<float> y(x.size());
  auto k = c.get(src, "unary", {{"OP", op}});
  EXPECT_TRUE(static_cast<bool>(k));
  rt::ArgPack args;
  args.tensor(const_cast<float *>(x.data()), {static_cast<int64_t>(x.size())})
      .tensor(y.data(), {static_cast<int64_t>(y.size())});
  EXPECT_FALSE(static_cast<bool>(k->kernel->launch(args)));
  return y;
}

} // namespace

TEST(CodeGenMath, ExpWithinTwoUlpAndSpecials) {
  std::vector<float> x;
  for (float v = -87.3f; v < 88.7f; v = std::nextafter(v, 100.f) + std::abs(v) * 3e-5f + 1e-7f)
    x.push_back(v);
  size_t normal = x.size();
  for (float v : {-INFINITY, INFINITY, NAN, 89.0f, -104.0f, -100.0f, 0.0f, -0.0f})
    x.push_back(v);
  for (jit::TargetLevel level : levels()) {
    auto y = run(*jit::Compiler::instance(level), "EXP", x);
    double worst = 0;
    for (size_t i = 0; i < normal; ++i)
      worst = std::max(worst, ulpError(y[i], std::exp(static_cast<double>(x[i]))));
    EXPECT_LE(worst, 2.0) << "max ulp error of exp";
    EXPECT_EQ(y[normal + 0], 0.0f);
    EXPECT_EQ(y[normal + 1], INFINITY);
    EXPECT_TRUE(std::isnan(y[normal + 2]));
    EXPECT_EQ(y[normal + 3], INFINITY);
    EXPECT_EQ(y[normal + 4], 0.0f);
    // exp(-100) is subnormal: within one subnormal step.
    EXPECT_LE(ulpError(y[normal + 5], std::exp(-100.0)), 1.0);
    EXPECT_EQ(y[normal + 6], 1.0f);
    EXPECT_EQ(y[normal + 7], 1.0f);
  }
}

// The edges: subnormal results (within one subnormal step: AVX-512 scales
// with one rounding, AVX2 in two steps) down to 0, and the overflow to +inf.
TEST(CodeGenMath, ExpSubnormalAndOverflowEdges) {
  std::vector<float> x;
  for (float v = -105.0f; v < -87.3f; v += 0.00173f)
    x.push_back(v);
  size_t low = x.size();
  for (float v = 88.70f; v < 89.5f; v += 0.00031f)
    x.push_back(v);
  for (jit::TargetLevel level : levels()) {
    auto y = run(*jit::Compiler::instance(level), "EXP", x);
    double worst = 0;
    for (size_t i = 0; i < low; ++i)
      worst = std::max(worst, ulpError(y[i], std::exp(static_cast<double>(x[i]))));
    EXPECT_LE(worst, 1.0) << "max error in subnormal steps";
    for (size_t i = low; i < x.size(); ++i) {
      double want = std::exp(static_cast<double>(x[i]));
      if (want > 3.4028235677973366e38 * (1 + 0x1p-25))
        EXPECT_EQ(y[i], INFINITY) << x[i];
      else
        EXPECT_LE(ulpError(y[i], want), 2.0) << x[i];
    }
  }
}

TEST(CodeGenMath, LogWithinTwoUlpAndSpecials) {
  std::vector<float> x;
  for (uint32_t bits = 1; bits < 0x7f800000u; bits += 9973) {
    float v;
    std::memcpy(&v, &bits, 4);
    x.push_back(v);
  }
  size_t swept = x.size();
  for (float v : {0.0f, -1.0f, INFINITY, NAN, 1.0f})
    x.push_back(v);
  for (jit::TargetLevel level : levels()) {
    auto y = run(*jit::Compiler::instance(level), "LOG", x);
    double worst = 0;
    for (size_t i = 0; i < swept; ++i)
      worst = std::max(worst, ulpError(y[i], std::log(static_cast<double>(x[i]))));
    EXPECT_LE(worst, 2.0) << "max ulp error of log";
    EXPECT_EQ(y[swept + 0], -INFINITY);
    EXPECT_TRUE(std::isnan(y[swept + 1]));
    EXPECT_EQ(y[swept + 2], INFINITY);
    EXPECT_TRUE(std::isnan(y[swept + 3]));
    EXPECT_EQ(y[swept + 4], 0.0f);
  }
}
