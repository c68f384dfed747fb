//===- InterpNumeric.cpp - Element kinds, conversions and error bounds ----===//
#include "InterpNumeric.h"

#include <bit>
#include <cfloat>
#include <cmath>

namespace tilejit::difftest::num {

bool isFloat(Kind k) { return k == Kind::F16 || k == Kind::BF16 || k == Kind::F32; }
bool isInteger(Kind k) { return !isFloat(k) && k != Kind::I1; }
bool isSigned(Kind k) {
  return k == Kind::I8 || k == Kind::I16 || k == Kind::I32 || k == Kind::I64;
}
unsigned bitWidth(Kind k) {
  switch (k) {
  case Kind::I1: return 1;
  case Kind::I8: case Kind::U8: return 8;
  case Kind::I16: case Kind::U16: case Kind::F16: case Kind::BF16: return 16;
  case Kind::I32: case Kind::U32: case Kind::F32: return 32;
  case Kind::I64: return 64;
  }
  return 0;
}
const char *name(Kind k) { return rt::elemTypeName(k); }

int64_t wrap(uint64_t v, Kind k) {
  unsigned bits = bitWidth(k);
  if (k == Kind::I1)
    return static_cast<int64_t>(v & 1);
  if (bits >= 64)
    return static_cast<int64_t>(v);
  uint64_t mask = (uint64_t(1) << bits) - 1;
  v &= mask;
  if (isSigned(k) && (v >> (bits - 1)))
    v |= ~mask;
  return static_cast<int64_t>(v);
}

namespace {

/// Significand bits (with the implicit one) and smallest normal exponent.
struct Format {
  int p, emin;
  long double max;
};
Format formatOf(Kind k) {
  switch (k) {
  case Kind::F16: return {11, -14, 65504.0L};
  case Kind::BF16: return {8, -126, std::ldexp(255.0L, 120)};
  default: return {24, -126, static_cast<long double>(FLT_MAX)};
  }
}

/// `x` (exact) rounded once, to nearest even, into format `f`: an unbounded
/// exponent first, then overflow to infinity (IEEE 754 4.3.1, 7.4).
long double roundTo(long double x, const Format &f) {
  if (x == 0 || !std::isfinite(x))
    return x;
  long double m = std::fabs(x);
  int e2;
  std::frexp(m, &e2); // m = g * 2^e2, g in [0.5, 1)
  int e = std::max(e2 - 1, f.emin);
  long double q = std::ldexp(1.0L, e - (f.p - 1));
  long double r = std::nearbyint(m / q) * q; // default rounding: nearest even
  if (r > f.max)
    r = HUGE_VALL;
  return std::copysign(r, x);
}

/// The f16 bits of a value that f16 represents exactly (or infinity).
uint16_t encodeHalf(long double r) {
  uint16_t sign = std::signbit(r) ? 0x8000 : 0;
  long double m = std::fabs(r);
  if (std::isinf(m))
    return sign | 0x7c00;
  if (m < std::ldexp(1.0L, -14))
    return sign | static_cast<uint16_t>(m * std::ldexp(1.0L, 24));
  int e2;
  std::frexp(m, &e2);
  int e = e2 - 1;
  auto mant = static_cast<uint16_t>((m / std::ldexp(1.0L, e) - 1) * 1024);
  return sign | static_cast<uint16_t>((e + 15) << 10) | mant;
}

} // namespace

float halfToFloat(uint16_t h) {
  bool neg = h & 0x8000;
  unsigned e = (h >> 10) & 0x1f, m = h & 0x3ff;
  float v;
  if (e == 0x1f && m) // docs/dsl.md 8.9: sign and payload kept, quiet bit set
    return std::bit_cast<float>((neg ? 0x80000000u : 0u) | 0x7fc00000u | (uint32_t(m) << 13));
  if (e == 0x1f)
    v = std::numeric_limits<float>::infinity();
  else if (e == 0)
    v = std::ldexp(static_cast<float>(m), -24);
  else
    v = std::ldexp(static_cast<float>(m | 0x400), static_cast<int>(e) - 25);
  return neg ? -v : v;
}

float bf16ToFloat(uint16_t h) { return std::bit_cast<float>(uint32_t(h) << 16); }

uint16_t floatToHalf(float f) {
  if (std::isnan(f)) // docs/dsl.md 8.9: the sign and top payload bits, quiet bit set
    return static_cast<uint16_t>(((std::bit_cast<uint32_t>(f) >> 16) & 0x8000) | 0x7e00 |
                                 ((std::bit_cast<uint32_t>(f) >> 13) & 0x3ff));
  return encodeHalf(roundTo(f, formatOf(Kind::F16)));
}

uint16_t floatToBf16(float f) {
  uint32_t bits = std::bit_cast<uint32_t>(f);
  if (std::isnan(f))
    return static_cast<uint16_t>((bits >> 16) | 0x40);
  float r = static_cast<float>(roundTo(f, formatOf(Kind::BF16)));
  return static_cast<uint16_t>(std::bit_cast<uint32_t>(r) >> 16);
}

double toDouble(const Elem &e, Kind k) {
  switch (k) {
  case Kind::F32: return e.f;
  case Kind::F16: return halfToFloat(static_cast<uint16_t>(e.i));
  case Kind::BF16: return bf16ToFloat(static_cast<uint16_t>(e.i));
  default: return static_cast<double>(e.i);
  }
}

Elem intToFloat(int64_t v, bool isUnsigned, Kind to) {
  long double x = isUnsigned ? static_cast<long double>(static_cast<uint64_t>(v))
                             : static_cast<long double>(v); // exact: 64-bit significand
  long double r = roundTo(x, formatOf(to));
  Elem out;
  switch (to) {
  case Kind::F32: out.f = static_cast<float>(r); break;
  case Kind::F16: out.i = encodeHalf(r); break;
  case Kind::BF16:
    out.i = std::bit_cast<uint32_t>(static_cast<float>(r)) >> 16;
    break;
  default: break;
  }
  return out;
}

Elem floatConstant(double v, Kind to) {
  Elem out;
  float f = static_cast<float>(v);
  if (to == Kind::F32)
    out.f = f;
  else if (to == Kind::F16)
    out.i = floatToHalf(f);
  else
    out.i = floatToBf16(f);
  return out;
}

Elem cast(const Elem &e, Kind from, Kind to) {
  if (from == to)
    return e;
  Elem out;
  if (to == Kind::I1) {
    // Non-zero is true; a NaN is not zero.
    out.i = isFloat(from) ? (toDouble(e, from) != 0 ? 1 : 0) : (e.i != 0 ? 1 : 0);
    return out;
  }
  if (!isFloat(from)) { // integers and i1 (0/1)
    if (!isFloat(to)) {
      out.i = wrap(static_cast<uint64_t>(e.i), to);
      return out;
    }
    return intToFloat(e.i, false, to); // unsigned kinds hold non-negative values
  }
  float f = static_cast<float>(toDouble(e, from)); // f16/bf16 -> f32 is exact
  if (!isFloat(to)) {
    // Toward zero, saturating; NaN becomes 0 (C's conversion where it is
    // defined; LLVM's fptosi.sat everywhere).
    if (std::isnan(f))
      return out;
    unsigned bits = bitWidth(to);
    double lo = isSigned(to) ? -std::ldexp(1.0, bits - 1) : 0.0;
    double hi = isSigned(to) ? std::ldexp(1.0, bits - 1) - 1 : std::ldexp(1.0, bits) - 1;
    double t = std::trunc(static_cast<double>(f));
    if (t <= lo)
      out.i = isSigned(to) ? (bits == 64 ? INT64_MIN : static_cast<int64_t>(lo)) : 0;
    else if (t >= hi)
      out.i = bits == 64 ? INT64_MAX : static_cast<int64_t>(hi);
    else
      out.i = static_cast<int64_t>(t);
    return out;
  }
  switch (to) {
  case Kind::F32: out.f = f; break;
  case Kind::F16: out.i = floatToHalf(f); break;
  case Kind::BF16: out.i = floatToBf16(f); break;
  default: break;
  }
  return out;
}

Elem bitcast(const Elem &e, Kind from, Kind to) {
  uint64_t bits = from == Kind::F32 ? std::bit_cast<uint32_t>(e.f)
                                    : static_cast<uint64_t>(e.i);
  Elem out;
  if (to == Kind::F32)
    out.f = std::bit_cast<float>(static_cast<uint32_t>(bits));
  else if (to == Kind::F16 || to == Kind::BF16)
    out.i = static_cast<int64_t>(bits & 0xffff);
  else
    out.i = wrap(bits, to);
  return out;
}

double ulpAt(double m, Kind k) {
  Format f = formatOf(k);
  m = std::fabs(m);
  if (!(m < kInf))
    return kInf;
  if (m < std::ldexp(1.0, f.emin))
    return std::ldexp(1.0, f.emin - (f.p - 1));
  int e2;
  std::frexp(m, &e2);
  return std::ldexp(1.0, e2 - 1 - (f.p - 1));
}

double maxFinite(Kind k) { return static_cast<double>(formatOf(k).max); }

double mathExact(const std::string &fn, double x) {
  if (fn == "exp") return std::exp(x);
  if (fn == "log") return std::log(x);
  if (fn == "exp2") return std::exp2(x);
  if (fn == "log2") return std::log2(x);
  if (fn == "tanh") return std::tanh(x);
  if (fn == "sigmoid") return 1.0 / (1.0 + std::exp(-x));
  if (fn == "erf") return std::erf(x);
  if (fn == "sin") return std::sin(x);
  if (fn == "cos") return std::cos(x);
  if (fn == "sqrt") return std::sqrt(x);
  if (fn == "rsqrt") return 1.0 / std::sqrt(x);
  return std::numeric_limits<double>::quiet_NaN();
}

namespace {

/// The tolerance of a math result `r` (rounded from the double `d`) whose
/// compiled value may lie `ulps` ulps from the exact result (`subnormalSteps`
/// steps of 2^-149 below the normal range): the exact result is within half
/// an ulp of `r`, so the compiled one is within ulps + 1/2 of it.
double ulpTolerance(float r, double d, double ulps, double subnormalSteps) {
  if (std::isnan(r))
    return 0; // a NaN must be a NaN
  if (std::isinf(r))
    // Overflow that rounding alone decides might be FLT_MAX compiled.
    return std::isinf(d) || std::fabs(d) > FLT_MAX * (1 + std::ldexp(1.0, -18)) ? 0 : kInf;
  double m = std::fabs(r);
  double tol = m < FLT_MIN ? (subnormalSteps + 0.5) * std::ldexp(1.0, -149)
                           : (ulps + 0.5) * ulpAt(m);
  if (m + tol >= FLT_MAX)
    return kInf;
  return tol;
}

bool isPowerOfTwo(float x) {
  if (!(x > 0) || std::isinf(x))
    return false;
  int e;
  return std::frexp(x, &e) == 0.5f;
}

} // namespace

MathResult math(const std::string &fn, float x) {
  double d = mathExact(fn, x);
  float r = static_cast<float>(d);
  if (fn == "sqrt")
    return {std::sqrt(x), 0}; // correctly rounded (IEEE 754 5.4.1)
  if (fn == "rsqrt")
    return {1.0f / std::sqrt(x), 0}; // 1 / sqrt(x), each rounded (CodeGenElementwise)
  if (std::isnan(x) || std::isinf(x))
    return {r, 0}; // the special values of the table are exact
  if (x == 0 && fn != "exp" && fn != "cos")
    return {r, 0}; // log(+-0), log2(+-0) = -inf; tanh, erf, sin keep -0; sigmoid(0) = 0.5; exp2(0) = 1
  if (fn == "exp2" && x == std::trunc(x) && x >= -149 && x < 128)
    return {r, 0}; // exp2(k) = 2^k exactly
  if (fn == "log2" && isPowerOfTwo(x))
    return {r, 0}; // log2(2^k) = k exactly
  if (fn == "exp" && x > 88.7f && !std::isinf(r))
    return {r, kInf}; // outside the documented range, short of overflow
  double ulps = 2, sub = 1;
  if (fn == "exp2" || fn == "log2")
    ulps = 1;
  else if (fn == "sin" || fn == "cos")
    ulps = sub = 0.51;
  else if (fn == "tanh" || fn == "log")
    sub = 2;
  return {r, ulpTolerance(r, d, ulps, sub)};
}

MathResult mathPow(float x, float y) {
  double d = std::pow(static_cast<double>(x), static_cast<double>(y));
  float r = static_cast<float>(d);
  // C99 F.9.4.4's special cases are exact.
  if (std::isnan(x) || std::isnan(y) || std::isinf(x) || std::isinf(y) || x == 0 ||
      y == 0 || x == 1)
    return {r, 0};
  return {r, ulpTolerance(r, d, 0.51, 0.51)};
}

} // namespace tilejit::difftest::num
