//===- StreamCopy.h - Non-temporal row copies for the twins -----*- C++ -*-===//
///
/// \file
/// What the hand-written twins of the KV-cache operators use to write rows
/// that are read much later (or not before they have left the cache): a
/// memcpy whose 16-byte aligned part goes out with SSE2 non-temporal stores,
/// which every x86-64 has. The caller issues the sfence. And, for rows read
/// soon in a pattern the hardware prefetchers follow poorly, a request of
/// their cache lines ahead of the reads.
///
//===----------------------------------------------------------------------===//
#ifndef TILEJIT_OPS_COMMON_STREAMCOPY_H
#define TILEJIT_OPS_COMMON_STREAMCOPY_H

#include <emmintrin.h>
#include <xmmintrin.h>

#include <cstdint>
#include <cstring>

namespace tilejit::ops {

/// memcpy of `n` bytes; from 128 bytes on, the 16-byte aligned part of the
/// destination with non-temporal stores.
inline void streamCopy(char *dst, const char *src, int64_t n) {
  if (n < 128) {
    std::memcpy(dst, src, static_cast<size_t>(n));
    return;
  }
  const int64_t head =
      static_cast<int64_t>(-reinterpret_cast<uintptr_t>(dst) & 15);
  std::memcpy(dst, src, static_cast<size_t>(head));
  int64_t i = head;
  for (; i + 16 <= n; i += 16)
    _mm_stream_si128(
        reinterpret_cast<__m128i *>(dst + i),
        _mm_loadu_si128(reinterpret_cast<const __m128i *>(src + i)));
  std::memcpy(dst + i, src + i, static_cast<size_t>(n - i));
}

/// One 32-byte FRACTAL_NZ strip, streamed when the destination is 16-byte
/// aligned.
inline void streamStrip(char *dst, const char *src) {
  if (reinterpret_cast<uintptr_t>(dst) % 16 != 0) {
    std::memcpy(dst, src, 32);
    return;
  }
  for (int k = 0; k < 32; k += 16)
    _mm_stream_si128(
        reinterpret_cast<__m128i *>(dst + k),
        _mm_loadu_si128(reinterpret_cast<const __m128i *>(src + k)));
}

/// Requests the cache lines of the `n` bytes at `p` (a line every 64 bytes
/// from `p`), into every cache level, or with `toL2` into L2 and below.
inline void prefetchLines(const void *p, int64_t n, bool toL2 = false) {
  const char *c = static_cast<const char *>(p);
  if (toL2) {
    for (int64_t o = 0; o < n; o += 64)
      _mm_prefetch(c + o, _MM_HINT_T1);
    return;
  }
  for (int64_t o = 0; o < n; o += 64)
    _mm_prefetch(c + o, _MM_HINT_T0);
}

} // namespace tilejit::ops

#endif // TILEJIT_OPS_COMMON_STREAMCOPY_H
