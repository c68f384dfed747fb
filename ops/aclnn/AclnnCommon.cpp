//===- AclnnCommon.cpp - Phase 2, shared by every operator ----------------===//
//
// runOp: what every aclnnXxx does (the entry points themselves are made per
// operator by TILEJIT_ACLNN_ENTRIES, in ops/<operator>/<Operator>Aclnn.cpp).
// Nothing here knows an operator's rules: those come from the Prepare
// function the operator registers (ops/host/OpRegistry.h).
//
//===----------------------------------------------------------------------===//
#include "ops/aclnn/AclnnCommon.h"
#include "ops/host/Stream.h"

#include <memory>

using namespace tilejit;
using host::Status;

namespace tilejit::aclnn {

aclnnStatus runOp(const char *opName, void *workspace, uint64_t workspaceSize,
                  aclOpExecutor *executor, aclrtStream stream) {
  auto fail = [&](int32_t code, const std::string &message) {
    return host::recordError(Status(code, message), opName);
  };
  if (!executor)
    return fail(ACLNN_ERR_PARAM_NULLPTR, "executor must not be null");
  if (!workspace && workspaceSize > 0)
    return fail(ACLNN_ERR_PARAM_NULLPTR,
                "workspace is null but workspaceSize is " +
                    std::to_string(workspaceSize));
  // The stream first: a refused call must not consume the executor. The
  // reference keeps the stream alive through the submit even if another
  // thread destroys it meanwhile.
  std::shared_ptr<host::Stream> s;
  if (stream) {
    s = host::findStream(stream);
    if (!s)
      return fail(ACLNN_ERR_PARAM_INVALID,
                  "stream is not a live stream from aclrtCreateStream");
  }
  std::shared_ptr<aclOpExecutor> owned;
  if (aclnnStatus st = acquireExecutor(opName, executor, workspaceSize, owned))
    return st;

  // The task holds the executor: a single-use one is freed after it ran, a
  // repeatable one destroyed while this launch is queued after it too.
  host::LaunchContext context{workspace, workspaceSize};
  std::string name = opName;
  host::Stream::Task task = [owned = std::move(owned), context, name] {
    Status status = owned->run(context);
    if (!status.isOk())
      return Status(status.code(), name + ": " + status.message());
    return status;
  };
  Status status = host::runOnStream(s.get(), std::move(task));
  if (!status.isOk())
    return host::recordError(status);
  return ACLNN_SUCCESS;
}

} // namespace tilejit::aclnn
