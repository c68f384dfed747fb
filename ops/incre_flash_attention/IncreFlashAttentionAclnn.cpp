//===- IncreFlashAttentionAclnn.cpp - C entry points ----------------------===//
//
// aclnnIncreFlashAttentionV4GetWorkspaceSize and aclnnIncreFlashAttentionV4,
// made from the parameter table (IncreFlashAttentionArgs.h), and the operator's
// registration.
//
//===----------------------------------------------------------------------===//
#include "aclnnop/aclnn_incre_flash_attention_v4.h"
#include "ops/aclnn/AclnnCommon.h"
#include "ops/host/OpRegistry.h"
#include "ops/incre_flash_attention/IncreFlashAttention.h"
#include "ops/incre_flash_attention/IncreFlashAttentionArgs.h"

TILEJIT_ACLNN_ENTRIES(IncreFlashAttentionV4,
                      TILEJIT_INCRE_FLASH_ATTENTION_V4_PARAMS)

void tilejit::ops::registerIncreFlashAttentionV4() {
  host::OpRegistry<aclnn::IncreFlashAttentionV4Args>::install(
      &prepareIncreFlashAttentionV4);
}
