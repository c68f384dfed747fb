//===- NsaCompressWithCacheTwin.h - NsaCompressWithCache: reference and twin -*- C++ -*-===//
///
/// \file
/// What the operator of NsaCompressWithCache.h is proved and measured
/// against: the scalar reference and the hand-written twin. Test support
/// (tilejit_testsupport, ops/CMakeLists.txt): linked by the tests, the
/// benchmarks and the `tilejit` command line, not part of libtilejit.so.
///
//===----------------------------------------------------------------------===//
#ifndef TILEJIT_OPS_NSA_COMPRESS_WITH_CACHE_NSACOMPRESSWITHCACHETWIN_H
#define TILEJIT_OPS_NSA_COMPRESS_WITH_CACHE_NSACOMPRESSWITHCACHETWIN_H

#include "ops/nsa_compress_with_cache/NsaCompressWithCache.h"

namespace tilejit::ops {

/// The scalar reference: section 3's pseudo-code token by token through the
/// views' strides, the spec's reduction order. `args` must pass phase 1.
void nsaCompressWithCacheReference(const aclnn::NsaCompressWithCacheArgs &args);

/// The hand-written twin: plain C++ over contiguous rows of D, the same
/// order. Returns false (and does nothing) unless input's [N, D] rows,
/// weight and outputCache are contiguous. `args` must pass phase 1.
bool nsaCompressWithCacheHandwritten(
    const aclnn::NsaCompressWithCacheArgs &args);

} // namespace tilejit::ops

#endif
