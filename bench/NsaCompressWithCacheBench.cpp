//===- NsaCompressWithCacheBench.cpp - NsaCompressWithCache vs its twin ---===//
//
// A decode step: B = 64 entries that all complete a window (N = 32, D = 128,
// window 32, stride 16, 128-token pages, f16 and bf16). Counters: GB/s of
// bytes read (the windows' tokens and the weights), the machine's read
// bandwidth at the same working-set size measured in this run
// (`read_bw_GBs`), `of_read_bw` = median GB/s / read bandwidth, and
// `vs_handwritten` = twin time / generated time (> 1: generated is faster),
// the median over alternating runs.
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
  /// Bytes read: every entry's window of cbs tokens, and the weights.
  double bytesRead() const {
    return 2.0 * static_cast<double>(batch * cbs * heads * d + cbs * heads);
  }
};

using bench::median;
using bench::seconds;

void BM_NsaCompressDecode(benchmark::State &state) {
  Problem p(state.range(0) ? DataType::BFloat16 : DataType::Float16);
  if (runtime::Status s = ops::nsaCompressWithCache(p.args); !s) {
    state.SkipWithError(s.message().c_str());
    return;
  }
  for (auto _ : state)
    (void)ops::nsaCompressWithCache(p.args);
  std::vector<double> gen, twin, ratio;
  for (int i = 0; i < 31; ++i) {
    double g = seconds([&] { (void)ops::nsaCompressWithCache(p.args); });
    double t = seconds([&] { ops::nsaCompressWithCacheHandwritten(p.args); });
    gen.push_back(g);
    twin.push_back(t);
    ratio.push_back(t / g);
  }
  const double bytes = p.bytesRead();
  const double read = bench::readBandwidthGBs(static_cast<size_t>(bytes),
                                              omp_get_max_threads());
  state.counters["GBs"] = bytes / median(gen) / 1e9;
  state.counters["best_GBs"] =
      bytes / *std::min_element(gen.begin(), gen.end()) / 1e9;
  state.counters["handwritten_GBs"] = bytes / median(twin) / 1e9;
  state.counters["read_bw_GBs"] = read;
  state.counters["of_read_bw"] = bytes / median(gen) / 1e9 / read;
  state.counters["vs_handwritten"] = median(ratio);
  state.counters["generated_us"] = median(gen) * 1e6;
  state.counters["handwritten_us"] = median(twin) * 1e6;
  state.counters["working_set_MiB"] = bytes / (1 << 20);
  state.SetLabel(p.dtype == DataType::BFloat16 ? "bf16" : "f16");
}
BENCHMARK(BM_NsaCompressDecode)->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond);

} // namespace
