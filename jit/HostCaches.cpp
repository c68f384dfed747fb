//===- HostCaches.cpp - The host's cache sizes ----------------------------===//
#include "jit/HostCaches.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

namespace tilejit::jit {

namespace {

struct SysfsCache {
  unsigned level = 0;
  int64_t bytes = 0;
};

/// CPU 0's data and unified caches as sysfs lists them ("32768K").
std::vector<SysfsCache> sysfsCaches() {
  std::vector<SysfsCache> out;
  for (int i = 0;; ++i) {
    const std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(i);
    std::ifstream type(dir + "/type"), level(dir + "/level"), size(dir + "/size");
    std::string t, z;
    unsigned lv = 0;
    if (!(type >> t) || !(level >> lv) || !(size >> z))
      break;
    if (t == "Instruction")
      continue;
    char *end = nullptr;
    int64_t n = std::strtoll(z.c_str(), &end, 10);
    if (*end == 'K')
      n <<= 10;
    else if (*end == 'M')
      n <<= 20;
    out.push_back({lv, n});
  }
  return out;
}

const std::vector<SysfsCache> &caches() {
  static const std::vector<SysfsCache> c = sysfsCaches();
  return c;
}

int64_t libcCacheBytes(unsigned level) {
  long n = -1;
#if defined(_SC_LEVEL1_DCACHE_SIZE) && defined(_SC_LEVEL2_CACHE_SIZE) &&                      \
    defined(_SC_LEVEL3_CACHE_SIZE)
  n = sysconf(level == 1   ? _SC_LEVEL1_DCACHE_SIZE
              : level == 2 ? _SC_LEVEL2_CACHE_SIZE
                           : _SC_LEVEL3_CACHE_SIZE);
#endif
  return n > 0 && level <= 3 ? static_cast<int64_t>(n) : 0;
}

} // namespace

int64_t hostCacheBytes(unsigned level) {
  for (const SysfsCache &c : caches())
    if (c.level == level && c.bytes > 0)
      return c.bytes;
  return libcCacheBytes(level);
}

int64_t hostLastLevelCacheBytes() {
  int64_t best = 0;
  for (const SysfsCache &c : caches())
    best = std::max(best, c.bytes);
  for (unsigned level = 3; best == 0 && level >= 1; --level)
    best = libcCacheBytes(level);
  return best;
}

} // namespace tilejit::jit
