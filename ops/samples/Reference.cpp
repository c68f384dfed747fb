//===- Reference.cpp - Sample kernels: scalar references --------------------===//
//
// Plain loops with double accumulation, for the tests, the benchmarks and
// `tilejit demo` (test support: not part of libtilejit.so).
//
//===----------------------------------------------------------------------===//
#include "ops/samples/SamplesTwin.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

namespace tilejit::ops {

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
