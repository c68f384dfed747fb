//===- ScalarSemantics.h - One meaning for every scalar rule -----*- C++ -*-===//
///
/// \file
/// The value of every elementwise op on constant operands, written once: the
/// front end's literal arithmetic (dsl/sema) and the constant folder
/// (codegen/passes/FoldConstants) compute with these functions, and the LLVM
/// emitter (codegen/llvm/CodeGenElementwise.cpp) generates code that gives the
/// same bits. docs/dsl.md (sections 1, 5 and 8.9) and the semantics note of
/// IR.h state the rules; tests/unit/ScalarSemanticsTest.cpp checks these
/// functions against independent references and tests/e2e/ScalarSemanticsTest.cpp
/// checks that folded and generated code agree.
///
/// Integer values of every kind travel in an `int64_t`: signed kinds
/// sign-extended, unsigned kinds zero-extended (u64 as its bit pattern), i1 as
/// 0 or 1. Every function takes operands in that form (wrapping them first, so
/// an out-of-range input means what the run time's truncation would make of
/// it) and returns its result in that form.
///
/// f32 values are C++ `float`s computed in round-to-nearest-even with
/// subnormals kept. An arithmetic op whose result is NaN returns the canonical
/// quiet NaN (0x7fc00000): the hardware's default NaN (0xffc00000 on x86), the
/// payload of a NaN operand and which of two NaN operands wins all depend on
/// the instruction order and on what LLVM folds, so no build could promise
/// them. Sign operations (`neg`, `abs`), rounding to an integral value and
/// conversions between float kinds keep a NaN's sign and payload (quieted).
///
//===----------------------------------------------------------------------===//
#ifndef TILEJIT_DSL_IR_SCALARSEMANTICS_H
#define TILEJIT_DSL_IR_SCALARSEMANTICS_H

#include "dsl/ir/IR.h"

#include <bit>
#include <cassert>
#include <cmath>
#include <cstdint>
#include <limits>

namespace tilejit::ir::scalar {

//===----------------------------------------------------------------------===//
// Integers
//===----------------------------------------------------------------------===//

/// `v` truncated to the width of `k` and extended by its signedness; i1 keeps
/// the lowest bit.
inline int64_t wrapInt(int64_t v, ScalarKind k) {
  unsigned bits = bitWidth(k);
  if (bits >= 64)
    return v;
  uint64_t mask = (uint64_t(1) << bits) - 1;
  uint64_t u = static_cast<uint64_t>(v) & mask;
  if (k != ScalarKind::I1 && isSigned(k) && (u >> (bits - 1)))
    u |= ~mask;
  return static_cast<int64_t>(u);
}

/// The integer binary ops of Tile IR (IR.h, semantics note): two's
/// complement, wrapping; `div`/`rem` by zero give 0, INT_MIN / -1 wraps to
/// INT_MIN (and its remainder is 0); shift amounts are taken modulo the
/// width, `shr` is arithmetic on signed kinds; `min`/`max` compare with the
/// kind's signedness. On i1 only `and`, `or`, `xor`, `min` and `max` are
/// meaningful (the front end allows no other).
inline int64_t intBinary(OpKind op, ScalarKind k, int64_t a, int64_t b) {
  a = wrapInt(a, k);
  b = wrapInt(b, k);
  bool isUnsigned = !isSigned(k);
  uint64_t ua = static_cast<uint64_t>(a), ub = static_cast<uint64_t>(b);
  unsigned bits = bitWidth(k);
  switch (op) {
  case OpKind::Add: return wrapInt(static_cast<int64_t>(ua + ub), k);
  case OpKind::Sub: return wrapInt(static_cast<int64_t>(ua - ub), k);
  case OpKind::Mul: return wrapInt(static_cast<int64_t>(ua * ub), k);
  case OpKind::Div:
    if (b == 0)
      return 0;
    if (isUnsigned)
      return wrapInt(static_cast<int64_t>(ua / ub), k);
    if (b == -1)
      return wrapInt(static_cast<int64_t>(0 - ua), k);
    return wrapInt(a / b, k);
  case OpKind::Rem:
    if (b == 0)
      return 0;
    if (isUnsigned)
      return wrapInt(static_cast<int64_t>(ua % ub), k);
    if (b == -1)
      return 0;
    return wrapInt(a % b, k);
  case OpKind::Min:
    if (isUnsigned)
      return static_cast<int64_t>(ua < ub ? ua : ub);
    return a < b ? a : b;
  case OpKind::Max:
    if (isUnsigned)
      return static_cast<int64_t>(ua > ub ? ua : ub);
    return a > b ? a : b;
  case OpKind::And: return a & b;
  case OpKind::Or: return a | b;
  case OpKind::Xor: return wrapInt(a ^ b, k);
  case OpKind::Shl:
  case OpKind::Shr: {
    unsigned amount = static_cast<unsigned>(ub % bits);
    if (op == OpKind::Shl)
      return wrapInt(static_cast<int64_t>(ua << amount), k);
    if (isUnsigned) // zero-extended already: a logical shift
      return wrapInt(static_cast<int64_t>(ua >> amount), k);
    return wrapInt(a >> amount, k); // arithmetic (C++20)
  }
  default:
    assert(false && "not an integer binary op");
    return 0;
  }
}

/// `neg`, `not` and `abs` on an integer kind (`abs` of INT_MIN wraps to
/// INT_MIN; on an unsigned kind it is the identity).
inline int64_t intUnary(OpKind op, ScalarKind k, int64_t a) {
  a = wrapInt(a, k);
  uint64_t ua = static_cast<uint64_t>(a);
  switch (op) {
  case OpKind::Neg: return wrapInt(static_cast<int64_t>(0 - ua), k);
  case OpKind::Not: return wrapInt(~a, k);
  case OpKind::Abs:
    if (!isSigned(k) || a >= 0)
      return a;
    return wrapInt(static_cast<int64_t>(0 - ua), k);
  default:
    assert(false && "not an integer unary op");
    return 0;
  }
}

/// `cmp` on an integer kind, with the kind's signedness.
inline bool intCompare(CmpPredicate p, ScalarKind k, int64_t a, int64_t b) {
  a = wrapInt(a, k);
  b = wrapInt(b, k);
  bool isUnsigned = !isSigned(k);
  uint64_t ua = static_cast<uint64_t>(a), ub = static_cast<uint64_t>(b);
  bool lt = isUnsigned ? ua < ub : a < b;
  bool gt = isUnsigned ? ua > ub : a > b;
  switch (p) {
  case CmpPredicate::Eq: return a == b;
  case CmpPredicate::Ne: return a != b;
  case CmpPredicate::Lt: return lt;
  case CmpPredicate::Le: return !gt;
  case CmpPredicate::Gt: return gt;
  case CmpPredicate::Ge: return !lt;
  }
  return false;
}

//===----------------------------------------------------------------------===//
// f32
//===----------------------------------------------------------------------===//

/// The canonical quiet NaN, 0x7fc00000: what every arithmetic op that gives
/// a NaN gives.
inline float canonicalNaN() { return std::bit_cast<float>(0x7fc00000u); }

/// `r`, or the canonical NaN where `r` is a NaN.
inline float canonicalize(float r) { return std::isnan(r) ? canonicalNaN() : r; }

/// `min`/`max` of f32: a NaN on either side gives NaN; -0 orders below +0.
inline float floatMinMax(bool isMin, float a, float b) {
  if (std::isnan(a) || std::isnan(b))
    return canonicalNaN();
  if (a == b) // equal, or +0 and -0: the one with the sign bit for min
    return std::signbit(a) == isMin ? a : b;
  return (a < b) == isMin ? a : b;
}

/// The f32 binary ops: `add sub mul div rem min max`, IEEE-754 binary32
/// correctly rounded (`rem` is C's fmod), with canonical NaN results.
inline float floatBinary(OpKind op, float a, float b) {
  switch (op) {
  case OpKind::Add: return canonicalize(a + b);
  case OpKind::Sub: return canonicalize(a - b);
  case OpKind::Mul: return canonicalize(a * b);
  case OpKind::Div: return canonicalize(a / b);
  case OpKind::Rem: return canonicalize(std::fmod(a, b));
  case OpKind::Min: return floatMinMax(true, a, b);
  case OpKind::Max: return floatMinMax(false, a, b);
  default:
    assert(false && "not an f32 binary op");
    return canonicalNaN();
  }
}

/// `fma(a, b, c)`: one rounding.
inline float floatFma(float a, float b, float c) {
  return canonicalize(std::fma(a, b, c));
}

/// The f32 unary ops the folder computes exactly: `neg` and `abs` (sign
/// operations: a NaN keeps its payload), `floor`, `ceil`, `round` (half to
/// even; a NaN stays that NaN, quieted) and `sqrt` (correctly rounded,
/// canonical NaN). The math builtins are approximations of codegen's and are
/// never folded.
inline float floatUnary(OpKind op, float a) {
  switch (op) {
  case OpKind::Neg: return -a;
  case OpKind::Abs: return std::fabs(a);
  case OpKind::Floor: return std::floor(a);
  case OpKind::Ceil: return std::ceil(a);
  case OpKind::Round: return std::nearbyint(a); // the default mode: half to even
  case OpKind::Sqrt: return canonicalize(std::sqrt(a));
  default:
    assert(false && "not a folded f32 unary op");
    return canonicalNaN();
  }
}

/// `cmp` on f32: ordered, except `ne`, which is true when either is NaN.
inline bool floatCompare(CmpPredicate p, float a, float b) {
  switch (p) {
  case CmpPredicate::Eq: return a == b;
  case CmpPredicate::Ne: return !(a == b);
  case CmpPredicate::Lt: return a < b;
  case CmpPredicate::Le: return a <= b;
  case CmpPredicate::Gt: return a > b;
  case CmpPredicate::Ge: return a >= b;
  }
  return false;
}

//===----------------------------------------------------------------------===//
// Conversions
//===----------------------------------------------------------------------===//

/// `cast` between integer kinds (i1 included): truncates, or extends by the
/// source's signedness; to i1 it is `v != 0`.
inline int64_t intToInt(int64_t v, ScalarKind from, ScalarKind to) {
  v = wrapInt(v, from);
  if (to == ScalarKind::I1)
    return v != 0;
  return wrapInt(v, to);
}

/// `cast` from f32 to an integer kind: rounds toward zero and saturates to
/// the kind's range; NaN gives 0. To i1 it is `f != 0` (NaN gives 1).
inline int64_t floatToInt(float f, ScalarKind to) {
  if (to == ScalarKind::I1)
    return !(f == 0.0f);
  if (std::isnan(f))
    return 0;
  unsigned bits = bitWidth(to);
  double t = std::trunc(static_cast<double>(f));
  if (!isSigned(to)) {
    if (t <= 0)
      return 0;
    if (t >= std::ldexp(1.0, static_cast<int>(bits))) // 2^bits: above the range
      return wrapInt(-1, to); // every bit set: the largest value
    return wrapInt(static_cast<int64_t>(static_cast<uint64_t>(t)), to);
  }
  double lo = -std::ldexp(1.0, static_cast<int>(bits) - 1);
  if (t <= lo)
    return static_cast<int64_t>(lo);
  if (t >= -lo) // 2^(bits-1): above the range
    return bits >= 64 ? std::numeric_limits<int64_t>::max()
                      : static_cast<int64_t>(-lo) - 1;
  return static_cast<int64_t>(t);
}

/// An integer's magnitude rounded to `precision` significant bits, to
/// nearest, ties to even: `mantissa * 2^exponent` with mantissa <= 2^precision.
/// Rounding the integer itself, once, is what makes a conversion to a
/// narrow float (bf16: 8 bits, f16: 11) correct: going through f32 would round
/// twice.
struct RoundedMagnitude {
  uint64_t mantissa;
  unsigned exponent;
};
inline RoundedMagnitude roundMagnitude(uint64_t m, unsigned precision) {
  unsigned length = m == 0 ? 0 : 64 - static_cast<unsigned>(std::countl_zero(m));
  if (length <= precision)
    return {m, 0};
  unsigned shift = length - precision;
  uint64_t q = m >> shift, rest = m & ((uint64_t(1) << shift) - 1);
  uint64_t half = uint64_t(1) << (shift - 1);
  if (rest > half || (rest == half && (q & 1)))
    ++q;
  return {q, shift};
}

/// Sign and magnitude of an integer of kind `k` in the int64_t form.
inline bool isNegativeInt(int64_t v, ScalarKind k) {
  return isSigned(k) && wrapInt(v, k) < 0;
}
inline uint64_t magnitudeOf(int64_t v, ScalarKind k) {
  v = wrapInt(v, k);
  uint64_t u = static_cast<uint64_t>(v);
  return isNegativeInt(v, k) ? 0 - u : u;
}

/// `cast` from an integer kind to f32: rounds once, to nearest even.
inline float intToFloat(int64_t v, ScalarKind from) {
  RoundedMagnitude r = roundMagnitude(magnitudeOf(v, from), 24);
  float f = std::ldexp(static_cast<float>(r.mantissa), static_cast<int>(r.exponent));
  return isNegativeInt(v, from) ? -f : f;
}

/// f32 -> f16 bits, to nearest even (overflow gives inf); a NaN keeps its
/// sign and top payload bits, quieted.
inline uint16_t floatToHalfBits(float f) {
  uint32_t x = std::bit_cast<uint32_t>(f);
  uint32_t sign = (x >> 16) & 0x8000u;
  uint32_t a = x & 0x7fffffffu;
  if (a > 0x7f800000u) // NaN
    return static_cast<uint16_t>(sign | 0x7e00u | ((a >> 13) & 0x3ffu));
  if (a >= 0x477ff000u) // >= 65520: rounds to inf (inf included)
    return static_cast<uint16_t>(sign | 0x7c00u);
  if (a >= 0x38800000u) { // normal f16 (>= 2^-14)
    uint32_t r = a - 0x38000000u; // rebias the exponent: 127 - 15 = 112
    r += 0xfffu + ((r >> 13) & 1u); // to nearest even on the 13 dropped bits
    return static_cast<uint16_t>(sign | (r >> 13));
  }
  // Subnormal f16 (or zero): the value in units of 2^-24, to nearest even.
  uint32_t m = (a & 0x7fffffu) | (a ? 0x800000u : 0u);
  int e = static_cast<int>(a >> 23); // the f32 biased exponent, < 113
  int shift = 126 - e;               // 2^-24 units: m * 2^(e - 150) / 2^-24
  if (a == 0 || shift >= 32)
    return static_cast<uint16_t>(sign);
  uint32_t q = m >> shift, rest = m & ((1u << shift) - 1), half = 1u << (shift - 1);
  if (rest > half || (rest == half && (q & 1)))
    ++q;
  return static_cast<uint16_t>(sign | q);
}

/// f32 -> bf16 bits, to nearest even; a NaN keeps its sign and top payload
/// bits, quieted.
inline uint16_t floatToBfloatBits(float f) {
  uint32_t x = std::bit_cast<uint32_t>(f);
  if ((x & 0x7fffffffu) > 0x7f800000u)
    return static_cast<uint16_t>((x >> 16) | 0x40u);
  x += 0x7fffu + ((x >> 16) & 1u);
  return static_cast<uint16_t>(x >> 16);
}

/// f16 / bf16 bits -> f32 (exact).
inline float halfBitsToFloat(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000u) << 16;
  uint32_t e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
  if (e == 0x1f)
    return std::bit_cast<float>(sign | 0x7f800000u | (m << 13));
  if (e != 0)
    return std::bit_cast<float>(sign | ((e + 112) << 23) | (m << 13));
  float v = std::ldexp(static_cast<float>(m), -24);
  return sign ? -v : v;
}
inline float bfloatBitsToFloat(uint16_t b) {
  return std::bit_cast<float>(uint32_t(b) << 16);
}

/// `cast` from an integer kind to f16 or bf16: the integer rounded once, to
/// nearest even (f16 overflows to inf from 65520 on).
inline uint16_t intToNarrowFloatBits(int64_t v, ScalarKind from, ScalarKind to) {
  assert((to == ScalarKind::F16 || to == ScalarKind::BF16) && "a storage float kind");
  RoundedMagnitude r = roundMagnitude(magnitudeOf(v, from), to == ScalarKind::F16 ? 11 : 8);
  // Exact in f32: at most 11 significant bits, at most 2^64.
  float f = std::ldexp(static_cast<float>(r.mantissa), static_cast<int>(r.exponent));
  if (isNegativeInt(v, from))
    f = -f;
  return to == ScalarKind::F16 ? floatToHalfBits(f) : floatToBfloatBits(f);
}

} // namespace tilejit::ir::scalar

#endif
