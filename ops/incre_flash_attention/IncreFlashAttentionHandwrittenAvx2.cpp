//===- IncreFlashAttentionHandwrittenAvx2.cpp - The twin, AVX2 build -----===//
//
// Plain C++ compiled with -mavx2 -mfma -mf16c (the compiler vectorises the
// inner loops): per (batch, KV head, split) one pass over the window in
// tiles of 32 positions, the G query heads of the group sharing each K/V
// row; online softmax in float32. The splits are merged by the caller.
//
//===----------------------------------------------------------------------===//
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

void toFloat(const uint16_t *src, float *dst, int64_t n, bool bf16) {
  if (bf16) {
    for (int64_t i = 0; i < n; ++i) {
      const uint32_t u = static_cast<uint32_t>(src[i]) << 16;
      std::memcpy(&dst[i], &u, 4);
    }
    return;
  }
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(_mm_loadu_si128(
                                  reinterpret_cast<const __m128i *>(src + i))));
  for (; i < n; ++i)
    dst[i] = _cvtsh_ss(src[i]);
}

} // namespace

void partialAvx2(const TwinArgs &a, int64_t b, int64_t hk, int64_t c0, int64_t c1,
             float *m, float *l, float *acc) {
  const int64_t g = a.g, d = a.d;
  std::vector<float> qf(static_cast<size_t>(g * d)),
      row(static_cast<size_t>(d)), s(static_cast<size_t>(g * kTile));
  for (int64_t i = 0; i < g; ++i) {
    toFloat(a.q + b * a.qStride[0] + hk * a.qStride[1] + i * a.qStride[2],
            &qf[static_cast<size_t>(i * d)], d, a.bf16);
    for (int64_t c = 0; c < d; ++c)
      qf[static_cast<size_t>(i * d + c)] *= a.scale;
  }
  for (int64_t i = 0; i < g; ++i) {
    m[i] = -std::numeric_limits<float>::infinity();
    l[i] = 0;
  }
  std::fill(acc, acc + g * d, 0.0f);
  for (int64_t j0 = c0; j0 < c1; j0 += kTile) {
    const int64_t n = std::min(kTile, c1 - j0);
    for (int64_t t = 0; t < n; ++t) {
      toFloat(twinRow(a, a.k, a.kStride, b, hk, j0 + t), row.data(), d, a.bf16);
      for (int64_t i = 0; i < g; ++i) {
        const float *qi = &qf[static_cast<size_t>(i * d)];
        // Eight lane-wise partial sums (one AVX2 vector), then combined.
        float part[8] = {};
        int64_t c = 0;
        for (; c + 8 <= d; c += 8)
          for (int l = 0; l < 8; ++l)
            part[l] += qi[c + l] * row[static_cast<size_t>(c + l)];
        float dot = 0;
        for (; c < d; ++c)
          dot += qi[c] * row[static_cast<size_t>(c)];
        for (int l = 0; l < 8; ++l)
          dot += part[l];
        s[static_cast<size_t>(i * kTile + t)] = dot;
      }
    }
    for (int64_t i = 0; i < g; ++i) {
      float *si = &s[static_cast<size_t>(i * kTile)];
      float mx = m[i];
      for (int64_t t = 0; t < n; ++t)
        mx = std::max(mx, si[t]);
      const float alpha = std::exp(m[i] - mx);
      float sum = 0;
      for (int64_t t = 0; t < n; ++t) {
        si[t] = std::exp(si[t] - mx);
        sum += si[t];
      }
      l[i] = l[i] * alpha + sum;
      m[i] = mx;
      if (alpha != 1.0f)
        for (int64_t c = 0; c < d; ++c)
          acc[i * d + c] *= alpha;
    }
    for (int64_t t = 0; t < n; ++t) {
      toFloat(twinRow(a, a.v, a.vStride, b, hk, j0 + t), row.data(), d, a.bf16);
      for (int64_t i = 0; i < g; ++i) {
        const float p = s[static_cast<size_t>(i * kTile + t)];
        float *ai = acc + i * d;
        for (int64_t c = 0; c < d; ++c)
          ai[c] += p * row[static_cast<size_t>(c)];
      }
    }
  }
}

} // namespace tilejit::ops::ifa
