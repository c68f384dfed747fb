//===- ScatterPaKvCacheHandwritten.cpp - The hand-written twin ------------===//
//
// What a careful C++ programmer writes for the data-heavy scenarios: one copy
// per token row (ND: non-temporal stores, since the cache is not read back
// soon; SSE2, which every x86-64 has) or one memcpy per 32-byte strip
// (PA_NZ; a run of 16 tokens through one block strip by strip, streamed,
// the next run's rows prefetched meanwhile; in prefill-sized calls the other
// tokens sorted by slot and written block by block), threads over cache blocks
// (thread t owns blocks with blk % threads == t, so no two threads write one
// row and the later of two equal slots wins, as in the kernels).
//
//===----------------------------------------------------------------------===//
#include "ops/scatter_pa_kv_cache/ScatterPaKvCacheTwin.h"

#include "ops/common/StreamCopy.h"

#include <emmintrin.h>
#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string_view>
#include <vector>

namespace tilejit::ops {

using host::TensorView;

namespace {

/// The rows and caches of a PA_NZ call.
struct NzRows {
  const char *kp, *vp;
  char *kcp, *vcp;
  int64_t kRow, vRow, bs;
};

/// Writes the collected tokens (slot << 32 | token) in cache order and
/// empties the list: sorted, block by block, four strips of every token of
/// the block at a time, the block's value rows and then the next block's
/// key rows requested meanwhile (as the kernel's SORT).
void writeSorted(std::vector<int64_t> &pending, const NzRows &r) {
  std::sort(pending.begin(), pending.end());
  const int64_t n = static_cast<int64_t>(pending.size()), bs = r.bs;
  auto blockOf = [&](int64_t k) { return (pending[k] >> 32) / bs; };
  auto strips = [&](int64_t k0, int64_t k1, int64_t blk, const char *src,
                    char *cache, int64_t row, const char *next,
                    int64_t nextRow, int64_t n0, int64_t n1) {
    const int64_t count = row / 32, tiles = (count + 3) / 4;
    for (int64_t c = 0; c < count; c += 4) {
      for (int64_t k = k0; k < k1; ++k) {
        const int64_t pos = (pending[k] >> 32) - blk * bs,
                      i = pending[k] & 0xffffffff;
        for (int64_t q = c; q < std::min(c + 4, count); ++q)
          std::memcpy(cache + ((blk * count + q) * bs + pos) * 32,
                      src + i * row + q * 32, 32);
      }
      const int64_t part = c / 4, lo = n0 + part * (n1 - n0) / tiles,
                    hi = n0 + (part + 1) * (n1 - n0) / tiles;
      for (int64_t k = lo; k < hi; ++k)
        prefetchLines(next + (pending[k] & 0xffffffff) * nextRow, nextRow);
    }
  };
  for (int64_t k0 = 0, k1; k0 < n; k0 = k1) {
    const int64_t blk = blockOf(k0);
    for (k1 = k0 + 1; k1 < n && blockOf(k1) == blk;)
      ++k1;
    int64_t k2 = k1;
    while (k2 < n && blockOf(k2) == blockOf(k1))
      ++k2;
    strips(k0, k1, blk, r.kp, r.kcp, r.kRow, r.vp, r.vRow, k0, r.vRow ? k1 : k0);
    if (r.vRow)
      strips(k0, k1, blk, r.vp, r.vcp, r.vRow, r.kp, r.kRow, k1, k2);
  }
  pending.clear();
}

} // namespace

bool scatterPaKvCacheHandwritten(const aclnn::ScatterPaKvCacheArgs &a) {
  const TensorView &k = *a.key, &v = *a.value, &kc = *a.keyCacheRef,
                   &vc = *a.valueCacheRef, &slots = *a.slotMapping;
  auto mode = [](const char *m) { return std::string_view(m ? m : ""); };
  const bool nz = mode(a.cacheModeOptional) == "PA_NZ";
  const std::string_view sm = mode(a.scatterModeOptional);
  const bool keyOnly = v.rank() == 0;
  if (k.rank() != 3 || !(nz || sm.empty() || sm == "None") ||
      !k.isContiguous() || !kc.isContiguous() || !slots.isContiguous() ||
      (!keyOnly && (!v.isContiguous() || !vc.isContiguous())))
    return false;
  const int64_t tokens = k.dim(0), size = k.elementSize();
  const int64_t kRow = k.dim(1) * k.dim(2) * size;
  const int64_t vRow = keyOnly ? 0 : v.dim(1) * v.dim(2) * size;
  const int64_t blocks = kc.dim(0), bs = nz ? kc.dim(2) : kc.dim(1);
  const bool wide = slots.dtype == host::DataType::Int64;
  const char *kp = k.as<char>(), *vp = keyOnly ? nullptr : v.as<char>();
  char *kcp = kc.as<char>(), *vcp = keyOnly ? nullptr : vc.as<char>();
  const void *sp = slots.firstElement();
  auto slot = [&](int64_t i) -> int64_t {
    return wide ? static_cast<const int64_t *>(sp)[i]
                : static_cast<const int32_t *>(sp)[i];
  };
  // One thread for decode-sized calls (a fork costs more than they move).
  const int64_t bytes = tokens * (kRow + vRow);
  // Streams (non-temporal stores) for calls of 1 MiB or more, as the kernel.
  const bool stream = bytes >= (int64_t(1) << 20);
  auto stripCopy = [stream](char *d, const char *src) {
    if (stream)
      streamStrip(d, src);
    else
      std::memcpy(d, src, 32);
  };
  const int threads = static_cast<int>(
      std::min<int64_t>({omp_get_max_threads(), blocks,
                         std::max<int64_t>(bytes / (64 << 10), 1)}));
#pragma omp parallel num_threads(threads)
  {
    const int64_t t = omp_get_thread_num(), nt = omp_get_num_threads();
    // PA_NZ: a run of kRun tokens with consecutive slots in one block moves
    // strip by strip (kRun * 32 contiguous bytes per strip).
    constexpr int64_t kRun = 16;
    auto runAt = [&](int64_t i) {
      const int64_t s0 = slot(i);
      if (!nz || i % kRun != 0 || i + kRun > tokens || s0 < 0 ||
          s0 / bs >= blocks || s0 % bs + kRun > bs)
        return false;
      for (int64_t r = 1; r < kRun; ++r)
        if (slot(i + r) != s0 + r)
          return false;
      return true;
    };
    // Prefill-sized PA_NZ calls (as the kernel's SORT): the tokens of other
    // groups are collected (slot << 32 | token) and written sorted before
    // this thread's next run and at the end (writeSorted).
    const bool sorts = nz && stream && blocks * bs < (int64_t(1) << 31);
    std::vector<int64_t> pending;
    const NzRows rows{kp, vp, kcp, vcp, kRow, vRow, bs};
    auto flush = [&pending, rows] { writeSorted(pending, rows); };
    for (int64_t i = 0; i < tokens; ++i) {
      if (runAt(i)) {
        const int64_t s0 = slot(i), blk = s0 / bs, pos = s0 % bs;
        if (blk % nt == t) {
          if (!pending.empty())
            flush();
          // The next run's rows (kRun * 32 bytes of them per strip), read in
          // order while this run's strips go out: the strip-wise reads
          // (32 bytes of every row) defeat the hardware prefetchers.
          const bool ahead = i + 2 * kRun <= tokens;
          for (int64_t c = 0; c < kRow / 32; ++c) {
            char *d = kcp + ((blk * (kRow / 32) + c) * bs + pos) * 32;
            if (ahead)
              prefetchLines(kp + (i + kRun) * kRow + c * kRun * 32, kRun * 32);
            for (int64_t r = 0; r < kRun; ++r)
              stripCopy(d + r * 32, kp + (i + r) * kRow + c * 32);
          }
          for (int64_t c = 0; c < vRow / 32; ++c) {
            char *d = vcp + ((blk * (vRow / 32) + c) * bs + pos) * 32;
            if (ahead)
              prefetchLines(vp + (i + kRun) * vRow + c * kRun * 32, kRun * 32);
            for (int64_t r = 0; r < kRun; ++r)
              stripCopy(d + r * 32, vp + (i + r) * vRow + c * 32);
          }
        }
        i += kRun - 1;
        continue;
      }
      const int64_t s = slot(i);
      if (s < 0 || s / bs >= blocks || (s / bs) % nt != t)
        continue;
      if (sorts) {
        pending.push_back(s << 32 | i);
        continue;
      }
      const int64_t blk = s / bs, pos = s % bs;
      if (!nz) {
        if (stream) {
          streamCopy(kcp + s * kRow, kp + i * kRow, kRow);
          if (vRow)
            streamCopy(vcp + s * vRow, vp + i * vRow, vRow);
        } else {
          std::memcpy(kcp + s * kRow, kp + i * kRow, static_cast<size_t>(kRow));
          if (vRow)
            std::memcpy(vcp + s * vRow, vp + i * vRow, static_cast<size_t>(vRow));
        }
        continue;
      }
      // [nb, C, bs, 32 bytes]: strip c of the token lands at (blk, c, pos).
      for (int64_t c = 0; c < kRow / 32; ++c)
        std::memcpy(kcp + ((blk * (kRow / 32) + c) * bs + pos) * 32,
                    kp + i * kRow + c * 32, 32);
      for (int64_t c = 0; c < vRow / 32; ++c)
        std::memcpy(vcp + ((blk * (vRow / 32) + c) * bs + pos) * 32,
                    vp + i * vRow + c * 32, 32);
    }
    if (!pending.empty())
      flush();
    _mm_sfence(); // this thread's non-temporal stores, before the join
  }
  return true;
}

} // namespace tilejit::ops
