//===- AclMeta.cpp - aclCreateTensor and the other argument objects -------===//
//
// Constructors copy every array they get, so a caller may free its shape
// vectors at once. They return NULL on structurally invalid input (negative
// dimensions, unknown enum values, too many dimensions, sizes, strides and
// offsets whose products or sums overflow int64) and record why; the
// operators check everything semantic, after host::checkDescriptor.
//
//===----------------------------------------------------------------------===//
#include "ops/aclnn/AclObjects.h"
#include "ops/host/Status.h"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <optional>
#include <cstring>
#include <memory>
#include <string>

using namespace tilejit::host;

namespace {

/// NULL, with `message` recorded as the recent error of `api`.
template <typename T> T *failNull(const char *api, const std::string &message) {
  recordError(Status(status::ParamInvalid, message), api);
  return nullptr;
}

aclnnStatus failStatus(int32_t code, const char *api,
                       const std::string &message) {
  return recordError(Status(code, message), api);
}

/// Copies `n` int64 values, or says which rule they break (161002).
Status copyDims(const char *what, const int64_t *dims, uint64_t n,
                bool allowNegative, std::vector<int64_t> &out) {
  if (n > static_cast<uint64_t>(kMaxTensorRank))
    return Status::error(status::ParamInvalid, what, " has ", n,
                         " entries, at most ", kMaxTensorRank,
                         " are supported");
  if (n && !dims)
    return Status::error(status::ParamInvalid, what,
                         " is null but its count is ", n);
  out.assign(dims, dims + n);
  for (uint64_t i = 0; i < n; ++i)
    if (!allowNegative && out[i] < 0)
      return Status::error(status::ParamInvalid, what, "[", i,
                           "] must not be negative, got ", out[i]);
  return Status::ok();
}

/// new[]-allocated copy of `values` for the aclGet* accessors.
int64_t *copyOut(const std::vector<int64_t> &values) {
  auto *out = new int64_t[values.empty() ? 1 : values.size()];
  std::copy(values.begin(), values.end(), out);
  return out;
}

} // namespace

extern "C" {

aclTensor *aclCreateTensor(const int64_t *viewDims, uint64_t viewDimsNum,
                           aclDataType dataType, const int64_t *stride,
                           int64_t offset, aclFormat format,
                           const int64_t *storageDims, uint64_t storageDimsNum,
                           void *tensorData) {
  const char *api = "aclCreateTensor";
  if (!isKnownDataType(dataType))
    return failNull<aclTensor>(api, "dataType " + std::to_string(dataType) +
                                        " is not an aclDataType");
  if (!isKnownFormat(format))
    return failNull<aclTensor>(api, "format " + std::to_string(format) +
                                        " is not an aclFormat");
  if (offset < 0)
    return failNull<aclTensor>(api, "offset must not be negative, got " +
                                        std::to_string(offset));
  auto tensor = std::make_unique<aclTensor>();
  if (Status s = copyDims("viewDims", viewDims, viewDimsNum, false,
                          tensor->shape);
      !s)
    return failNull<aclTensor>(api, s.message());
  // Every dimension counted at least once: the contiguous strides are its
  // partial products, so they fit int64 exactly when this does.
  std::vector<int64_t> atLeastOne(tensor->shape);
  for (int64_t &d : atLeastOne)
    d = std::max<int64_t>(d, 1);
  if (!checkedShapeNumel(atLeastOne))
    return failNull<aclTensor>(api, "the product of viewDims " +
                                        shapeToString(tensor->shape) +
                                        " overflows int64");
  if (stride) {
    if (Status s =
            copyDims("stride", stride, viewDimsNum, true, tensor->strides);
        !s)
      return failNull<aclTensor>(api, s.message());
  } else {
    tensor->strides = contiguousStrides(tensor->shape);
  }
  std::optional<IndexRange> range =
      viewIndexRange(tensor->shape, tensor->strides, offset);
  if (!range)
    return failNull<aclTensor>(
        api, "offset " + std::to_string(offset) + " + (viewDims - 1) * " +
                 "stride over viewDims " + shapeToString(tensor->shape) +
                 " and stride " + shapeToString(tensor->strides) +
                 " overflows int64");
  if (storageDimsNum) {
    if (Status s = copyDims("storageDims", storageDims, storageDimsNum, false,
                            tensor->storageShape);
        !s)
      return failNull<aclTensor>(api, s.message());
  } else if (viewDimsNum || offset) {
    // No storage shape: the storage is exactly what the view addresses.
    int64_t extent = range->hi;
    if (!tensor->isEmpty() && __builtin_add_overflow(extent, 1, &extent))
      return failNull<aclTensor>(api, "the extent of the view, offset " +
                                          std::to_string(offset) +
                                          " + 1 + its span, overflows int64");
    tensor->storageShape = {extent};
  }
  std::optional<int64_t> storage = checkedShapeNumel(tensor->storageShape);
  int64_t storageBits = 0;
  if (!storage || __builtin_mul_overflow(*storage, elementBits(DataType(dataType)),
                                         &storageBits))
    return failNull<aclTensor>(api, "the storage " +
                                        shapeToString(tensor->storageShape) +
                                        " of " + std::to_string(elementBits(DataType(dataType))) +
                                        "-bit elements overflows int64 bytes");
  tensor->data = tensorData;
  tensor->dtype = static_cast<DataType>(dataType);
  tensor->format = static_cast<Format>(format);
  tensor->offset = offset;
  return tensor.release();
}

aclScalar *aclCreateScalar(void *value, aclDataType dataType) {
  const char *api = "aclCreateScalar";
  if (!value)
    return failNull<aclScalar>(api, "value must not be null");
  if (!isKnownDataType(dataType) || elementBits(DataType(dataType)) == 0 ||
      elementSize(DataType(dataType)) > 16)
    return failNull<aclScalar>(api, "dataType " + std::to_string(dataType) +
                                        " cannot be a scalar");
  auto *scalar = new aclScalar();
  scalar->dtype = static_cast<DataType>(dataType);
  std::memcpy(scalar->bytes, value,
              static_cast<size_t>(elementSize(scalar->dtype)));
  return scalar;
}

aclIntArray *aclCreateIntArray(const int64_t *value, uint64_t size) {
  // The byte count (and every index into the array) must fit int64.
  if (size > static_cast<uint64_t>(INT64_MAX) / sizeof(int64_t))
    return failNull<aclIntArray>("aclCreateIntArray",
                                 "size " + std::to_string(size) +
                                     " int64 values overflow int64 bytes");
  if (size && !value)
    return failNull<aclIntArray>("aclCreateIntArray",
                                 "value is null but size is " +
                                     std::to_string(size));
  auto *array = new aclIntArray();
  if (size)
    array->values.assign(value, value + size);
  return array;
}

aclFloatArray *aclCreateFloatArray(const float *value, uint64_t size) {
  if (size && !value)
    return failNull<aclFloatArray>("aclCreateFloatArray",
                                   "value is null but size is " +
                                       std::to_string(size));
  auto *array = new aclFloatArray();
  if (size)
    array->values.assign(value, value + size);
  return array;
}

aclBoolArray *aclCreateBoolArray(const bool *value, uint64_t size) {
  if (size && !value)
    return failNull<aclBoolArray>("aclCreateBoolArray",
                                  "value is null but size is " +
                                      std::to_string(size));
  auto *array = new aclBoolArray();
  if (size)
    array->values.assign(value, value + size);
  return array;
}

aclTensorList *aclCreateTensorList(const aclTensor *const *value,
                                   uint64_t size) {
  if (size && !value)
    return failNull<aclTensorList>("aclCreateTensorList",
                                   "value is null but size is " +
                                       std::to_string(size));
  auto *list = new aclTensorList();
  list->entries.reserve(size);
  for (uint64_t i = 0; i < size; ++i) {
    if (value[i])
      list->entries.emplace_back(static_cast<const TensorView &>(*value[i]));
    else
      list->entries.emplace_back(std::nullopt);
  }
  return list;
}

aclnnStatus aclDestroyTensor(const aclTensor *tensor) {
  delete tensor;
  return ACLNN_SUCCESS;
}

aclnnStatus aclDestroyScalar(const aclScalar *scalar) {
  delete scalar;
  return ACLNN_SUCCESS;
}

aclnnStatus aclDestroyIntArray(const aclIntArray *array) {
  delete array;
  return ACLNN_SUCCESS;
}

aclnnStatus aclDestroyFloatArray(const aclFloatArray *array) {
  delete array;
  return ACLNN_SUCCESS;
}

aclnnStatus aclDestroyBoolArray(const aclBoolArray *array) {
  delete array;
  return ACLNN_SUCCESS;
}

aclnnStatus aclDestroyTensorList(const aclTensorList *array) {
  delete array;
  return ACLNN_SUCCESS;
}

aclnnStatus aclGetViewShape(const aclTensor *tensor, int64_t **viewDims,
                            uint64_t *viewDimsNum) {
  if (!tensor || !viewDims || !viewDimsNum)
    return failStatus(ACLNN_ERR_PARAM_NULLPTR, "aclGetViewShape",
                      "tensor, viewDims and viewDimsNum must not be null");
  *viewDims = copyOut(tensor->shape);
  *viewDimsNum = tensor->shape.size();
  return ACLNN_SUCCESS;
}

aclnnStatus aclGetViewStrides(const aclTensor *tensor, int64_t **stridesValue,
                              uint64_t *stridesNum) {
  if (!tensor || !stridesValue || !stridesNum)
    return failStatus(ACLNN_ERR_PARAM_NULLPTR, "aclGetViewStrides",
                      "tensor, stridesValue and stridesNum must not be null");
  *stridesValue = copyOut(tensor->strides);
  *stridesNum = tensor->strides.size();
  return ACLNN_SUCCESS;
}

aclnnStatus aclGetViewOffset(const aclTensor *tensor, int64_t *offset) {
  if (!tensor || !offset)
    return failStatus(ACLNN_ERR_PARAM_NULLPTR, "aclGetViewOffset",
                      "tensor and offset must not be null");
  *offset = tensor->offset;
  return ACLNN_SUCCESS;
}

aclnnStatus aclGetStorageShape(const aclTensor *tensor, int64_t **storageDims,
                               uint64_t *storageDimsNum) {
  if (!tensor || !storageDims || !storageDimsNum)
    return failStatus(ACLNN_ERR_PARAM_NULLPTR, "aclGetStorageShape",
                      "tensor, storageDims and storageDimsNum must not be "
                      "null");
  *storageDims = copyOut(tensor->storageShape);
  *storageDimsNum = tensor->storageShape.size();
  return ACLNN_SUCCESS;
}

aclnnStatus aclGetFormat(const aclTensor *tensor, aclFormat *format) {
  if (!tensor || !format)
    return failStatus(ACLNN_ERR_PARAM_NULLPTR, "aclGetFormat",
                      "tensor and format must not be null");
  *format = static_cast<aclFormat>(tensor->format);
  return ACLNN_SUCCESS;
}

aclnnStatus aclGetDataType(const aclTensor *tensor, aclDataType *dataType) {
  if (!tensor || !dataType)
    return failStatus(ACLNN_ERR_PARAM_NULLPTR, "aclGetDataType",
                      "tensor and dataType must not be null");
  *dataType = static_cast<aclDataType>(tensor->dtype);
  return ACLNN_SUCCESS;
}

aclnnStatus aclGetIntArraySize(const aclIntArray *array, uint64_t *size) {
  if (!array || !size)
    return failStatus(ACLNN_ERR_PARAM_NULLPTR, "aclGetIntArraySize",
                      "array and size must not be null");
  *size = array->values.size();
  return ACLNN_SUCCESS;
}

aclnnStatus aclGetTensorListSize(const aclTensorList *tensorList,
                                 uint64_t *size) {
  if (!tensorList || !size)
    return failStatus(ACLNN_ERR_PARAM_NULLPTR, "aclGetTensorListSize",
                      "tensorList and size must not be null");
  *size = tensorList->entries.size();
  return ACLNN_SUCCESS;
}

aclnnStatus aclSetTensorAddr(aclTensor *tensor, void *tensorData) {
  if (!tensor)
    return failStatus(ACLNN_ERR_PARAM_NULLPTR, "aclSetTensorAddr",
                      "tensor must not be null");
  tensor->data = tensorData;
  return ACLNN_SUCCESS;
}

// aclSetAclOpExecutorRepeatable and aclDestroyAclOpExecutor: Executors.cpp.

} // extern "C"
