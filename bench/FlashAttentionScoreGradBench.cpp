//===- FlashAttentionScoreGradBench.cpp - The attention backward vs FMA peak ===//
//
// FlashAttentionUnpaddingScoreGradV5 on the shapes: T = 4 x 1024
// (four batches of 1024), N = 8, D = 128, no mask and causal (mode 3), bf16
// and fp32; one sequence of 8192 with a band of 1024 (mode 4, pre = 1024,
// next = 0); GQA 8/2 causal. Compute-bound, so the counters are against
// the machine's arithmetic measured in this run: `GFLOPs` = useful FLOPs
// (5 products x 2 D per kept (i, j) per query head, kept positions counted
// exactly from Problem::band) / time; `of_fma_peak` against the f32 FMA
// peak x threads; for bf16, `of_bf16_peak` against the vdpbf16ps peak x
// threads (on Intel cores that peak is half the f32 FMA peak, so the ratio
// can exceed 1) and `of_amx_peak` against the AMX tdpbf16ps peak x threads
// where the host has AMX (the generated kernel's bf16 products run there).
// `vs_peer` (4 x 1024 shapes): GFLOPs over the widely used framework's CPU
// backward measured on a 2-core AVX-512 host of this kind with its best
// BLAS and allocator settings (issue 23: bf16 552 / 226, fp32 170 / 78
// useful GFLOP/s, no mask / causal). BM_FlashAttentionScoreGrad times the
// generated operator (phase 1 included) and reports `vs_handwritten` =
// twin time / generated time (> 1:
// generated faster), the median over alternating runs;
// BM_FlashAttentionScoreGradHandwritten times the twin alone. Problems
// (inputs, a float64 forward for M, L and O) are built once per process.
//
//===----------------------------------------------------------------------===//
#include "MachineLimits.h"

#include "ops/flash_attention_score_grad/FlashAttentionScoreGrad.h"
#include "ops/flash_attention_score_grad/FlashAttentionScoreGradData.h"

#include <benchmark/benchmark.h>
#include <omp.h>

#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <vector>

using namespace tilejit;
namespace fag = tilejit::ops::fag;
using runtime::DataType;

namespace {

/// Shape ids: 0 no mask, 1 causal (both T = 4 x 1024, N = 8), 2 one 8192
/// sequence with a 1024 band, 3 GQA 8/2 causal.
fag::Config shapeConfig(int64_t shape, DataType t) {
  fag::Config c;
  c.dtype = t;
  c.n1 = 8;
  c.n2 = shape == 3 ? 2 : 8;
  c.d = 128;
  c.seqQ = c.seqKv = shape == 2 ? std::vector<int64_t>{8192} : std::vector<int64_t>(4, 1024);
  if (shape != 0) {
    c.mask = fag::MaskForm::Compressed;
    c.sparseMode = shape == 2 ? 4 : 3;
    c.preTokens = shape == 2 ? 1024 : 65536;
    c.nextTokens = shape == 2 ? 0 : 65536;
  }
  return c;
}

const char *shapeName(int64_t shape) {
  static const char *names[] = {"4x1024 N8 D128 no mask", "4x1024 N8 D128 causal",
                                "8192 N8 D128 band 1024", "4x1024 N8/2 D128 causal"};
  return names[shape];
}

/// One problem per (shape, dtype), built on first use.
fag::Data &problem(int64_t shape, DataType t) {
  static std::map<std::pair<int64_t, int>, std::unique_ptr<fag::Data>> cache;
  auto &slot = cache[{shape, static_cast<int>(t)}];
  if (!slot)
    slot = std::make_unique<fag::Data>(shapeConfig(shape, t));
  return *slot;
}

/// Useful FLOPs: 5 products x 2 D per kept (i, j) per query head.
double usefulFlops(const fag::Data &data) {
  fag::Problem p;
  if (!fag::validate(data.args(), p))
    return 0;
  double kept = 0;
  for (int64_t b = 0; b < p.bin; ++b) {
    const fag::Problem::Band band = p.band(b);
    const int64_t sq = p.sq(b);
    for (int64_t j = 0; j < p.skv(b); ++j) {
      if (j < band.prefix) {
        kept += static_cast<double>(sq);
        continue;
      }
      const int64_t lo = std::max<int64_t>(0, j - band.hi), hi = std::min(sq - 1, j - band.lo);
      kept += static_cast<double>(std::max<int64_t>(0, hi - lo + 1));
    }
  }
  return kept * static_cast<double>(p.n1) * 5.0 * 2.0 * static_cast<double>(p.d);
}

struct Peaks {
  double fma, bf16, amx;
};
const Peaks &peaks() {
  static const Peaks p{bench::fmaPeakGflops(), bench::bf16DotPeakGflops(),
                       bench::amxBf16PeakGflops()};
  return p;
}

/// The peer's useful GFLOP/s (issue 23) for a shape and dtype, 0 if none.
double peerGflops(int64_t shape, DataType t) {
  if (shape > 1)
    return 0;
  if (t == DataType::BFloat16)
    return shape == 0 ? 552 : 226;
  return shape == 0 ? 170 : 78;
}

void peakCounters(benchmark::State &state, double gflops, DataType t) {
  const double threads = omp_get_max_threads();
  state.counters["GFLOPs"] = gflops;
  state.counters["fma_peak_GFLOPs"] = peaks().fma * threads;
  state.counters["of_fma_peak"] = gflops / (peaks().fma * threads);
  if (t == DataType::BFloat16 && peaks().bf16 > 0) {
    state.counters["bf16_peak_GFLOPs"] = peaks().bf16 * threads;
    state.counters["of_bf16_peak"] = gflops / (peaks().bf16 * threads);
  }
  if (t == DataType::BFloat16 && peaks().amx > 0) {
    state.counters["amx_peak_GFLOPs"] = peaks().amx * threads;
    state.counters["of_amx_peak"] = gflops / (peaks().amx * threads);
  }
  if (double peer = peerGflops(state.range(0), t); peer > 0)
    state.counters["vs_peer"] = gflops / peer;
  state.counters["threads"] = threads;
}

DataType dtypeArg(int64_t a) { return a == 0 ? DataType::Float : DataType::BFloat16; }

/// Args: shape id, dtype (0 fp32, 1 bf16).
void BM_FlashAttentionScoreGrad(benchmark::State &state) {
  const DataType t = dtypeArg(state.range(1));
  fag::Data &data = problem(state.range(0), t);
  state.SetLabel(std::string(shapeName(state.range(0))) + (t == DataType::Float ? " fp32" : " bf16"));
  if (runtime::Status s = ops::flashAttentionScoreGrad(data.args()); !s) {
    state.SkipWithError(s.message().c_str());
    return;
  }
  for (auto _ : state)
    (void)ops::flashAttentionScoreGrad(data.args());
  const bool twinOk = ops::flashAttentionScoreGradHandwritten(data.args());
  std::vector<double> gen, twin, ratio;
  for (int i = 0; i < 3; ++i) {
    const double g = bench::seconds([&] { (void)ops::flashAttentionScoreGrad(data.args()); });
    gen.push_back(g);
    if (twinOk) {
      const double h =
          bench::seconds([&] { (void)ops::flashAttentionScoreGradHandwritten(data.args()); });
      twin.push_back(h);
      ratio.push_back(h / g);
    }
  }
  const double flops = usefulFlops(data);
  peakCounters(state, flops / bench::median(gen) / 1e9, t);
  state.counters["generated_ms"] = bench::median(gen) * 1e3;
  if (twinOk) {
    state.counters["handwritten_ms"] = bench::median(twin) * 1e3;
    state.counters["handwritten_GFLOPs"] = flops / bench::median(twin) / 1e9;
    state.counters["vs_handwritten"] = bench::median(ratio);
  }
}

/// The twin alone. Args: shape id, dtype (0 fp32, 1 bf16).
void BM_FlashAttentionScoreGradHandwritten(benchmark::State &state) {
  const DataType t = dtypeArg(state.range(1));
  fag::Data &data = problem(state.range(0), t);
  state.SetLabel(std::string(shapeName(state.range(0))) + (t == DataType::Float ? " fp32" : " bf16"));
  if (!ops::flashAttentionScoreGradHandwritten(data.args())) {
    state.SkipWithError("the twin does not cover this call (or this host)");
    return;
  }
  std::vector<double> runs;
  for (auto _ : state)
    runs.push_back(
        bench::seconds([&] { (void)ops::flashAttentionScoreGradHandwritten(data.args()); }));
  peakCounters(state, usefulFlops(data) / bench::median(runs) / 1e9, t);
  state.counters["handwritten_ms"] = bench::median(runs) * 1e3;
}

void shapes(benchmark::internal::Benchmark *b) {
  for (int64_t dtype : {0, 1})
    for (int64_t shape : {0, 1})
      b->Args({shape, dtype});
  for (int64_t dtype : {0, 1})
    for (int64_t shape : {2, 3})
      b->Args({shape, dtype});
  b->Unit(benchmark::kMillisecond)->UseRealTime();
}

BENCHMARK(BM_FlashAttentionScoreGrad)->Apply(shapes);
BENCHMARK(BM_FlashAttentionScoreGradHandwritten)->Apply(shapes);

} // namespace
