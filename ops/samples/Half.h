//===- Half.h - f16/bf16 conversions for references and tests ----*- C++ -*-===//
///
/// \file
/// Bit-exact scalar conversions with round-to-nearest-even, independent of
/// the code generator (tests compare the two).
///
//===----------------------------------------------------------------------===//
#ifndef TILEJIT_OPS_SAMPLES_HALF_H
#define TILEJIT_OPS_SAMPLES_HALF_H

#include <cmath>
#include <cstdint>
#include <cstring>

namespace tilejit::ops {

inline uint32_t floatBits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
inline float bitsFloat(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

/// f32 -> bf16 bits, round to nearest even; NaN stays (quiet) NaN.
inline uint16_t floatToBf16(float f) {
  uint32_t u = floatBits(f);
  if (std::isnan(f))
    return static_cast<uint16_t>((u >> 16) | 0x40);
  u += 0x7fff + ((u >> 16) & 1);
  return static_cast<uint16_t>(u >> 16);
}
inline float bf16ToFloat(uint16_t h) { return bitsFloat(uint32_t(h) << 16); }

/// f32 -> IEEE binary16 bits, round to nearest even, overflow to inf.
inline uint16_t floatToHalf(float f) {
  uint32_t u = floatBits(f);
  uint32_t sign = (u >> 16) & 0x8000;
  uint32_t absu = u & 0x7fffffff;
  if (absu >= 0x7f800000) // inf or NaN
    return static_cast<uint16_t>(sign | 0x7c00 | (absu > 0x7f800000 ? 0x200 | ((absu >> 13) & 0x3ff) : 0));
  if (absu >= 0x477ff000) // rounds to >= 65520: inf
    return static_cast<uint16_t>(sign | 0x7c00);
  if (absu < 0x38800000) { // subnormal or zero in f16
    // value = absu as float; scale to units of 2^-24 and round to even.
    float a = bitsFloat(absu);
    float scaled = a * 16777216.0f; // 2^24, exact
    float r = std::nearbyint(scaled); // default rounding: nearest even
    return static_cast<uint16_t>(sign | static_cast<uint32_t>(r));
  }
  uint32_t mant = absu & 0x7fffff;
  uint32_t exp = (absu >> 23) - 127 + 15;
  uint32_t h = (exp << 10) | (mant >> 13);
  uint32_t rest = mant & 0x1fff;
  if (rest > 0x1000 || (rest == 0x1000 && (h & 1)))
    ++h;
  return static_cast<uint16_t>(sign | h);
}

inline float halfToFloat(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000) << 16;
  uint32_t exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
  if (exp == 0) {
    float v = std::ldexp(static_cast<float>(mant), -24);
    return sign ? -v : v;
  }
  if (exp == 31)
    return bitsFloat(sign | 0x7f800000 | (mant << 13));
  return bitsFloat(sign | ((exp - 15 + 127) << 23) | (mant << 13));
}

} // namespace tilejit::ops

#endif
