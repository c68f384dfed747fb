/*===- acl_base.h - Basic types of the acl-compatible C API -------*- C -*-===//
 *
 * \file
 * tilejit's own declarations of the basic AscendCL types (error codes, data
 * types, formats, fp16 helpers), with the numeric values of CANN's
 * acl_base.h so that programs written for the Ascend operator library build
 * against tilejit unchanged. Usable from C and C++.
 *
 *===----------------------------------------------------------------------===*/
#ifndef TILEJIT_ACL_ACL_BASE_H
#define TILEJIT_ACL_ACL_BASE_H

#include <stddef.h>
#include <stdint.h>

#ifndef ACL_FUNC_VISIBILITY
/** Marks a function exported from libtilejit. */
#define ACL_FUNC_VISIBILITY __attribute__((visibility("default")))
#endif

#ifdef __cplusplus
extern "C" {
#endif

/** Stream handle: an in-order queue of host work (see aclrtCreateStream). */
typedef void *aclrtStream;
/** Event handle (declared for source compatibility; not used). */
typedef void *aclrtEvent;
/** Context handle (see aclrtCreateContext). */
typedef void *aclrtContext;
/** Result of every acl* runtime call; 0 (ACL_SUCCESS) on success. */
typedef int aclError;
/** IEEE 754 binary16 value, stored as its bit pattern. */
typedef uint16_t aclFloat16;

/* Success and error codes (values of CANN's acl_base.h). */
static const int ACL_SUCCESS = 0;
static const int ACL_ERROR_NONE = 0;

static const int ACL_ERROR_INVALID_PARAM = 100000;
static const int ACL_ERROR_UNINITIALIZE = 100001;
static const int ACL_ERROR_REPEAT_INITIALIZE = 100002;
static const int ACL_ERROR_INVALID_FILE = 100003;
static const int ACL_ERROR_UNSUPPORTED_DATA_TYPE = 100026;
static const int ACL_ERROR_FORMAT_NOT_MATCH = 100027;
static const int ACL_ERROR_REPEAT_FINALIZE = 100037;

static const int ACL_ERROR_BAD_ALLOC = 200000;
static const int ACL_ERROR_API_NOT_SUPPORT = 200001;
static const int ACL_ERROR_INVALID_DEVICE = 200002;
static const int ACL_ERROR_MEMORY_ADDRESS_UNALIGNED = 200003;
static const int ACL_ERROR_RESOURCE_NOT_MATCH = 200004;
static const int ACL_ERROR_INVALID_RESOURCE_HANDLE = 200005;
static const int ACL_ERROR_FEATURE_UNSUPPORTED = 200006;

static const int ACL_ERROR_STORAGE_OVER_LIMIT = 300000;

static const int ACL_ERROR_INTERNAL_ERROR = 500000;
static const int ACL_ERROR_FAILURE = 500001;
static const int ACL_ERROR_GE_FAILURE = 500002;
static const int ACL_ERROR_RT_FAILURE = 500003;
static const int ACL_ERROR_DRV_FAILURE = 500004;

/* Runtime error codes (values of CANN's acl_rt error list). */
static const int ACL_ERROR_RT_PARAM_INVALID = 107000;
static const int ACL_ERROR_RT_INVALID_DEVICEID = 107001;
static const int ACL_ERROR_RT_CONTEXT_NULL = 107002;
static const int ACL_ERROR_RT_STREAM_CONTEXT = 107003;
static const int ACL_ERROR_RT_FEATURE_NOT_SUPPORT = 207000;
static const int ACL_ERROR_RT_MEMORY_ALLOCATION = 207001;
static const int ACL_ERROR_RT_INTERNAL_ERROR = 507000;

/** In C++ the enums of this API have int as their fixed underlying type, so
 *  every int a C caller passes (an unknown dtype, a bad memcpy kind) is a
 *  value of the type: without it, loading such a value is undefined
 *  behaviour and the library's own range checks could be folded away. */
#ifdef __cplusplus
#define ACL_ENUM_BASE : int
#else
#define ACL_ENUM_BASE
#endif

/** Element types (numeric values of CANN's aclDataType). */
typedef enum aclDataType ACL_ENUM_BASE {
  ACL_DT_UNDEFINED = -1,
  ACL_FLOAT = 0,
  ACL_FLOAT16 = 1,
  ACL_INT8 = 2,
  ACL_INT32 = 3,
  ACL_UINT8 = 4,
  ACL_INT16 = 6,
  ACL_UINT16 = 7,
  ACL_UINT32 = 8,
  ACL_INT64 = 9,
  ACL_UINT64 = 10,
  ACL_DOUBLE = 11,
  ACL_BOOL = 12,
  ACL_STRING = 13,
  ACL_COMPLEX64 = 16,
  ACL_COMPLEX128 = 17,
  ACL_BF16 = 27,
  ACL_INT4 = 29,
  ACL_UINT1 = 30,
  ACL_COMPLEX32 = 33,
  ACL_HIFLOAT8 = 34,
  ACL_FLOAT8_E5M2 = 35,
  ACL_FLOAT8_E4M3FN = 36,
  ACL_FLOAT8_E8M0 = 37,
  ACL_FLOAT6_E3M2 = 38,
  ACL_FLOAT6_E2M3 = 39,
  ACL_FLOAT4_E2M1 = 40,
  ACL_FLOAT4_E1M2 = 41
} aclDataType;

/** Storage formats (numeric values of CANN's aclFormat). */
typedef enum aclFormat ACL_ENUM_BASE {
  ACL_FORMAT_UNDEFINED = -1,
  ACL_FORMAT_NCHW = 0,
  ACL_FORMAT_NHWC = 1,
  ACL_FORMAT_ND = 2,
  ACL_FORMAT_NC1HWC0 = 3,
  ACL_FORMAT_FRACTAL_Z = 4,
  ACL_FORMAT_NC1HWC0_C04 = 12,
  ACL_FORMAT_HWCN = 16,
  ACL_FORMAT_NDHWC = 27,
  ACL_FORMAT_FRACTAL_NZ = 29,
  ACL_FORMAT_NCDHW = 30,
  ACL_FORMAT_NDC1HWC0 = 32,
  ACL_FRACTAL_Z_3D = 33,
  ACL_FORMAT_NC = 35,
  ACL_FORMAT_NCL = 47
} aclFormat;

/** Converts an fp16 bit pattern to float (exact). */
ACL_FUNC_VISIBILITY float aclFloat16ToFloat(aclFloat16 value);

/** Converts a float to fp16, rounding to nearest even; overflow gives inf,
 *  NaN stays NaN. */
ACL_FUNC_VISIBILITY aclFloat16 aclFloatToFloat16(float value);

/** Bytes per element of `dataType` (1 for sub-byte types, 0 if unknown). */
ACL_FUNC_VISIBILITY size_t aclDataTypeSize(aclDataType dataType);

/** The most recent error message of the calling thread, or NULL when no call
 *  failed since the last read. Reading clears it; the text stays valid until
 *  the next call of aclGetRecentErrMsg on the same thread. */
ACL_FUNC_VISIBILITY const char *aclGetRecentErrMsg(void);

#ifdef __cplusplus
}
#endif

#endif /* TILEJIT_ACL_ACL_BASE_H */
