//===- KernelArgs.cpp - Host tensors as kernel arguments ------------------===//
#include "ops/host/KernelArgs.h"

#include <cassert>
#include <cstddef>

namespace tilejit::host {

const char *copyKind(int64_t bytes) {
  switch (bytes) {
  case 1:
    return "u8";
  case 2:
    return "u16";
  default:
    return "u32";
  }
}

const char *indexKind(DataType type) {
  return type == DataType::Int64 ? "i64" : "i32";
}

const char *valueKind(DataType type) {
  switch (type) {
  case DataType::Float16:
    return "f16";
  case DataType::BFloat16:
    return "bf16";
  case DataType::Int8:
    return "i8";
  case DataType::Float:
    return "f32";
  default:
    return "u8";
  }
}

rt::ElemType elemType(const char *kind) {
  rt::ElemType t = rt::ElemType::U8;
  [[maybe_unused]] bool known = rt::parseElemType(kind, t);
  assert(known && "operators specialise with the DSL's kinds");
  return t;
}

rt::ElemType elemType(DataType type) {
  switch (type) {
  case DataType::Float: return rt::ElemType::F32;
  case DataType::Float16: return rt::ElemType::F16;
  case DataType::BFloat16: return rt::ElemType::BF16;
  case DataType::Int8: return rt::ElemType::I8;
  case DataType::Int16: return rt::ElemType::I16;
  case DataType::UInt16: return rt::ElemType::U16;
  case DataType::Int32: return rt::ElemType::I32;
  case DataType::UInt32: return rt::ElemType::U32;
  case DataType::Int64: return rt::ElemType::I64;
  default: return rt::ElemType::U8; // bool, uint8 and byte-moved 8-bit types
  }
}

std::optional<FlatView> collapse(const TensorView &view,
                                 const std::vector<int> &groups) {
  FlatView flat;
  flat.data = view.firstElement();
  size_t axis = 0;
  for (int count : groups) {
    if (count < 1 || axis + static_cast<size_t>(count) > view.shape.size())
      return std::nullopt;
    // Walk the group from its innermost axis outwards.
    int64_t size = 1, stride = 1;
    bool first = true;
    for (size_t k = axis + static_cast<size_t>(count); k-- > axis;) {
      int64_t n = view.shape[k], s = view.strides[k];
      if (n == 1)
        continue;
      if (first) {
        size = n;
        stride = s;
        first = false;
      } else if (s == size * stride) {
        size *= n;
      } else if (n != 0 && size != 0) {
        return std::nullopt;
      } else {
        size *= n;
      }
    }
    flat.sizes.push_back(size);
    flat.strides.push_back(stride);
    axis += static_cast<size_t>(count);
  }
  if (axis != view.shape.size())
    return std::nullopt;
  return flat;
}

} // namespace tilejit::host
