//===- FlashAttentionScoreGradHandwrittenAvx512.cpp - The twin, AVX-512 ---===//
//
// Section 4 of ../shared/spec/flash_attention_unpadding_score_grad_v5.md,
// FlashAttention-2 style, compiled with AVX-512F/BW.
//
// Pre-pass: q, k, v, dy widened to f32 head-major panels ([head][token][D]
// rounded up to 16 lanes, zero padded), so that a block's rows are
// contiguous (the token stride N*D*4 bytes is a multiple of 4 KiB for the
// common shapes: all rows of a block would share L1 sets), and per (head,
// token) M, 1/L and Δ = rowsum(dY∘O).
//
// Main pass: a program owns (batch, kv head, a range of 64-column KV
// blocks); the ranges split a batch's blocks evenly by kept positions into
// a count of parts chosen from the shape alone. Per KV block it packs Kᵀ and
// Vᵀ, then for each query head of the group and each 64-row query block
// that meets the band: S = Q Kᵀ and dP = dY Vᵀ, P = exp(σS − M)/L (the keep
// rule applied only to blocks that cross the band's edge), dS = P∘(dP − Δ),
// dV += Pᵀ dY, dK += dSᵀ Q, dQ += dS K. All five products run on one
// register-blocked micro-kernel (6 rows × 64 columns of accumulators,
// broadcast A, vector B). dK and dV leave the program complete; dQ goes to
// an f32 slot per part, summed in part order afterwards. Nothing depends on
// the thread count: the results are bitwise equal for any.
//
// bf16 on hosts with AVX512-BF16: S and dP (the products over D) run on the
// inputs' bf16 pairs with `vdpbf16ps` (Kᵀ and Vᵀ packed as pairs per KV
// block); the three products with P or dS stay on f32 FMAs.
//
//===----------------------------------------------------------------------===//
#include "ops/flash_attention_score_grad/FagTwin.h"

#include <immintrin.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

namespace tilejit::ops::fag {

using host::DataType;

namespace {

constexpr int64_t kBr = 64; ///< query rows per block
constexpr int64_t kBc = 64; ///< key columns per block (4 vectors)
constexpr int kMr = 6;      ///< micro-kernel rows
/// Programs wanted before a batch's KV range is split (a property of the
/// shape, never of the thread count).
constexpr int64_t kTargetPrograms = 16;

int64_t roundUp(int64_t x, int64_t m) { return (x + m - 1) / m * m; }

struct FreeDeleter {
  void operator()(float *p) const { std::free(p); }
};
using Buffer = std::unique_ptr<float[], FreeDeleter>;
/// `n` floats (or 2n bf16), 64-byte aligned, uninitialised.
Buffer allocate(int64_t n) {
  const size_t bytes = static_cast<size_t>(roundUp(std::max<int64_t>(n, 16) * 4, 64));
  return Buffer(static_cast<float *>(std::aligned_alloc(64, bytes)));
}

__mmask16 tailMask(int64_t n) { return n >= 16 ? 0xffff : static_cast<__mmask16>((1u << n) - 1); }

/// `n` elements of type `t` at `src` to f32 at `dst`, zero up to `padTo`.
void widenRow(const void *src, DataType t, int64_t n, float *dst, int64_t padTo) {
  for (int64_t c = 0; c < padTo; c += 16) {
    const __mmask16 m = tailMask(n - c);
    __m512 x;
    if (c >= n) {
      x = _mm512_setzero_ps();
    } else if (t == DataType::Float) {
      x = _mm512_maskz_loadu_ps(m, static_cast<const float *>(src) + c);
    } else {
      const __m256i h = _mm256_maskz_loadu_epi16(m, static_cast<const uint16_t *>(src) + c);
      x = t == DataType::BFloat16
              ? _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16))
              : _mm512_cvtph_ps(h);
    }
    _mm512_storeu_ps(dst + c, x);
  }
}

/// `scale`·src (n floats) rounded to nearest even into `t` at `dst`.
void narrowRow(const float *src, float scale, DataType t, int64_t n, void *dst) {
  const __m512 s = _mm512_set1_ps(scale);
  for (int64_t c = 0; c < n; c += 16) {
    const __mmask16 m = tailMask(n - c);
    const __m512 x = _mm512_mul_ps(_mm512_maskz_loadu_ps(m, src + c), s);
    if (t == DataType::Float) {
      _mm512_mask_storeu_ps(static_cast<float *>(dst) + c, m, x);
      continue;
    }
    __m256i h;
    if (t == DataType::BFloat16) {
      __m512i bits = _mm512_castps_si512(x);
      const __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(bits, 16), _mm512_set1_epi32(1));
      bits = _mm512_add_epi32(bits, _mm512_add_epi32(lsb, _mm512_set1_epi32(0x7fff)));
      h = _mm512_cvtepi32_epi16(_mm512_srli_epi32(bits, 16));
    } else {
      h = _mm512_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    }
    _mm256_mask_storeu_epi16(static_cast<uint16_t *>(dst) + c, m, h);
  }
}

/// e^x: 2^n · p(r), n = round(x / ln 2), r = x − n ln 2 (two-constant
/// split), p of degree 6; x clamped below so that the result is 0 there.
inline __m512 exp16(__m512 x) {
  x = _mm512_max_ps(x, _mm512_set1_ps(-104.0f));
  x = _mm512_min_ps(x, _mm512_set1_ps(88.0f));
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

//===----------------------------------------------------------------------===//
// The micro-kernel: C[r][c] (+)= Σ_k A[r·as + k·ak] · B[k·bs + c]
//===----------------------------------------------------------------------===//

template <int MR, int NV>
void gemmTile(int64_t kLen, const float *a, int64_t as, int64_t ak, const float *b, int64_t bs,
              float *c, int64_t cs, bool accumulate) {
  __m512 acc[MR][NV];
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r)
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v)
      acc[r][v] = accumulate ? _mm512_loadu_ps(c + r * cs + 16 * v) : _mm512_setzero_ps();
  for (int64_t k = 0; k < kLen; ++k) {
    __m512 bv[NV];
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v)
      bv[v] = _mm512_loadu_ps(b + k * bs + 16 * v);
    const float *ak0 = a + k * ak;
#pragma GCC unroll 8
    for (int r = 0; r < MR; ++r) {
      const __m512 x = _mm512_set1_ps(ak0[r * as]);
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v)
        acc[r][v] = _mm512_fmadd_ps(x, bv[v], acc[r][v]);
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r)
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v)
      _mm512_storeu_ps(c + r * cs + 16 * v, acc[r][v]);
}

using TileFn = void (*)(int64_t, const float *, int64_t, int64_t, const float *, int64_t,
                        float *, int64_t, bool);

template <int MR> constexpr TileFn tileRow(int nv) {
  return nv == 1 ? gemmTile<MR, 1> : nv == 2 ? gemmTile<MR, 2> : nv == 3 ? gemmTile<MR, 3>
                                                                         : gemmTile<MR, 4>;
}

TileFn tileFn(int mr, int nv) {
  static const TileFn table[kMr][4] = {
      {tileRow<1>(1), tileRow<1>(2), tileRow<1>(3), tileRow<1>(4)},
      {tileRow<2>(1), tileRow<2>(2), tileRow<2>(3), tileRow<2>(4)},
      {tileRow<3>(1), tileRow<3>(2), tileRow<3>(3), tileRow<3>(4)},
      {tileRow<4>(1), tileRow<4>(2), tileRow<4>(3), tileRow<4>(4)},
      {tileRow<5>(1), tileRow<5>(2), tileRow<5>(3), tileRow<5>(4)},
      {tileRow<6>(1), tileRow<6>(2), tileRow<6>(3), tileRow<6>(4)},
  };
  return table[mr - 1][nv - 1];
}

/// C[rows][cols] (+)= A · B over kLen; cols a multiple of 16.
void gemm(int64_t rows, int64_t cols, int64_t kLen, const float *a, int64_t as, int64_t ak,
          const float *b, int64_t bs, float *c, int64_t cs, bool accumulate) {
  for (int64_t c0 = 0; c0 < cols; c0 += 64) {
    const int nv = static_cast<int>(std::min<int64_t>(4, (cols - c0) / 16));
    for (int64_t r0 = 0; r0 < rows; r0 += kMr) {
      const int mr = static_cast<int>(std::min<int64_t>(kMr, rows - r0));
      tileFn(mr, nv)(kLen, a + r0 * as, as, ak, b + c0, bs, c + r0 * cs + c0, cs, accumulate);
    }
  }
}

/// The bf16 form for the two products over D (S = Q Kᵀ, dP = dY Vᵀ), 64
/// columns: C[r][c] = Σ_p A[r·as + p] · B[p·kBc + c], each element a pair of
/// bf16 (the lower one first), `vdpbf16ps` accumulating in f32.
template <int MR>
__attribute__((target("avx512bf16"))) void dotTile(int64_t pairs, const uint32_t *a,
                                                   int64_t as, const uint32_t *b, float *c) {
  __m512 acc[MR][4];
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r)
#pragma GCC unroll 4
    for (int v = 0; v < 4; ++v)
      acc[r][v] = _mm512_setzero_ps();
  for (int64_t k = 0; k < pairs; ++k) {
    __m512bh bv[4];
#pragma GCC unroll 4
    for (int v = 0; v < 4; ++v)
      bv[v] = (__m512bh)_mm512_loadu_si512(b + k * kBc + 16 * v);
#pragma GCC unroll 8
    for (int r = 0; r < MR; ++r) {
      const __m512bh x = (__m512bh)_mm512_set1_epi32(static_cast<int>(a[r * as + k]));
#pragma GCC unroll 4
      for (int v = 0; v < 4; ++v)
        acc[r][v] = _mm512_dpbf16_ps(acc[r][v], x, bv[v]);
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r)
#pragma GCC unroll 4
    for (int v = 0; v < 4; ++v)
      _mm512_storeu_ps(c + r * kBc + 16 * v, acc[r][v]);
}

/// C[rows][kBc] = A · B on bf16 pairs.
void dotGemm(int64_t rows, int64_t pairs, const uint32_t *a, int64_t as, const uint32_t *b,
             float *c) {
  using DotFn = void (*)(int64_t, const uint32_t *, int64_t, const uint32_t *, float *);
  static const DotFn table[kMr] = {dotTile<1>, dotTile<2>, dotTile<3>,
                                   dotTile<4>, dotTile<5>, dotTile<6>};
  for (int64_t r0 = 0; r0 < rows; r0 += kMr)
    table[std::min<int64_t>(kMr, rows - r0) - 1](pairs, a + r0 * as, as, b, c + r0 * kBc);
}

//===----------------------------------------------------------------------===//
// The backward
//===----------------------------------------------------------------------===//

struct Program {
  int64_t b, n2, part, kb0, kb1; ///< KV blocks [kb0, kb1) of batch b
};

class Backward {
public:
  Backward(const Problem &p, bool dot) : p_(p), dot_(dot) {}
  void run();

private:
  void prepass();
  void plan();
  void runProgram(const Program &w, float *scratch);
  void finish();

  /// Rows i with a kept (i, j) for some j in [j0, j1): [lo, hi], or lo > hi.
  void rowRange(const Problem::Band &band, int64_t sq, int64_t j0, int64_t j1, int64_t &lo,
                int64_t &hi) const {
    if (j0 < band.prefix) {
      lo = 0;
      hi = sq - 1;
      return;
    }
    lo = std::max<int64_t>(0, j0 - band.hi);
    hi = std::min<int64_t>(sq - 1, j1 - 1 - band.lo);
  }

  const Problem &p_;
  const bool dot_; ///< S and dP on bf16 pairs
  int64_t dp_ = 0, dvp_ = 0, parts_ = 1;
  Buffer q_, dy_, k_, v_;           ///< [head][token][dp_ or dvp_]
  Buffer qb_, dyb_;                 ///< with dot_: q, dy as bf16, [head][token][dp_ or dvp_]
  Buffer mx_, invL_, delta_;        ///< [n1][t1]
  Buffer dqPart_, rowPdP_;          ///< [parts][n1][t1][dp_], [parts][n1][t1]
  std::vector<Program> programs_;
};

void Backward::prepass() {
  const Problem &p = p_;
  dp_ = roundUp(p.d, 16);
  dvp_ = roundUp(p.dv, 16);
  q_ = allocate(p.n1 * p.t1 * dp_);
  dy_ = allocate(p.n1 * p.t1 * dvp_);
  k_ = allocate(p.n2 * p.t2 * dp_);
  v_ = allocate(p.n2 * p.t2 * dvp_);
  if (dot_) {
    qb_ = allocate(p.n1 * p.t1 * dp_ / 2);
    dyb_ = allocate(p.n1 * p.t1 * dvp_ / 2);
  }
  mx_ = allocate(p.n1 * p.t1);
  invL_ = allocate(p.n1 * p.t1);
  delta_ = allocate(p.n1 * p.t1);
  const DataType t = p.dtype;
  const int64_t es = host::elementSize(t);
  const char *q = static_cast<const char *>(p.q.firstElement());
  const char *dy = static_cast<const char *>(p.dy.firstElement());
  const char *o = static_cast<const char *>(p.o.firstElement());
  const char *k = static_cast<const char *>(p.k.firstElement());
  const char *v = static_cast<const char *>(p.v.firstElement());
  const float *m = p.m.as<const float>(), *l = p.l.as<const float>();
  const int64_t n1 = p.n1, n2 = p.n2, d = p.d, dv = p.dv, t1 = p.t1, t2 = p.t2;
  // Rows (b, i) to their statistics' element (lane 0), section 2.3.
  std::vector<int64_t> statRow(static_cast<size_t>(t1), -1), batchOf(static_cast<size_t>(t1), -1);
  for (int64_t b = 0; b < p.bin; ++b)
    for (int64_t i = 0; i < p.sq(b); ++i) {
      const int64_t tok = p.qBegin(b) + i;
      batchOf[static_cast<size_t>(tok)] = b;
      statRow[static_cast<size_t>(tok)] = i;
    }
#pragma omp parallel for schedule(static)
  for (int64_t tok = 0; tok < std::max(t1, t2); ++tok) {
    std::vector<float> orow(static_cast<size_t>(dvp_));
    for (int64_t h = 0; tok < t1 && h < n1; ++h) {
      float *qr = q_.get() + (h * t1 + tok) * dp_;
      float *dyr = dy_.get() + (h * t1 + tok) * dvp_;
      widenRow(q + ((tok * n1 + h) * d) * es, t, d, qr, dp_);
      widenRow(dy + ((tok * n1 + h) * dv) * es, t, dv, dyr, dvp_);
      widenRow(o + ((tok * n1 + h) * dv) * es, t, dv, orow.data(), dvp_);
      if (dot_) {
        uint16_t *qb = reinterpret_cast<uint16_t *>(qb_.get()) + (h * t1 + tok) * dp_;
        uint16_t *dyb = reinterpret_cast<uint16_t *>(dyb_.get()) + (h * t1 + tok) * dvp_;
        std::memcpy(qb, q + ((tok * n1 + h) * d) * es, static_cast<size_t>(d * 2));
        std::fill(qb + d, qb + dp_, uint16_t{0});
        std::memcpy(dyb, dy + ((tok * n1 + h) * dv) * es, static_cast<size_t>(dv * 2));
        std::fill(dyb + dv, dyb + dvp_, uint16_t{0});
      }
      __m512 acc = _mm512_setzero_ps();
      for (int64_t c = 0; c < dvp_; c += 16)
        acc = _mm512_fmadd_ps(_mm512_loadu_ps(dyr + c), _mm512_loadu_ps(orow.data() + c), acc);
      const int64_t e = h * t1 + tok;
      delta_[e] = _mm512_reduce_add_ps(acc);
      const int64_t b = batchOf[static_cast<size_t>(tok)];
      if (b < 0) {
        mx_[e] = 0;
        invL_[e] = 0;
        continue;
      }
      const int64_t i = statRow[static_cast<size_t>(tok)];
      const int64_t s = p.statsTnd ? (tok * n1 + h) * 8
                                   : (p.qBegin(b) * n1 + h * p.sq(b) + i) * 8;
      mx_[e] = m[s];
      invL_[e] = l[s] > 0 ? 1.0f / l[s] : 0.0f;
    }
    for (int64_t h = 0; tok < t2 && h < n2; ++h) {
      widenRow(k + ((tok * n2 + h) * d) * es, t, d, k_.get() + (h * t2 + tok) * dp_, dp_);
      widenRow(v + ((tok * n2 + h) * dv) * es, t, dv, v_.get() + (h * t2 + tok) * dvp_, dvp_);
    }
  }
}

void Backward::plan() {
  const Problem &p = p_;
  int64_t live = 0;
  for (int64_t b = 0; b < p.bin; ++b)
    live += p.skv(b) > 0;
  const int64_t base = live * p.n2;
  parts_ = base == 0 ? 1 : std::clamp<int64_t>((kTargetPrograms + base - 1) / base, 1, 8);
  for (int64_t b = 0; b < p.bin; ++b) {
    const int64_t skv = p.skv(b), sq = p.sq(b);
    if (skv == 0)
      continue;
    const int64_t blocks = (skv + kBc - 1) / kBc;
    // Kept positions per block, for an even split of the work.
    const Problem::Band band = p.band(b);
    std::vector<double> cum(static_cast<size_t>(blocks + 1), 0.0);
    for (int64_t kb = 0; kb < blocks; ++kb) {
      double w = 0;
      for (int64_t j = kb * kBc; j < std::min(skv, (kb + 1) * kBc); ++j) {
        int64_t lo, hi;
        rowRange(band, sq, j, j + 1, lo, hi);
        w += static_cast<double>(std::max<int64_t>(0, hi - lo + 1));
      }
      cum[static_cast<size_t>(kb + 1)] = cum[static_cast<size_t>(kb)] + w + 1.0;
    }
    const int64_t parts = std::min(parts_, blocks);
    for (int64_t n2 = 0; n2 < p.n2; ++n2) {
      int64_t kb = 0;
      for (int64_t part = 0; part < parts_; ++part) {
        // Parts past the block count own nothing but still clear their slot.
        int64_t end = blocks;
        if (part < parts - 1) {
          const double goal =
              cum.back() * static_cast<double>(part + 1) / static_cast<double>(parts);
          end = kb + 1;
          while (end < blocks - (parts - 1 - part) && cum[static_cast<size_t>(end + 1)] <= goal)
            ++end;
        }
        programs_.push_back(Program{b, n2, part, kb, end});
        kb = end;
      }
    }
  }
}

void Backward::runProgram(const Program &w, float *scratch) {
  const Problem &p = p_;
  const int64_t dp = dp_, dvp = dvp_, t1 = p.t1, t2 = p.t2, g = p.g;
  const int64_t sq = p.sq(w.b), skv = p.skv(w.b), q0 = p.qBegin(w.b), k0 = p.kBegin(w.b);
  const Problem::Band band = p.band(w.b);
  const float sigma = p.scale;
  float *kt = scratch;                 // [dp][kBc]
  float *vt = kt + dp * kBc;           // [dvp][kBc]
  float *sb = vt + dvp * kBc;          // [kBr][kBc]: S, then P
  float *pb = sb + kBr * kBc;          // [kBr][kBc]: dP, then dS
  float *dkAcc = pb + kBr * kBc;       // [kBc][dp]
  float *dvAcc = dkAcc + kBc * dp;     // [kBc][dvp]
  // With dot_: Kᵀ and Vᵀ as bf16 pairs, [dp / 2][kBc] and [dvp / 2][kBc].
  uint32_t *ktp = reinterpret_cast<uint32_t *>(dvAcc + kBc * dvp);
  uint32_t *vtp = ktp + dp / 2 * kBc;
  // This part's dQ slot and row sums start at zero.
  for (int64_t gi = 0; gi < g; ++gi) {
    const int64_t h = w.n2 * g + gi;
    std::memset(dqPart_.get() + ((w.part * p.n1 + h) * t1 + q0) * dp, 0,
                static_cast<size_t>(sq * dp) * sizeof(float));
    if (p.sink)
      std::memset(rowPdP_.get() + (w.part * p.n1 + h) * t1 + q0, 0,
                  static_cast<size_t>(sq) * sizeof(float));
  }
  // Lane offsets and the band edges as 32-bit lanes (clamped; lengths fit).
  const __m512i iota = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  const int32_t lim = 1 << 30;
  const __m512i loV = _mm512_set1_epi32(static_cast<int32_t>(std::clamp<int64_t>(band.lo, -lim, lim)));
  const __m512i hiV = _mm512_set1_epi32(static_cast<int32_t>(std::clamp<int64_t>(band.hi, -lim, lim)));
  const __m512i preV =
      _mm512_set1_epi32(static_cast<int32_t>(std::clamp<int64_t>(band.prefix, -lim, lim)));
  const DataType t = p.dtype;
  const int64_t es = host::elementSize(t);
  char *dkOut = static_cast<char *>(p.dk.firstElement());
  char *dvOut = static_cast<char *>(p.dvOut.firstElement());

  for (int64_t kb = w.kb0; kb < w.kb1; ++kb) {
    const int64_t j0 = kb * kBc, cols = std::min(kBc, skv - j0);
    const float *kn = k_.get() + (w.n2 * t2 + k0 + j0) * dp;
    const float *vn = v_.get() + (w.n2 * t2 + k0 + j0) * dvp;
    for (int64_t c = 0; c < kBc && !dot_; ++c) {
      for (int64_t e = 0; e < dp; ++e)
        kt[e * kBc + c] = c < cols ? kn[c * dp + e] : 0.0f;
      for (int64_t e = 0; e < dvp; ++e)
        vt[e * kBc + c] = c < cols ? vn[c * dvp + e] : 0.0f;
    }
    if (dot_) {
      const uint16_t *kIn = p.k.as<const uint16_t>(), *vIn = p.v.as<const uint16_t>();
      auto pack = [&](const uint16_t *in, int64_t width, int64_t padded, uint32_t *out) {
        for (int64_t c = 0; c < kBc; ++c) {
          const uint16_t *row = in + ((k0 + j0 + c) * p.n2 + w.n2) * width;
          for (int64_t e = 0; e < padded; e += 2) {
            const uint32_t lo = c < cols && e < width ? row[e] : 0;
            const uint32_t hi = c < cols && e + 1 < width ? row[e + 1] : 0;
            out[e / 2 * kBc + c] = lo | hi << 16;
          }
        }
      };
      pack(kIn, p.d, dp, ktp);
      pack(vIn, p.dv, dvp, vtp);
    }
    std::memset(dkAcc, 0, static_cast<size_t>(kBc * dp) * sizeof(float));
    std::memset(dvAcc, 0, static_cast<size_t>(kBc * dvp) * sizeof(float));
    int64_t iLo, iHi;
    rowRange(band, sq, j0, j0 + cols, iLo, iHi);
    for (int64_t gi = 0; gi < g && iLo <= iHi; ++gi) {
      const int64_t h = w.n2 * g + gi;
      float *rowSum = p.sink ? rowPdP_.get() + (w.part * p.n1 + h) * t1 + q0 : nullptr;
      for (int64_t i0 = iLo; i0 <= iHi; i0 += kBr) {
        const int64_t rows = std::min(kBr, iHi + 1 - i0);
        const bool allKept = cols == kBc && ((j0 + cols - 1 < band.prefix) ||
                                             (j0 - (i0 + rows - 1) >= band.lo &&
                                              j0 + cols - 1 - i0 <= band.hi));
        const int64_t row0 = h * t1 + q0 + i0;
        const float *qi = q_.get() + row0 * dp, *dyi = dy_.get() + row0 * dvp;
        float *dqi = dqPart_.get() + (w.part * p.n1 * t1 + row0) * dp;
        if (dot_) {
          dotGemm(rows, dp / 2, reinterpret_cast<const uint32_t *>(qb_.get()) + row0 * dp / 2,
                  dp / 2, ktp, sb);
          dotGemm(rows, dvp / 2, reinterpret_cast<const uint32_t *>(dyb_.get()) + row0 * dvp / 2,
                  dvp / 2, vtp, pb);
        } else {
          gemm(rows, kBc, dp, qi, dp, 1, kt, kBc, sb, kBc, false);
          gemm(rows, kBc, dvp, dyi, dvp, 1, vt, kBc, pb, kBc, false);
        }
        const __m512 sg = _mm512_set1_ps(sigma);
        for (int64_t r = 0; r < rows; ++r) {
          const int64_t e = row0 + r;
          const __m512 m = _mm512_set1_ps(mx_[e]), il = _mm512_set1_ps(invL_[e]);
          const __m512 dl = _mm512_set1_ps(delta_[e]);
          const __m512i iV = _mm512_set1_epi32(static_cast<int32_t>(i0 + r));
          __m512 pdp = _mm512_setzero_ps();
          for (int64_t c = 0; c < kBc; c += 16) {
            float *sr = sb + r * kBc + c, *pr = pb + r * kBc + c;
            __m512 pv = _mm512_mul_ps(exp16(_mm512_fmsub_ps(sg, _mm512_loadu_ps(sr), m)), il);
            if (!allKept) {
              const __m512i cV = _mm512_add_epi32(iota, _mm512_set1_epi32(static_cast<int32_t>(c)));
              const __m512i jV = _mm512_add_epi32(cV, _mm512_set1_epi32(static_cast<int32_t>(j0)));
              const __m512i diff = _mm512_sub_epi32(jV, iV);
              __mmask16 keep = _mm512_cmpge_epi32_mask(diff, loV) & _mm512_cmple_epi32_mask(diff, hiV);
              keep |= _mm512_cmplt_epi32_mask(jV, preV);
              keep &= _mm512_cmplt_epi32_mask(cV, _mm512_set1_epi32(static_cast<int32_t>(cols)));
              pv = _mm512_maskz_mov_ps(keep, pv);
            }
            const __m512 dpv = _mm512_loadu_ps(pr);
            pdp = _mm512_fmadd_ps(pv, dpv, pdp);
            _mm512_storeu_ps(sr, pv);
            _mm512_storeu_ps(pr, _mm512_mul_ps(pv, _mm512_sub_ps(dpv, dl)));
          }
          if (rowSum)
            rowSum[i0 + r] += _mm512_reduce_add_ps(pdp);
        }
        gemm(cols, dvp, rows, sb, 1, kBc, dyi, dvp, dvAcc, dvp, true); // dV += Pᵀ dY
        gemm(cols, dp, rows, pb, 1, kBc, qi, dp, dkAcc, dp, true);     // dK += dSᵀ Q
        gemm(rows, dp, cols, pb, kBc, 1, kn, dp, dqi, dp, true);       // dQ += dS K
      }
    }
    for (int64_t c = 0; c < cols; ++c) {
      const int64_t row = (k0 + j0 + c) * p.n2 + w.n2;
      narrowRow(dkAcc + c * dp, sigma, t, p.d, dkOut + row * p.d * es);
      narrowRow(dvAcc + c * dvp, 1.0f, t, p.dv, dvOut + row * p.dv * es);
    }
  }
}

void Backward::finish() {
  const Problem &p = p_;
  const int64_t t1 = p.t1, n1 = p.n1, dp = dp_;
  const DataType t = p.dtype;
  const int64_t es = host::elementSize(t);
  std::vector<char> live(static_cast<size_t>(t1), 0);
  for (int64_t b = 0; b < p.bin; ++b)
    if (p.skv(b) > 0)
      for (int64_t tok = p.qBegin(b); tok < p.qBegin(b) + p.sq(b); ++tok)
        live[static_cast<size_t>(tok)] = 1;
  char *dq = static_cast<char *>(p.dq.firstElement());
#pragma omp parallel for schedule(static)
  for (int64_t tok = 0; tok < t1; ++tok) {
    std::vector<float> sum(static_cast<size_t>(dp));
    for (int64_t h = 0; h < n1; ++h) {
      std::fill(sum.begin(), sum.end(), 0.0f);
      if (live[static_cast<size_t>(tok)])
        for (int64_t part = 0; part < parts_; ++part) {
          const float *src = dqPart_.get() + ((part * n1 + h) * t1 + tok) * dp;
          for (int64_t c = 0; c < dp; c += 16)
            _mm512_storeu_ps(sum.data() + c, _mm512_add_ps(_mm512_loadu_ps(sum.data() + c),
                                                           _mm512_loadu_ps(src + c)));
        }
      narrowRow(sum.data(), p.scale, t, p.d, dq + (tok * n1 + h) * p.d * es);
    }
  }
  // Key rows in no batch get zero gradients.
  const int64_t kEnd = p.bin ? p.ck.back() : 0;
  if (kEnd < p.t2) {
    std::memset(static_cast<char *>(p.dk.firstElement()) + kEnd * p.n2 * p.d * es, 0,
                static_cast<size_t>((p.t2 - kEnd) * p.n2 * p.d * es));
    std::memset(static_cast<char *>(p.dvOut.firstElement()) + kEnd * p.n2 * p.dv * es, 0,
                static_cast<size_t>((p.t2 - kEnd) * p.n2 * p.dv * es));
  }
  if (!p.dsink)
    return;
  float *dsink = p.dsink->as<float>();
  for (int64_t h = 0; h < n1; ++h) {
    if (!p.sink) {
      dsink[h] = 0.0f;
      continue;
    }
    const double theta = p.sinkT->as<const float>()[h];
    double sum = 0;
    for (int64_t tok = 0; tok < t1; ++tok) {
      if (!live[static_cast<size_t>(tok)])
        continue;
      const int64_t e = h * t1 + tok;
      double rs = 0;
      for (int64_t part = 0; part < parts_; ++part)
        rs += rowPdP_[(part * n1 + h) * t1 + tok];
      sum += std::exp(theta - static_cast<double>(mx_[e])) * static_cast<double>(invL_[e]) * rs;
    }
    dsink[h] = static_cast<float>(-sum);
  }
}

void Backward::run() {
  const Problem &p = p_;
  prepass();
  plan();
  dqPart_ = allocate(parts_ * p.n1 * p.t1 * dp_);
  if (p.sink)
    rowPdP_ = allocate(parts_ * p.n1 * p.t1);
  const int64_t scratchFloats = (dp_ + dvp_) * kBc * 2 + 2 * kBr * kBc + (dp_ + dvp_) / 2 * kBc;
  const int64_t count = static_cast<int64_t>(programs_.size());
#pragma omp parallel
  {
    Buffer scratch = allocate(scratchFloats);
#pragma omp for schedule(dynamic, 1)
    for (int64_t i = 0; i < count; ++i)
      runProgram(programs_[static_cast<size_t>(i)], scratch.get());
  }
  finish();
}

} // namespace

void scoreGradAvx512(const Problem &p, bool bf16Dot) {
  Backward(p, bf16Dot).run();
}

} // namespace tilejit::ops::fag
