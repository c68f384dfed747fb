//===- Samples.cpp - Sample kernels: host entry points ----------------------===//
#include "ops/samples/Samples.h"

#include "ops/Embedded.h"
#include "ops/samples/Half.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

namespace tilejit::ops {

const char *dtypeName(DType t) {
  static const char *const names[] = {"f32", "f16", "bf16", "i8", "u8", "i16", "i32", "i64"};
  return names[static_cast<int>(t)];
}

unsigned dtypeSize(DType t) {
  static const unsigned sizes[] = {4, 2, 2, 1, 1, 2, 4, 8};
  return sizes[static_cast<int>(t)];
}

double loadAsDouble(DType t, const void *p, int64_t i) {
  switch (t) {
  case DType::F32: return static_cast<const float *>(p)[i];
  case DType::F16: return halfToFloat(static_cast<const uint16_t *>(p)[i]);
  case DType::BF16: return bf16ToFloat(static_cast<const uint16_t *>(p)[i]);
  case DType::I8: return static_cast<const int8_t *>(p)[i];
  case DType::U8: return static_cast<const uint8_t *>(p)[i];
  case DType::I16: return static_cast<const int16_t *>(p)[i];
  case DType::I32: return static_cast<const int32_t *>(p)[i];
  case DType::I64: return static_cast<double>(static_cast<const int64_t *>(p)[i]);
  }
  return 0;
}

template <typename I> static I saturate(double v) {
  if (std::isnan(v))
    return 0;
  double r = std::nearbyint(v); // round half to even (default mode)
  if (r <= static_cast<double>(std::numeric_limits<I>::min()))
    return std::numeric_limits<I>::min();
  if (r >= static_cast<double>(std::numeric_limits<I>::max()))
    return std::numeric_limits<I>::max();
  return static_cast<I>(r);
}

void storeFromDouble(DType t, void *p, int64_t i, double v) {
  switch (t) {
  case DType::F32: static_cast<float *>(p)[i] = static_cast<float>(v); return;
  case DType::F16: static_cast<uint16_t *>(p)[i] = floatToHalf(static_cast<float>(v)); return;
  case DType::BF16: static_cast<uint16_t *>(p)[i] = floatToBf16(static_cast<float>(v)); return;
  case DType::I8: static_cast<int8_t *>(p)[i] = saturate<int8_t>(v); return;
  case DType::U8: static_cast<uint8_t *>(p)[i] = saturate<uint8_t>(v); return;
  case DType::I16: static_cast<int16_t *>(p)[i] = saturate<int16_t>(v); return;
  case DType::I32: static_cast<int32_t *>(p)[i] = saturate<int32_t>(v); return;
  case DType::I64: static_cast<int64_t *>(p)[i] = saturate<int64_t>(v); return;
  }
}

std::vector<unsigned char> randomBuffer(DType t, int64_t n, unsigned seed,
                                        double lo, double hi) {
  std::vector<unsigned char> buf(n * dtypeSize(t));
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> dist(lo, hi);
  for (int64_t i = 0; i < n; ++i)
    storeFromDouble(t, buf.data(), i, dist(rng));
  return buf;
}

double maxAbsDiff(DType t, const void *a, const void *b, int64_t n) {
  double m = 0;
  for (int64_t i = 0; i < n; ++i)
    m = std::max(m, std::abs(loadAsDouble(t, a, i) - loadAsDouble(t, b, i)));
  return m;
}

//===----------------------------------------------------------------------===//
// Generated kernels
//===----------------------------------------------------------------------===//

namespace {

rt::ElemType elemTypeOf(DType t) {
  rt::ElemType e = rt::ElemType::F32;
  [[maybe_unused]] bool known = rt::parseElemType(dtypeName(t), e);
  assert(known && "every sample dtype is a DSL kind");
  return e;
}

llvm::Expected<jit::KernelRef> launch(jit::Compiler &c, const char *path,
                                      const char *kernel, jit::Specialization spec,
                                      const rt::ArgPack &args, int threads) {
  auto k = c.get(embeddedKernel(path), kernel, spec);
  if (!k)
    return k.takeError();
  if (auto err = k->kernel->launch(args, threads))
    return err;
  return k;
}

} // namespace

llvm::Expected<jit::KernelRef> runAxpby(jit::Compiler &c, DType t, const void *x,
                                        void *y, int64_t n, float alpha, float beta,
                                        int threads) {
  rt::ArgPack args;
  const rt::ElemType e = elemTypeOf(t);
  args.tensor(e, const_cast<void *>(x), {n}).tensor(e, y, {n}).f32(alpha).f32(beta);
  return launch(c, "ops/samples/elementwise.tile", "axpby", {{"T", dtypeName(t)}},
                args, threads);
}

llvm::Expected<jit::KernelRef> runSoftmax(jit::Compiler &c, DType t, const void *x,
                                          void *y, int64_t m, int64_t n, int threads) {
  rt::ArgPack args;
  const rt::ElemType e = elemTypeOf(t);
  args.tensor(e, const_cast<void *>(x), {m, n}).tensor(e, y, {m, n});
  // Rows up to 4096 elements fit one tile: one pass, one exp per element.
  // Longer rows stream through 1024-wide tiles with an online max and sum.
  int64_t bn = 16;
  while (bn < n && bn < 4096)
    bn *= 2;
  bool oneTile = n <= bn;
  return launch(c, "ops/samples/softmax.tile", oneTile ? "softmax_tile" : "softmax",
                {{"T", dtypeName(t)}, {"BN", std::to_string(oneTile ? bn : 1024)}},
                args, threads);
}

llvm::Expected<jit::KernelRef> runMatmul(jit::Compiler &c, DType t, const void *a,
                                         const void *b, float *out, int64_t m,
                                         int64_t n, int64_t k, int threads) {
  rt::ArgPack args;
  const rt::ElemType e = elemTypeOf(t);
  args.tensor(e, const_cast<void *>(a), {m, k})
      .tensor(e, const_cast<void *>(b), {n, k})
      .tensor(out, {m, n});
  return launch(c, "ops/samples/matmul.tile", "matmul_abt", {{"T", dtypeName(t)}},
                args, threads);
}

llvm::Expected<jit::KernelRef> runAttention(jit::Compiler &c, DType t,
                                            const AttentionShape &s, const void *q,
                                            const void *k, const void *v, void *o,
                                            int threads) {
  rt::ArgPack args;
  const rt::ElemType e = elemTypeOf(t);
  args.tensor(e, const_cast<void *>(q), {s.batch, s.heads, s.queries, s.dim})
      .tensor(e, const_cast<void *>(k), {s.batch, s.kvHeads, s.keys, s.dim})
      .tensor(e, const_cast<void *>(v), {s.batch, s.kvHeads, s.keys, s.dim})
      .tensor(e, o, {s.batch, s.heads, s.queries, s.dim})
      .f32(s.scale());
  return launch(c, "ops/samples/flash_attention.tile", "attn",
                {{"T", dtypeName(t)},
                 {"D", std::to_string(s.dim)},
                 {"G", std::to_string(s.heads / s.kvHeads)},
                 {"CAUSAL", s.causal ? "true" : "false"}},
                args, threads);
}

} // namespace tilejit::ops
