/* An outside program: builds against an installed tilejit with
 * find_package(tilejit) or pkg-config, and links one library. */
#include "acl/acl.h"
#include "aclnnop/aclnn_scatter_pa_kv_cache.h"

#include <stdio.h>

int main(void) {
  if (aclInit(NULL) != ACL_SUCCESS)
    return 1;
  aclrtSetDevice(0);
  float host[4] = {1, 2, 3, 4};
  void *dev = NULL;
  if (aclrtMalloc(&dev, sizeof host, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS)
    return 2;
  aclrtMemcpy(dev, sizeof host, host, sizeof host, ACL_MEMCPY_HOST_TO_DEVICE);
  int64_t shape[2] = {2, 2}, strides[2] = {2, 1};
  aclTensor *t = aclCreateTensor(shape, 2, ACL_FLOAT, strides, 0, ACL_FORMAT_ND, shape, 2, dev);
  if (!t)
    return 3;
  float back[4] = {0};
  aclrtMemcpy(back, sizeof back, dev, sizeof host, ACL_MEMCPY_DEVICE_TO_HOST);
  aclDestroyTensor(t);
  aclrtFree(dev);
  aclrtResetDevice(0);
  aclFinalize();
  printf("consumer ok: %g %g %g %g\n", back[0], back[1], back[2], back[3]);
  return back[3] == 4.0f ? 0 : 4;
}
