//===- ValueSemanticsTest.cpp - Stores, copies and loop-carried tiles -----===//
//
// docs/dsl.md: a store whose value reads the tensor it writes behaves as if
// the whole value were read first, for any overlap; `let` binds a value that
// a later assignment to its variable never changes (a loop's yield and an
// if's are parallel assignments); debug mode checks every access, its value
// used or not; a loop's trip count is computed without overflow. Each case
// runs at both vector widths and in debug mode, against a plain C++ loop over
// a copy of the input.
//
//===----------------------------------------------------------------------===//
#include "tests/e2e/TargetLevels.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

using namespace tilejit;
using tilejit::test_support::levels;

namespace {

const char *kSource = R"(
kernel shift1(x: gm<f32>[N]) grid(1) {
  store(x, [1], load(x, [0], [32]) * 2.0);
}
kernel shift2(x: gm<f32>[M, N]) grid(1) {
  store(x, [1, 0], load(x, [0, 0], [4, 8]) + 100.0);
}
kernel copy2(x: gm<f32>[M, N]) grid(1) {
  store(x, [1, 0], load(x, [0, 0], [4, 8]));
}
kernel runtime1(x: gm<f32>[N], a: i64, b: i64) grid(1) {
  store(x, [b], load(x, [a], [32]) * 2.0);
}
kernel runtime1c(x: gm<f32>[N], a: i64, b: i64) grid(1) {
  let t = load(x, [a], [32]);
  let o = b * 2 - 1;
  store(x, [o], t + 1.0);
}
kernel runtime2(x: gm<f32>[M, N], a: i64, b: i64) grid(1) {
  store(x, [b, 0], load(x, [a, 0], [4, 8]));
}
kernel rowbcast(x: gm<f32>[M, N]) grid(1) {
  store(x, [0, 0], load(x, [0, 0], [4, 8]) - load(x, [0, 0], [1, 8]));
}
kernel inplace(x: gm<f32>[N]) grid(cdiv(N, 32)) {
  let i = program_id(0) * 32;
  store(x, [i], load(x, [i], [32]) * 2.0 + 1.0);
}
kernel carried(x: gm<f32>[N], out: gm<f32>[2, 4]) grid(1) {
  var cur = zeros<f32>([4]);
  var prev = zeros<f32>([4]);
  for c in 0 .. N step 4 {
    let old = cur;
    cur = load(x, [c], [4]);
    prev = old;
  }
  store(out, [0, 0], prev);
  store(out, [1, 0], cur);
}
kernel swapfor(x: gm<f32>[8], out: gm<f32>[2, 4], n: i64) grid(1) {
  var a = load(x, [0], [4]);
  var b = load(x, [4], [4]);
  for c in 0 .. n {
    let t = a;
    a = b;
    b = t;
  }
  store(out, [0, 0], a);
  store(out, [1, 0], b);
}
kernel rotate(x: gm<f32>[16], out: gm<f32>[4, 4], n: i64) grid(1) {
  var a = load(x, [0], [4]);
  var b = load(x, [4], [4]);
  var c = load(x, [8], [4]);
  var d = load(x, [12], [4]);
  for i in 0 .. n {
    let t = a;
    a = b;
    b = c;
    c = t;
    d = d + a;
  }
  store(out, [0, 0], a);
  store(out, [1, 0], b);
  store(out, [2, 0], c);
  store(out, [3, 0], d);
}
kernel swapif(x: gm<f32>[8], out: gm<f32>[2, 4], flag: i64) grid(1) {
  var a = load(x, [0], [4]);
  var b = load(x, [4], [4]);
  if flag != 0 {
    let t = a;
    a = b;
    b = t;
  }
  store(out, [0, 0], a);
  store(out, [1, 0], b);
}
kernel unused(x: gm<f32>[N], y: gm<f32>[N], mode: i64, at: i64) grid(1) {
  if mode == 0 {
    let t = load(x, [at], [4]);
  }
  if mode == 1 {
    let s = x[at];
  }
  if mode == 2 {
    var acc = zeros<f32>([4]);
    for i in 0 .. 2 {
      acc = load(x, [at + i], [4]);
    }
  }
  y[0] = 1.0;
}
kernel far(x: gm<f32>[N], y: gm<f32>[32], a: i64) grid(1) {
  store(y, [0], load(x, [a], [32]) + 1.0);
  store(x, [a], load(y, [0], [32]));
}
kernel compound(x: gm<i32>[N], f: gm<f32>[N], i: i64, v: i32) grid(1) {
  x[i] += v;
  x[i + 1] -= v;
  x[i + 2] *= v;
  x[i + 3] /= v;
  f[i] += 0.5;
  f[i + 1] *= cast<f32>(v);
  x[i + 100] += v;
}
kernel others(x: gm<i64>[N], o: gm<i64>[4], f: gm<f32>[N], p: gm<f32>[4], b: gm<i8>[N],
               q: gm<i8>[4]) grid(1) {
  store(o, [0], load(x, [N - 1], [4], other = 9007199254740993));
  store(p, [0], load(f, [N - 1], [4], other = 16777217));
  store(q, [0], load(b, [N - 1], [4], other = 300));
}
kernel divsel<T: type>(m: gm<i1>[4, 1], q: gm<T>[4, 8], r: gm<T>[4, 8]) grid(1) {
  let x = iota<T>([4, 8], 1) - cast<T>(4);
  let d = select(load(m, [0, 0], [4, 1]), iota<T>([4, 8], 1) - cast<T>(5), zeros<T>([4, 8]));
  store(q, [0, 0], x / d);
  store(r, [0, 0], x % d);
}
kernel divsel2<T: type>(m: gm<i1>[M, _], q: gm<T>[M, N], r: gm<T>[M, N]) grid(1) {
  let d = select(load(m, [0, 0], [3, 1]), iota<T>([3, 3], 1), zeros<T>([3, 3]));
  store(q, [0, 0], iota<T>([3, 3], 1) / d);
  store(r, [0, 0], iota<T>([3, 3], 1) % d);
}
kernel trips(out: gm<i64>[1], lo: i64, hi: i64, st: i64) grid(1) {
  var n: i64 = 0;
  for i in lo .. hi step st {
    n = n + 1;
  }
  out[0] = n;
}
)";

jit::KernelSource &source() {
  static jit::KernelSource src("values.tile", kSource);
  return src;
}

struct Mode {
  jit::TargetLevel level;
  bool debug;
  std::string name() const {
    return std::string(level == jit::TargetLevel::Avx2 ? "avx2" : "avx512") +
           (debug ? " debug" : "");
  }
};

/// Every target level the host runs, each with and without debug mode.
std::vector<Mode> modes() {
  std::vector<Mode> out;
  for (jit::TargetLevel l : levels())
    for (bool d : {false, true})
      out.push_back({l, d});
  return out;
}

/// Launches `kernel` in `mode`; returns the launch's error text ("" when
/// it succeeded).
std::string launch(const Mode &mode, const char *kernel, rt::ArgPack &args) {
  auto c = jit::Compiler::instance(mode.level);
  if (!c)
    return llvm::toString(c.takeError());
  jit::CompileOptions options;
  options.debug = mode.debug;
  auto k = c->get(source(), kernel, {}, options);
  if (!k)
    return "compile: " + llvm::toString(k.takeError());
  if (llvm::Error err = k->kernel->launch(args))
    return llvm::toString(std::move(err));
  return "";
}

std::vector<float> iotaFrom1(size_t n) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i)
    v[i] = static_cast<float>(i + 1);
  return v;
}

/// `dst[b + i] = f(src[a + i])` for i in [0, len), read from a copy of the
/// tensor first (value semantics); indices outside [0, n) read 0 and are not
/// written.
template <class F>
std::vector<float> shiftedReference(std::vector<float> x, int64_t a, int64_t b, int64_t len,
                                    F f) {
  const std::vector<float> before = x;
  const int64_t n = static_cast<int64_t>(x.size());
  for (int64_t i = 0; i < len; ++i) {
    float v = a + i >= 0 && a + i < n ? before[static_cast<size_t>(a + i)] : 0.0f;
    if (b + i >= 0 && b + i < n)
      x[static_cast<size_t>(b + i)] = f(v);
  }
  return x;
}

/// Rows [a, a + 4) of an R x 8 tensor to rows [b, b + 4), through a copy.
template <class F>
std::vector<float> shiftedRowsReference(std::vector<float> x, int64_t rows, int64_t a, int64_t b,
                                        F f) {
  const std::vector<float> before = x;
  for (int64_t r = 0; r < 4; ++r)
    for (int64_t c = 0; c < 8; ++c) {
      float v = a + r >= 0 && a + r < rows ? before[static_cast<size_t>((a + r) * 8 + c)] : 0.0f;
      if (b + r >= 0 && b + r < rows)
        x[static_cast<size_t>((b + r) * 8 + c)] = f(v);
    }
  return x;
}

} // namespace

TEST(ValueSemantics, FusedStoreOntoItsSourceShifted) {
  for (const Mode &m : modes()) {
    SCOPED_TRACE(m.name());
    std::vector<float> x = iotaFrom1(40);
    auto want = shiftedReference(x, 0, 1, 32, [](float v) { return v * 2.0f; });
    rt::ArgPack args;
    args.tensor(x.data(), {40});
    ASSERT_EQ(launch(m, "shift1", args), "");
    EXPECT_EQ(x, want);
    EXPECT_EQ(x[17], 34.0f);
  }
}

TEST(ValueSemantics, FusedStoreOntoItsSourceRowsShifted) {
  for (const Mode &m : modes()) {
    SCOPED_TRACE(m.name());
    std::vector<float> x(40);
    for (size_t i = 0; i < x.size(); ++i)
      x[i] = static_cast<float>(i + 1);
    auto want = shiftedRowsReference(x, 5, 0, 1, [](float v) { return v + 100.0f; });
    rt::ArgPack args;
    args.tensor(x.data(), {5, 8});
    ASSERT_EQ(launch(m, "shift2", args), "");
    EXPECT_EQ(x, want);
    EXPECT_EQ(x[8 * 2], 109.0f);
    EXPECT_EQ(x[8 * 4], 125.0f);
  }
}

TEST(ValueSemantics, TileCopyOntoItselfRowsShiftedDown) {
  for (const Mode &m : modes()) {
    SCOPED_TRACE(m.name());
    std::vector<float> x = iotaFrom1(40);
    auto want = shiftedRowsReference(x, 5, 0, 1, [](float v) { return v; });
    rt::ArgPack args;
    args.tensor(x.data(), {5, 8});
    ASSERT_EQ(launch(m, "copy2", args), "");
    EXPECT_EQ(x, want);
  }
}

TEST(ValueSemantics, RuntimeOffsetsEveryOverlap) {
  // Offsets known only at run time (overlap = checked): shifted either way,
  // the same region, apart, and hanging over either end.
  const std::vector<std::pair<int64_t, int64_t>> cases = {
      {0, 1}, {1, 0}, {0, 0}, {3, 3}, {0, 31}, {0, 32}, {32, 0}, {5, 20}, {20, 5}, {-3, 2}, {10, 30}};
  for (const Mode &m : modes())
    for (auto [a, b] : cases) {
      SCOPED_TRACE(m.name() + " a=" + std::to_string(a) + " b=" + std::to_string(b));
      std::vector<float> x = iotaFrom1(48);
      auto want = shiftedReference(x, a, b, 32, [](float v) { return v * 2.0f; });
      rt::ArgPack args;
      args.tensor(x.data(), {48}).i64(a).i64(b);
      ASSERT_EQ(launch(m, "runtime1", args), "");
      EXPECT_EQ(x, want);
    }
}

TEST(ValueSemantics, RuntimeOffsetComputedAfterTheLoad) {
  // The store's offset is computed between the load and the store.
  const std::vector<std::pair<int64_t, int64_t>> cases = {{0, 1}, {2, 1}, {0, 9}, {1, 1}, {0, 17}};
  for (const Mode &m : modes())
    for (auto [a, b] : cases) {
      SCOPED_TRACE(m.name() + " a=" + std::to_string(a) + " b=" + std::to_string(b));
      std::vector<float> x = iotaFrom1(48);
      auto want = shiftedReference(x, a, b * 2 - 1, 32, [](float v) { return v + 1.0f; });
      rt::ArgPack args;
      args.tensor(x.data(), {48}).i64(a).i64(b);
      ASSERT_EQ(launch(m, "runtime1c", args), "");
      EXPECT_EQ(x, want);
    }
}

TEST(ValueSemantics, RuntimeRowOffsetsCopy) {
  const std::vector<std::pair<int64_t, int64_t>> cases = {
      {0, 1}, {1, 0}, {0, 0}, {2, 4}, {4, 0}, {0, 4}, {0, 3}, {3, 1}};
  for (const Mode &m : modes())
    for (auto [a, b] : cases) {
      SCOPED_TRACE(m.name() + " a=" + std::to_string(a) + " b=" + std::to_string(b));
      std::vector<float> x = iotaFrom1(64);
      auto want = shiftedRowsReference(x, 8, a, b, [](float v) { return v; });
      rt::ArgPack args;
      args.tensor(x.data(), {8, 8}).i64(a).i64(b);
      ASSERT_EQ(launch(m, "runtime2", args), "");
      EXPECT_EQ(x, want);
    }
}

TEST(ValueSemantics, BroadcastRowOfTheRegionBeingWritten) {
  // Row 0 is read as a [1, 8] tile broadcast over the four rows being
  // written, row 0 first: every row subtracts the original row 0.
  for (const Mode &m : modes()) {
    SCOPED_TRACE(m.name());
    std::vector<float> x = iotaFrom1(40);
    std::vector<float> want = x;
    for (size_t r = 0; r < 4; ++r)
      for (size_t c = 0; c < 8; ++c)
        want[r * 8 + c] = x[r * 8 + c] - x[c];
    rt::ArgPack args;
    args.tensor(x.data(), {5, 8});
    ASSERT_EQ(launch(m, "rowbcast", args), "");
    EXPECT_EQ(x, want);
  }
}

TEST(ValueSemantics, ElementwiseInPlaceUpdate) {
  for (const Mode &m : modes())
    for (int64_t n : {32, 45, 100}) {
      SCOPED_TRACE(m.name() + " n=" + std::to_string(n));
      std::vector<float> x = iotaFrom1(static_cast<size_t>(n)), want = x;
      for (float &v : want)
        v = v * 2.0f + 1.0f;
      rt::ArgPack args;
      args.tensor(x.data(), {n});
      ASSERT_EQ(launch(m, "inplace", args), "");
      EXPECT_EQ(x, want);
    }
}

TEST(ValueSemantics, LoopCarriedTileKeepsTheValueItWasGiven) {
  for (const Mode &m : modes())
    for (int64_t n : {4, 8, 12, 40}) {
      SCOPED_TRACE(m.name() + " n=" + std::to_string(n));
      std::vector<float> x = iotaFrom1(static_cast<size_t>(n));
      // The loop, step by step, in C++.
      std::vector<float> cur(4, 0.0f), prev(4, 0.0f);
      for (int64_t c = 0; c < n; c += 4) {
        std::vector<float> old = cur;
        for (int64_t i = 0; i < 4; ++i)
          cur[static_cast<size_t>(i)] = x[static_cast<size_t>(c + i)];
        prev = old;
      }
      std::vector<float> out(8, -1.0f), want = prev;
      want.insert(want.end(), cur.begin(), cur.end());
      rt::ArgPack args;
      args.tensor(x.data(), {n}).tensor(out.data(), {2, 4});
      ASSERT_EQ(launch(m, "carried", args), "");
      EXPECT_EQ(out, want);
    }
}

TEST(ValueSemantics, SwappingTwoCarriedTiles) {
  for (const Mode &m : modes())
    for (int64_t n : {0, 1, 2, 3}) {
      SCOPED_TRACE(m.name() + " n=" + std::to_string(n));
      std::vector<float> x = iotaFrom1(8);
      std::vector<float> a(x.begin(), x.begin() + 4), b(x.begin() + 4, x.end());
      for (int64_t c = 0; c < n; ++c)
        std::swap(a, b);
      std::vector<float> out(8, -1.0f), want = a;
      want.insert(want.end(), b.begin(), b.end());
      rt::ArgPack args;
      args.tensor(x.data(), {8}).tensor(out.data(), {2, 4}).i64(n);
      ASSERT_EQ(launch(m, "swapfor", args), "");
      EXPECT_EQ(out, want);
    }
}

TEST(ValueSemantics, RotatingThreeCarriedTiles) {
  // A three-way cycle of iteration values, and a fourth that reads one of
  // them after it was reassigned in the body.
  for (const Mode &m : modes())
    for (int64_t n : {0, 1, 2, 3, 4, 7}) {
      SCOPED_TRACE(m.name() + " n=" + std::to_string(n));
      std::vector<float> x = iotaFrom1(16);
      std::vector<float> a(x.begin(), x.begin() + 4), b(x.begin() + 4, x.begin() + 8),
          c(x.begin() + 8, x.begin() + 12), d(x.begin() + 12, x.end());
      for (int64_t i = 0; i < n; ++i) {
        std::vector<float> t = a;
        a = b;
        b = c;
        c = t;
        for (size_t j = 0; j < 4; ++j)
          d[j] += a[j];
      }
      std::vector<float> out(16, -1.0f), want;
      for (const auto *v : {&a, &b, &c, &d})
        want.insert(want.end(), v->begin(), v->end());
      rt::ArgPack args;
      args.tensor(x.data(), {16}).tensor(out.data(), {4, 4}).i64(n);
      ASSERT_EQ(launch(m, "rotate", args), "");
      EXPECT_EQ(out, want);
    }
}

TEST(ValueSemantics, SwappingTwoTilesInAnIf) {
  for (const Mode &m : modes())
    for (int64_t flag : {0, 1}) {
      SCOPED_TRACE(m.name() + " flag=" + std::to_string(flag));
      std::vector<float> x = iotaFrom1(8);
      std::vector<float> a(x.begin(), x.begin() + 4), b(x.begin() + 4, x.end());
      if (flag)
        std::swap(a, b);
      std::vector<float> out(8, -1.0f), want = a;
      want.insert(want.end(), b.begin(), b.end());
      rt::ArgPack args;
      args.tensor(x.data(), {8}).tensor(out.data(), {2, 4}).i64(flag);
      ASSERT_EQ(launch(m, "swapif", args), "");
      EXPECT_EQ(out, want);
    }
}

TEST(ValueSemantics, DebugModeChecksAccessesWhoseValueIsUnused) {
  for (const Mode &m : modes())
    for (int64_t mode : {0, 1, 2})
      for (int64_t at : {2, 100}) {
        SCOPED_TRACE(m.name() + " mode=" + std::to_string(mode) + " at=" + std::to_string(at));
        std::vector<float> x = iotaFrom1(8), y(8, 0.0f);
        rt::ArgPack args;
        args.tensor(x.data(), {8}).tensor(y.data(), {8}).i64(mode).i64(at);
        std::string err = launch(m, "unused", args);
        if (!m.debug || at == 2) {
          EXPECT_EQ(err, "");
          EXPECT_EQ(y[0], 1.0f);
          continue;
        }
        EXPECT_NE(err.find("bounds violation in kernel unused"), std::string::npos) << err;
        EXPECT_NE(err.find(mode == 1 ? "load_scalar of x" : "load of x"), std::string::npos)
            << err;
        EXPECT_NE(err.find("100"), std::string::npos) << err;
      }
}

TEST(ValueSemantics, TileOffsetsNearInt64MaxAreOutside) {
  // offset + extent wraps past INT64_MAX: the tile is outside the tensor
  // (loads read `other`, stores write nothing), never followed.
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  for (const Mode &m : modes())
    for (int64_t a : {kMax - 4, kMax - 31, kMax}) {
      SCOPED_TRACE(m.name() + " a=" + std::to_string(a));
      std::vector<float> x = iotaFrom1(40), y(32, -1.0f);
      rt::ArgPack args;
      args.tensor(x.data(), {40}).tensor(y.data(), {32}).i64(a);
      std::string err = launch(m, "far", args);
      if (m.debug) {
        EXPECT_NE(err.find("bounds violation in kernel far"), std::string::npos) << err;
        continue;
      }
      EXPECT_EQ(err, "");
      EXPECT_EQ(y, std::vector<float>(32, 1.0f));
      EXPECT_EQ(x, iotaFrom1(40));
    }
}

TEST(ValueSemantics, TripCountsNearTheEndsOfInt64) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  struct Case {
    int64_t lo, hi, st;
  };
  const std::vector<Case> cases = {
      {kMax - 7, kMax, int64_t{1} << 62}, {kMax - 7, kMax, 1}, {kMax - 7, kMax, 3},
      {kMin, kMax, int64_t{1} << 62},     {kMin, kMin + 5, 2}, {kMin, kMax, kMax},
      {0, 10, 0},                         {0, 10, -1},          {10, 0, 1},
      {5, 5, 1},                          {0, 10, 3},           {-10, 10, 7}};
  for (const Mode &m : modes())
    for (const Case &c : cases) {
      SCOPED_TRACE(m.name() + " lo=" + std::to_string(c.lo) + " hi=" + std::to_string(c.hi) +
                   " st=" + std::to_string(c.st));
      // The iterations, counted in 128-bit arithmetic.
      int64_t want = 0;
      if (c.st > 0)
        for (__int128 i = c.lo; i < c.hi; i += c.st)
          ++want;
      int64_t out = -1;
      rt::ArgPack args;
      args.tensor(&out, {1}).i64(c.lo).i64(c.hi).i64(c.st);
      ASSERT_EQ(launch(m, "trips", args), "");
      EXPECT_EQ(out, want);
    }
}

// `x[i] op= v` is `x[i] = x[i] op v` in the element's kind (i32 wraps, /
// truncates); an element outside the tensor reads 0 and is not written, and
// debug mode reports it.
TEST(ValueSemantics, CompoundAssignmentToElements) {
  for (const Mode &m : modes()) {
    SCOPED_TRACE(m.name());
    std::vector<int32_t> x = {7, std::numeric_limits<int32_t>::min(), 1 << 30, -9, 5};
    std::vector<float> f = {1.25f, -3.0f, 4.0f, 8.0f, 9.0f};
    const int32_t v = 4;
    std::vector<int32_t> wantX = x;
    std::vector<float> wantF = f;
    wantX[0] = 7 + v;
    wantX[1] = static_cast<int32_t>(static_cast<uint32_t>(wantX[1]) - uint32_t{v}); // wraps
    wantX[2] = static_cast<int32_t>(static_cast<uint32_t>(wantX[2]) * uint32_t{v}); // wraps
    wantX[3] = -9 / v;
    wantF[0] = 1.25f + 0.5f;
    wantF[1] = -3.0f * static_cast<float>(v);
    rt::ArgPack args;
    args.tensor(x.data(), {5}).tensor(f.data(), {5}).i64(0).i32(v);
    std::string err = launch(m, "compound", args);
    if (m.debug) {
      EXPECT_NE(err.find("index 100 on axis 0 is outside [0, 5)"), std::string::npos) << err;
      continue; // the launch stopped at the violation
    }
    ASSERT_EQ(err, "");
    EXPECT_EQ(x, wantX);
    EXPECT_EQ(f, wantF);
  }
}

// `other` is the constant exactly in the tensor's kind: an i64 past 2^53 is
// not rounded through a double, an integer meets an f32 tensor rounded once,
// a narrow kind wraps.
TEST(ValueSemantics, OtherValuesAreExact) {
  for (const Mode &m : modes()) {
    SCOPED_TRACE(m.name());
    std::vector<int64_t> x = {1, 2, 3};
    std::vector<float> f = {1, 2, 3};
    std::vector<int8_t> b = {1, 2, 3};
    std::vector<int64_t> o(4, -1);
    std::vector<float> p(4, -1);
    std::vector<int8_t> q(4, -1);
    rt::ArgPack args;
    args.tensor(x.data(), {3}).tensor(o.data(), {4}).tensor(f.data(), {3});
    args.tensor(p.data(), {4}).tensor(b.data(), {3}).tensor(q.data(), {4});
    ASSERT_EQ(launch(m, "others", args), "");
    constexpr int64_t kBig = (int64_t{1} << 53) + 1;
    EXPECT_EQ(o, (std::vector<int64_t>{3, kBig, kBig, kBig}));
    EXPECT_EQ(p, (std::vector<float>{3, 16777216.0f, 16777216.0f, 16777216.0f}));
    EXPECT_EQ(q, (std::vector<int8_t>{3, 44, 44, 44}));
  }
}

// Integer division and remainder by a select of constant tiles: the form
// LLVM 19's InstCombine folded wrongly (`iota / select(m, iota, 0)`; its
// reproducer is fuzz/difftest/regressions/mismatch-interp-179587802500473),
// and a divisor taking every value from -5 to 2 (0 and -1 included), per row
// selected or zero; x / 0 = 0, x % 0 = 0, division truncates.
template <class T> void checkDivisionOfSelects(const char *kind, bool same) {
  const bool isSigned = std::numeric_limits<T>::is_signed;
  for (const Mode &m : modes()) {
    SCOPED_TRACE(m.name() + " " + kind);
    uint8_t mask[4] = {1, 0, 1, 1};
    const int rows = same ? 3 : 4, cols = same ? 3 : 8;
    std::vector<T> q(rows * cols, T(7)), r(rows * cols, T(7));
    std::vector<T> wantQ(rows * cols), wantR(rows * cols);
    for (int i = 0; i < rows; ++i)
      for (int j = 0; j < cols; ++j) {
        // As the kernel computes them in T (wrapping for unsigned kinds).
        T x = same ? static_cast<T>(j) : static_cast<T>(static_cast<T>(j) - static_cast<T>(4));
        T d = !mask[i] ? T(0)
              : same   ? static_cast<T>(j)
                       : static_cast<T>(static_cast<T>(j) - static_cast<T>(5));
        T wq = 0, wr = 0;
        if (d != 0) {
          if (isSigned && d == static_cast<T>(-1)) {
            wq = static_cast<T>(0 - x);
            wr = 0;
          } else {
            wq = static_cast<T>(x / d);
            wr = static_cast<T>(x % d);
          }
        }
        wantQ[i * cols + j] = wq;
        wantR[i * cols + j] = wr;
      }
    auto c = jit::Compiler::instance(m.level);
    ASSERT_TRUE(static_cast<bool>(c)) << llvm::toString(c.takeError());
    jit::CompileOptions options;
    options.debug = m.debug;
    auto k = c->get(source(), same ? "divsel2" : "divsel", {{"T", kind}}, options);
    ASSERT_TRUE(static_cast<bool>(k)) << llvm::toString(k.takeError());
    rt::ArgPack args;
    args.tensor(rt::ElemType::I1, mask, {rows, 1}).tensor(q.data(), {rows, cols});
    args.tensor(r.data(), {rows, cols});
    ASSERT_FALSE(static_cast<bool>(k->kernel->launch(args)));
    EXPECT_EQ(q, wantQ);
    EXPECT_EQ(r, wantR);
  }
}

TEST(ValueSemantics, IntegerDivisionOfSelects) {
  for (bool same : {true, false}) {
    checkDivisionOfSelects<int8_t>("i8", same);
    checkDivisionOfSelects<uint8_t>("u8", same);
    checkDivisionOfSelects<int32_t>("i32", same);
    checkDivisionOfSelects<uint32_t>("u32", same);
    checkDivisionOfSelects<int64_t>("i64", same);
  }
}
