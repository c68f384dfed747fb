//===- Samples.h - The sample kernels that prove the compiler core -*- C++ -*-===//
///
/// \file
/// Host entry points of the sample kernels (ops/samples/*.tile), their scalar
/// references (double accumulation) and their hand-written C++ twins
/// (vectorised and multi-threaded; HandwrittenImpl.inc, compiled once per ISA
/// and dispatched at run time). Tensors are contiguous row-major; element
/// kinds are given as `DType`.
///
//===----------------------------------------------------------------------===//
#ifndef TILEJIT_OPS_SAMPLES_SAMPLES_H
#define TILEJIT_OPS_SAMPLES_SAMPLES_H

#include "jit/Compiler.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

namespace tilejit::ops {

enum class DType { F32, F16, BF16, I8, U8, I16, I32, I64 };

/// "f32", "f16", ... (the DSL's names).
const char *dtypeName(DType t);
/// Bytes per element.
unsigned dtypeSize(DType t);
/// Element `i` of a buffer of `t`, as double.
double loadAsDouble(DType t, const void *p, int64_t i);
/// Stores `v` rounded to nearest even (saturating for integers) as `t`.
void storeFromDouble(DType t, void *p, int64_t i, double v);
/// `n` elements of `t` drawn uniformly from [lo, hi) with a fixed seed.
std::vector<unsigned char> randomBuffer(DType t, int64_t n, unsigned seed,
                                        double lo = -2, double hi = 2);
/// Largest |a[i] - b[i]| over `n` elements of `t`.
double maxAbsDiff(DType t, const void *a, const void *b, int64_t n);

/// Wall time of one run of `fn`, in microseconds.
template <typename F> double microseconds(F &&fn) {
  auto s = std::chrono::steady_clock::now();
  fn();
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - s)
      .count();
}

/// The median of `t` (reordered).
inline double medianOf(std::vector<double> &t) {
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

/// Times `gen` and `twin` in alternation (one warm-up run of each, then
/// `reps` pairs), so that both see the same state of a shared machine and of
/// the caches, and stores the median of each in `genUs` / `twinUs`.
template <typename G, typename T>
void pairedMedianMicroseconds(G &&gen, T &&twin, double &genUs, double &twinUs, int reps = 9) {
  gen();
  twin();
  std::vector<double> g, t;
  for (int i = 0; i < reps; ++i) {
    g.push_back(microseconds(gen));
    t.push_back(microseconds(twin));
  }
  genUs = medianOf(g);
  twinUs = medianOf(t);
}

//===----------------------------------------------------------------------===//
// Generated kernels (JIT-compiled; `threads` > 0 caps the cores)
//===----------------------------------------------------------------------===//

/// y = alpha*x + beta*y over n elements of `t`.
llvm::Expected<jit::KernelRef> runAxpby(jit::Compiler &c, DType t, const void *x,
                                        void *y, int64_t n, float alpha, float beta,
                                        int threads = 0);
/// Row softmax of an M x N matrix.
llvm::Expected<jit::KernelRef> runSoftmax(jit::Compiler &c, DType t, const void *x,
                                          void *y, int64_t m, int64_t n,
                                          int threads = 0);
/// c[M, N] (f32) = a[M, K] · b[N, K]ᵀ.
llvm::Expected<jit::KernelRef> runMatmul(jit::Compiler &c, DType t, const void *a,
                                         const void *b, float *out, int64_t m,
                                         int64_t n, int64_t k, int threads = 0);

/// Shapes of the attention sample: q/o [B, N, S, D], k/v [B, NKV, L, D].
struct AttentionShape {
  int64_t batch = 1, heads = 8, kvHeads = 2, queries = 64, keys = 256, dim = 64;
  bool causal = false;
  float scale() const { return 1.0f / std::sqrt(static_cast<float>(dim)); }
};
llvm::Expected<jit::KernelRef> runAttention(jit::Compiler &c, DType t,
                                            const AttentionShape &s, const void *q,
                                            const void *k, const void *v, void *o,
                                            int threads = 0);

//===----------------------------------------------------------------------===//
// References (plain loops, double accumulation)
//===----------------------------------------------------------------------===//

void axpbyReference(DType t, const void *x, void *y, int64_t n, float alpha, float beta);
void softmaxReference(DType t, const void *x, void *y, int64_t m, int64_t n);
void matmulReference(DType t, const void *a, const void *b, float *c, int64_t m,
                     int64_t n, int64_t k);
void attentionReference(DType t, const AttentionShape &s, const void *q,
                        const void *k, const void *v, void *o);

//===----------------------------------------------------------------------===//
// Hand-written twins (AVX-512 or AVX2 by the host, OpenMP across cores)
//===----------------------------------------------------------------------===//

/// The ISA the hand-written twins use on this host ("avx512" or "avx2").
const char *handwrittenIsa();
void axpbyHandwritten(DType t, const void *x, void *y, int64_t n, float alpha,
                      float beta, int threads = 0);
void softmaxHandwritten(DType t, const void *x, void *y, int64_t m, int64_t n,
                        int threads = 0);
void matmulHandwritten(DType t, const void *a, const void *b, float *c, int64_t m,
                       int64_t n, int64_t k, int threads = 0);
void attentionHandwritten(DType t, const AttentionShape &s, const void *q,
                          const void *k, const void *v, void *o, int threads = 0);

} // namespace tilejit::ops

#endif
