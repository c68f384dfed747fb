//===- AclRuntime.cpp - aclInit, devices, contexts, streams, memory -------===//
//
// The acl runtime over the host: one device (the CPU, id 0), contexts that
// only remember their device, streams backed by host::Stream, and
// "device" memory that is host memory. Every failing call records a message
// naming the argument and the rule for aclGetRecentErrMsg.
//
//===----------------------------------------------------------------------===//
#include "acl/acl.h"
#include "ops/host/DataType.h"
#include "ops/host/OpRegistry.h"
#include "ops/host/Status.h"
#include "ops/host/Stream.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

using tilejit::host::Status;
using tilejit::host::Stream;

namespace {

constexpr int32_t kDeviceCount = 1;
constexpr size_t kAlignment = 64;

/// A context only remembers its device.
struct Context {
  int32_t deviceId = 0;
};

std::atomic<bool> initialized{false};
thread_local int32_t currentDevice = -1;
thread_local Context *currentContext = nullptr;

std::mutex contextMutex;
std::vector<Context *> &liveContexts() {
  static std::vector<Context *> contexts;
  return contexts;
}
Context *defaultContext(int32_t deviceId) {
  static Context contexts[kDeviceCount];
  contexts[deviceId].deviceId = deviceId;
  return &contexts[deviceId];
}
bool isLiveContext(Context *context) {
  if (context == defaultContext(0))
    return true;
  std::lock_guard<std::mutex> lock(contextMutex);
  const auto &contexts = liveContexts();
  return std::find(contexts.begin(), contexts.end(), context) != contexts.end();
}

aclError fail(aclError code, const char *api, const std::string &message) {
  tilejit::host::setRecentErrorMessage(std::string(api) + ": " + message);
  return code;
}

aclError checkDevice(const char *api, int32_t deviceId) {
  if (deviceId < 0 || deviceId >= kDeviceCount)
    return fail(ACL_ERROR_RT_INVALID_DEVICEID, api,
                "deviceId must be 0 (the host CPU is the only device), got " +
                    std::to_string(deviceId));
  return ACL_SUCCESS;
}

/// Looks up a stream handle: `out` holds the stream (null for the default
/// stream) while the caller uses it, so a concurrent aclrtDestroyStream
/// cannot free it under the caller.
aclError checkStream(const char *api, aclrtStream stream,
                     std::shared_ptr<Stream> &out) {
  out = nullptr;
  if (!stream)
    return ACL_SUCCESS;
  out = tilejit::host::findStream(stream);
  if (!out)
    return fail(ACL_ERROR_INVALID_PARAM, api,
                "stream is not a live stream from aclrtCreateStream");
  return ACL_SUCCESS;
}

aclError checkMemcpy(const char *api, void *dst, size_t destMax,
                     const void *src, size_t count, aclrtMemcpyKind kind) {
  if (!dst)
    return fail(ACL_ERROR_INVALID_PARAM, api, "dst must not be null");
  if (!src)
    return fail(ACL_ERROR_INVALID_PARAM, api, "src must not be null");
  if (count > destMax)
    return fail(ACL_ERROR_INVALID_PARAM, api,
                "count (" + std::to_string(count) +
                    ") must not exceed destMax (" + std::to_string(destMax) +
                    ")");
  int kindValue = static_cast<int>(kind);
  if (kindValue < static_cast<int>(ACL_MEMCPY_HOST_TO_HOST) ||
      kindValue > static_cast<int>(ACL_MEMCPY_DEFAULT))
    return fail(ACL_ERROR_INVALID_PARAM, api,
                "kind must be an aclrtMemcpyKind, got " +
                    std::to_string(kindValue));
  return ACL_SUCCESS;
}

aclError checkMemset(const char *api, void *devPtr, size_t maxCount,
                     size_t count) {
  if (!devPtr)
    return fail(ACL_ERROR_INVALID_PARAM, api, "devPtr must not be null");
  if (count > maxCount)
    return fail(ACL_ERROR_INVALID_PARAM, api,
                "count (" + std::to_string(count) +
                    ") must not exceed maxCount (" + std::to_string(maxCount) +
                    ")");
  return ACL_SUCCESS;
}

aclError allocate(const char *api, void **ptr, size_t size) {
  if (!ptr)
    return fail(ACL_ERROR_INVALID_PARAM, api, "the result pointer is null");
  *ptr = nullptr;
  if (size == 0)
    return fail(ACL_ERROR_INVALID_PARAM, api, "size must be greater than 0");
  void *p = nullptr;
  size_t rounded = (size + kAlignment - 1) / kAlignment * kAlignment;
  if (rounded < size || posix_memalign(&p, kAlignment, rounded) != 0)
    return fail(ACL_ERROR_BAD_ALLOC, api,
                "cannot allocate " + std::to_string(size) + " bytes");
  *ptr = p;
  return ACL_SUCCESS;
}

} // namespace

extern "C" {

aclError aclInit(const char *configPath) {
  if (configPath && *configPath) {
    std::ifstream in(configPath);
    if (!in)
      return fail(ACL_ERROR_INVALID_FILE, "aclInit",
                  std::string("cannot read config file '") + configPath + "'");
  }
  if (initialized.exchange(true))
    return fail(ACL_ERROR_REPEAT_INITIALIZE, "aclInit",
                "already initialised (call aclFinalize first)");
  // The operators are registered here at the latest (the registry does it
  // on its first use too, so a program that skips aclInit still finds them).
  tilejit::ops::registerBuiltinOperators();
  return ACL_SUCCESS;
}

aclError aclFinalize(void) {
  if (!initialized.exchange(false))
    return fail(ACL_ERROR_REPEAT_FINALIZE, "aclFinalize",
                "not initialised (aclInit was not called or aclFinalize "
                "already ran)");
  (void)tilejit::host::synchronizeAllStreams();
  return ACL_SUCCESS;
}

aclError aclrtGetVersion(int32_t *majorVersion, int32_t *minorVersion,
                         int32_t *patchVersion) {
  if (!majorVersion || !minorVersion || !patchVersion)
    return fail(ACL_ERROR_INVALID_PARAM, "aclrtGetVersion",
                "the result pointers must not be null");
  *majorVersion = 0;
  *minorVersion = 1;
  *patchVersion = 0;
  return ACL_SUCCESS;
}

aclError aclrtSetDevice(int32_t deviceId) {
  if (aclError e = checkDevice("aclrtSetDevice", deviceId))
    return e;
  currentDevice = deviceId;
  if (!currentContext)
    currentContext = defaultContext(deviceId);
  return ACL_SUCCESS;
}

aclError aclrtResetDevice(int32_t deviceId) {
  if (aclError e = checkDevice("aclrtResetDevice", deviceId))
    return e;
  (void)tilejit::host::synchronizeAllStreams();
  if (currentDevice == deviceId)
    currentDevice = -1;
  if (currentContext == defaultContext(deviceId))
    currentContext = nullptr;
  return ACL_SUCCESS;
}

aclError aclrtGetDevice(int32_t *deviceId) {
  if (!deviceId)
    return fail(ACL_ERROR_INVALID_PARAM, "aclrtGetDevice",
                "deviceId must not be null");
  if (currentDevice < 0 && !currentContext)
    return fail(ACL_ERROR_RT_CONTEXT_NULL, "aclrtGetDevice",
                "no device is set on this thread (call aclrtSetDevice)");
  *deviceId = currentDevice >= 0 ? currentDevice : currentContext->deviceId;
  return ACL_SUCCESS;
}

aclError aclrtGetDeviceCount(uint32_t *count) {
  if (!count)
    return fail(ACL_ERROR_INVALID_PARAM, "aclrtGetDeviceCount",
                "count must not be null");
  *count = kDeviceCount;
  return ACL_SUCCESS;
}

aclError aclrtGetRunMode(aclrtRunMode *runMode) {
  if (!runMode)
    return fail(ACL_ERROR_INVALID_PARAM, "aclrtGetRunMode",
                "runMode must not be null");
  *runMode = ACL_HOST;
  return ACL_SUCCESS;
}

aclError aclrtSynchronizeDevice(void) {
  Status status = tilejit::host::synchronizeAllStreams();
  if (!status.isOk())
    return tilejit::host::recordError(status, "aclrtSynchronizeDevice");
  return ACL_SUCCESS;
}

aclError aclrtCreateContext(aclrtContext *context, int32_t deviceId) {
  if (!context)
    return fail(ACL_ERROR_INVALID_PARAM, "aclrtCreateContext",
                "context must not be null");
  if (aclError e = checkDevice("aclrtCreateContext", deviceId))
    return e;
  auto *c = new Context{deviceId};
  {
    std::lock_guard<std::mutex> lock(contextMutex);
    liveContexts().push_back(c);
  }
  currentContext = c;
  *context = c;
  return ACL_SUCCESS;
}

aclError aclrtDestroyContext(aclrtContext context) {
  auto *c = static_cast<Context *>(context);
  {
    std::lock_guard<std::mutex> lock(contextMutex);
    auto &contexts = liveContexts();
    auto it = std::find(contexts.begin(), contexts.end(), c);
    if (!c || it == contexts.end())
      return fail(ACL_ERROR_INVALID_PARAM, "aclrtDestroyContext",
                  "context is not a live context from aclrtCreateContext");
    contexts.erase(it);
  }
  if (currentContext == c)
    currentContext = nullptr;
  delete c;
  return ACL_SUCCESS;
}

aclError aclrtSetCurrentContext(aclrtContext context) {
  auto *c = static_cast<Context *>(context);
  if (!c || !isLiveContext(c))
    return fail(ACL_ERROR_INVALID_PARAM, "aclrtSetCurrentContext",
                "context is not a live context");
  currentContext = c;
  currentDevice = c->deviceId;
  return ACL_SUCCESS;
}

aclError aclrtGetCurrentContext(aclrtContext *context) {
  if (!context)
    return fail(ACL_ERROR_INVALID_PARAM, "aclrtGetCurrentContext",
                "context must not be null");
  if (!currentContext)
    return fail(ACL_ERROR_RT_CONTEXT_NULL, "aclrtGetCurrentContext",
                "no context is current on this thread");
  *context = currentContext;
  return ACL_SUCCESS;
}

aclError aclrtCreateStream(aclrtStream *stream) {
  if (!stream)
    return fail(ACL_ERROR_INVALID_PARAM, "aclrtCreateStream",
                "stream must not be null");
  auto s = std::make_shared<Stream>();
  *stream = s.get();
  tilejit::host::registerStream(std::move(s));
  return ACL_SUCCESS;
}

aclError aclrtDestroyStream(aclrtStream stream) {
  if (!stream)
    return fail(ACL_ERROR_INVALID_PARAM, "aclrtDestroyStream",
                "stream must not be null (the default stream cannot be "
                "destroyed)");
  std::shared_ptr<Stream> s;
  if (aclError e = checkStream("aclrtDestroyStream", stream, s))
    return e;
  if (s->isWorkerThread())
    return fail(ACL_ERROR_INVALID_PARAM, "aclrtDestroyStream",
                "a stream cannot be destroyed by its own task");
  if (!tilejit::host::unregisterStream(stream))
    return fail(ACL_ERROR_INVALID_PARAM, "aclrtDestroyStream",
                "stream is not a live stream from aclrtCreateStream");
  // Waits for the pending work; the stream itself is freed when the last
  // holder (this call, or a concurrent synchronise or submit) lets go.
  (void)s->synchronize();
  return ACL_SUCCESS;
}

aclError aclrtSynchronizeStream(aclrtStream stream) {
  if (!stream)
    return ACL_SUCCESS; // the default stream runs work synchronously
  std::shared_ptr<Stream> s;
  if (aclError e = checkStream("aclrtSynchronizeStream", stream, s))
    return e;
  if (s->isWorkerThread())
    return fail(ACL_ERROR_INVALID_PARAM, "aclrtSynchronizeStream",
                "a stream cannot be synchronised by its own task");
  Status status = s->synchronize();
  if (!status.isOk())
    return tilejit::host::recordError(status, "aclrtSynchronizeStream");
  return ACL_SUCCESS;
}

aclError aclrtMalloc(void **devPtr, size_t size, aclrtMemMallocPolicy policy) {
  (void)policy; // every policy is host memory here
  return allocate("aclrtMalloc", devPtr, size);
}

aclError aclrtFree(void *devPtr) {
  if (!devPtr)
    return fail(ACL_ERROR_INVALID_PARAM, "aclrtFree",
                "devPtr must not be null");
  std::free(devPtr);
  return ACL_SUCCESS;
}

aclError aclrtMallocHost(void **hostPtr, size_t size) {
  return allocate("aclrtMallocHost", hostPtr, size);
}

aclError aclrtFreeHost(void *hostPtr) {
  if (!hostPtr)
    return fail(ACL_ERROR_INVALID_PARAM, "aclrtFreeHost",
                "hostPtr must not be null");
  std::free(hostPtr);
  return ACL_SUCCESS;
}

aclError aclrtMemcpy(void *dst, size_t destMax, const void *src, size_t count,
                     aclrtMemcpyKind kind) {
  if (aclError e = checkMemcpy("aclrtMemcpy", dst, destMax, src, count, kind))
    return e;
  if (count)
    std::memmove(dst, src, count);
  return ACL_SUCCESS;
}

aclError aclrtMemset(void *devPtr, size_t maxCount, int32_t value,
                     size_t count) {
  if (aclError e = checkMemset("aclrtMemset", devPtr, maxCount, count))
    return e;
  std::memset(devPtr, value, count);
  return ACL_SUCCESS;
}

aclError aclrtMemcpyAsync(void *dst, size_t destMax, const void *src,
                          size_t count, aclrtMemcpyKind kind,
                          aclrtStream stream) {
  if (aclError e =
          checkMemcpy("aclrtMemcpyAsync", dst, destMax, src, count, kind))
    return e;
  std::shared_ptr<Stream> s;
  if (aclError e = checkStream("aclrtMemcpyAsync", stream, s))
    return e;
  (void)tilejit::host::runOnStream(s.get(), [=] {
    if (count)
      std::memmove(dst, src, count);
    return Status::ok();
  });
  return ACL_SUCCESS;
}

aclError aclrtMemsetAsync(void *devPtr, size_t maxCount, int32_t value,
                          size_t count, aclrtStream stream) {
  if (aclError e = checkMemset("aclrtMemsetAsync", devPtr, maxCount, count))
    return e;
  std::shared_ptr<Stream> s;
  if (aclError e = checkStream("aclrtMemsetAsync", stream, s))
    return e;
  (void)tilejit::host::runOnStream(s.get(), [=] {
    std::memset(devPtr, value, count);
    return Status::ok();
  });
  return ACL_SUCCESS;
}

float aclFloat16ToFloat(aclFloat16 value) {
  return tilejit::host::halfBitsToFloat(value);
}

aclFloat16 aclFloatToFloat16(float value) {
  return tilejit::host::floatToHalfBits(value);
}

size_t aclDataTypeSize(aclDataType dataType) {
  if (!tilejit::host::isKnownDataType(dataType))
    return 0;
  return static_cast<size_t>(tilejit::host::elementSize(
      static_cast<tilejit::host::DataType>(dataType)));
}

const char *aclGetRecentErrMsg(void) {
  return tilejit::host::takeRecentErrorMessage();
}

} // extern "C"
