//===- HostCaches.h - The host's cache sizes ------------------*- C++ -*-===//
///
/// \file
/// The sizes of the caches of the CPU the process runs on, for the choices
/// that depend on them: the L1 the code generator tunes prefetches to, the
/// last-level cache the host consults between kernel forms. sysfs first:
/// the C library's figures can be far off in a virtual machine (320 MiB
/// for a 32 MiB last-level cache on one host).
///
//===----------------------------------------------------------------------===//
#ifndef TILEJIT_JIT_HOSTCACHES_H
#define TILEJIT_JIT_HOSTCACHES_H

#include <cstdint>

namespace tilejit::jit {

/// CPU 0's data (or unified) cache at `level` (1, 2, 3) in bytes: as sysfs
/// lists it, else the C library's figure; 0 where neither knows it.
int64_t hostCacheBytes(unsigned level);

/// The largest of CPU 0's data and unified caches (its last level) in bytes,
/// found as hostCacheBytes finds each; 0 where none is known.
int64_t hostLastLevelCacheBytes();

} // namespace tilejit::jit

#endif
