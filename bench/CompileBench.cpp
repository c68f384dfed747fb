//===- CompileBench.cpp - Compile latency: cold, disk hit, in-process hit -===//
#include "jit/Compiler.h"
#include "jit/DiskCache.h"
#include "ops/Embedded.h"

#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <vector>

#include <unistd.h>

using namespace tilejit;

namespace {

const jit::Specialization kAttention = {{"T", "f16"}, {"D", "128"}, {"G", "4"}, {"CAUSAL", "true"}};

/// Parse, sema, Tile IR passes, codegen, LLVM -O3 and machine code of the
/// flash-attention forward kernel, from nothing (the cache is cleared).
void BM_CompileColdFlashAttention(benchmark::State &state) {
  jit::Compiler &c = jit::Compiler::instance();
  const jit::KernelSource &src = ops::embeddedKernel("ops/samples/flash_attention.tile");
  jit::DiskCache saved = c.diskCache();
  c.setDiskCache(jit::DiskCache()); // cold means cold: no disk tier either
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
  c.setDiskCache(saved);
}
BENCHMARK(BM_CompileColdFlashAttention)->Unit(benchmark::kMillisecond)->Iterations(5);

/// A disk-cache hit: the flash-attention kernel loaded from a verified entry
/// (read, checksum, link into the JIT), as a new process would; no compile.
/// Median over the iterations, in a fresh temporary directory.
void BM_DiskCacheHitFlashAttention(benchmark::State &state) {
  jit::Compiler &c = jit::Compiler::instance();
  const jit::KernelSource &src = ops::embeddedKernel("ops/samples/flash_attention.tile");
  char tmpl[] = "/tmp/tilejit-bench-cache-XXXXXX";
  std::string dir = ::mkdtemp(tmpl);
  jit::DiskCache saved = c.diskCache();
  c.setDiskCache(jit::DiskCache(dir, jit::DiskCache::Mode::ReadWrite, uint64_t(1) << 30));
  c.clearMemoryCache();
  auto first = c.get(src, "attn", kAttention); // compiles and publishes
  std::vector<double> ms;
  for (auto _ : state) {
    c.clearMemoryCache();
    auto t = std::chrono::steady_clock::now();
    auto k = c.get(src, "attn", kAttention);
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t)
                     .count());
    if (!k || k->compiled) {
      state.SkipWithError("not a disk hit");
      break;
    }
  }
  std::sort(ms.begin(), ms.end());
  if (!ms.empty())
    state.counters["median_ms"] = ms[ms.size() / 2];
  c.diskCache().clear();
  ::rmdir(dir.c_str());
  c.setDiskCache(saved);
  c.clearMemoryCache();
}
BENCHMARK(BM_DiskCacheHitFlashAttention)->Unit(benchmark::kMillisecond)->Iterations(20);

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

/// The argument list of a one-program flash-attention launch (1 query row,
/// 16 keys): small enough that the call is the fixed cost.
struct TinyAttention {
  std::vector<uint16_t> q = std::vector<uint16_t>(4 * 128), k = std::vector<uint16_t>(16 * 128),
                        v = std::vector<uint16_t>(16 * 128), o = std::vector<uint16_t>(4 * 128);
  rt::ArgPack pack() {
    using rt::ElemType;
    rt::ArgPack a;
    a.tensor(ElemType::F16, q.data(), {1, 4, 1, 128}).named("q");
    a.tensor(ElemType::F16, k.data(), {1, 1, 16, 128}).named("k");
    a.tensor(ElemType::F16, v.data(), {1, 1, 16, 128}).named("v");
    a.tensor(ElemType::F16, o.data(), {1, 4, 1, 128}).named("o");
    a.f32(0.088f).named("scale");
    return a;
  }
};

/// The launch's argument check alone (count, kinds, dtypes, ranks, names,
/// data): what a launch costs above running the grid.
void BM_LaunchCheck(benchmark::State &state) {
  jit::Compiler &c = jit::Compiler::instance();
  const jit::KernelSource &src = ops::embeddedKernel("ops/samples/flash_attention.tile");
  auto k = c.get(src, "attn", kAttention);
  if (!k) {
    state.SkipWithError(llvm::toString(k.takeError()).c_str());
    return;
  }
  TinyAttention t;
  rt::ArgPack args = t.pack();
  for (auto _ : state)
    if (llvm::Error err = k->kernel->check(args)) {
      state.SkipWithError(llvm::toString(std::move(err)).c_str());
      return;
    }
}
BENCHMARK(BM_LaunchCheck)->Unit(benchmark::kNanosecond);

/// An in-process hit, the argument list built and checked, and a
/// one-program grid launched (axpby over 16 floats): the whole fixed cost of
/// a call from the host.
void BM_HitAndLaunch(benchmark::State &state) {
  jit::Compiler &c = jit::Compiler::instance();
  const jit::KernelSource &src = ops::embeddedKernel("ops/samples/elementwise.tile");
  auto key = c.makeKey(src, "axpby", {{"T", "f32"}});
  std::vector<float> x(16, 1.0f), y(16, 2.0f);
  for (auto _ : state) {
    auto k = c.get(*key, src);
    rt::ArgPack args;
    args.tensor(x.data(), {16}).tensor(y.data(), {16}).f32(0.5f).f32(0.5f);
    if (!k || k->kernel->launch(args, 1)) {
      state.SkipWithError("the launch failed");
      return;
    }
  }
}
BENCHMARK(BM_HitAndLaunch)->Unit(benchmark::kNanosecond);

} // namespace
