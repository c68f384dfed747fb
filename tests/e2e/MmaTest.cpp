//===- MmaTest.cpp - The cube unit in each of its forms --------------------===//
//
// `mma(a, b, acc)` and `mma(a, transpose(b), acc)` over row counts that take
// the few-rows kernels (1, 3, 4, 8) and the packed one (9, 16), column and
// inner sizes with and without vector tails, f32/f16/bf16/i8 operands, read
// from a strided tensor (a load consumed only by the mma: straight from the
// tensor with many rows, through its row copy with few) or from a local
// buffer. Operands are small integers, so every product and sum is
// exact in f32 whatever the summation order: the results must match a plain
// loop bit for bit, on both vector widths (and, for bf16 with few rows on an
// AVX512-BF16 host, in the `vdpbf16ps` forms).
//
//===----------------------------------------------------------------------===//
#include "jit/Compiler.h"
#include "tests/e2e/TargetLevels.h"
#include "ops/samples/Half.h"

#include <llvm/ADT/StringMap.h>
#include <llvm/TargetParser/Host.h>

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

using namespace tilejit;
using tilejit::test_support::levels;

namespace {

const char *kMma = R"(
// a, b are wider than the tiles (rows of the view are not the tile's rows);
// FWD = false routes the operands through local buffers; CACHED reads b in
// place even with few rows in a.
kernel mm<T: f32|f16|bf16|i8, M: i64, N: i64, K: i64, TB: bool, FWD: bool,
          CACHED: bool = false, SPLAT: bool = false>(
    a: gm<T>[_, _], b: gm<T>[_, _], c0: gm<f32>[M, N], c: gm<f32>[M, N]) grid(1) {
  var at = load(a, [1, 2], [M, K]);
  if !FWD {
    at = cast<T>(cast<f32>(at) * 1.0);
  }
  // SPLAT: acc a splat only the mma reads (acc_splat: the accumulators
  // start at its value), the value c0[0, 0].
  var acc = full<f32>([M, N], c0[0, 0]);
  if !SPLAT {
    acc = load(c0, [0, 0], [M, N]);
  }
  if TB {
    var bt = load(b, [2, 1], [N, K], cached = CACHED);
    if !FWD {
      bt = cast<T>(cast<f32>(bt) * 1.0);
    }
    store(c, [0, 0], mma(at, transpose(bt), acc));
  } else {
    var bt = load(b, [2, 1], [K, N], cached = CACHED);
    if !FWD {
      bt = cast<T>(cast<f32>(bt) * 1.0);
    }
    store(c, [0, 0], mma(at, bt, acc));
  }
}
)";

/// A tensor of small integers stored as `type` (exact in every one).
struct Operand {
  std::vector<float> values;
  std::vector<unsigned char> bytes;
  rt::ElemType elem = rt::ElemType::F32;
  Operand(int64_t count, const std::string &type, int seed) {
    EXPECT_TRUE(rt::parseElemType(type, elem)) << type;
    for (int64_t i = 0; i < count; ++i)
      values.push_back(static_cast<float>((i * 7 + seed * 13) % 7) - 3.0f);
    size_t width = type == "f32" ? 4 : type == "i8" ? 1 : 2;
    bytes.resize(static_cast<size_t>(count) * width);
    for (int64_t i = 0; i < count; ++i) {
      float v = values[static_cast<size_t>(i)];
      if (type == "f32") {
        std::memcpy(&bytes[static_cast<size_t>(i) * 4], &v, 4);
      } else if (type == "i8") {
        bytes[static_cast<size_t>(i)] = static_cast<unsigned char>(static_cast<int8_t>(v));
      } else {
        uint16_t h = type == "f16" ? ops::floatToHalf(v) : ops::floatToBf16(v);
        std::memcpy(&bytes[static_cast<size_t>(i) * 2], &h, 2);
      }
    }
  }
};

struct Shape {
  int64_t m, n, k;
};

/// mm at `level` for one operand type, transposition, operand mode (0: as
/// loaded, 1: through local buffers, 2: b `cached`, 3: as loaded with acc a
/// splat) and shape, against a plain loop.
void checkMm(jit::TargetLevel level, const char *type, bool tb, int mode, const Shape &s) {
  static jit::KernelSource src("mma.tile", kMma);
  const bool fwd = mode != 1, cached = mode == 2, splat = mode == 3;
  SCOPED_TRACE(std::string(type) + " M=" + std::to_string(s.m) +
               " N=" + std::to_string(s.n) + " K=" + std::to_string(s.k) +
               (tb ? " transB" : "") +
               (cached ? " cached" : fwd ? " forwarded" : " buffered") +
               (splat ? " from a splat" : ""));
  // a is [M + 2, K + 3] (tile at [1, 2]); b is [N + 3, K + 2] with
  // transB, else [K + 3, N + 2] (tile at [2, 1]).
  const int64_t aCols = s.k + 3, bRows = (tb ? s.n : s.k) + 3,
                bCols = (tb ? s.k : s.n) + 2;
  Operand a((s.m + 2) * aCols, type, 1), bm(bRows * bCols, type, 2);
  Operand acc(s.m * s.n, "f32", 3);
  std::vector<float> c(static_cast<size_t>(s.m * s.n), -1.0f);
  auto k = jit::Compiler::instance(level)->get(
      src, "mm",
      {{"T", type},
       {"M", std::to_string(s.m)},
       {"N", std::to_string(s.n)},
       {"K", std::to_string(s.k)},
       {"TB", tb ? "true" : "false"},
       {"FWD", fwd ? "true" : "false"},
       {"CACHED", cached ? "true" : "false"},
       {"SPLAT", splat ? "true" : "false"}});
  ASSERT_TRUE(static_cast<bool>(k)) << llvm::toString(k.takeError());
  rt::ArgPack args;
  args.tensor(a.elem, a.bytes.data(), {s.m + 2, aCols})
      .tensor(bm.elem, bm.bytes.data(), {bRows, bCols})
      .tensor(acc.elem, acc.bytes.data(), {s.m, s.n})
      .tensor(c.data(), {s.m, s.n});
  ASSERT_FALSE(static_cast<bool>(k->kernel->launch(args)));
  for (int64_t i = 0; i < s.m; ++i)
    for (int64_t j = 0; j < s.n; ++j) {
      float want = acc.values[splat ? 0 : static_cast<size_t>(i * s.n + j)];
      for (int64_t q = 0; q < s.k; ++q) {
        float x = a.values[static_cast<size_t>((i + 1) * aCols + q + 2)];
        float y = tb ? bm.values[static_cast<size_t>((j + 2) * bCols + q + 1)]
                     : bm.values[static_cast<size_t>((q + 2) * bCols + j + 1)];
        want += x * y;
      }
      ASSERT_EQ(c[static_cast<size_t>(i * s.n + j)], want) << "at " << i << ", " << j;
    }
}

// {2, 96, 10} and {8, 32, 6}: whole 32-column blocks and even K, as the
// bf16 pair form (AVX512-BF16) takes them, with 6 and 2 vectors a block.
const Shape kMmShapes[] = {{1, 16, 16}, {3, 37, 40}, {4, 64, 128}, {8, 20, 7},
                           {2, 96, 10}, {8, 32, 6},  {9, 33, 19}, {16, 48, 64}};

} // namespace

TEST(Mma, EveryFormAndShapeMatchesAPlainLoop) {
  for (jit::TargetLevel level : levels())
    for (const char *type : {"f32", "f16", "bf16", "i8"})
      for (bool tb : {true, false})
        for (int mode = 0; mode < 4; ++mode)
          for (const Shape &s : kMmShapes) {
            if (mode == 1 && (std::string(type) == "bf16" || std::string(type) == "i8"))
              continue; // buffers are covered by f32 and f16
            checkMm(level, type, tb, mode, s);
            if (testing::Test::HasFatalFailure())
              return;
          }
}

namespace {

// mma(transpose(a), b) and mma(transpose(a), transpose(b)), each inside a
// loop over R steps whose a varies while b is loaded before the loop (the
// bf16 pair form packs such an operand once, before the loop).
const char *kMmaTransA = R"(
kernel mt<T: f32|f16|bf16, M: i64, N: i64, K: i64, TB: bool, R: i64>(
    a: gm<T>[_, _, _], b: gm<T>[_, _], c: gm<f32>[M, N]) grid(1) {
  var acc = zeros<f32>([M, N]);
  if TB {
    let bt = load(b, [0, 0], [N, K]);
    for r in 0 .. R {
      acc = mma(transpose(load(a, [r, 0, 0], [K, M])), transpose(bt), acc);
    }
  } else {
    let bt = load(b, [0, 0], [K, N]);
    for r in 0 .. R {
      acc = mma(transpose(load(a, [r, 0, 0], [K, M])), bt, acc);
    }
  }
  store(c, [0, 0], acc);
}
)";

/// mt at `level` for one operand type, transposition of b and shape, R = 3
/// steps, against a plain loop.
void checkMt(jit::TargetLevel level, const char *type, bool tb, const Shape &s) {
  static jit::KernelSource src("mma_trans_a.tile", kMmaTransA);
  const int64_t R = 3;
  SCOPED_TRACE(std::string(type) + " M=" + std::to_string(s.m) + " N=" +
               std::to_string(s.n) + " K=" + std::to_string(s.k) +
               (tb ? " transB" : ""));
  Operand a(R * s.k * s.m, type, 1), bm(s.n * s.k, type, 2);
  std::vector<float> c(static_cast<size_t>(s.m * s.n), -1.0f);
  auto k = jit::Compiler::instance(level)->get(src, "mt",
                                               {{"T", type},
                                                {"M", std::to_string(s.m)},
                                                {"N", std::to_string(s.n)},
                                                {"K", std::to_string(s.k)},
                                                {"TB", tb ? "true" : "false"},
                                                {"R", std::to_string(R)}});
  ASSERT_TRUE(static_cast<bool>(k)) << llvm::toString(k.takeError());
  rt::ArgPack args;
  args.tensor(a.elem, a.bytes.data(), {R, s.k, s.m})
      .tensor(bm.elem, bm.bytes.data(), {tb ? s.n : s.k, tb ? s.k : s.n})
      .tensor(c.data(), {s.m, s.n});
  if (llvm::Error e = k->kernel->launch(args))
    FAIL() << llvm::toString(std::move(e));
  for (int64_t i = 0; i < s.m; ++i)
    for (int64_t j = 0; j < s.n; ++j) {
      float want = 0;
      for (int64_t r = 0; r < R; ++r)
        for (int64_t q = 0; q < s.k; ++q)
          want += a.values[static_cast<size_t>((r * s.k + q) * s.m + i)] *
                  bm.values[static_cast<size_t>(tb ? j * s.k + q : q * s.n + j)];
      ASSERT_EQ(c[static_cast<size_t>(i * s.n + j)], want) << "at " << i << ", " << j;
    }
}

// Whole AMX tiles (16 x 16, K a multiple of 32) and not.
const Shape kMtShapes[] = {{16, 48, 64}, {9, 33, 18}, {64, 64, 64}, {24, 20, 34},
                           {40, 128, 2}, {32, 64, 96}, {48, 16, 32}};

} // namespace

TEST(Mma, TransposedAAndLoopInvariantB) {
  for (jit::TargetLevel level : levels())
    for (const char *type : {"f32", "bf16"})
      for (bool tb : {true, false})
        for (const Shape &s : kMtShapes) {
          checkMt(level, type, tb, s);
          if (testing::Test::HasFatalFailure())
            return;
        }
}

// The bf16 forms a host may lack run above only where it has them; here
// each has a test of its own that says, by name, when this host cannot run
// it. AVX512-BF16: `vdpbf16ps` for few rows (dot and broadcast forms). Fast
// bf16 products (AMX tiles, or AMD's `vdpbf16ps`): bf16 pairs for many rows.
// AMX-BF16: `tdpbf16ps` on whole 16 x 16 tiles (K a multiple of 32).
TEST(Mma, Bf16DotFormsWithFewRows) {
  if (!jit::Compiler::hostSupports(jit::TargetLevel::Avx512) ||
      !jit::Compiler::instance(jit::TargetLevel::Avx512)->hasBf16Dot())
    GTEST_SKIP() << "no AVX512-BF16 on this host: the vdpbf16ps mma forms for few rows "
                    "(bf16 x bf16, dot and broadcast) are not tested";
  for (bool tb : {true, false})
    for (int mode : {0, 2})
      for (const Shape &s : kMmShapes)
        if (s.m <= 8) {
          checkMm(jit::TargetLevel::Avx512, "bf16", tb, mode, s);
          if (HasFatalFailure())
            return;
        }
}

TEST(Mma, Bf16PairsWithManyRows) {
  if (!jit::Compiler::hostSupports(jit::TargetLevel::Avx512) ||
      !jit::Compiler::instance(jit::TargetLevel::Avx512)->hasFastBf16Products())
    GTEST_SKIP() << "no AMX-BF16 and no fast AVX512-BF16 on this host: the bf16-pair mma "
                    "for many rows is not tested";
  for (bool tb : {true, false}) {
    for (int mode : {0, 2})
      for (const Shape &s : kMmShapes)
        if (s.m > 8)
          checkMm(jit::TargetLevel::Avx512, "bf16", tb, mode, s);
    for (const Shape &s : kMtShapes)
      checkMt(jit::TargetLevel::Avx512, "bf16", tb, s);
    if (HasFatalFailure())
      return;
  }
}

TEST(Mma, AmxTiles) {
  // The compiler uses AMX where the host has it and Linux grants the tile
  // state; then it reports fast bf16 products.
  if (!jit::Compiler::hostSupports(jit::TargetLevel::Avx512) ||
      !llvm::sys::getHostCPUFeatures().lookup("amx-bf16") ||
      !jit::Compiler::instance(jit::TargetLevel::Avx512)->hasFastBf16Products())
    GTEST_SKIP() << "no AMX-BF16 (or no tile state granted) on this host: the mma on AMX "
                    "tiles (tdpbf16ps) is not tested";
  for (bool tb : {true, false}) {
    for (const Shape &s : kMtShapes)
      if (s.m % 16 == 0 && s.n % 16 == 0 && s.k % 32 == 0)
        checkMt(jit::TargetLevel::Avx512, "bf16", tb, s);
    checkMm(jit::TargetLevel::Avx512, "bf16", tb, 0, {16, 48, 64});
    if (HasFatalFailure())
      return;
  }
}
