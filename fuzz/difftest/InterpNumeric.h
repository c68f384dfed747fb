//===- InterpNumeric.h - Element kinds, conversions and error bounds -*- C++ -*-===//
///
/// \file
/// The arithmetic of the reference interpreter, element by element, written
/// from docs/dsl.md (sections 5, 6, 8.6, 8.9): the element kinds, integer
/// wrapping, the f16/bf16 encodings and the one rounding of every conversion,
/// the math builtins (libm in double, rounded to f32) with the ulp bound the
/// manual documents, and the first-order error bounds that carry an inexact
/// input through an operation.
///
//===----------------------------------------------------------------------===//
#ifndef TILEJIT_FUZZ_DIFFTEST_INTERPNUMERIC_H
#define TILEJIT_FUZZ_DIFFTEST_INTERPNUMERIC_H

#include "runtime/Runtime.h"

#include <cstdint>
#include <limits>
#include <string>

namespace tilejit::difftest::num {

using Kind = rt::ElemType;

constexpr double kInf = std::numeric_limits<double>::infinity();

bool isFloat(Kind k);   ///< f16, bf16, f32
bool isInteger(Kind k); ///< every integer kind except i1
bool isSigned(Kind k);  ///< i8 i16 i32 i64
unsigned bitWidth(Kind k); ///< i1 counts 1
const char *name(Kind k);

/// `v` wrapped to kind `k` (two's complement): sign-extended for the signed
/// kinds, zero-extended for the unsigned ones, 0/1 for i1.
int64_t wrap(uint64_t v, Kind k);

/// One element: integer kinds and i1 in `i` (wrapped), f16/bf16 as their
/// 16 bits in `i`, f32 in `f`.
struct Elem {
  int64_t i = 0;
  float f = 0;
};

/// The f16/bf16 encodings: decode is exact, encode rounds to nearest even
/// (overflow to infinity, subnormals kept, NaN stays NaN).
float halfToFloat(uint16_t h);
float bf16ToFloat(uint16_t h);
uint16_t floatToHalf(float f);
uint16_t floatToBf16(float f);
/// The value of an element as a double (exact for every kind).
double toDouble(const Elem &e, Kind k);

/// `cast<to>` of one element of kind `from` (docs/dsl.md 8.9).
Elem cast(const Elem &e, Kind from, Kind to);
/// `bitcast<to>` between kinds of one width.
Elem bitcast(const Elem &e, Kind from, Kind to);
/// An exact integer rounded once to nearest even in kind `to` (f16, bf16,
/// f32): the value of `cast<to>` of an integer.
Elem intToFloat(int64_t v, bool isUnsigned, Kind to);
/// A double rounded to an f32 element of kind `to` as the compiler's
/// constants are (to f32 first, then to the storage kind).
Elem floatConstant(double v, Kind to);

/// Distance between adjacent floats of kind `k` at magnitude `m` (the ulp of
/// the binade holding m; the subnormal step below the normal range).
double ulpAt(double m, Kind k = Kind::F32);
/// Largest finite value of a float kind.
double maxFinite(Kind k);

/// The math builtins of section 6.1 on f32: the exact result rounded to f32
/// (libm in double) and the bound the manual allows for the compiled result
/// measured from that value, before any input error.
struct MathResult {
  float value;
  double tol;
};
MathResult math(const std::string &fn, float x);
MathResult mathPow(float x, float y);
/// The result of `fn` at `x` in double (no rounding), for error propagation.
double mathExact(const std::string &fn, double x);

} // namespace tilejit::difftest::num

#endif
