/*===- acl_meta.h - Tensors, arrays and status codes of aclnn -----*- C -*-===//
 *
 * \file
 * The opaque argument objects of the aclnn two-phase operator API
 * (aclTensor, aclIntArray, aclTensorList, ...), their constructors and
 * destructors, and the aclnn status codes. tilejit's own declarations with
 * CANN's signatures and values. Usable from C and C++.
 *
 * A tensor is a view: `tensorData` is the base address of its storage,
 * `offset` and `stride` are counted in elements, and the element at index
 * (i0, ..., in) lives at tensorData + (offset + sum(ik * stride[k])) * size.
 * The constructors copy every array they are given; aclCreateTensorList
 * copies the tensors' descriptions, so a list and its tensors may be
 * destroyed in any order.
 *
 *===----------------------------------------------------------------------===*/
#ifndef TILEJIT_ACLNN_ACL_META_H
#define TILEJIT_ACLNN_ACL_META_H

#ifndef __cplusplus
#include <stdbool.h>
#endif
#include <stddef.h>
#include <stdint.h>

#include "acl/acl_base.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Status of every aclnn call; 0 (ACLNN_SUCCESS) on success. */
typedef int32_t aclnnStatus;

/* aclnn status codes (values of the aclnn return-code table). */
#define ACLNN_SUCCESS 0
#define ACLNN_ERR_PARAM_NULLPTR 161001
#define ACLNN_ERR_PARAM_INVALID 161002
#define ACLNN_ERR_RUNTIME_ERROR 361001
#define ACLNN_ERR_INNER 561000
#define ACLNN_ERR_INNER_INFERSHAPE_ERROR 561001
#define ACLNN_ERR_INNER_TILING_ERROR 561002
#define ACLNN_ERR_INNER_FIND_KERNEL_ERROR 561003
#define ACLNN_ERR_INNER_CREATE_EXECUTOR 561101
#define ACLNN_ERR_INNER_NOT_TRANS_EXECUTOR 561102
#define ACLNN_ERR_INNER_NULLPTR 561103
#define ACLNN_ERR_INNER_WRONG_ATTR_INFO_SIZE 561104

/** A strided view of typed memory. */
typedef struct aclTensor aclTensor;
/** A host-side scalar of some aclDataType. */
typedef struct aclScalar aclScalar;
/** A host-side array of int64_t. */
typedef struct aclIntArray aclIntArray;
/** A host-side array of float. */
typedef struct aclFloatArray aclFloatArray;
/** A host-side array of bool. */
typedef struct aclBoolArray aclBoolArray;
/** A list of tensors (entries may be NULL). */
typedef struct aclTensorList aclTensorList;
/** The prepared work of one operator call (phase 1 -> phase 2). */
typedef struct aclOpExecutor aclOpExecutor;

/** Creates a tensor view. `viewDims` and `stride` hold `viewDimsNum`
 *  entries (both may be NULL when it is 0; a NULL `stride` means
 *  row-major contiguous), `storageDims` holds `storageDimsNum` entries.
 *  Returns NULL (and sets aclGetRecentErrMsg) on a negative dimension or
 *  offset, an unknown data type or format, or more than 8 dimensions. */
ACL_FUNC_VISIBILITY aclTensor *
aclCreateTensor(const int64_t *viewDims, uint64_t viewDimsNum,
                aclDataType dataType, const int64_t *stride, int64_t offset,
                aclFormat format, const int64_t *storageDims,
                uint64_t storageDimsNum, void *tensorData);
/** Creates a scalar by copying one element of `dataType` from `value`. */
ACL_FUNC_VISIBILITY aclScalar *aclCreateScalar(void *value,
                                               aclDataType dataType);
/** Creates an int array by copying `size` values (`value` may be NULL when
 *  `size` is 0). */
ACL_FUNC_VISIBILITY aclIntArray *aclCreateIntArray(const int64_t *value,
                                                   uint64_t size);
/** Creates a float array by copying `size` values. */
ACL_FUNC_VISIBILITY aclFloatArray *aclCreateFloatArray(const float *value,
                                                       uint64_t size);
/** Creates a bool array by copying `size` values. */
ACL_FUNC_VISIBILITY aclBoolArray *aclCreateBoolArray(const bool *value,
                                                     uint64_t size);
/** Creates a tensor list by copying the descriptions of `size` tensors
 *  (entries may be NULL). */
ACL_FUNC_VISIBILITY aclTensorList *
aclCreateTensorList(const aclTensor *const *value, uint64_t size);

/** Destroys a tensor (NULL is accepted). */
ACL_FUNC_VISIBILITY aclnnStatus aclDestroyTensor(const aclTensor *tensor);
/** Destroys a scalar (NULL is accepted). */
ACL_FUNC_VISIBILITY aclnnStatus aclDestroyScalar(const aclScalar *scalar);
/** Destroys an int array (NULL is accepted). */
ACL_FUNC_VISIBILITY aclnnStatus aclDestroyIntArray(const aclIntArray *array);
/** Destroys a float array (NULL is accepted). */
ACL_FUNC_VISIBILITY aclnnStatus
aclDestroyFloatArray(const aclFloatArray *array);
/** Destroys a bool array (NULL is accepted). */
ACL_FUNC_VISIBILITY aclnnStatus aclDestroyBoolArray(const aclBoolArray *array);
/** Destroys a tensor list (not the tensors it was made from). */
ACL_FUNC_VISIBILITY aclnnStatus
aclDestroyTensorList(const aclTensorList *array);

/** The view shape; `*viewDims` is allocated with new[] (free with delete[]). */
ACL_FUNC_VISIBILITY aclnnStatus aclGetViewShape(const aclTensor *tensor,
                                                int64_t **viewDims,
                                                uint64_t *viewDimsNum);
/** The view strides; `*stridesValue` is allocated with new[]. */
ACL_FUNC_VISIBILITY aclnnStatus aclGetViewStrides(const aclTensor *tensor,
                                                  int64_t **stridesValue,
                                                  uint64_t *stridesNum);
/** The view offset in elements. */
ACL_FUNC_VISIBILITY aclnnStatus aclGetViewOffset(const aclTensor *tensor,
                                                 int64_t *offset);
/** The storage shape; `*storageDims` is allocated with new[]. */
ACL_FUNC_VISIBILITY aclnnStatus aclGetStorageShape(const aclTensor *tensor,
                                                   int64_t **storageDims,
                                                   uint64_t *storageDimsNum);
/** The tensor's format. */
ACL_FUNC_VISIBILITY aclnnStatus aclGetFormat(const aclTensor *tensor,
                                             aclFormat *format);
/** The tensor's data type. */
ACL_FUNC_VISIBILITY aclnnStatus aclGetDataType(const aclTensor *tensor,
                                               aclDataType *dataType);
/** The number of values in an int array. */
ACL_FUNC_VISIBILITY aclnnStatus aclGetIntArraySize(const aclIntArray *array,
                                                   uint64_t *size);
/** The number of entries of a tensor list. */
ACL_FUNC_VISIBILITY aclnnStatus
aclGetTensorListSize(const aclTensorList *tensorList, uint64_t *size);
/** Changes the base address of a tensor's storage. */
ACL_FUNC_VISIBILITY aclnnStatus aclSetTensorAddr(aclTensor *tensor,
                                                 void *tensorData);

/** Makes an executor reusable: phase 2 may then run it any number of times
 *  and it lives until aclDestroyAclOpExecutor. */
ACL_FUNC_VISIBILITY aclnnStatus
aclSetAclOpExecutorRepeatable(aclOpExecutor *executor);
/** Destroys an executor that was never run or was made repeatable. */
ACL_FUNC_VISIBILITY aclnnStatus
aclDestroyAclOpExecutor(aclOpExecutor *executor);

#ifdef __cplusplus
}
#endif

#endif /* TILEJIT_ACLNN_ACL_META_H */
