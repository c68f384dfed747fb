//===- DebugModeTest.cpp - Bounds-checked kernels (TILEJIT_DEBUG) ---------===//
//
// In debug mode every access is checked against its tensor: an index
// outside it stops the launch with the kernel, the source location, the
// index and the bound, where the ordinary build reads `other` or skips the
// write. With every index in range the two builds give bitwise equal
// results.
//
//===----------------------------------------------------------------------===//
#include "jit/Compiler.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

using namespace tilejit;

namespace {

// `shift` moves every access: 0 keeps them inside the tensors.
const char *kAccesses = R"(kernel acc<BN: i64 = 16>(x: gm<f32>[N], y: gm<f32>[N],
    idx: gm<i64>[N], s: gm<f32>[1], mode: i64, shift: i64) grid(cdiv(N, BN)) {
  let i = program_id(0) * BN;
  if mode == 0 {
    store(y, [i], load(x, [i], [BN]) * 2.0);
  }
  if mode == 1 && i == 0 {
    s[0] = x[i + shift];
  }
  if mode == 2 {
    y[i + shift] = 1.0;
  }
  if mode == 3 {
    let g = gather(x, [load(idx, [i], [BN]) + shift]);
    store(y, [i], g);
  }
  if mode == 4 {
    store(y, [i + shift], load(x, [i], [BN]));
  }
}
)";

struct Outcome {
  std::string error;
  std::vector<float> y, s;
};

Outcome run(bool debug, int64_t mode, int64_t shift, int64_t n = 40) {
  static jit::KernelSource src("acc.tile", kAccesses);
  jit::CompileOptions options;
  options.debug = debug;
  auto k = jit::Compiler::instance().get(src, "acc", {}, options);
  EXPECT_TRUE(static_cast<bool>(k)) << llvm::toString(k.takeError());
  if (!k)
    return {};
  EXPECT_EQ(k->kernel->key().fields().debug, debug);
  std::vector<float> x(static_cast<size_t>(n));
  std::vector<int64_t> idx(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    x[static_cast<size_t>(i)] = static_cast<float>(i) + 0.5f;
    idx[static_cast<size_t>(i)] = (i * 7) % n;
  }
  Outcome r{{}, std::vector<float>(static_cast<size_t>(n), -1.0f), {-1.0f}};
  rt::ArgPack args;
  args.tensor(x.data(), {n}).tensor(r.y.data(), {n}).tensor(idx.data(), {n});
  args.tensor(r.s.data(), {1}).i64(mode).i64(shift);
  if (llvm::Error err = k->kernel->launch(args))
    r.error = llvm::toString(std::move(err));
  return r;
}

} // namespace

TEST(DebugMode, IsPartOfTheKey) {
  jit::KernelSource src("acc.tile", kAccesses);
  jit::CompileOptions on, off;
  on.debug = true;
  off.debug = false;
  auto a = jit::Compiler::instance().makeKey(src, "acc", {}, on);
  auto b = jit::Compiler::instance().makeKey(src, "acc", {}, off);
  ASSERT_TRUE(a && b);
  EXPECT_NE(*a, *b);
  EXPECT_NE(a->str().find(".O3.debug"), std::string::npos) << a->str();
}

TEST(DebugMode, StopsAtAnAccessOutsideItsTensor) {
  struct Case {
    int64_t mode, shift;
    const char *message;
  };
  const Case cases[] = {
      {1, 41, "bounds violation in kernel acc: acc.tile:8:12: load_scalar of x: index 41 on "
              "axis 0 is outside [0, 40)"},
      {1, -1, "acc.tile:8:12: load_scalar of x: index -1 on axis 0 is outside [0, 40)"},
      {2, 40, "acc.tile:11:5: store_scalar of y: index 40 on axis 0 is outside [0, 40)"},
      {3, 40, "acc.tile:14:13: gather of x: index "},
      {4, 40, "acc.tile:18:5: store of y: region [40, 40 + 16) on axis 0 is outside [0, 40)"},
  };
  for (const Case &c : cases) {
    SCOPED_TRACE("mode " + std::to_string(c.mode) + " shift " + std::to_string(c.shift));
    Outcome r = run(true, c.mode, c.shift);
    EXPECT_NE(r.error.find(c.message), std::string::npos) << r.error;
    // The ordinary build defines these accesses (other / skipped write).
    EXPECT_EQ(run(false, c.mode, c.shift).error, "");
  }
  // The offending store wrote nothing (mode 2 writes only y[i + shift]).
  Outcome r = run(true, 2, 40);
  for (float v : r.y)
    EXPECT_EQ(v, -1.0f);
}

TEST(DebugMode, ChangesNothingWhenIndicesAreInRange) {
  // A partial tile at the edge (N = 40, tiles of 16) is defined, not a
  // violation.
  for (int64_t mode : {0, 1, 2, 3, 4})
    for (int64_t shift : {0, 3}) {
      SCOPED_TRACE("mode " + std::to_string(mode) + " shift " + std::to_string(shift));
      Outcome checked = run(true, mode, mode == 3 ? 0 : shift);
      Outcome plain = run(false, mode, mode == 3 ? 0 : shift);
      EXPECT_EQ(checked.error, "");
      EXPECT_EQ(std::memcmp(checked.y.data(), plain.y.data(), checked.y.size() * 4), 0);
      EXPECT_EQ(checked.s, plain.s);
    }
}
