//===- Workloads.cpp - The built-in workloads of `tilejit demo` -----------===//
#include "ops/Workloads.h"

#include "ops/samples/SamplesTwin.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <random>

namespace tilejit::ops {

namespace {

/// Fills the compile fields of a result from the first request.
bool record(WorkloadResult &r, llvm::Expected<jit::KernelRef> &k) {
  if (!k) {
    r.error = llvm::toString(k.takeError());
    return false;
  }
  r.tilingKey = k->kernel->key().str();
  r.compiled = k->compiled;
  r.compileMs = k->compiled ? k->kernel->times().total : 0;
  return true;
}

WorkloadResult axpbyWorkload() {
  WorkloadResult r;
  r.name = "elementwise_axpby_f16";
  const int64_t n = (int64_t(1) << 22) + 3;
  auto x = randomBuffer(DType::F16, n, 1), y0 = randomBuffer(DType::F16, n, 2);
  auto y = y0, want = y0, twin = y0;
  jit::Compiler &c = jit::Compiler::instance();
  auto k = runAxpby(c, DType::F16, x.data(), y.data(), n, 0.5f, 0.25f);
  if (!record(r, k))
    return r;
  axpbyReference(DType::F16, x.data(), want.data(), n, 0.5f, 0.25f);
  r.maxAbsErr = maxAbsDiff(DType::F16, y.data(), want.data(), n);
  r.passed = r.maxAbsErr == 0; // same f32 operations: bit-exact
  pairedMedianMicroseconds(
      [&] {
        llvm::consumeError(
            runAxpby(c, DType::F16, x.data(), y.data(), n, 0.5f, 0.25f)
                .takeError());
      },
      [&] {
        axpbyHandwritten(DType::F16, x.data(), twin.data(), n, 0.5f, 0.25f);
      },
      r.generatedUs, r.handwrittenUs);
  return r;
}

WorkloadResult softmaxWorkload() {
  WorkloadResult r;
  r.name = "softmax_f16";
  const int64_t m = 4096, n = 1000;
  auto x = randomBuffer(DType::F16, m * n, 3, -8, 8);
  std::vector<unsigned char> y(x.size()), want(x.size()), twin(x.size());
  jit::Compiler &c = jit::Compiler::instance();
  auto k = runSoftmax(c, DType::F16, x.data(), y.data(), m, n);
  if (!record(r, k))
    return r;
  softmaxReference(DType::F16, x.data(), want.data(), m, n);
  r.maxAbsErr = maxAbsDiff(DType::F16, y.data(), want.data(), m * n);
  r.passed = r.maxAbsErr <= 1e-3; // f16 storage: 2^-11 at 1.0, plus f32 math
  pairedMedianMicroseconds(
      [&] {
        llvm::consumeError(
            runSoftmax(c, DType::F16, x.data(), y.data(), m, n).takeError());
      },
      [&] { softmaxHandwritten(DType::F16, x.data(), twin.data(), m, n); },
      r.generatedUs, r.handwrittenUs);
  return r;
}

WorkloadResult matmulWorkload(DType t) {
  WorkloadResult r;
  r.name = std::string("matmul_abt_") + dtypeName(t);
  const int64_t m = 512, n = 512, k = 512;
  auto a = randomBuffer(t, m * k, 4), b = randomBuffer(t, n * k, 5);
  std::vector<float> out(m * n), want(m * n), twin(m * n);
  jit::Compiler &c = jit::Compiler::instance();
  auto kr = runMatmul(c, t, a.data(), b.data(), out.data(), m, n, k);
  if (!record(r, kr))
    return r;
  matmulReference(t, a.data(), b.data(), want.data(), m, n, k);
  r.maxAbsErr = maxAbsDiff(DType::F32, out.data(), want.data(), m * n);
  r.passed = r.maxAbsErr <= 1e-6 * k * 4; // f32 accumulation of exact products
  pairedMedianMicroseconds(
      [&] {
        llvm::consumeError(
            runMatmul(c, t, a.data(), b.data(), out.data(), m, n, k)
                .takeError());
      },
      [&] { matmulHandwritten(t, a.data(), b.data(), twin.data(), m, n, k); },
      r.generatedUs, r.handwrittenUs);
  return r;
}

WorkloadResult attentionWorkload() {
  WorkloadResult r;
  r.name = "flash_attention_f16_causal_gqa";
  AttentionShape s;
  s.batch = 1;
  s.heads = 16;
  s.kvHeads = 4;
  s.queries = 128;
  s.keys = 512;
  s.dim = 64;
  s.causal = true;
  int64_t qn = s.batch * s.heads * s.queries * s.dim,
          kn = s.batch * s.kvHeads * s.keys * s.dim;
  auto q = randomBuffer(DType::F16, qn, 6), k = randomBuffer(DType::F16, kn, 7),
       v = randomBuffer(DType::F16, kn, 8);
  std::vector<unsigned char> o(q.size()), want(q.size()), twin(q.size());
  jit::Compiler &c = jit::Compiler::instance();
  auto kr =
      runAttention(c, DType::F16, s, q.data(), k.data(), v.data(), o.data());
  if (!record(r, kr))
    return r;
  attentionReference(DType::F16, s, q.data(), k.data(), v.data(), want.data());
  r.maxAbsErr = maxAbsDiff(DType::F16, o.data(), want.data(), qn);
  r.passed = r.maxAbsErr <= 4e-3; // f16 storage of values in [-2, 2]
  pairedMedianMicroseconds(
      [&] {
        llvm::consumeError(runAttention(c, DType::F16, s, q.data(), k.data(),
                                        v.data(), o.data())
                               .takeError());
      },
      [&] {
        attentionHandwritten(DType::F16, s, q.data(), k.data(), v.data(),
                             twin.data());
      },
      r.generatedUs, r.handwrittenUs);
  return r;
}

} // namespace

const std::vector<Workload> &workloads() {
  static const std::vector<Workload> all = [] {
    std::vector<Workload> list = {
        {"elementwise_axpby_f16", "y = a*x + b*y over 4M+3 f16 elements",
         axpbyWorkload},
        {"softmax_f16", "row softmax, 4096 x 1000 f16", softmaxWorkload},
        {"matmul_abt_f32", "C = A·Bᵀ, 512^3, f32 inputs",
         [] { return matmulWorkload(DType::F32); }},
        {"matmul_abt_f16", "C = A·Bᵀ, 512^3, f16 inputs",
         [] { return matmulWorkload(DType::F16); }},
        {"matmul_abt_bf16", "C = A·Bᵀ, 512^3, bf16 inputs",
         [] { return matmulWorkload(DType::BF16); }},
        {"flash_attention_f16_causal_gqa",
         "attention forward, 16 heads over 4 KV heads, 128 queries x 512 keys, "
         "D=64, causal",
         attentionWorkload},
    };
    for (auto ops : {scatterPaKvCacheWorkloads, gatherPaKvCacheWorkloads,
                     increFlashAttentionV4Workloads,
                     nsaCompressWithCacheWorkloads,
                     flashAttentionScoreGradWorkloads})
      for (Workload &w : ops())
        list.push_back(std::move(w));
    return list;
  }();
  return all;
}

const std::vector<BuiltinKernel> &builtinKernels() {
  static const std::vector<BuiltinKernel> all = [] {
    std::vector<BuiltinKernel> list = {
        {"axpby", "ops/samples/elementwise.tile", "axpby", {{"T", "f16"}}},
        {"convert",
         "ops/samples/elementwise.tile",
         "convert",
         {{"S", "f32"}, {"D", "bf16"}}},
        {"copy",
         "ops/samples/elementwise.tile",
         "copy",
         {{"T", "f16"}, {"U", "u16"}}},
        {"softmax",
         "ops/samples/softmax.tile",
         "softmax",
         {{"T", "f16"}, {"BN", "1024"}}},
        {"matmul_abt", "ops/samples/matmul.tile", "matmul_abt", {{"T", "f32"}}},
        {"attn",
         "ops/samples/flash_attention.tile",
         "attn",
         {{"T", "f16"}, {"D", "64"}, {"G", "4"}, {"CAUSAL", "true"}}},
    };
    for (auto ops : {scatterPaKvCacheKernels, gatherPaKvCacheKernels,
                     increFlashAttentionV4Kernels,
                     nsaCompressWithCacheKernels,
                     flashAttentionScoreGradKernels})
      for (BuiltinKernel &k : ops())
        list.push_back(std::move(k));
    return list;
  }();
  return all;
}

} // namespace tilejit::ops
