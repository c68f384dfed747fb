//===- Status.cpp - The thread-local recent error message -----------------===//
//
// Two buffers per thread: `pending` collects the latest error, `taken` keeps
// the text handed out by the last take alive, so the pointer a C caller got
// from aclGetRecentErrMsg stays valid while later calls fail. With
// ASCEND_SLOG_PRINT_TO_STDOUT=1 (and ASCEND_GLOBAL_LOG_LEVEL at most 3) each
// message is printed on stderr as it is recorded.
//
//===----------------------------------------------------------------------===//
#include "ops/host/Status.h"

#include "jit/Options.h"

#include <cstdio>

namespace tilejit::host {

namespace {
struct RecentError {
  std::string pending;
  bool hasPending = false;
  std::string taken;
};
thread_local RecentError recentError;
} // namespace

void setRecentErrorMessage(std::string message) {
  // Programs that never call aclGetRecentErrMsg (the upstream examples do
  // not) still show why a call failed, with CANN's switch to print logs.
  if (jit::Options::process().printsAclErrors()) {
    std::string line = "[ERROR] tilejit: " + message + "\n";
    std::fputs(line.c_str(), stderr);
  }
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

} // namespace tilejit::host
