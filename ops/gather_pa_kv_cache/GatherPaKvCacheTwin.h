//===- GatherPaKvCacheTwin.h - GatherPaKvCache: reference and twin -*- C++ -*-===//
///
/// \file
/// What the operator of GatherPaKvCache.h is proved and measured against:
/// the scalar reference and the hand-written twin. Test support
/// (tilejit_testsupport, ops/CMakeLists.txt): linked by the tests, the
/// benchmarks and the `tilejit` command line, not part of libtilejit.so.
///
//===----------------------------------------------------------------------===//
#ifndef TILEJIT_OPS_GATHER_PA_KV_CACHE_GATHERPAKVCACHETWIN_H
#define TILEJIT_OPS_GATHER_PA_KV_CACHE_GATHERPAKVCACHETWIN_H

#include "ops/gather_pa_kv_cache/GatherPaKvCache.h"

namespace tilejit::ops {

/// The scalar reference: section 4's pseudo-code, byte by byte through the
/// views' strides. `args` must pass phase 1.
void gatherPaKvCacheReference(const aclnn::GatherPaKvCacheArgs &args);

/// The hand-written twin: plain C++, one memcpy per block run (Norm) or per
/// 32-byte strip row (PA_NZ), threads over block chunks. Returns false (and
/// does nothing) unless every tensor is contiguous. `args` must pass phase 1.
bool gatherPaKvCacheHandwritten(const aclnn::GatherPaKvCacheArgs &args);

} // namespace tilejit::ops

#endif
