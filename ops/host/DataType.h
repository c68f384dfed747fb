//===- DataType.h - Element types, formats and fp16/bf16 bits ---*- C++ -*-===//
///
/// \file
/// The host runtime's element types and storage formats. The enumerator
/// values equal those of the C API's aclDataType / aclFormat, so a value
/// converts both ways with a static_cast. Also the exact float <-> fp16 /
/// bf16 conversions (round to nearest even) that the C API and operator
/// references share. No LLVM and no acl headers here.
///
//===----------------------------------------------------------------------===//
#ifndef TILEJIT_OPS_HOST_DATATYPE_H
#define TILEJIT_OPS_HOST_DATATYPE_H

#include <cstdint>
#include <iosfwd>
#include <string_view>

namespace tilejit::host {

/// Element types; values equal aclDataType's.
enum class DataType : int32_t {
  Undefined = -1,
  Float = 0,
  Float16 = 1,
  Int8 = 2,
  Int32 = 3,
  UInt8 = 4,
  Int16 = 6,
  UInt16 = 7,
  UInt32 = 8,
  Int64 = 9,
  UInt64 = 10,
  Double = 11,
  Bool = 12,
  String = 13,
  Complex64 = 16,
  Complex128 = 17,
  BFloat16 = 27,
  Int4 = 29,
  UInt1 = 30,
  Complex32 = 33,
  HiFloat8 = 34,
  Float8E5M2 = 35,
  Float8E4M3FN = 36,
  Float8E8M0 = 37,
  Float6E3M2 = 38,
  Float6E2M3 = 39,
  Float4E2M1 = 40,
  Float4E1M2 = 41,
};

/// Storage formats; values equal aclFormat's.
enum class Format : int32_t {
  Undefined = -1,
  NCHW = 0,
  NHWC = 1,
  ND = 2,
  NC1HWC0 = 3,
  FractalZ = 4,
  NC1HWC0C04 = 12,
  HWCN = 16,
  NDHWC = 27,
  FractalNZ = 29,
  NCDHW = 30,
  NDC1HWC0 = 32,
  FractalZ3D = 33,
  NC = 35,
  NCL = 47,
};

/// True if `value` is one of the DataType enumerators other than Undefined.
bool isKnownDataType(int32_t value);
/// True if `value` is one of the Format enumerators other than Undefined.
bool isKnownFormat(int32_t value);

/// Bits per element (4 for Int4, 1 for UInt1, 0 for Undefined and String).
int64_t elementBits(DataType type);
/// Bytes per element, rounding sub-byte types up to 1 (0 if unknown).
int64_t elementSize(DataType type);

/// The upstream document's spelling: "FLOAT16", "BFLOAT16", "INT8", ...
std::string_view dataTypeName(DataType type);
/// "ND", "NCHW", "FRACTAL_NZ", ...
std::string_view formatName(Format format);

/// Streams dataTypeName(type).
std::ostream &operator<<(std::ostream &os, DataType type);
/// Streams formatName(format).
std::ostream &operator<<(std::ostream &os, Format format);

/// Converts a float to fp16 bits, rounding to nearest even. Overflow gives
/// +-inf, NaN gives a quiet NaN (sign and top payload bits kept), values
/// below the smallest subnormal round to +-0.
uint16_t floatToHalfBits(float value);
/// Converts fp16 bits to float (exact, subnormals included).
float halfBitsToFloat(uint16_t bits);
/// Converts a float to bf16 bits, rounding to nearest even; NaN stays NaN.
uint16_t floatToBFloat16Bits(float value);
/// Converts bf16 bits to float (exact).
float bfloat16BitsToFloat(uint16_t bits);

/// The element of `type` at `p` as double: FLOAT16, BFLOAT16 and FLOAT
/// exactly, any other type as its first byte's unsigned value (BOOL, UINT8).
double loadElementAsDouble(DataType type, const void *p);
/// Stores `value` at `p` as `type`: FLOAT16 and BFLOAT16 through float,
/// rounded to nearest even; FLOAT rounded to nearest; BOOL as 0 or 1; any
/// other type as one unsigned byte.
void storeElementFromDouble(DataType type, void *p, double value);

} // namespace tilejit::host

#endif
