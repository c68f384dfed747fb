//===- AclMeta.cpp - aclCreateTensor and the other argument objects -------===//
//
// Constructors copy every array they get, so a caller may free its shape
// vectors at once. They return NULL on structurally invalid input (negative
// dimensions, unknown enum values, too many dimensions) and record why; the
// operators check everything semantic.
//
//===----------------------------------------------------------------------===//
#include "ops/aclnn/AclObjects.h"
#include "ops/runtime/Status.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>

using namespace tilejit::runtime;

namespace {

template <typename T> T *failNull(const char *api, const std::string &message) {
  setRecentErrorMessage(std::string(api) + ": " + message);
  return nullptr;
}

aclnnStatus failStatus(int32_t code, const char *api,
                       const std::string &message) {
  setRecentErrorMessage(std::string(api) + ": " + message);
  return code;
}

/// Copies `n` int64 values, or reports which rule they break.
bool copyDims(const char *what, const int64_t *dims, uint64_t n,
              bool allowNegative, std::vector<int64_t> &out,
              std::string &error) {
  if (n > static_cast<uint64_t>(kMaxTensorRank)) {
    error = std::string(what) + " has " + std::to_string(n) +
            " entries, at most " + std::to_string(kMaxTensorRank) +
            " are supported";
    return false;
  }
  if (n && !dims) {
    error =
        std::string(what) + " is null but its count is " + std::to_string(n);
    return false;
  }
  out.assign(dims, dims + n);
  for (uint64_t i = 0; i < n; ++i) {
    if (!allowNegative && out[i] < 0) {
      error = std::string(what) + "[" + std::to_string(i) +
              "] must not be negative, got " + std::to_string(out[i]);
      return false;
    }
  }
  return true;
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
  std::string error;
  if (!copyDims("viewDims", viewDims, viewDimsNum, false, tensor->shape, error))
    return failNull<aclTensor>(api, error);
  if (stride) {
    if (!copyDims("stride", stride, viewDimsNum, true, tensor->strides, error))
      return failNull<aclTensor>(api, error);
  } else {
    tensor->strides = contiguousStrides(tensor->shape);
  }
  if (storageDimsNum) {
    if (!copyDims("storageDims", storageDims, storageDimsNum, false,
                  tensor->storageShape, error))
      return failNull<aclTensor>(api, error);
  } else if (viewDimsNum) {
    // No storage shape: the storage is exactly what the view addresses.
    int64_t extent = 0;
    if (!tensor->isEmpty()) {
      extent = offset + 1;
      for (size_t i = 0; i < tensor->shape.size(); ++i)
        if (tensor->strides[i] > 0)
          extent += (tensor->shape[i] - 1) * tensor->strides[i];
    }
    tensor->storageShape = {extent};
  }
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
