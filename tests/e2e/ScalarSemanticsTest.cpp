//===- ScalarSemanticsTest.cpp - Folded and generated code agree, bit for bit ===//
//
// Every scalar rule of docs/dsl.md (sections 1, 5, 8.6, 8.9) has one meaning:
// the front end's literal arithmetic, the constant folder and the generated
// code (tiles and scalars, AVX2 and AVX-512, plain and debug builds) give the
// same bits. Each case computes its operands both as literals, which the
// compiler folds, and as tensor elements read at run time, which it cannot,
// and compares both with a reference computed here, independently of the
// compiler's dsl/ir/ScalarSemantics.h: integer ops in the kind's own C++
// type, float->int casts by long double truncation and clamping, int->float
// casts by searching the nearest representable value, min/max and NaNs by
// their definitions.
//
//===----------------------------------------------------------------------===//
#include "TargetLevels.h"

#include "jit/Compiler.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

using namespace tilejit;

namespace {

//===----------------------------------------------------------------------===//
// Running kernels in every mode
//===----------------------------------------------------------------------===//

struct Mode {
  jit::TargetLevel level;
  bool debug;
  std::string name() const {
    return std::string(level == jit::TargetLevel::Avx2 ? "avx2" : "avx512") +
           (debug ? ".debug" : "");
  }
};

std::vector<Mode> modes() {
  std::vector<Mode> out;
  for (jit::TargetLevel l : test_support::levels())
    for (bool debug : {false, true})
      out.push_back({l, debug});
  return out;
}

/// A tensor argument: raw bytes of `count` elements of `type`.
struct Buffer {
  rt::ElemType type;
  size_t elemBytes;
  std::vector<int64_t> sizes;
  std::vector<uint8_t> bytes;
  Buffer(rt::ElemType t, size_t e, std::vector<int64_t> s) : type(t), elemBytes(e), sizes(s) {
    size_t n = 1;
    for (int64_t d : s)
      n *= static_cast<size_t>(d);
    bytes.assign(n * e, 0xAB); // a pattern no case expects
  }
  template <class T> T at(size_t i) const {
    T v;
    std::memcpy(&v, bytes.data() + i * sizeof(T), sizeof(T));
    return v;
  }
  template <class T> void set(size_t i, T v) {
    std::memcpy(bytes.data() + i * sizeof(T), &v, sizeof(T));
  }
};

/// Compiles kernel `k` of `source` in `mode` and launches it on `args`.
void run(const std::string &source, std::vector<Buffer *> args, Mode mode) {
  auto compiler = jit::Compiler::instance(mode.level);
  ASSERT_TRUE(static_cast<bool>(compiler)) << llvm::toString(compiler.takeError());
  jit::KernelSource src("scalar-semantics.tile", source);
  jit::CompileOptions options;
  options.debug = mode.debug;
  auto k = compiler->get(src, "k", {}, options);
  ASSERT_TRUE(static_cast<bool>(k)) << llvm::toString(k.takeError()) << "\n" << source;
  rt::ArgPack pack;
  for (Buffer *b : args)
    pack.tensor(b->type, b->bytes.data(), b->sizes);
  llvm::Error err = k->kernel->launch(pack);
  ASSERT_FALSE(static_cast<bool>(err)) << llvm::toString(std::move(err));
}

//===----------------------------------------------------------------------===//
// Kinds
//===----------------------------------------------------------------------===//

template <class T> struct KindOf;
template <> struct KindOf<int8_t> { static constexpr const char *name = "i8"; static constexpr rt::ElemType type = rt::ElemType::I8; };
template <> struct KindOf<uint8_t> { static constexpr const char *name = "u8"; static constexpr rt::ElemType type = rt::ElemType::U8; };
template <> struct KindOf<int16_t> { static constexpr const char *name = "i16"; static constexpr rt::ElemType type = rt::ElemType::I16; };
template <> struct KindOf<uint16_t> { static constexpr const char *name = "u16"; static constexpr rt::ElemType type = rt::ElemType::U16; };
template <> struct KindOf<int32_t> { static constexpr const char *name = "i32"; static constexpr rt::ElemType type = rt::ElemType::I32; };
template <> struct KindOf<uint32_t> { static constexpr const char *name = "u32"; static constexpr rt::ElemType type = rt::ElemType::U32; };
template <> struct KindOf<int64_t> { static constexpr const char *name = "i64"; static constexpr rt::ElemType type = rt::ElemType::I64; };

/// An integer as a DSL literal expression (INT64_MIN has no literal).
std::string intLiteral(int64_t v) {
  if (v == std::numeric_limits<int64_t>::min())
    return "(-9223372036854775807 - 1)";
  return v < 0 ? "(" + std::to_string(v) + ")" : std::to_string(v);
}

/// An f32 as a DSL literal expression, exactly (nine significant digits
/// name one f32).
std::string floatLiteral(float f) {
  if (std::isnan(f))
    return std::signbit(f) ? "(-nan)" : "nan";
  if (std::isinf(f))
    return f < 0 ? "(-inf)" : "inf";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.9g", static_cast<double>(f));
  std::string s = buf;
  if (s.find_first_of(".e") == std::string::npos)
    s += ".0";
  return std::signbit(f) ? "(" + s + ")" : s;
}

uint32_t bitsOf(float f) { return std::bit_cast<uint32_t>(f); }
constexpr uint32_t kCanonicalNaN = 0x7fc00000u;

//===----------------------------------------------------------------------===//
// References
//===----------------------------------------------------------------------===//

/// An integer op in the kind's own type: wrapping, x / 0 = x % 0 = 0,
/// MIN / -1 = MIN and MIN % -1 = 0, shift amounts modulo the width.
template <class T> T referenceInt(const std::string &op, T a, T b) {
  constexpr unsigned width = sizeof(T) * 8;
  using U = std::make_unsigned_t<T>;
  uint64_t ua = static_cast<uint64_t>(a), ub = static_cast<uint64_t>(b);
  if (op == "+") return static_cast<T>(ua + ub);
  if (op == "-") return static_cast<T>(ua - ub);
  if (op == "*") return static_cast<T>(ua * ub);
  if (op == "/" || op == "%") {
    if (b == 0)
      return 0;
    if (std::is_signed_v<T> && b == T(-1))
      return op == "/" ? static_cast<T>(0 - ua) : T(0);
    return op == "/" ? static_cast<T>(a / b) : static_cast<T>(a % b);
  }
  if (op == "min") return a < b ? a : b;
  if (op == "max") return a < b ? b : a;
  if (op == "&") return static_cast<T>(a & b);
  if (op == "|") return static_cast<T>(a | b);
  if (op == "^") return static_cast<T>(a ^ b);
  unsigned amount = static_cast<unsigned>(static_cast<U>(b) % width);
  if (op == "<<") return static_cast<T>(static_cast<U>(static_cast<U>(a) << amount));
  if (op == ">>") return static_cast<T>(a >> amount);
  if (op == "<") return a < b;
  ADD_FAILURE() << "no reference for " << op;
  return 0;
}

float canonical(float r) { return std::isnan(r) ? std::bit_cast<float>(kCanonicalNaN) : r; }

/// An f32 op: IEEE-754 in round-to-nearest-even, a NaN result canonical;
/// min/max give NaN if either operand is NaN and order -0 below +0.
float referenceFloat(const std::string &op, float a, float b) {
  if (op == "min" || op == "max") {
    if (std::isnan(a) || std::isnan(b))
      return std::bit_cast<float>(kCanonicalNaN);
    if (a == 0 && b == 0) { // zeros: min is -0 if either is, max only if both are
      bool negative = op == "min" ? std::signbit(a) || std::signbit(b)
                                  : std::signbit(a) && std::signbit(b);
      return negative ? -0.0f : 0.0f;
    }
    return (op == "min") == (a < b) ? a : b;
  }
  if (op == "+") return canonical(a + b);
  if (op == "-") return canonical(a - b);
  if (op == "*") return canonical(a * b);
  if (op == "/") return canonical(a / b);
  if (op == "<") return a < b ? 1.0f : 0.0f;
  ADD_FAILURE() << "no reference for " << op;
  return 0;
}

/// float -> integer kind T: toward zero, saturating, NaN -> 0.
template <class T> T referenceFloatToInt(float f) {
  if (std::isnan(f))
    return 0;
  long double t = std::trunc(static_cast<long double>(f));
  if (t <= static_cast<long double>(std::numeric_limits<T>::min()))
    return std::numeric_limits<T>::min();
  if (t >= static_cast<long double>(std::numeric_limits<T>::max()))
    return std::numeric_limits<T>::max();
  return static_cast<T>(t);
}

/// A float format by its bit patterns: the value of a non-negative finite
/// pattern, the largest finite pattern and the pattern of +inf.
struct Format {
  long double (*value)(uint32_t);
  uint32_t maxFinite, inf, sign;
};
long double f32Value(uint32_t b) { return std::bit_cast<float>(b); }
long double bf16Value(uint32_t b) { return std::bit_cast<float>(b << 16); }
long double f16Value(uint32_t b) {
  uint32_t e = b >> 10, m = b & 0x3ff;
  return e ? std::ldexp(static_cast<long double>(1024 + m), static_cast<int>(e) - 25)
           : std::ldexp(static_cast<long double>(m), -24);
}
const Format kF32{f32Value, 0x7f7fffffu, 0x7f800000u, 0x80000000u};
const Format kBF16{bf16Value, 0x7f7fu, 0x7f80u, 0x8000u};
const Format kF16{f16Value, 0x7bffu, 0x7c00u, 0x8000u};

/// The pattern nearest to the integer `x` (exact in long double), ties to
/// the even pattern; beyond the largest finite value, the step past it (the
/// value the exponent range would give next) decides overflow to inf.
uint32_t referenceIntToFloat(long double x, const Format &f) {
  long double ax = std::fabs(x);
  uint32_t lo = 0, hi = f.maxFinite; // the largest pattern <= ax, by bisection
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo + 1) / 2;
    if (f.value(mid) <= ax)
      lo = mid;
    else
      hi = mid - 1;
  }
  uint32_t r = lo;
  if (f.value(lo) != ax) {
    long double below = f.value(lo);
    long double above = lo == f.maxFinite
                            ? 2 * f.value(lo) - f.value(lo - 1) // one step past the top
                            : f.value(lo + 1);
    long double dl = ax - below, du = above - ax;
    if (du < dl || (du == dl && (lo & 1)))
      r = lo + 1; // lo + 1 of the largest finite pattern is inf
  }
  return x < 0 ? (r | f.sign) : r;
}

//===----------------------------------------------------------------------===//
// Integer ops of every kind
//===----------------------------------------------------------------------===//

const std::vector<std::string> kIntOps = {"+", "-",  "*", "/",  "%",  "min", "max",
                                          "&", "|",  "^", "<<", ">>", "<"};

std::string applyOp(const std::string &op, const std::string &a, const std::string &b) {
  if (op == "min" || op == "max")
    return op + "(" + a + ", " + b + ")";
  return "(" + a + " " + op + " " + b + ")";
}

template <class T> void checkIntegerKind(const std::vector<int64_t> &raw) {
  const char *kind = KindOf<T>::name;
  SCOPED_TRACE(kind);
  std::vector<T> values;
  for (int64_t v : raw)
    values.push_back(static_cast<T>(v)); // the literal wraps to the kind, as cast<> does
  std::vector<T> as, bs;
  for (T a : values)
    for (T b : values) {
      as.push_back(a);
      bs.push_back(b);
    }
  const size_t n = as.size(), ops = kIntOps.size();
  const std::string K = kind, N = std::to_string(n);
  auto result = [&](const std::string &op, const std::string &e) {
    return op == "<" ? "cast<" + K + ">(" + e + ")" : e;
  };
  // Folded: every operand a literal.
  std::string folded = "kernel k(y: gm<" + K + ">[R, N]) grid(1) {\n";
  for (size_t o = 0; o < ops; ++o)
    for (size_t i = 0; i < n; ++i)
      folded += "  y[" + std::to_string(o) + ", " + std::to_string(i) + "] = " +
                result(kIntOps[o],
                       applyOp(kIntOps[o], "cast<" + K + ">(" + intLiteral(raw[i / values.size()]) + ")",
                               "cast<" + K + ">(" + intLiteral(raw[i % values.size()]) + ")")) +
                ";\n";
  folded += "}\n";
  // Run time: the same operands read from tensors, as tiles and as scalars.
  std::string runtime = "kernel k(a: gm<" + K + ">[N], b: gm<" + K + ">[N], y: gm<" + K +
                        ">[R, N], z: gm<" + K + ">[R, N]) grid(1) {\n"
                        "  let s = load(a, [0], [" + N + "]);\n"
                        "  let t = load(b, [0], [" + N + "]);\n";
  for (size_t o = 0; o < ops; ++o)
    runtime += "  store(y, [" + std::to_string(o) + ", 0], " +
               result(kIntOps[o], applyOp(kIntOps[o], "s", "t")) + ");\n";
  runtime += "  for i in 0 .. " + N + " {\n";
  for (size_t o = 0; o < ops; ++o)
    runtime += "    z[" + std::to_string(o) + ", i] = " +
               result(kIntOps[o], applyOp(kIntOps[o], "a[i]", "b[i]")) + ";\n";
  runtime += "  }\n}\n";

  const int64_t rows = static_cast<int64_t>(ops), cols = static_cast<int64_t>(n);
  for (const Mode &mode : modes()) {
    SCOPED_TRACE(mode.name());
    Buffer a(KindOf<T>::type, sizeof(T), {cols}), b(KindOf<T>::type, sizeof(T), {cols});
    for (size_t i = 0; i < n; ++i) {
      a.set<T>(i, as[i]);
      b.set<T>(i, bs[i]);
    }
    Buffer y0(KindOf<T>::type, sizeof(T), {rows, cols});
    Buffer y(KindOf<T>::type, sizeof(T), {rows, cols}), z(KindOf<T>::type, sizeof(T), {rows, cols});
    run(folded, {&y0}, mode);
    run(runtime, {&a, &b, &y, &z}, mode);
    for (size_t o = 0; o < ops; ++o)
      for (size_t i = 0; i < n; ++i) {
        T want = referenceInt<T>(kIntOps[o], as[i], bs[i]);
        size_t at = o * n + i;
        SCOPED_TRACE(std::to_string(+as[i]) + " " + kIntOps[o] + " " + std::to_string(+bs[i]));
        EXPECT_EQ(+y0.at<T>(at), +want) << "folded";
        EXPECT_EQ(+y.at<T>(at), +want) << "tile";
        EXPECT_EQ(+z.at<T>(at), +want) << "scalar";
      }
  }
}

// The values of each kind's edges, given as i64 literals that wrap to the
// kind (3000000000 is an i32's -1294967296, -1 a u32's 4294967295).
TEST(ScalarSemantics, IntegerOpsOfEveryKindFoldAsTheyRun) {
  checkIntegerKind<int8_t>({0, 1, -1, 127, -128, 7, 200, -9});
  checkIntegerKind<uint8_t>({0, 1, -1, 128, 3, 200, 8, 9});
  checkIntegerKind<int16_t>({0, 1, -1, 32767, -32768, 16, 40000, -7});
  checkIntegerKind<uint16_t>({0, 1, -1, 32768, 3, 65535, 17, 100000});
  checkIntegerKind<int32_t>({0, 1, -1, 2147483647, -2147483647 - 1, 3000000000, 31, -33});
  checkIntegerKind<uint32_t>({0, 1, -1, 2147483648, 2, 3000000000, 33, 4294967296 + 5});
  checkIntegerKind<int64_t>({0, 1, -1, std::numeric_limits<int64_t>::max(),
                             std::numeric_limits<int64_t>::min(), 9007199254740993, 63, -65});
}

//===----------------------------------------------------------------------===//
// f32 ops
//===----------------------------------------------------------------------===//

TEST(ScalarSemantics, FloatOpsFoldAsTheyRun) {
  const std::vector<float> values = {0.0f, -0.0f, 1.0f, -2.5f,
                                     std::numeric_limits<float>::infinity(),
                                     -std::numeric_limits<float>::infinity(),
                                     std::numeric_limits<float>::quiet_NaN(),
                                     std::numeric_limits<float>::denorm_min(),
                                     std::numeric_limits<float>::max(), 3.0f};
  const std::vector<std::string> ops = {"+", "-", "*", "/", "min", "max", "<"};
  std::vector<float> as, bs;
  for (float a : values)
    for (float b : values) {
      as.push_back(a);
      bs.push_back(b);
    }
  const size_t n = as.size();
  const std::string N = std::to_string(n);
  auto result = [&](const std::string &op, const std::string &e) {
    return op == "<" ? "cast<f32>(" + e + ")" : e;
  };
  // Row block 0: the folder (typed constants); block 1: the front end's
  // literal arithmetic (two literals; '<' of literals goes to the folder).
  std::string folded = "kernel k(y: gm<f32>[R, N]) grid(1) {\n";
  for (size_t o = 0; o < ops.size(); ++o)
    for (size_t i = 0; i < n; ++i) {
      std::string a = floatLiteral(as[i]), b = floatLiteral(bs[i]);
      folded += "  y[" + std::to_string(o) + ", " + std::to_string(i) + "] = " +
                result(ops[o], applyOp(ops[o], "cast<f32>(" + a + ")", "cast<f32>(" + b + ")")) +
                ";\n";
      folded += "  y[" + std::to_string(ops.size() + o) + ", " + std::to_string(i) + "] = " +
                result(ops[o], applyOp(ops[o], a, b)) + ";\n";
    }
  folded += "}\n";
  std::string runtime = "kernel k(a: gm<f32>[N], b: gm<f32>[N], y: gm<f32>[R, N], "
                        "z: gm<f32>[R, N]) grid(1) {\n"
                        "  let s = load(a, [0], [" + N + "]);\n"
                        "  let t = load(b, [0], [" + N + "]);\n";
  for (size_t o = 0; o < ops.size(); ++o)
    runtime += "  store(y, [" + std::to_string(o) + ", 0], " +
               result(ops[o], applyOp(ops[o], "s", "t")) + ");\n";
  runtime += "  for i in 0 .. " + N + " {\n";
  for (size_t o = 0; o < ops.size(); ++o)
    runtime += "    z[" + std::to_string(o) + ", i] = " +
               result(ops[o], applyOp(ops[o], "a[i]", "b[i]")) + ";\n";
  runtime += "  }\n}\n";

  const int64_t cols = static_cast<int64_t>(n), rows = static_cast<int64_t>(ops.size());
  for (const Mode &mode : modes()) {
    SCOPED_TRACE(mode.name());
    Buffer a(rt::ElemType::F32, 4, {cols}), b(rt::ElemType::F32, 4, {cols});
    for (size_t i = 0; i < n; ++i) {
      a.set<float>(i, as[i]);
      b.set<float>(i, bs[i]);
    }
    Buffer y0(rt::ElemType::F32, 4, {2 * rows, cols});
    Buffer y(rt::ElemType::F32, 4, {rows, cols}), z(rt::ElemType::F32, 4, {rows, cols});
    run(folded, {&y0}, mode);
    run(runtime, {&a, &b, &y, &z}, mode);
    for (size_t o = 0; o < ops.size(); ++o)
      for (size_t i = 0; i < n; ++i) {
        uint32_t want = bitsOf(referenceFloat(ops[o], as[i], bs[i]));
        SCOPED_TRACE(floatLiteral(as[i]) + " " + ops[o] + " " + floatLiteral(bs[i]));
        size_t at = o * n + i;
        EXPECT_EQ(bitsOf(y0.at<float>(at)), want) << "folded";
        EXPECT_EQ(bitsOf(y0.at<float>(ops.size() * n + at)), want) << "literals";
        EXPECT_EQ(bitsOf(y.at<float>(at)), want) << "tile";
        EXPECT_EQ(bitsOf(z.at<float>(at)), want) << "scalar";
      }
  }
}

//===----------------------------------------------------------------------===//
// Conversions
//===----------------------------------------------------------------------===//

template <class T> void checkFloatToInt(const std::vector<float> &values) {
  const std::string K = KindOf<T>::name;
  SCOPED_TRACE(K);
  const size_t n = values.size();
  const std::string N = std::to_string(n);
  std::string folded = "kernel k(y: gm<" + K + ">[N]) grid(1) {\n";
  for (size_t i = 0; i < n; ++i)
    folded += "  y[" + std::to_string(i) + "] = cast<" + K + ">(" + floatLiteral(values[i]) + ");\n";
  folded += "}\n";
  std::string runtime = "kernel k(a: gm<f32>[N], y: gm<" + K + ">[N], z: gm<" + K +
                        ">[N]) grid(1) {\n  store(y, [0], cast<" + K + ">(load(a, [0], [" + N +
                        "])));\n  for i in 0 .. " + N + " {\n    z[i] = cast<" + K +
                        ">(a[i]);\n  }\n}\n";
  for (const Mode &mode : modes()) {
    SCOPED_TRACE(mode.name());
    Buffer a(rt::ElemType::F32, 4, {static_cast<int64_t>(n)});
    for (size_t i = 0; i < n; ++i)
      a.set<float>(i, values[i]);
    Buffer y0(KindOf<T>::type, sizeof(T), {static_cast<int64_t>(n)});
    Buffer y(KindOf<T>::type, sizeof(T), {static_cast<int64_t>(n)}), z = y;
    run(folded, {&y0}, mode);
    run(runtime, {&a, &y, &z}, mode);
    for (size_t i = 0; i < n; ++i) {
      SCOPED_TRACE(floatLiteral(values[i]));
      T want = referenceFloatToInt<T>(values[i]);
      EXPECT_EQ(+y0.at<T>(i), +want) << "folded";
      EXPECT_EQ(+y.at<T>(i), +want) << "tile";
      EXPECT_EQ(+z.at<T>(i), +want) << "scalar";
    }
  }
}

TEST(ScalarSemantics, FloatToIntCastsTruncateSaturateAndMapNaNToZero) {
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> values = {
      std::numeric_limits<float>::quiet_NaN(), inf, -inf, 0.0f, -0.0f, 2.5f, -2.5f,
      127.9f, 128.0f, -128.9f, -129.0f, 255.5f, 256.0f, -1.0f, 32767.5f, 40000.0f,
      -40000.0f, 65535.9f, 65536.0f, 2147483520.0f, 2147483648.0f, -2147483648.0f,
      -2147483904.0f, 4294967040.0f, 4294967296.0f, 9.2233715e18f, 9.223372e18f,
      -9.223372e18f, -9.2233730e18f, 1e30f, -1e30f, 0.999f, -0.999f};
  checkFloatToInt<int8_t>(values);
  checkFloatToInt<uint8_t>(values);
  checkFloatToInt<int16_t>(values);
  checkFloatToInt<uint16_t>(values);
  checkFloatToInt<int32_t>(values);
  checkFloatToInt<uint32_t>(values);
  checkFloatToInt<int64_t>(values);
}

struct FloatKind {
  const char *name;
  rt::ElemType type;
  size_t bytes;
  const Format *format;
};
const FloatKind kFloatKinds[] = {{"f32", rt::ElemType::F32, 4, &kF32},
                                 {"f16", rt::ElemType::F16, 2, &kF16},
                                 {"bf16", rt::ElemType::BF16, 2, &kBF16}};

template <class T> void checkIntToFloat(const std::vector<int64_t> &raw) {
  const std::string K = KindOf<T>::name;
  const size_t n = raw.size();
  const std::string N = std::to_string(n);
  for (const FloatKind &fk : kFloatKinds) {
    const std::string F = fk.name;
    SCOPED_TRACE(K + " -> " + F);
    std::string folded = "kernel k(y: gm<" + F + ">[N]) grid(1) {\n";
    for (size_t i = 0; i < n; ++i)
      folded += "  y[" + std::to_string(i) + "] = cast<" + F + ">(cast<" + K + ">(" +
                intLiteral(raw[i]) + "));\n";
    folded += "}\n";
    std::string runtime = "kernel k(a: gm<" + K + ">[N], y: gm<" + F + ">[N], z: gm<" + F +
                          ">[N]) grid(1) {\n  store(y, [0], cast<" + F + ">(load(a, [0], [" +
                          N + "])));\n  for i in 0 .. " + N + " {\n    z[i] = cast<" + F +
                          ">(a[i]);\n  }\n}\n";
    for (const Mode &mode : modes()) {
      SCOPED_TRACE(mode.name());
      Buffer a(KindOf<T>::type, sizeof(T), {static_cast<int64_t>(n)});
      for (size_t i = 0; i < n; ++i)
        a.set<T>(i, static_cast<T>(raw[i]));
      Buffer y0(fk.type, fk.bytes, {static_cast<int64_t>(n)});
      Buffer y = y0, z = y0;
      run(folded, {&y0}, mode);
      run(runtime, {&a, &y, &z}, mode);
      auto bits = [&](const Buffer &b, size_t i) -> uint32_t {
        return fk.bytes == 4 ? b.at<uint32_t>(i) : b.at<uint16_t>(i);
      };
      for (size_t i = 0; i < n; ++i) {
        T v = static_cast<T>(raw[i]);
        SCOPED_TRACE(std::to_string(+v));
        uint32_t want = referenceIntToFloat(static_cast<long double>(v), *fk.format);
        EXPECT_EQ(bits(y0, i), want) << "folded";
        EXPECT_EQ(bits(y, i), want) << "tile";
        EXPECT_EQ(bits(z, i), want) << "scalar";
      }
    }
  }
}

// Values one step either side of a rounding midpoint of each format, and a
// midpoint itself (ties go to even), for every integer kind.
TEST(ScalarSemantics, IntToFloatCastsRoundOnceToNearestEven) {
  const std::vector<int64_t> small = {0, 1, -1, 127, -128, 100, -100, 255, 77};
  checkIntToFloat<int8_t>(small);
  checkIntToFloat<uint8_t>(small);
  const std::vector<int64_t> medium = {0, 1, -1, 2049, 2051, 2053, 4095, 257, 259, 32767,
                                       -32768, 65535, 65519, 65520, 65504, 12345, -2051};
  checkIntToFloat<int16_t>(medium);
  checkIntToFloat<uint16_t>(medium);
  const std::vector<int64_t> large = {
      16842753,   16842752,  16777217,  16777219,   -16842753,  2147483647, -2147483648LL,
      4294967295, 65520,     65519,     2049,       2051,       33554435,   -33554435,
      100000,     -65520,    8421505,   8388609,    25165825,   -25165825,  0};
  checkIntToFloat<int32_t>(large);
  checkIntToFloat<uint32_t>(large);
  std::vector<int64_t> huge = large;
  for (int64_t v : {std::numeric_limits<int64_t>::max(), std::numeric_limits<int64_t>::min(),
                    int64_t(9007199254740993), int64_t(-9007199254740993),
                    int64_t(0x4000008000000001), int64_t(0x4000008000000000),
                    int64_t(0x0100010000000001), int64_t(-0x0100010000000001)})
    huge.push_back(v);
  checkIntToFloat<int64_t>(huge);
}

//===----------------------------------------------------------------------===//
// The reproducers of issue 32, with results worked out by hand
//===----------------------------------------------------------------------===//

TEST(ScalarSemantics, Issue32Reproducers) {
  const char *source = R"(kernel k(x: gm<f32>[N], t: gm<i64>[N], u: gm<i32>[N], w: gm<u32>[N],
    h: gm<bf16>[N], a: gm<f32>[N], c: gm<i32>[N], d: gm<u32>[N], e: gm<i64>[N]) grid(1) {
  x[0] = 1.0 / min(cast<f32>(0.0), cast<f32>(-0.0));
  x[1] = min(1.0, nan);
  x[2] = min(nan, 1.0);
  x[3] = 1.0 / max(cast<f32>(-0.0), cast<f32>(0.0));
  x[4] = 1.0 / min(a[0], a[1]);
  x[5] = min(a[2], a[3]);
  x[6] = min(a[3], a[2]);
  x[7] = 0.0 / 0.0;
  x[8] = a[0] / a[0];
  x[9] = 1.0 / min(-0.0, 0.0);
  t[0] = 9007199254740991 + 2;
  t[1] = 4503599627370497 * 3;
  t[2] = e[0] + 2;
  t[3] = e[1] * 3;
  t[4] = 9223372036854775807 + 1;
  t[5] = 7 / 0;
  u[0] = cast<i32>(cast<i32>(3000000000) < cast<i32>(0));
  u[1] = cast<i32>(c[0] < cast<i32>(0));
  w[0] = cast<u32>(-1) / cast<u32>(2);
  w[1] = d[0] / cast<u32>(2);
  h[0] = cast<bf16>(16842753);
  h[1] = cast<bf16>(c[1]);
}
)";
  for (const Mode &mode : modes()) {
    SCOPED_TRACE(mode.name());
    Buffer x(rt::ElemType::F32, 4, {16}), t(rt::ElemType::I64, 8, {16}),
        u(rt::ElemType::I32, 4, {16}), w(rt::ElemType::U32, 4, {16}),
        h(rt::ElemType::BF16, 2, {16}), a(rt::ElemType::F32, 4, {16}),
        c(rt::ElemType::I32, 4, {16}), d(rt::ElemType::U32, 4, {16}),
        e(rt::ElemType::I64, 8, {16});
    a.set<float>(0, 0.0f);
    a.set<float>(1, -0.0f);
    a.set<float>(2, 1.0f);
    a.set<float>(3, std::numeric_limits<float>::quiet_NaN());
    c.set<int32_t>(0, static_cast<int32_t>(3000000000u));
    c.set<int32_t>(1, 16842753);
    d.set<uint32_t>(0, 4294967295u);
    e.set<int64_t>(0, 9007199254740991);
    e.set<int64_t>(1, 4503599627370497);
    run(source, {&x, &t, &u, &w, &h, &a, &c, &d, &e}, mode);
    const float inf = std::numeric_limits<float>::infinity();
    EXPECT_EQ(x.at<float>(0), -inf);
    EXPECT_EQ(bitsOf(x.at<float>(1)), kCanonicalNaN);
    EXPECT_EQ(bitsOf(x.at<float>(2)), kCanonicalNaN);
    EXPECT_EQ(x.at<float>(3), inf);
    EXPECT_EQ(x.at<float>(4), -inf);
    EXPECT_EQ(bitsOf(x.at<float>(5)), kCanonicalNaN);
    EXPECT_EQ(bitsOf(x.at<float>(6)), kCanonicalNaN);
    EXPECT_EQ(bitsOf(x.at<float>(7)), kCanonicalNaN);
    EXPECT_EQ(bitsOf(x.at<float>(8)), kCanonicalNaN);
    EXPECT_EQ(x.at<float>(9), -inf);
    EXPECT_EQ(t.at<int64_t>(0), 9007199254740993);
    EXPECT_EQ(t.at<int64_t>(1), 13510798882111491);
    EXPECT_EQ(t.at<int64_t>(2), 9007199254740993);
    EXPECT_EQ(t.at<int64_t>(3), 13510798882111491);
    EXPECT_EQ(t.at<int64_t>(4), std::numeric_limits<int64_t>::min());
    EXPECT_EQ(t.at<int64_t>(5), 0);
    EXPECT_EQ(u.at<int32_t>(0), 1);
    EXPECT_EQ(u.at<int32_t>(1), 1);
    EXPECT_EQ(w.at<uint32_t>(0), 2147483647u);
    EXPECT_EQ(w.at<uint32_t>(1), 2147483647u);
    EXPECT_EQ(h.at<uint16_t>(0), 0x4b81);
    EXPECT_EQ(h.at<uint16_t>(1), 0x4b81);
  }
}

//===----------------------------------------------------------------------===//
// NaN bits
//===----------------------------------------------------------------------===//

// Every NaN an arithmetic op gives is 0x7fc00000, whichever NaN its operands
// carry and whether the compiler or the processor computed it; casts between
// float kinds, `abs`, unary minus and `select` keep a NaN's sign and payload.
TEST(ScalarSemantics, NaNResultsAreCanonicalInEveryBuild) {
  const char *source = R"(kernel k(a: gm<f32>[N], b: gm<f32>[N], y: gm<f32>[R, N],
    q: gm<i32>[N], h: gm<bf16>[N]) grid(1) {
  let s = load(a, [0], [8]);
  let t = load(b, [0], [8]);
  store(y, [0, 0], s + t);
  store(y, [1, 0], s * t);
  store(y, [2, 0], min(s, t));
  store(y, [3, 0], max(t, s));
  store(y, [4, 0], fma(s, t, s));
  store(y, [5, 0], sqrt(s));
  store(y, [6, 0], exp(s));
  store(y, [7, 0], full<f32>([8], 0.0) / full<f32>([8], 0.0));
  store(y, [8, 0], full<f32>([8], inf) - full<f32>([8], inf));
  store(y, [9, 0], -s);
  store(y, [10, 0], abs(s));
  store(y, [11, 0], select(s < t, t, s));
  y[12, 0] = sum(s * 0.0);
  y[12, 1] = sqrt(-1.0);
  y[12, 2] = inf * 0.0;
  y[12, 3] = cast<f32>(0.0) * cast<f32>(inf);
  q[0] = bitcast<i32>(a[0] + b[0]);
  q[1] = bitcast<i32>(cast<f32>(0.0) / cast<f32>(0.0));
  store(h, [0], cast<bf16>(s));
}
)";
  const uint32_t in[8] = {0x7fc00001u, 0xffc00002u, 0x7f800003u, 0x3f800000u,
                          0xff800005u, 0xbf800000u, 0x7f800000u, 0x00000000u};
  const uint32_t other[8] = {0xffc00002u, 0x7fc00001u, 0x3f800000u, 0xffc00007u,
                             0x40000000u, 0x7fc00009u, 0xff800000u, 0x7f800000u};
  std::vector<std::vector<uint32_t>> first;
  for (const Mode &mode : modes()) {
    SCOPED_TRACE(mode.name());
    Buffer a(rt::ElemType::F32, 4, {8}), b(rt::ElemType::F32, 4, {8}),
        y(rt::ElemType::F32, 4, {13, 8}), q(rt::ElemType::I32, 4, {8}),
        h(rt::ElemType::BF16, 2, {8});
    for (size_t i = 0; i < 8; ++i) {
      a.set<uint32_t>(i, in[i]);
      b.set<uint32_t>(i, other[i]);
    }
    run(source, {&a, &b, &y, &q, &h}, mode);
    auto check = [&](size_t row, size_t i, uint32_t want) {
      EXPECT_EQ(y.at<uint32_t>(row * 8 + i), want) << "row " << row << " lane " << i;
    };
    for (size_t i = 0; i < 8; ++i) {
      float fa = std::bit_cast<float>(in[i]), fb = std::bit_cast<float>(other[i]);
      auto canonicalBits = [](float f) { return bitsOf(canonical(f)); };
      check(0, i, canonicalBits(fa + fb));
      check(1, i, canonicalBits(fa * fb));
      check(2, i, bitsOf(referenceFloat("min", fa, fb)));
      check(3, i, bitsOf(referenceFloat("max", fb, fa)));
      check(4, i, canonicalBits(std::fma(fa, fb, fa)));
      check(7, i, kCanonicalNaN);
      check(8, i, kCanonicalNaN);
      check(9, i, in[i] ^ 0x80000000u);
      check(10, i, in[i] & 0x7fffffffu);
      check(11, i, fa < fb ? other[i] : in[i]);
      if (std::isnan(fa) || fa < 0)
        check(5, i, kCanonicalNaN);
      if (std::isnan(fa))
        check(6, i, kCanonicalNaN);
      // bf16 keeps the sign and the top payload bits, quiet bit set.
      uint16_t wantH = std::isnan(fa) ? static_cast<uint16_t>((in[i] >> 16) | 0x40)
                                      : static_cast<uint16_t>(in[i] >> 16);
      EXPECT_EQ(h.at<uint16_t>(i), wantH) << "lane " << i;
    }
    check(12, 0, kCanonicalNaN); // NaN * 0 summed with the rest
    check(12, 1, kCanonicalNaN);
    check(12, 2, kCanonicalNaN);
    check(12, 3, kCanonicalNaN);
    EXPECT_EQ(static_cast<uint32_t>(q.at<int32_t>(0)), kCanonicalNaN);
    EXPECT_EQ(static_cast<uint32_t>(q.at<int32_t>(1)), kCanonicalNaN);
    std::vector<uint32_t> all(13 * 8);
    for (size_t i = 0; i < all.size(); ++i)
      all[i] = y.at<uint32_t>(i);
    // Every build gives the same bits, NaN payloads included.
    if (first.empty())
      first.push_back(all);
    else
      EXPECT_EQ(all, first[0]);
  }
}

} // namespace
