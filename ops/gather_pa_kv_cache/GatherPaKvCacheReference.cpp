//===- GatherPaKvCacheReference.cpp - The spec's pseudo-code, literally ---===//
//
// Sections 3 and 4 of ../shared/spec/gather_pa_kv_cache.md, one byte at a
// time through the original views' strides. Written from the spec alone; it
// shares nothing with the kernels or their planning.
//
//===----------------------------------------------------------------------===//
#include "ops/gather_pa_kv_cache/GatherPaKvCacheTwin.h"

#include <algorithm>
#include <cstring>
#include <initializer_list>
#include <string_view>

namespace tilejit::ops {

using host::DataType;
using host::TensorView;

namespace {

char *at(const TensorView &t, std::initializer_list<int64_t> idx) {
  int64_t off = 0;
  size_t k = 0;
  for (int64_t i : idx)
    off += i * t.strides[k++];
  return static_cast<char *>(t.firstElement()) + off * t.elementSize();
}

int64_t index(const TensorView &t, std::initializer_list<int64_t> idx) {
  const char *p = at(t, idx);
  if (t.dtype == DataType::Int64) {
    int64_t v;
    std::memcpy(&v, p, 8);
    return v;
  }
  int32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

/// Writes the token (blk, pos) of `cache` (or zeros when `blk` < 0) to row
/// `row` of `out`, element by element, byte by byte.
void copyToken(const TensorView &cache, const TensorView &out, bool nz,
               int64_t blk, int64_t pos, int64_t row) {
  const int64_t size = cache.elementSize();
  if (nz) {
    const int64_t strips = cache.dim(1), e = cache.dim(3);
    for (int64_t c = 0; c < strips; ++c)
      for (int64_t i = 0; i < e; ++i) {
        char *dst = at(out, {row, c * e + i});
        for (int64_t k = 0; k < size; ++k)
          dst[k] = blk < 0 ? 0 : at(cache, {blk, c, pos, i})[k];
      }
    return;
  }
  for (int64_t h = 0; h < cache.dim(2); ++h)
    for (int64_t d = 0; d < cache.dim(3); ++d) {
      char *dst = at(out, {row, h, d});
      for (int64_t k = 0; k < size; ++k)
        dst[k] = blk < 0 ? 0 : at(cache, {blk, pos, h, d})[k];
    }
}

} // namespace

void gatherPaKvCacheReference(const aclnn::GatherPaKvCacheArgs &a) {
  const TensorView &kc = *a.keyCache, &vc = *a.valueCache, &bt = *a.blockTables,
                   &sl = *a.seqLens, &kr = *a.keyRef, &vr = *a.valueRef;
  if (kc.isEmpty() || vc.isEmpty() || kr.isEmpty() || vr.isEmpty())
    return;
  const bool nz = a.cacheMode && std::string_view(a.cacheMode) == "PA_NZ";
  const int64_t nb = kc.dim(0), bs = nz ? kc.dim(2) : kc.dim(1);
  const int64_t batches = bt.dim(0), w = bt.dim(1), t = kr.dim(0);
  // Section 3's sums in 128 bits: exact for any int64 lengths.
  __int128 prefix = 0;
  for (int64_t b = 0; b < batches; ++b) {
    // Section 3.
    __int128 start, len;
    if (a.isSeqLensCumsum) {
      start = index(sl, {b});
      len = static_cast<__int128>(index(sl, {b + 1})) - start;
    } else {
      start = prefix;
      len = index(sl, {b});
      prefix += len;
    }
    const int64_t colBase =
        a.seqOffsetOptional ? index(*a.seqOffsetOptional, {b}) / bs : 0;
    // Section 4.
    if (start < 0 || start >= t || len <= 0)
      continue;
    const int64_t n =
        static_cast<int64_t>(std::min<__int128>(len, t - start));
    const auto row0 = static_cast<int64_t>(start);
    for (int64_t i = 0; i < n; ++i) {
      const int64_t col = colBase + i / bs;
      int64_t blk = -1;
      if (col >= 0 && col < w) {
        const int64_t id = index(bt, {b, col});
        if (id >= 0 && id < nb)
          blk = id;
      }
      copyToken(kc, kr, nz, blk, i % bs, row0 + i);
      copyToken(vc, vr, nz, blk, i % bs, row0 + i);
    }
  }
}

} // namespace tilejit::ops
