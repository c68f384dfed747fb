//===- ScalarSemanticsTest.cpp - dsl/ir/ScalarSemantics.h against references ===//
//
// The rules the front end and the folder compute with, checked exhaustively
// where the domain is small (every i8/u8 pair, every f16 and bf16 pattern,
// every int16 to f16/bf16) and on edges elsewhere, against references written
// here: the kinds' own C++ arithmetic, and nearest-value searches done in
// long double.
//
//===----------------------------------------------------------------------===//
#include "dsl/ir/ScalarSemantics.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>

using namespace tilejit::ir;
namespace sem = tilejit::ir::scalar;

namespace {

TEST(ScalarSemantics, WrapsToTheKind) {
  EXPECT_EQ(sem::wrapInt(3000000000, ScalarKind::I32), -1294967296);
  EXPECT_EQ(sem::wrapInt(-1, ScalarKind::U32), 4294967295);
  EXPECT_EQ(sem::wrapInt(200, ScalarKind::I8), -56);
  EXPECT_EQ(sem::wrapInt(-1, ScalarKind::U8), 255);
  EXPECT_EQ(sem::wrapInt(2, ScalarKind::I1), 0);
  EXPECT_EQ(sem::wrapInt(3, ScalarKind::I1), 1);
  EXPECT_EQ(sem::wrapInt(std::numeric_limits<int64_t>::min(), ScalarKind::I64),
            std::numeric_limits<int64_t>::min());
}

// Every pair of i8 and of u8 values, every binary op, against the kinds' own
// arithmetic (int, then narrowed).
TEST(ScalarSemantics, EightBitOpsMatchTheKindsArithmetic) {
  const OpKind ops[] = {OpKind::Add, OpKind::Sub, OpKind::Mul, OpKind::Div, OpKind::Rem,
                        OpKind::Min, OpKind::Max, OpKind::And, OpKind::Or,  OpKind::Xor,
                        OpKind::Shl, OpKind::Shr};
  for (ScalarKind k : {ScalarKind::I8, ScalarKind::U8}) {
    bool isSignedKind = k == ScalarKind::I8;
    for (int x = 0; x < 256; ++x)
      for (int y = 0; y < 256; ++y) {
        int a = isSignedKind ? static_cast<int8_t>(x) : x;
        int b = isSignedKind ? static_cast<int8_t>(y) : y;
        for (OpKind op : ops) {
          int want;
          switch (op) {
          case OpKind::Add: want = a + b; break;
          case OpKind::Sub: want = a - b; break;
          case OpKind::Mul: want = a * b; break;
          case OpKind::Div: want = b == 0 ? 0 : a / b; break; // -128 / -1 = 128 narrows to -128
          case OpKind::Rem: want = b == 0 ? 0 : a % b; break;
          case OpKind::Min: want = std::min(a, b); break;
          case OpKind::Max: want = std::max(a, b); break;
          case OpKind::And: want = a & b; break;
          case OpKind::Or: want = a | b; break;
          case OpKind::Xor: want = a ^ b; break;
          case OpKind::Shl: want = a << (y % 8); break;
          default: want = a >> (y % 8); break; // arithmetic on int8, logical on 0..255
          }
          int64_t narrowed = isSignedKind ? static_cast<int8_t>(want) : static_cast<uint8_t>(want);
          ASSERT_EQ(sem::intBinary(op, k, a, b), narrowed)
              << scalarName(k) << " " << mnemonic(op) << " " << a << ", " << b;
        }
        ASSERT_EQ(sem::intCompare(CmpPredicate::Lt, k, a, b), a < b);
        ASSERT_EQ(sem::intCompare(CmpPredicate::Ge, k, a, b), a >= b);
      }
  }
}

TEST(ScalarSemantics, SixtyFourBitEdges) {
  const int64_t lo = std::numeric_limits<int64_t>::min(), hi = std::numeric_limits<int64_t>::max();
  EXPECT_EQ(sem::intBinary(OpKind::Add, ScalarKind::I64, hi, 1), lo);
  EXPECT_EQ(sem::intBinary(OpKind::Div, ScalarKind::I64, lo, -1), lo);
  EXPECT_EQ(sem::intBinary(OpKind::Rem, ScalarKind::I64, lo, -1), 0);
  EXPECT_EQ(sem::intBinary(OpKind::Div, ScalarKind::I64, 7, 0), 0);
  EXPECT_EQ(sem::intBinary(OpKind::Add, ScalarKind::I64, 9007199254740991, 2), 9007199254740993);
  EXPECT_EQ(sem::intBinary(OpKind::Mul, ScalarKind::I64, 4503599627370497, 3), 13510798882111491);
  EXPECT_EQ(sem::intBinary(OpKind::Shl, ScalarKind::I64, 1, 64), 1);
  EXPECT_EQ(sem::intBinary(OpKind::Shr, ScalarKind::I64, -8, 65), -4);
  EXPECT_EQ(sem::intUnary(OpKind::Abs, ScalarKind::I64, lo), lo);
  EXPECT_EQ(sem::intBinary(OpKind::Div, ScalarKind::U32, -1, 2), 2147483647);
  EXPECT_EQ(sem::intBinary(OpKind::Min, ScalarKind::U32, -1, 2), 2);
  EXPECT_EQ(sem::intBinary(OpKind::Shr, ScalarKind::U32, -1, 28), 15);
  EXPECT_TRUE(sem::intCompare(CmpPredicate::Lt, ScalarKind::I32, 3000000000, 0));
  EXPECT_FALSE(sem::intCompare(CmpPredicate::Lt, ScalarKind::U32, 3000000000, 0));
}

uint32_t bits(float f) { return std::bit_cast<uint32_t>(f); }

TEST(ScalarSemantics, MinMaxOrderSignedZerosAndPropagateNaN) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_EQ(bits(sem::floatBinary(OpKind::Min, 0.0f, -0.0f)), 0x80000000u);
  EXPECT_EQ(bits(sem::floatBinary(OpKind::Min, -0.0f, 0.0f)), 0x80000000u);
  EXPECT_EQ(bits(sem::floatBinary(OpKind::Max, -0.0f, 0.0f)), 0u);
  EXPECT_EQ(bits(sem::floatBinary(OpKind::Max, 0.0f, -0.0f)), 0u);
  EXPECT_EQ(bits(sem::floatBinary(OpKind::Min, 1.0f, nan)), 0x7fc00000u);
  EXPECT_EQ(bits(sem::floatBinary(OpKind::Min, nan, 1.0f)), 0x7fc00000u);
  EXPECT_EQ(bits(sem::floatBinary(OpKind::Max, -nan, 1.0f)), 0x7fc00000u);
  EXPECT_EQ(sem::floatBinary(OpKind::Min, 2.0f, -3.0f), -3.0f);
  EXPECT_EQ(sem::floatBinary(OpKind::Max, 2.0f, -3.0f), 2.0f);
}

TEST(ScalarSemantics, ArithmeticNaNsAreCanonicalAndSignOpsKeepThem) {
  const float inf = std::numeric_limits<float>::infinity();
  const float payload = std::bit_cast<float>(0xffc01234u);
  EXPECT_EQ(bits(sem::floatBinary(OpKind::Div, 0.0f, 0.0f)), 0x7fc00000u);
  EXPECT_EQ(bits(sem::floatBinary(OpKind::Sub, inf, inf)), 0x7fc00000u);
  EXPECT_EQ(bits(sem::floatBinary(OpKind::Add, payload, 1.0f)), 0x7fc00000u);
  EXPECT_EQ(bits(sem::floatFma(0.0f, inf, 1.0f)), 0x7fc00000u);
  EXPECT_EQ(bits(sem::floatUnary(OpKind::Sqrt, -1.0f)), 0x7fc00000u);
  EXPECT_EQ(bits(sem::floatUnary(OpKind::Neg, payload)), 0x7fc01234u);
  EXPECT_EQ(bits(sem::floatUnary(OpKind::Abs, payload)), 0x7fc01234u);
  EXPECT_TRUE(sem::floatCompare(CmpPredicate::Ne, payload, payload));
  EXPECT_FALSE(sem::floatCompare(CmpPredicate::Eq, payload, payload));
}

TEST(ScalarSemantics, FloatToIntTruncatesSaturatesAndMapsNaNToZero) {
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(sem::floatToInt(std::numeric_limits<float>::quiet_NaN(), ScalarKind::I32), 0);
  EXPECT_EQ(sem::floatToInt(-2.9f, ScalarKind::I8), -2);
  EXPECT_EQ(sem::floatToInt(300.0f, ScalarKind::I8), 127);
  EXPECT_EQ(sem::floatToInt(-300.0f, ScalarKind::I8), -128);
  EXPECT_EQ(sem::floatToInt(-1.0f, ScalarKind::U8), 0);
  EXPECT_EQ(sem::floatToInt(inf, ScalarKind::U32), 4294967295);
  EXPECT_EQ(sem::floatToInt(4294967296.0f, ScalarKind::U32), 4294967295);
  EXPECT_EQ(sem::floatToInt(2147483648.0f, ScalarKind::I32), 2147483647);
  EXPECT_EQ(sem::floatToInt(-inf, ScalarKind::I64), std::numeric_limits<int64_t>::min());
  EXPECT_EQ(sem::floatToInt(inf, ScalarKind::I64), std::numeric_limits<int64_t>::max());
  EXPECT_EQ(sem::floatToInt(9.2233715e18f, ScalarKind::I64), 9223371487098961920);
  EXPECT_EQ(sem::floatToInt(0.5f, ScalarKind::I1), 1);
  EXPECT_EQ(sem::floatToInt(std::numeric_limits<float>::quiet_NaN(), ScalarKind::I1), 1);
  EXPECT_EQ(sem::floatToInt(-0.0f, ScalarKind::I1), 0);
}

/// The nearest pattern of a format to `x`, by search (ties to the even
/// pattern); `value` decodes a non-negative pattern, `top` is the largest
/// finite one and top + 1 is inf.
template <class Decode>
uint16_t nearest(long double x, Decode value, uint16_t top) {
  long double ax = std::fabs(x);
  uint32_t lo = 0, hi = top; // the largest pattern <= ax, by bisection
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo + 1) / 2;
    if (value(static_cast<uint16_t>(mid)) <= ax)
      lo = mid;
    else
      hi = mid - 1;
  }
  uint16_t best = static_cast<uint16_t>(lo);
  uint16_t r = best;
  if (value(best) != ax) {
    long double above = best == top ? 2 * value(best) - value(best - 1) : value(best + 1);
    long double dl = ax - value(best), du = above - ax;
    if (du < dl || (du == dl && (best & 1)))
      r = static_cast<uint16_t>(best + 1);
  }
  return std::signbit(x) ? static_cast<uint16_t>(r | 0x8000) : r;
}

long double halfValue(uint16_t p) {
  unsigned e = p >> 10, m = p & 0x3ff;
  return e ? std::ldexp(static_cast<long double>(1024 + m), static_cast<int>(e) - 25)
           : std::ldexp(static_cast<long double>(m), -24);
}
long double bfloatValue(uint16_t p) { return std::bit_cast<float>(uint32_t(p) << 16); }

TEST(ScalarSemantics, HalfAndBfloatPatternsRoundTripThroughF32) {
  for (uint32_t p = 0; p < 0x10000; ++p) {
    uint16_t h = static_cast<uint16_t>(p);
    float f = sem::halfBitsToFloat(h);
    float g = sem::bfloatBitsToFloat(h);
    if (!std::isnan(f)) {
      ASSERT_EQ(sem::floatToHalfBits(f), h);
      if ((p & 0x7fff) < 0x7c00) {
        ASSERT_EQ(static_cast<long double>(std::fabs(f)), halfValue(h & 0x7fff)) << p;
      }
    }
    if (!std::isnan(g)) {
      ASSERT_EQ(sem::floatToBfloatBits(g), h);
    }
  }
}

// Every integer of 16 bits to f16 and bf16, and i32 edges, against the
// nearest pattern found by search.
TEST(ScalarSemantics, IntToNarrowFloatRoundsOnce) {
  for (int64_t v = -32768; v < 65536; ++v) {
    ScalarKind k = v < 0 ? ScalarKind::I16 : ScalarKind::U16;
    ASSERT_EQ(sem::intToNarrowFloatBits(v, k, ScalarKind::F16),
              nearest(static_cast<long double>(v), halfValue, 0x7bff))
        << v;
    ASSERT_EQ(sem::intToNarrowFloatBits(v, k, ScalarKind::BF16),
              nearest(static_cast<long double>(v), bfloatValue, 0x7f7f))
        << v;
  }
  EXPECT_EQ(sem::intToNarrowFloatBits(16842753, ScalarKind::I32, ScalarKind::BF16), 0x4b81);
  EXPECT_EQ(sem::intToNarrowFloatBits(-16842753, ScalarKind::I32, ScalarKind::BF16), 0xcb81);
  EXPECT_EQ(sem::intToNarrowFloatBits(16842752, ScalarKind::I32, ScalarKind::BF16), 0x4b80);
  EXPECT_EQ(sem::intToNarrowFloatBits(-1, ScalarKind::U32, ScalarKind::F16), 0x7c00);
  EXPECT_EQ(sem::intToNarrowFloatBits(std::numeric_limits<int64_t>::min(), ScalarKind::I64,
                                      ScalarKind::BF16),
            0xdf00);
}

TEST(ScalarSemantics, IntToF32RoundsOnce) {
  EXPECT_EQ(sem::intToFloat(16777217, ScalarKind::I64), 16777216.0f);
  EXPECT_EQ(sem::intToFloat(16777219, ScalarKind::I64), 16777220.0f);
  EXPECT_EQ(sem::intToFloat(-1, ScalarKind::U32), 4294967296.0f);
  EXPECT_EQ(sem::intToFloat(std::numeric_limits<int64_t>::max(), ScalarKind::I64),
            9223372036854775808.0f);
  // 2^62 + 2^38 + 1: above the midpoint 2^62 + 2^38 between two f32s.
  EXPECT_EQ(bits(sem::intToFloat(0x4000004000000001, ScalarKind::I64)),
            bits(std::nextafter(4611686018427387904.0f, INFINITY)));
  EXPECT_EQ(sem::intToFloat(1, ScalarKind::I1), 1.0f);
  for (int64_t v = -(int64_t(1) << 26); v < (int64_t(1) << 26); v += 7)
    ASSERT_EQ(sem::intToFloat(v, ScalarKind::I32), static_cast<float>(v)) << v;
}

} // namespace
