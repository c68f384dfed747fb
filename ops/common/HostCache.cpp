//===- HostCache.cpp - The host's last-level cache ------------------------===//
#include "ops/common/HostCache.h"

#include "jit/HostCaches.h"

#include <cerrno>
#include <cstdlib>

namespace tilejit::ops {

runtime::Status lastLevelCacheBytes(int64_t &bytes) {
  // Read on every call (a getenv, against the microseconds of a call), so
  // that a test may set it between calls.
  if (const char *e = std::getenv("TILEJIT_LLC_BYTES")) {
    char *end = nullptr;
    errno = 0;
    const long long n = std::strtoll(e, &end, 10);
    if (*e == '\0' || *end != '\0' || errno != 0 || n < 0)
      return runtime::Status::error(runtime::status::RuntimeError,
                                    "TILEJIT_LLC_BYTES must be a byte count, not '", e, "'");
    bytes = n;
    return {};
  }
  static const int64_t detected = jit::hostLastLevelCacheBytes();
  bytes = detected;
  return {};
}

} // namespace tilejit::ops
