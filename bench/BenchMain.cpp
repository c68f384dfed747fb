//===- BenchMain.cpp - Google Benchmark entry point
//------------------------===//
//
// Every case of the suite (bench/suite) becomes one benchmark of one
// iteration whose counters are what the case measured; the sample kernels
// (SampleBench.cpp) are benchmarks of their own. `tilejit bench` runs the
// same cases and writes the JSON document and the report.
//
//===----------------------------------------------------------------------===//
#include "Suite.h"

#include "jit/Options.h"

#include <benchmark/benchmark.h>
#include <omp.h>

using namespace tilejit;

namespace {

void runOne(benchmark::State &state, const bench::Case &c) {
  static bench::Limits limits = [] {
    const unsigned n = jit::Options::process().numThreads();
    return bench::measurePeaks(n ? static_cast<int>(n) : omp_get_max_threads());
  }();
  static bench::Context ctx(bench::Options{}, limits);
  bench::Result r;
  for (auto _ : state)
    r = bench::runCase(c, ctx);
  if (!r.error.empty()) {
    state.SkipWithError(r.error.c_str());
    return;
  }
  auto set = [&](const char *name, double v) {
    if (v != 0)
      state.counters[name] = v;
  };
  set("generated_us", r.genSeconds * 1e6);
  set("handwritten_us", r.twinSeconds * 1e6);
  set("vs_handwritten", r.vsTwin);
  if (r.bytes > 0 && r.genSeconds > 0 && r.bound != bench::Bound::Latency)
    set("GBs", r.bytes / r.genSeconds / 1e9);
  if (r.flops > 0 && r.bound == bench::Bound::Compute)
    set("GFLOPs", r.flops / r.genSeconds / 1e9);
  set("of_bound", r.ofBound);
  set("read_bw_GBs", r.readGBsPaired > 0 ? r.readGBsPaired : r.readGBs);
  if (r.bound == bench::Bound::Copy)
    set("copy_bw_GBs", r.copyGBs);
  set("working_set_MiB", r.workingSetBytes / (1 << 20));
  for (const auto &[name, v] : r.extra)
    state.counters[name] = v;
  state.SetLabel(r.note);
}

} // namespace

int main(int argc, char **argv) {
  for (const bench::Case &c : bench::registry())
    benchmark::RegisterBenchmark(c.name.c_str(),
                                 [&c](benchmark::State &s) { runOne(s, c); })
        ->Iterations(1)
        ->Unit(benchmark::kMicrosecond);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv))
    return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
