//===- CodeMemoryTest.cpp - The in-memory tier's bound and code lifetime --===//
//
// The in-memory tier holds at most TILEJIT_MEMORY_CACHE_MAX_BYTES of mapped
// code and data, least recently used out first; an evicted kernel's code is
// freed with the last handle that holds it, and not before. These tests set
// the bound through Compiler::setMemoryCacheMaxBytes and read the JIT's own
// count of mapped bytes (CacheStats::mappedBytes).
//
//===----------------------------------------------------------------------===//
#include "jit/Compiler.h"
#include "jit/DiskCache.h"
#include "tests/e2e/ScaleKernel.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

using namespace tilejit;
using namespace tilejit::jit;

namespace {

using test_support::kScale;

/// Sets the tier's bound for one test (after emptying it, and with no disk
/// tier: a request the memory tier misses compiles) and restores both.
class BoundScope {
public:
  BoundScope(Compiler &c, uint64_t bytes)
      : c_(c), saved_(c.stats().memoryMaxBytes), disk_(c.diskCache()) {
    c_.setDiskCache(DiskCache());
    c_.clearMemoryCache();
    c_.setMemoryCacheMaxBytes(bytes);
  }
  ~BoundScope() {
    c_.clearMemoryCache();
    c_.setMemoryCacheMaxBytes(saved_);
    c_.setDiskCache(disk_);
  }

private:
  Compiler &c_;
  uint64_t saved_;
  DiskCache disk_;
};

/// Runs `k` (a scale kernel) on 300 elements with a = 3 and says whether
/// every output is 3x its input.
bool scalesCorrectly(const CompiledKernel &k, float seed) {
  const int64_t n = 300;
  std::vector<float> x(n), y(n, -1.0f);
  for (int64_t i = 0; i < n; ++i)
    x[i] = seed + static_cast<float>(i);
  rt::ArgPack args;
  args.tensor(x.data(), {n}).tensor(y.data(), {n}).f32(3.0f);
  if (llvm::Error err = k.launch(args, 1)) {
    ADD_FAILURE() << llvm::toString(std::move(err));
    return false;
  }
  for (int64_t i = 0; i < n; ++i)
    if (y[i] != 3.0f * x[i])
      return false;
  return true;
}

Specialization scaleSpec(int64_t bn) { return {{"T", "f32"}, {"BN", bn}}; }

} // namespace

TEST(KernelCache, AHandleOutlivesTheEvictionOfItsEntry) {
  Compiler &c = Compiler::instance();
  KernelSource src("evict_handle.tile", kScale);
  BoundScope bound(c, 1); // every entry is evicted as soon as it is in
  const uint64_t mapped0 = c.stats().mappedBytes;
  auto a = c.get(src, "scale", scaleSpec(16));
  ASSERT_TRUE(static_cast<bool>(a)) << llvm::toString(a.takeError());
  const uint64_t bytesA = a->kernel->codeBytes();
  EXPECT_GT(bytesA, 0u);
  CacheStats s = c.stats();
  EXPECT_EQ(s.entries, 0u);
  EXPECT_EQ(s.memoryBytes, 0u);
  EXPECT_GE(s.evictions, 1u);
  EXPECT_EQ(s.mappedBytes, mapped0 + bytesA); // evicted, still mapped for the handle
  EXPECT_TRUE(scalesCorrectly(*a->kernel, 1.0f));

  // Another kernel in and out: the first still runs.
  auto b = c.get(src, "scale", scaleSpec(32));
  ASSERT_TRUE(static_cast<bool>(b)) << llvm::toString(b.takeError());
  EXPECT_TRUE(scalesCorrectly(*a->kernel, 2.0f));
  EXPECT_TRUE(scalesCorrectly(*b->kernel, 3.0f));

  // The evicted key asked for again while the first copy lives: a second
  // copy of the same kernel (same symbols) is linked beside it.
  {
    auto twin = c.get(src, "scale", scaleSpec(16));
    ASSERT_TRUE(static_cast<bool>(twin)) << llvm::toString(twin.takeError());
    EXPECT_TRUE(twin->compiled);
    EXPECT_NE(twin->kernel.get(), a->kernel.get());
    EXPECT_NE(reinterpret_cast<const void *>(twin->kernel->program()),
              reinterpret_cast<const void *>(a->kernel->program()));
    EXPECT_TRUE(scalesCorrectly(*twin->kernel, 6.0f));
    EXPECT_TRUE(scalesCorrectly(*a->kernel, 7.0f));
  }

  // The last handle gone, its code is unmapped.
  const uint64_t bytesB = b->kernel->codeBytes();
  a->kernel.reset();
  EXPECT_EQ(c.stats().mappedBytes, mapped0 + bytesB);
  b->kernel.reset();
  EXPECT_EQ(c.stats().mappedBytes, mapped0);

  // Asked again, an evicted key compiles again.
  auto again = c.get(src, "scale", scaleSpec(16));
  ASSERT_TRUE(static_cast<bool>(again)) << llvm::toString(again.takeError());
  EXPECT_TRUE(again->compiled);
  EXPECT_TRUE(scalesCorrectly(*again->kernel, 4.0f));
}

TEST(KernelCache, TheBoundHoldsUnderAStreamOfNewKeys) {
  Compiler &c = Compiler::instance();
  KernelSource src("evict_stream.tile", kScale);
  uint64_t one = 0;
  {
    BoundScope probe(c, uint64_t(1) << 40);
    auto k = c.get(src, "scale", scaleSpec(8));
    ASSERT_TRUE(static_cast<bool>(k)) << llvm::toString(k.takeError());
    one = k->kernel->codeBytes();
  }
  ASSERT_GT(one, 0u);
  const uint64_t limit = 4 * one + one / 2;
  BoundScope bound(c, limit);
  const uint64_t mapped0 = c.stats().mappedBytes;
  const uint64_t evictions0 = c.stats().evictions;
  // Key 8 is asked for between every new key: the most recently used entry
  // is never the one evicted.
  auto hot = c.get(src, "scale", scaleSpec(8));
  ASSERT_TRUE(static_cast<bool>(hot)) << llvm::toString(hot.takeError());
  hot->kernel.reset();
  const int kNew = 24;
  for (int i = 0; i < kNew; ++i) {
    auto k = c.get(src, "scale", scaleSpec(16 + 8 * i));
    ASSERT_TRUE(static_cast<bool>(k)) << llvm::toString(k.takeError());
    EXPECT_TRUE(k->compiled);
    EXPECT_TRUE(scalesCorrectly(*k->kernel, static_cast<float>(i)));
    k->kernel.reset();
    auto h = c.get(src, "scale", scaleSpec(8));
    ASSERT_TRUE(static_cast<bool>(h)) << llvm::toString(h.takeError());
    EXPECT_FALSE(h->compiled) << "the most recently used entry was evicted, at " << i;
    h->kernel.reset();
    CacheStats s = c.stats();
    EXPECT_LE(s.memoryBytes, limit);
    EXPECT_LE(s.entries, 4u);
    // No handle is held: what is mapped is what the tier holds.
    EXPECT_EQ(s.mappedBytes, mapped0 + s.memoryBytes);
  }
  EXPECT_GE(c.stats().evictions - evictions0, uint64_t(kNew - 3));
}

TEST(KernelCache, ClearingFreesTheCodeNoHandleHolds) {
  Compiler &c = Compiler::instance();
  KernelSource src("evict_clear.tile", kScale);
  BoundScope bound(c, uint64_t(1) << 40);
  const uint64_t mapped0 = c.stats().mappedBytes;
  auto held = c.get(src, "scale", scaleSpec(24));
  ASSERT_TRUE(static_cast<bool>(held)) << llvm::toString(held.takeError());
  for (int64_t bn : {40, 56, 72}) {
    auto k = c.get(src, "scale", scaleSpec(bn));
    ASSERT_TRUE(static_cast<bool>(k)) << llvm::toString(k.takeError());
  }
  EXPECT_EQ(c.stats().entries, 4u);
  EXPECT_GT(c.stats().mappedBytes, mapped0 + held->kernel->codeBytes());
  c.clearMemoryCache();
  EXPECT_EQ(c.stats().memoryBytes, 0u);
  EXPECT_EQ(c.stats().mappedBytes, mapped0 + held->kernel->codeBytes());
  EXPECT_TRUE(scalesCorrectly(*held->kernel, 5.0f));
}

// Threads launching the kernels they got while the tier evicts and
// recompiles under them (run under TSan in CI).
TEST(KernelCache, EvictionWhileOtherThreadsLaunch) {
  Compiler &c = Compiler::instance();
  KernelSource src("evict_threads.tile", kScale);
  uint64_t one = 0;
  {
    BoundScope probe(c, uint64_t(1) << 40);
    auto k = c.get(src, "scale", scaleSpec(16));
    ASSERT_TRUE(static_cast<bool>(k)) << llvm::toString(k.takeError());
    one = k->kernel->codeBytes();
  }
  BoundScope bound(c, 2 * one);
  std::atomic<int> wrong{0}, failed{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 12; ++i) {
        auto k = c.get(src, "scale", scaleSpec(16 * (1 + (t + i) % 5)));
        if (!k) {
          llvm::consumeError(k.takeError());
          ++failed;
          continue;
        }
        // Another thread's request may evict this entry now: the handle
        // keeps the code.
        std::this_thread::yield();
        if (!scalesCorrectly(*k->kernel, static_cast<float>(t * 100 + i)))
          ++wrong;
      }
    });
  for (auto &t : threads)
    t.join();
  EXPECT_EQ(failed.load(), 0);
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_LE(c.stats().memoryBytes, 2 * one);
  EXPECT_GT(c.stats().evictions, 0u);
}

namespace {

#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define TILEJIT_TEST_SANITIZED 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__) || defined(TILEJIT_TEST_SANITIZED)
constexpr bool kSanitized = true; // their allocators hold freed memory
#else
constexpr bool kSanitized = false;
#endif

/// The process's resident set, in bytes.
uint64_t residentBytes() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("VmRSS:", 0) == 0)
      return std::stoull(line.substr(6)) * 1024;
  return 0;
}

} // namespace

// A long-running process meeting new shapes: a stream of distinct keys
// through a 1 MiB tier. What is mapped stays within the bound, and the
// resident set over the second half of the stream stays flat (the first
// half fills the tier and the allocator's pools).
TEST(KernelCache, ASoakOfNewKeysStaysFlat) {
  Compiler &c = Compiler::instance();
  KernelSource src("soak.tile", kScale);
  const uint64_t kBound = uint64_t(1) << 20;
  BoundScope bound(c, kBound);
  const uint64_t mapped0 = c.stats().mappedBytes;
  const int kKeys = 400;
  uint64_t rssHalf = 0, peakMapped = 0;
  for (int i = 0; i < kKeys; ++i) {
    auto k = c.get(src, "scale", {{"T", i % 2 ? "f16" : "f32"}, {"BN", int64_t(16 + 8 * (i / 2))}});
    ASSERT_TRUE(static_cast<bool>(k)) << llvm::toString(k.takeError());
    ASSERT_TRUE(k->compiled);
    k->kernel.reset();
    CacheStats s = c.stats();
    ASSERT_LE(s.memoryBytes, kBound);
    peakMapped = std::max(peakMapped, s.mappedBytes - mapped0);
    if (i == kKeys / 2)
      rssHalf = residentBytes();
  }
  EXPECT_LE(peakMapped, kBound);
  if (!kSanitized) {
    const uint64_t now = residentBytes();
    const uint64_t growth = now > rssHalf ? now - rssHalf : 0;
    EXPECT_LT(growth, uint64_t(6) << 20) << "resident set grew by " << growth / 1024
                                         << " KiB over the second " << kKeys / 2 << " keys";
  }
}
