//===- MachineLimits.cpp - The machine's own limits, measured in the run --===//
#include "MachineLimits.h"

#include "jit/Compiler.h"

#include <immintrin.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <new>
#include <utility>
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

/// The chains of the peak probes: independent accumulators enough to cover
/// the latency of each unit at its issue rate (a vdpbf16ps chain on Zen 5
/// needs more than 12, which left the bf16 limit below what the kernels'
/// 16-accumulator blocks reach), within the 32 vector registers.
constexpr int kChains = 24;

__attribute__((target("avx512f,fma"))) double fmaAvx512(long iters) {
  __m512 acc[kChains];
  for (auto &a : acc)
    a = _mm512_set1_ps(1.0f);
  const __m512 m = _mm512_set1_ps(0.999999f), c = _mm512_set1_ps(1e-7f);
  for (long i = 0; i < iters; ++i)
#pragma GCC unroll 24 // every chain in a register
    for (auto &a : acc)
      a = _mm512_fmadd_ps(a, m, c);
  __m512 s = acc[0];
  for (int i = 1; i < kChains; ++i)
    s = _mm512_add_ps(s, acc[i]);
  return _mm512_reduce_add_ps(s);
}

__attribute__((target("avx2,fma"))) double fmaAvx2(long iters) {
  __m256 acc[12]; // 16 registers: 12 chains and the two operands
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
  __m512 acc[kChains];
  for (auto &a : acc)
    a = _mm512_set1_ps(1.0f);
  const __m512bh x = (__m512bh)_mm512_set1_epi32(0x3f803f80); // (1, 1) in bf16
  const __m512bh y = (__m512bh)_mm512_set1_epi32(0x33d633d6); // about 1e-7
  for (long i = 0; i < iters; ++i)
#pragma GCC unroll 24 // every chain in a register
    for (auto &a : acc)
      a = _mm512_dpbf16_ps(a, x, y);
  __m512 s = acc[0];
  for (int i = 1; i < kChains; ++i)
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
  const long iters = 10'000'000;
  bool wide = __builtin_cpu_supports("avx512f");
  int lanes = wide ? 16 : 8, chains = wide ? kChains : 12;
  double s =
      bestSeconds([&] { sink = wide ? fmaAvx512(iters) : fmaAvx2(iters); }, 3);
  return double(chains) * iters * lanes * 2 / s / 1e9;
}

double bf16DotPeakGflops() {
  if (!__builtin_cpu_supports("avx512bf16"))
    return 0;
  const long iters = 10'000'000;
  double s = bestSeconds([&] { sink = dotBf16(iters); }, 3);
  return double(kChains) * iters * 16 * 4 / s / 1e9;
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

//===----------------------------------------------------------------------===//
// Bandwidth probes
//===----------------------------------------------------------------------===//

namespace {

/// Bytes of each range a stream walks per turn.
constexpr size_t kStep = 256;

/// Thread `t` of `nt`'s share of `bytes`: 64-byte aligned pieces, the last
/// thread taking what is left.
std::pair<size_t, size_t> shareOf(size_t bytes, size_t t, size_t nt) {
  const size_t chunk = bytes / nt / 64 * 64;
  const size_t begin = t * chunk;
  return {begin, t == nt - 1 ? bytes : begin + chunk};
}

__attribute__((target("avx2"))) inline void prefetchStep(const char *p,
                                                         int distance) {
  if (distance <= 0)
    return;
  for (size_t b = 0; b < kStep; b += 64)
    _mm_prefetch(p + distance + b, _MM_HINT_T0);
}

/// Sum of `n` bytes at `p` walked as `streams` ranges together.
__attribute__((target("avx2"))) long long sumStreams(const char *p, size_t n,
                                                     const StreamPlan &plan) {
  const size_t k = static_cast<size_t>(std::max(plan.streams, 1));
  const size_t part = n / k / kStep * kStep;
  __m256i acc[4] = {_mm256_setzero_si256(), _mm256_setzero_si256(),
                    _mm256_setzero_si256(), _mm256_setzero_si256()};
  for (size_t o = 0; o < part; o += kStep)
    for (size_t s = 0; s < k; ++s) {
      const char *q = p + s * part + o;
      prefetchStep(q, plan.prefetchBytes);
      for (size_t b = 0; b < kStep; b += 128)
        for (int j = 0; j < 4; ++j)
          acc[j] = _mm256_add_epi32(
              acc[j], _mm256_loadu_si256(
                          reinterpret_cast<const __m256i *>(q + b + 32 * j)));
    }
  alignas(32) int out[8];
  _mm256_store_si256(reinterpret_cast<__m256i *>(out),
                     _mm256_add_epi32(_mm256_add_epi32(acc[0], acc[1]),
                                      _mm256_add_epi32(acc[2], acc[3])));
  long long total = 0;
  for (int v : out)
    total += v;
  return total + sumBytes(p + k * part, n - k * part);
}

/// Copy of `n` bytes from `src` to `dst` walked as `streams` ranges
/// together. Non-temporal stores need `dst` 32-byte aligned (the shares are).
__attribute__((target("avx2"))) void
copyStreams(char *dst, const char *src, size_t n, const StreamPlan &plan) {
  if (plan.libc) {
    std::memcpy(dst, src, n);
    return;
  }
  const size_t k = static_cast<size_t>(std::max(plan.streams, 1));
  const size_t part = n / k / kStep * kStep;
  for (size_t o = 0; o < part; o += kStep)
    for (size_t s = 0; s < k; ++s) {
      const char *q = src + s * part + o;
      char *w = dst + s * part + o;
      prefetchStep(q, plan.prefetchBytes);
      for (size_t b = 0; b < kStep; b += 32) {
        const __m256i v =
            _mm256_loadu_si256(reinterpret_cast<const __m256i *>(q + b));
        if (plan.nonTemporal)
          _mm256_stream_si256(reinterpret_cast<__m256i *>(w + b), v);
        else
          _mm256_storeu_si256(reinterpret_cast<__m256i *>(w + b), v);
      }
    }
  std::memcpy(dst + k * part, src + k * part, n - k * part);
  if (plan.nonTemporal)
    _mm_sfence();
}

} // namespace

std::string planName(const StreamPlan &plan, bool copy) {
  if (copy && plan.libc)
    return "memcpy";
  std::string name = std::to_string(plan.streams) +
                     (plan.streams == 1 ? " stream" : " streams");
  if (plan.prefetchBytes > 0)
    name += ", prefetch " + std::to_string(plan.prefetchBytes) + " B";
  if (copy)
    name += plan.nonTemporal ? ", non-temporal stores" : ", regular stores";
  return name;
}

// The plans cover what changed the result on the development host (several
// streams per thread, prefetch, non-temporal stores) and the single-stream
// loops the limits used to be, so that a limit never drops below what the
// simpler probe gives.
const std::vector<StreamPlan> &readPlans() {
  static const std::vector<StreamPlan> plans = {
      {1, 0}, {1, 1024}, {2, 0}, {2, 1024}, {4, 0}, {4, 1024}, {8, 1024}};
  return plans;
}

const std::vector<StreamPlan> &copyPlans() {
  static const std::vector<StreamPlan> plans = {
      {1, 0, false, true}, {4, 1024, false, false}, {1, 0, true, false},
      {2, 0, true, false}, {4, 0, true, false},     {4, 2048, true, false},
      {8, 0, true, false}, {8, 2048, true, false}};
  return plans;
}

void Buffer::Free::operator()(char *p) const { std::free(p); }

Buffer::Buffer(size_t bytes, unsigned char fill) : bytes_(bytes) {
  const size_t rounded = (std::max<size_t>(bytes, 1) + 63) / 64 * 64;
  data_.reset(static_cast<char *>(std::aligned_alloc(64, rounded)));
  if (!data_)
    throw std::bad_alloc();
  std::memset(data_.get(), fill, rounded);
}

double readSeconds(const char *p, size_t bytes, int threads,
                   const StreamPlan &plan) {
  const auto t0 = Clock::now();
  long long total = 0;
#pragma omp parallel reduction(+ : total) num_threads(threads)
  {
    const auto [begin, end] =
        shareOf(bytes, static_cast<size_t>(omp_get_thread_num()),
                static_cast<size_t>(omp_get_num_threads()));
    total += sumStreams(p + begin, end - begin, plan);
  }
  const double s = std::chrono::duration<double>(Clock::now() - t0).count();
  sink = static_cast<double>(total);
  return s;
}

double copySeconds(char *dst, const char *src, size_t bytes, int threads,
                   const StreamPlan &plan) {
  const auto t0 = Clock::now();
#pragma omp parallel num_threads(threads)
  {
    const auto [begin, end] =
        shareOf(bytes, static_cast<size_t>(omp_get_thread_num()),
                static_cast<size_t>(omp_get_num_threads()));
    copyStreams(dst + begin, src + begin, end - begin, plan);
  }
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

double readBandwidthGBs(size_t bytes, int threads) {
  Buffer buf(bytes);
  double best = 1e30;
  for (const StreamPlan &plan : readPlans())
    best = std::min(best, bestSeconds([&] {
                      readSeconds(buf.data(), bytes, threads, plan);
                    }));
  return static_cast<double>(bytes) / best / 1e9;
}

double copyBandwidthGBs(size_t bytes, int threads) {
  Buffer a(bytes, 1), b(bytes, 0);
  double best = 1e30;
  for (const StreamPlan &plan : copyPlans())
    best = std::min(best, bestSeconds([&] {
                      copySeconds(b.data(), a.data(), bytes, threads, plan);
                    }));
  return 2.0 * static_cast<double>(bytes) / best / 1e9;
}

ReadProbe::ReadProbe(size_t bytes, int threads)
    : buf_(bytes), threads_(threads) {}

double ReadProbe::seconds() {
  return readSeconds(buf_.data(), buf_.size(), threads_, StreamPlan{});
}

} // namespace tilejit::bench
