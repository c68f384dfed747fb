//===- CompileAsyncTest.cpp - tilejit::compileAsync and the compile pool --===//
//
// The public asynchronous compile: it returns at once, its future holds the
// kernel or the error as `compile` returns them, one key asked for by many
// callers at once compiles once, and the compile pool's callers (aclnn
// phase 1 through Compiler::getPooled) are served as `get` serves them.
//
//===----------------------------------------------------------------------===//
#include "jit/CompilePool.h"
#include "jit/Compiler.h"
#include "jit/DiskCache.h"
#include "tests/e2e/ScaleKernel.h"
#include "tilejit/tilejit.h"

#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <thread>
#include <vector>

namespace {

using tilejit::test_support::kScale;

/// No disk tier for one test: a request the memory tier misses compiles.
class NoDiskScope {
public:
  NoDiskScope() : c_(tilejit::jit::Compiler::instance()), disk_(c_.diskCache()) {
    c_.setDiskCache(tilejit::jit::DiskCache());
  }
  ~NoDiskScope() { c_.setDiskCache(disk_); }

private:
  tilejit::jit::Compiler &c_;
  tilejit::jit::DiskCache disk_;
};

bool halves(const tilejit::Kernel &k) {
  const int64_t n = 200;
  std::vector<float> x(n), y(n, 0.0f);
  for (int64_t i = 0; i < n; ++i)
    x[i] = static_cast<float>(i);
  tilejit::Args args;
  args.tensor(x.data(), {n}).tensor(y.data(), {n}).f32(0.5f);
  if (tilejit::Status s = k.launch(args); !s) {
    ADD_FAILURE() << s.message();
    return false;
  }
  for (int64_t i = 0; i < n; ++i)
    if (y[i] != 0.5f * x[i])
      return false;
  return true;
}

} // namespace

TEST(CompileAsync, TheFutureHoldsALaunchableKernel) {
  NoDiskScope noDisk;
  std::future<tilejit::Result<tilejit::Kernel>> pending;
  {
    // The source may go before the compile runs: the task holds its own.
    auto src = tilejit::Source::fromText("async_scale.tile", kScale);
    pending = tilejit::compileAsync(src, "scale", {{"T", "f32"}, {"BN", 80}});
  }
  tilejit::Result<tilejit::Kernel> k = pending.get();
  ASSERT_TRUE(static_cast<bool>(k)) << k.error();
  EXPECT_TRUE(k->compiled());
  EXPECT_TRUE(halves(*k));
  // Asked again: served from the cache.
  auto src = tilejit::Source::fromText("async_scale.tile", kScale);
  auto again = tilejit::compileAsync(src, "scale", {{"T", "f32"}, {"BN", 80}}).get();
  ASSERT_TRUE(static_cast<bool>(again)) << again.error();
  EXPECT_FALSE(again->compiled());
  EXPECT_EQ(again->key(), k->key());
}

TEST(CompileAsync, ErrorsComeBackAsValues) {
  auto broken = tilejit::Source::fromText("async_broken.tile",
                                          "kernel k(x: gm<f32>[N]) grid(N) {\n  let a = nope;\n}\n");
  auto syntax = tilejit::compileAsync(broken, "k").get();
  ASSERT_FALSE(static_cast<bool>(syntax));
  EXPECT_EQ(syntax.errorKind(), tilejit::ErrorKind::Compile);
  EXPECT_NE(syntax.error().find("async_broken.tile:2:"), std::string::npos) << syntax.error();

  auto src = tilejit::Source::fromText("async_scale.tile", kScale);
  auto unknown = tilejit::compileAsync(src, "nosuch").get();
  ASSERT_FALSE(static_cast<bool>(unknown));
  EXPECT_EQ(unknown.errorKind(), tilejit::ErrorKind::Compile);
  EXPECT_NE(unknown.error().find("nosuch"), std::string::npos) << unknown.error();

  auto badSpec = tilejit::compileAsync(src, "scale", {{"T", "i8"}}).get();
  ASSERT_FALSE(static_cast<bool>(badSpec));
  EXPECT_EQ(badSpec.errorKind(), tilejit::ErrorKind::Compile);
  EXPECT_NE(badSpec.error().find("T"), std::string::npos) << badSpec.error();
}

TEST(CompileAsync, EightRequestsForOneKeyCompileItOnce) {
  NoDiskScope noDisk;
  auto src = tilejit::Source::fromText("async_race.tile", kScale);
  const uint64_t compiles0 = tilejit::cacheStats().compiles;
  std::vector<std::future<tilejit::Result<tilejit::Kernel>>> pending;
  for (int i = 0; i < 8; ++i)
    pending.push_back(tilejit::compileAsync(src, "scale", {{"T", "f32"}, {"BN", 104}}));
  int compiled = 0;
  std::string key;
  for (auto &p : pending) {
    auto k = p.get();
    ASSERT_TRUE(static_cast<bool>(k)) << k.error();
    compiled += k->compiled();
    if (key.empty())
      key = k->key();
    EXPECT_EQ(k->key(), key);
    EXPECT_TRUE(halves(*k));
  }
  EXPECT_EQ(compiled, 1);
  EXPECT_EQ(tilejit::cacheStats().compiles, compiles0 + 1);
}

// Eight callers of Compiler::getPooled (what aclnn phase 1 calls), one new
// key: one compile, on the pool; every caller gets the one kernel.
TEST(CompileAsync, PooledCallersShareOneCompile) {
  NoDiskScope noDisk;
  tilejit::jit::Compiler &c = tilejit::jit::Compiler::instance();
  tilejit::jit::KernelSource src("pooled_race.tile", kScale);
  const uint64_t compiles0 = c.stats().compiles;
  std::atomic<int> compiled{0}, ok{0};
  std::vector<const tilejit::jit::CompiledKernel *> seen(8);
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&, t] {
      auto k = c.getPooled(src, "scale", {{"T", "f16"}, {"BN", 120}});
      if (!k) {
        ADD_FAILURE() << llvm::toString(k.takeError());
        return;
      }
      ++ok;
      compiled += k->compiled;
      seen[t] = k->kernel.get();
    });
  for (auto &t : threads)
    t.join();
  EXPECT_EQ(ok.load(), 8);
  EXPECT_EQ(compiled.load(), 1);
  EXPECT_EQ(c.stats().compiles, compiles0 + 1);
  for (int t = 1; t < 8; ++t)
    EXPECT_EQ(seen[t], seen[0]);
  // A pooled miss with an error is an error value too.
  auto bad = c.getPooled(src, "scale", {{"BN", "x"}});
  ASSERT_FALSE(static_cast<bool>(bad));
  llvm::consumeError(bad.takeError());
}

TEST(CompileAsync, ThePoolSizeIsFixedOnceItRuns) {
  tilejit::jit::CompilePool &pool = tilejit::jit::CompilePool::process();
  EXPECT_GE(pool.threads(), 1u);
  auto src = tilejit::Source::fromText("async_scale.tile", kScale);
  ASSERT_TRUE(static_cast<bool>(tilejit::compileAsync(src, "scale", {{"T", "f32"}}).get()));
  llvm::Error late = pool.setThreads(3);
  ASSERT_TRUE(static_cast<bool>(late));
  EXPECT_NE(llvm::toString(std::move(late)).find("has started"), std::string::npos);
}
