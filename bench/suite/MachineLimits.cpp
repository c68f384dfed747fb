//===- MachineLimits.cpp - The machine's own limits, measured in the run --===//
#include "MachineLimits.h"

#include "jit/Compiler.h"

#include <immintrin.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace tilejit::bench {

namespace {

using Clock = std::chrono::steady_clock;

template <typename F> double bestSeconds(F &&f, int reps = 5) {
  double best = 1e30;
  for (int i = 0; i < reps; ++i) {
    auto t = Clock::now();
    f();
    best =
        std::min(best, std::chrono::duration<double>(Clock::now() - t).count());
  }
  return best;
}

__attribute__((target("avx512f,fma"))) double fmaAvx512(long iters) {
  __m512 acc[12];
  for (auto &a : acc)
    a = _mm512_set1_ps(1.0f);
  const __m512 m = _mm512_set1_ps(0.999999f), c = _mm512_set1_ps(1e-7f);
  for (long i = 0; i < iters; ++i)
    for (auto &a : acc)
      a = _mm512_fmadd_ps(a, m, c);
  __m512 s = acc[0];
  for (int i = 1; i < 12; ++i)
    s = _mm512_add_ps(s, acc[i]);
  return _mm512_reduce_add_ps(s);
}

__attribute__((target("avx2,fma"))) double fmaAvx2(long iters) {
  __m256 acc[12];
  for (auto &a : acc)
    a = _mm256_set1_ps(1.0f);
  const __m256 m = _mm256_set1_ps(0.999999f), c = _mm256_set1_ps(1e-7f);
  for (long i = 0; i < iters; ++i)
    for (auto &a : acc)
      a = _mm256_fmadd_ps(a, m, c);
  float out[8];
  __m256 s = acc[0];
  for (int i = 1; i < 12; ++i)
    s = _mm256_add_ps(s, acc[i]);
  _mm256_storeu_ps(out, s);
  return out[0];
}

__attribute__((target("avx512f,avx512bf16"))) double dotBf16(long iters) {
  __m512 acc[12];
  for (auto &a : acc)
    a = _mm512_set1_ps(1.0f);
  const __m512bh x = (__m512bh)_mm512_set1_epi32(0x3f803f80); // (1, 1) in bf16
  const __m512bh y = (__m512bh)_mm512_set1_epi32(0x33d633d6); // about 1e-7
  for (long i = 0; i < iters; ++i)
    for (auto &a : acc)
      a = _mm512_dpbf16_ps(a, x, y);
  __m512 s = acc[0];
  for (int i = 1; i < 12; ++i)
    s = _mm512_add_ps(s, acc[i]);
  return _mm512_reduce_add_ps(s);
}

volatile double sink;

/// 4 accumulator tiles of 16 x 16 f32, each taking `iters` tdpbf16ps of
/// 16 x 32 by 32 x 16 bf16 tiles (16384 flops each).
__attribute__((target("amx-tile,amx-bf16"))) double amxBf16(long iters) {
  struct alignas(64) Config {
    uint8_t palette = 1, startRow = 0, reserved[14] = {};
    uint16_t colsb[16] = {};
    uint8_t rows[16] = {};
  } cfg;
  for (int i = 0; i < 8; ++i) {
    cfg.colsb[i] = 64;
    cfg.rows[i] = 16;
  }
  alignas(64) static uint16_t a[16 * 32], b[16 * 32];
  alignas(64) static float c[16 * 16];
  for (int i = 0; i < 16 * 32; ++i) {
    a[i] = 0x3f80;
    b[i] = 0x33d6;
  }
  _tile_loadconfig(&cfg);
  _tile_zero(0);
  _tile_zero(1);
  _tile_zero(2);
  _tile_zero(3);
  _tile_loadd(4, a, 64);
  _tile_loadd(5, a, 64);
  _tile_loadd(6, b, 64);
  _tile_loadd(7, b, 64);
  for (long i = 0; i < iters; ++i) {
    _tile_dpbf16ps(0, 4, 6);
    _tile_dpbf16ps(1, 4, 7);
    _tile_dpbf16ps(2, 5, 6);
    _tile_dpbf16ps(3, 5, 7);
  }
  _tile_stored(0, c, 64);
  _tile_release();
  return c[0];
}

} // namespace

double amxBf16PeakGflops() {
  __builtin_cpu_init();
  if (!__builtin_cpu_supports("amx-bf16") || !jit::requestAmxPermission())
    return 0;
  const long iters = 2'000'000;
  double s = bestSeconds([&] { sink = amxBf16(iters); }, 3);
  return 4.0 * iters * 16 * 16 * 32 * 2 / s / 1e9;
}

double fmaPeakGflops() {
  const long iters = 20'000'000;
  bool wide = __builtin_cpu_supports("avx512f");
  int lanes = wide ? 16 : 8;
  double s =
      bestSeconds([&] { sink = wide ? fmaAvx512(iters) : fmaAvx2(iters); }, 3);
  return 12.0 * iters * lanes * 2 / s / 1e9;
}

double bf16DotPeakGflops() {
  if (!__builtin_cpu_supports("avx512bf16"))
    return 0;
  const long iters = 20'000'000;
  double s = bestSeconds([&] { sink = dotBf16(iters); }, 3);
  return 12.0 * iters * 16 * 4 / s / 1e9;
}

/// Integer sum of `n` bytes at `p`, read with four independent AVX2
/// accumulators (load-bound; integer adds, so the bytes may be any data).
__attribute__((target("avx2"))) long long sumBytes(const char *p, size_t n) {
  __m256i a0 = _mm256_setzero_si256(), a1 = a0, a2 = a0, a3 = a0;
  size_t i = 0;
  for (; i + 128 <= n; i += 128) {
    a0 = _mm256_add_epi32(
        a0, _mm256_loadu_si256(reinterpret_cast<const __m256i *>(p + i)));
    a1 = _mm256_add_epi32(
        a1, _mm256_loadu_si256(reinterpret_cast<const __m256i *>(p + i + 32)));
    a2 = _mm256_add_epi32(
        a2, _mm256_loadu_si256(reinterpret_cast<const __m256i *>(p + i + 64)));
    a3 = _mm256_add_epi32(
        a3, _mm256_loadu_si256(reinterpret_cast<const __m256i *>(p + i + 96)));
  }
  alignas(32) int out[8];
  _mm256_store_si256(
      reinterpret_cast<__m256i *>(out),
      _mm256_add_epi32(_mm256_add_epi32(a0, a1), _mm256_add_epi32(a2, a3)));
  long long s = 0;
  for (int v : out)
    s += v;
  for (; i < n; ++i)
    s += p[i];
  return s;
}

/// One read of `n` floats at `p`, split over `threads` threads.
static void readPass(const float *p, size_t n, int threads) {
  const char *bytes = reinterpret_cast<const char *>(p);
  long long total = 0;
#pragma omp parallel reduction(+ : total) num_threads(threads)
  {
    size_t t = static_cast<size_t>(omp_get_thread_num());
    size_t nt = static_cast<size_t>(omp_get_num_threads());
    size_t chunk = n / nt, begin = t * chunk,
           end = t == nt - 1 ? n : begin + chunk;
    total +=
        sumBytes(bytes + begin * sizeof(float), (end - begin) * sizeof(float));
  }
  sink = static_cast<double>(total);
}

double readBandwidthGBs(size_t bytes, int threads) {
  size_t n = bytes / sizeof(float);
  std::vector<float> buf(n, 1.0f);
  double s = bestSeconds([&] { readPass(buf.data(), n, threads); });
  return bytes / s / 1e9;
}

ReadProbe::ReadProbe(size_t bytes, int threads)
    : buf_(bytes / sizeof(float), 1.0f), threads_(threads) {}

double ReadProbe::seconds() {
  auto t = Clock::now();
  readPass(buf_.data(), buf_.size(), threads_);
  return std::chrono::duration<double>(Clock::now() - t).count();
}

double readRegionsSeconds(const std::vector<Region> &regions, int threads) {
  auto t = Clock::now();
  long long total = 0;
#pragma omp parallel reduction(+ : total) num_threads(threads)
  {
    const size_t me = static_cast<size_t>(omp_get_thread_num());
    const size_t nt = static_cast<size_t>(omp_get_num_threads());
    for (size_t i = me; i < regions.size(); i += nt)
      total += sumBytes(static_cast<const char *>(regions[i].data),
                        regions[i].bytes);
  }
  sink = static_cast<double>(total);
  return std::chrono::duration<double>(Clock::now() - t).count();
}

double copyBandwidthGBs(size_t bytes, int threads) {
  std::vector<char> a(bytes, 1), b(bytes, 0);
  double s = bestSeconds([&] {
#pragma omp parallel num_threads(threads)
    {
      int t = omp_get_thread_num(), nt = omp_get_num_threads();
      size_t chunk = bytes / nt, begin = t * chunk,
             end = t == nt - 1 ? bytes : begin + chunk;
      std::memcpy(b.data() + begin, a.data() + begin, end - begin);
    }
  });
  return 2.0 * bytes / s / 1e9;
}

} // namespace tilejit::bench
