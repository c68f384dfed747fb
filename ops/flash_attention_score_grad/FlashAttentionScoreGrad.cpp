//===- FlashAttentionScoreGrad.cpp - Phases, plan and launch --------------===//
//
// Section numbers refer to
// ../shared/spec/flash_attention_unpadding_score_grad_v5.md.
//
//===----------------------------------------------------------------------===//
#include "ops/flash_attention_score_grad/FlashAttentionScoreGrad.h"

#include "ops/common/KvCache.h"
#include "ops/runtime/OpRegistry.h"

#include <memory>

namespace tilejit::ops {

using runtime::Status;
namespace status = runtime::status;

Status prepareFlashAttentionScoreGrad(const aclnn::FlashAttentionUnpaddingScoreGradV5Args &args,
                                      runtime::Executor &executor) {
  auto p = std::make_shared<fag::Problem>();
  if (Status s = fag::validate(args, *p); !s)
    return s;
  if (p->empty)
    return Status::ok();
  return Status::error(status::Inner, "launch not implemented yet");
}

Status flashAttentionScoreGrad(const aclnn::FlashAttentionUnpaddingScoreGradV5Args &args) {
  runtime::Executor executor(aclnn::FlashAttentionUnpaddingScoreGradV5Args::kOpName);
  if (Status s = prepareFlashAttentionScoreGrad(args, executor); !s)
    return s;
  std::vector<unsigned char> workspace(executor.workspaceSize());
  return executor.run(runtime::LaunchContext{workspace.data(), workspace.size()});
}

TILEJIT_REGISTER_ACLNN_OP(aclnn::FlashAttentionUnpaddingScoreGradV5Args,
                          prepareFlashAttentionScoreGrad);

} // namespace tilejit::ops
