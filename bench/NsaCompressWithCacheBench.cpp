//===- NsaCompressWithCacheBench.cpp - NsaCompressWithCache vs its twin ---===//
//
// A decode step: B = 64 entries that all complete a window (N = 32, D = 128,
// window 32, stride 16, 128-token pages, f16 and bf16): 16 MiB of windows,
// which fit in this host's last-level cache. Counters: GB/s of bytes read
// (the windows' tokens and the weights), `read_bw_GBs` = the same windows
// read by the same threads (`bench::readRegionsSeconds`), and `of_read_bw`
// = the median over 31 pairs (the call, then the read right after it) of
// read time / call time: the read sees the data where the kernel left it and
// the kernel where the read left it, so the ratio compares like with like
// (a probe over a buffer of its own would evict the windows from the cache).
// `vs_handwritten` = twin time / generated time (> 1: generated is faster),
// the median over alternating runs. BM_NsaCompressDecodeCold: the same step
// with its windows coming from memory (eight disjoint sets in rotation).
//
//===----------------------------------------------------------------------===//
#include "MachineLimits.h"

#include "ops/nsa_compress_with_cache/NsaCompressWithCache.h"
#include "ops/runtime/TensorView.h"
#include "ops/samples/Samples.h"

#include <benchmark/benchmark.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <numeric>
#include <random>
#include <string>
#include <vector>

using namespace tilejit;
using runtime::DataType;
using runtime::TensorView;

namespace {

struct Problem {
  int64_t batch = 64, heads = 32, d = 128, cbs = 32, stride = 16, page = 128;
  int64_t width = 2, blocks;
  DataType dtype;
  std::vector<unsigned char> input, weight, out;
  std::vector<int32_t> table, slots;
  std::vector<int64_t> lens;
  runtime::IntArray lensArray;
  TensorView views[5];
  aclnn::NsaCompressWithCacheArgs args;

  /// Every entry has length 160 + 16 * (b % 4): its window (tokens 128 ..
  /// 191 at most) lies in its second page, a distinct shuffled page.
  explicit Problem(DataType t) : dtype(t) {
    blocks = batch * width;
    const ops::DType kind =
        t == DataType::BFloat16 ? ops::DType::BF16 : ops::DType::F16;
    input = ops::randomBuffer(kind, blocks * page * heads * d, 1);
    weight = ops::randomBuffer(kind, cbs * heads, 2);
    out = ops::randomBuffer(kind, batch * heads * d, 3);
    table.resize(static_cast<size_t>(blocks));
    std::iota(table.begin(), table.end(), 0);
    std::shuffle(table.begin(), table.end(), std::mt19937(4));
    slots.resize(static_cast<size_t>(batch));
    std::iota(slots.begin(), slots.end(), 0);
    for (int64_t b = 0; b < batch; ++b)
      lens.push_back(160 + 16 * (b % 4));
    lensArray.values = lens;
    views[0] = runtime::contiguousView(input.data(), t, {blocks, page, heads, d});
    views[1] = runtime::contiguousView(weight.data(), t, {cbs, heads});
    views[2] = runtime::contiguousView(slots.data(), DataType::Int32, {batch});
    views[3] = runtime::contiguousView(table.data(), DataType::Int32, {batch, width});
    views[4] = runtime::contiguousView(out.data(), t, {batch, heads, d});
    args.input = &views[0];
    args.weight = &views[1];
    args.slotMapping = &views[2];
    args.actSeqLenOptional = &lensArray;
    args.blockTableOptional = &views[3];
    args.compressBlockSize = cbs;
    args.compressStride = stride;
    args.actSeqLenType = 1;
    args.pageBlockSize = page;
    args.outputCache = &views[4];
  }
  /// Sets every entry's length to 32 * (set + 1): its window is tokens
  /// 32 * set .. 32 * set + 31, in its first page for sets 0-3 and its
  /// second for 4-7, so that the eight sets are disjoint.
  void useWindowSet(int64_t set) {
    lens.assign(static_cast<size_t>(batch), cbs * (set + 1));
    lensArray.values = lens;
  }
  /// Each entry's window, one region per page it spans, in entry order.
  std::vector<bench::Region> windows() const {
    std::vector<bench::Region> r;
    const int64_t row = heads * d * 2;
    for (int64_t b = 0; b < batch; ++b) {
      for (int64_t k = lens[b] - cbs; k < lens[b];) {
        const int64_t n = std::min(lens[b] - k, page - k % page);
        const int64_t blk = table[static_cast<size_t>(b * width + k / page)];
        r.push_back({input.data() + (blk * page + k % page) * row,
                     static_cast<size_t>(n * row)});
        k += n;
      }
    }
    return r;
  }
  /// Bytes read: every entry's window of cbs tokens, and the weights.
  double bytesRead() const {
    return 2.0 * static_cast<double>(batch * cbs * heads * d + cbs * heads);
  }
};

using bench::median;
using bench::seconds;

/// The counters both benchmarks report, from per-run seconds: calls, reads
/// right after them (and their ratios), twin runs (and twin / call).
struct Times {
  std::vector<double> gen, probe, paired, twin, ratio;
};

void report(benchmark::State &state, const Problem &p, const Times &t, double workingSet) {
  const double bytes = p.bytesRead();
  state.counters["GBs"] = bytes / median(t.gen) / 1e9;
  state.counters["best_GBs"] = bytes / *std::min_element(t.gen.begin(), t.gen.end()) / 1e9;
  state.counters["handwritten_GBs"] = bytes / median(t.twin) / 1e9;
  state.counters["read_bw_GBs"] = bytes / median(t.probe) / 1e9;
  state.counters["of_read_bw"] = median(t.paired);
  state.counters["vs_handwritten"] = median(t.ratio);
  state.counters["generated_us"] = median(t.gen) * 1e6;
  state.counters["handwritten_us"] = median(t.twin) * 1e6;
  state.counters["working_set_MiB"] = workingSet / (1 << 20);
}

void BM_NsaCompressDecode(benchmark::State &state) {
  Problem p(state.range(0) ? DataType::BFloat16 : DataType::Float16);
  if (runtime::Status s = ops::nsaCompressWithCache(p.args); !s) {
    state.SkipWithError(s.message().c_str());
    return;
  }
  for (auto _ : state)
    (void)ops::nsaCompressWithCache(p.args);
  const std::vector<bench::Region> windows = p.windows();
  const int threads = omp_get_max_threads();
  Times t;
  auto &[gen, probe, paired, twin, ratio] = t;
  for (int i = 0; i < 31; ++i) {
    double g = seconds([&] { (void)ops::nsaCompressWithCache(p.args); });
    double r = bench::readRegionsSeconds(windows, threads);
    gen.push_back(g);
    probe.push_back(r);
    paired.push_back(r / g);
  }
  for (int i = 0; i < 31; ++i) {
    double g = seconds([&] { (void)ops::nsaCompressWithCache(p.args); });
    double h = seconds([&] { ops::nsaCompressWithCacheHandwritten(p.args); });
    twin.push_back(h);
    ratio.push_back(h / g);
  }
  report(state, p, t, p.bytesRead());
  state.SetLabel(p.dtype == DataType::BFloat16 ? "bf16" : "f16");
}
BENCHMARK(BM_NsaCompressDecode)->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond);

/// The same step with its windows coming from memory, as in serving, where
/// the rest of the model (every other layer's attention over its KV cache)
/// passes through the last-level cache between two steps of one layer:
/// eight disjoint sets of windows (Problem::useWindowSet; 16 MiB each,
/// 128 MiB in all) in rotation, each call on a set the previous seven calls
/// and reads did not touch. `read_bw_GBs` / `of_read_bw`: as above, the read
/// right after each call being of the next set (as cold), by the same
/// threads. `vs_handwritten` alternates the kernel and the twin the same
/// way.
void BM_NsaCompressDecodeCold(benchmark::State &state) {
  Problem p(state.range(0) ? DataType::BFloat16 : DataType::Float16);
  constexpr int64_t kSets = 8;
  std::vector<std::vector<bench::Region>> windows;
  for (int64_t set = 0; set < kSets; ++set) {
    p.useWindowSet(set);
    windows.push_back(p.windows());
  }
  if (runtime::Status s = ops::nsaCompressWithCache(p.args); !s) {
    state.SkipWithError(s.message().c_str());
    return;
  }
  int64_t next = 0;
  for (auto _ : state) {
    p.useWindowSet(next++ % kSets);
    (void)ops::nsaCompressWithCache(p.args);
  }
  const int threads = omp_get_max_threads();
  Times t;
  auto &[gen, probe, paired, twin, ratio] = t;
  for (int64_t i = 0; i < 32; ++i) {
    p.useWindowSet(2 * i % kSets);
    double g = seconds([&] { (void)ops::nsaCompressWithCache(p.args); });
    double r = bench::readRegionsSeconds(windows[(2 * i + 1) % kSets], threads);
    gen.push_back(g);
    probe.push_back(r);
    paired.push_back(r / g);
  }
  for (int64_t i = 0; i < 32; ++i) {
    p.useWindowSet(2 * i % kSets);
    double g = seconds([&] { (void)ops::nsaCompressWithCache(p.args); });
    p.useWindowSet((2 * i + 1) % kSets);
    double h = seconds([&] { ops::nsaCompressWithCacheHandwritten(p.args); });
    twin.push_back(h);
    ratio.push_back(h / g);
  }
  report(state, p, t, kSets * p.bytesRead());
  state.SetLabel(std::string(p.dtype == DataType::BFloat16 ? "bf16" : "f16") +
                 ", windows from memory");
}
BENCHMARK(BM_NsaCompressDecodeCold)->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond);

} // namespace
