//===- SampleBench.cpp - Sample kernels against their twins and the machine ===//
//
// Each generated kernel is timed next to its hand-written twin; counters give
// GFLOP/s or GB/s, the ratio to the machine's limit measured in this run
// (FMA peak, read bandwidth at the kernel's working-set size) and
// `vs_handwritten` = twin time / generated time (> 1: generated is faster),
// the median of the ratios of alternating runs.
//
//===----------------------------------------------------------------------===//
#include "MachineLimits.h"

#include "ops/samples/SamplesTwin.h"

#include <benchmark/benchmark.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <random>
#include <vector>

using namespace tilejit;
using ops::DType;

namespace {

/// Medians of alternating runs of the generated kernel and its twin, so both
/// see the same machine (it is shared and noisy): the generated and twin
/// times in seconds and the median of the paired twin/generated ratios.
struct Paired {
  double gen, twin, ratio;
};

template <typename G, typename T> Paired alternate(G &&gen, T &&twin, int reps = 15) {
  std::vector<double> g, t, r;
  for (int i = 0; i < reps; ++i) {
    g.push_back(bench::seconds(gen));
    t.push_back(bench::seconds(twin));
    r.push_back(t.back() / g.back());
  }
  return {bench::median(g), bench::median(t), bench::median(r)};
}

double fmaPeak() {
  static const double peak = bench::fmaPeakGflops();
  return peak;
}

void check(llvm::Expected<jit::KernelRef> k, benchmark::State &state) {
  if (!k)
    state.SkipWithError(llvm::toString(k.takeError()).c_str());
}

/// C = A·Bᵀ on one core, L2-resident: M = N = 128, K = 512 (f32: 576 KiB).
void BM_MatmulSingleCore(benchmark::State &state) {
  DType t = static_cast<DType>(state.range(0));
  const int64_t m = 128, n = 128, k = 512;
  auto a = ops::randomBuffer(t, m * k, 1), b = ops::randomBuffer(t, n * k, 2);
  std::vector<float> c(m * n);
  jit::Compiler &jc = jit::Compiler::instance();
  check(ops::runMatmul(jc, t, a.data(), b.data(), c.data(), m, n, k, 1), state);
  for (auto _ : state)
    llvm::consumeError(ops::runMatmul(jc, t, a.data(), b.data(), c.data(), m, n, k, 1).takeError());
  double flops = 2.0 * m * n * k;
  Paired pr = alternate([&] {
    llvm::consumeError(ops::runMatmul(jc, t, a.data(), b.data(), c.data(), m, n, k, 1).takeError());
  }, [&] { ops::matmulHandwritten(t, a.data(), b.data(), c.data(), m, n, k, 1); });
  double gen = pr.gen, twin = pr.twin;
  state.counters["GFLOPs"] = flops / gen / 1e9;
  state.counters["fma_peak_GFLOPs"] = fmaPeak();
  state.counters["of_peak"] = flops / gen / 1e9 / fmaPeak();
  state.counters["handwritten_GFLOPs"] = flops / twin / 1e9;
  state.counters["vs_handwritten"] = pr.ratio;
  state.SetLabel(ops::dtypeName(t));
}
BENCHMARK(BM_MatmulSingleCore)->Arg(int(DType::F32))->Arg(int(DType::F16))->Arg(int(DType::BF16))
    ->Unit(benchmark::kMicrosecond);

/// Row softmax, all cores: 8192 x 1024 f16 (16 MiB in, 16 MiB out).
void BM_Softmax(benchmark::State &state) {
  DType t = DType::F16;
  const int64_t m = 8192, n = 1024;
  auto x = ops::randomBuffer(t, m * n, 3);
  std::vector<unsigned char> y(x.size());
  jit::Compiler &jc = jit::Compiler::instance();
  check(ops::runSoftmax(jc, t, x.data(), y.data(), m, n), state);
  for (auto _ : state)
    llvm::consumeError(ops::runSoftmax(jc, t, x.data(), y.data(), m, n).takeError());
  double bytes = 2.0 * x.size();
  Paired pr = alternate([&] {
    llvm::consumeError(ops::runSoftmax(jc, t, x.data(), y.data(), m, n).takeError());
  }, [&] { ops::softmaxHandwritten(t, x.data(), y.data(), m, n); });
  double gen = pr.gen, twin = pr.twin;
  double bw = bench::readBandwidthGBs(x.size(), omp_get_max_threads());
  state.counters["GBs"] = bytes / gen / 1e9;
  state.counters["read_bw_GBs"] = bw;
  state.counters["of_read_bw"] = bytes / gen / 1e9 / bw;
  state.counters["handwritten_GBs"] = bytes / twin / 1e9;
  state.counters["vs_handwritten"] = pr.ratio;
  state.counters["working_set_MiB"] = bytes / (1 << 20);
}
BENCHMARK(BM_Softmax)->Unit(benchmark::kMicrosecond);

/// y = a*x + b*y, all cores: 32M f16 elements (64 MiB per tensor).
void BM_Axpby(benchmark::State &state) {
  DType t = DType::F16;
  const int64_t n = int64_t(1) << 25;
  auto x = ops::randomBuffer(t, n, 4), y = ops::randomBuffer(t, n, 5);
  jit::Compiler &jc = jit::Compiler::instance();
  check(ops::runAxpby(jc, t, x.data(), y.data(), n, 1.0f, 0.5f), state);
  for (auto _ : state)
    llvm::consumeError(ops::runAxpby(jc, t, x.data(), y.data(), n, 1.0f, 0.5f).takeError());
  double bytes = 3.0 * x.size();
  Paired pr = alternate([&] {
    llvm::consumeError(ops::runAxpby(jc, t, x.data(), y.data(), n, 1.0f, 0.5f).takeError());
  }, [&] { ops::axpbyHandwritten(t, x.data(), y.data(), n, 1.0f, 0.5f); });
  double gen = pr.gen, twin = pr.twin;
  double copy = bench::copyBandwidthGBs(x.size(), omp_get_max_threads());
  state.counters["GBs"] = bytes / gen / 1e9;
  state.counters["copy_bw_GBs"] = copy;
  state.counters["of_copy_bw"] = bytes / gen / 1e9 / copy;
  state.counters["handwritten_GBs"] = bytes / twin / 1e9;
  state.counters["vs_handwritten"] = pr.ratio;
  state.counters["working_set_MiB"] = bytes / (1 << 20);
}
BENCHMARK(BM_Axpby)->Unit(benchmark::kMicrosecond);

/// Flash-attention forward, all cores: B=1, 32 heads over 8 KV heads,
/// 512 queries x 2048 keys, D=128, f16, causal.
void BM_FlashAttention(benchmark::State &state) {
  DType t = DType::F16;
  ops::AttentionShape s;
  s.batch = 1;
  s.heads = 32;
  s.kvHeads = 8;
  s.queries = 512;
  s.keys = 2048;
  s.dim = 128;
  s.causal = true;
  int64_t qn = s.batch * s.heads * s.queries * s.dim, kn = s.batch * s.kvHeads * s.keys * s.dim;
  auto q = ops::randomBuffer(t, qn, 6), k = ops::randomBuffer(t, kn, 7), v = ops::randomBuffer(t, kn, 8);
  std::vector<unsigned char> o(q.size());
  jit::Compiler &jc = jit::Compiler::instance();
  check(ops::runAttention(jc, t, s, q.data(), k.data(), v.data(), o.data()), state);
  for (auto _ : state)
    llvm::consumeError(ops::runAttention(jc, t, s, q.data(), k.data(), v.data(), o.data()).takeError());
  // Causal: about half of the S x L score matrix is computed.
  double flops = 4.0 * s.batch * s.heads * s.queries * s.keys * s.dim *
                 (1.0 - 0.5 * s.queries / s.keys);
  Paired pr = alternate([&] {
    llvm::consumeError(ops::runAttention(jc, t, s, q.data(), k.data(), v.data(), o.data()).takeError());
  }, [&] {
    ops::attentionHandwritten(t, s, q.data(), k.data(), v.data(), o.data());
  }, 5);
  double gen = pr.gen, twin = pr.twin;
  int cores = omp_get_max_threads();
  state.counters["GFLOPs"] = flops / gen / 1e9;
  state.counters["of_peak_all_cores"] = flops / gen / 1e9 / (fmaPeak() * cores);
  state.counters["handwritten_GFLOPs"] = flops / twin / 1e9;
  state.counters["vs_handwritten"] = pr.ratio;
}
BENCHMARK(BM_FlashAttention)->Unit(benchmark::kMillisecond)->Iterations(3);

} // namespace
