//===- ScatterPaKvCacheBench.cpp - ScatterPaKvCache against its twin and memcpy
//===//
//
// Prefill-sized scatters (thousands of tokens into caches larger than L2) and
// decode-sized ones (a few tokens), ND and PA_NZ, f16. Counters: GB/s of bytes
// moved (read + written, key and value), the machine's copy bandwidth at the
// same working-set size measured in this run (`of_copy_bw`, best runs of
// both), and `vs_handwritten` = twin time / kernel time (> 1: generated is
// faster; `call_vs_handwritten` counts phase 1 too), medians over
// alternating runs.
// BM_ScatterHostOverhead times a decode-sized call through the C API (phase 1
// and phase 2 on the default stream), end to end.
//
//===----------------------------------------------------------------------===//
#include "MachineLimits.h"

#include "acl/acl.h"
#include "aclnnop/aclnn_scatter_pa_kv_cache.h"
#include "ops/common/StreamCopy.h"
#include "ops/runtime/TensorView.h"
#include "ops/samples/Samples.h"
#include "ops/scatter_pa_kv_cache/ScatterPaKvCache.h"

#include <benchmark/benchmark.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <numeric>
#include <random>
#include <vector>

using namespace tilejit;
using runtime::DataType;
using runtime::TensorView;
using bench::median;
using bench::seconds;

namespace {

/// One problem: new key/value rows, the caches and the slot mapping, as host
/// buffers and views.
struct Problem {
  bool nz = false;
  int64_t blocks, bs, heads, d, tokens;
  DataType dtype = DataType::Float16;
  std::vector<unsigned char> key, value, keyCache, valueCache;
  std::vector<int32_t> slots;
  /// (position, token) of each block's tokens, sorted (sameWritesSeconds).
  std::vector<std::vector<std::pair<int64_t, int64_t>>> buckets;
  TensorView views[5];
  aclnn::ScatterPaKvCacheArgs args;

  /// `total` tokens into random distinct slots of `nb` blocks of `blockSize`.
  /// With `runs`, the tokens are requests of `bs * 4` tokens whose slots run
  /// through whole blocks picked at random (what a paged allocator hands a
  /// prefill); otherwise every token has a random slot.
  Problem(bool nzMode, int64_t nb, int64_t blockSize, int64_t n, int64_t dim,
          int64_t total, bool runs = false)
      : nz(nzMode), blocks(nb), bs(blockSize), heads(n), d(dim), tokens(total) {
    const int64_t size = runtime::elementSize(dtype), row = heads * d;
    const int64_t e = 32 / size;
    key = ops::randomBuffer(ops::DType::I16, tokens * row, 1);
    value = ops::randomBuffer(ops::DType::I16, tokens * row, 2);
    keyCache = ops::randomBuffer(ops::DType::I16, blocks * bs * row, 3);
    valueCache = keyCache;
    if (runs) {
      std::vector<int32_t> ids(static_cast<size_t>(blocks));
      std::iota(ids.begin(), ids.end(), 0);
      std::shuffle(ids.begin(), ids.end(), std::mt19937(4));
      for (int64_t i = 0; i < tokens; ++i)
        slots.push_back(
            static_cast<int32_t>(ids[static_cast<size_t>(i / bs)] * bs + i % bs));
    } else {
      std::vector<int32_t> all(static_cast<size_t>(blocks * bs));
      std::iota(all.begin(), all.end(), 0);
      std::shuffle(all.begin(), all.end(), std::mt19937(4));
      slots.assign(all.begin(), all.begin() + tokens);
    }
    buckets.resize(static_cast<size_t>(blocks));
    for (int64_t i = 0; i < tokens; ++i) {
      const int64_t s = slots[static_cast<size_t>(i)];
      buckets[static_cast<size_t>(s / bs)].push_back({s % bs, i});
    }
    for (auto &b : buckets)
      std::sort(b.begin(), b.end());
    const runtime::Format f =
        nz ? runtime::Format::FractalNZ : runtime::Format::ND;
    std::vector<int64_t> cacheShape =
        nz ? std::vector<int64_t>{blocks, row / e, bs, e}
           : std::vector<int64_t>{blocks, bs, heads, d};
    views[0] = runtime::contiguousView(key.data(), dtype, {tokens, heads, d});
    views[1] = runtime::contiguousView(keyCache.data(), dtype, cacheShape, f);
    views[2] = runtime::contiguousView(slots.data(), DataType::Int32, {tokens});
    views[3] = runtime::contiguousView(value.data(), dtype, {tokens, heads, d});
    views[4] = runtime::contiguousView(valueCache.data(), dtype, cacheShape, f);
    args.key = &views[0];
    args.keyCacheRef = &views[1];
    args.slotMapping = &views[2];
    args.value = &views[3];
    args.valueCacheRef = &views[4];
    args.cacheModeOptional = nz ? "PA_NZ" : "Norm";
  }
  /// Bytes read plus bytes written (key and value rows; the slots are noise).
  double bytesMoved() const {
    return 2.0 * 2 * static_cast<double>(key.size());
  }

  /// Seconds of the call's writes done by plain copies in the best order
  /// measured: the same bytes from the same rows to the same places (every
  /// row, or for PA_NZ every 32-byte strip of every row), block by block
  /// (block b by thread b % threads, as the kernel deals them), each block's
  /// tokens in position order (sorted beforehand, outside the timing), PA_NZ
  /// strip by strip with the next block's rows requested meanwhile. No index
  /// arithmetic, no validation: what the memory system gives these writes,
  /// where the copy bandwidth says little (random PA_NZ slots: each strip is
  /// half a line no other token of the call writes, so a line is read for
  /// ownership and written back per 32 bytes moved).
  double sameWritesSeconds(int threads) {
    const int64_t size = runtime::elementSize(dtype), row = heads * d * size;
    const int64_t strips = row / 32;
    return seconds([&] {
#pragma omp parallel num_threads(threads)
      {
        const int t = omp_get_thread_num();
        for (int kv = 0; kv < 2; ++kv) {
          const unsigned char *src = kv ? value.data() : key.data();
          unsigned char *cache = kv ? valueCache.data() : keyCache.data();
          for (int64_t b = t; b < blocks; b += threads) {
            const auto &bucket = buckets[static_cast<size_t>(b)];
            if (!nz) {
              for (auto [pos, i] : bucket)
                std::memcpy(cache + (b * bs + pos) * row, src + i * row,
                            static_cast<size_t>(row));
              continue;
            }
            // While this block's strips go out, the rows of the thread's
            // next block are requested, a share per strip (1.15-1.2x the
            // same order without).
            const auto *next = b + threads < blocks
                                   ? &buckets[static_cast<size_t>(b + threads)]
                                   : nullptr;
            const int64_t lines = next ? next->size() * (row / 64) : 0;
            int64_t requested = 0;
            for (int64_t c = 0; c < strips; ++c) {
              for (auto [pos, i] : bucket)
                std::memcpy(cache + ((b * strips + c) * bs + pos) * 32,
                            src + i * row + c * 32, 32);
              for (; requested < (c + 1) * lines / strips; ++requested) {
                const int64_t i =
                    (*next)[static_cast<size_t>(requested / (row / 64))].second;
                ops::prefetchLines(src + i * row + requested % (row / 64) * 64, 64);
              }
            }
          }
        }
      }
    });
  }

};

/// Times the generated kernel (phase 2 of a call prepared once: the
/// launch), the whole call (phase 1 + 2 through the C++ API) and the twin,
/// alternating, so all see the same machine (this one shares its cores with
/// others): GB/s of the kernel from the median and from the best run, the
/// copy bandwidth (best of its runs) at the same size, and the medians of
/// the paired twin/kernel (`vs_handwritten`) and twin/call
/// (`call_vs_handwritten`) ratios. The twin validates nothing, so the
/// kernel is what compares with it; the call's host overhead has its own
/// target (BM_*HostOverhead). With `sameWrites` (random slots, where the
/// copy bandwidth is no bound), the kernel alternates with the same writes
/// in the best order measured (Problem::sameWritesSeconds) too:
/// `same_writes_GBs` and the median of their paired ratio `of_same_writes`.
void report(benchmark::State &state, Problem &p, bool sameWrites = false) {
  runtime::Executor exec(aclnn::ScatterPaKvCacheArgs::kOpName);
  if (runtime::Status s = ops::prepareScatterPaKvCache(p.args, exec); !s) {
    state.SkipWithError(s.message().c_str());
    return;
  }
  for (auto _ : state)
    (void)exec.run({});
  // The kernel (phase 2 of a prepared call) against the twin, and the whole
  // call (phase 1 + 2) against the twin.
  std::vector<double> gen, call, twin, ratio, callRatio, same, sameRatio;
  const int threads = omp_get_max_threads();
  for (int i = 0; i < 31; ++i) {
    double g = seconds([&] { (void)exec.run({}); });
    double c = seconds([&] { (void)ops::scatterPaKvCache(p.args); });
    double t = seconds([&] { ops::scatterPaKvCacheHandwritten(p.args); });
    gen.push_back(g);
    call.push_back(c);
    twin.push_back(t);
    ratio.push_back(t / g);
    callRatio.push_back(t / c);
  }
  // The same writes in address order, paired with the kernel in a loop of
  // their own (the kernel right after them runs in the cache state they
  // leave, which is not the twin's).
  for (int i = 0; sameWrites && i < 15; ++i) {
    double g = seconds([&] { (void)exec.run({}); });
    double w = p.sameWritesSeconds(threads);
    same.push_back(w);
    sameRatio.push_back(w / g);
  }
  const double bytes = p.bytesMoved();
  const double copy =
      bench::copyBandwidthGBs(static_cast<size_t>(bytes / 2), threads);
  const double best = *std::min_element(gen.begin(), gen.end());
  state.counters["GBs"] = bytes / median(gen) / 1e9;
  state.counters["best_GBs"] = bytes / best / 1e9;
  state.counters["handwritten_GBs"] = bytes / median(twin) / 1e9;
  state.counters["copy_bw_GBs"] = copy;
  state.counters["of_copy_bw"] = bytes / best / 1e9 / copy;
  if (sameWrites) {
    state.counters["same_writes_GBs"] = bytes / median(same) / 1e9;
    state.counters["of_same_writes"] = median(sameRatio);
  }
  state.counters["vs_handwritten"] = median(ratio);
  state.counters["call_vs_handwritten"] = median(callRatio);
  state.counters["generated_us"] = median(gen) * 1e6;
  state.counters["call_us"] = median(call) * 1e6;
  state.counters["handwritten_us"] = median(twin) * 1e6;
  state.counters["working_set_MiB"] = bytes / (1 << 20);
}

/// Prefill: 8192 tokens, f16, N=8, D=128, into caches of 256 blocks of 128
/// slots (64 MiB each, far beyond L2). Arg 0: Norm or PA_NZ; arg 1: random
/// slots (0) or runs through whole blocks (1).
void BM_ScatterPrefill(benchmark::State &state) {
  const bool runs = state.range(1) != 0;
  Problem p(state.range(0) != 0, 256, 128, 8, 128, 8192, runs);
  report(state, p, /*sameWrites=*/!runs);
  state.SetLabel(std::string(p.nz ? "PA_NZ f16" : "Norm f16") +
                 (runs ? ", block runs" : ", random slots"));
}
BENCHMARK(BM_ScatterPrefill)
    ->ArgsProduct({{0, 1}, {0, 1}})
    ->Unit(benchmark::kMicrosecond);

/// Decode-sized: 8 tokens (one per request), f16, N=8, D=128, bs=128.
void BM_ScatterDecode(benchmark::State &state) {
  Problem p(state.range(0) != 0, 256, 128, 8, 128, 8);
  report(state, p);
  state.SetLabel(p.nz ? "PA_NZ f16" : "Norm f16");
}
BENCHMARK(BM_ScatterDecode)->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond);

/// Host overhead of a call through the C API: aclTensors made once; each
/// iteration runs phase 1 (validation, kernel lookup, argument packing) and
/// phase 2 on the default stream (the launch, run inline). Arg 0: the
/// decode-sized call of BM_ScatterDecode (8 tokens of 8 x 128 f16 heads,
/// 32 KiB read + written, included in `per_call_us`); arg 1: one token of
/// 16 f16 elements, so `per_call_us` is nearly all host overhead.
void BM_ScatterHostOverhead(benchmark::State &state) {
  const bool tiny = state.range(0) != 0;
  Problem p(false, 256, tiny ? 16 : 128, tiny ? 1 : 8, tiny ? 16 : 128,
            tiny ? 1 : 8);
  auto tensor = [](const TensorView &v) {
    std::vector<int64_t> storage{v.storageShape[0]};
    return aclCreateTensor(v.shape.data(), v.shape.size(),
                           static_cast<aclDataType>(v.dtype), v.strides.data(),
                           0, static_cast<aclFormat>(v.format), storage.data(),
                           1, v.data);
  };
  aclTensor *t[5];
  for (int i = 0; i < 5; ++i)
    t[i] = tensor(p.views[i]);
  char mode[] = "Norm";
  auto call = [&] {
    uint64_t ws = 0;
    aclOpExecutor *exec = nullptr;
    int rc = aclnnScatterPaKvCacheGetWorkspaceSize(
        t[0], t[1], t[2], t[3], t[4], nullptr, nullptr, nullptr, mode, nullptr,
        nullptr, nullptr, &ws, &exec);
    if (rc == 0)
      rc = aclnnScatterPaKvCache(nullptr, 0, exec, nullptr);
    return rc;
  };
  if (int rc = call(); rc != 0) {
    state.SkipWithError(aclGetRecentErrMsg());
    return;
  }
  for (auto _ : state)
    benchmark::DoNotOptimize(call());
  // Median of batches of 1000 calls, per call.
  double perCall = ops::medianMicroseconds([&] {
                     for (int i = 0; i < 1000; ++i)
                       call();
                   }) /
                   1000;
  state.counters["per_call_us"] = perCall;
  for (aclTensor *x : t)
    aclDestroyTensor(x);
}
BENCHMARK(BM_ScatterHostOverhead)
    ->Arg(0)
    ->Arg(1)
    ->Unit(benchmark::kMicrosecond);

} // namespace
