//===- IncreFlashAttentionHandwrittenAvx512.cpp - The twin, AVX-512 -------===//
//
// Intrinsics, compiled with AVX-512F/BW: per (batch, split) one pass over
// the window in tiles of 32 positions, every KV head's tile of a step before
// the next step; each tile's key and value rows read in place while that
// head's rows of the next tile are requested. Scores: each key row is
// converted to f32 a vector at a time and multiplied into up to eight query
// heads' accumulators, reduced across lanes per head. Softmax: the tile's
// 32 scores of a head in two vectors, exp as a polynomial with scalef. PV:
// up to four heads x 64 dims of the accumulator in registers while the
// tile's value rows stream by. The splits are merged by the caller.
//
//===----------------------------------------------------------------------===//
#include "jit/Compiler.h"
#include "ops/common/StreamCopy.h"
#include "ops/incre_flash_attention/IfaTwin.h"

#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

namespace tilejit::ops::ifa {

namespace {

constexpr int64_t kTile = 32;

inline __m512 load16(const uint16_t *p, bool bf16) {
  __m256i h = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(p));
  if (bf16)
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
  return _mm512_cvtph_ps(h);
}

/// e^x for x <= 0 (scores minus their running maximum): 2^n * p(r), n =
/// round(x / ln 2), r = x - n ln 2 (two-constant split), p of degree 6.
inline __m512 exp16(__m512 x) {
  x = _mm512_max_ps(x, _mm512_set1_ps(-104.0f));
  const __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(1.44269504f)),
                                        _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693145752f), x);
  r = _mm512_fnmadd_ps(n, _mm512_set1_ps(1.42860677e-6f), r);
  __m512 p = _mm512_set1_ps(1.0f / 720);
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 120));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 24));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 6));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(0.5f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
  return _mm512_scalef_ps(p, n);
}

} // namespace

namespace {

/// One tile of n window rows from j0 of (batch b, KV head hk) into the
/// state (m, l, acc) of its G query heads (qf: the scaled query, [G, D]),
/// the rows read in place while the `ahead` rows after the tile are
/// requested (rows of a head are strided in the cache, which the hardware
/// prefetchers follow poorly): into L2 only with `toL2`.
void tileAvx512(const TwinArgs &a, int64_t b, int64_t hk, int64_t j0, int64_t n, int64_t ahead,
                bool toL2, const float *qf, float *m, float *l, float *acc) {
  const int64_t g = a.g, d = a.d;
  const bool bf = a.bf16;
  alignas(64) float s[64][kTile];
  float alpha[64];
  for (int64_t t = 0; t < n; ++t) {
    if (t < ahead)
      prefetchLines(twinRow(a, a.k, a.kStride, b, hk, j0 + kTile + t), d * 2, toL2);
    const uint16_t *kr = twinRow(a, a.k, a.kStride, b, hk, j0 + t);
    for (int64_t i0 = 0; i0 < g; i0 += 8) {
      const int64_t gi = std::min<int64_t>(8, g - i0);
      __m512 sa[8];
      for (int64_t i = 0; i < gi; ++i)
        sa[i] = _mm512_setzero_ps();
      for (int64_t c = 0; c < d; c += 16) {
        const __m512 kv = load16(kr + c, bf);
        for (int64_t i = 0; i < gi; ++i)
          sa[i] = _mm512_fmadd_ps(_mm512_loadu_ps(qf + (i0 + i) * d + c), kv, sa[i]);
      }
      for (int64_t i = 0; i < gi; ++i)
        s[i0 + i][t] = _mm512_reduce_add_ps(sa[i]);
    }
  }
  const __mmask16 m0 = n >= 16 ? 0xffff : static_cast<__mmask16>((1u << n) - 1);
  const __mmask16 m1 = n >= 32 ? 0xffff : n > 16 ? static_cast<__mmask16>((1u << (n - 16)) - 1) : 0;
  const __m512 ninf = _mm512_set1_ps(-std::numeric_limits<float>::infinity());
  for (int64_t i = 0; i < g; ++i) {
    const __m512 x0 = _mm512_mask_loadu_ps(ninf, m0, s[i]);
    const __m512 x1 = _mm512_mask_loadu_ps(ninf, m1, s[i] + 16);
    const float mx = std::max(m[i], _mm512_reduce_max_ps(_mm512_max_ps(x0, x1)));
    const __m512 mv = _mm512_set1_ps(mx);
    const __m512 p0 = _mm512_maskz_mov_ps(m0, exp16(_mm512_sub_ps(x0, mv)));
    const __m512 p1 = _mm512_maskz_mov_ps(m1, exp16(_mm512_sub_ps(x1, mv)));
    _mm512_store_ps(s[i], p0);
    _mm512_store_ps(s[i] + 16, p1);
    alpha[i] = std::exp(m[i] - mx);
    l[i] = l[i] * alpha[i] + _mm512_reduce_add_ps(_mm512_add_ps(p0, p1));
    m[i] = mx;
  }
  // PV: four heads x 64 dims (16 accumulators) per pass over the rows; the
  // first pass requests the rows after the tile.
  for (int64_t i0 = 0; i0 < g; i0 += 4) {
    const int64_t gi = std::min<int64_t>(4, g - i0);
    for (int64_t c0d = 0; c0d < d; c0d += 64) {
      const int64_t w = std::min<int64_t>(4, (d - c0d) / 16);
      __m512 A[4][4];
      for (int64_t i = 0; i < gi; ++i)
        for (int64_t u = 0; u < w; ++u)
          A[i][u] = _mm512_mul_ps(_mm512_loadu_ps(acc + (i0 + i) * d + c0d + 16 * u),
                                  _mm512_set1_ps(alpha[i0 + i]));
      for (int64_t t = 0; t < n; ++t) {
        if (i0 == 0 && c0d == 0 && t < ahead)
          prefetchLines(twinRow(a, a.v, a.vStride, b, hk, j0 + kTile + t), d * 2, toL2);
        const uint16_t *vr = twinRow(a, a.v, a.vStride, b, hk, j0 + t) + c0d;
        __m512 vv[4];
        for (int64_t u = 0; u < w; ++u)
          vv[u] = load16(vr + 16 * u, bf);
        for (int64_t i = 0; i < gi; ++i) {
          const __m512 p = _mm512_set1_ps(s[i0 + i][t]);
          for (int64_t u = 0; u < w; ++u)
            A[i][u] = _mm512_fmadd_ps(p, vv[u], A[i][u]);
        }
      }
      for (int64_t i = 0; i < gi; ++i)
        for (int64_t u = 0; u < w; ++u)
          _mm512_storeu_ps(acc + (i0 + i) * d + c0d + 16 * u, A[i][u]);
    }
  }
}

} // namespace

void partialAvx512(const TwinArgs &a, int64_t b, int64_t c0, int64_t c1, float *const *m,
                   float *const *l, float *const *acc) {
  const int64_t g = a.g, d = a.d;
  std::vector<float> qf(static_cast<size_t>(a.nkv * g * d));
  for (int64_t hk = 0; hk < a.nkv; ++hk) {
    for (int64_t i = 0; i < g; ++i) {
      for (int64_t c = 0; c < d; c += 16)
        _mm512_storeu_ps(&qf[static_cast<size_t>((hk * g + i) * d + c)],
                         _mm512_mul_ps(load16(a.q + b * a.qStride[0] + hk * a.qStride[1] +
                                                  i * a.qStride[2] + c,
                                              a.bf16),
                                       _mm512_set1_ps(a.scale)));
      m[hk][i] = -std::numeric_limits<float>::infinity();
      l[hk][i] = 0;
    }
    std::fill(acc[hk], acc[hk] + g * d, 0.0f);
  }
  // The next tile's rows go to L2 only by the generated kernel's rule
  // (CodeGenPrefetch.cpp), when what a tile requests (its K and V rows) is
  // half the L1 data cache or more: on a 32 KiB L1 (Zen 4) the twin ran
  // faster so; on a 48 KiB L1 the rows stay below half, in L1.
  const bool toL2 = jit::Compiler::instance().prefetchesIntoL2(2 * kTile * d * 2);
  // Every KV head's tile of a step before the next step, as the kernel
  // walks a BSH cache: the step's rows are read by one core.
  for (int64_t j0 = c0; j0 < c1; j0 += kTile) {
    const int64_t n = std::min(kTile, c1 - j0);
    const int64_t ahead = std::max<int64_t>(0, std::min(kTile, c1 - j0 - kTile));
    for (int64_t hk = 0; hk < a.nkv; ++hk)
      tileAvx512(a, b, hk, j0, n, ahead, toL2, &qf[static_cast<size_t>(hk * g * d)], m[hk],
                 l[hk], acc[hk]);
  }
}

} // namespace tilejit::ops::ifa
