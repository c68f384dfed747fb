/*===- acl_rt.h - Devices, contexts, streams and memory -----------*- C -*-===//
 *
 * \file
 * The aclrt* runtime of the acl-compatible C API. tilejit's "device" is the
 * host CPU (one device, id 0); device memory is host memory, so every
 * aclrtMemcpy kind is a plain copy. A stream is an in-order queue served by
 * its own worker thread, asynchronous to the caller; the default stream
 * (NULL) runs work synchronously on the calling thread.
 *
 *===----------------------------------------------------------------------===*/
#ifndef TILEJIT_ACL_ACL_RT_H
#define TILEJIT_ACL_ACL_RT_H

#include "acl/acl_base.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Direction of an aclrtMemcpy (all kinds copy host memory here). */
typedef enum aclrtMemcpyKind ACL_ENUM_BASE {
  ACL_MEMCPY_HOST_TO_HOST = 0,
  ACL_MEMCPY_HOST_TO_DEVICE = 1,
  ACL_MEMCPY_DEVICE_TO_HOST = 2,
  ACL_MEMCPY_DEVICE_TO_DEVICE = 3,
  ACL_MEMCPY_DEFAULT = 4
} aclrtMemcpyKind;

/** Allocation policy of aclrtMalloc (accepted and ignored). */
typedef enum aclrtMemMallocPolicy ACL_ENUM_BASE {
  ACL_MEM_MALLOC_HUGE_FIRST = 0,
  ACL_MEM_MALLOC_HUGE_ONLY = 1,
  ACL_MEM_MALLOC_NORMAL_ONLY = 2,
  ACL_MEM_MALLOC_HUGE_FIRST_P2P = 3,
  ACL_MEM_MALLOC_HUGE_ONLY_P2P = 4,
  ACL_MEM_MALLOC_NORMAL_ONLY_P2P = 5,
  ACL_MEM_TYPE_LOW_BAND_WIDTH = 0x0100,
  ACL_MEM_TYPE_HIGH_BAND_WIDTH = 0x1000
} aclrtMemMallocPolicy;

/** Where the program runs; tilejit always reports ACL_HOST. */
typedef enum aclrtRunMode ACL_ENUM_BASE { ACL_DEVICE = 0, ACL_HOST = 1 } aclrtRunMode;

/** Makes `deviceId` (only 0 exists) current on the calling thread. */
ACL_FUNC_VISIBILITY aclError aclrtSetDevice(int32_t deviceId);
/** Releases the device; waits for every stream's pending work. */
ACL_FUNC_VISIBILITY aclError aclrtResetDevice(int32_t deviceId);
/** The calling thread's current device (ACL_ERROR_RT_CONTEXT_NULL if none). */
ACL_FUNC_VISIBILITY aclError aclrtGetDevice(int32_t *deviceId);
/** The number of devices (always 1). */
ACL_FUNC_VISIBILITY aclError aclrtGetDeviceCount(uint32_t *count);
/** Reports ACL_HOST. */
ACL_FUNC_VISIBILITY aclError aclrtGetRunMode(aclrtRunMode *runMode);
/** Waits for the pending work of every stream. */
ACL_FUNC_VISIBILITY aclError aclrtSynchronizeDevice(void);

/** Creates a context on `deviceId` and makes it current. */
ACL_FUNC_VISIBILITY aclError aclrtCreateContext(aclrtContext *context,
                                                int32_t deviceId);
/** Destroys a context made by aclrtCreateContext. */
ACL_FUNC_VISIBILITY aclError aclrtDestroyContext(aclrtContext context);
/** Makes `context` current on the calling thread. */
ACL_FUNC_VISIBILITY aclError aclrtSetCurrentContext(aclrtContext context);
/** The calling thread's current context (ACL_ERROR_RT_CONTEXT_NULL if none). */
ACL_FUNC_VISIBILITY aclError aclrtGetCurrentContext(aclrtContext *context);

/** Creates a stream: an in-order queue with its own worker thread. */
ACL_FUNC_VISIBILITY aclError aclrtCreateStream(aclrtStream *stream);
/** Waits for the stream's pending work, then destroys it. */
ACL_FUNC_VISIBILITY aclError aclrtDestroyStream(aclrtStream stream);
/** Waits until every task submitted to `stream` has run. Returns the status
 *  of the first task that failed since the last synchronisation (tasks after
 *  a failure are skipped), or ACL_SUCCESS. NULL is the default stream. */
ACL_FUNC_VISIBILITY aclError aclrtSynchronizeStream(aclrtStream stream);

/** Allocates `size` bytes (64-byte aligned) of "device" (host) memory. */
ACL_FUNC_VISIBILITY aclError aclrtMalloc(void **devPtr, size_t size,
                                         aclrtMemMallocPolicy policy);
/** Frees memory from aclrtMalloc. */
ACL_FUNC_VISIBILITY aclError aclrtFree(void *devPtr);
/** Allocates `size` bytes of host memory (64-byte aligned). */
ACL_FUNC_VISIBILITY aclError aclrtMallocHost(void **hostPtr, size_t size);
/** Frees memory from aclrtMallocHost. */
ACL_FUNC_VISIBILITY aclError aclrtFreeHost(void *hostPtr);
/** Copies `count` bytes; fails if `count > destMax`. Synchronous. */
ACL_FUNC_VISIBILITY aclError aclrtMemcpy(void *dst, size_t destMax,
                                         const void *src, size_t count,
                                         aclrtMemcpyKind kind);
/** Sets `count` bytes to `value`; fails if `count > maxCount`. Synchronous. */
ACL_FUNC_VISIBILITY aclError aclrtMemset(void *devPtr, size_t maxCount,
                                         int32_t value, size_t count);
/** aclrtMemcpy queued on `stream` (arguments are checked at the call). */
ACL_FUNC_VISIBILITY aclError aclrtMemcpyAsync(void *dst, size_t destMax,
                                              const void *src, size_t count,
                                              aclrtMemcpyKind kind,
                                              aclrtStream stream);
/** aclrtMemset queued on `stream` (arguments are checked at the call). */
ACL_FUNC_VISIBILITY aclError aclrtMemsetAsync(void *devPtr, size_t maxCount,
                                              int32_t value, size_t count,
                                              aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* TILEJIT_ACL_ACL_RT_H */
