//===- ScatterPaKvCacheWorkloads.cpp - ScatterPaKvCache in `tilejit demo` -===//
#include "ops/Workloads.h"
#include "ops/host/TensorView.h"
#include "ops/samples/SamplesTwin.h"
#include "ops/scatter_pa_kv_cache/ScatterPaKvCacheTwin.h"

#include <algorithm>
#include <numeric>
#include <random>

namespace tilejit::ops {

namespace {

using host::DataType;
using host::TensorView;

/// A prefill step: `tokens` new tokens of N heads into random free slots of
/// a paged cache (ND or PA_NZ), f16 or bf16 by width, int32 slots.
WorkloadResult prefill(const std::string &name, bool nz, DataType dtype) {
  WorkloadResult r;
  r.name = name;
  const int64_t tokens = 4096, heads = 8, d = 128, blocks = 64, bs = 128;
  const int64_t e = 32 / host::elementSize(dtype);
  const int64_t row = heads * d;
  auto key = randomBuffer(DType::I16, tokens * row, 40),
       value = randomBuffer(DType::I16, tokens * row, 41);
  auto cache0 = randomBuffer(DType::I16, blocks * bs * row, 42);
  std::vector<int64_t> slots(static_cast<size_t>(blocks * bs));
  std::iota(slots.begin(), slots.end(), 0);
  std::shuffle(slots.begin(), slots.end(), std::mt19937(43));
  std::vector<int32_t> slot32(slots.begin(), slots.begin() + tokens);
  slot32[7] = -1; // a padding token
  auto kc = cache0, vc = cache0, kcRef = cache0, vcRef = cache0,
       kcTwin = cache0, vcTwin = cache0;
  std::vector<int64_t> cacheShape =
      nz ? std::vector<int64_t>{blocks, row / e, bs, e}
         : std::vector<int64_t>{blocks, bs, heads, d};
  auto args = [&](std::vector<unsigned char> &k, std::vector<unsigned char> &v,
                  TensorView *views) {
    views[0] = host::contiguousView(key.data(), dtype, {tokens, heads, d});
    views[1] = host::contiguousView(k.data(), dtype, cacheShape);
    views[2] = host::contiguousView(slot32.data(), DataType::Int32, {tokens});
    views[3] = host::contiguousView(value.data(), dtype, {tokens, heads, d});
    views[4] = host::contiguousView(v.data(), dtype, cacheShape);
    aclnn::ScatterPaKvCacheArgs a;
    a.key = &views[0];
    a.keyCacheRef = &views[1];
    a.slotMapping = &views[2];
    a.value = &views[3];
    a.valueCacheRef = &views[4];
    a.cacheModeOptional = nz ? "PA_NZ" : "Norm";
    return a;
  };
  TensorView gen[5], ref[5], twin[5];
  auto a = args(kc, vc, gen);
  if (!runFirstCall(a, prepareScatterPaKvCache, r))
    return r;
  scatterPaKvCacheReference(args(kcRef, vcRef, ref));
  r.passed = kc == kcRef && vc == vcRef; // pure data movement: bit-exact
  r.maxAbsErr = r.passed ? 0 : 1;
  auto t = args(kcTwin, vcTwin, twin);
  pairedMedianMicroseconds([&] { (void)scatterPaKvCache(a); },
                           [&] { scatterPaKvCacheHandwritten(t); }, r.generatedUs,
                           r.handwrittenUs);
  return r;
}

} // namespace

std::vector<Workload> scatterPaKvCacheWorkloads() {
  return {
      {"scatter_pa_kv_cache_nd_f16",
       "4096 tokens x 8 heads x 128 into a 64 x 128-slot ND cache, f16",
       [] {
         return prefill("scatter_pa_kv_cache_nd_f16", false, DataType::Float16);
       }},
      {"scatter_pa_kv_cache_nz_bf16",
       "4096 tokens x 8 heads x 128 into a PA_NZ cache, bf16",
       [] {
         return prefill("scatter_pa_kv_cache_nz_bf16", true,
                        DataType::BFloat16);
       }},
  };
}

std::vector<BuiltinKernel> scatterPaKvCacheKernels() {
  const std::string src = "ops/scatter_pa_kv_cache/scatter_pa_kv_cache.tile";
  return {
      {"scatter_rows",
       src,
       "scatter_rows",
       {{"U", "u16"},
        {"I", "i32"},
        {"HAS_V", "true"},
        {"BK", "1024"},
        {"BV", "1024"}}},
      {"scatter_nz",
       src,
       "scatter_nz",
       {{"U", "u16"}, {"I", "i32"}, {"E", "16"}, {"CB", "32"}}},
      {"scatter_heads",
       src,
       "scatter_heads",
       {{"U", "u16"},
        {"T", "f16"},
        {"A", "f32"},
        {"I", "i32"},
        {"MODE", "MEAN"},
        {"PADDED", "false"}}},
  };
}

} // namespace tilejit::ops
