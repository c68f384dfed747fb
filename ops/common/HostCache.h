//===- HostCache.h - The host's last-level cache -------------*- C++ -*-===//
///
/// \file
/// Some kernels come in two forms that trade arithmetic against the way
/// they request memory: the faster one where the data sits in the
/// last-level cache is not the faster one where it streams from memory
/// (docs/ops.md, IncreFlashAttentionV4). The host picks by whether the
/// tensors the call addresses (their whole storage, fixed for a decode
/// loop, never the lengths being read) fit in the last-level cache.
///
//===----------------------------------------------------------------------===//
#ifndef TILEJIT_OPS_COMMON_HOSTCACHE_H
#define TILEJIT_OPS_COMMON_HOSTCACHE_H

#include "ops/host/Status.h"

#include <cstdint>

namespace tilejit::ops {

/// The host's last-level cache in bytes: TILEJIT_LLC_BYTES where set (a
/// byte count; 0 takes every working set as streamed from memory), else
/// jit::hostLastLevelCacheBytes (0 where unknown). An ill-formed
/// TILEJIT_LLC_BYTES is a runtime error naming it, its value and the rule.
host::Status lastLevelCacheBytes(int64_t &bytes);

} // namespace tilejit::ops

#endif
