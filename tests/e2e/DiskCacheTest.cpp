//===- DiskCacheTest.cpp - The disk tier of the kernel cache --------------===//
//
// Through the Compiler with a disk tier in a fresh temporary directory: a
// compiled kernel is published, a second lookup (memory cleared, as in a new
// process) loads it without compiling and it runs correctly; every kind of
// tampering is detected, rebuilt and replaced; unsafe directories and entries
// are refused; TILEJIT_CACHE=off touches nothing; racing publishers leave one
// valid entry; the size bound evicts the least recently used entries.
//
//===----------------------------------------------------------------------===//
#include "jit/Compiler.h"
#include "jit/DiskCache.h"
#include "jit/Options.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <thread>
#include <vector>

#include <sys/stat.h>
#include <unistd.h>

using namespace tilejit;
using jit::DiskCache;

namespace {

const char *kScale = R"(
kernel scale<T: f32, K: i64>(x: gm<T>[N], y: gm<T>[N]) grid(cdiv(N, 64)) {
  let i = program_id(0) * 64;
  store(y, [i], load(x, [i], [64]) * cast<f32>(K));
}
)";

jit::KernelSource &source() {
  static jit::KernelSource src("disk-cache-test.tile", kScale);
  return src;
}

/// A fresh 0700 directory under the system temp dir, removed at the end.
struct TempDir {
  std::string path;
  TempDir() {
    char tmpl[] = "/tmp/tilejit-disk-test-XXXXXX";
    path = ::mkdtemp(tmpl);
  }
  ~TempDir() { std::system(("rm -rf '" + path + "'").c_str()); }
};

std::vector<char> readFile(const std::string &p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}
void writeFile(const std::string &p, const std::vector<char> &bytes) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

/// Gets scale<K>, runs it and checks y = K * x.
jit::KernelRef getAndCheck(jit::Compiler &c, int k) {
  auto ref = c.get(source(), "scale", {{"T", "f32"}, {"K", std::to_string(k)}});
  EXPECT_TRUE(static_cast<bool>(ref));
  if (!ref)
    return {};
  std::vector<float> x(200), y(200, -1.0f);
  for (size_t i = 0; i < x.size(); ++i)
    x[i] = static_cast<float>(i) * 0.25f;
  rt::ArgPack args;
  args.tensor(x.data(), {200}).tensor(y.data(), {200});
  EXPECT_FALSE(static_cast<bool>(ref->kernel->launch(args)));
  for (size_t i = 0; i < x.size(); ++i)
    EXPECT_EQ(y[i], x[i] * static_cast<float>(k)) << "i " << i;
  return *ref;
}

/// The compiler with a disk tier in `dir`, memory cleared (a "new process").
jit::Compiler &withDisk(const std::string &dir, uint64_t maxBytes = uint64_t(1) << 30) {
  jit::Compiler &c = jit::Compiler::instance();
  c.setDiskCache(DiskCache(dir, DiskCache::Mode::ReadWrite, maxBytes));
  c.clearMemoryCache();
  return c;
}

struct RestoreDisk {
  ~RestoreDisk() {
    jit::Compiler::instance().setDiskCache(DiskCache());
    jit::Compiler::instance().clearMemoryCache();
  }
};

} // namespace

TEST(DiskCache, SecondLookupLoadsWithoutCompiling) {
  TempDir dir;
  RestoreDisk restore;
  jit::Compiler &c = withDisk(dir.path);
  jit::KernelRef first = getAndCheck(c, 3);
  EXPECT_TRUE(first.compiled);
  const std::string entry = c.diskCache().pathOf(first->key());
  struct stat st;
  ASSERT_EQ(::stat(entry.c_str(), &st), 0) << entry;
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  ASSERT_EQ(::stat(dir.path.c_str(), &st), 0);

  c.clearMemoryCache();
  uint64_t hits = c.stats().diskHits, compiles = c.stats().compiles;
  jit::KernelRef second = getAndCheck(c, 3);
  EXPECT_FALSE(second.compiled);
  EXPECT_EQ(c.stats().diskHits, hits + 1);
  EXPECT_EQ(c.stats().compiles, compiles);
  EXPECT_EQ(second->scratchBytes(), first->scratchBytes());
  EXPECT_EQ(second->constraintMessages(), first->constraintMessages());
  // Listed with its key.
  auto all = c.diskCache().list();
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0].key, first->key().str());
}

TEST(DiskCache, TamperedEntriesAreRebuiltNeverRun) {
  TempDir dir;
  RestoreDisk restore;
  jit::Compiler &c = withDisk(dir.path);
  const std::string entry = c.diskCache().pathOf(getAndCheck(c, 5)->key());
  const std::vector<char> good = readFile(entry);
  ASSERT_GT(good.size(), 1000u);
  // Another key's entry (K = 7) to plant under K = 5's name.
  const std::string other = c.diskCache().pathOf(getAndCheck(c, 7)->key());
  const std::vector<char> foreign = readFile(other);

  auto flipped = good;
  flipped[good.size() / 2] ^= 0x40; // a byte of the object code
  auto truncated = std::vector<char>(good.begin(), good.begin() + good.size() / 3);
  auto badMagic = good;
  badMagic[0] = 'X';
  std::vector<std::pair<const char *, std::vector<char>>> cases = {
      {"flipped byte", flipped},
      {"truncated", truncated},
      {"not an entry", badMagic},
      {"another key's entry", foreign},
      {"empty", {}}};
  const jit::TilingKey key = c.get(source(), "scale", {{"T", "f32"}, {"K", "5"}})->kernel->key();
  for (auto &[what, bytes] : cases) {
    SCOPED_TRACE(what);
    writeFile(entry, bytes);
    ::chmod(entry.c_str(), 0600);
    std::string warning;
    EXPECT_FALSE(c.diskCache().load(key, warning).has_value());
    EXPECT_NE(warning.find("ignored"), std::string::npos) << warning;
    // The lookup compiles (the entry is not trusted) and runs correctly...
    c.clearMemoryCache();
    uint64_t compiles = c.stats().compiles;
    EXPECT_TRUE(getAndCheck(c, 5).compiled);
    EXPECT_EQ(c.stats().compiles, compiles + 1);
    // ...and the entry was replaced by a valid one.
    warning.clear();
    EXPECT_TRUE(c.diskCache().load(key, warning).has_value()) << warning;
    c.clearMemoryCache();
    EXPECT_FALSE(getAndCheck(c, 5).compiled);
  }
}

TEST(DiskCache, EntryFromAnotherTargetOrVersionIsAMiss) {
  TempDir dir;
  RestoreDisk restore;
  jit::Compiler &c = withDisk(dir.path);
  jit::TilingKey key = getAndCheck(c, 9)->key();
  // Publish the same object under a key that differs only in the target
  // features, then in the tilejit version, and plant it as this key's entry.
  for (int field = 0; field < 2; ++field) {
    jit::TilingKey::Fields f = key.fields();
    if (field == 0)
      f.features += ",+avx512f";
    else
      f.tilejitVersion = "0.0.1-old";
    jit::TilingKey alien(f);
    std::string warning;
    auto e = c.diskCache().load(key, warning);
    ASSERT_TRUE(e.has_value()) << warning;
    ASSERT_TRUE(c.diskCache().store(alien, *e, warning)) << warning;
    ASSERT_EQ(std::rename(c.diskCache().pathOf(alien).c_str(),
                          c.diskCache().pathOf(key).c_str()),
              0);
    EXPECT_FALSE(c.diskCache().load(key, warning).has_value());
    EXPECT_NE(warning.find("another key"), std::string::npos) << warning;
    c.clearMemoryCache();
    EXPECT_TRUE(getAndCheck(c, 9).compiled);
  }
}

TEST(DiskCache, UnsafeDirectoriesAndEntriesAreRefused) {
  TempDir dir;
  RestoreDisk restore;
  // The options come from an injected environment: nothing is set in this
  // process's own.
  auto options = [](jit::Options::Environment env) {
    return jit::Options::parse(std::move(env));
  };
  std::string warning;
  EXPECT_EQ(DiskCache::fromOptions(options({{"TILEJIT_CACHE_DIR", dir.path}}), warning).mode(),
            DiskCache::Mode::ReadWrite)
      << warning;
  ::chmod(dir.path.c_str(), 0770);
  warning.clear();
  EXPECT_EQ(DiskCache::fromOptions(options({{"TILEJIT_CACHE_DIR", dir.path}}), warning).mode(),
            DiskCache::Mode::Off);
  EXPECT_NE(warning.find("writable by group or others"), std::string::npos) << warning;
  ::chmod(dir.path.c_str(), 0700);

  // A group-writable entry is not loaded.
  jit::Compiler &c = withDisk(dir.path);
  jit::TilingKey key = getAndCheck(c, 11)->key();
  ::chmod(c.diskCache().pathOf(key).c_str(), 0660);
  warning.clear();
  EXPECT_FALSE(c.diskCache().load(key, warning).has_value());
  EXPECT_NE(warning.find("writable by group or others"), std::string::npos) << warning;

  // TILEJIT_CACHE=off: no directory is created, nothing is loaded.
  std::string fresh = dir.path + "/never";
  warning.clear();
  EXPECT_EQ(DiskCache::fromOptions(
                options({{"TILEJIT_CACHE_DIR", fresh}, {"TILEJIT_CACHE", "off"}}), warning)
                .mode(),
            DiskCache::Mode::Off);
  struct stat st;
  EXPECT_NE(::stat(fresh.c_str(), &st), 0);
  // A bad mode is the options' warning, and the disk tier stays off.
  jit::Options bad = options({{"TILEJIT_CACHE_DIR", fresh}, {"TILEJIT_CACHE", "sometimes"}});
  ASSERT_EQ(bad.warnings().size(), 1u);
  EXPECT_NE(bad.warnings()[0].find("off, read or readwrite"), std::string::npos)
      << bad.warnings()[0];
  warning.clear();
  EXPECT_EQ(DiskCache::fromOptions(bad, warning).mode(), DiskCache::Mode::Off);
  EXPECT_NE(::stat(fresh.c_str(), &st), 0);
}

TEST(DiskCache, RacingPublishersLeaveOneValidEntry) {
  TempDir dir;
  RestoreDisk restore;
  jit::Compiler &c = withDisk(dir.path);
  jit::TilingKey key = getAndCheck(c, 13)->key();
  std::string warning;
  auto e = c.diskCache().load(key, warning);
  ASSERT_TRUE(e.has_value());
  // Eight publishers of the same key at once (as eight processes would).
  std::vector<std::thread> threads;
  for (int i = 0; i < 8; ++i)
    threads.emplace_back([&] {
      std::string w;
      for (int r = 0; r < 10; ++r)
        EXPECT_TRUE(c.diskCache().store(key, *e, w)) << w;
    });
  for (auto &t : threads)
    t.join();
  auto all = c.diskCache().list();
  ASSERT_EQ(all.size(), 1u); // no temporary files left either
  EXPECT_EQ(all[0].key, key.str());
  EXPECT_TRUE(c.diskCache().load(key, warning).has_value()) << warning;
}

TEST(DiskCache, SizeBoundEvictsLeastRecentlyUsed) {
  TempDir dir;
  RestoreDisk restore;
  jit::Compiler &c = withDisk(dir.path);
  uint64_t one = 0;
  std::vector<jit::TilingKey> keys;
  for (int k = 20; k < 23; ++k) {
    keys.push_back(getAndCheck(c, k)->key());
    one = std::max<uint64_t>(one, c.diskCache().list().front().bytes);
  }
  ASSERT_EQ(c.diskCache().list().size(), 3u);
  // Use the first again (refreshes its last use), then bound the directory
  // to two entries and publish a fourth: the second (least recent) goes.
  ::sleep(1);
  std::string warning;
  ASSERT_TRUE(c.diskCache().load(keys[0], warning).has_value());
  ::sleep(1);
  c.setDiskCache(DiskCache(dir.path, DiskCache::Mode::ReadWrite, 2 * one + one / 2));
  getAndCheck(c, 23);
  auto all = c.diskCache().list();
  ASSERT_EQ(all.size(), 2u);
  std::vector<std::string> left = {all[0].key, all[1].key};
  EXPECT_NE(std::find(left.begin(), left.end(), keys[0].str()), left.end());
  EXPECT_EQ(std::find(left.begin(), left.end(), keys[1].str()), left.end());
  // prune: an unverifiable file goes too.
  writeFile(dir.path + "/tj_0000000000000000.tjk", {'j', 'u', 'n', 'k'});
  ::chmod((dir.path + "/tj_0000000000000000.tjk").c_str(), 0600);
  EXPECT_GE(c.diskCache().prune(), 1u);
  EXPECT_EQ(c.diskCache().list().size(), 2u);
  EXPECT_EQ(c.diskCache().clear(), 2u);
  EXPECT_TRUE(c.diskCache().list().empty());
}
