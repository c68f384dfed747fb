//===- InterpreterTest.cpp - The reference interpreter against hand results -===//
//
// Small kernels whose results are worked out by hand from docs/dsl.md (the
// issue-32 reproducers among them), run through the reference interpreter.
//
//===----------------------------------------------------------------------===//
#include "InterpNumeric.h"
#include "Interpreter.h"

#include "dsl/Frontend.h"
#include "jit/Compiler.h"
#include "dsl/support/Diagnostics.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <memory>
#include <random>
#include <sstream>

using namespace tilejit;
using namespace tilejit::difftest;
using rt::ElemType;

namespace {

/// A parsed source, kept alive with its diagnostics.
struct Source {
  DiagnosticEngine diags;
  std::unique_ptr<dsl::ParsedFile> file;
  explicit Source(const std::string &text) {
    uint32_t buf = diags.addBuffer("t.tile", text);
    file = dsl::parse(diags, buf);
  }
};

template <class T> Tensor tensorOf(ElemType type, const std::vector<T> &values,
                                   std::vector<int64_t> shape) {
  Tensor t;
  t.type = type;
  t.shape = shape;
  t.strides.assign(shape.size(), 1);
  for (size_t d = shape.size(); d-- > 1;)
    t.strides[d - 1] = t.strides[d] * shape[d];
  t.storage.resize(values.size() * sizeof(T));
  std::memcpy(t.storage.data(), values.data(), t.storage.size());
  return t;
}

Tensor f32(const std::vector<float> &v, std::vector<int64_t> shape = {}) {
  if (shape.empty())
    shape = {static_cast<int64_t>(v.size())};
  return tensorOf(ElemType::F32, v, shape);
}

Tensor zerosOf(ElemType type, int64_t n) {
  Tensor t;
  t.type = type;
  t.shape = {n};
  t.strides = {1};
  t.storage.assign(static_cast<size_t>(n) * elemBytes(type), 0);
  return t;
}

Scalar i64(int64_t v) {
  Scalar s;
  s.type = ElemType::I64;
  s.i = v;
  return s;
}

template <class T> T at(const Outcome &o, size_t arg, size_t i) {
  const Tensor &t = std::get<Tensor>(o.args[arg]);
  T v;
  std::memcpy(&v, t.storage.data() + i * sizeof(T), sizeof(T));
  return v;
}

Outcome run(const std::string &src, const std::string &kernel, std::vector<Argument> args,
            const std::map<std::string, std::string> &spec = {}) {
  Source s(src);
  EXPECT_TRUE(s.file) << "the test kernel parses";
  if (!s.file)
    return {};
  auto r = interpret(s.file->ast(), kernel, spec, std::move(args));
  if (auto *err = std::get_if<std::string>(&r)) {
    ADD_FAILURE() << "not interpreted: " << *err;
    return {};
  }
  return std::get<Outcome>(std::move(r));
}

std::string runError(const std::string &src, const std::string &kernel,
                     std::vector<Argument> args,
                     const std::map<std::string, std::string> &spec = {}) {
  Source s(src);
  if (!s.file)
    return "parse error";
  auto r = interpret(s.file->ast(), kernel, spec, std::move(args));
  auto *err = std::get_if<std::string>(&r);
  return err ? *err : std::string();
}

std::vector<float> iota1(int n) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i)
    v[static_cast<size_t>(i)] = static_cast<float>(i + 1);
  return v;
}

//===----------------------------------------------------------------------===//
// Value semantics (issue 32's reproducers)
//===----------------------------------------------------------------------===//

TEST(Interpreter, ShiftedInPlaceStore) {
  Outcome o = run("kernel k(x: gm<f32>[N]) grid(1) { store(x, [1], load(x, [0], [32]) * 2.0); }",
                  "k", {f32(iota1(40))});
  ASSERT_EQ(o.args.size(), 1u);
  EXPECT_EQ(at<float>(o, 0, 0), 1.0f);
  for (int i = 1; i <= 32; ++i)
    EXPECT_EQ(at<float>(o, 0, i), 2.0f * i) << i;
  EXPECT_EQ(at<float>(o, 0, 17), 34.0f);
  for (int i = 33; i < 40; ++i)
    EXPECT_EQ(at<float>(o, 0, i), i + 1.0f) << i;
  for (double t : o.tolerance[0])
    EXPECT_EQ(t, 0.0);
  EXPECT_FALSE(o.violation);
}

TEST(Interpreter, ShiftedInPlaceStore2D) {
  Outcome o = run("kernel k(x: gm<f32>[M, N]) grid(1) {\n"
                  "  store(x, [1, 0], load(x, [0, 0], [4, 8]) + 100.0);\n}",
                  "k", {f32(iota1(40), {5, 8})});
  ASSERT_EQ(o.args.size(), 1u);
  const float col0[] = {1, 101, 109, 117, 125};
  for (int r = 0; r < 5; ++r)
    EXPECT_EQ(at<float>(o, 0, r * 8), col0[r]) << r;
  EXPECT_EQ(at<float>(o, 0, 4 * 8 + 7), 24.0f + 100.0f + 8.0f); // x[3][7] = 32 -> row 4
}

TEST(Interpreter, SelfCopyShiftsRows) {
  Outcome o = run("kernel k(x: gm<f32>[M, N]) grid(1) {\n"
                  "  store(x, [1, 0], load(x, [0, 0], [4, 8]));\n}",
                  "k", {f32(iota1(40), {5, 8})});
  ASSERT_EQ(o.args.size(), 1u);
  for (int r = 0; r < 5; ++r)
    for (int c = 0; c < 8; ++c) {
      int src = r == 0 ? 0 : r - 1;
      EXPECT_EQ(at<float>(o, 0, r * 8 + c), src * 8 + c + 1.0f) << r << "," << c;
    }
}

TEST(Interpreter, LoopCarriedTilesKeepTheirValues) {
  const char *src = R"(
kernel carried(x: gm<f32>[N], out: gm<f32>[2, 4]) grid(1) {
  var cur = zeros<f32>([4]);
  var prev = zeros<f32>([4]);
  for c in 0 .. N step 4 {
    let old = cur;
    cur = load(x, [c], [4]);
    prev = old;
  }
  store(out, [0, 0], prev);
  store(out, [1, 0], cur);
}
kernel swap(out: gm<f32>[2, 4], n: i64) grid(1) {
  var a = full<f32>([4], 1.0);
  var b = full<f32>([4], 2.0);
  for i in 0 .. n {
    let t = a;
    a = b;
    b = t;
  }
  store(out, [0, 0], a);
  store(out, [1, 0], b);
}
)";
  Outcome o = run(src, "carried", {f32(iota1(12)), f32(std::vector<float>(8, 0), {2, 4})});
  ASSERT_EQ(o.args.size(), 2u);
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(at<float>(o, 1, i), 5.0f + i);
    EXPECT_EQ(at<float>(o, 1, 4 + i), 9.0f + i);
  }
  o = run(src, "swap", {f32(std::vector<float>(8, 0), {2, 4}), i64(3)});
  ASSERT_EQ(o.args.size(), 2u);
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(at<float>(o, 0, i), 2.0f);
    EXPECT_EQ(at<float>(o, 0, 4 + i), 1.0f);
  }
}

//===----------------------------------------------------------------------===//
// Constants and integer arithmetic
//===----------------------------------------------------------------------===//

TEST(Interpreter, MinMaxOrderZerosAndPropagateNaN) {
  const char *src = R"(
kernel k(y: gm<f32>[8], x: gm<f32>[4]) grid(1) {
  y[0] = 1.0 / min(cast<f32>(0.0), cast<f32>(-0.0));
  y[1] = min(1.0, nan);
  y[2] = min(nan, 1.0);
  y[3] = 1.0 / max(-0.0, 0.0);
  let t = load(x, [0], [4]);
  y[4] = 1.0 / min(t, axis = 0);
  y[5] = 1.0 / max(t, axis = 0);
  y[6] = max(x[2], x[3]);
  y[7] = min(x[3], x[2]);
}
)";
  float nan = std::numeric_limits<float>::quiet_NaN();
  Outcome o = run(src, "k", {f32(std::vector<float>(8, 7)), f32({0.0f, -0.0f, 1.0f, nan})});
  ASSERT_EQ(o.args.size(), 2u);
  EXPECT_EQ(at<float>(o, 0, 0), -INFINITY);
  EXPECT_TRUE(std::isnan(at<float>(o, 0, 1)));
  EXPECT_TRUE(std::isnan(at<float>(o, 0, 2)));
  EXPECT_EQ(at<float>(o, 0, 3), INFINITY);
  // The reductions see the NaN in x[3] too.
  EXPECT_TRUE(std::isnan(at<float>(o, 0, 4)));
  EXPECT_TRUE(std::isnan(at<float>(o, 0, 6)));
  EXPECT_TRUE(std::isnan(at<float>(o, 0, 7)));
  Outcome p = run(src, "k", {f32(std::vector<float>(8, 7)), f32({0.0f, -0.0f, 1.0f, 2.0f})});
  ASSERT_EQ(p.args.size(), 2u);
  EXPECT_EQ(at<float>(p, 0, 4), -INFINITY); // min of {+0, -0, ...} is -0
  EXPECT_EQ(at<float>(p, 0, 5), 0.5f);
  for (double t : p.tolerance[0])
    EXPECT_EQ(t, 0.0);
}

TEST(Interpreter, IntegerLiteralsAreExact) {
  const char *src = R"(
kernel k(y: gm<i64>[4], z: gm<i32>[2], u: gm<u32>[1], b: gm<i1>[1], h: gm<bf16>[1]) grid(1) {
  y[0] = 9007199254740991 + 2;
  y[1] = 4503599627370497 * 3;
  y[2] = 9223372036854775807 + 1;
  y[3] = -7 / 2;
  z[0] = cast<i32>(3000000000);
  z[1] = cast<i32>(-2147483647 - 1) / cast<i32>(-1);
  b[0] = cast<i32>(3000000000) < cast<i32>(0);
  u[0] = cast<u32>(-1) / cast<u32>(2);
  h[0] = cast<bf16>(16842753);
}
)";
  Outcome o = run(src, "k",
                  {zerosOf(ElemType::I64, 4), zerosOf(ElemType::I32, 2), zerosOf(ElemType::U32, 1),
                   zerosOf(ElemType::I1, 1), zerosOf(ElemType::BF16, 1)});
  ASSERT_EQ(o.args.size(), 5u);
  EXPECT_EQ(at<int64_t>(o, 0, 0), 9007199254740993);
  EXPECT_EQ(at<int64_t>(o, 0, 1), 13510798882111491);
  EXPECT_EQ(at<int64_t>(o, 0, 2), std::numeric_limits<int64_t>::min());
  EXPECT_EQ(at<int64_t>(o, 0, 3), -3); // truncating division
  EXPECT_EQ(at<int32_t>(o, 1, 0), -1294967296);
  EXPECT_EQ(at<int32_t>(o, 1, 1), std::numeric_limits<int32_t>::min()); // wraps
  EXPECT_EQ(at<uint32_t>(o, 2, 0), 2147483647u);
  EXPECT_EQ(at<uint8_t>(o, 3, 0), 1);
  EXPECT_EQ(at<uint16_t>(o, 4, 0), 0x4b81); // rounded once, to nearest even
}

TEST(Interpreter, IntegerOperatorsWrapAndDivisionByZeroIsZero) {
  const char *src = R"(
kernel k(y: gm<i32>[12], a: i32, b: i32) grid(1) {
  y[0] = a / cast<i32>(0);
  y[1] = a % cast<i32>(0);
  y[2] = a * a;
  y[3] = a << cast<i32>(33);
  y[4] = b >> cast<i32>(1);
  y[5] = cast<i32>(cast<u32>(b) >> cast<u32>(28));
  y[6] = abs(b);
  y[7] = -b;
  y[8] = b % cast<i32>(-1);
  y[9] = ~a;
  y[10] = cast<i32>(cast<i8>(a * cast<i32>(300)));
  y[11] = min(a, b);
}
)";
  Scalar a, b;
  a.type = b.type = ElemType::I32;
  a.i = 100000;
  b.i = std::numeric_limits<int32_t>::min();
  Outcome o = run(src, "k", {zerosOf(ElemType::I32, 12), a, b});
  ASSERT_EQ(o.args.size(), 3u);
  EXPECT_EQ(at<int32_t>(o, 0, 0), 0);
  EXPECT_EQ(at<int32_t>(o, 0, 1), 0);
  EXPECT_EQ(at<int32_t>(o, 0, 2), static_cast<int32_t>(100000u * 100000u));
  EXPECT_EQ(at<int32_t>(o, 0, 3), 200000); // 33 mod 32
  EXPECT_EQ(at<int32_t>(o, 0, 4), std::numeric_limits<int32_t>::min() / 2);
  EXPECT_EQ(at<int32_t>(o, 0, 5), 8);
  EXPECT_EQ(at<int32_t>(o, 0, 6), std::numeric_limits<int32_t>::min());
  EXPECT_EQ(at<int32_t>(o, 0, 7), std::numeric_limits<int32_t>::min());
  EXPECT_EQ(at<int32_t>(o, 0, 8), 0);
  EXPECT_EQ(at<int32_t>(o, 0, 9), -100001);
  EXPECT_EQ(at<int32_t>(o, 0, 10), static_cast<int8_t>(static_cast<uint8_t>(30000000 & 0xff)));
  EXPECT_EQ(at<int32_t>(o, 0, 11), std::numeric_limits<int32_t>::min());
}

TEST(Interpreter, LoopTripCountNearInt64Max) {
  const char *src = R"(
kernel k(y: gm<i64>[2]) grid(1) {
  for i in 9223372036854775800 .. 9223372036854775807 step 4611686018427387904 {
    y[0] = y[0] + 1;
    y[1] = i;
  }
  for i in 0 .. 10 step 0 { y[0] = y[0] + 100; }
  for i in 0 .. 10 step -1 { y[0] = y[0] + 100; }
}
)";
  Outcome o = run(src, "k", {zerosOf(ElemType::I64, 2)});
  ASSERT_EQ(o.args.size(), 1u);
  EXPECT_EQ(at<int64_t>(o, 0, 0), 1);
  EXPECT_EQ(at<int64_t>(o, 0, 1), 9223372036854775800);
}

//===----------------------------------------------------------------------===//
// Conversions and f32 arithmetic
//===----------------------------------------------------------------------===//

TEST(Interpreter, CastsRoundSaturateAndReinterpret) {
  const char *src = R"(
kernel k(x: gm<f32>[N], i8s: gm<i8>[N], u8s: gm<u8>[N], i32s: gm<i32>[N], h: gm<f16>[N],
         b: gm<bf16>[N], r: gm<f32>[N], bits: gm<u32>[N], back: gm<f32>[N]) grid(1) {
  let t = load(x, [0], [8]);
  store(i8s, [0], cast<i8>(t));
  store(u8s, [0], cast<u8>(t));
  store(i32s, [0], cast<i32>(t));
  store(h, [0], cast<f16>(t));
  store(b, [0], cast<bf16>(t));
  store(r, [0], round(t));
  store(bits, [0], bitcast<u32>(t));
  store(back, [0], cast<f32>(cast<f16>(t)));
}
)";
  float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> x = {300.0f, -1e10f, -2.7f, nan, 2.5f, 65520.0f, 1.0f / 3.0f, -0.5f};
  Outcome o = run(src, "k",
                  {f32(x), zerosOf(ElemType::I8, 8), zerosOf(ElemType::U8, 8),
                   zerosOf(ElemType::I32, 8), zerosOf(ElemType::F16, 8),
                   zerosOf(ElemType::BF16, 8), f32(std::vector<float>(8, 0)),
                   zerosOf(ElemType::U32, 8), f32(std::vector<float>(8, 0))});
  ASSERT_EQ(o.args.size(), 9u);
  const int8_t i8want[] = {127, -128, -2, 0, 2, 127, 0, 0};
  const uint8_t u8want[] = {255, 0, 0, 0, 2, 255, 0, 0};
  const int32_t i32want[] = {300, std::numeric_limits<int32_t>::min(), -2, 0, 2, 65520, 0, 0};
  for (int i = 0; i < 8; ++i) {
    EXPECT_EQ(at<int8_t>(o, 1, i), i8want[i]) << i;
    EXPECT_EQ(at<uint8_t>(o, 2, i), u8want[i]) << i;
    EXPECT_EQ(at<int32_t>(o, 3, i), i32want[i]) << i;
    EXPECT_EQ(at<uint32_t>(o, 7, i), std::bit_cast<uint32_t>(x[static_cast<size_t>(i)])) << i;
  }
  EXPECT_EQ(at<uint16_t>(o, 4, 0), 0x5cb0);  // 300
  EXPECT_EQ(at<uint16_t>(o, 4, 1), 0xfc00);  // -inf
  EXPECT_EQ(at<uint16_t>(o, 4, 5), 0x7c00);  // 65520 rounds up to inf
  EXPECT_EQ(at<uint16_t>(o, 4, 6), 0x3555);  // 1/3
  EXPECT_EQ(at<uint16_t>(o, 4, 3) & 0x7c00, 0x7c00);
  EXPECT_NE(at<uint16_t>(o, 4, 3) & 0x3ff, 0);  // NaN stays NaN
  EXPECT_EQ(at<uint16_t>(o, 5, 0), 0x4396);  // 300 in bf16
  EXPECT_EQ(at<uint16_t>(o, 5, 6), 0x3eab);  // 1/3 = 0x3eaaaaab rounds up
  EXPECT_EQ(at<float>(o, 6, 4), 2.0f);       // half to even
  EXPECT_EQ(std::bit_cast<uint32_t>(at<float>(o, 6, 7)), 0x80000000u); // round(-0.5) = -0
  EXPECT_EQ(at<float>(o, 6, 2), -3.0f);
  EXPECT_EQ(at<float>(o, 8, 6), num::halfToFloat(0x3555));
}

TEST(Interpreter, NumericHelpersRoundOnce) {
  // Subnormal f16 and the largest finite values.
  EXPECT_EQ(num::floatToHalf(std::ldexp(1.0f, -24)), 0x0001);
  EXPECT_EQ(num::floatToHalf(std::ldexp(1.0f, -25)), 0x0000);         // tie to even: 0
  EXPECT_EQ(num::floatToHalf(std::ldexp(3.0f, -26)), 0x0001);         // above the tie
  EXPECT_EQ(num::floatToHalf(65504.0f), 0x7bff);
  EXPECT_EQ(num::floatToHalf(65519.0f), 0x7bff);
  EXPECT_EQ(num::halfToFloat(0x7bff), 65504.0f);
  EXPECT_EQ(num::halfToFloat(0x0001), std::ldexp(1.0f, -24));
  EXPECT_EQ(num::floatToBf16(std::bit_cast<float>(0x3f808000u)), 0x3f80); // tie to even
  EXPECT_EQ(num::floatToBf16(std::bit_cast<float>(0x3f818000u)), 0x3f82);
  EXPECT_EQ(num::floatToBf16(std::bit_cast<float>(0x7f7fffffu)), 0x7f80); // overflows
  // i64 -> f32 rounds once: 2^60 + 2^36 + 1 is above the tie at 2^36.
  int64_t v = (int64_t(1) << 60) + (int64_t(1) << 36) + 1;
  EXPECT_EQ(num::intToFloat(v, false, ElemType::F32).f, std::ldexp(1.0f, 60) + std::ldexp(1.0f, 37));
  EXPECT_EQ(num::intToFloat(65520, false, ElemType::F16).i, 0x7c00);
  EXPECT_EQ(num::intToFloat(2049, false, ElemType::F16).i, 0x6800); // 2048, tie to even
  EXPECT_EQ(num::intToFloat(2051, false, ElemType::F16).i, 0x6802); // 2052
  EXPECT_EQ(num::wrap(0x80, ElemType::I8), -128);
  EXPECT_EQ(num::wrap(0x1ff, ElemType::U8), 255);
}

TEST(Interpreter, LiteralsAdaptAndFloatArithmeticRoundsEachOp) {
  const char *src = R"(
kernel k(y: gm<f32>[4], a: f32) grid(1) {
  y[0] = a + 1;
  y[1] = fma(a, a, -1.0);
  y[2] = a * a - 1.0;
  y[3] = rsqrt(a);
}
)";
  Scalar a;
  a.type = ElemType::F32;
  a.f = 1.0f + std::ldexp(1.0f, -12);
  Outcome o = run(src, "k", {f32(std::vector<float>(4, 0)), a});
  ASSERT_EQ(o.args.size(), 2u);
  EXPECT_EQ(at<float>(o, 0, 0), 2.0f + std::ldexp(1.0f, -12));
  EXPECT_EQ(at<float>(o, 0, 1), std::ldexp(1.0f, -11) + std::ldexp(1.0f, -24)); // fused: exact
  EXPECT_EQ(at<float>(o, 0, 2), std::ldexp(1.0f, -11));                        // product rounded
  EXPECT_EQ(at<float>(o, 0, 3), 1.0f / std::sqrt(a.f));
  for (double t : o.tolerance[0])
    EXPECT_EQ(t, 0.0);
}

//===----------------------------------------------------------------------===//
// Memory: masks, gathers, scatters, bounds
//===----------------------------------------------------------------------===//

TEST(Interpreter, MasksOtherGatherAndScatter) {
  const char *src = R"(
kernel k(x: gm<f32>[N], y: gm<f32>[8], g: gm<f32>[8], s: gm<f32>[4]) grid(1) {
  let cols = iota<i64>([8], 0);
  let t = load(x, [6], [8], mask = cols != 1, other = -1.0);
  store(y, [0], t, mask = cols < 6);
  let idx = cols * 2;
  store(g, [0], gather(x, [idx], mask = idx < 14, other = 5.0));
  scatter(s, [cols / 4], t);
}
)";
  Outcome o = run(src, "k",
                  {f32(iota1(10)), f32(std::vector<float>(8, 9)), f32(std::vector<float>(8, 0)),
                   f32(std::vector<float>(4, 0))});
  ASSERT_EQ(o.args.size(), 4u);
  // t = x[6..9], then out of bounds: 7, -1 (masked), 9, 10, 0, 0, 0, 0.
  const float ty[] = {7, -1, 9, 10, -1, -1, 9, 9};
  for (int i = 0; i < 8; ++i)
    EXPECT_EQ(at<float>(o, 1, i), ty[i]) << i;
  // Gathered x[0], x[2], ..., x[8]; index 10 and 12 are outside x (other),
  // index 14 is masked off (other).
  const float tg[] = {1, 3, 5, 7, 9, 5, 5, 5};
  for (int i = 0; i < 8; ++i)
    EXPECT_EQ(at<float>(o, 2, i), tg[i]) << i;
  // Scatter in row-major order: s[0] gets t[3] = 10, s[1] gets t[7] = 0.
  EXPECT_EQ(at<float>(o, 3, 0), 10.0f);
  EXPECT_EQ(at<float>(o, 3, 1), -1.0f);
  // The gather's index 10 (and 12) is outside x with the mask set; the
  // load's and the store's tiles overlap x and y.
  ASSERT_TRUE(o.violation);
  EXPECT_EQ(o.violation->line, 7u);
}

TEST(Interpreter, ViolationsInProgramOrder) {
  const char *src = R"(
kernel unused(x: gm<f32>[N]) grid(1) {
  let a = x[40];
}
kernel region(x: gm<f32>[N]) grid(1) {
  let a = load(x, [36], [8]);
  let b = load(x, [40], [8]);
}
kernel lead(x: gm<f32>[M, N]) grid(1) {
  let a = load(x, [5, 0], [8]);
}
kernel grid2(x: gm<f32>[N]) grid(2, 3) {
  if program_id(0) == 1 && program_id(1) >= 1 {
    x[program_id(1) + 40] = 1.0;
  }
}
kernel prefetchok(x: gm<f32>[N]) grid(1) {
  prefetch(x, [-1], [8]);
  let m = iota<i64>([8], 0);
  let g = gather(x, [m + 40], mask = m < 0);
}
)";
  Outcome o = run(src, "unused", {f32(iota1(40))});
  ASSERT_TRUE(o.violation);
  EXPECT_EQ(o.violation->program, 0);
  EXPECT_EQ(o.violation->line, 3u);
  EXPECT_EQ(o.violation->column, 11u);
  o = run(src, "region", {f32(iota1(40))});
  ASSERT_TRUE(o.violation);
  EXPECT_EQ(o.violation->line, 7u);
  o = run(src, "lead", {f32(iota1(40), {5, 8})});
  ASSERT_TRUE(o.violation);
  EXPECT_EQ(o.violation->line, 10u);
  o = run(src, "grid2", {f32(iota1(40))});
  ASSERT_TRUE(o.violation);
  EXPECT_EQ(o.violation->program, 1 + 1 * 2); // (1, 1): axis 0 fastest
  for (int i = 0; i < 40; ++i)
    EXPECT_EQ(at<float>(o, 0, i), i + 1.0f);
  o = run(src, "prefetchok", {f32(iota1(40))});
  EXPECT_FALSE(o.violation);
}

TEST(Interpreter, PaddedAndTransposedTensors) {
  const char *src = R"(
kernel k(x: gm<f32>[M, N], y: gm<f32>[N, M]) grid(1) {
  store(y, [0, 0], transpose(load(x, [0, 0], [2, 3])));
}
)";
  // x: 2 x 3 in rows of 4 (one padding element per row); y: 3 x 2 stored
  // column-major (strides 1, 3) inside 8 elements.
  Tensor x = f32({1, 2, 3, -1, 4, 5, 6, -1});
  x.shape = {2, 3};
  x.strides = {4, 1};
  Tensor y = f32(std::vector<float>(8, 0));
  y.shape = {3, 2};
  y.strides = {1, 3};
  Outcome o = run(src, "k", {x, y});
  ASSERT_EQ(o.args.size(), 2u);
  // y[i][j] = x[j][i] at storage i + 3 j.
  const float want[] = {1, 2, 3, 4, 5, 6, 0, 0};
  for (int i = 0; i < 8; ++i)
    EXPECT_EQ(at<float>(o, 1, i), want[i]) << i;
  EXPECT_EQ(at<float>(o, 0, 3), -1.0f);
}

//===----------------------------------------------------------------------===//
// Compile-time parameters
//===----------------------------------------------------------------------===//

TEST(Interpreter, CompileTimeParametersAndGuards) {
  const char *src = R"(
kernel k<T: f16|f32, BN: i64 = 4, NEG: bool = false, L: enum(A, B)>(
    x: gm<T>[N], y: gm<f32>[BN], bias: gm<f32>[BN] if L == B) grid(1) {
  var t = cast<f32>(load(x, [0], [BN]));
  if NEG { t = -t; }
  if L == B { t = t + load(bias, [0], [BN]); }
  if T == f16 { t = t * 2.0; }
  store(y, [0], t);
}
)";
  Outcome o = run(src, "k", {f32({1, 2, 3, 4}), f32(std::vector<float>(4, 0))},
                  {{"T", "f32"}, {"NEG", "true"}, {"L", "A"}});
  ASSERT_EQ(o.args.size(), 2u);
  EXPECT_EQ(at<float>(o, 1, 2), -3.0f);
  Tensor h = zerosOf(ElemType::F16, 4);
  for (int i = 0; i < 4; ++i) {
    uint16_t v = num::floatToHalf(i + 1.0f);
    std::memcpy(h.storage.data() + 2 * i, &v, 2);
  }
  o = run(src, "k", {h, f32(std::vector<float>(4, 0)), f32({10, 20, 30, 40})},
          {{"T", "f16"}, {"L", "B"}});
  ASSERT_EQ(o.args.size(), 3u);
  EXPECT_EQ(at<float>(o, 1, 3), 2.0f * 44);
  // y's size must equal BN: the launch fails, so the interpreter declines.
  EXPECT_NE(runError(src, "k", {f32({1, 2, 3, 4}), f32(std::vector<float>(3, 0))},
                     {{"T", "f32"}, {"L", "A"}}),
            "");
  EXPECT_EQ(runError(src, "k", {f32({1, 2, 3, 4}), f32(std::vector<float>(4, 0))},
                     {{"T", "f32"}, {"L", "A"}}),
            "");
}

//===----------------------------------------------------------------------===//
// Tolerances
//===----------------------------------------------------------------------===//

/// Sums of the same elements in other orders stay within the bound.
TEST(Interpreter, SumToleranceCoversOtherOrders) {
  const char *src = R"(
kernel k(x: gm<f32>[N], y: gm<f32>[1]) grid(1) {
  y[0] = sum(load(x, [0], [1000]));
}
)";
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> d(-1000, 1000);
  std::vector<float> x(1000);
  for (float &v : x)
    v = d(rng) * std::ldexp(1.0f, static_cast<int>(rng() % 20) - 10);
  Outcome o = run(src, "k", {f32(x), f32({0})});
  ASSERT_EQ(o.args.size(), 2u);
  float ref = at<float>(o, 1, 0);
  double tol = o.tolerance[1][0];
  EXPECT_GT(tol, 0.0);
  EXPECT_LT(tol, 1e9);
  for (int lanes : {1, 8, 16, 64}) {
    std::vector<float> part(static_cast<size_t>(lanes), 0.0f);
    for (size_t i = 0; i < x.size(); ++i)
      part[i % static_cast<size_t>(lanes)] += x[i];
    while (part.size() > 1) {
      std::vector<float> next;
      for (size_t i = 0; i + 1 < part.size(); i += 2)
        next.push_back(part[i] + part[i + 1]);
      part = next;
    }
    EXPECT_LE(std::fabs(static_cast<double>(part[0]) - ref), tol) << lanes;
  }
  // A sum compared with a value within its bound is not compared; one far
  // from it gives a certain answer.
  Outcome c = run("kernel k(x: gm<f32>[N], y: gm<i1>[2]) grid(1) {\n"
                  "  let s = sum(load(x, [0], [4]));\n"
                  "  y[0] = s > 10.0;\n"
                  "  y[1] = s > 0.0;\n}",
                  "k", {f32({1, 2, 3, 4}), zerosOf(ElemType::I1, 2)});
  ASSERT_EQ(c.args.size(), 2u);
  EXPECT_TRUE(std::isinf(c.tolerance[1][0]));
  EXPECT_EQ(c.tolerance[1][1], 0.0);
  EXPECT_EQ(at<uint8_t>(c, 1, 1), 1);
  // Integer sums are exact and wrap.
  Outcome s = run("kernel k(x: gm<i8>[N], y: gm<i8>[1]) grid(1) {\n"
                  "  y[0] = sum(load(x, [0], [4]));\n}",
                  "k",
                  {tensorOf<int8_t>(ElemType::I8, {100, 100, 100, -1}, {4}),
                   zerosOf(ElemType::I8, 1)});
  ASSERT_EQ(s.args.size(), 2u);
  EXPECT_EQ(at<int8_t>(s, 1, 0), static_cast<int8_t>(299 - 256));
  EXPECT_EQ(s.tolerance[1][0], 0.0);
}

TEST(Interpreter, MmaAccumulatesExactProductsWithinTheBound) {
  const char *src = R"(
kernel k(a: gm<f32>[M, K], b: gm<f32>[N, K], c: gm<f32>[M, N]) grid(1) {
  store(c, [0, 0], mma(load(a, [0, 0], [2, 3]), transpose(load(b, [0, 0], [2, 3])),
                       full<f32>([2, 2], 1.0)));
}
)";
  Outcome o = run(src, "k",
                  {f32({1, 2, 3, 4, 5, 6}, {2, 3}), f32({1, 0, 1, 0, 1, 0}, {2, 3}),
                   f32({0, 0, 0, 0}, {2, 2})});
  ASSERT_EQ(o.args.size(), 3u);
  EXPECT_EQ(at<float>(o, 2, 0), 1 + 1 + 3.0f);
  EXPECT_EQ(at<float>(o, 2, 1), 1 + 2.0f);
  EXPECT_EQ(at<float>(o, 2, 2), 1 + 4 + 6.0f);
  EXPECT_EQ(at<float>(o, 2, 3), 1 + 5.0f);
  for (double t : o.tolerance[2]) {
    EXPECT_GT(t, 0.0);
    EXPECT_LT(t, 1e-4);
  }
}

TEST(Interpreter, MathBuiltinsCarryTheirUlpBound) {
  const char *src = R"(
kernel k(x: gm<f32>[N], y: gm<f32>[N], z: gm<f32>[N], w: gm<i32>[N]) grid(1) {
  let t = load(x, [0], [4]);
  store(y, [0], exp(t));
  store(z, [0], exp(t) * 2.0 + 1.0);
  store(w, [0], cast<i32>(exp(t)));
}
)";
  Outcome o = run(src, "k",
                  {f32({0.5f, -INFINITY, 1.0f, 100.0f}), f32({0, 0, 0, 0}), f32({0, 0, 0, 0}),
                   zerosOf(ElemType::I32, 4)});
  ASSERT_EQ(o.args.size(), 4u);
  EXPECT_EQ(at<float>(o, 1, 0), static_cast<float>(std::exp(0.5)));
  double t0 = o.tolerance[1][0];
  EXPECT_NEAR(t0, 2.5 * std::ldexp(1.0, -23), 1e-12); // 2 ulps + the reference's half
  EXPECT_EQ(at<float>(o, 1, 1), 0.0f);
  EXPECT_EQ(o.tolerance[1][1], 0.0); // exp(-inf) = +0 exactly
  EXPECT_EQ(at<float>(o, 1, 3), INFINITY);
  EXPECT_EQ(o.tolerance[1][3], 0.0); // overflow = +inf
  // Propagated: 2 t0 plus a rounding of the product and of the sum.
  EXPECT_GE(o.tolerance[2][0], 2 * t0);
  EXPECT_LT(o.tolerance[2][0], 2 * t0 + 4 * std::ldexp(1.0, -21));
  EXPECT_TRUE(std::isinf(o.tolerance[3][0])); // a cast to an integer jumps
  EXPECT_EQ(o.tolerance[3][1], 0.0);
}

TEST(Interpreter, StepBudgetAndUnsupportedPrograms) {
  Source s("kernel k(y: gm<i64>[1], n: i64) grid(1) { for i in 0 .. n { y[0] = i; } }");
  ASSERT_TRUE(s.file);
  Limits lim;
  lim.maxSteps = 1000;
  auto r = interpret(s.file->ast(), "k", {}, {zerosOf(ElemType::I64, 1), i64(1'000'000)}, lim);
  EXPECT_TRUE(std::holds_alternative<std::string>(r));
  EXPECT_NE(runError("kernel k(y: gm<f32>[1], n: i64) grid(1) { y[0] = n + 1.0; }", "k",
                     {f32({0}), i64(1)}),
            "");
  EXPECT_NE(runError("kernel k(y: gm<f16>[4]) grid(1) {\n"
                     "  store(y, [0], load(y, [0], [4]) * 2.0);\n}",
                     "k", {zerosOf(ElemType::F16, 4)}),
            "");
}

} // namespace

//===----------------------------------------------------------------------===//
// Cross-check: the sample kernels compiled for the host
//===----------------------------------------------------------------------===//

namespace {

std::string sampleText(const std::string &name) {
  std::filesystem::path p = std::filesystem::path(__FILE__).parent_path().parent_path().parent_path() /
                            "ops" / "samples" / name;
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// Runs `kernel` of sample `file` compiled for the host and in the
/// interpreter on copies of `args`; every tensor element must agree within
/// the interpreter's bound. Returns the fraction of elements compared.
double crossCheck(const std::string &file, const std::string &kernel,
                  const std::map<std::string, std::string> &spec, std::vector<Argument> args) {
  std::string text = sampleText(file);
  Source s(text);
  EXPECT_TRUE(s.file) << file;
  if (!s.file)
    return 0;
  auto r = interpret(s.file->ast(), kernel, spec, args);
  if (auto *err = std::get_if<std::string>(&r)) {
    ADD_FAILURE() << "not interpreted: " << *err;
    return 0;
  }
  const Outcome &ref = std::get<Outcome>(r);
  // The compiled kernel, on its own copies.
  std::vector<Argument> mine = args;
  rt::ArgPack pack;
  for (Argument &a : mine) {
    if (auto *t = std::get_if<Tensor>(&a)) {
      pack.tensor(t->type, t->storage.data() + t->offset * elemBytes(t->type), t->shape,
                  t->strides);
      continue;
    }
    const Scalar &sc = std::get<Scalar>(a);
    switch (sc.type) {
    case ElemType::F32: pack.f32(sc.f); break;
    case ElemType::I32: pack.i32(static_cast<int32_t>(sc.i)); break;
    case ElemType::I1: pack.boolean(sc.i != 0); break;
    default: pack.i64(sc.i); break;
    }
  }
  jit::KernelSource src(file, text);
  jit::Specialization sp(spec.begin(), spec.end());
  auto k = jit::Compiler::instance().get(src, kernel, sp);
  if (!k) {
    ADD_FAILURE() << llvm::toString(k.takeError());
    return 0;
  }
  if (llvm::Error err = k->kernel->launch(pack)) {
    ADD_FAILURE() << llvm::toString(std::move(err));
    return 0;
  }
  size_t compared = 0, total = 0;
  for (size_t ai = 0; ai < mine.size(); ++ai) {
    auto *t = std::get_if<Tensor>(&mine[ai]);
    if (!t)
      continue;
    const Tensor &rt = std::get<Tensor>(ref.args[ai]);
    unsigned w = elemBytes(t->type);
    for (size_t i = 0; i < t->storage.size() / w; ++i) {
      ++total;
      double tol = ref.tolerance[ai][i];
      if (std::isinf(tol))
        continue;
      ++compared;
      num::Elem a, b;
      uint64_t ua = 0, ub = 0;
      std::memcpy(&ua, t->storage.data() + i * w, w);
      std::memcpy(&ub, rt.storage.data() + i * w, w);
      if (t->type == ElemType::F32) {
        a.f = std::bit_cast<float>(static_cast<uint32_t>(ua));
        b.f = std::bit_cast<float>(static_cast<uint32_t>(ub));
      } else {
        a.i = static_cast<int64_t>(ua);
        b.i = static_cast<int64_t>(ub);
      }
      double x = num::toDouble(a, t->type), y = num::toDouble(b, t->type);
      bool ok = tol == 0 ? (ua == ub || (std::isnan(x) && std::isnan(y)))
                         : ((std::isnan(x) && std::isnan(y)) || std::fabs(x - y) <= tol);
      EXPECT_TRUE(ok) << file << " " << kernel << " argument " << ai << " element " << i
                      << ": compiled " << x << ", reference " << y << " within " << tol;
      if (!ok)
        return 0;
    }
  }
  return total ? static_cast<double>(compared) / static_cast<double>(total) : 0;
}

std::vector<float> randomFloats(size_t n, uint32_t seed, float lo = -2, float hi = 2) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(n);
  for (float &x : v)
    x = d(rng);
  return v;
}

Tensor bf16Of(const std::vector<float> &v, std::vector<int64_t> shape) {
  std::vector<uint16_t> b;
  for (float x : v)
    b.push_back(num::floatToBf16(x));
  return tensorOf(ElemType::BF16, b, shape);
}

Scalar f32s(float v) {
  Scalar s;
  s.type = ElemType::F32;
  s.f = v;
  return s;
}

} // namespace

TEST(InterpreterCrossCheck, Matmul) {
  const int64_t M = 20, N = 24, K = 40;
  std::map<std::string, std::string> spec = {{"BM", "16"}, {"BN", "16"}, {"BK", "32"}};
  spec["T"] = "f32";
  EXPECT_EQ(crossCheck("matmul.tile", "matmul_abt", spec,
                       {f32(randomFloats(M * K, 1), {M, K}), f32(randomFloats(N * K, 2), {N, K}),
                        f32(std::vector<float>(M * N, 0), {M, N})}),
            1.0);
  spec["T"] = "bf16";
  EXPECT_EQ(crossCheck("matmul.tile", "matmul_abt", spec,
                       {bf16Of(randomFloats(M * K, 3), {M, K}), bf16Of(randomFloats(N * K, 4), {N, K}),
                        f32(std::vector<float>(M * N, 0), {M, N})}),
            1.0);
}

TEST(InterpreterCrossCheck, SoftmaxAndElementwise) {
  const int64_t M = 3, N = 100;
  std::vector<float> x = randomFloats(M * N, 5, -20, 20);
  x[7] = -INFINITY;
  EXPECT_EQ(crossCheck("softmax.tile", "softmax", {{"T", "f32"}, {"BN", "32"}},
                       {f32(x, {M, N}), f32(std::vector<float>(M * N, 0), {M, N})}),
            1.0);
  EXPECT_EQ(crossCheck("elementwise.tile", "axpby", {{"T", "f32"}, {"BN", "64"}},
                       {f32(randomFloats(300, 6)), f32(randomFloats(300, 7)), f32s(1.5f),
                        f32s(-0.25f)}),
            1.0);
  std::vector<float> sp = randomFloats(64, 8, -70000, 70000);
  const float specials[] = {0.0f, -0.0f, INFINITY, -INFINITY, std::nanf(""), 1e-40f, 65519.0f,
                            65520.0f, 2.5f, -2.5f, 3e9f, -3e9f};
  std::copy(std::begin(specials), std::end(specials), sp.begin());
  for (const char *to : {"f16", "bf16", "i8", "u8", "i32", "u32", "i64"}) {
    ElemType d = ElemType::F32;
    ASSERT_TRUE(rt::parseElemType(to, d));
    EXPECT_EQ(crossCheck("elementwise.tile", "convert", {{"S", "f32"}, {"D", to}, {"BN", "16"}},
                         {f32(sp), zerosOf(d, 64)}),
              1.0)
        << to;
  }
}

TEST(InterpreterCrossCheck, FlashAttention) {
  const int64_t B = 1, H = 2, S = 5, L = 70, D = 16;
  for (const char *causal : {"false", "true"}) {
    double frac = crossCheck(
        "flash_attention.tile", "attn",
        {{"T", "f32"}, {"D", "16"}, {"G", "2"}, {"BQ", "4"}, {"BKV", "32"}, {"CAUSAL", causal}},
        {f32(randomFloats(B * H * S * D, 9), {B, H, S, D}),
         f32(randomFloats(B * 1 * L * D, 10), {B, 1, L, D}),
         f32(randomFloats(B * 1 * L * D, 11), {B, 1, L, D}),
         f32(std::vector<float>(B * H * S * D, 0), {B, H, S, D}), f32s(0.25f)});
    EXPECT_EQ(frac, 1.0) << causal;
  }
}
