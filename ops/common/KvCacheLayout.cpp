//===- KvCacheLayout.cpp - The rules of a paged KV cache ------------------===//
#include "ops/common/KvCacheLayout.h"

namespace tilejit::ops {

using host::DataType;

bool isKvDataType(DataType type) {
  switch (type) {
  case DataType::Float16:
  case DataType::Float:
  case DataType::BFloat16:
  case DataType::Int8:
  case DataType::UInt8:
  case DataType::Int16:
  case DataType::UInt16:
  case DataType::Int32:
  case DataType::UInt32:
  case DataType::HiFloat8:
  case DataType::Float8E5M2:
  case DataType::Float8E4M3FN:
    return true;
  default:
    return false;
  }
}

const char *kvDataTypeList() {
  return "FLOAT16, FLOAT, BFLOAT16, INT8, UINT8, INT16, UINT16, INT32, UINT32, "
         "HIFLOAT8, FLOAT8_E5M2, FLOAT8_E4M3FN";
}

bool isIndexDataType(DataType type) {
  return type == DataType::Int32 || type == DataType::Int64;
}

int64_t nzStripElems(DataType type) {
  int64_t size = host::elementSize(type);
  return size > 0 ? 32 / size : 0;
}

bool streamsOutput(int64_t outputBytes) {
  return outputBytes >= (int64_t(16) << 20);
}

} // namespace tilejit::ops
