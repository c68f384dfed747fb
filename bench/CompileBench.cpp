//===- CompileBench.cpp - Compile latency: cold and in-process hit --------===//
#include "jit/Compiler.h"
#include "ops/Embedded.h"

#include <benchmark/benchmark.h>

using namespace tilejit;

namespace {

const jit::Specialization kAttention = {{"T", "f16"}, {"D", "128"}, {"G", "4"}, {"CAUSAL", "true"}};

/// Parse, sema, Tile IR passes, codegen, LLVM -O3 and machine code of the
/// flash-attention forward kernel, from nothing (the cache is cleared).
void BM_CompileColdFlashAttention(benchmark::State &state) {
  jit::Compiler &c = jit::Compiler::instance();
  const jit::KernelSource &src = ops::embeddedKernel("ops/samples/flash_attention.tile");
  double total = 0;
  for (auto _ : state) {
    c.clearMemoryCache();
    auto k = c.get(src, "attn", kAttention);
    if (!k) {
      state.SkipWithError(llvm::toString(k.takeError()).c_str());
      return;
    }
    total += k->kernel->times().total;
  }
  state.counters["compile_ms"] = total / state.iterations();
}
BENCHMARK(BM_CompileColdFlashAttention)->Unit(benchmark::kMillisecond)->Iterations(5);

/// An in-process hit with a key made earlier (the operator hot path).
void BM_CacheHit(benchmark::State &state) {
  jit::Compiler &c = jit::Compiler::instance();
  const jit::KernelSource &src = ops::embeddedKernel("ops/samples/flash_attention.tile");
  auto key = c.makeKey(src, "attn", kAttention);
  auto warm = c.get(*key, src);
  if (!warm) {
    state.SkipWithError(llvm::toString(warm.takeError()).c_str());
    return;
  }
  for (auto _ : state) {
    auto k = c.get(*key, src);
    benchmark::DoNotOptimize(k->kernel.get());
  }
}
BENCHMARK(BM_CacheHit)->Unit(benchmark::kNanosecond);

} // namespace
