//===- TensorView.cpp - Tensor views and host-side argument objects -------===//
#include "ops/runtime/TensorView.h"

#include <cassert>
#include <cstring>
#include <sstream>

namespace tilejit::runtime {

std::vector<int64_t> contiguousStrides(const std::vector<int64_t> &shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  int64_t s = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    strides[i] = s;
    s *= shape[i] > 0 ? shape[i] : 1;
  }
  return strides;
}

TensorView contiguousView(void *data, DataType dtype, std::vector<int64_t> shape,
                          Format format) {
  TensorView t;
  t.data = data;
  t.dtype = dtype;
  t.format = format;
  t.strides = contiguousStrides(shape);
  t.storageShape = {shapeNumel(shape)};
  t.shape = std::move(shape);
  return t;
}

int64_t shapeNumel(const std::vector<int64_t> &shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

std::string shapeToString(const std::vector<int64_t> &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i)
      s += ", ";
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

bool TensorView::isContiguous() const {
  int64_t expected = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    if (shape[i] != 1 && strides[i] != expected)
      return false;
    expected *= shape[i];
  }
  return true;
}

bool TensorView::fitsStorage() const {
  if (offset < 0)
    return false;
  if (isEmpty())
    return true;
  int64_t last = offset;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (strides[i] < 0)
      return false;
    last += (shape[i] - 1) * strides[i];
  }
  return last < storageNumel();
}

void *TensorView::firstElement() const {
  if (!data)
    return nullptr;
  // Sub-byte types address whole bytes here; their operators index bits.
  return static_cast<char *>(data) + offset * elementSize();
}

rt::TensorDesc TensorView::toDesc() const {
  assert(rank() <= rt::kMaxRank && "tensor rank exceeds the kernel ABI");
  rt::TensorDesc d;
  d.data = firstElement();
  d.rank = rank();
  for (int64_t i = 0; i < rank() && i < rt::kMaxRank; ++i) {
    d.sizes[i] = shape[static_cast<size_t>(i)];
    d.strides[i] = strides[static_cast<size_t>(i)];
  }
  return d;
}

std::string TensorView::describe() const {
  std::ostringstream os;
  os << dtype << shapeToString(shape) << ' ' << format;
  if (!isContiguous())
    os << " strides " << shapeToString(strides);
  if (offset)
    os << " offset " << offset;
  return os.str();
}

double Scalar::toDouble() const {
  auto read = [&](auto v) {
    std::memcpy(&v, bytes, sizeof v);
    return static_cast<double>(v);
  };
  switch (dtype) {
  case DataType::Float:
    return read(float());
  case DataType::Double:
    return read(double());
  case DataType::Int8:
    return read(int8_t());
  case DataType::UInt8:
    return read(uint8_t());
  case DataType::Int16:
    return read(int16_t());
  case DataType::UInt16:
    return read(uint16_t());
  case DataType::Int32:
    return read(int32_t());
  case DataType::UInt32:
    return read(uint32_t());
  case DataType::Int64:
    return read(int64_t());
  case DataType::UInt64:
    return read(uint64_t());
  case DataType::Bool:
    return bytes[0] != 0;
  case DataType::Float16: {
    uint16_t b;
    std::memcpy(&b, bytes, 2);
    return halfBitsToFloat(b);
  }
  case DataType::BFloat16: {
    uint16_t b;
    std::memcpy(&b, bytes, 2);
    return bfloat16BitsToFloat(b);
  }
  default:
    return 0.0;
  }
}

} // namespace tilejit::runtime
