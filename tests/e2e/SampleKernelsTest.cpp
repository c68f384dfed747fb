//===- SampleKernelsTest.cpp - The sample kernels against their references ===//
//
// Every sample JIT-compiled for both vector widths (AVX-512: 16 x f32, AVX2:
// 8 x f32) over shapes with tails, against a double-precision reference; the
// hand-written twins against the same reference.
//
//===----------------------------------------------------------------------===//
#include "ops/samples/Half.h"
#include "ops/samples/SamplesTwin.h"
#include "tests/e2e/TargetLevels.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

using namespace tilejit;
using tilejit::test_support::levels;
using ops::DType;

namespace {

/// Both target levels the host can run.
jit::Compiler &compilerFor(jit::TargetLevel level) {
  auto c = jit::Compiler::instance(level);
  EXPECT_TRUE(static_cast<bool>(c));
  return *c;
}



/// Tolerance of a probability-like output in [0, 1] stored as `t`: the
/// storage rounding (half an ulp at 1.0: 2^-24, 2^-11, 2^-8 for f32, f16,
/// bf16), plus f32 arithmetic error in the kernel (exp polynomial within a
/// few ulp, sums of up to thousands of terms: ~1e-5 relative).
double unitTolerance(DType t) {
  switch (t) {
  case DType::F32: return 2e-5;
  case DType::F16: return 1e-3;
  default: return 8e-3;
  }
}

const char *levelName(jit::TargetLevel l) {
  return l == jit::TargetLevel::Avx2 ? "avx2" : "avx512";
}

} // namespace

TEST(SampleKernels, AxpbyIsBitExactOverEveryDtypeWithTails) {
  for (jit::TargetLevel level : levels()) {
    jit::Compiler &c = compilerFor(level);
    for (DType t : {DType::F32, DType::F16, DType::BF16, DType::I8, DType::U8,
                    DType::I16, DType::I32, DType::I64})
      for (int64_t n : {1, 15, 2048, 5003}) {
        SCOPED_TRACE(std::string(levelName(level)) + " " + ops::dtypeName(t) +
                     " n=" + std::to_string(n));
        auto x = ops::randomBuffer(t, n, 1, -100, 100), y = ops::randomBuffer(t, n, 2, -100, 100);
        auto want = y, twin = y;
        ops::axpbyReference(t, x.data(), want.data(), n, 1.5f, -0.75f);
        auto k = ops::runAxpby(c, t, x.data(), y.data(), n, 1.5f, -0.75f);
        ASSERT_TRUE(static_cast<bool>(k)) << llvm::toString(k.takeError());
        // The kernel and the reference do the same f32 operations: bit-exact.
        EXPECT_EQ(y, want);
        ops::axpbyHandwritten(t, x.data(), twin.data(), n, 1.5f, -0.75f);
        EXPECT_EQ(twin, want);
      }
  }
}

TEST(SampleKernels, SoftmaxMatchesReference) {
  for (jit::TargetLevel level : levels()) {
    jit::Compiler &c = compilerFor(level);
    for (DType t : {DType::F32, DType::F16, DType::BF16})
      for (auto [m, n] : {std::pair<int64_t, int64_t>{3, 1}, {5, 17}, {4, 1000}, {2, 3001}}) {
        SCOPED_TRACE(std::string(levelName(level)) + " " + ops::dtypeName(t) +
                     " " + std::to_string(m) + "x" + std::to_string(n));
        auto x = ops::randomBuffer(t, m * n, 3, -8, 8);
        std::vector<unsigned char> y(x.size()), want(x.size()), twin(x.size());
        ops::softmaxReference(t, x.data(), want.data(), m, n);
        auto k = ops::runSoftmax(c, t, x.data(), y.data(), m, n);
        ASSERT_TRUE(static_cast<bool>(k)) << llvm::toString(k.takeError());
        EXPECT_LE(ops::maxAbsDiff(t, y.data(), want.data(), m * n), unitTolerance(t));
        ops::softmaxHandwritten(t, x.data(), twin.data(), m, n);
        EXPECT_LE(ops::maxAbsDiff(t, twin.data(), want.data(), m * n), unitTolerance(t));
      }
  }
}

TEST(SampleKernels, MatmulMatchesReference) {
  for (jit::TargetLevel level : levels()) {
    jit::Compiler &c = compilerFor(level);
    for (DType t : {DType::F32, DType::F16, DType::BF16})
      for (auto [m, n, k] : {std::tuple<int64_t, int64_t, int64_t>{64, 64, 128},
                             {70, 33, 200}, {1, 5, 7}, {130, 129, 300}}) {
        SCOPED_TRACE(std::string(levelName(level)) + " " + ops::dtypeName(t) + " " +
                     std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k));
        auto a = ops::randomBuffer(t, m * k, 4), b = ops::randomBuffer(t, n * k, 5);
        std::vector<float> out(m * n, -1.f), want(m * n), twin(m * n);
        ops::matmulReference(t, a.data(), b.data(), want.data(), m, n, k);
        auto kr = ops::runMatmul(c, t, a.data(), b.data(), out.data(), m, n, k);
        ASSERT_TRUE(static_cast<bool>(kr)) << llvm::toString(kr.takeError());
        // Inputs are exact in f32; f32 accumulation of k products of size <= 4
        // errs by at most k * 4 * 2^-24 * |partial sums| (~2e-4 at k = 300).
        double tol = 1e-6 * k * 4;
        EXPECT_LE(ops::maxAbsDiff(DType::F32, out.data(), want.data(), m * n), tol);
        ops::matmulHandwritten(t, a.data(), b.data(), twin.data(), m, n, k);
        EXPECT_LE(ops::maxAbsDiff(DType::F32, twin.data(), want.data(), m * n), tol);
      }
  }
}

TEST(SampleKernels, FlashAttentionMatchesReference) {
  for (jit::TargetLevel level : levels()) {
    jit::Compiler &c = compilerFor(level);
    for (DType t : {DType::F32, DType::F16, DType::BF16})
      for (bool causal : {false, true})
        for (auto [heads, kvHeads, s, l, d] :
             {std::tuple<int64_t, int64_t, int64_t, int64_t, int64_t>{4, 4, 16, 64, 64},
              {8, 2, 37, 150, 64}, {4, 1, 5, 5, 128}, {2, 2, 70, 33, 32}}) {
          ops::AttentionShape sh;
          sh.batch = 2;
          sh.heads = heads;
          sh.kvHeads = kvHeads;
          sh.queries = s;
          sh.keys = l;
          sh.dim = d;
          sh.causal = causal;
          SCOPED_TRACE(std::string(levelName(level)) + " " + ops::dtypeName(t) +
                       (causal ? " causal" : "") + " N=" + std::to_string(heads) +
                       " NKV=" + std::to_string(kvHeads) + " S=" + std::to_string(s) +
                       " L=" + std::to_string(l) + " D=" + std::to_string(d));
          int64_t qn = sh.batch * heads * s * d, kn = sh.batch * kvHeads * l * d;
          auto q = ops::randomBuffer(t, qn, 6), k = ops::randomBuffer(t, kn, 7),
               v = ops::randomBuffer(t, kn, 8);
          std::vector<unsigned char> o(q.size()), want(q.size()), twin(q.size());
          ops::attentionReference(t, sh, q.data(), k.data(), v.data(), want.data());
          auto kr = ops::runAttention(c, t, sh, q.data(), k.data(), v.data(), o.data());
          ASSERT_TRUE(static_cast<bool>(kr)) << llvm::toString(kr.takeError());
          // Outputs are convex combinations of v in [-2, 2]: storage rounding
          // (2^-10, 2^-7 relative at 2 for f16/bf16) plus f32 softmax error.
          double tol = t == DType::F32 ? 1e-4 : t == DType::F16 ? 4e-3 : 3e-2;
          EXPECT_LE(ops::maxAbsDiff(t, o.data(), want.data(), qn), tol);
          ops::attentionHandwritten(t, sh, q.data(), k.data(), v.data(), twin.data());
          EXPECT_LE(ops::maxAbsDiff(t, twin.data(), want.data(), qn), tol);
        }
  }
}
