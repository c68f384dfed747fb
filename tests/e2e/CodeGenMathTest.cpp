//===- CodeGenMathTest.cpp - Error bounds of the math builtins ------------===//
//
// Sweeps f32 inputs through the JIT-compiled math builtins (exp, log, exp2,
// log2, tanh, sigmoid, erf, sin, cos, pow) against double-precision libm,
// and checks the bounds documented in codegen/llvm/CodeGenMath.cpp and
// docs/dsl.md. The sweeps are dense in bit pattern (every k-th f32 of the
// range, so every binade is covered alike); each runs on both vector widths
// and, for the new builtins, through the scalar code path too. Special
// values (+-0, +-inf, NaN, and the exact cases such as exp2 of an integer)
// must match libm's value rounded to f32 bit for bit.
//
//===----------------------------------------------------------------------===//
#include "jit/Compiler.h"
#include "tests/e2e/TargetLevels.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <string>
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

//===----------------------------------------------------------------------===//
// exp2, log2, tanh, sigmoid, erf, sin, cos, pow
//===----------------------------------------------------------------------===//

namespace {

/// `fn` applied to x as a tile op (vector code) or, with SCALAR, one element
/// at a time (the scalar code path).
std::string mathKernel(const std::string &fn, bool binary) {
  std::string params = binary ? "x: gm<f32>[N], p: gm<f32>[N], y: gm<f32>[N]"
                              : "x: gm<f32>[N], y: gm<f32>[N]";
  std::string scalarCall = fn + (binary ? "(x[j], p[j])" : "(x[j])");
  std::string tileCall = fn + (binary ? "(load(x, [i], [BN]), load(p, [i], [BN]))"
                                      : "(load(x, [i], [BN]))");
  return "kernel f<SCALAR: bool = false, BN: i64 = 4096>(" + params +
         ") grid(cdiv(N, BN)) {\n"
         "  let i = program_id(0) * BN;\n"
         "  if SCALAR {\n"
         "    for j in i .. min(i + BN, N) { y[j] = " + scalarCall + "; }\n"
         "  } else {\n"
         "    store(y, [i], " + tileCall + ");\n"
         "  }\n"
         "}\n";
}

/// One way of running a builtin: a vector width and vector or scalar code.
struct MathPath {
  jit::TargetLevel level;
  bool scalar;
  std::string name() const {
    return std::string(level == jit::TargetLevel::Avx512 ? "avx512" : "avx2") +
           (scalar ? ".scalar" : ".vector");
  }
};

std::vector<MathPath> mathPaths() {
  std::vector<MathPath> out;
  for (jit::TargetLevel level : levels())
    for (bool scalar : {false, true})
      out.push_back({level, scalar});
  return out;
}

/// fn(x) (or fn(x, p)) through `path`.
std::vector<float> runMath(const MathPath &path, const std::string &fn,
                           const std::vector<float> &x,
                           const std::vector<float> *p = nullptr) {
  jit::KernelSource src(fn + ".tile", mathKernel(fn, p != nullptr));
  std::vector<float> y(x.size());
  auto k = jit::Compiler::instance(path.level)
               ->get(src, "f", {{"SCALAR", path.scalar ? "true" : "false"}});
  EXPECT_TRUE(static_cast<bool>(k)) << llvm::toString(k.takeError());
  if (!k)
    return y;
  int64_t n = static_cast<int64_t>(x.size());
  rt::ArgPack args;
  args.tensor(const_cast<float *>(x.data()), {n});
  if (p)
    args.tensor(const_cast<float *>(p->data()), {n});
  args.tensor(y.data(), {n});
  EXPECT_FALSE(static_cast<bool>(k->kernel->launch(args)));
  return y;
}

float fromBits(uint32_t bits) {
  float v;
  std::memcpy(&v, &bits, 4);
  return v;
}

uint32_t toBits(float v) {
  uint32_t bits;
  std::memcpy(&bits, &v, 4);
  return bits;
}

/// About `count` f32 values from `lo` to `hi` (0 <= lo < hi), evenly spaced
/// in bit pattern, with their negations when `bothSigns`.
std::vector<float> bitSweep(float lo, float hi, uint32_t count, bool bothSigns) {
  std::vector<float> out;
  uint32_t a = toBits(lo), b = toBits(hi);
  uint32_t step = std::max<uint32_t>(1, (b - a) / count);
  for (uint64_t bits = a; bits < b; bits += step) {
    out.push_back(fromBits(static_cast<uint32_t>(bits)));
    if (bothSigns)
      out.push_back(-out.back());
  }
  return out;
}

/// Whether `got` is libm's `want` rounded to f32, bit for bit (any NaN for
/// a NaN).
bool sameAsRounded(float got, double want) {
  float w = static_cast<float>(want);
  if (std::isnan(w))
    return std::isnan(got);
  return toBits(got) == toBits(w);
}

/// The largest error over `x` of `y` against `ref`, in ulps of normal
/// results and in subnormal steps (2^-149) of subnormal ones.
struct ErrorStats {
  double normal = 0, subnormal = 0;
  size_t worstNormal = 0; ///< the index of the largest normal error
};

ErrorStats measure(const std::vector<float> &x, const std::vector<float> &y,
                   const std::function<double(size_t)> &ref) {
  ErrorStats s;
  for (size_t i = 0; i < x.size(); ++i) {
    double want = ref(i);
    double err = ulpError(y[i], want);
    if (!(err <= 1e9)) // a NaN where a number was wanted
      err = 1e9;
    bool tiny = std::abs(static_cast<float>(want)) < std::numeric_limits<float>::min();
    double &worst = tiny ? s.subnormal : s.normal;
    if (err > worst) {
      worst = err;
      if (!tiny)
        s.worstNormal = i;
      if (err >= 1e9)
        ADD_FAILURE() << "got " << y[i] << " for " << want << " at x = " << x[i];
    }
  }
  return s;
}

/// Records the measured maximum as a test property (shown in the XML
/// report) and checks it against the documented bound.
void checkBound(const std::string &what, const MathPath &path, double worst,
                double bound, float at = 0) {
  ::testing::Test::RecordProperty(what + "." + path.name(), std::to_string(worst));
  EXPECT_LE(worst, bound) << "max ulp error of " << what << " on " << path.name()
                          << ", at x = " << at;
}

double sigmoidRef(double x) {
  return x >= 0 ? 1 / (1 + std::exp(-x)) : std::exp(x) / (1 + std::exp(x));
}

/// A unary builtin, its double-precision truth, and the bound on its error
/// where the result is normal (ulp) that codegen/llvm/CodeGenMath.cpp and
/// docs/dsl.md state; subnormal results are within 1 subnormal step.
struct UnaryCase {
  const char *fn;
  double (*ref)(double);
  double bound;
};

const UnaryCase kUnaryCases[] = {
    {"exp2", [](double v) { return std::exp2(v); }, 1.0},
    {"log2", [](double v) { return std::log2(v); }, 1.0},
    {"tanh", [](double v) { return std::tanh(v); }, 2.0},
    {"sigmoid", sigmoidRef, 2.0},
    {"erf", [](double v) { return std::erf(v); }, 2.0},
    // f64 inside, one rounding: 0.5 ulp, plus at most 2^-9 where the
    // remainder of a large argument keeps 33 bits.
    {"sin", [](double v) { return std::sin(v); }, 0.51},
    {"cos", [](double v) { return std::cos(v); }, 0.51},
};

const UnaryCase &unaryCase(const std::string &fn) {
  for (const UnaryCase &c : kUnaryCases)
    if (fn == c.fn)
      return c;
  ADD_FAILURE() << "no bound for " << fn;
  return kUnaryCases[0];
}

/// Runs the unary builtin `fn` on `x` through every path: the error within
/// its bound (normal results) and 1 subnormal step (subnormal results), then
/// `specials` bit for bit.
void checkUnary(const std::string &fn, const std::vector<float> &x,
                const std::vector<float> &specials) {
  const UnaryCase &c = unaryCase(fn);
  for (const MathPath &path : mathPaths()) {
    SCOPED_TRACE(fn + " on " + path.name());
    auto y = runMath(path, fn, x);
    ErrorStats e = measure(x, y, [&](size_t i) { return c.ref(x[i]); });
    checkBound(fn, path, e.normal, c.bound, x[e.worstNormal]);
    checkBound(fn + ".subnormal", path, e.subnormal, 1.0);
    auto ys = runMath(path, fn, specials);
    for (size_t i = 0; i < specials.size(); ++i)
      EXPECT_TRUE(sameAsRounded(ys[i], c.ref(specials[i])))
          << fn << "(" << specials[i] << ") = " << ys[i] << ", libm "
          << static_cast<float>(c.ref(specials[i]));
  }
}

const float kInf = std::numeric_limits<float>::infinity();
const float kNaN = std::numeric_limits<float>::quiet_NaN();
const float kMax = std::numeric_limits<float>::max();
const float kMinSub = std::numeric_limits<float>::denorm_min();

} // namespace

TEST(CodeGenMath, Exp2WithinOneUlpAndSpecials) {
  // Normal results, subnormal ones and the overflow edge (x >= 128: +inf).
  std::vector<float> x = bitSweep(0, 126, 400000, true);
  for (float v : bitSweep(126, 152, 20000, false)) {
    x.push_back(-v);
    if (v < 129)
      x.push_back(v);
  }
  // 2^k for every integer k with a nonzero f32 result is exact.
  std::vector<float> specials = {0.0f, -0.0f, kInf, -kInf, kNaN, 1000.0f, -1000.0f};
  for (int k = -149; k <= 127; ++k)
    specials.push_back(static_cast<float>(k));
  checkUnary("exp2", x, specials);
}

TEST(CodeGenMath, Log2WithinOneUlpAndSpecials) {
  std::vector<float> x = bitSweep(kMinSub, kInf, 600000, false);
  // Dense over [0.5, 2): every significand pattern class, and the results
  // just below a power of two (near sqrt(2), 2^(1/4), ...) where an ulp is
  // smallest against the error (an f32 sum of the parts reached 1.3 there).
  for (float v : bitSweep(0.5f, 2.0f, 1000000, false))
    x.push_back(v);
  // log2(2^k) = k exactly, subnormal powers included.
  std::vector<float> specials = {0.0f, -0.0f, -1.0f, -kInf, kInf, kNaN, -kMinSub};
  for (int k = -149; k <= 127; ++k)
    specials.push_back(std::ldexp(1.0f, k));
  checkUnary("log2", x, specials);
}

TEST(CodeGenMath, TanhWithinTwoUlpAndSaturates) {
  std::vector<float> x = bitSweep(kMinSub, kMax, 600000, true);
  // Dense where the two formulas meet (0.625) and where tanh reaches 1.
  for (float v : bitSweep(0.5f, 10.0f, 200000, true))
    x.push_back(v);
  checkUnary("tanh", x, {0.0f, -0.0f, kInf, -kInf, kNaN, 50.0f, -50.0f, kMax, -kMax, kMinSub});
}

TEST(CodeGenMath, SigmoidWithinTwoUlpAndSaturates) {
  std::vector<float> x = bitSweep(kMinSub, kMax, 600000, true);
  for (float v : bitSweep(1.0f, 110.0f, 200000, true))
    x.push_back(v);
  checkUnary("sigmoid", x, {0.0f, -0.0f, kInf, -kInf, kNaN, 200.0f, -200.0f, kMax, -kMax});
}

TEST(CodeGenMath, ErfWithinTwoUlpAndSpecials) {
  std::vector<float> x = bitSweep(kMinSub, kMax, 600000, true);
  // Dense over [0.5, 4.5]: both formulas, both tail polynomials, the clamp.
  for (float v : bitSweep(0.5f, 4.5f, 200000, true))
    x.push_back(v);
  checkUnary("erf", x, {0.0f, -0.0f, kInf, -kInf, kNaN, 10.0f, -10.0f, kMinSub, -kMinSub});
}

// Every finite f32: below 2^28 the two-part reduction, above it the
// Payne-Hanek one; the specials include +-0 (sin keeps the sign).
TEST(CodeGenMath, SinCosNearlyCorrectlyRoundedOnEveryFiniteInput) {
  std::vector<float> x = bitSweep(kMinSub, kMax, 1000000, true);
  // f32 neighbours of multiples of pi/2 leave the smallest remainders.
  for (int k = 1; k < 200000; k += 7) {
    float v = static_cast<float>(k * 1.5707963267948966);
    x.push_back(v);
    x.push_back(std::nextafter(v, 0.0f));
    x.push_back(std::nextafter(v, kInf));
  }
  std::vector<float> specials = {0.0f, -0.0f, kInf, -kInf, kNaN, kMax, -kMax, kMinSub};
  checkUnary("sin", x, specials);
  checkUnary("cos", x, specials);
}

// A vector whose lanes need both reductions: the large lanes take the
// branch, the others keep their values.
TEST(CodeGenMath, SinCosMixLargeAndSmallLanes) {
  std::vector<float> x;
  for (int i = 0; i < 4096; ++i)
    x.push_back(i % 3 == 0 ? std::ldexp(1.0f + i / 4096.0f, 28 + i % 90)
                           : (i - 2048) * 0.01f);
  for (const char *fn : {"sin", "cos"})
    for (const MathPath &path : mathPaths()) {
      auto y = runMath(path, fn, x);
      ErrorStats e = measure(x, y, [&](size_t i) { return unaryCase(fn).ref(x[i]); });
      EXPECT_LE(e.normal, unaryCase(fn).bound) << fn << " on " << path.name();
    }
}

// Computed in f64 (y log2|x| to 2^-37) and rounded once.
TEST(CodeGenMath, PowNearlyCorrectlyRoundedAndFollowsC) {
  // Bases over every binade (subnormal to the largest), exponents dense in
  // [-40, 40] plus integers and large values: results overflow, underflow
  // into the subnormals and to zero; a negative base pairs with integer
  // exponents (others are the NaN case, checked below).
  std::vector<float> bases = bitSweep(kMinSub, kMax, 1500, false);
  std::vector<float> exps = bitSweep(0.0f, 40.0f, 150, true);
  for (int k = -12; k <= 12; ++k)
    exps.push_back(static_cast<float>(k));
  for (float v : {0.5f, -0.5f, 1e5f, -1e5f, 3e9f, -3e9f})
    exps.push_back(v);
  std::vector<float> x, p;
  for (float b : bases)
    for (float e : exps) {
      x.push_back(b);
      p.push_back(e);
      if (std::nearbyint(e) == e) {
        x.push_back(-b);
        p.push_back(e);
      }
    }
  // C99's special cases: every pair of these.
  std::vector<float> sv = {0.0f, -0.0f, 1.0f, -1.0f, kInf, -kInf, kNaN, 0.5f, -0.5f,
                           2.0f, -2.0f, 3.0f, -3.0f, 0.25f, -2.5f, 1e30f, -1e30f};
  std::vector<float> sx, sp;
  for (float a : sv)
    for (float b : sv) {
      sx.push_back(a);
      sp.push_back(b);
    }
  for (const MathPath &path : mathPaths()) {
    SCOPED_TRACE("pow on " + path.name());
    auto y = runMath(path, "pow", x, &p);
    ErrorStats e = measure(x, y, [&](size_t i) {
      return std::pow(static_cast<double>(x[i]), static_cast<double>(p[i]));
    });
    checkBound("pow", path, e.normal, 0.51, x[e.worstNormal]);
    checkBound("pow.subnormal", path, e.subnormal, 0.51);
    auto ys = runMath(path, "pow", sx, &sp);
    for (size_t i = 0; i < sx.size(); ++i) {
      double want = std::pow(static_cast<double>(sx[i]), static_cast<double>(sp[i]));
      EXPECT_TRUE(sameAsRounded(ys[i], want))
          << "pow(" << sx[i] << ", " << sp[i] << ") = " << ys[i] << ", libm "
          << static_cast<float>(want);
    }
  }
}

// Every f32 bit pattern through the vector code of the builtins named in
// TILEJIT_MATH_EXHAUSTIVE ("all", or a list such as "log2,tanh"), in chunks
// of 2^24, on both widths: the bounds above on all 2^32 inputs, NaN in
// giving NaN out. Minutes per builtin, so skipped unless asked for.
TEST(CodeGenMath, ExhaustiveWhenAsked) {
  const char *asked = std::getenv("TILEJIT_MATH_EXHAUSTIVE");
  if (!asked)
    GTEST_SKIP() << "TILEJIT_MATH_EXHAUSTIVE=all (or a list of builtins) runs it";
  std::string list = std::string(",") + asked + ",";
  const uint64_t chunk = uint64_t(1) << 24;
  std::vector<float> x(chunk);
  std::vector<double> want(chunk);
  for (const UnaryCase &c : kUnaryCases) {
    if (list != ",all," && list.find(std::string(",") + c.fn + ",") == std::string::npos)
      continue;
    ErrorStats worst[2];
    float worstAt[2] = {0, 0};
    std::vector<MathPath> paths;
    for (jit::TargetLevel level : levels())
      paths.push_back({level, false});
    for (uint64_t first = 0; first < (uint64_t(1) << 32); first += chunk) {
      for (uint64_t i = 0; i < chunk; ++i) {
        x[i] = fromBits(static_cast<uint32_t>(first + i));
        want[i] = c.ref(x[i]);
      }
      for (size_t p = 0; p < paths.size(); ++p) {
        auto y = runMath(paths[p], c.fn, x);
        for (uint64_t i = 0; i < chunk; ++i) {
          if (std::isnan(want[i])) {
            if (!std::isnan(y[i]))
              ADD_FAILURE() << c.fn << "(" << x[i] << ") = " << y[i] << ", not NaN";
            continue;
          }
          double err = ulpError(y[i], want[i]);
          if (!(err <= 1e9))
            err = 1e9;
          bool tiny = std::abs(static_cast<float>(want[i])) < std::numeric_limits<float>::min();
          double &w = tiny ? worst[p].subnormal : worst[p].normal;
          if (err > w) {
            w = err;
            if (!tiny)
              worstAt[p] = x[i];
          }
        }
      }
    }
    for (size_t p = 0; p < paths.size(); ++p) {
      checkBound(std::string(c.fn) + ".exhaustive", paths[p], worst[p].normal, c.bound,
                 worstAt[p]);
      checkBound(std::string(c.fn) + ".exhaustive.subnormal", paths[p], worst[p].subnormal,
                 1.0);
    }
  }
}
