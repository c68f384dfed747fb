//===- Status.cpp - The thread-local recent error message -----------------===//
//
// Two buffers per thread: `pending` collects the latest error, `taken` keeps
// the text handed out by the last take alive, so the pointer a C caller got
// from aclGetRecentErrMsg stays valid while later calls fail.
//
//===----------------------------------------------------------------------===//
#include "ops/runtime/Status.h"

namespace tilejit::runtime {

namespace {
struct RecentError {
  std::string pending;
  bool hasPending = false;
  std::string taken;
};
thread_local RecentError recentError;
} // namespace

void setRecentErrorMessage(std::string message) {
  recentError.pending = std::move(message);
  recentError.hasPending = true;
}

int32_t recordError(const Status &status, const char *context) {
  if (status.isOk())
    return status.code();
  if (context && *context)
    setRecentErrorMessage(std::string(context) + ": " + status.message());
  else
    setRecentErrorMessage(status.message());
  return status.code();
}

const char *takeRecentErrorMessage() {
  if (!recentError.hasPending)
    return nullptr;
  recentError.taken = std::move(recentError.pending);
  recentError.pending.clear();
  recentError.hasPending = false;
  return recentError.taken.c_str();
}

} // namespace tilejit::runtime
