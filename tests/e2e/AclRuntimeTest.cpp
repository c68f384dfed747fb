//===- AclRuntimeTest.cpp - The acl/aclnn C API and its host runtime ------===//
//
// Tensors, arrays, memory, fp16, streams, error messages and the two-phase
// operator plumbing, through the public C headers. Operator semantics are
// tested by the operators; here a fake Prepare stands in for one.
//
//===----------------------------------------------------------------------===//
#include "acl/acl.h"
#include "aclnn/acl_meta.h"
#include "aclnnop/aclnn_flash_attention_score_grad.h"
#include "aclnnop/aclnn_gather_pa_kv_cache.h"
#include "aclnnop/aclnn_incre_flash_attention_v4.h"
#include "aclnnop/aclnn_nsa_compress_with_cache.h"
#include "aclnnop/aclnn_scatter_pa_kv_cache.h"
#include "jit/Options.h"
#include "ops/aclnn/AclObjects.h"
#include "ops/Operators.h"
#include "ops/host/DataType.h"
#include "ops/host/Stream.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <cstring>
#include <future>
#include <limits>
#include <random>
#include <string>
#include <thread>
#include <vector>

using namespace tilejit;
using host::DataType;
using host::Status;

namespace {

/// Takes the recent error message as a string ("" if none).
std::string recentError() {
  const char *m = aclGetRecentErrMsg();
  return m ? std::string(m) : std::string();
}

uint32_t bitsOf(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

float floatOf(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

} // namespace

//===----------------------------------------------------------------------===//
// Enums and sizes
//===----------------------------------------------------------------------===//

TEST(AclRuntime, DataTypeValuesMatchTheCApi) {
  static_assert(ACL_FLOAT == 0 && ACL_FLOAT16 == 1 && ACL_INT8 == 2 &&
                ACL_INT32 == 3 && ACL_UINT8 == 4 && ACL_INT16 == 6 &&
                ACL_UINT16 == 7 && ACL_UINT32 == 8 && ACL_INT64 == 9 &&
                ACL_UINT64 == 10 && ACL_DOUBLE == 11 && ACL_BOOL == 12 &&
                ACL_BF16 == 27 && ACL_INT4 == 29 && ACL_HIFLOAT8 == 34 &&
                ACL_FLOAT8_E5M2 == 35 && ACL_FLOAT8_E4M3FN == 36);
  static_assert(ACL_FORMAT_NCHW == 0 && ACL_FORMAT_NHWC == 1 &&
                ACL_FORMAT_ND == 2 && ACL_FORMAT_FRACTAL_NZ == 29);
  EXPECT_EQ(static_cast<int>(DataType::BFloat16), ACL_BF16);
  EXPECT_EQ(static_cast<int>(DataType::Float8E4M3FN), ACL_FLOAT8_E4M3FN);
  EXPECT_EQ(static_cast<int>(host::Format::FractalNZ),
            ACL_FORMAT_FRACTAL_NZ);
  EXPECT_EQ(aclDataTypeSize(ACL_FLOAT), 4u);
  EXPECT_EQ(aclDataTypeSize(ACL_FLOAT16), 2u);
  EXPECT_EQ(aclDataTypeSize(ACL_BF16), 2u);
  EXPECT_EQ(aclDataTypeSize(ACL_INT8), 1u);
  EXPECT_EQ(aclDataTypeSize(ACL_INT64), 8u);
  EXPECT_EQ(aclDataTypeSize(ACL_HIFLOAT8), 1u);
  EXPECT_EQ(aclDataTypeSize(ACL_DT_UNDEFINED), 0u);
  EXPECT_EQ(host::dataTypeName(DataType::BFloat16), "BFLOAT16");
  EXPECT_EQ(host::elementBits(DataType::Int4), 4);
}

//===----------------------------------------------------------------------===//
// Tensors, arrays, lists
//===----------------------------------------------------------------------===//

TEST(AclRuntime, CreateTensorKeepsViewAndStorage) {
  std::vector<uint16_t> storage(64);
  int64_t dims[] = {2, 3};
  int64_t strides[] = {8, 2};
  int64_t storageDims[] = {4, 16};
  aclTensor *t =
      aclCreateTensor(dims, 2, ACL_FLOAT16, strides, 5, ACL_FORMAT_FRACTAL_NZ,
                      storageDims, 2, storage.data());
  ASSERT_NE(t, nullptr);

  int64_t *got = nullptr;
  uint64_t n = 0;
  ASSERT_EQ(aclGetViewShape(t, &got, &n), ACLNN_SUCCESS);
  ASSERT_EQ(n, 2u);
  EXPECT_EQ(got[0], 2);
  EXPECT_EQ(got[1], 3);
  delete[] got;
  ASSERT_EQ(aclGetViewStrides(t, &got, &n), ACLNN_SUCCESS);
  EXPECT_EQ(got[0], 8);
  EXPECT_EQ(got[1], 2);
  delete[] got;
  ASSERT_EQ(aclGetStorageShape(t, &got, &n), ACLNN_SUCCESS);
  ASSERT_EQ(n, 2u);
  EXPECT_EQ(got[1], 16);
  delete[] got;
  int64_t offset = 0;
  ASSERT_EQ(aclGetViewOffset(t, &offset), ACLNN_SUCCESS);
  EXPECT_EQ(offset, 5);
  aclFormat format = ACL_FORMAT_ND;
  ASSERT_EQ(aclGetFormat(t, &format), ACLNN_SUCCESS);
  EXPECT_EQ(format, ACL_FORMAT_FRACTAL_NZ);
  aclDataType dtype = ACL_FLOAT;
  ASSERT_EQ(aclGetDataType(t, &dtype), ACLNN_SUCCESS);
  EXPECT_EQ(dtype, ACL_FLOAT16);

  // The handle is the runtime's view.
  const host::TensorView *v = t;
  EXPECT_EQ(v->rank(), 2);
  EXPECT_EQ(v->numel(), 6);
  EXPECT_EQ(v->storageNumel(), 64);
  EXPECT_FALSE(v->isContiguous());
  EXPECT_TRUE(v->fitsStorage()); // 5 + 8 + 4 = 17 < 64
  EXPECT_EQ(v->firstElement(), storage.data() + 5);
  rt::TensorDesc d = v->toDesc();
  EXPECT_EQ(d.data, storage.data() + 5);
  EXPECT_EQ(d.rank, 2);
  EXPECT_EQ(d.sizes[1], 3);
  EXPECT_EQ(d.strides[0], 8);
  EXPECT_EQ(v->describe(), "FLOAT16[2, 3] FRACTAL_NZ strides [8, 2] offset 5");
  aclDestroyTensor(t);
}

TEST(AclRuntime, CreateTensorDefaultsAndScalars) {
  float x = 3.0f;
  // 0-D tensor: no dims, numel 1.
  aclTensor *s = aclCreateTensor(nullptr, 0, ACL_FLOAT, nullptr, 0,
                                 ACL_FORMAT_ND, nullptr, 0, &x);
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->rank(), 0);
  EXPECT_EQ(s->numel(), 1);
  EXPECT_TRUE(s->fitsStorage());
  EXPECT_EQ(*s->as<float>(), 3.0f);
  aclDestroyTensor(s);

  // Null strides mean contiguous; no storage dims mean "exactly the view".
  int64_t dims[] = {2, 3, 4};
  aclTensor *t = aclCreateTensor(dims, 3, ACL_INT32, nullptr, 0, ACL_FORMAT_ND,
                                 nullptr, 0, nullptr);
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->strides, (std::vector<int64_t>{12, 4, 1}));
  EXPECT_TRUE(t->isContiguous());
  EXPECT_EQ(t->storageShape, (std::vector<int64_t>{24}));
  EXPECT_EQ(t->firstElement(), nullptr);
  aclDestroyTensor(t);

  // Empty tensor.
  int64_t emptyDims[] = {0, 5};
  aclTensor *e = aclCreateTensor(emptyDims, 2, ACL_FLOAT, nullptr, 0,
                                 ACL_FORMAT_ND, emptyDims, 2, nullptr);
  ASSERT_NE(e, nullptr);
  EXPECT_TRUE(e->isEmpty());
  EXPECT_TRUE(e->fitsStorage());
  aclDestroyTensor(e);

  int32_t iv = -7;
  aclScalar *sc = aclCreateScalar(&iv, ACL_INT32);
  ASSERT_NE(sc, nullptr);
  EXPECT_EQ(sc->toDouble(), -7.0);
  aclDestroyScalar(sc);
  aclFloat16 h = aclFloatToFloat16(0.5f);
  sc = aclCreateScalar(&h, ACL_FLOAT16);
  EXPECT_EQ(sc->toDouble(), 0.5);
  aclDestroyScalar(sc);
}

TEST(AclRuntime, CreateTensorRejectsBadInputWithAMessage) {
  (void)recentError();
  int64_t dims[] = {2, -1};
  EXPECT_EQ(aclCreateTensor(dims, 2, ACL_FLOAT, nullptr, 0, ACL_FORMAT_ND,
                            nullptr, 0, nullptr),
            nullptr);
  EXPECT_NE(recentError().find("viewDims[1] must not be negative"),
            std::string::npos);

  int64_t ok[] = {2, 2};
  EXPECT_EQ(aclCreateTensor(ok, 2, static_cast<aclDataType>(99), nullptr, 0,
                            ACL_FORMAT_ND, nullptr, 0, nullptr),
            nullptr);
  EXPECT_NE(recentError().find("dataType 99"), std::string::npos);
  EXPECT_EQ(aclCreateTensor(ok, 2, ACL_FLOAT, nullptr, -1, ACL_FORMAT_ND,
                            nullptr, 0, nullptr),
            nullptr);
  EXPECT_NE(recentError().find("offset"), std::string::npos);
  EXPECT_EQ(aclCreateTensor(nullptr, 2, ACL_FLOAT, nullptr, 0, ACL_FORMAT_ND,
                            nullptr, 0, nullptr),
            nullptr);
  EXPECT_NE(recentError().find("viewDims is null"), std::string::npos);
  int64_t big[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
  EXPECT_EQ(aclCreateTensor(big, 9, ACL_FLOAT, nullptr, 0, ACL_FORMAT_ND,
                            nullptr, 0, nullptr),
            nullptr);
  EXPECT_NE(recentError().find("at most 8"), std::string::npos);
  // Reading cleared it.
  EXPECT_EQ(aclGetRecentErrMsg(), nullptr);
}

// CANN's switch to print logs prints every recorded message on stderr too
// (for programs that never call aclGetRecentErrMsg); log level 4 silences
// it, and without it nothing is printed. The options are overridden in
// this process only; its environment is not touched.
TEST(AclRuntime, ErrorsPrintOnStderrWithCannsSwitch) {
  auto failingCalls = [] {
    testing::internal::CaptureStderr();
    std::vector<uint8_t> bytes(100);
    EXPECT_EQ(aclrtMemcpy(bytes.data(), 50, bytes.data() + 50, 100, ACL_MEMCPY_HOST_TO_HOST),
              ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclnnGatherPaKvCache(nullptr, 0, nullptr, nullptr), ACLNN_ERR_PARAM_NULLPTR);
    return testing::internal::GetCapturedStderr();
  };
  EXPECT_EQ(failingCalls(), "");
  (void)recentError();
  {
    jit::ScopedOptionOverride print("ASCEND_SLOG_PRINT_TO_STDOUT", "1");
    EXPECT_EQ(failingCalls(),
              "[ERROR] tilejit: aclrtMemcpy: count (100) must not exceed destMax (50)\n"
              "[ERROR] tilejit: aclnnGatherPaKvCache: executor must not be null\n");
    // Still recorded for aclGetRecentErrMsg.
    EXPECT_EQ(recentError(), "aclnnGatherPaKvCache: executor must not be null");
    jit::ScopedOptionOverride quiet("ASCEND_GLOBAL_LOG_LEVEL", "4");
    EXPECT_EQ(failingCalls(), "");
  }
  (void)recentError();
}

TEST(AclRuntime, IntArraysAndTensorLists) {
  int64_t values[] = {4, 5, 6};
  aclIntArray *a = aclCreateIntArray(values, 3);
  ASSERT_NE(a, nullptr);
  values[0] = 99; // copied
  uint64_t n = 0;
  ASSERT_EQ(aclGetIntArraySize(a, &n), ACLNN_SUCCESS);
  EXPECT_EQ(n, 3u);
  const host::IntArray *ia = a;
  EXPECT_EQ((*ia)[0], 4);
  EXPECT_EQ(ia->size(), 3);
  aclDestroyIntArray(a);
  aclIntArray *empty = aclCreateIntArray(nullptr, 0);
  ASSERT_NE(empty, nullptr);
  EXPECT_EQ(empty->size(), 0);
  aclDestroyIntArray(empty);
  EXPECT_EQ(aclCreateIntArray(nullptr, 2), nullptr);
  EXPECT_NE(recentError().find("aclCreateIntArray"), std::string::npos);

  int64_t dims[] = {1, 4};
  float buf[4] = {};
  aclTensor *t0 = aclCreateTensor(dims, 2, ACL_FLOAT, nullptr, 0, ACL_FORMAT_ND,
                                  dims, 2, buf);
  aclTensor *items[] = {t0, nullptr};
  aclTensorList *list = aclCreateTensorList(items, 2);
  ASSERT_NE(list, nullptr);
  aclDestroyTensor(t0); // the list keeps its own copy
  ASSERT_EQ(aclGetTensorListSize(list, &n), ACLNN_SUCCESS);
  EXPECT_EQ(n, 2u);
  const host::TensorList *tl = list;
  ASSERT_NE(tl->at(0), nullptr);
  EXPECT_EQ(tl->at(0)->shape, (std::vector<int64_t>{1, 4}));
  EXPECT_EQ(tl->at(0)->data, buf);
  EXPECT_EQ(tl->at(1), nullptr);
  aclDestroyTensorList(list);
}

TEST(AclRuntime, NullPointerStatuses) {
  uint64_t n = 0;
  EXPECT_EQ(aclGetViewShape(nullptr, nullptr, &n), ACLNN_ERR_PARAM_NULLPTR);
  EXPECT_EQ(aclGetIntArraySize(nullptr, &n), ACLNN_ERR_PARAM_NULLPTR);
  EXPECT_EQ(aclGetTensorListSize(nullptr, &n), ACLNN_ERR_PARAM_NULLPTR);
  EXPECT_EQ(aclDestroyAclOpExecutor(nullptr), ACLNN_ERR_PARAM_NULLPTR);
  EXPECT_EQ(aclSetAclOpExecutorRepeatable(nullptr), ACLNN_ERR_PARAM_NULLPTR);
  EXPECT_NE(recentError().find("executor must not be null"), std::string::npos);
  EXPECT_EQ(aclDestroyTensor(nullptr), ACLNN_SUCCESS);
  EXPECT_EQ(aclrtMalloc(nullptr, 16, ACL_MEM_MALLOC_HUGE_FIRST),
            ACL_ERROR_INVALID_PARAM);
  EXPECT_EQ(aclrtGetDevice(nullptr), ACL_ERROR_INVALID_PARAM);
  EXPECT_EQ(aclrtCreateStream(nullptr), ACL_ERROR_INVALID_PARAM);
  EXPECT_EQ(aclrtFree(nullptr), ACL_ERROR_INVALID_PARAM);
  EXPECT_NE(recentError().find("aclrtFree: devPtr must not be null"),
            std::string::npos);
}

//===----------------------------------------------------------------------===//
// Devices, contexts, memory
//===----------------------------------------------------------------------===//

TEST(AclRuntime, InitDevicesAndContexts) {
  ASSERT_EQ(aclInit(nullptr), ACL_SUCCESS);
  EXPECT_EQ(aclInit(nullptr), ACL_ERROR_REPEAT_INITIALIZE);
  EXPECT_EQ(aclInit("/nonexistent/acl.json"), ACL_ERROR_INVALID_FILE);
  EXPECT_EQ(aclrtSetDevice(1), ACL_ERROR_RT_INVALID_DEVICEID);
  EXPECT_NE(recentError().find("deviceId must be 0"), std::string::npos);
  ASSERT_EQ(aclrtSetDevice(0), ACL_SUCCESS);
  int32_t dev = -1;
  ASSERT_EQ(aclrtGetDevice(&dev), ACL_SUCCESS);
  EXPECT_EQ(dev, 0);
  uint32_t count = 0;
  ASSERT_EQ(aclrtGetDeviceCount(&count), ACL_SUCCESS);
  EXPECT_EQ(count, 1u);

  aclrtContext ctx = nullptr;
  ASSERT_EQ(aclrtCreateContext(&ctx, 0), ACL_SUCCESS);
  ASSERT_EQ(aclrtSetCurrentContext(ctx), ACL_SUCCESS);
  aclrtContext cur = nullptr;
  ASSERT_EQ(aclrtGetCurrentContext(&cur), ACL_SUCCESS);
  EXPECT_EQ(cur, ctx);
  ASSERT_EQ(aclrtDestroyContext(ctx), ACL_SUCCESS);
  EXPECT_EQ(aclrtDestroyContext(ctx), ACL_ERROR_INVALID_PARAM);
  EXPECT_EQ(aclrtSetCurrentContext(ctx), ACL_ERROR_INVALID_PARAM);
  ASSERT_EQ(aclrtResetDevice(0), ACL_SUCCESS);
  ASSERT_EQ(aclFinalize(), ACL_SUCCESS);
  EXPECT_EQ(aclFinalize(), ACL_ERROR_REPEAT_FINALIZE);
}

TEST(AclRuntime, MemoryAndEveryMemcpyKind) {
  std::vector<uint8_t> host(100), back(100);
  void *a = nullptr;
  void *b = nullptr;
  ASSERT_EQ(aclrtMalloc(&a, 100, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
  ASSERT_EQ(aclrtMallocHost(&b, 100), ACL_SUCCESS);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(a) % 64, 0u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(b) % 64, 0u);
  void *none = &host;
  EXPECT_EQ(aclrtMalloc(&none, 0, ACL_MEM_MALLOC_HUGE_FIRST),
            ACL_ERROR_INVALID_PARAM);
  EXPECT_EQ(none, nullptr);

  for (int i = 0; i < 100; ++i)
    host[i] = static_cast<uint8_t>(i * 7);
  for (aclrtMemcpyKind kind :
       {ACL_MEMCPY_HOST_TO_HOST, ACL_MEMCPY_HOST_TO_DEVICE,
        ACL_MEMCPY_DEVICE_TO_HOST, ACL_MEMCPY_DEVICE_TO_DEVICE,
        ACL_MEMCPY_DEFAULT}) {
    ASSERT_EQ(aclrtMemset(a, 100, 0, 100), ACL_SUCCESS);
    ASSERT_EQ(aclrtMemcpy(a, 100, host.data(), 100, kind), ACL_SUCCESS);
    ASSERT_EQ(aclrtMemcpy(b, 100, a, 100, ACL_MEMCPY_DEVICE_TO_DEVICE),
              ACL_SUCCESS);
    ASSERT_EQ(aclrtMemcpy(back.data(), 100, b, 100, ACL_MEMCPY_DEVICE_TO_HOST),
              ACL_SUCCESS);
    EXPECT_EQ(back, host) << "kind " << kind;
  }
  EXPECT_EQ(aclrtMemcpy(a, 50, host.data(), 100, ACL_MEMCPY_HOST_TO_DEVICE),
            ACL_ERROR_INVALID_PARAM);
  EXPECT_NE(recentError().find("count (100) must not exceed destMax (50)"),
            std::string::npos);
  EXPECT_EQ(aclrtMemcpy(a, 100, nullptr, 10, ACL_MEMCPY_HOST_TO_DEVICE),
            ACL_ERROR_INVALID_PARAM);
  EXPECT_EQ(
      aclrtMemcpy(a, 100, host.data(), 10, static_cast<aclrtMemcpyKind>(17)),
      ACL_ERROR_INVALID_PARAM);
  ASSERT_EQ(aclrtMemset(a, 100, 0xab, 10), ACL_SUCCESS);
  EXPECT_EQ(static_cast<uint8_t *>(a)[9], 0xab);
  EXPECT_EQ(static_cast<uint8_t *>(a)[10], host[10]);
  EXPECT_EQ(aclrtMemset(a, 10, 0, 11), ACL_ERROR_INVALID_PARAM);
  EXPECT_EQ(aclrtFree(a), ACL_SUCCESS);
  EXPECT_EQ(aclrtFreeHost(b), ACL_SUCCESS);
}

//===----------------------------------------------------------------------===//
// fp16 / bf16
//===----------------------------------------------------------------------===//

TEST(AclRuntime, Float16RoundTripsEveryPattern) {
  for (uint32_t bits = 0; bits < 0x10000u; ++bits) {
    auto h = static_cast<aclFloat16>(bits);
    float f = aclFloat16ToFloat(h);
    bool isNan = (bits & 0x7c00u) == 0x7c00u && (bits & 0x3ffu);
    if (isNan) {
      EXPECT_TRUE(std::isnan(f));
      aclFloat16 back = aclFloatToFloat16(f);
      EXPECT_EQ(back & 0x7c00u, 0x7c00u);
      EXPECT_NE(back & 0x3ffu, 0u);
      continue;
    }
    ASSERT_EQ(aclFloatToFloat16(f), h) << "bits " << bits;
  }
}

TEST(AclRuntime, Float16RoundsToNearestEven) {
  EXPECT_EQ(aclFloatToFloat16(1.0f), 0x3c00);
  EXPECT_EQ(aclFloatToFloat16(-2.0f), 0xc000);
  // 1 + 2^-11 is halfway between 1 and 1 + 2^-10: ties to even (1.0).
  EXPECT_EQ(aclFloatToFloat16(1.0f + std::ldexp(1.0f, -11)), 0x3c00);
  // 1 + 3*2^-11 is halfway between odd 1+2^-10 and even 1+2^-9: rounds up.
  EXPECT_EQ(aclFloatToFloat16(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3c02);
  // Just above the tie rounds up.
  EXPECT_EQ(
      aclFloatToFloat16(std::nextafter(1.0f + std::ldexp(1.0f, -11), 2.0f)),
      0x3c01);
  EXPECT_EQ(aclFloatToFloat16(65504.0f), 0x7bff);
  EXPECT_EQ(aclFloatToFloat16(65519.0f), 0x7bff);
  EXPECT_EQ(aclFloatToFloat16(65520.0f), 0x7c00); // ties away to inf
  EXPECT_EQ(aclFloatToFloat16(1e10f), 0x7c00);
  EXPECT_EQ(aclFloatToFloat16(-1e10f), 0xfc00);
  EXPECT_EQ(aclFloatToFloat16(INFINITY), 0x7c00);
  EXPECT_EQ(aclFloatToFloat16(-INFINITY), 0xfc00);
  EXPECT_TRUE(std::isinf(aclFloat16ToFloat(0x7c00)));
  aclFloat16 nan = aclFloatToFloat16(std::numeric_limits<float>::quiet_NaN());
  EXPECT_EQ(nan & 0x7c00, 0x7c00);
  EXPECT_NE(nan & 0x3ff, 0);
  // A signalling NaN with payload only in low bits stays NaN.
  EXPECT_NE(aclFloatToFloat16(floatOf(0x7f800001u)) & 0x3ff, 0);
  // Subnormals: 2^-24 is the smallest, 2^-25 ties to even (0), a bit more
  // rounds up, 2^-14 - 2^-24 is the largest subnormal.
  EXPECT_EQ(aclFloatToFloat16(std::ldexp(1.0f, -24)), 0x0001);
  EXPECT_EQ(aclFloatToFloat16(std::ldexp(1.0f, -25)), 0x0000);
  EXPECT_EQ(aclFloatToFloat16(std::ldexp(1.5f, -25)), 0x0001);
  EXPECT_EQ(aclFloatToFloat16(std::ldexp(3.0f, -25)), 0x0002); // 1.5 ulp: even
  EXPECT_EQ(aclFloatToFloat16(-std::ldexp(1.0f, -24)), 0x8001);
  EXPECT_EQ(aclFloatToFloat16(std::ldexp(1023.0f, -24)), 0x03ff);
  EXPECT_EQ(aclFloatToFloat16(std::ldexp(1023.5f, -24)), 0x0400);
  EXPECT_EQ(aclFloatToFloat16(std::ldexp(1.0f, -30)), 0x0000);
  EXPECT_EQ(aclFloatToFloat16(-0.0f), 0x8000);
  EXPECT_EQ(aclFloat16ToFloat(0x0001), std::ldexp(1.0f, -24));
  EXPECT_EQ(aclFloat16ToFloat(0x03ff), std::ldexp(1023.0f, -24));
}

#if defined(__FLT16_MAX__)
TEST(AclRuntime, Float16MatchesTheCompilersConversion) {
  std::mt19937 rng(42);
  for (int i = 0; i < 1000000; ++i) {
    uint32_t u = rng();
    // Bias toward the half range: exponents 100..150.
    if (i & 1)
      u = (u & 0x807fffffu) | ((100u + (u >> 8) % 51u) << 23);
    float f = floatOf(u);
    if (std::isnan(f))
      continue;
    _Float16 ref = static_cast<_Float16>(f);
    uint16_t refBits;
    std::memcpy(&refBits, &ref, 2);
    ASSERT_EQ(aclFloatToFloat16(f), refBits) << "float bits " << u;
  }
}
#endif

TEST(AclRuntime, BFloat16RoundsToNearestEven) {
  EXPECT_EQ(host::floatToBFloat16Bits(1.0f), 0x3f80);
  EXPECT_EQ(host::floatToBFloat16Bits(floatOf(0x3f808000u)), 0x3f80);
  EXPECT_EQ(host::floatToBFloat16Bits(floatOf(0x3f818000u)), 0x3f82);
  EXPECT_EQ(host::floatToBFloat16Bits(floatOf(0x3f808001u)), 0x3f81);
  EXPECT_TRUE(std::isnan(host::bfloat16BitsToFloat(
      host::floatToBFloat16Bits(floatOf(0x7f800001u)))));
  EXPECT_EQ(host::floatToBFloat16Bits(INFINITY), 0x7f80);
  EXPECT_EQ(bitsOf(host::bfloat16BitsToFloat(0x4049)), 0x40490000u);
}

//===----------------------------------------------------------------------===//
// Streams
//===----------------------------------------------------------------------===//

TEST(AclRuntime, StreamRunsTasksInOrderAsynchronously) {
  host::Stream stream;
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  std::vector<int> order;
  std::atomic<bool> ranOnWorker{true};
  std::thread::id caller = std::this_thread::get_id();
  stream.submit([released] {
    released.wait();
    return Status::ok();
  });
  constexpr int kTasks = 2000;
  for (int i = 0; i < kTasks; ++i)
    stream.submit([&, i] {
      if (std::this_thread::get_id() == caller)
        ranOnWorker = false;
      order.push_back(i);
      return Status::ok();
    });
  // Every submit returned while the first task still blocks the queue.
  EXPECT_TRUE(order.empty());
  release.set_value();
  ASSERT_TRUE(stream.synchronize().isOk());
  ASSERT_EQ(order.size(), static_cast<size_t>(kTasks));
  for (int i = 0; i < kTasks; ++i)
    ASSERT_EQ(order[static_cast<size_t>(i)], i);
  EXPECT_TRUE(ranOnWorker);
  EXPECT_EQ(stream.completedTasks(), static_cast<uint64_t>(kTasks + 1));
}

TEST(AclRuntime, StreamReportsTheFirstErrorAndSkipsTheRest) {
  aclrtStream stream = nullptr;
  ASSERT_EQ(aclrtCreateStream(&stream), ACL_SUCCESS);
  auto *s = static_cast<host::Stream *>(stream);
  std::vector<int> ran;
  s->submit([&] {
    ran.push_back(0);
    return Status::ok();
  });
  s->submit([&] {
    ran.push_back(1);
    return Status::error(ACLNN_ERR_RUNTIME_ERROR, "kernel ", 7, " failed");
  });
  s->submit([&] {
    ran.push_back(2);
    return Status::error(ACLNN_ERR_PARAM_INVALID, "second failure");
  });
  EXPECT_EQ(aclrtSynchronizeStream(stream), ACLNN_ERR_RUNTIME_ERROR);
  EXPECT_EQ(recentError(), "aclrtSynchronizeStream: kernel 7 failed");
  EXPECT_EQ(ran, (std::vector<int>{0, 1}));
  // The error is cleared: the stream works again.
  s->submit([&] {
    ran.push_back(3);
    return Status::ok();
  });
  EXPECT_EQ(aclrtSynchronizeStream(stream), ACL_SUCCESS);
  EXPECT_EQ(ran, (std::vector<int>{0, 1, 3}));
  EXPECT_EQ(aclrtDestroyStream(stream), ACL_SUCCESS);
  EXPECT_EQ(aclrtSynchronizeStream(stream), ACL_ERROR_INVALID_PARAM);
  EXPECT_EQ(aclrtDestroyStream(stream), ACL_ERROR_INVALID_PARAM);
  EXPECT_EQ(aclrtSynchronizeStream(nullptr), ACL_SUCCESS);
}

TEST(AclRuntime, AsyncMemcpyIsOrderedOnTheStream) {
  aclrtStream stream = nullptr;
  ASSERT_EQ(aclrtCreateStream(&stream), ACL_SUCCESS);
  std::vector<int32_t> src(1024), mid(1024), dst(1024, -1);
  for (int i = 0; i < 1024; ++i)
    src[i] = i;
  size_t bytes = 1024 * sizeof(int32_t);
  ASSERT_EQ(aclrtMemsetAsync(mid.data(), bytes, 0, bytes, stream), ACL_SUCCESS);
  ASSERT_EQ(aclrtMemcpyAsync(mid.data(), bytes, src.data(), bytes,
                             ACL_MEMCPY_HOST_TO_DEVICE, stream),
            ACL_SUCCESS);
  ASSERT_EQ(aclrtMemcpyAsync(dst.data(), bytes, mid.data(), bytes,
                             ACL_MEMCPY_DEVICE_TO_HOST, stream),
            ACL_SUCCESS);
  ASSERT_EQ(aclrtSynchronizeStream(stream), ACL_SUCCESS);
  EXPECT_EQ(dst, src);
  ASSERT_EQ(aclrtDestroyStream(stream), ACL_SUCCESS);
}

//===----------------------------------------------------------------------===//
// The two phases
//===----------------------------------------------------------------------===//

TEST(AclRuntime, UnregisteredOperatorsAreNotImplemented) {
  // Runs only while no operator registered itself; then it checks the
  // common null checks, which hold either way.
  uint64_t ws = 0;
  aclOpExecutor *exec = nullptr;
  EXPECT_EQ(aclnnGatherPaKvCacheGetWorkspaceSize(
                nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,
                nullptr, false, nullptr, &exec),
            ACLNN_ERR_PARAM_NULLPTR);
  EXPECT_EQ(recentError(), "aclnnGatherPaKvCacheGetWorkspaceSize: "
                           "workspaceSize must not be null");
  EXPECT_EQ(aclnnScatterPaKvCacheGetWorkspaceSize(
                nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,
                nullptr, nullptr, nullptr, nullptr, nullptr, &ws, nullptr),
            ACLNN_ERR_PARAM_NULLPTR);
  EXPECT_EQ(aclnnScatterPaKvCache(nullptr, 0, nullptr, nullptr),
            ACLNN_ERR_PARAM_NULLPTR);
  EXPECT_EQ(recentError(), "aclnnScatterPaKvCache: executor must not be null");

  if (!host::OpRegistry<aclnn::NsaCompressWithCacheArgs>::get()) {
    EXPECT_EQ(aclnnNsaCompressWithCacheGetWorkspaceSize(
                  nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, 0, 0, 0,
                  0, nullptr, &ws, &exec),
              ACLNN_ERR_INNER);
    EXPECT_EQ(exec, nullptr);
    EXPECT_EQ(recentError(), "aclnnNsaCompressWithCacheGetWorkspaceSize: "
                             "not implemented yet");
  }
  if (!host::OpRegistry<aclnn::IncreFlashAttentionV4Args>::get()) {
    EXPECT_EQ(aclnnIncreFlashAttentionV4GetWorkspaceSize(
                  nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,
                  nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,
                  nullptr, 1, 1.0, nullptr, 1, 0, 0, nullptr, &ws, &exec),
              ACLNN_ERR_INNER);
  }
  if (!host::OpRegistry<
          aclnn::FlashAttentionUnpaddingScoreGradV5Args>::get()) {
    EXPECT_EQ(aclnnFlashAttentionUnpaddingScoreGradV5GetWorkspaceSize(
                  nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,
                  nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,
                  nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, 1.0,
                  1.0, 0, 0, 1, nullptr, 0, 0, 1, nullptr, nullptr, nullptr,
                  nullptr, nullptr, nullptr, nullptr, nullptr, &ws, &exec),
              ACLNN_ERR_INNER);
  }
}

namespace {

/// Counts executor closures destroyed (to see single-use executors freed).
std::atomic<int> closuresDestroyed{0};
struct DestructionTracker {
  ~DestructionTracker() { ++closuresDestroyed; }
};

/// A fake GatherPaKvCache: keyRef[i] = keyCache[i] + 1 over all elements.
Status fakeGatherPrepare(const aclnn::GatherPaKvCacheArgs &args,
                         host::Executor &executor) {
  if (Status s = host::requireNonNull(
          {{"keyCache", args.keyCache}, {"keyRef", args.keyRef}});
      !s)
    return s;
  if (args.keyCache->dtype != DataType::Float)
    return Status::error(ACLNN_ERR_PARAM_INVALID,
                         "keyCache: dtype must be FLOAT, got ",
                         args.keyCache->dtype);
  executor.setWorkspaceSize(256);
  host::TensorView in = *args.keyCache; // copies: the C objects may go
  host::TensorView out = *args.keyRef;
  auto tracker = std::make_shared<DestructionTracker>();
  bool failAtRun = args.isSeqLensCumsum;
  executor.setLaunch(
      [in, out, tracker, failAtRun](const host::LaunchContext &ctx) {
        if (failAtRun)
          return Status::error(ACLNN_ERR_RUNTIME_ERROR, "injected failure");
        if (!ctx.workspace || ctx.workspaceSize < 256)
          return Status::error(ACLNN_ERR_RUNTIME_ERROR, "no workspace");
        for (int64_t i = 0; i < in.numel(); ++i)
          out.as<float>()[i] += in.as<float>()[i] + 1.0f;
        return Status::ok();
      });
  return Status::ok();
}

/// Registers the fake for one test and restores the previous Prepare.
struct ScopedFakeGather {
  host::PrepareFn<aclnn::GatherPaKvCacheArgs> previous;
  ScopedFakeGather()
      : previous(host::OpRegistry<aclnn::GatherPaKvCacheArgs>::set(
            fakeGatherPrepare)) {}
  ~ScopedFakeGather() {
    host::OpRegistry<aclnn::GatherPaKvCacheArgs>::set(previous);
  }
};

} // namespace

TEST(AclRuntime, TwoPhaseCallRunsTheRegisteredOperator) {
  ScopedFakeGather fake;
  int64_t dims[] = {4, 8};
  std::vector<float> a(32), b(32, 0.0f);
  for (int i = 0; i < 32; ++i)
    a[i] = static_cast<float>(i);
  aclTensor *in = aclCreateTensor(dims, 2, ACL_FLOAT, nullptr, 0, ACL_FORMAT_ND,
                                  dims, 2, a.data());
  aclTensor *out = aclCreateTensor(dims, 2, ACL_FLOAT, nullptr, 0,
                                   ACL_FORMAT_ND, dims, 2, b.data());
  aclrtStream stream = nullptr;
  ASSERT_EQ(aclrtCreateStream(&stream), ACL_SUCCESS);
  void *workspace = nullptr;
  ASSERT_EQ(aclrtMalloc(&workspace, 256, ACL_MEM_MALLOC_HUGE_FIRST),
            ACL_SUCCESS);

  // Validation failure: the operator's message, executor stays null.
  uint64_t ws = 0;
  aclOpExecutor *exec = nullptr;
  EXPECT_EQ(aclnnGatherPaKvCacheGetWorkspaceSize(nullptr, nullptr, nullptr,
                                                 nullptr, out, nullptr, nullptr,
                                                 nullptr, false, &ws, &exec),
            ACLNN_ERR_PARAM_NULLPTR);
  EXPECT_EQ(exec, nullptr);
  EXPECT_EQ(recentError(),
            "aclnnGatherPaKvCacheGetWorkspaceSize: keyCache must not be null");

  // Phase 1 + phase 2 on a stream, twice, with the tensors destroyed before
  // the work runs.
  int destroyedBefore = closuresDestroyed.load();
  for (int round = 0; round < 2; ++round) {
    ASSERT_EQ(aclnnGatherPaKvCacheGetWorkspaceSize(
                  in, nullptr, nullptr, nullptr, out, nullptr, nullptr, nullptr,
                  false, &ws, &exec),
              ACLNN_SUCCESS);
    EXPECT_EQ(ws, 256u);
    ASSERT_NE(exec, nullptr);
    ASSERT_EQ(aclnnGatherPaKvCache(workspace, ws, exec, stream), ACLNN_SUCCESS);
  }
  aclDestroyTensor(in);
  aclDestroyTensor(out);
  ASSERT_EQ(aclrtSynchronizeStream(stream), ACL_SUCCESS);
  for (int i = 0; i < 32; ++i)
    ASSERT_EQ(b[i], 2.0f * (a[i] + 1.0f));
  EXPECT_EQ(closuresDestroyed.load(), destroyedBefore + 2);

  in = aclCreateTensor(dims, 2, ACL_FLOAT, nullptr, 0, ACL_FORMAT_ND, dims, 2,
                       a.data());
  out = aclCreateTensor(dims, 2, ACL_FLOAT, nullptr, 0, ACL_FORMAT_ND, dims, 2,
                        b.data());

  // Phase-2 argument checks.
  ASSERT_EQ(aclnnGatherPaKvCacheGetWorkspaceSize(in, nullptr, nullptr, nullptr,
                                                 out, nullptr, nullptr, nullptr,
                                                 false, &ws, &exec),
            ACLNN_SUCCESS);
  EXPECT_EQ(aclnnGatherPaKvCache(nullptr, ws, exec, stream),
            ACLNN_ERR_PARAM_NULLPTR);
  EXPECT_EQ(aclnnGatherPaKvCache(workspace, 128, exec, stream),
            ACLNN_ERR_PARAM_INVALID);
  EXPECT_NE(recentError().find("smaller than the 256 bytes"),
            std::string::npos);
  EXPECT_EQ(aclnnScatterPaKvCache(workspace, ws, exec, stream),
            ACLNN_ERR_PARAM_INVALID);
  EXPECT_NE(recentError().find("prepared by aclnnGatherPaKvCache"),
            std::string::npos);
  int bogus = 0;
  EXPECT_EQ(aclnnGatherPaKvCache(workspace, ws, exec, &bogus),
            ACLNN_ERR_PARAM_INVALID);
  // The default stream runs at once.
  std::fill(b.begin(), b.end(), 0.0f);
  ASSERT_EQ(aclnnGatherPaKvCache(workspace, ws, exec, nullptr), ACLNN_SUCCESS);
  EXPECT_EQ(b[5], 6.0f);

  // A failing launch: returned at once on the default stream, reported by
  // synchronize on a stream.
  ASSERT_EQ(aclnnGatherPaKvCacheGetWorkspaceSize(in, nullptr, nullptr, nullptr,
                                                 out, nullptr, nullptr, nullptr,
                                                 true, &ws, &exec),
            ACLNN_SUCCESS);
  EXPECT_EQ(aclnnGatherPaKvCache(workspace, ws, exec, nullptr),
            ACLNN_ERR_RUNTIME_ERROR);
  EXPECT_EQ(recentError(), "aclnnGatherPaKvCache: injected failure");
  ASSERT_EQ(aclnnGatherPaKvCacheGetWorkspaceSize(in, nullptr, nullptr, nullptr,
                                                 out, nullptr, nullptr, nullptr,
                                                 true, &ws, &exec),
            ACLNN_SUCCESS);
  EXPECT_EQ(aclnnGatherPaKvCache(workspace, ws, exec, stream), ACLNN_SUCCESS);
  EXPECT_EQ(aclrtSynchronizeStream(stream), ACLNN_ERR_RUNTIME_ERROR);
  EXPECT_EQ(recentError(),
            "aclrtSynchronizeStream: aclnnGatherPaKvCache: injected failure");

  // A repeatable executor runs any number of times until destroyed.
  ASSERT_EQ(aclnnGatherPaKvCacheGetWorkspaceSize(in, nullptr, nullptr, nullptr,
                                                 out, nullptr, nullptr, nullptr,
                                                 false, &ws, &exec),
            ACLNN_SUCCESS);
  ASSERT_EQ(aclSetAclOpExecutorRepeatable(exec), ACLNN_SUCCESS);
  std::fill(b.begin(), b.end(), 0.0f);
  for (int i = 0; i < 3; ++i)
    ASSERT_EQ(aclnnGatherPaKvCache(workspace, ws, exec, stream), ACLNN_SUCCESS);
  ASSERT_EQ(aclrtSynchronizeStream(stream), ACL_SUCCESS);
  EXPECT_EQ(b[5], 18.0f);
  EXPECT_EQ(aclDestroyAclOpExecutor(exec), ACLNN_SUCCESS);

  aclDestroyTensor(in);
  aclDestroyTensor(out);
  aclrtFree(workspace);
  ASSERT_EQ(aclrtDestroyStream(stream), ACL_SUCCESS);
}
