//===- Samples.cpp - Sample kernels: host entry points and references -----===//
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

//===----------------------------------------------------------------------===//
// References
//===----------------------------------------------------------------------===//

void axpbyReference(DType t, const void *x, void *y, int64_t n, float alpha, float beta) {
  for (int64_t i = 0; i < n; ++i) {
    // The kernel's f32 arithmetic, operation by operation.
    float xv = static_cast<float>(loadAsDouble(t, x, i));
    float yv = static_cast<float>(loadAsDouble(t, y, i));
    float r = alpha * xv;
    float s = beta * yv;
    float sum = r + s;
    storeFromDouble(t, y, i, sum);
  }
}

void softmaxReference(DType t, const void *x, void *y, int64_t m, int64_t n) {
  std::vector<double> row(n);
  for (int64_t r = 0; r < m; ++r) {
    double mx = -INFINITY;
    for (int64_t c = 0; c < n; ++c) {
      row[c] = loadAsDouble(t, x, r * n + c);
      mx = std::max(mx, row[c]);
    }
    double sum = 0;
    for (int64_t c = 0; c < n; ++c)
      sum += std::exp(row[c] - mx);
    for (int64_t c = 0; c < n; ++c)
      storeFromDouble(t, y, r * n + c, std::exp(row[c] - mx) / sum);
  }
}

void matmulReference(DType t, const void *a, const void *b, float *c, int64_t m,
                     int64_t n, int64_t k) {
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double s = 0;
      for (int64_t q = 0; q < k; ++q)
        s += loadAsDouble(t, a, i * k + q) * loadAsDouble(t, b, j * k + q);
      c[i * n + j] = static_cast<float>(s);
    }
}

void attentionReference(DType t, const AttentionShape &s, const void *q,
                        const void *k, const void *v, void *o) {
  int64_t g = s.heads / s.kvHeads;
  double scale = s.scale();
  std::vector<double> p(s.keys);
  for (int64_t b = 0; b < s.batch; ++b)
    for (int64_t h = 0; h < s.heads; ++h)
      for (int64_t i = 0; i < s.queries; ++i) {
        int64_t hk = h / g;
        int64_t qo = ((b * s.heads + h) * s.queries + i) * s.dim;
        double mx = -INFINITY;
        for (int64_t j = 0; j < s.keys; ++j) {
          bool visible = !s.causal || j <= i + (s.keys - s.queries);
          double dot = 0;
          int64_t ko = ((b * s.kvHeads + hk) * s.keys + j) * s.dim;
          for (int64_t d = 0; d < s.dim; ++d)
            dot += loadAsDouble(t, q, qo + d) * loadAsDouble(t, k, ko + d);
          p[j] = visible ? dot * scale : -INFINITY;
          mx = std::max(mx, p[j]);
        }
        double sum = 0;
        for (int64_t j = 0; j < s.keys; ++j) {
          p[j] = mx == -INFINITY ? 0 : std::exp(p[j] - mx);
          sum += p[j];
        }
        for (int64_t d = 0; d < s.dim; ++d) {
          double acc = 0;
          for (int64_t j = 0; j < s.keys; ++j)
            acc += p[j] * loadAsDouble(t, v, ((b * s.kvHeads + hk) * s.keys + j) * s.dim + d);
          storeFromDouble(t, o, qo + d, sum == 0 ? 0 : acc / sum);
        }
      }
}

} // namespace tilejit::ops
