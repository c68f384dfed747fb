//===- GatherPaKvCacheWorkloads.cpp - GatherPaKvCache in `tilejit demo` ---===//
#include "ops/Workloads.h"
#include "ops/gather_pa_kv_cache/GatherPaKvCacheTwin.h"
#include "ops/host/TensorView.h"
#include "ops/samples/SamplesTwin.h"

#include <algorithm>
#include <numeric>
#include <random>

namespace tilejit::ops {

namespace {

using host::DataType;
using host::TensorView;

/// A prefill with prefix cache: 16 requests of 385 to 640 tokens (8200 in
/// all) gathered from a paged cache of 128 blocks x 128 slots x 8 heads x 128
/// (Norm, f16, or PA_NZ, bf16), int32 indices, one request with a one-block
/// seqOffset.
WorkloadResult prefill(const std::string &name, bool nz, DataType dtype) {
  WorkloadResult r;
  r.name = name;
  const int64_t batches = 16, blocks = 128, bs = 128, heads = 8, d = 128;
  const int64_t width = host::elementSize(dtype), e = 32 / width;
  const int64_t row = heads * d, w = 9;
  std::mt19937 rng(51);
  std::vector<int32_t> lens(batches), table(batches * w), offs(batches, 0);
  for (int64_t b = 0; b < batches; ++b)
    lens[b] = b % 2 ? 384 + b : 640 - b; // partial last blocks
  offs[3] = 130;                         // starts at column 1
  std::vector<int32_t> ids(blocks);
  std::iota(ids.begin(), ids.end(), 0);
  for (int64_t b = 0; b < batches; ++b) {
    std::shuffle(ids.begin(), ids.end(), rng);
    std::copy(ids.begin(), ids.begin() + w, table.begin() + b * w);
  }
  const int64_t tokens = std::accumulate(lens.begin(), lens.end(), int64_t(0));
  auto kc = randomBuffer(DType::I16, blocks * bs * row, 52);
  auto vc = randomBuffer(DType::I16, blocks * bs * row, 53);
  auto out0 = randomBuffer(DType::I16, tokens * row, 54);
  auto ko = out0, vo = out0, koRef = out0, voRef = out0, koTwin = out0,
       voTwin = out0;
  std::vector<int64_t> cacheShape =
      nz ? std::vector<int64_t>{blocks, row / e, bs, e}
         : std::vector<int64_t>{blocks, bs, heads, d};
  std::vector<int64_t> outShape = nz ? std::vector<int64_t>{tokens, row}
                                     : std::vector<int64_t>{tokens, heads, d};
  const host::Format format =
      nz ? host::Format::FractalNZ : host::Format::ND;
  auto args = [&](std::vector<unsigned char> &k, std::vector<unsigned char> &v,
                  TensorView *views) {
    views[0] = host::contiguousView(kc.data(), dtype, cacheShape, format);
    views[1] = host::contiguousView(vc.data(), dtype, cacheShape, format);
    views[2] = host::contiguousView(table.data(), DataType::Int32, {batches, w});
    views[3] = host::contiguousView(lens.data(), DataType::Int32, {batches});
    views[4] = host::contiguousView(k.data(), dtype, outShape);
    views[5] = host::contiguousView(v.data(), dtype, outShape);
    views[6] = host::contiguousView(offs.data(), DataType::Int32, {batches});
    aclnn::GatherPaKvCacheArgs a;
    a.keyCache = &views[0];
    a.valueCache = &views[1];
    a.blockTables = &views[2];
    a.seqLens = &views[3];
    a.keyRef = &views[4];
    a.valueRef = &views[5];
    a.seqOffsetOptional = &views[6];
    a.cacheMode = nz ? "PA_NZ" : "Norm";
    return a;
  };
  TensorView gen[7], ref[7], twin[7];
  auto a = args(ko, vo, gen);
  if (!runFirstCall(a, prepareGatherPaKvCache, r))
    return r;
  gatherPaKvCacheReference(args(koRef, voRef, ref));
  r.passed = ko == koRef && vo == voRef; // pure data movement: bit-exact
  r.maxAbsErr = r.passed ? 0 : 1;
  auto t = args(koTwin, voTwin, twin);
  pairedMedianMicroseconds([&] { (void)gatherPaKvCache(a); },
                           [&] { gatherPaKvCacheHandwritten(t); }, r.generatedUs,
                           r.handwrittenUs);
  return r;
}

} // namespace

std::vector<Workload> gatherPaKvCacheWorkloads() {
  return {
      {"gather_pa_kv_cache_norm_f16",
       "8200 tokens x 8 heads x 128 from a 128 x 128-slot Norm cache, f16",
       [] {
         return prefill("gather_pa_kv_cache_norm_f16", false,
                        DataType::Float16);
       }},
      {"gather_pa_kv_cache_nz_bf16",
       "8200 tokens x 8 heads x 128 from a PA_NZ cache, bf16",
       [] {
         return prefill("gather_pa_kv_cache_nz_bf16", true, DataType::BFloat16);
       }},
  };
}

std::vector<BuiltinKernel> gatherPaKvCacheKernels() {
  const std::string src = "ops/gather_pa_kv_cache/gather_pa_kv_cache.tile";
  return {
      {"gather_flat",
       src,
       "gather_flat",
       {{"U", "u16"},
        {"I", "i32"},
        {"BT", "8192"},
        {"BM", "256"},
        {"BE", "16"}}},
      {"gather_rows",
       src,
       "gather_rows",
       {{"U", "u16"}, {"I", "i32"}, {"BN", "1"}, {"BD", "1024"}}},
      {"gather_nz",
       src,
       "gather_nz",
       {{"U", "u16"}, {"I", "i32"}, {"E", "16"}}},
  };
}

} // namespace tilejit::ops
