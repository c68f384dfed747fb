//===- DiskCacheTest.cpp - The disk tier of the kernel cache --------------===//
//
// Through the Compiler with a disk tier in a fresh temporary directory: a
// compiled kernel is published, a second lookup (memory cleared, as in a new
// process) loads it without compiling and it runs correctly; every kind of
// tampering is detected, rebuilt and replaced; unsafe directories and entries
// are refused; TILEJIT_CACHE=off touches nothing; racing publishers leave one
// valid entry; the size bound evicts the least recently used entries.
//
// Faults: a FIFO, a device, a directory, a symbolic link or an oversized
// file where an entry should be; an entry rewritten, truncated and grown by
// another process while it is read; a full file system (an injected write
// fault, and a file size limit in a child process); a read-only directory; a
// directory replaced by a symbolic link after it was opened; four processes
// publishing one key at once. Each lookup still returns a kernel that
// computes the right result, prints at most one warning (exactly one where
// the fault is new), and never runs an entry that does not verify.
//
//===----------------------------------------------------------------------===//
#include "jit/Compiler.h"
#include "jit/DiskCache.h"
#include "jit/Options.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <iterator>
#include <sstream>
#include <thread>
#include <vector>

#include <dirent.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
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

/// The compiler, the runtime-library functions scale calls already linked in
/// this process (compiled with no disk tier): the directories below then hold
/// kernel entries only, which the checks count and tamper with. The runtime
/// functions' own entries need fresh processes: tests/lit/tools/
/// disk-cache-runtime.tile.
jit::Compiler &compiler() {
  jit::Compiler &c = jit::Compiler::instance();
  static const bool linked = [&c] {
    c.setDiskCache(DiskCache());
    getAndCheck(c, 1);
    c.clearMemoryCache();
    return true;
  }();
  (void)linked;
  return c;
}

/// The compiler with a disk tier in `dir`, memory cleared (a "new process").
jit::Compiler &withDisk(const std::string &dir, uint64_t maxBytes = uint64_t(1) << 30) {
  jit::Compiler &c = compiler();
  c.setDiskCache(DiskCache(dir, DiskCache::Mode::ReadWrite, maxBytes));
  c.clearMemoryCache();
  return c;
}

/// The warning lines `body` prints on stderr.
template <typename Body> std::vector<std::string> warningsOf(Body body) {
  testing::internal::CaptureStderr();
  body();
  std::istringstream err(testing::internal::GetCapturedStderr());
  std::vector<std::string> out;
  for (std::string line; std::getline(err, line);)
    if (line.rfind("tilejit: warning: ", 0) == 0)
      out.push_back(line);
  return out;
}

/// Names in `dir` (but "." and "..").
std::vector<std::string> namesIn(const std::string &dir) {
  std::vector<std::string> out;
  if (DIR *d = ::opendir(dir.c_str())) {
    while (struct dirent *e = ::readdir(d))
      if (std::string(e->d_name) != "." && std::string(e->d_name) != "..")
        out.push_back(e->d_name);
    ::closedir(d);
  }
  std::sort(out.begin(), out.end());
  return out;
}

/// How many descriptors this process has open.
size_t openDescriptors() { return namesIn("/proc/self/fd").size(); }

/// Runs `body` in a child process (it must use no JIT or thread pool: file
/// operations only) and returns its exit status; 0 means every check held.
template <typename Body> int inChild(Body body) {
  std::fflush(nullptr);
  pid_t pid = ::fork();
  if (pid == 0)
    ::_exit(body());
  int status = 0;
  if (pid < 0 || ::waitpid(pid, &status, 0) != pid)
    return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/// A load as the checks read it: the entry (none on a miss or an error) and
/// the error's text ("" when there is none).
struct Loaded {
  std::optional<jit::DiskEntry> entry;
  std::string error;
};
Loaded load(const DiskCache &disk, const jit::TilingKey &key) {
  llvm::Expected<std::optional<jit::DiskEntry>> got = disk.load(key);
  if (!got)
    return {std::nullopt, llvm::toString(got.takeError())};
  return {std::move(*got), ""};
}

/// A store's error text; "" when the entry was stored.
std::string store(const DiskCache &disk, const jit::TilingKey &key, const jit::DiskEntry &e) {
  return llvm::toString(disk.store(key, e));
}

/// The disk tier `options` make, and the warnings it gave (joined by "; ").
std::pair<DiskCache, std::string> opened(const jit::Options &options) {
  std::string warnings;
  DiskCache disk = DiskCache::fromOptions(options, [&](const std::string &w) {
    warnings += (warnings.empty() ? "" : "; ") + w;
  });
  return {std::move(disk), warnings};
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
    Loaded bad = load(c.diskCache(), key);
    EXPECT_FALSE(bad.entry.has_value());
    EXPECT_NE(bad.error.find("cache entry " + entry + " ignored: "), std::string::npos)
        << bad.error;
    // The lookup compiles (the entry is not trusted) and runs correctly...
    c.clearMemoryCache();
    uint64_t compiles = c.stats().compiles;
    EXPECT_TRUE(getAndCheck(c, 5).compiled);
    EXPECT_EQ(c.stats().compiles, compiles + 1);
    // ...and the entry was replaced by a valid one.
    Loaded rebuilt = load(c.diskCache(), key);
    EXPECT_TRUE(rebuilt.entry.has_value()) << rebuilt.error;
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
    // The API itself: a hit is an engaged optional, a store no error.
    llvm::Expected<std::optional<jit::DiskEntry>> e = c.diskCache().load(key);
    ASSERT_TRUE(static_cast<bool>(e)) << llvm::toString(e.takeError());
    ASSERT_TRUE(e->has_value());
    llvm::Error stored = c.diskCache().store(alien, **e);
    ASSERT_FALSE(static_cast<bool>(stored)) << llvm::toString(std::move(stored));
    ASSERT_EQ(std::rename(c.diskCache().pathOf(alien).c_str(),
                          c.diskCache().pathOf(key).c_str()),
              0);
    // A present entry of another key: an error saying so, not a miss.
    llvm::Expected<std::optional<jit::DiskEntry>> planted = c.diskCache().load(key);
    ASSERT_FALSE(static_cast<bool>(planted));
    std::string why = llvm::toString(planted.takeError());
    EXPECT_NE(why.find("another key"), std::string::npos) << why;
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
  auto [safe, none] = opened(options({{"TILEJIT_CACHE_DIR", dir.path}}));
  EXPECT_EQ(safe.mode(), DiskCache::Mode::ReadWrite) << none;
  EXPECT_EQ(none, "");
  ::chmod(dir.path.c_str(), 0770);
  auto [unsafe, warning] = opened(options({{"TILEJIT_CACHE_DIR", dir.path}}));
  EXPECT_EQ(unsafe.mode(), DiskCache::Mode::Off);
  EXPECT_NE(warning.find("writable by group or others"), std::string::npos) << warning;
  ::chmod(dir.path.c_str(), 0700);

  // A group-writable entry is not loaded.
  jit::Compiler &c = withDisk(dir.path);
  jit::TilingKey key = getAndCheck(c, 11)->key();
  ::chmod(c.diskCache().pathOf(key).c_str(), 0660);
  Loaded groupWritable = load(c.diskCache(), key);
  EXPECT_FALSE(groupWritable.entry.has_value());
  EXPECT_NE(groupWritable.error.find("writable by group or others"), std::string::npos)
      << groupWritable.error;

  // TILEJIT_CACHE=off: no directory is created, nothing is loaded, no
  // warning (it is what was asked for).
  std::string fresh = dir.path + "/never";
  auto [off, quiet] =
      opened(options({{"TILEJIT_CACHE_DIR", fresh}, {"TILEJIT_CACHE", "off"}}));
  EXPECT_EQ(off.mode(), DiskCache::Mode::Off);
  EXPECT_EQ(quiet, "");
  Loaded fromOff = load(off, key);
  EXPECT_FALSE(fromOff.entry.has_value());
  EXPECT_EQ(fromOff.error, "");
  EXPECT_NE(store(off, key, jit::DiskEntry()).find("the disk cache is off"), std::string::npos);
  struct stat st;
  EXPECT_NE(::stat(fresh.c_str(), &st), 0);
  // A bad mode is the options' warning, and the disk tier stays off.
  jit::Options bad = options({{"TILEJIT_CACHE_DIR", fresh}, {"TILEJIT_CACHE", "sometimes"}});
  ASSERT_EQ(bad.warnings().size(), 1u);
  EXPECT_NE(bad.warnings()[0].find("off, read or readwrite"), std::string::npos)
      << bad.warnings()[0];
  EXPECT_EQ(opened(bad).first.mode(), DiskCache::Mode::Off);
  EXPECT_NE(::stat(fresh.c_str(), &st), 0);
}

TEST(DiskCache, RacingPublishersLeaveOneValidEntry) {
  TempDir dir;
  RestoreDisk restore;
  jit::Compiler &c = withDisk(dir.path);
  jit::TilingKey key = getAndCheck(c, 13)->key();
  Loaded e = load(c.diskCache(), key);
  ASSERT_TRUE(e.entry.has_value()) << e.error;
  // Eight publishers of the same key at once (as eight processes would).
  std::vector<std::thread> threads;
  for (int i = 0; i < 8; ++i)
    threads.emplace_back([&] {
      for (int r = 0; r < 10; ++r)
        EXPECT_EQ(store(c.diskCache(), key, *e.entry), "");
    });
  for (auto &t : threads)
    t.join();
  auto all = c.diskCache().list();
  ASSERT_EQ(all.size(), 1u); // no temporary files left either
  EXPECT_EQ(all[0].key, key.str());
  Loaded after = load(c.diskCache(), key);
  EXPECT_TRUE(after.entry.has_value()) << after.error;
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
  ASSERT_TRUE(load(c.diskCache(), keys[0]).entry.has_value());
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

// Something other than a small regular file where an entry should be is
// refused before it is read (a FIFO would block the caller, a device or a
// huge file would be read without end): the lookup compiles, runs correctly,
// prints one warning saying what was found, and replaces it with a valid
// entry (a directory cannot be replaced: the same warning says so too).
TEST(DiskCacheFaults, NonRegularOrOversizedEntriesAreRefusedBeforeReading) {
  TempDir dir, elsewhere;
  RestoreDisk restore;
  jit::Compiler &c = withDisk(dir.path);
  const jit::TilingKey key = getAndCheck(c, 5)->key();
  const std::string entry = c.diskCache().pathOf(key);
  const std::vector<char> good = readFile(entry);
  // A valid entry of this very key, outside the directory: followed, the
  // link would be a hit.
  const std::string outside = elsewhere.path + "/entry.tjk";
  writeFile(outside, good);
  ::chmod(outside.c_str(), 0600);

  struct Case {
    const char *what, *says;
    std::function<bool()> plant; // false: cannot be made here
    bool replaced;
  };
  auto sparse = [&](uint64_t bytes) {
    int fd = ::open(entry.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    bool ok = fd >= 0 && ::ftruncate(fd, static_cast<off_t>(bytes)) == 0;
    if (fd >= 0)
      ::close(fd);
    return ok;
  };
  std::vector<Case> cases = {
      {"FIFO", "not a regular file (a FIFO)",
       [&] { return ::mkfifo(entry.c_str(), 0600) == 0; }, true},
      {"directory", "not a regular file (a directory)",
       [&] { return ::mkdir(entry.c_str(), 0700) == 0; }, false},
      {"symbolic link to a valid entry", "not a regular file (a symbolic link)",
       [&] { return ::symlink(outside.c_str(), entry.c_str()) == 0; }, true},
      // /dev/zero's numbers: read whole, it never ends. Making a device
      // needs privilege; unprivileged runs check the other cases.
      {"character device", "not a regular file (a character device)",
       [&] { return ::mknod(entry.c_str(), S_IFCHR | 0600, makedev(1, 5)) == 0; }, true},
      {"one byte over the bound",
       "bytes, over the bound of",
       [&] { return sparse(DiskCache::kMaxEntryBytes + 1); }, true},
      {"6 GiB (truncated up)", "6442450944 bytes, over the bound of",
       [&] { return sparse(uint64_t(6) << 30); }, true},
  };
  size_t planted = 0;
  for (const Case &k : cases) {
    SCOPED_TRACE(k.what);
    ::unlink(entry.c_str());
    if (!k.plant()) {
      ASSERT_TRUE(errno == EPERM && std::string(k.what) == "character device")
          << std::strerror(errno);
      continue;
    }
    ++planted;
    c.clearMemoryCache();
    uint64_t compiles = c.stats().compiles;
    struct rusage before, after;
    ::getrusage(RUSAGE_SELF, &before);
    auto warnings = warningsOf([&] { EXPECT_TRUE(getAndCheck(c, 5).compiled); });
    ::getrusage(RUSAGE_SELF, &after);
    EXPECT_EQ(c.stats().compiles, compiles + 1);
    ASSERT_EQ(warnings.size(), 1u);
    EXPECT_NE(warnings[0].find("cache entry " + entry + " ignored: "), std::string::npos)
        << warnings[0];
    EXPECT_NE(warnings[0].find(k.says), std::string::npos) << warnings[0];
    // Nothing near the file's size was allocated (ru_maxrss is in KiB).
    EXPECT_LT(after.ru_maxrss - before.ru_maxrss, 32 * 1024);
    struct stat st;
    ASSERT_EQ(::lstat(entry.c_str(), &st), 0);
    if (k.replaced) {
      EXPECT_TRUE(S_ISREG(st.st_mode));
      Loaded rebuilt = load(c.diskCache(), key);
      EXPECT_TRUE(rebuilt.entry.has_value()) << rebuilt.error;
    } else {
      EXPECT_TRUE(S_ISDIR(st.st_mode));
      EXPECT_NE(warnings[0].find("; then cannot publish cache entry " + entry),
                std::string::npos)
          << warnings[0];
      ::rmdir(entry.c_str());
    }
  }
  EXPECT_GE(planted, cases.size() - 1);
  // The file outside was never written through the link.
  EXPECT_EQ(readFile(outside), good);
}

// Another process rewrites the entry in place, truncates it, grows it and
// extends it to a huge size while this one loads it: every load either
// returns exactly the published entry or refuses with a warning, and
// lookups through the compiler keep computing the right result with at most
// one warning each.
TEST(DiskCacheFaults, EntryChangedByAnotherProcessWhileReadIsNeverTrusted) {
  TempDir dir;
  RestoreDisk restore;
  jit::Compiler &c = withDisk(dir.path);
  const jit::TilingKey key = getAndCheck(c, 6)->key();
  const std::string entry = c.diskCache().pathOf(key);
  const std::vector<char> good = readFile(entry);
  const Loaded loaded = load(c.diskCache(), key);
  const std::optional<jit::DiskEntry> &published = loaded.entry;
  ASSERT_TRUE(published.has_value()) << loaded.error;

  std::fflush(nullptr);
  pid_t writer = ::fork();
  ASSERT_GE(writer, 0);
  if (writer == 0) {
    // Rewrites the file in place (no rename): readers see every state. It
    // runs until it is stopped.
    for (unsigned i = 0;; ++i) {
      // A rebuild's rename is atomic, but the rebuild's eviction removes an
      // entry this writer has just made huge (it can never be loaded):
      // then the writer starts a new one.
      int fd = ::open(entry.c_str(), O_WRONLY | O_CREAT, 0600);
      if (fd < 0)
        ::_exit(1);
      switch (i % 4) {
      case 0: // whole again
        (void)!::pwrite(fd, good.data(), good.size(), 0);
        break;
      case 1: // truncated
        (void)!::ftruncate(fd, static_cast<off_t>(good.size() / (2 + i % 7)));
        break;
      case 2: // grown by junk
        (void)!::pwrite(fd, good.data(), good.size(), 0);
        (void)!::pwrite(fd, "junk", 4, static_cast<off_t>(good.size()));
        break;
      case 3: // huge
        (void)!::ftruncate(fd, off_t(6) << 30);
        break;
      }
      ::close(fd);
    }
  }
  size_t hits = 0, refusals = 0, absences = 0;
  for (int i = 0; i < 400; ++i) {
    auto [e, w] = load(c.diskCache(), key);
    if (e) {
      ++hits;
      EXPECT_EQ(e->object, published->object);
      EXPECT_EQ(e->stem, published->stem);
      EXPECT_EQ(w, "");
    } else if (w.empty()) {
      ++absences; // evicted by a rebuild below, before the writer made it again
    } else {
      ++refusals;
      EXPECT_NE(w.find("cache entry " + entry + " ignored: "), std::string::npos) << w;
    }
    if (i % 40 == 0) {
      c.clearMemoryCache();
      EXPECT_LE(warningsOf([&] { getAndCheck(c, 6); }).size(), 1u);
    }
  }
  ::kill(writer, SIGKILL);
  int status = 0;
  ASSERT_EQ(::waitpid(writer, &status, 0), writer);
  EXPECT_TRUE(WIFSIGNALED(status)) << "the writer stopped early: " << status;
  EXPECT_EQ(hits + refusals + absences, 400u);
  EXPECT_GT(refusals, 0u); // the writer ran all along
  // The writer left it in any state, or evicted: one more lookup publishes
  // a whole entry again.
  c.clearMemoryCache();
  EXPECT_LE(warningsOf([&] { getAndCheck(c, 6); }).size(), 1u);
  Loaded whole = load(c.diskCache(), key);
  ASSERT_TRUE(whole.entry.has_value()) << whole.error;
  // Left in a state not seen before (warnings print once per process):
  // refused with one warning, rebuilt, replaced.
  ASSERT_EQ(::chmod(entry.c_str(), 0620), 0);
  c.clearMemoryCache();
  auto warnings = warningsOf([&] { EXPECT_TRUE(getAndCheck(c, 6).compiled); });
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("writable by group or others (mode 620)"), std::string::npos)
      << warnings[0];
  c.clearMemoryCache();
  EXPECT_FALSE(getAndCheck(c, 6).compiled);
}

// A full file system, injected: the write fails after a short write (or at
// once). The lookup compiles and runs correctly, one warning says the
// directory cannot be written (once for any number of keys), and neither a
// temporary file nor a descriptor is left behind.
TEST(DiskCacheFaults, FullFileSystemCompilesWithOneWarningAndLeavesNothing) {
  TempDir dir;
  RestoreDisk restore;
  jit::Compiler &c = withDisk(dir.path);
  const jit::TilingKey key = getAndCheck(c, 30)->key();
  const Loaded loaded = load(c.diskCache(), key);
  const std::optional<jit::DiskEntry> &e = loaded.entry;
  ASSERT_TRUE(e.has_value()) << loaded.error;
  const uint64_t size = readFile(c.diskCache().pathOf(key)).size();
  ASSERT_EQ(c.diskCache().clear(), 1u);
  const std::string expected = "cannot write to the cache directory " + dir.path +
                               ": " + std::strerror(ENOSPC) +
                               "; kernels are compiled but not cached";
  for (uint64_t after : {uint64_t(0), uint64_t(1), uint64_t(4096), size - 1}) {
    SCOPED_TRACE(after);
    DiskCache full(dir.path, DiskCache::Mode::ReadWrite, uint64_t(1) << 30);
    full.injectWriteFault(after, ENOSPC);
    size_t fds = openDescriptors();
    EXPECT_EQ(store(full, key, *e), expected);
    EXPECT_EQ(openDescriptors(), fds);
    EXPECT_EQ(namesIn(dir.path), std::vector<std::string>{});
  }
  DiskCache full(dir.path, DiskCache::Mode::ReadWrite, uint64_t(1) << 30);
  full.injectWriteFault(4096, ENOSPC);
  c.setDiskCache(full);
  c.clearMemoryCache();
  auto first = warningsOf([&] {
    EXPECT_TRUE(getAndCheck(c, 30).compiled);
    EXPECT_TRUE(getAndCheck(c, 31).compiled);
  });
  ASSERT_EQ(first.size(), 1u);
  EXPECT_EQ(first[0], "tilejit: warning: " + expected);
  EXPECT_EQ(namesIn(dir.path), std::vector<std::string>{});

  // A real short write: a file size limit in a child process (SIGXFSZ
  // ignored, so write fails with EFBIG after writing what fits).
  int rc = inChild([&] {
    std::signal(SIGXFSZ, SIG_IGN);
    struct rlimit limit = {4096, 4096};
    if (::setrlimit(RLIMIT_FSIZE, &limit) != 0)
      return 2;
    DiskCache limited(dir.path, DiskCache::Mode::ReadWrite, uint64_t(1) << 30);
    size_t fds = openDescriptors();
    const std::string w = store(limited, key, *e);
    if (w.empty())
      return 3;
    if (w != "cannot write to the cache directory " + dir.path + ": " +
                 std::strerror(EFBIG) + "; kernels are compiled but not cached")
      return 4;
    if (openDescriptors() != fds)
      return 5;
    return namesIn(dir.path).empty() ? 0 : 6;
  });
  EXPECT_EQ(rc, 0);
}

// A directory this process must not write (mode 0500: even root, who could,
// does not) is only read: one warning when the disk tier is made, entries
// are still loaded, new kernels are compiled and not stored.
TEST(DiskCacheFaults, ReadOnlyDirectoryIsOnlyRead) {
  TempDir dir;
  RestoreDisk restore;
  jit::Compiler &c = withDisk(dir.path);
  const jit::TilingKey key = getAndCheck(c, 40)->key();
  const std::vector<std::string> before = namesIn(dir.path);
  ASSERT_EQ(before.size(), 1u);
  ASSERT_EQ(::chmod(dir.path.c_str(), 0500), 0);
  auto [ro, warning] = opened(jit::Options::parse({{"TILEJIT_CACHE_DIR", dir.path}}));
  EXPECT_EQ(ro.mode(), DiskCache::Mode::Read);
  EXPECT_EQ(warning, "the cache directory " + dir.path +
                         " is read-only (mode 500); kernels are loaded from it but not stored");
  c.setDiskCache(ro);
  c.clearMemoryCache();
  auto warnings = warningsOf([&] {
    EXPECT_FALSE(getAndCheck(c, 40).compiled); // loaded
    EXPECT_TRUE(getAndCheck(c, 41).compiled);  // compiled, not stored
  });
  EXPECT_EQ(warnings, std::vector<std::string>{});
  EXPECT_EQ(namesIn(dir.path), before);
  ::chmod(dir.path.c_str(), 0700);
  (void)key;
}

// The directory is replaced by a symbolic link to another directory after
// the disk tier opened it; that directory holds an entry that verifies for
// the key asked for but computes something else. It is never read: lookups
// load from and publish into the directory opened, with one warning.
TEST(DiskCacheFaults, DirectorySwappedForASymlinkIsNeverFollowed) {
  TempDir parent;
  RestoreDisk restore;
  const std::string path = parent.path + "/cache", moved = parent.path + "/moved",
                    attacker = parent.path + "/attacker";
  ASSERT_EQ(::mkdir(path.c_str(), 0700), 0);
  ASSERT_EQ(::mkdir(attacker.c_str(), 0700), 0);
  auto [first, none] = opened(jit::Options::parse({{"TILEJIT_CACHE_DIR", path}}));
  ASSERT_EQ(first.mode(), DiskCache::Mode::ReadWrite) << none;
  jit::Compiler &c = compiler();
  c.setDiskCache(first);
  c.clearMemoryCache();
  const jit::TilingKey five = getAndCheck(c, 5)->key();
  const jit::TilingKey seven = getAndCheck(c, 7)->key();
  // The attacker's entry: K = 7's code under K = 5's key (it verifies).
  Loaded wrong = load(first, seven);
  ASSERT_TRUE(wrong.entry.has_value()) << wrong.error;
  DiskCache planted(attacker, DiskCache::Mode::ReadWrite, uint64_t(1) << 30);
  ASSERT_EQ(store(planted, five, *wrong.entry), "");
  const std::vector<std::string> attackerFiles = namesIn(attacker);

  ASSERT_EQ(::rename(path.c_str(), moved.c_str()), 0);
  ASSERT_EQ(::symlink(attacker.c_str(), path.c_str()), 0);
  c.clearMemoryCache();
  uint64_t hits = c.stats().diskHits;
  auto warnings = warningsOf([&] {
    EXPECT_FALSE(getAndCheck(c, 5).compiled); // 5x: from the directory opened
    EXPECT_TRUE(getAndCheck(c, 8).compiled);  // published there too
  });
  EXPECT_EQ(c.stats().diskHits, hits + 1);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0], "tilejit: warning: the cache directory " + path +
                             " was replaced after this process opened it (it is now a "
                             "symbolic link); entries are read and written only in the "
                             "directory opened");
  EXPECT_EQ(namesIn(attacker), attackerFiles);
  EXPECT_EQ(namesIn(moved).size(), 3u); // K = 5, 7 and 8
  // The disk tier itself says so.
  EXPECT_EQ(llvm::toString(first.checkDirectory()), warnings[0].substr(18));

  // Made afresh, the disk tier refuses the link.
  auto [again, warning] = opened(jit::Options::parse({{"TILEJIT_CACHE_DIR", path}}));
  EXPECT_EQ(again.mode(), DiskCache::Mode::Off);
  EXPECT_EQ(warning, "the cache directory " + path + " is not a directory; the disk cache is off");
}

// Four processes publish one new key at once, each many times, while each
// also loads it: every load verifies and is exactly the published entry;
// one entry and no temporary file is left.
TEST(DiskCacheFaults, FourProcessesPublishingOneKeyLeaveOneValidEntry) {
  TempDir dir;
  RestoreDisk restore;
  jit::Compiler &c = withDisk(dir.path);
  const jit::TilingKey key = getAndCheck(c, 50)->key();
  const Loaded loaded = load(c.diskCache(), key);
  const std::optional<jit::DiskEntry> &e = loaded.entry;
  ASSERT_TRUE(e.has_value()) << loaded.error;
  ASSERT_EQ(c.diskCache().clear(), 1u);
  const DiskCache disk = c.diskCache();
  std::fflush(nullptr);
  std::vector<pid_t> children;
  for (int p = 0; p < 4; ++p) {
    pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      int bad = 0;
      for (int r = 0; r < 50; ++r) {
        const std::string stored = store(disk, key, *e);
        auto [got, w] = load(disk, key);
        bool ok = stored.empty() && got && got->object == e->object &&
                  got->signature == e->signature;
        if (!ok)
          std::fprintf(stderr, "process %d, round %d: %s%s\n", p, r, stored.c_str(),
                       w.c_str());
        bad += !ok;
      }
      ::_exit(bad ? 1 : 0);
    }
    children.push_back(pid);
  }
  for (pid_t pid : children) {
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  }
  EXPECT_EQ(namesIn(dir.path), std::vector<std::string>{key.symbolStem() + ".tjk"});
  c.clearMemoryCache();
  EXPECT_FALSE(getAndCheck(c, 50).compiled);
}

// A file over the entry bound can never be loaded: the size bound evicts it
// before any entry that can.
TEST(DiskCacheFaults, OversizedFilesAreEvictedFirst) {
  TempDir dir;
  RestoreDisk restore;
  jit::Compiler &c = withDisk(dir.path);
  const jit::TilingKey old = getAndCheck(c, 60)->key();
  ::sleep(1);
  const std::string huge = dir.path + "/tj_ffffffffffffffff.tjk";
  int fd = ::open(huge.c_str(), O_WRONLY | O_CREAT, 0600);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::ftruncate(fd, off_t(6) << 30), 0);
  ::close(fd);
  getAndCheck(c, 61); // publishes, then evicts down to 1 GiB
  std::vector<std::string> left = namesIn(dir.path);
  EXPECT_EQ(left.size(), 2u);
  EXPECT_EQ(std::count(left.begin(), left.end(), "tj_ffffffffffffffff.tjk"), 0);
  EXPECT_EQ(std::count(left.begin(), left.end(), old.symbolStem() + ".tjk"), 1);
}

// A relative TILEJIT_CACHE_DIR names the directory the process started in,
// even after it changes its working directory (no false "replaced").
TEST(DiskCacheFaults, RelativeDirectoryIsAnchoredWhereItWasOpened) {
  TempDir dir, other;
  RestoreDisk restore;
  char *cwd = ::getcwd(nullptr, 0);
  ASSERT_NE(cwd, nullptr);
  ASSERT_EQ(::chdir(dir.path.c_str()), 0);
  auto [relative, warning] = opened(jit::Options::parse({{"TILEJIT_CACHE_DIR", "rel"}}));
  ASSERT_EQ(::chdir(other.path.c_str()), 0);
  ASSERT_EQ(relative.mode(), DiskCache::Mode::ReadWrite) << warning;
  EXPECT_EQ(relative.dir(), dir.path + "/rel");
  jit::Compiler &c = compiler();
  c.setDiskCache(relative);
  c.clearMemoryCache();
  auto warnings = warningsOf([&] {
    EXPECT_TRUE(getAndCheck(c, 62).compiled);
    c.clearMemoryCache();
    EXPECT_FALSE(getAndCheck(c, 62).compiled);
  });
  EXPECT_EQ(warnings, std::vector<std::string>{});
  EXPECT_EQ(namesIn(dir.path + "/rel").size(), 1u);
  ASSERT_EQ(::chdir(cwd), 0);
  std::free(cwd);
}

// A writer that died leaves its temporary file; prune removes those over an
// hour old (never one that may still be written) and leaves entries alone.
TEST(DiskCacheFaults, PruneRemovesStaleTemporaryFilesOnly) {
  TempDir dir;
  RestoreDisk restore;
  jit::Compiler &c = withDisk(dir.path);
  const jit::TilingKey key = getAndCheck(c, 63)->key();
  const std::string stale = ".tmp-" + key.symbolStem() + "-1-0-0",
                    fresh = ".tmp-" + key.symbolStem() + "-2-0-0";
  for (const std::string &name : {stale, fresh}) {
    writeFile(dir.path + "/" + name, {'p', 'a', 'r', 't'});
    ::chmod((dir.path + "/" + name).c_str(), 0600);
  }
  struct timespec twoHoursAgo[2] = {{::time(nullptr) - 7200, 0}, {::time(nullptr) - 7200, 0}};
  ASSERT_EQ(::utimensat(AT_FDCWD, (dir.path + "/" + stale).c_str(), twoHoursAgo, 0), 0);
  EXPECT_EQ(c.diskCache().prune(), 1u);
  EXPECT_EQ(namesIn(dir.path), (std::vector<std::string>{fresh, key.symbolStem() + ".tjk"}));
}
