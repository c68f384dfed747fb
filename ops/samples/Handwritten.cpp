//===- Handwritten.cpp - Run-time dispatch of the hand-written twins ------===//
#include "ops/samples/SamplesTwin.h"

#include "jit/Compiler.h"
#include "jit/Options.h"

namespace tilejit::ops {

#define TILEJIT_DECLARE_TWINS(ns)                                              \
  namespace ns {                                                               \
  void axpby(DType, const void *, void *, int64_t, float, float, int);         \
  void softmax(DType, const void *, void *, int64_t, int64_t, int);            \
  void matmul(DType, const void *, const void *, float *, int64_t, int64_t,    \
              int64_t, int);                                                   \
  void attention(DType, const AttentionShape &, const void *, const void *,    \
                 const void *, void *, int);                                   \
  }
TILEJIT_DECLARE_TWINS(avx2)
TILEJIT_DECLARE_TWINS(avx512)
#undef TILEJIT_DECLARE_TWINS

namespace {
/// AVX-512 when the CPU has it, unless TILEJIT_TARGET=avx2 narrows the
/// generated code too (so the two are compared at the same width).
/// A bad TILEJIT_TARGET is the compiler's error to report; the twins then
/// take the host's width.
bool useAvx512() {
  static const bool yes = [] {
    auto target = jit::Options::process().target();
    bool narrowed = target && *target == jit::TargetLevel::Avx2;
    if (!target)
      llvm::consumeError(target.takeError());
    return !narrowed && __builtin_cpu_supports("avx512f") &&
           __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl") &&
           __builtin_cpu_supports("avx512dq");
  }();
  return yes;
}
} // namespace

const char *handwrittenIsa() { return useAvx512() ? "avx512" : "avx2"; }

void axpbyHandwritten(DType t, const void *x, void *y, int64_t n, float alpha,
                      float beta, int threads) {
  useAvx512() ? avx512::axpby(t, x, y, n, alpha, beta, threads)
              : avx2::axpby(t, x, y, n, alpha, beta, threads);
}

void softmaxHandwritten(DType t, const void *x, void *y, int64_t m, int64_t n,
                        int threads) {
  useAvx512() ? avx512::softmax(t, x, y, m, n, threads)
              : avx2::softmax(t, x, y, m, n, threads);
}

void matmulHandwritten(DType t, const void *a, const void *b, float *c, int64_t m,
                       int64_t n, int64_t k, int threads) {
  useAvx512() ? avx512::matmul(t, a, b, c, m, n, k, threads)
              : avx2::matmul(t, a, b, c, m, n, k, threads);
}

void attentionHandwritten(DType t, const AttentionShape &s, const void *q,
                          const void *k, const void *v, void *o, int threads) {
  useAvx512() ? avx512::attention(t, s, q, k, v, o, threads)
              : avx2::attention(t, s, q, k, v, o, threads);
}

} // namespace tilejit::ops
