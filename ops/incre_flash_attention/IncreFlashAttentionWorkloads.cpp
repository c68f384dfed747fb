//===- IncreFlashAttentionWorkloads.cpp - IncreFlashAttentionV4 in `tilejit
// demo`
//===//
#include "ops/Workloads.h"
#include "ops/incre_flash_attention/IncreFlashAttentionTwin.h"
#include "ops/host/TensorView.h"
#include "ops/samples/SamplesTwin.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <random>

namespace tilejit::ops {

namespace {

using host::DataType;
using host::TensorView;

double toDouble(const unsigned char *p, DataType t) {
  uint16_t h;
  std::memcpy(&h, p, 2);
  return t == DataType::Float16 ? host::halfBitsToFloat(h)
                                : host::bfloat16BitsToFloat(h);
}

/// A decode step: B=8, N=32, N_kv=8 (GQA 4), D=128, lengths 300..700 from a
/// paged 3-D cache (block size 128, shuffled blocks), BSH.
WorkloadResult decode(const std::string &name, DataType dtype) {
  WorkloadResult r;
  r.name = name;
  const int64_t b = 8, n = 32, nkv = 8, d = 128, bs = 128, per = 6;
  const int64_t blocks = b * per;
  std::mt19937 rng(71);
  std::uniform_real_distribution<float> u(-1, 1);
  auto random = [&](int64_t count) {
    std::vector<unsigned char> buf(static_cast<size_t>(count * 2));
    for (int64_t i = 0; i < count; ++i) {
      const float x = u(rng);
      const uint16_t h = dtype == DataType::Float16
                             ? host::floatToHalfBits(x)
                             : host::floatToBFloat16Bits(x);
      std::memcpy(&buf[static_cast<size_t>(i * 2)], &h, 2);
    }
    return buf;
  };
  auto q = random(b * n * d), k = random(blocks * bs * nkv * d),
       v = random(blocks * bs * nkv * d);
  std::vector<unsigned char> out(q.size(), 0), ref(q.size(), 0),
      twin(q.size(), 0);
  std::vector<int32_t> table(static_cast<size_t>(blocks));
  std::iota(table.begin(), table.end(), 0);
  std::shuffle(table.begin(), table.end(), rng);
  host::IntArray asl;
  for (int64_t i = 0; i < b; ++i)
    asl.values.push_back(300 + 50 * i + i % 3);
  TensorView qv = host::contiguousView(q.data(), dtype, {b, 1, n * d});
  TensorView kv = host::contiguousView(k.data(), dtype, {blocks, bs, nkv * d});
  TensorView vv = host::contiguousView(v.data(), dtype, {blocks, bs, nkv * d});
  TensorView tv = host::contiguousView(table.data(), DataType::Int32, {b, per});
  TensorView ov = host::contiguousView(out.data(), dtype, {b, 1, n * d});
  TensorView rv = host::contiguousView(ref.data(), dtype, {b, 1, n * d});
  TensorView hv = host::contiguousView(twin.data(), dtype, {b, 1, n * d});
  host::TensorList kl, vl;
  kl.entries.emplace_back(kv);
  vl.entries.emplace_back(vv);
  aclnn::IncreFlashAttentionV4Args a;
  a.query = &qv;
  a.key = &kl;
  a.value = &vl;
  a.actualSeqLengths = &asl;
  a.blocktable = &tv;
  a.blockSize = bs;
  a.numHeads = n;
  a.numKeyValueHeads = nkv;
  a.scaleValue = 1.0 / std::sqrt(static_cast<double>(d));
  a.inputLayout = "BSH";
  a.innerPrecise = 1;
  a.attentionOut = &ov;
  if (!runFirstCall(a, prepareIncreFlashAttentionV4, r))
    return r;
  aclnn::IncreFlashAttentionV4Args ra = a;
  ra.attentionOut = &rv;
  increFlashAttentionV4Reference(ra);
  // Section 7's bounds (|V| <= 1).
  const bool bf = dtype == DataType::BFloat16;
  r.passed = true;
  for (size_t i = 0; i < out.size(); i += 2) {
    const double o = toDouble(&out[i], dtype), x = toDouble(&ref[i], dtype);
    const double err = std::abs(o - x);
    r.maxAbsErr = std::max(r.maxAbsErr, err);
    if (!(err <= (bf ? 8e-3 : 1e-3) * std::abs(x) + (bf ? 8e-3 : 2e-3)))
      r.passed = false;
  }
  aclnn::IncreFlashAttentionV4Args ta = a;
  ta.attentionOut = &hv;
  pairedMedianMicroseconds([&] { (void)increFlashAttentionV4(a); },
                           [&] { increFlashAttentionV4Handwritten(ta); }, r.generatedUs,
                           r.handwrittenUs);
  return r;
}

} // namespace

std::vector<Workload> increFlashAttentionV4Workloads() {
  return {
      {"incre_flash_attention_v4_pa_f16",
       "decode: B=8, N=32, N_kv=8, D=128, KV 300..700 from a paged cache, f16",
       [] {
         return decode("incre_flash_attention_v4_pa_f16", DataType::Float16);
       }},
      {"incre_flash_attention_v4_pa_bf16",
       "decode: B=8, N=32, N_kv=8, D=128, KV 300..700 from a paged cache, "
       "bf16",
       [] {
         return decode("incre_flash_attention_v4_pa_bf16", DataType::BFloat16);
       }},
  };
}

std::vector<BuiltinKernel> increFlashAttentionV4Kernels() {
  const std::string src =
      "ops/incre_flash_attention/incre_flash_attention.tile";
  return {
      {"ifa_partial",
       src,
       "ifa_partial",
       {{"T", "f16"},
        {"KT", "f16"},
        {"D", "128"},
        {"G", "4"},
        {"BKV", "64"},
        {"PAGED", "true"},
        {"MASK", "false"},
        {"PSE", "false"},
        {"QUANTKV", "false"}}},
      {"ifa_rows",
       src,
       "ifa_rows",
       {{"T", "f16"},
        {"KT", "i8"},
        {"D", "128"},
        {"G", "4"},
        {"BKV", "64"},
        {"PAGED", "true"},
        {"MASK", "false"},
        {"PSE", "false"},
        {"QUANTKV", "true"}}},
      {"ifa_combine",
       src,
       "ifa_combine",
       {{"O", "f16"}, {"D", "128"}, {"G", "4"}, {"QUANT", "false"}}},
  };
}

} // namespace tilejit::ops
