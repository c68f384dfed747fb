//===- SamplesTwin.h - The sample kernels' references and twins -*- C++ -*-===//
///
/// \file
/// What the sample kernels of Samples.h are proved and measured against:
/// their scalar references (double accumulation) and their hand-written C++
/// twins (vectorised and multi-threaded; HandwrittenImpl.inc, compiled once
/// per ISA and dispatched at run time), and the timing the workloads and
/// benchmarks share. Test support (tilejit_testsupport, ops/CMakeLists.txt):
/// linked by the tests, the benchmarks and the `tilejit` command line, not
/// part of libtilejit.so.
///
//===----------------------------------------------------------------------===//
#ifndef TILEJIT_OPS_SAMPLES_SAMPLESTWIN_H
#define TILEJIT_OPS_SAMPLES_SAMPLESTWIN_H

#include "ops/samples/Samples.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <vector>

namespace tilejit::ops {

//===----------------------------------------------------------------------===//
// Timing
//===----------------------------------------------------------------------===//

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
