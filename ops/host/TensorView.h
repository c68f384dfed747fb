//===- TensorView.h - Tensor views and argument objects ---------*- C++ -*-===//
///
/// \file
/// The host runtime's view of the aclnn argument objects. An aclTensor *is*
/// a TensorView (the C handle type derives from it), so operator code takes
/// `const TensorView *` straight from the C arguments; likewise aclIntArray
/// is an IntArray and aclTensorList a TensorList.
///
/// A TensorView describes memory, it does not own it: `data` is the base of
/// the storage, `offset` and `strides` count elements, and element
/// (i0, ..., in) lives at data + (offset + sum(ik * strides[k])) * size.
///
//===----------------------------------------------------------------------===//
#ifndef TILEJIT_OPS_HOST_TENSORVIEW_H
#define TILEJIT_OPS_HOST_TENSORVIEW_H

#include "runtime/Runtime.h"
#include "ops/host/DataType.h"
#include "ops/host/Status.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tilejit::host {

/// The most dimensions a tensor may have (as CANN).
constexpr int64_t kMaxTensorRank = 8;

/// Row-major contiguous strides (in elements) for `shape`.
std::vector<int64_t> contiguousStrides(const std::vector<int64_t> &shape);
/// The product of `shape` (1 for a 0-D shape).
int64_t shapeNumel(const std::vector<int64_t> &shape);
/// "[2, 3, 4]".
std::string shapeToString(const std::vector<int64_t> &shape);
/// The product of `shape` (1 for a 0-D shape), or nullopt if a dimension is
/// negative or the product overflows int64.
std::optional<int64_t> checkedShapeNumel(const std::vector<int64_t> &shape);

/// The smallest and largest element index (counted from the storage base)
/// a view addresses: offset + sum(i_k * strides[k]) over all 0 <= i_k <
/// shape[k], with negative strides lowering `lo`. For a view with no
/// elements both are `offset`.
struct IndexRange {
  int64_t lo = 0; ///< the smallest index addressed
  int64_t hi = 0; ///< the largest index addressed
};
/// The IndexRange of a view, or nullopt if its arithmetic overflows int64
/// (or a dimension is negative, or there are fewer strides than
/// dimensions).
std::optional<IndexRange> viewIndexRange(const std::vector<int64_t> &shape,
                                         const std::vector<int64_t> &strides,
                                         int64_t offset);

/// A strided view of typed memory.
struct TensorView {
  void *data = nullptr; ///< base of the storage
  DataType dtype = DataType::Undefined;
  Format format = Format::ND;
  std::vector<int64_t> shape;        ///< view dimensions
  std::vector<int64_t> strides;      ///< in elements, one per dimension
  int64_t offset = 0;                ///< in elements, from `data`
  std::vector<int64_t> storageShape; ///< as given to aclCreateTensor

  /// The number of dimensions (0 for a scalar tensor).
  int64_t rank() const { return static_cast<int64_t>(shape.size()); }
  /// Dimension `i`; negative `i` counts from the end.
  int64_t dim(int64_t i) const {
    return shape[static_cast<size_t>(i < 0 ? i + rank() : i)];
  }
  /// The number of elements of the view (1 for 0-D, 0 if any dim is 0).
  int64_t numel() const { return shapeNumel(shape); }
  /// True if the view has no elements.
  bool isEmpty() const { return numel() == 0; }
  /// The number of elements of the storage shape.
  int64_t storageNumel() const { return shapeNumel(storageShape); }
  /// Bytes per element.
  int64_t elementSize() const { return host::elementSize(dtype); }
  /// True if the strides are row-major contiguous for the shape (dimensions
  /// of extent 1 may have any stride).
  bool isContiguous() const;
  /// True if every element the view addresses lies inside the storage shape
  /// (every addressed index in [0, storageNumel()), negative strides
  /// included), computed without overflow; false if anything overflows.
  bool fitsStorage() const;
  /// The address of the first element: data + offset * elementSize().
  void *firstElement() const;
  /// The typed address of the first element.
  template <typename T> T *as() const {
    return static_cast<T *>(firstElement());
  }
  /// The view as a kernel argument (rank <= jit's kMaxRank, asserted);
  /// `data` is firstElement().
  rt::TensorDesc toDesc() const;
  /// "FLOAT16[2, 3] ND" (with strides and offset when non-trivial).
  std::string describe() const;
};

/// The descriptor check every tensor argument of every aclnn call passes
/// before any operator rule: a known dtype with a size; rank at most
/// kMaxTensorRank, one stride per dimension, no negative dimension; storage
/// element and byte counts that fit int64; every index the view can reach
/// (negative strides included) inside [0, storageNumel()) and, for a view
/// with no elements, an offset at most storageNumel(); non-null data when
/// the view has elements. Returns ParamNullptr for null data, ParamInvalid
/// for the rest, with a message naming `name`, the rule and the values.
Status checkDescriptor(const TensorView &t, const std::string &name);

/// A host-side array of int64_t values.
struct IntArray {
  std::vector<int64_t> values; ///< the values
  /// The number of values.
  int64_t size() const { return static_cast<int64_t>(values.size()); }
  /// Value `i`.
  int64_t operator[](int64_t i) const { return values[static_cast<size_t>(i)]; }
};

/// A host-side array of float values.
struct FloatArray {
  std::vector<float> values; ///< the values
};

/// A host-side array of bool values.
struct BoolArray {
  std::vector<bool> values; ///< the values
};

/// A contiguous row-major view of `shape` over the whole of `data` (storage
/// shape: the element count, offset 0).
TensorView contiguousView(void *data, DataType dtype, std::vector<int64_t> shape,
                          Format format = Format::ND);

/// A list of tensor views; an entry may be absent (a NULL in the C list).
struct TensorList {
  std::vector<std::optional<TensorView>> entries; ///< copies of the views
  /// The number of entries.
  int64_t size() const { return static_cast<int64_t>(entries.size()); }
  /// Entry `i`, or nullptr if it was NULL.
  const TensorView *at(int64_t i) const {
    const auto &e = entries[static_cast<size_t>(i)];
    return e ? &*e : nullptr;
  }
};

/// A host-side scalar: one element of `dtype`, stored in `bytes`.
struct Scalar {
  DataType dtype = DataType::Undefined;
  alignas(16) unsigned char bytes[16] = {};
  /// The value converted to double (integers, floats, fp16, bf16, bool).
  double toDouble() const;
};

} // namespace tilejit::host

#endif
