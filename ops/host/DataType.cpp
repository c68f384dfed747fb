//===- DataType.cpp - Element types, formats and fp16/bf16 bits -----------===//
//
// The conversions work on bit patterns so that they are exact and independent
// of the host's F16C support and rounding mode.
//
//===----------------------------------------------------------------------===//
#include "ops/host/DataType.h"

#include <cstring>
#include <ostream>

namespace tilejit::host {

bool isKnownDataType(int32_t value) {
  switch (static_cast<DataType>(value)) {
  case DataType::Float:
  case DataType::Float16:
  case DataType::Int8:
  case DataType::Int32:
  case DataType::UInt8:
  case DataType::Int16:
  case DataType::UInt16:
  case DataType::UInt32:
  case DataType::Int64:
  case DataType::UInt64:
  case DataType::Double:
  case DataType::Bool:
  case DataType::String:
  case DataType::Complex64:
  case DataType::Complex128:
  case DataType::BFloat16:
  case DataType::Int4:
  case DataType::UInt1:
  case DataType::Complex32:
  case DataType::HiFloat8:
  case DataType::Float8E5M2:
  case DataType::Float8E4M3FN:
  case DataType::Float8E8M0:
  case DataType::Float6E3M2:
  case DataType::Float6E2M3:
  case DataType::Float4E2M1:
  case DataType::Float4E1M2:
    return true;
  case DataType::Undefined:
    return false;
  }
  return false;
}

bool isKnownFormat(int32_t value) {
  switch (static_cast<Format>(value)) {
  case Format::NCHW:
  case Format::NHWC:
  case Format::ND:
  case Format::NC1HWC0:
  case Format::FractalZ:
  case Format::NC1HWC0C04:
  case Format::HWCN:
  case Format::NDHWC:
  case Format::FractalNZ:
  case Format::NCDHW:
  case Format::NDC1HWC0:
  case Format::FractalZ3D:
  case Format::NC:
  case Format::NCL:
    return true;
  case Format::Undefined:
    return false;
  }
  return false;
}

int64_t elementBits(DataType type) {
  switch (type) {
  case DataType::Bool:
  case DataType::Int8:
  case DataType::UInt8:
  case DataType::HiFloat8:
  case DataType::Float8E5M2:
  case DataType::Float8E4M3FN:
  case DataType::Float8E8M0:
  // The fp6/fp4 types are stored one element per byte on the host.
  case DataType::Float6E3M2:
  case DataType::Float6E2M3:
  case DataType::Float4E2M1:
  case DataType::Float4E1M2:
    return 8;
  case DataType::Float16:
  case DataType::BFloat16:
  case DataType::Int16:
  case DataType::UInt16:
    return 16;
  case DataType::Float:
  case DataType::Int32:
  case DataType::UInt32:
  case DataType::Complex32:
    return 32;
  case DataType::Int64:
  case DataType::UInt64:
  case DataType::Double:
  case DataType::Complex64:
    return 64;
  case DataType::Complex128:
    return 128;
  case DataType::Int4:
    return 4;
  case DataType::UInt1:
    return 1;
  case DataType::String:
  case DataType::Undefined:
    return 0;
  }
  return 0;
}

int64_t elementSize(DataType type) { return (elementBits(type) + 7) / 8; }

std::string_view dataTypeName(DataType type) {
  switch (type) {
  case DataType::Undefined:
    return "UNDEFINED";
  case DataType::Float:
    return "FLOAT";
  case DataType::Float16:
    return "FLOAT16";
  case DataType::Int8:
    return "INT8";
  case DataType::Int32:
    return "INT32";
  case DataType::UInt8:
    return "UINT8";
  case DataType::Int16:
    return "INT16";
  case DataType::UInt16:
    return "UINT16";
  case DataType::UInt32:
    return "UINT32";
  case DataType::Int64:
    return "INT64";
  case DataType::UInt64:
    return "UINT64";
  case DataType::Double:
    return "DOUBLE";
  case DataType::Bool:
    return "BOOL";
  case DataType::String:
    return "STRING";
  case DataType::Complex64:
    return "COMPLEX64";
  case DataType::Complex128:
    return "COMPLEX128";
  case DataType::BFloat16:
    return "BFLOAT16";
  case DataType::Int4:
    return "INT4";
  case DataType::UInt1:
    return "UINT1";
  case DataType::Complex32:
    return "COMPLEX32";
  case DataType::HiFloat8:
    return "HIFLOAT8";
  case DataType::Float8E5M2:
    return "FLOAT8_E5M2";
  case DataType::Float8E4M3FN:
    return "FLOAT8_E4M3FN";
  case DataType::Float8E8M0:
    return "FLOAT8_E8M0";
  case DataType::Float6E3M2:
    return "FLOAT6_E3M2";
  case DataType::Float6E2M3:
    return "FLOAT6_E2M3";
  case DataType::Float4E2M1:
    return "FLOAT4_E2M1";
  case DataType::Float4E1M2:
    return "FLOAT4_E1M2";
  }
  return "UNKNOWN";
}

std::string_view formatName(Format format) {
  switch (format) {
  case Format::Undefined:
    return "UNDEFINED";
  case Format::NCHW:
    return "NCHW";
  case Format::NHWC:
    return "NHWC";
  case Format::ND:
    return "ND";
  case Format::NC1HWC0:
    return "NC1HWC0";
  case Format::FractalZ:
    return "FRACTAL_Z";
  case Format::NC1HWC0C04:
    return "NC1HWC0_C04";
  case Format::HWCN:
    return "HWCN";
  case Format::NDHWC:
    return "NDHWC";
  case Format::FractalNZ:
    return "FRACTAL_NZ";
  case Format::NCDHW:
    return "NCDHW";
  case Format::NDC1HWC0:
    return "NDC1HWC0";
  case Format::FractalZ3D:
    return "FRACTAL_Z_3D";
  case Format::NC:
    return "NC";
  case Format::NCL:
    return "NCL";
  }
  return "UNKNOWN";
}

std::ostream &operator<<(std::ostream &os, DataType type) {
  return os << dataTypeName(type);
}

std::ostream &operator<<(std::ostream &os, Format format) {
  return os << formatName(format);
}

static uint32_t floatBits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

static float bitsToFloat(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

uint16_t floatToHalfBits(float value) {
  uint32_t x = floatBits(value);
  uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
  uint32_t absBits = x & 0x7fffffffu;
  if (absBits >= 0x7f800000u) {
    if (absBits == 0x7f800000u)
      return sign | 0x7c00u;
    // NaN: keep the top payload bits and force the quiet bit.
    return static_cast<uint16_t>(sign | 0x7e00u | ((absBits >> 13) & 0x3ffu));
  }
  // 65520 and above round to infinity.
  if (absBits >= 0x477ff000u)
    return sign | 0x7c00u;
  int32_t exponent = static_cast<int32_t>(absBits >> 23) - 127;
  if (exponent >= -14) {
    // Normal half: drop 13 mantissa bits with round to nearest even. A carry
    // out of the mantissa correctly bumps the exponent.
    uint32_t halfBits = ((static_cast<uint32_t>(exponent + 15) << 10) |
                         ((absBits >> 13) & 0x3ffu));
    uint32_t rest = absBits & 0x1fffu;
    if (rest > 0x1000u || (rest == 0x1000u && (halfBits & 1u)))
      ++halfBits;
    return static_cast<uint16_t>(sign | halfBits);
  }
  // Subnormal half (or zero): value = m * 2^-24 with m < 1024.
  if (exponent < -25)
    return sign;
  uint32_t mantissa = (absBits & 0x7fffffu) | 0x800000u;
  // The float is mantissa * 2^(exponent - 23); shift to units of 2^-24.
  int shift = -exponent - 1; // 14..24
  uint32_t halfBits = mantissa >> shift;
  uint32_t rest = mantissa & ((1u << shift) - 1u);
  uint32_t halfway = 1u << (shift - 1);
  if (rest > halfway || (rest == halfway && (halfBits & 1u)))
    ++halfBits;
  return static_cast<uint16_t>(sign | halfBits);
}

float halfBitsToFloat(uint16_t bits) {
  uint32_t sign = static_cast<uint32_t>(bits & 0x8000u) << 16;
  uint32_t exponent = (bits >> 10) & 0x1fu;
  uint32_t mantissa = bits & 0x3ffu;
  if (exponent == 0x1fu)
    return bitsToFloat(sign | 0x7f800000u | (mantissa << 13));
  if (exponent == 0) {
    if (mantissa == 0)
      return bitsToFloat(sign);
    // Subnormal: normalise into a float.
    int32_t e = -14;
    while (!(mantissa & 0x400u)) {
      mantissa <<= 1;
      --e;
    }
    mantissa &= 0x3ffu;
    return bitsToFloat(sign | (static_cast<uint32_t>(e + 127) << 23) |
                       (mantissa << 13));
  }
  return bitsToFloat(sign | ((exponent + 112) << 23) | (mantissa << 13));
}

uint16_t floatToBFloat16Bits(float value) {
  uint32_t x = floatBits(value);
  if ((x & 0x7fffffffu) > 0x7f800000u)
    return static_cast<uint16_t>((x >> 16) | 0x40u);
  uint32_t rounding = 0x7fffu + ((x >> 16) & 1u);
  return static_cast<uint16_t>((x + rounding) >> 16);
}

float bfloat16BitsToFloat(uint16_t bits) {
  return bitsToFloat(static_cast<uint32_t>(bits) << 16);
}

double loadElementAsDouble(DataType type, const void *p) {
  uint16_t h;
  switch (type) {
  case DataType::Float16:
    std::memcpy(&h, p, 2);
    return halfBitsToFloat(h);
  case DataType::BFloat16:
    std::memcpy(&h, p, 2);
    return bfloat16BitsToFloat(h);
  case DataType::Float: {
    float f;
    std::memcpy(&f, p, 4);
    return f;
  }
  default:
    return *static_cast<const uint8_t *>(p);
  }
}

void storeElementFromDouble(DataType type, void *p, double value) {
  const float f = static_cast<float>(value);
  uint16_t h;
  switch (type) {
  case DataType::Float16:
    h = floatToHalfBits(f);
    std::memcpy(p, &h, 2);
    return;
  case DataType::BFloat16:
    h = floatToBFloat16Bits(f);
    std::memcpy(p, &h, 2);
    return;
  case DataType::Float:
    std::memcpy(p, &f, 4);
    return;
  case DataType::Bool:
    *static_cast<uint8_t *>(p) = value != 0 ? 1 : 0;
    return;
  default:
    *static_cast<uint8_t *>(p) = static_cast<uint8_t>(value);
  }
}

} // namespace tilejit::host
