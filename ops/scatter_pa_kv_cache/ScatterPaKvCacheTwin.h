//===- ScatterPaKvCacheTwin.h - ScatterPaKvCache: reference and twin -*- C++ -*-===//
///
/// \file
/// What the operator of ScatterPaKvCache.h is proved and measured against:
/// the scalar reference and the hand-written twin. Test support
/// (tilejit_testsupport, ops/CMakeLists.txt): linked by the tests, the
/// benchmarks and the `tilejit` command line, not part of libtilejit.so.
///
//===----------------------------------------------------------------------===//
#ifndef TILEJIT_OPS_SCATTER_PA_KV_CACHE_SCATTERPAKVCACHETWIN_H
#define TILEJIT_OPS_SCATTER_PA_KV_CACHE_SCATTERPAKVCACHETWIN_H

#include "ops/scatter_pa_kv_cache/ScatterPaKvCache.h"

namespace tilejit::ops {

/// The scalar reference of the spec's pseudo-code (sections 5 and 6), element
/// by element through the views' strides. `args` must pass phase 1.
void scatterPaKvCacheReference(const aclnn::ScatterPaKvCacheArgs &args);

/// The hand-written twin of the data-heavy scenarios (S2, S6 and S1 with
/// contiguous tensors): one memcpy per row or strip, threads over cache
/// blocks. Returns false (and does nothing) for other scenarios or layouts.
bool scatterPaKvCacheHandwritten(const aclnn::ScatterPaKvCacheArgs &args);

} // namespace tilejit::ops

#endif
