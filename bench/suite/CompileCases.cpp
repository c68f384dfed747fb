//===- CompileCases.cpp - Compile latency: cold, disk hit, in-process hit -===//
//
// The compile-latency set. Cold compiles from nothing, with the time of
// each stage (parse, sema, Tile IR passes, codegen, LLVM -O3, machine code
// and link): the flash-attention forward sample kernel (f16, D = 128,
// G = 4, causal), the tutorial's trivial kernel, and one kernel of each
// operator as its host code specialises it in the operator's headline
// case. On the sample kernel: a disk-cache hit (read, checksum, link, as a
// new process would); an in-process hit (the operator hot path); the
// launch's argument check; and a hit plus a one-program launch (the whole
// fixed cost of a call from the host). The front end on a long generated
// kernel (its time against the kernel's size). Kernel memory: what each
// cached kernel keeps (its code pages, the heap, the resident set), and a
// long stream of kernels through a tier bounded at 16 MiB.
//
//===----------------------------------------------------------------------===//
#include "MachineLimits.h"
#include "Suite.h"

#include "codegen/passes/Pipeline.h"
#include "dsl/Frontend.h"
#include "dsl/ir/Verifier.h"
#include "dsl/syntax/Parser.h"
#include "jit/Compiler.h"
#include "jit/DiskCache.h"
#include "ops/Embedded.h"

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include <malloc.h>
#include <unistd.h>

using namespace tilejit;
using bench::Bound;
using bench::Context;
using bench::Result;

namespace {

const jit::Specialization kAttention = {
    {"T", "f16"}, {"D", "128"}, {"G", "4"}, {"CAUSAL", "true"}};

const jit::KernelSource &attentionSource() {
  return ops::embeddedKernel("ops/samples/flash_attention.tile");
}

/// The tutorial's kernel: one load, a multiply and a store per program.
const jit::KernelSource &scaleSource() {
  static const jit::KernelSource source("scale.tile", R"(
kernel scale<T: f32|f16, BN: i64 = 64>(x: gm<T>[N], y: gm<T>[N], a: f32) grid(cdiv(N, BN)) {
  let i = program_id(0) * BN;
  store(y, [i], cast<T>(cast<f32>(load(x, [i], [BN])) * a));
}
)");
  return source;
}

/// Milliseconds since `t`.
double msSince(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now() - t)
      .count();
}

/// Parse, sema, Tile IR passes, codegen, LLVM -O3 and machine code (object
/// and link) of `kernel` specialised by `spec`, from nothing (memory cache
/// cleared, no disk tier): the median of each stage over the compiles, and
/// of the whole request. The compiler parses a text once per process and
/// keeps it (the parse it times is a lookup), so each compile's parse is
/// the text parsed again apart, as the compiler's first request does, and
/// counted in its time. Also the code and data the kernel maps.
Result coldCompile(Context &ctx, const jit::KernelSource &source,
                   const std::string &kernel, const jit::Specialization &spec) {
  jit::Compiler &c = jit::Compiler::instance();
  jit::DiskCache saved = c.diskCache();
  c.setDiskCache(jit::DiskCache()); // cold means cold: no disk tier either
  Result r;
  r.bound = Bound::Compile;
  std::vector<jit::StageTimes> times;
  uint64_t codeBytes = 0;
  const int n = ctx.options().quick ? 1 : 7;
  // The first request's parse, kept by the process, outside the samples.
  if (auto parsed = source.parsed(); !parsed)
    r.error = llvm::toString(parsed.takeError());
  for (int i = 0; i < n && r.error.empty(); ++i) {
    c.clearMemoryCache();
    const auto start = std::chrono::steady_clock::now();
    DiagnosticEngine diags;
    const bool parsed =
        dsl::parse(diags, diags.addBuffer(source.name(), source.text())) !=
        nullptr;
    const double parseMs = msSince(start);
    if (!parsed) {
      r.error = diags.renderAll();
      break;
    }
    auto k = c.get(source, kernel, spec);
    if (!k) {
      r.error = llvm::toString(k.takeError());
      break;
    }
    if (!k->compiled) {
      r.error = "served from a cache, not compiled";
      break;
    }
    jit::StageTimes t = k->kernel->times();
    t.parse = parseMs;
    t.total = msSince(start);
    codeBytes = k->kernel->codeBytes();
    times.push_back(t);
  }
  c.setDiskCache(saved);
  c.clearMemoryCache();
  if (times.empty())
    return r;
  auto stage = [&](double jit::StageTimes::*field) {
    std::vector<double> v;
    for (const jit::StageTimes &t : times)
      v.push_back(t.*field);
    return bench::median(v);
  };
  r.samples = static_cast<int>(times.size());
  r.extra = {{"parse_ms", stage(&jit::StageTimes::parse)},
             {"sema_ms", stage(&jit::StageTimes::sema)},
             {"tile_passes_ms", stage(&jit::StageTimes::tilePasses)},
             {"codegen_ms", stage(&jit::StageTimes::codegen)},
             {"llvm_opt_ms", stage(&jit::StageTimes::llvmOpt)},
             {"machine_code_ms", stage(&jit::StageTimes::machineCode)},
             {"code_bytes", static_cast<double>(codeBytes)}};
  r.genSeconds = stage(&jit::StageTimes::total) / 1e3;
  r.note = "cold compile: the medians over compiles from nothing, the text "
           "parsed again for each; machine code includes the link into the "
           "JIT";
  return r;
}

/// A case of coldCompile on an embedded kernel.
std::function<Result(Context &)> coldCase(std::string path, std::string kernel,
                                          jit::Specialization spec) {
  return [=](Context &ctx) {
    return coldCompile(ctx, ops::embeddedKernel(path), kernel, spec);
  };
}

/// A disk-cache hit: the kernel loaded from a verified entry (read,
/// checksum, link into the JIT), as a new process would; no compile. In a
/// fresh temporary directory.
Result diskHit(Context &ctx) {
  jit::Compiler &c = jit::Compiler::instance();
  std::string dir =
      (std::filesystem::temp_directory_path() / "tilejit-bench-cache-XXXXXX")
          .string();
  Result r;
  r.bound = Bound::Latency;
  r.inCache = true;
  if (!::mkdtemp(dir.data())) {
    r.error = "cannot make a temporary directory";
    return r;
  }
  jit::DiskCache saved = c.diskCache();
  c.setDiskCache(
      jit::DiskCache(dir, jit::DiskCache::Mode::ReadWrite, uint64_t(1) << 30));
  c.clearMemoryCache();
  auto first =
      c.get(attentionSource(), "attn", kAttention); // compiles and publishes
  if (!first) {
    r.error = llvm::toString(first.takeError());
  } else {
    bool hit = true;
    ctx.measure(
        r,
        [&] {
          c.clearMemoryCache();
          auto k = c.get(attentionSource(), "attn", kAttention);
          if (!k) {
            llvm::consumeError(k.takeError());
            hit = false;
          } else if (k->compiled) {
            hit = false;
          }
        },
        {}, false, ctx.options().quick ? 5 : 21);
    if (!hit)
      r.error = "not a disk hit";
  }
  c.diskCache().clear();
  ::rmdir(dir.c_str());
  c.setDiskCache(saved);
  c.clearMemoryCache();
  return r;
}

/// Measures `f` in batches of `batch` calls back to back; per call.
template <typename F> void perCall(Context &ctx, Result &r, int batch, F &&f) {
  r.bound = Bound::Latency;
  r.inCache = true;
  ctx.measure(
      r,
      [&] {
        for (int i = 0; i < batch; ++i)
          f();
      },
      {}, false, ctx.options().quick ? 5 : 21);
  r.genSeconds /= batch;
  r.note = "per call: the median of batches of " + std::to_string(batch) +
           " back to back";
}

/// An in-process hit with a key made earlier (the operator hot path).
Result memoryHit(Context &ctx) {
  jit::Compiler &c = jit::Compiler::instance();
  Result r;
  auto key = c.makeKey(attentionSource(), "attn", kAttention);
  if (!key) {
    r.error = llvm::toString(key.takeError());
    return r;
  }
  if (auto warm = c.get(*key, attentionSource()); !warm) {
    r.error = llvm::toString(warm.takeError());
    return r;
  }
  const void *volatile sink = nullptr;
  perCall(ctx, r, 10000, [&] {
    auto k = c.get(*key, attentionSource());
    if (!k)
      llvm::consumeError(k.takeError());
    else
      sink = k->kernel.get();
  });
  (void)sink;
  return r;
}

/// The argument list of a one-program flash-attention launch (1 query row,
/// 16 keys): small enough that the call is the fixed cost.
struct TinyAttention {
  std::vector<uint16_t> q = std::vector<uint16_t>(4 * 128),
                        k = std::vector<uint16_t>(16 * 128),
                        v = std::vector<uint16_t>(16 * 128),
                        o = std::vector<uint16_t>(4 * 128);
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
Result launchCheck(Context &ctx) {
  jit::Compiler &c = jit::Compiler::instance();
  auto k = c.get(attentionSource(), "attn", kAttention);
  Result r;
  if (!k) {
    r.error = llvm::toString(k.takeError());
    return r;
  }
  TinyAttention t;
  rt::ArgPack args = t.pack();
  bool ok = true;
  perCall(ctx, r, 10000, [&] {
    if (llvm::Error err = k->kernel->check(args)) {
      llvm::consumeError(std::move(err));
      ok = false;
    }
  });
  if (!ok)
    r.error = "the argument check failed";
  return r;
}

/// An in-process hit, the argument list built and checked, and a
/// one-program grid launched (axpby over 16 floats): the whole fixed cost of
/// a call from the host.
Result hitAndLaunch(Context &ctx) {
  jit::Compiler &c = jit::Compiler::instance();
  const jit::KernelSource &src =
      ops::embeddedKernel("ops/samples/elementwise.tile");
  Result r;
  auto key = c.makeKey(src, "axpby", {{"T", "f32"}});
  if (!key) {
    r.error = llvm::toString(key.takeError());
    return r;
  }
  std::vector<float> x(16, 1.0f), y(16, 2.0f);
  bool ok = true;
  perCall(ctx, r, 1000, [&] {
    auto k = c.get(*key, src);
    rt::ArgPack args;
    args.tensor(x.data(), {16}).tensor(y.data(), {16}).f32(0.5f).f32(0.5f);
    if (!k) {
      llvm::consumeError(k.takeError());
      ok = false;
    } else if (llvm::Error err = k->kernel->launch(args, 1)) {
      llvm::consumeError(std::move(err));
      ok = false;
    }
  });
  if (!ok)
    r.error = "the launch failed";
  return r;
}

/// What the process holds at one moment: its resident set (VmRSS, 0
/// where /proc says nothing) and the bytes malloc has handed out and not
/// had back (mallinfo2: the heap in use, free chunks it keeps not counted).
struct Footprint {
  double rss = 0, heap = 0;

  static Footprint now() {
    Footprint f;
    std::ifstream in("/proc/self/status");
    for (std::string line; std::getline(in, line);)
      if (line.rfind("VmRSS:", 0) == 0)
        f.rss = std::strtod(line.c_str() + 6, nullptr) * 1024; // kB
    const struct mallinfo2 m = ::mallinfo2();
    f.heap = static_cast<double>(m.uordblks + m.hblkhd);
    return f;
  }
};

/// The in-memory tier set up for a memory case, and put back as it was
/// (its bound, the disk tier, nothing left in it) when the case ends, so
/// that the cases after it run as they would have.
class TierForCase {
public:
  explicit TierForCase(uint64_t bound)
      : c_(jit::Compiler::instance()), disk_(c_.diskCache()),
        bound_(c_.stats().memoryMaxBytes) {
    c_.setDiskCache(jit::DiskCache()); // every request a compile
    c_.clearMemoryCache();
    c_.setMemoryCacheMaxBytes(bound);
  }
  ~TierForCase() {
    c_.clearMemoryCache();
    c_.setMemoryCacheMaxBytes(bound_);
    c_.setDiskCache(disk_);
  }
  jit::Compiler &compiler() { return c_; }

private:
  jit::Compiler &c_;
  jit::DiskCache disk_;
  uint64_t bound_;
};

/// The `i`th of a stream of distinct specialisations of the tutorial's
/// kernel: f32 and f16 in turn, BN = 16, 16, 24, 24, 32, ... (the code is a
/// loop over the tile, of one size whatever BN). Two dtypes keep BN below
/// the kernel's local-buffer budget (two f32 tiles of BN: BN < 24576) for
/// the first 6000 or so.
jit::Specialization scaleSpec(int i) {
  return {{"T", i % 2 ? "f16" : "f32"},
          {"BN", std::to_string(16 + 8 * (i / 2))}};
}

/// One request of a kernel memory case: its seconds (-1: it failed), the
/// compile's own (the pipeline, from the parse lookup to the link), and what
/// the kernel maps.
struct ScaleRequest {
  double seconds = -1, compileMs = 0;
  uint64_t codeBytes = 0;
};

/// Compiles specialisation `i` of the tutorial's kernel (a compile, not a
/// hit) and lets go of it (the tier keeps it, or not); a failure sets
/// `error`.
ScaleRequest compileScale(jit::Compiler &c, int i, std::string &error) {
  const auto start = std::chrono::steady_clock::now();
  auto k = c.get(scaleSource(), "scale", scaleSpec(i));
  ScaleRequest q;
  q.seconds = msSince(start) / 1e3;
  if (!k) {
    error = llvm::toString(k.takeError());
    return {};
  }
  if (!k->compiled) {
    error = "a request was served from a cache, not compiled";
    return {};
  }
  q.compileMs = k->kernel->times().total;
  q.codeBytes = k->kernel->codeBytes();
  return q;
}

/// Resident bytes per cached kernel: `n` distinct specialisations of the
/// tutorial's kernel compiled into an empty tier whose bound they stay far
/// below; per kernel, the mean of what each maps (codeBytes), the growth of
/// the bytes mapped for all kernels, of the heap in use (what a cached
/// kernel keeps besides its code: its JIT state, the cache's entry, its
/// key) and of the process's resident set. A few compiles past those
/// first, dropped, so that what the first compile of a process allocates
/// once is not counted.
Result bytesPerKernel(Context &ctx) {
  const int n = ctx.options().quick ? 40 : 200;
  TierForCase tier(uint64_t(1) << 30);
  jit::Compiler &c = tier.compiler();
  Result r;
  r.bound = Bound::Compile;
  for (int i = n; i < n + 8 && r.error.empty(); ++i)
    compileScale(c, i, r.error);
  c.clearMemoryCache();
  const jit::CacheStats before = c.stats();
  const Footprint f0 = Footprint::now();
  double code = 0;
  std::vector<double> seconds;
  for (int i = 0; i < n && r.error.empty(); ++i) {
    const ScaleRequest q = compileScale(c, i, r.error);
    seconds.push_back(q.seconds);
    code += static_cast<double>(q.codeBytes);
  }
  const Footprint f1 = Footprint::now();
  const jit::CacheStats after = c.stats();
  if (!r.error.empty())
    return r;
  if (after.evictions != before.evictions || after.entries != uint64_t(n)) {
    r.error = "the tier did not keep every kernel (" +
              std::to_string(after.entries) + " entries, " +
              std::to_string(after.evictions - before.evictions) +
              " evictions)";
    return r;
  }
  const double kernels = n;
  r.samples = n;
  r.genSeconds = bench::median(seconds);
  r.extra = {
      {"kernels", kernels},
      {"code_bytes_per_kernel", code / kernels},
      {"mapped_bytes_per_kernel", (static_cast<double>(after.mappedBytes) -
                                   static_cast<double>(before.mappedBytes)) /
                                      kernels},
      {"heap_bytes_per_kernel", (f1.heap - f0.heap) / kernels},
      {"rss_bytes_per_kernel", (f1.rss - f0.rss) / kernels}};
  r.note = "kernel memory: distinct specialisations of the tutorial's kernel "
           "(f32 and f16, BN = 16, 24, ...) compiled one after another, no "
           "disk tier; the time is the median compile";
  return r;
}

/// The bound held: a stream of `m` distinct specialisations of the
/// tutorial's kernel, compiled one after another with the tier bounded at
/// 16 MiB; the most the tier held after any request (at most the bound),
/// the bytes mapped for all kernels at the end, the evictions, and the
/// growth of the heap in use and of the resident set over the stream, over
/// its second half and from the first eviction on (flat once the tier is
/// full and each new kernel evicts an old one). Also the median request,
/// and the median compile in it, before the tier was full and after (each
/// request then evicts), and one eviction from the full tier alone.
Result boundHeld(Context &ctx) {
  const int m = ctx.options().quick ? 100 : 3000;
  const uint64_t bound = uint64_t(16) << 20;
  TierForCase tier(bound);
  jit::Compiler &c = tier.compiler();
  Result r;
  r.bound = Bound::Compile;
  const jit::CacheStats before = c.stats();
  const Footprint f0 = Footprint::now();
  Footprint half = f0, atFull;
  int firstEviction = -1;
  uint64_t most = 0;
  std::vector<double> seconds, compileMs;
  for (int i = 0; i < m && r.error.empty(); ++i) {
    const ScaleRequest q = compileScale(c, i, r.error);
    seconds.push_back(q.seconds);
    compileMs.push_back(q.compileMs);
    const jit::CacheStats s = c.stats();
    most = std::max(most, s.memoryBytes);
    if (i + 1 == m / 2)
      half = Footprint::now();
    if (firstEviction < 0 && s.evictions != before.evictions) {
      firstEviction = i;
      atFull = Footprint::now();
    }
  }
  const Footprint f1 = Footprint::now();
  const jit::CacheStats after = c.stats();
  if (!r.error.empty())
    return r;
  r.samples = m;
  r.genSeconds = bench::median(seconds);
  r.extra = {
      {"kernels", static_cast<double>(m)},
      {"bound_bytes", static_cast<double>(bound)},
      {"max_memory_bytes", static_cast<double>(most)},
      {"final_memory_bytes", static_cast<double>(after.memoryBytes)},
      {"final_entries", static_cast<double>(after.entries)},
      {"final_mapped_bytes", static_cast<double>(after.mappedBytes)},
      {"evictions", static_cast<double>(after.evictions - before.evictions)},
      {"heap_growth_bytes", f1.heap - f0.heap},
      {"heap_growth_second_half_bytes", f1.heap - half.heap},
      {"rss_growth_bytes", f1.rss - f0.rss},
      {"rss_growth_second_half_bytes", f1.rss - half.rss}};
  // The median request, and the median compile in it, before the tier
  // was full and from the first eviction on.
  const size_t full =
      firstEviction < 0 ? seconds.size() : static_cast<size_t>(firstEviction);
  auto medianOf = [](const std::vector<double> &v, size_t from, size_t to) {
    return bench::median({v.begin() + static_cast<std::ptrdiff_t>(from),
                          v.begin() + static_cast<std::ptrdiff_t>(to)});
  };
  if (full > 0) {
    r.extra.push_back(
        {"request_before_full_ms", medianOf(seconds, 0, full) * 1e3});
    r.extra.push_back({"compile_before_full_ms", medianOf(compileMs, 0, full)});
  }
  if (firstEviction >= 0) {
    r.extra.push_back(
        {"kernels_after_full", static_cast<double>(m - firstEviction)});
    r.extra.push_back({"request_after_full_ms",
                       medianOf(seconds, full, seconds.size()) * 1e3});
    r.extra.push_back(
        {"compile_after_full_ms", medianOf(compileMs, full, compileMs.size())});
    r.extra.push_back({"heap_growth_after_full_bytes", f1.heap - atFull.heap});
    r.extra.push_back({"rss_growth_after_full_bytes", f1.rss - atFull.rss});
    // One eviction from the full tier alone (its scan of the entries, the
    // kernel's code freed): the bound lowered by one kernel's bytes, five
    // times; the median.
    const uint64_t one = after.entries ? after.memoryBytes / after.entries : 1;
    std::vector<double> evict;
    for (uint64_t k = 1; k <= 5; ++k) {
      const auto start = std::chrono::steady_clock::now();
      c.setMemoryCacheMaxBytes(bound - k * one);
      evict.push_back(msSince(start));
    }
    r.extra.push_back({"evict_one_ms", bench::median(evict)});
  }
  if (most > bound)
    r.error = "the tier held " + std::to_string(most) +
              " bytes, above its bound of " + std::to_string(bound);
  r.note = "kernel memory: distinct specialisations of the tutorial's kernel "
           "(f32 and f16, BN = 16, 24, ...) compiled one after another, no "
           "disk tier; the time is the median compile";
  return r;
}

/// Parse, sema, the Tile IR pipeline and the verifier (no LLVM) of a kernel
/// of `n` sequential loops and ifs, each with its own tile arithmetic;
/// seconds, or -1 with `error` set.
double frontEndSeconds(unsigned n, std::string &error) {
  std::string body = "var t = zeros<f32>([16]);\nlet s = x[0];\n";
  for (unsigned i = 0; i < n; ++i) {
    const std::string v = std::to_string(i);
    body += "for i" + v + " in 0..N { t = t + load(x, [i" + v + "], [16]) * 2.0; }\n";
    body += "if s > " + v + ".0 { t = t - 1.0; }\n";
  }
  body += "store(x, [0], t);";
  const std::string text = "kernel k(x: gm<f32>[N]) grid(1) {\n" + body + "\n}\n";
  const auto start = std::chrono::steady_clock::now();
  DiagnosticEngine diags;
  const uint32_t buf = diags.addBuffer("long.tile", text);
  auto file = dsl::parse(diags, buf);
  auto k = file ? dsl::lowerKernel(*file, "k", {}, diags) : nullptr;
  if (!k || !passes::runDefaultPipeline(*k, diags) || !ir::verify(*k, diags)) {
    error = "the front end failed on " + std::to_string(n) + " loops";
    return -1;
  }
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

/// The front end on 4000 loops and on 1000: their ratio stays near 4 while
/// every pass is linear in the kernel's size (passes that replaced uses, or
/// copied a set, per op once made it quadratic: seconds for 3000 loops).
Result frontEndScaling(Context &ctx) {
  Result r;
  r.bound = Bound::Compile;
  const int n = ctx.options().quick ? 1 : 3;
  std::vector<double> small, large;
  for (int i = 0; i < n && r.error.empty(); ++i) {
    small.push_back(frontEndSeconds(1000, r.error));
    large.push_back(frontEndSeconds(4000, r.error));
  }
  if (!r.error.empty())
    return r;
  r.samples = n;
  const double s = bench::median(small), l = bench::median(large);
  r.genSeconds = l;
  r.extra = {{"loops_1000_ms", s * 1e3}, {"loops_4000_ms", l * 1e3},
             {"ratio_4000_over_1000", s > 0 ? l / s : 0}};
  r.note = "front end only (parse, sema, Tile IR passes, verifier): linear is a ratio near 4";
  return r;
}

// Registration order is the report's order.
bench::Registrar
    r0("compile/cold/flash-attention-fwd/f16-D128-G4-causal", "compile",
       coldCase("ops/samples/flash_attention.tile", "attn", kAttention));
// A trivial kernel, then one kernel of each operator with the
// specialisation its host code asks for in the operator's headline case
// (the first of its file: ifa paged BSH f16, nsa f16, scatter and gather
// prefill f16 ND, fag causal bf16).
bench::Registrar
    rScale("compile/cold/tutorial/scale/f32-BN64", "compile", [](Context &ctx) {
      return coldCompile(ctx, scaleSource(), "scale", {{"T", "f32"}});
    });
bench::Registrar rIfa(
    "compile/cold/ifa/ifa_rows/f16-D128-G4-BKV64-paged", "compile",
    coldCase("ops/incre_flash_attention/incre_flash_attention.tile", "ifa_rows",
             {{"T", "f16"},
              {"KT", "f16"},
              {"D", "128"},
              {"G", "4"},
              {"BKV", "64"},
              {"PAGED", "true"},
              {"MASK", "false"},
              {"PSE", "false"},
              {"QUANTKV", "false"},
              {"CH", "65536"}}));
bench::Registrar
    rNsa("compile/cold/nsa/nsa_compress/f16-D128-CBS32-PS128-BN16", "compile",
         coldCase("ops/nsa_compress_with_cache/nsa_compress_with_cache.tile",
                  "nsa_compress",
                  {{"T", "f16"},
                   {"CBS", "32"},
                   {"PS", "128"},
                   {"D", "128"},
                   {"BN", "16"}}));
bench::Registrar rScatter(
    "compile/cold/scatter/scatter_rows/u16-i32-BK1024-BV1024-stream", "compile",
    coldCase("ops/scatter_pa_kv_cache/scatter_pa_kv_cache.tile", "scatter_rows",
             {{"U", "u16"},
              {"I", "i32"},
              {"HAS_V", "true"},
              {"BK", "1024"},
              {"BV", "1024"},
              {"STREAM", "true"}}));
bench::Registrar rGather(
    "compile/cold/gather/gather_flat/u16-i32-BT8192-BM256-BE16-stream",
    "compile",
    coldCase("ops/gather_pa_kv_cache/gather_pa_kv_cache.tile", "gather_flat",
             {{"U", "u16"},
              {"I", "i32"},
              {"BT", "8192"},
              {"BM", "256"},
              {"BE", "16"},
              {"STREAM", "true"}}));
// As the operator plans it: bf16 products, and key blocks of 128, where the
// host multiplies bf16 fast.
bench::Registrar rFag(
    "compile/cold/fag/fag_main/bf16-D128-G1-BM64", "compile", [](Context &ctx) {
      const bool products = jit::Compiler::instance().hasFastBf16Products();
      jit::Specialization spec{{"T", "bf16"}, {"D", "128"},
                               {"DV", "128"}, {"G", "1"},
                               {"BM", "64"},  {"BN", products ? "128" : "64"}};
      if (products)
        spec.push_back({"BFP", "true"});
      return coldCompile(
          ctx,
          ops::embeddedKernel(
              "ops/flash_attention_score_grad/flash_attention_score_grad.tile"),
          "fag_main", spec);
    });
bench::Registrar r1("compile/disk-hit/flash-attention-fwd/f16-D128-G4-causal",
                    "compile", diskHit);
bench::Registrar r2("compile/memory-hit/flash-attention-fwd/f16-D128-G4-causal",
                    "compile", memoryHit);
bench::Registrar r3("compile/launch-check/flash-attention-fwd/f16-B1-S16",
                    "compile", launchCheck);
bench::Registrar r4("compile/hit-and-launch/axpby/f32-16", "compile",
                    hitAndLaunch);
bench::Registrar r5("compile/front-end/4000-loops-and-ifs", "compile",
                    frontEndScaling);
bench::Registrar rBytes("compile/memory/bytes-per-kernel/scale", "compile",
                        bytesPerKernel);
bench::Registrar rBound("compile/memory/bound-16MiB/scale", "compile",
                        boundHeld);

} // namespace
