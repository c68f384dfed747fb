//===- NsaCompressWithCacheHandwritten.cpp - The hand-written twin --------===//
//
// What a careful C++ programmer writes: the qualifying entries listed once,
// then threads over entries (by output row), each entry's heads in order;
// per (entry, head) the window's rows of D are combined 8 lanes at a time
// in the spec's order (AVX-512 or AVX2 + F16C intrinsics after a run-time
// CPU check, a portable scalar loop otherwise). No fma: the AVX2 function
// enables AVX2 and F16C but not FMA, and this file is compiled with
// -ffp-contract=off (AVX-512F has FMAs), so no product is contracted into a
// sum.
//
//===----------------------------------------------------------------------===//
#include "ops/nsa_compress_with_cache/NsaCompressWithCacheTwin.h"

#include "ops/host/DataType.h"

#include <immintrin.h>
#include <omp.h>

#include <algorithm>
#include <cstring>
#include <vector>

namespace tilejit::ops {

using host::DataType;
using host::TensorView;

namespace {

/// One qualifying entry: its output row and the first element of each of
/// its cbs token rows of head 0.
struct Entry {
  int64_t row;
  std::vector<const uint16_t *> tokens;
};

struct Problem {
  bool bf16;
  int64_t cbs, n, d;
  int64_t inHead;   // input stride of axis 2
  uint16_t *out;
  int64_t os0, os1; // outputCache strides of axes 0 and 1
  std::vector<Entry> entries;
  std::vector<float> weightF32; ///< [cbs, n], converted once per call
};

float toFloat(bool bf16, uint16_t v) {
  return bf16 ? host::bfloat16BitsToFloat(v) : host::halfBitsToFloat(v);
}

/// Scalar: one (entry, head) row of D.
void rowScalar(const Problem &pb, const Entry &en, int64_t h) {
  float w[64], p[8], q[8];
  for (int64_t t = 0; t < pb.cbs; ++t)
    w[t] = pb.weightF32[static_cast<size_t>(t * pb.n + h)];
  uint16_t *dst = pb.out + en.row * pb.os0 + h * pb.os1;
  for (int64_t e = 0; e < pb.d; ++e) {
    for (int g = 0; g < 8; ++g)
      q[g] = -0.0f;
    for (int64_t g = 0; g < pb.cbs / 8; ++g) {
      for (int j = 0; j < 8; ++j)
        p[j] = toFloat(pb.bf16, en.tokens[g * 8 + j][h * pb.inHead + e]) *
               w[g * 8 + j];
      q[g] = ((p[0] + p[4]) + (p[2] + p[6])) + ((p[1] + p[5]) + (p[3] + p[7]));
    }
    const float acc =
        ((q[0] + q[4]) + (q[2] + q[6])) + ((q[1] + q[5]) + (q[3] + q[7]));
    dst[e] = pb.bf16 ? host::floatToBFloat16Bits(acc)
                     : host::floatToHalfBits(acc);
  }
}

__attribute__((target("avx2,f16c"))) inline __m256 load8(bool bf16,
                                                         const uint16_t *p) {
  const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i *>(p));
  if (bf16)
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(v), 16));
  return _mm256_cvtph_ps(v);
}

__attribute__((target("avx2,f16c"))) inline void store8(bool bf16, uint16_t *p,
                                                        __m256 v) {
  if (!bf16) {
    _mm_storeu_si128(reinterpret_cast<__m128i *>(p),
                     _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT));
    return;
  }
  // Round to nearest even; NaN keeps its top bits and becomes quiet.
  const __m256i u = _mm256_castps_si256(v);
  const __m256i lsb =
      _mm256_and_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(1));
  const __m256i rounded = _mm256_srli_epi32(
      _mm256_add_epi32(_mm256_add_epi32(u, _mm256_set1_epi32(0x7fff)), lsb),
      16);
  const __m256i quiet =
      _mm256_or_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(0x40));
  const __m256i nan = _mm256_castps_si256(_mm256_cmp_ps(v, v, _CMP_UNORD_Q));
  const __m256i r = _mm256_blendv_epi8(rounded, quiet, nan);
  const __m256i packed = _mm256_packus_epi32(r, r); // lanes 0-3, 4-7 per half
  const __m256i ordered = _mm256_permute4x64_epi64(packed, 0x08);
  _mm_storeu_si128(reinterpret_cast<__m128i *>(p),
                   _mm256_castsi256_si128(ordered));
}

/// AVX2: one (entry, head) row of D, 8 elements at a time.
__attribute__((target("avx2,f16c"))) void rowAvx2(const Problem &pb,
                                                  const Entry &en, int64_t h) {
  __m256 w[64];
  for (int64_t t = 0; t < pb.cbs; ++t)
    w[t] = _mm256_set1_ps(pb.weightF32[static_cast<size_t>(t * pb.n + h)]);
  const uint16_t *rows[64];
  for (int64_t t = 0; t < pb.cbs; ++t)
    rows[t] = en.tokens[t] + h * pb.inHead;
  uint16_t *dst = pb.out + en.row * pb.os0 + h * pb.os1;
  const int64_t tiles = pb.cbs / 8;
  for (int64_t e = 0; e < pb.d; e += 8) {
    __m256 q[8];
    for (int g = 0; g < 8; ++g)
      q[g] = _mm256_set1_ps(-0.0f);
    for (int64_t g = 0; g < tiles; ++g) {
      __m256 p[8];
      for (int j = 0; j < 8; ++j)
        p[j] = _mm256_mul_ps(load8(pb.bf16, rows[g * 8 + j] + e), w[g * 8 + j]);
      q[g] = _mm256_add_ps(
          _mm256_add_ps(_mm256_add_ps(p[0], p[4]), _mm256_add_ps(p[2], p[6])),
          _mm256_add_ps(_mm256_add_ps(p[1], p[5]), _mm256_add_ps(p[3], p[7])));
    }
    const __m256 acc = _mm256_add_ps(
        _mm256_add_ps(_mm256_add_ps(q[0], q[4]), _mm256_add_ps(q[2], q[6])),
        _mm256_add_ps(_mm256_add_ps(q[1], q[5]), _mm256_add_ps(q[3], q[7])));
    store8(pb.bf16, dst + e, acc);
  }
}

__attribute__((target("avx512f,avx512bw,f16c"))) inline __m512 load16(bool bf16,
                                                                      const uint16_t *p) {
  const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(p));
  if (bf16)
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(v), 16));
  return _mm512_cvtph_ps(v);
}

__attribute__((target("avx512f,avx512bw,f16c"))) inline void store16(bool bf16, uint16_t *p,
                                                                    __m512 v) {
  if (!bf16) {
    _mm256_storeu_si256(reinterpret_cast<__m256i *>(p),
                        _mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT));
    return;
  }
  // Round to nearest even; NaN keeps its top bits and becomes quiet.
  const __m512i u = _mm512_castps_si512(v);
  const __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(1));
  const __m512i rounded =
      _mm512_srli_epi32(_mm512_add_epi32(_mm512_add_epi32(u, _mm512_set1_epi32(0x7fff)), lsb), 16);
  const __m512i quiet = _mm512_or_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(0x40));
  const __mmask16 nan = _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
  _mm256_storeu_si256(reinterpret_cast<__m256i *>(p),
                      _mm512_cvtepi32_epi16(_mm512_mask_blend_epi32(nan, rounded, quiet)));
}

/// The 8-token tree of elements e .. e + 15 of the rows, in the spec's order.
template <bool BF16>
__attribute__((target("avx512f,avx512bw,f16c"))) inline __m512 tree8(const uint16_t *const *rows,
                                                                     const __m512 *w, int64_t e) {
  __m512 p[8];
  for (int j = 0; j < 8; ++j)
    p[j] = _mm512_mul_ps(load16(BF16, rows[j] + e), w[j]);
  return _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(p[0], p[4]), _mm512_add_ps(p[2], p[6])),
                       _mm512_add_ps(_mm512_add_ps(p[1], p[5]), _mm512_add_ps(p[3], p[7])));
}

/// AVX-512: one entry, in the kernel's order (heads in tiles of up to 2048
/// elements, each 8-token group a pass over the tile's rows into a buffer;
/// the last group's pass folds the buffers and stores): eight token rows a
/// pass, so that rows a power of two apart do not crowd one L1 set. R = cbs
/// / 8 and the dtype are template parameters, so that the fold's -0.0 terms
/// (groups past the window) fold away and the loops test nothing.
template <int R, bool BF16>
__attribute__((target("avx512f,avx512bw,f16c"))) void entryAvx512(const Problem &pb,
                                                                  const Entry &en) {
  constexpr int64_t kTile = 2048;
  const int64_t ht = std::max<int64_t>(1, std::min(pb.n, kTile / pb.d));
  alignas(64) static thread_local float buffers[R > 1 ? R - 1 : 1][kTile];
  float(*q)[kTile] = buffers;
  for (int64_t h0 = 0; h0 < pb.n; h0 += ht) {
    const int64_t hn = std::min(ht, pb.n - h0);
    for (int g = 0; g < R; ++g) {
      for (int64_t h = h0; h < h0 + hn; ++h) {
        const uint16_t *rows[8];
        __m512 w[8];
        for (int j = 0; j < 8; ++j) {
          rows[j] = en.tokens[static_cast<size_t>(g * 8 + j)] + h * pb.inHead;
          w[j] = _mm512_set1_ps(pb.weightF32[static_cast<size_t>((g * 8 + j) * pb.n + h)]);
        }
        const int64_t at = (h - h0) * pb.d;
        if (g < R - 1) {
          float *buf = q[g] + at;
          for (int64_t e = 0; e < pb.d; e += 16)
            _mm512_store_ps(buf + e, tree8<BF16>(rows, w, e));
          continue;
        }
        uint16_t *dst = pb.out + en.row * pb.os0 + h * pb.os1;
        for (int64_t e = 0; e < pb.d; e += 16) {
          __m512 qv[8];
          for (int r = 0; r < 8; ++r)
            qv[r] = r < R - 1    ? _mm512_load_ps(q[r < R - 1 ? r : 0] + at + e)
                    : r == R - 1 ? tree8<BF16>(rows, w, e)
                                 : _mm512_set1_ps(-0.0f);
          const __m512 acc = _mm512_add_ps(
              _mm512_add_ps(_mm512_add_ps(qv[0], qv[4]), _mm512_add_ps(qv[2], qv[6])),
              _mm512_add_ps(_mm512_add_ps(qv[1], qv[5]), _mm512_add_ps(qv[3], qv[7])));
          store16(BF16, dst + e, acc);
        }
      }
    }
  }
}

template <bool BF16> auto entryFor(int64_t cbs) {
  return cbs == 16   ? entryAvx512<2, BF16>
         : cbs == 32 ? entryAvx512<4, BF16>
         : cbs == 48 ? entryAvx512<6, BF16>
                     : entryAvx512<8, BF16>;
}

bool hasAvx512() {
  static const bool yes = __builtin_cpu_supports("avx512f") &&
                          __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("f16c");
  return yes;
}

bool hasAvx2() {
  static const bool yes =
      __builtin_cpu_supports("avx2") && __builtin_cpu_supports("f16c");
  return yes;
}

int32_t readInt32(const TensorView &t, int64_t i, int64_t j = 0) {
  const int64_t off = i * t.strides[0] + (t.rank() > 1 ? j * t.strides[1] : 0);
  int32_t v;
  std::memcpy(&v, static_cast<const int32_t *>(t.firstElement()) + off, 4);
  return v;
}

} // namespace

bool nsaCompressWithCacheHandwritten(const aclnn::NsaCompressWithCacheArgs &a) {
  const TensorView &in = *a.input, &w = *a.weight, &out = *a.outputCache,
                   &table = *a.blockTableOptional;
  if (in.strides[3] != 1 || out.strides[2] != 1)
    return false;
  Problem pb;
  pb.bf16 = in.dtype == DataType::BFloat16;
  pb.cbs = a.compressBlockSize;
  pb.n = in.dim(2);
  pb.d = in.dim(3);
  pb.inHead = in.strides[2];
  pb.out = static_cast<uint16_t *>(out.firstElement());
  pb.os0 = out.strides[0];
  pb.os1 = out.strides[1];
  const auto *base = static_cast<const uint16_t *>(in.firstElement());
  const int64_t page = a.pageBlockSize, stride = a.compressStride;
  for (int64_t b = 0; b < a.actSeqLenOptional->size(); ++b) {
    const int64_t s = (*a.actSeqLenOptional)[b];
    if (s < pb.cbs || (s - pb.cbs) % stride != 0)
      continue;
    Entry en;
    en.row = readInt32(*a.slotMapping, b);
    bool valid = en.row >= 0 && en.row < out.dim(0);
    for (int64_t k = s - pb.cbs; k < s && valid; ++k) {
      const int64_t col = k / page;
      const int64_t blk = col < table.dim(1) ? readInt32(table, b, col) : -1;
      valid = blk >= 0 && blk < in.dim(0);
      if (valid)
        en.tokens.push_back(base + blk * in.strides[0] +
                            (k % page) * in.strides[1]);
    }
    if (valid)
      pb.entries.push_back(std::move(en));
  }
  const auto *weight = static_cast<const uint16_t *>(w.firstElement());
  pb.weightF32.resize(static_cast<size_t>(pb.cbs * pb.n));
  for (int64_t t = 0; t < pb.cbs; ++t)
    for (int64_t h = 0; h < pb.n; ++h)
      pb.weightF32[static_cast<size_t>(t * pb.n + h)] =
          toFloat(pb.bf16, weight[t * w.strides[0] + h * w.strides[1]]);
  const bool vec = hasAvx2();
  // AVX-512 when the rows are whole 16-lane vectors.
  const bool wide = hasAvx512() && pb.d % 16 == 0;
  void (*entry512)(const Problem &, const Entry &) =
      pb.bf16 ? entryFor<true>(pb.cbs) : entryFor<false>(pb.cbs);
  const int64_t bytes =
      static_cast<int64_t>(pb.entries.size()) * pb.cbs * pb.n * pb.d * 2;
  // Threads over entries, thread t taking those whose output row r has
  // r % threads == t (equal rows stay in one thread, in order: the later
  // entry wins); per entry the heads in order, so each token row of the
  // window is read front to back.
  const int threads = bytes >= (64 << 10) ? omp_get_max_threads() : 1;
#pragma omp parallel num_threads(threads)
  {
    const int64_t t = omp_get_thread_num(), nt = omp_get_num_threads();
    for (const Entry &en : pb.entries) {
      if (en.row % nt != t)
        continue;
      if (wide) {
        entry512(pb, en);
        continue;
      }
      for (int64_t h = 0; h < pb.n; ++h) {
        if (vec)
          rowAvx2(pb, en, h);
        else
          rowScalar(pb, en, h);
      }
    }
  }
  return true;
}

} // namespace tilejit::ops
