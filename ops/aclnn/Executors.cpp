//===- Executors.cpp - The lifetime of aclOpExecutor handles --------------===//
//
// aclnn's rule: phase 2 consumes an executor (it is freed after it ran),
// unless aclSetAclOpExecutorRepeatable made it repeatable; a repeatable one
// runs any number of times, on any number of streams at once, until
// aclDestroyAclOpExecutor. Handles are checked against a registry of the
// live ones, so a consumed or destroyed handle (a stale pointer) is
// recognised and refused, never dereferenced. The registry owns each
// executor by a shared_ptr and every queued launch holds another, so a
// destroy while launches are queued frees the executor after the last one
// ran.
//
//===----------------------------------------------------------------------===//
#include "ops/aclnn/AclnnCommon.h"

#include <mutex>
#include <unordered_map>

namespace tilejit::aclnn {

namespace {

std::mutex registryMutex;
std::unordered_map<const aclOpExecutor *, std::shared_ptr<aclOpExecutor>> &
liveExecutors() {
  static std::unordered_map<const aclOpExecutor *,
                            std::shared_ptr<aclOpExecutor>>
      executors;
  return executors;
}

/// What a refused handle is told: which rule it broke.
constexpr const char *kNotLive =
    "executor is not a live executor: it was destroyed, or it was not "
    "repeatable and phase 2 already ran it (aclSetAclOpExecutorRepeatable "
    "makes an executor reusable), or no GetWorkspaceSize returned it";

aclnnStatus refuse(int32_t code, const char *api, const std::string &message) {
  return host::recordError(host::Status(code, message), api);
}

} // namespace

aclOpExecutor *registerExecutor(std::unique_ptr<aclOpExecutor> executor) {
  aclOpExecutor *handle = executor.get();
  std::lock_guard<std::mutex> lock(registryMutex);
  liveExecutors().emplace(handle, std::move(executor));
  return handle;
}

aclnnStatus acquireExecutor(const char *api, const aclOpExecutor *executor,
                            uint64_t workspaceSize,
                            std::shared_ptr<aclOpExecutor> &out) {
  std::lock_guard<std::mutex> lock(registryMutex);
  auto &executors = liveExecutors();
  auto it = executors.find(executor);
  if (it == executors.end())
    return refuse(ACLNN_ERR_PARAM_INVALID, api, kNotLive);
  if (it->second->opName() != api)
    return refuse(ACLNN_ERR_PARAM_INVALID, api,
                  "executor was prepared by " + it->second->opName() +
                      "GetWorkspaceSize");
  if (workspaceSize < it->second->workspaceSize())
    return refuse(ACLNN_ERR_PARAM_INVALID, api,
                  "workspaceSize " + std::to_string(workspaceSize) +
                      " is smaller than the " +
                      std::to_string(it->second->workspaceSize()) +
                      " bytes phase 1 asked for");
  out = it->second;
  // Single use: this run consumes it.
  if (!out->isRepeatable())
    executors.erase(it);
  return ACLNN_SUCCESS;
}

aclnnStatus setExecutorRepeatable(const aclOpExecutor *executor) {
  const char *api = "aclSetAclOpExecutorRepeatable";
  if (!executor)
    return refuse(ACLNN_ERR_PARAM_NULLPTR, api, "executor must not be null");
  std::lock_guard<std::mutex> lock(registryMutex);
  auto it = liveExecutors().find(executor);
  if (it == liveExecutors().end())
    return refuse(ACLNN_ERR_PARAM_INVALID, api, kNotLive);
  it->second->setRepeatable(true);
  return ACLNN_SUCCESS;
}

aclnnStatus destroyExecutor(const aclOpExecutor *executor) {
  const char *api = "aclDestroyAclOpExecutor";
  if (!executor)
    return refuse(ACLNN_ERR_PARAM_NULLPTR, api, "executor must not be null");
  std::shared_ptr<aclOpExecutor> owned;
  {
    std::lock_guard<std::mutex> lock(registryMutex);
    auto it = liveExecutors().find(executor);
    if (it == liveExecutors().end())
      return refuse(ACLNN_ERR_PARAM_INVALID, api, kNotLive);
    owned = std::move(it->second);
    liveExecutors().erase(it);
  }
  // Freed here, or by the last queued launch that still holds it.
  return ACLNN_SUCCESS;
}

size_t liveExecutorCount() {
  std::lock_guard<std::mutex> lock(registryMutex);
  return liveExecutors().size();
}

} // namespace tilejit::aclnn

extern "C" {

aclnnStatus aclSetAclOpExecutorRepeatable(aclOpExecutor *executor) {
  return tilejit::aclnn::setExecutorRepeatable(executor);
}

aclnnStatus aclDestroyAclOpExecutor(aclOpExecutor *executor) {
  return tilejit::aclnn::destroyExecutor(executor);
}

} // extern "C"
