//===- HostCache.cpp - The host's last-level cache ------------------------===//
#include "ops/common/HostCache.h"

#include "jit/HostCaches.h"
#include "jit/Options.h"

namespace tilejit::ops {

host::Status lastLevelCacheBytes(int64_t &bytes) {
  // The process's options are asked on every call, so that a test may
  // override TILEJIT_LLC_BYTES between calls (jit::ScopedOptionOverride).
  auto llc = jit::Options::process().llcBytes();
  if (!llc)
    return host::Status::error(host::status::RuntimeError,
                                  llvm::toString(llc.takeError()));
  if (*llc) {
    bytes = static_cast<int64_t>(**llc);
    return {};
  }
  static const int64_t detected = jit::hostLastLevelCacheBytes();
  bytes = detected;
  return {};
}

} // namespace tilejit::ops
