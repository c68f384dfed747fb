//===- NsaCompressWithCache.h - NsaCompressWithCache: the C++ API -*- C++
//-*-===//
///
/// \file
/// Native Sparse Attention's compressed-token cache: for every batch entry
/// whose length s completes a new window (s >= cbs and (s - cbs) % stride
/// == 0), the weighted sum over window position t of its last cbs tokens
/// (read from the paged cache [blockNum, P, N, D] through the block table,
/// weight [cbs, N]) is written to row slotMapping[b] of outputCache
/// [R, N, D]: the operator of ../shared/spec/nsa_compress_with_cache.md,
/// FLOAT16 and BFLOAT16, cbs and stride in {16, 32, 48, 64} (stride <= cbs),
/// P in {64, 128}, N <= 64 (odd only up to 50), D a multiple of 16 up to 256.
///
/// Arithmetic: products rounded once to f32, summed in the spec's fixed
/// order (tiles of 8 as ((p0+p4)+(p2+p6))+((p1+p5)+(p3+p7)), then the
/// tile sums folded the same way), rounded to the dtype to nearest even:
/// bit-exact with the device. Entries that complete no window are not
/// touched; neither is an entry whose slot is outside [0, R) or whose
/// window needs a page id outside [0, blockNum) (such ids are never
/// followed). Equal slots: the later entry wins.
///
/// Phase 1 (`prepareNsaCompressWithCache`, the aclnn GetWorkspaceSize)
/// checks section 4's rules in order (161001, 161002, then 561002 with a
/// message naming the argument and the rule), reads the host lengths and
/// makes the list of qualifying entries, and gets the kernel nsa_compress
/// of nsa_compress_with_cache.tile, specialised on dtype, cbs, page size and
/// head dim (not on stride, batch size or lengths: the host's list of
/// qualifying entries absorbs them). Phase 2 only launches. Input and weight
/// may be strided views.
///
//===----------------------------------------------------------------------===//
#ifndef TILEJIT_OPS_NSA_COMPRESS_WITH_CACHE_NSACOMPRESSWITHCACHE_H
#define TILEJIT_OPS_NSA_COMPRESS_WITH_CACHE_NSACOMPRESSWITHCACHE_H

#include "ops/host/Executor.h"
#include "ops/host/Status.h"
#include "ops/nsa_compress_with_cache/NsaCompressWithCacheArgs.h"

namespace tilejit::ops {

/// Phase 1: validates `args` (section 4, in order) and fills `executor`
/// (workspace 0, a launch closure owning copies of what it needs; none when
/// no entry completes a window). Writes nothing.
host::Status
prepareNsaCompressWithCache(const aclnn::NsaCompressWithCacheArgs &args,
                            host::Executor &executor);

/// Validates and runs synchronously on the calling thread.
host::Status
nsaCompressWithCache(const aclnn::NsaCompressWithCacheArgs &args);

} // namespace tilejit::ops

#endif
