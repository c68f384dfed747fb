//===- HostCache.cpp - The host's last-level cache ------------------------===//
#include "ops/common/HostCache.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <string>

namespace tilejit::ops {

namespace {

/// The largest data or unified cache of CPU 0 that sysfs lists ("32768K"),
/// 0 where there is none.
int64_t sysfsBytes() {
  int64_t best = 0;
  for (int i = 0; i < 8; ++i) {
    const std::string dir =
        "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(i);
    std::ifstream type(dir + "/type"), size(dir + "/size");
    std::string t, z;
    if (!(type >> t) || !(size >> z))
      break;
    if (t == "Instruction")
      continue;
    char *end = nullptr;
    int64_t n = std::strtoll(z.c_str(), &end, 10);
    if (*end == 'K')
      n <<= 10;
    else if (*end == 'M')
      n <<= 20;
    best = std::max(best, n);
  }
  return best;
}

int64_t detectedBytes() {
  // sysfs first: the C library's figure can be far off in a virtual
  // machine (320 MiB for a 32 MiB last-level cache on one host).
  static const int64_t bytes = [] {
    if (int64_t n = sysfsBytes(); n > 0)
      return n;
    for (int name : {
#ifdef _SC_LEVEL3_CACHE_SIZE
             _SC_LEVEL3_CACHE_SIZE,
#endif
#ifdef _SC_LEVEL2_CACHE_SIZE
             _SC_LEVEL2_CACHE_SIZE,
#endif
         })
      if (long n = sysconf(name); n > 0)
        return static_cast<int64_t>(n);
    return int64_t{0};
  }();
  return bytes;
}

} // namespace

runtime::Status lastLevelCacheBytes(int64_t &bytes) {
  // Read on every call (a getenv, against the microseconds of a call), so
  // that a test may set it between calls.
  if (const char *e = std::getenv("TILEJIT_LLC_BYTES")) {
    char *end = nullptr;
    errno = 0;
    const long long n = std::strtoll(e, &end, 10);
    if (*e == '\0' || *end != '\0' || errno != 0 || n < 0)
      return runtime::Status::error(
          runtime::status::RuntimeError,
          "TILEJIT_LLC_BYTES must be a byte count, not '", e, "'");
    bytes = n;
    return {};
  }
  bytes = detectedBytes();
  return {};
}

} // namespace tilejit::ops
