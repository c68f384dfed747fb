//===- Samples.h - The sample kernels that prove the compiler core -*- C++ -*-===//
///
/// \file
/// Host entry points of the sample kernels (ops/samples/*.tile) and the
/// element helpers they and their tests share. Their scalar references and
/// hand-written twins are test support: SamplesTwin.h. Tensors are contiguous
/// row-major; element kinds are given as `DType`.
///
//===----------------------------------------------------------------------===//
#ifndef TILEJIT_OPS_SAMPLES_SAMPLES_H
#define TILEJIT_OPS_SAMPLES_SAMPLES_H

#include "jit/Compiler.h"

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

} // namespace tilejit::ops

#endif
