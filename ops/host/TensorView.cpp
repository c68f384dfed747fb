//===- TensorView.cpp - Tensor views and host-side argument objects -------===//
#include "ops/host/TensorView.h"

#include <cassert>
#include <cstring>
#include <sstream>

namespace tilejit::host {

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

std::optional<int64_t> checkedShapeNumel(const std::vector<int64_t> &shape) {
  int64_t n = 1;
  bool empty = false;
  for (int64_t d : shape) {
    if (d < 0)
      return std::nullopt;
    empty = empty || d == 0;
  }
  if (empty)
    return 0;
  for (int64_t d : shape)
    if (__builtin_mul_overflow(n, d, &n))
      return std::nullopt;
  return n;
}

std::optional<IndexRange> viewIndexRange(const std::vector<int64_t> &shape,
                                         const std::vector<int64_t> &strides,
                                         int64_t offset) {
  if (strides.size() < shape.size())
    return std::nullopt;
  IndexRange range{offset, offset};
  std::optional<int64_t> numel = checkedShapeNumel(shape);
  if (!numel)
    return std::nullopt;
  if (*numel == 0)
    return range;
  for (size_t k = 0; k < shape.size(); ++k) {
    // Index k spans (shape[k] - 1) * strides[k]; shape[k] >= 1 here.
    int64_t span;
    if (__builtin_mul_overflow(shape[k] - 1, strides[k], &span))
      return std::nullopt;
    int64_t &bound = span < 0 ? range.lo : range.hi;
    if (__builtin_add_overflow(bound, span, &bound))
      return std::nullopt;
  }
  return range;
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
  std::optional<IndexRange> range = viewIndexRange(shape, strides, offset);
  std::optional<int64_t> storage = checkedShapeNumel(storageShape);
  if (!range || !storage || range->lo < 0)
    return false;
  return isEmpty() ? range->hi <= *storage : range->hi < *storage;
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

Status checkDescriptor(const TensorView &t, const std::string &name) {
  auto invalid = [&](const auto &...parts) {
    return Status::error(status::ParamInvalid, name, ": ", parts...);
  };
  // The raw values, for messages: describe() may not hold for a broken view.
  auto values = [&] {
    return "(shape " + shapeToString(t.shape) + ", strides " +
           shapeToString(t.strides) + ", offset " + std::to_string(t.offset) +
           ", storage " + shapeToString(t.storageShape) + ")";
  };
  const int64_t bits = isKnownDataType(static_cast<int32_t>(t.dtype))
                           ? elementBits(t.dtype)
                           : 0;
  if (bits <= 0)
    return invalid("dtype ", static_cast<int32_t>(t.dtype),
                   " is not a data type with an element size");
  if (t.rank() > kMaxTensorRank ||
      static_cast<int64_t>(t.storageShape.size()) > kMaxTensorRank)
    return invalid("rank ", t.rank(), " (storage rank ",
                   t.storageShape.size(), ") exceeds ", kMaxTensorRank, " ",
                   values());
  if (t.strides.size() != t.shape.size())
    return invalid(t.strides.size(), " strides for ", t.rank(),
                   " dimensions ", values());
  for (size_t k = 0; k < t.shape.size(); ++k)
    if (t.shape[k] < 0)
      return invalid("dimension ", k, " is negative ", values());
  if (t.offset < 0)
    return invalid("offset ", t.offset, " is negative ", values());
  std::optional<int64_t> storage = checkedShapeNumel(t.storageShape);
  if (!storage)
    return invalid("the storage element count overflows int64 or a storage "
                   "dimension is negative ",
                   values());
  int64_t storageBits;
  if (__builtin_mul_overflow(*storage, bits, &storageBits))
    return invalid("the storage of ", *storage, " elements of ", bits,
                   " bits overflows int64 bytes ", values());
  if (!checkedShapeNumel(t.shape))
    return invalid("the view element count overflows int64 ", values());
  std::optional<IndexRange> range =
      viewIndexRange(t.shape, t.strides, t.offset);
  if (!range)
    return invalid("the view's index arithmetic (offset + (size - 1) * "
                   "stride, summed) overflows int64 ",
                   values());
  if (t.isEmpty()) {
    if (t.offset > *storage)
      return invalid("offset ", t.offset, " is past the storage of ",
                     *storage, " elements ", values());
    return Status::ok();
  }
  if (range->lo < 0)
    return invalid("the view reaches element index ", range->lo,
                   ", before the start of its storage (negative strides) ",
                   values());
  if (range->hi >= *storage)
    return invalid("the view reaches element index ", range->hi,
                   " but its storage holds ", *storage, " elements ",
                   values());
  if (!t.data)
    return Status::error(status::ParamNullptr, name, ": data is null but the ",
                         "view has ", t.numel(), " elements ", values());
  return Status::ok();
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

} // namespace tilejit::host
