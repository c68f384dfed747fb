/*===- CApiSmoke.c - The acl/aclnn headers from C -------------------------===//
 *
 * Compiles every public header as C99 and drives the runtime part of the C
 * API (no operator needed): init, device, stream, memory, tensors, lists,
 * fp16, error messages, and a phase 1 call that must fail cleanly.
 * Exits 0 on success.
 *
 *===----------------------------------------------------------------------===*/
#include "acl/acl.h"
#include "aclnn/acl_meta.h"
#include "aclnnop/aclnn_flash_attention_score_grad.h"
#include "aclnnop/aclnn_gather_pa_kv_cache.h"
#include "aclnnop/aclnn_incre_flash_attention_v4.h"
#include "aclnnop/aclnn_nsa_compress_with_cache.h"
#include "aclnnop/aclnn_scatter_pa_kv_cache.h"

#include <string.h>

#define CHECK(cond)                                                            \
  do {                                                                         \
    if (!(cond)) {                                                             \
      printf("CApiSmoke.c:%d: check failed: %s\n", __LINE__, #cond);           \
      return 1;                                                                \
    }                                                                          \
  } while (0)

int main(void) {
  aclrtStream stream = NULL;
  void *dev = NULL;
  float host[6] = {1, 2, 3, 4, 5, 6};
  float back[6] = {0};
  int64_t shape[2] = {2, 3};
  int64_t strides[2] = {3, 1};
  aclTensor *t;
  const aclTensor *items[1];
  aclTensorList *list;
  aclIntArray *arr;
  uint64_t n = 0;
  uint64_t ws = 0;
  aclOpExecutor *exec = NULL;
  const char *msg;
  bool cumsum = false;

  CHECK(aclInit(NULL) == ACL_SUCCESS);
  CHECK(aclrtSetDevice(0) == ACL_SUCCESS);
  CHECK(aclrtCreateStream(&stream) == ACL_SUCCESS);
  CHECK(aclrtMalloc(&dev, sizeof host, ACL_MEM_MALLOC_HUGE_FIRST) ==
        ACL_SUCCESS);
  CHECK(aclrtMemcpyAsync(dev, sizeof host, host, sizeof host,
                         ACL_MEMCPY_HOST_TO_DEVICE, stream) == ACL_SUCCESS);
  CHECK(aclrtSynchronizeStream(stream) == ACL_SUCCESS);
  CHECK(aclrtMemcpy(back, sizeof back, dev, sizeof host,
                    ACL_MEMCPY_DEVICE_TO_HOST) == ACL_SUCCESS);
  CHECK(memcmp(back, host, sizeof host) == 0);

  t = aclCreateTensor(shape, 2, ACL_FLOAT, strides, 0, ACL_FORMAT_ND, shape, 2,
                      dev);
  CHECK(t != NULL);
  items[0] = t;
  list = aclCreateTensorList(items, 1);
  CHECK(list != NULL);
  CHECK(aclGetTensorListSize(list, &n) == ACLNN_SUCCESS && n == 1);
  arr = aclCreateIntArray(shape, 2);
  CHECK(arr != NULL);
  CHECK(aclGetIntArraySize(arr, &n) == ACLNN_SUCCESS && n == 2);

  CHECK(aclFloat16ToFloat(aclFloatToFloat16(0.333251953125f)) ==
        0.333251953125f);
  CHECK(aclDataTypeSize(ACL_BF16) == 2);

  /* A phase 1 call with a null out-pointer fails with a message. */
  CHECK(aclnnGatherPaKvCacheGetWorkspaceSize(t, t, t, t, t, t, NULL, NULL,
                                             cumsum, NULL,
                                             &exec) == ACLNN_ERR_PARAM_NULLPTR);
  msg = aclGetRecentErrMsg();
  CHECK(msg != NULL && strstr(msg, "workspaceSize") != NULL);
  CHECK(aclGetRecentErrMsg() == NULL);
  (void)ws;

  aclDestroyIntArray(arr);
  aclDestroyTensorList(list);
  aclDestroyTensor(t);
  CHECK(aclrtFree(dev) == ACL_SUCCESS);
  CHECK(aclrtDestroyStream(stream) == ACL_SUCCESS);
  CHECK(aclrtResetDevice(0) == ACL_SUCCESS);
  CHECK(aclFinalize() == ACL_SUCCESS);
  return 0;
}
