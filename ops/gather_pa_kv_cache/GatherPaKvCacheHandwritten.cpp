//===- GatherPaKvCacheHandwritten.cpp - The hand-written twin -------------===//
//
// What a careful C++ programmer writes for contiguous tensors: one pass over
// the lengths lists the block chunks (section 4's loop, a block at a time),
// then threads copy them, one copy per chunk (Norm: a block's first cnt
// tokens are one run of cnt * N * D elements, and so are their output rows)
// or per 32-byte strip row (PA_NZ); invalid columns or block ids memset 0.
// Outputs of 16 MiB or more are written with non-temporal stores (SSE2,
// which every x86-64 has), as the kernels do: Norm streams each chunk, PA_NZ
// fills each output row 16 strips (512 contiguous bytes) at a time.
//
//===----------------------------------------------------------------------===//
#include "ops/gather_pa_kv_cache/GatherPaKvCacheTwin.h"

#include "ops/common/KvCacheLayout.h"
#include "ops/common/StreamCopy.h"

#include <emmintrin.h>
#include <omp.h>

#include <algorithm>
#include <cstring>
#include <string_view>
#include <vector>

namespace tilejit::ops {

using host::DataType;
using host::TensorView;

namespace {

/// One block-table column of one batch: `cnt` tokens from block `blk` (-1:
/// zeros) to output rows from `row`.
struct Chunk {
  int64_t blk, row, cnt;
};

int64_t indexAt(const TensorView &t, int64_t i) {
  const void *p = t.firstElement();
  return t.dtype == DataType::Int64 ? static_cast<const int64_t *>(p)[i]
                                    : static_cast<const int32_t *>(p)[i];
}

} // namespace

bool gatherPaKvCacheHandwritten(const aclnn::GatherPaKvCacheArgs &a) {
  const TensorView &kc = *a.keyCache, &vc = *a.valueCache, &bt = *a.blockTables,
                   &sl = *a.seqLens, &kr = *a.keyRef, &vr = *a.valueRef;
  const TensorView *so = a.seqOffsetOptional;
  if (kc.isEmpty() || vc.isEmpty() || kr.isEmpty() || vr.isEmpty())
    return true;
  if (!kc.isContiguous() || !vc.isContiguous() || !bt.isContiguous() ||
      !sl.isContiguous() || !kr.isContiguous() || !vr.isContiguous() ||
      (so && !so->isContiguous()))
    return false;
  const bool nz = a.cacheMode && std::string_view(a.cacheMode) == "PA_NZ";
  const int64_t nb = kc.dim(0), bs = nz ? kc.dim(2) : kc.dim(1);
  const int64_t batches = bt.dim(0), w = bt.dim(1), t = kr.dim(0);
  std::vector<Chunk> chunks;
  __int128 prefix = 0; // exact for any int64 lengths, as section 3
  for (int64_t b = 0; b < batches; ++b) {
    __int128 start = prefix, len = indexAt(sl, b);
    if (a.isSeqLensCumsum) {
      start = len;
      len = indexAt(sl, b + 1) - start;
    }
    prefix += len;
    if (start < 0 || start >= t || len <= 0)
      continue;
    const auto n = static_cast<int64_t>(std::min<__int128>(len, t - start));
    const int64_t col0 = so ? indexAt(*so, b) / bs : 0;
    for (int64_t t0 = 0; t0 < n; t0 += bs) {
      const int64_t col = col0 + t0 / bs;
      int64_t blk = col >= 0 && col < w ? indexAt(bt, b * w + col) : -1;
      if (blk >= nb)
        blk = -1;
      chunks.push_back(
          {blk, static_cast<int64_t>(start) + t0, std::min(bs, n - t0)});
    }
  }
  const int64_t size = kc.elementSize();
  // Bytes per token row of each output.
  const int64_t kRow = kr.numel() / t * size, vRow = vr.numel() / t * size;
  const char *kcp = kc.as<char>(), *vcp = vc.as<char>();
  char *krp = kr.as<char>(), *vrp = vr.as<char>();
  const int64_t count = static_cast<int64_t>(chunks.size());
  // One thread for decode-sized calls (a fork costs more than they move).
  const int64_t bytes = t * (kRow + vRow);
  const bool stream = streamsOutput(bytes);
  const int threads = static_cast<int>(std::clamp<int64_t>(
      std::min(count, bytes / (64 << 10)), 1, omp_get_max_threads()));
#pragma omp parallel num_threads(threads)
  {
#pragma omp for schedule(static) nowait
    for (int64_t i = 0; i < count; ++i) {
      const Chunk c = chunks[static_cast<size_t>(i)];
      char *kd = krp + c.row * kRow, *vd = vrp + c.row * vRow;
      if (c.blk < 0) {
        std::memset(kd, 0, static_cast<size_t>(c.cnt * kRow));
        std::memset(vd, 0, static_cast<size_t>(c.cnt * vRow));
        continue;
      }
      if (!nz) {
        const char *ks = kcp + c.blk * bs * kRow, *vs = vcp + c.blk * bs * vRow;
        if (stream) {
          streamCopy(kd, ks, c.cnt * kRow);
          streamCopy(vd, vs, c.cnt * vRow);
        } else {
          std::memcpy(kd, ks, static_cast<size_t>(c.cnt * kRow));
          std::memcpy(vd, vs, static_cast<size_t>(c.cnt * vRow));
        }
        continue;
      }
      // [nb, strips, bs, 32 bytes]: strip s of position p lands at byte s * 32
      // of output row p.
      auto strips = [&](const char *cache, char *dst, int64_t row) {
        const int64_t n = row / 32;
        const char *block = cache + c.blk * n * bs * 32;
        int64_t s0 = 0;
        if (stream && reinterpret_cast<uintptr_t>(dst) % 16 == 0 &&
            row % 16 == 0)
          for (; s0 + 16 <= n; s0 += 16)
            for (int64_t p = 0; p < c.cnt; ++p)
              for (int64_t s = s0; s < s0 + 16; ++s)
                streamStrip(dst + p * row + s * 32, block + (s * bs + p) * 32);
        for (int64_t s = s0; s < n; ++s)
          for (int64_t p = 0; p < c.cnt; ++p)
            std::memcpy(dst + p * row + s * 32, block + (s * bs + p) * 32, 32);
      };
      strips(kcp, kd, kRow);
      strips(vcp, vd, vRow);
    }
    if (stream)
      _mm_sfence(); // this thread's non-temporal stores, before the join
  }
  return true;
}

} // namespace tilejit::ops
