//===- NsaCompressWithCacheWorkloads.cpp - The operator in `tilejit demo` -===//
#include "ops/Workloads.h"
#include "ops/nsa_compress_with_cache/NsaCompressWithCacheTwin.h"
#include "ops/host/TensorView.h"
#include "ops/samples/SamplesTwin.h"

#include <algorithm>
#include <numeric>
#include <random>

namespace tilejit::ops {

namespace {

using host::DataType;
using host::TensorView;

/// A decode step: 64 entries of 32 heads x 128, every one completing a
/// window of 32 tokens (stride 16) read through a shuffled block table of
/// 128-token pages; f16 or bf16.
WorkloadResult decode(const std::string &name, DataType dtype) {
  WorkloadResult r;
  r.name = name;
  const int64_t batch = 64, heads = 32, d = 128, cbs = 32, stride = 16;
  const int64_t page = 128, w = 4, blocks = batch * w;
  std::mt19937 rng(61);
  std::vector<int64_t> lens(batch);
  for (int64_t b = 0; b < batch; ++b)
    lens[b] = cbs + stride * (1 + (b * 7) % 28); // 48 .. 480
  std::vector<int32_t> table(batch * w), slots(batch);
  std::iota(table.begin(), table.end(), 0);
  std::shuffle(table.begin(), table.end(), rng);
  std::iota(slots.begin(), slots.end(), 0);
  std::shuffle(slots.begin(), slots.end(), rng);
  const DType kind = dtype == DataType::BFloat16 ? DType::BF16 : DType::F16;
  auto input = randomBuffer(kind, blocks * page * heads * d, 62);
  auto weight = randomBuffer(kind, cbs * heads, 63);
  auto out0 = randomBuffer(kind, batch * heads * d, 64);
  auto out = out0, outRef = out0, outTwin = out0;
  host::IntArray lensArray{lens};
  auto args = [&](std::vector<unsigned char> &o, TensorView *views) {
    views[0] = host::contiguousView(input.data(), dtype, {blocks, page, heads, d});
    views[1] = host::contiguousView(weight.data(), dtype, {cbs, heads});
    views[2] = host::contiguousView(slots.data(), DataType::Int32, {batch});
    views[3] = host::contiguousView(table.data(), DataType::Int32, {batch, w});
    views[4] = host::contiguousView(o.data(), dtype, {batch, heads, d});
    aclnn::NsaCompressWithCacheArgs a;
    a.input = &views[0];
    a.weight = &views[1];
    a.slotMapping = &views[2];
    a.actSeqLenOptional = &lensArray;
    a.blockTableOptional = &views[3];
    a.compressBlockSize = cbs;
    a.compressStride = stride;
    a.actSeqLenType = 1;
    a.pageBlockSize = page;
    a.outputCache = &views[4];
    return a;
  };
  TensorView gen[5], ref[5], twin[5];
  auto a = args(out, gen);
  if (!runFirstCall(a, prepareNsaCompressWithCache, r))
    return r;
  nsaCompressWithCacheReference(args(outRef, ref));
  r.passed = out == outRef; // the spec's order: bit-exact
  r.maxAbsErr = r.passed ? 0 : 1;
  auto t = args(outTwin, twin);
  pairedMedianMicroseconds([&] { (void)nsaCompressWithCache(a); },
                           [&] { nsaCompressWithCacheHandwritten(t); }, r.generatedUs,
                           r.handwrittenUs);
  return r;
}

} // namespace

std::vector<Workload> nsaCompressWithCacheWorkloads() {
  return {
      {"nsa_compress_decode_f16",
       "64 entries x 32 heads x 128 compressing windows of 32 tokens "
       "(stride 16) from 128-token pages, f16",
       [] { return decode("nsa_compress_decode_f16", DataType::Float16); }},
      {"nsa_compress_decode_bf16", "the same decode step in bf16",
       [] { return decode("nsa_compress_decode_bf16", DataType::BFloat16); }},
  };
}

std::vector<BuiltinKernel> nsaCompressWithCacheKernels() {
  return {
      {"nsa_compress",
       "ops/nsa_compress_with_cache/nsa_compress_with_cache.tile",
       "nsa_compress",
       {{"T", "f16"}, {"CBS", "32"}, {"PS", "128"}, {"D", "128"}, {"BN", "16"}}},
  };
}

} // namespace tilejit::ops
