//===- OptionsTest.cpp - The options table and its parse ------------------===//
//
// Every rule of jit/Options.h on an injected environment (nothing here sets
// a variable in the test process), the messages bad values give, and that
// docs/options.md lists every row of the table.
//
//===----------------------------------------------------------------------===//
#include "jit/Compiler.h"
#include "jit/Options.h"

#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>

using namespace tilejit;
using jit::DiskCache;
using jit::Options;

namespace {

Options parse(Options::Environment env) { return Options::parse(std::move(env)); }

/// The one warning `env` gives (fails unless there is exactly one).
std::string onlyWarning(Options::Environment env) {
  Options o = parse(std::move(env));
  EXPECT_EQ(o.warnings().size(), 1u);
  return o.warnings().empty() ? "" : o.warnings()[0];
}

/// The value of `e`, checked (a test failure, and T{}, on an error).
template <typename T> T valueOf(llvm::Expected<T> e) {
  if (!e) {
    ADD_FAILURE() << llvm::toString(e.takeError());
    return T{};
  }
  return std::move(*e);
}

template <typename T> std::string errorOf(llvm::Expected<T> e) {
  if (e)
    return "(no error)";
  return llvm::toString(e.takeError());
}

unsigned bit(jit::DumpStage s) { return static_cast<unsigned>(s); }

} // namespace

TEST(Options, DefaultsOfAnEmptyEnvironment) {
  Options o = parse({});
  EXPECT_TRUE(o.warnings().empty());
  EXPECT_EQ(valueOf(o.target()), jit::TargetLevel::Host);
  EXPECT_EQ(valueOf(o.l1dBytes()), std::nullopt);
  EXPECT_EQ(valueOf(o.llcBytes()), std::nullopt);
  EXPECT_EQ(o.numThreads(), 0u);
  EXPECT_EQ(o.dumpMask(), 0u);
  EXPECT_EQ(o.dumpDir(), ".");
  EXPECT_EQ(o.cacheMode(), DiskCache::Mode::ReadWrite);
  EXPECT_EQ(o.cacheDir(), "");
  EXPECT_EQ(o.cacheMaxBytes(), uint64_t(1) << 30);
  EXPECT_EQ(o.memoryCacheMaxBytes(), uint64_t(256) << 20);
  EXPECT_EQ(o.compileThreads(), 0u);
  EXPECT_FALSE(o.perfMap());
  EXPECT_FALSE(o.printsAclErrors());
  EXPECT_FALSE(o.testPrint());
}

TEST(Options, GoodValuesAreParsed) {
  Options o = parse({{"TILEJIT_TARGET", "avx2"},
                     {"TILEJIT_NUM_THREADS", "3"},
                     {"TILEJIT_L1D_BYTES", "32768"},
                     {"TILEJIT_LLC_BYTES", "0"},
                     {"TILEJIT_DUMP", "ast,tile-opt,opt,asm"},
                     {"TILEJIT_DUMP_DIR", "dumps"},
                     {"TILEJIT_CACHE", "read"},
                     {"TILEJIT_CACHE_DIR", "/somewhere"},
                     {"TILEJIT_CACHE_MAX_BYTES", "4096"},
                     {"TILEJIT_MEMORY_CACHE_MAX_BYTES", "16777216"},
                     {"TILEJIT_COMPILE_THREADS", "2"},
                     {"TILEJIT_PERF_MAP", "1"},
                     {"TILEJIT_TEST_PRINT", "yes"},
                     {"ASCEND_SLOG_PRINT_TO_STDOUT", "1"},
                     {"ASCEND_GLOBAL_LOG_LEVEL", "0"}});
  EXPECT_TRUE(o.warnings().empty()) << o.warnings()[0];
  EXPECT_EQ(valueOf(o.target()), jit::TargetLevel::Avx2);
  EXPECT_EQ(o.numThreads(), 3u);
  EXPECT_EQ(valueOf(o.l1dBytes()), 32768u);
  EXPECT_EQ(valueOf(o.llcBytes()), 0u);
  EXPECT_EQ(o.dumpMask(), bit(jit::DumpStage::Ast) | bit(jit::DumpStage::TileOpt) |
                              bit(jit::DumpStage::LlvmOpt) | bit(jit::DumpStage::Asm));
  EXPECT_EQ(o.dumpDir(), "dumps");
  EXPECT_EQ(o.cacheMode(), DiskCache::Mode::Read);
  EXPECT_EQ(o.cacheDir(), "/somewhere");
  EXPECT_EQ(o.cacheMaxBytes(), 4096u);
  EXPECT_EQ(o.memoryCacheMaxBytes(), 16777216u);
  EXPECT_EQ(o.compileThreads(), 2u);
  EXPECT_TRUE(o.perfMap());
  EXPECT_TRUE(o.testPrint());
  EXPECT_TRUE(o.printsAclErrors());

  EXPECT_EQ(valueOf(parse({{"TILEJIT_TARGET", "avx512"}}).target()), jit::TargetLevel::Avx512);
  EXPECT_EQ(valueOf(parse({{"TILEJIT_TARGET", "host"}}).target()), jit::TargetLevel::Host);
  EXPECT_EQ(parse({{"TILEJIT_DUMP", "all"}}).dumpMask(), 127u);
  EXPECT_EQ(parse({{"TILEJIT_DUMP", "passes"}}).dumpMask(), bit(jit::DumpStage::Passes));
  EXPECT_EQ(parse({{"TILEJIT_CACHE", "off"}}).cacheMode(), DiskCache::Mode::Off);
  EXPECT_EQ(parse({{"TILEJIT_CACHE", "readwrite"}}).cacheMode(), DiskCache::Mode::ReadWrite);
  EXPECT_FALSE(parse({{"TILEJIT_PERF_MAP", "0"}}).perfMap());
}

TEST(Options, AnEmptyValueReadsAsUnset) {
  Options o = parse({{"TILEJIT_TARGET", ""},
                     {"TILEJIT_NUM_THREADS", ""},
                     {"TILEJIT_L1D_BYTES", ""},
                     {"TILEJIT_CACHE", ""},
                     {"TILEJIT_DUMP_DIR", ""}});
  EXPECT_TRUE(o.warnings().empty());
  EXPECT_EQ(valueOf(o.target()), jit::TargetLevel::Host);
  EXPECT_EQ(valueOf(o.l1dBytes()), std::nullopt);
  EXPECT_EQ(o.cacheMode(), DiskCache::Mode::ReadWrite);
  EXPECT_EQ(o.dumpDir(), ".");
}

TEST(Options, BadThreadCountsWarnAndUseEveryCore) {
  for (const char *bad : {"abc", "0", "-3", "4x", " 4", "+4"}) {
    SCOPED_TRACE(bad);
    EXPECT_EQ(onlyWarning({{"TILEJIT_NUM_THREADS", bad}}),
              std::string("TILEJIT_NUM_THREADS='") + bad +
                  "': expected a positive integer; using the default (all cores)");
    EXPECT_EQ(parse({{"TILEJIT_NUM_THREADS", bad}}).numThreads(), 0u);
  }
}

TEST(Options, BadDumpStagesWarnAndTheOthersStay) {
  EXPECT_EQ(onlyWarning({{"TILEJIT_DUMP", "bogus"}}),
            "TILEJIT_DUMP='bogus': expected a comma-separated list of ast, tile, tile-opt, "
            "llvm, llvm-opt (or opt), asm, passes, all; 'bogus' is not a stage and is ignored");
  Options o = parse({{"TILEJIT_DUMP", "tile,bogus,asm"}});
  EXPECT_EQ(o.dumpMask(), bit(jit::DumpStage::Tile) | bit(jit::DumpStage::Asm));
  ASSERT_EQ(o.warnings().size(), 1u);
  EXPECT_NE(o.warnings()[0].find("'bogus' is not a stage"), std::string::npos);
}

TEST(Options, BadTargetIsAnError) {
  Options o = parse({{"TILEJIT_TARGET", "avx521"}});
  EXPECT_TRUE(o.warnings().empty());
  EXPECT_EQ(errorOf(o.target()), "TILEJIT_TARGET='avx521': expected host, avx2 or avx512");
}

TEST(Options, BadCacheSizesAreErrors) {
  for (const char *bad : {"xyz", "32K", "-1", "1073741825"}) {
    SCOPED_TRACE(bad);
    Options o = parse({{"TILEJIT_L1D_BYTES", bad}});
    EXPECT_TRUE(o.warnings().empty());
    EXPECT_EQ(errorOf(o.l1dBytes()), std::string("TILEJIT_L1D_BYTES='") + bad +
                                         "': expected a byte count from 0 to 1073741824");
  }
  EXPECT_EQ(errorOf(parse({{"TILEJIT_LLC_BYTES", "32M"}}).llcBytes()),
            "TILEJIT_LLC_BYTES='32M': expected a byte count (a non-negative integer)");
}

TEST(Options, BadCacheModeWarnsAndTurnsTheDiskOff) {
  Options o = parse({{"TILEJIT_CACHE", "bogus"}});
  EXPECT_EQ(o.cacheMode(), DiskCache::Mode::Off);
  EXPECT_EQ(onlyWarning({{"TILEJIT_CACHE", "bogus"}}),
            "TILEJIT_CACHE='bogus': expected off, read or readwrite; the disk cache is off");
  std::string warning;
  auto warn = [&](const std::string &w) { warning += w; };
  EXPECT_EQ(DiskCache::fromOptions(o, warn).mode(), DiskCache::Mode::Off);
  EXPECT_EQ(warning, "");
}

TEST(Options, BadCacheBoundWarnsAndUsesOneGiB) {
  for (const char *bad : {"0", "1G", "lots"}) {
    SCOPED_TRACE(bad);
    EXPECT_EQ(onlyWarning({{"TILEJIT_CACHE_MAX_BYTES", bad}}),
              std::string("TILEJIT_CACHE_MAX_BYTES='") + bad +
                  "': expected a positive byte count; using the default (1 GiB)");
    EXPECT_EQ(parse({{"TILEJIT_CACHE_MAX_BYTES", bad}}).cacheMaxBytes(), uint64_t(1) << 30);
  }
}

TEST(Options, BadMemoryBoundAndCompileThreadsWarn) {
  for (const char *bad : {"0", "16M", "-1", "lots"}) {
    SCOPED_TRACE(bad);
    EXPECT_EQ(onlyWarning({{"TILEJIT_MEMORY_CACHE_MAX_BYTES", bad}}),
              std::string("TILEJIT_MEMORY_CACHE_MAX_BYTES='") + bad +
                  "': expected a positive byte count; using the default (256 MiB)");
    EXPECT_EQ(parse({{"TILEJIT_MEMORY_CACHE_MAX_BYTES", bad}}).memoryCacheMaxBytes(),
              uint64_t(256) << 20);
    EXPECT_EQ(onlyWarning({{"TILEJIT_COMPILE_THREADS", bad}}),
              std::string("TILEJIT_COMPILE_THREADS='") + bad +
                  "': expected a positive integer; using the default (all cores)");
    EXPECT_EQ(parse({{"TILEJIT_COMPILE_THREADS", bad}}).compileThreads(), 0u);
  }
}

TEST(Options, CacheDirectoryFallbacks) {
  EXPECT_EQ(parse({{"HOME", "/h"}}).cacheDir(), "/h/.cache/tilejit");
  EXPECT_EQ(parse({{"HOME", "/h"}, {"XDG_CACHE_HOME", "/x"}}).cacheDir(), "/x/tilejit");
  EXPECT_EQ(parse({{"HOME", "/h"}, {"XDG_CACHE_HOME", "/x"}, {"TILEJIT_CACHE_DIR", "/t"}})
                .cacheDir(),
            "/t");
  std::string warning;
  auto warn = [&](const std::string &w) { warning += w; };
  EXPECT_EQ(DiskCache::fromOptions(parse({}), warn).mode(), DiskCache::Mode::Off);
  EXPECT_EQ(warning, "no TILEJIT_CACHE_DIR, XDG_CACHE_HOME or HOME; the disk cache is off");
}

TEST(Options, BadFlagsWarnAndStayOff) {
  EXPECT_EQ(onlyWarning({{"TILEJIT_PERF_MAP", "sometimes"}}),
            "TILEJIT_PERF_MAP='sometimes': expected 0 or 1 (also off/on, false/true, no/yes); "
            "using the default (0)");
  EXPECT_FALSE(parse({{"TILEJIT_PERF_MAP", "sometimes"}}).perfMap());
}

TEST(Options, AclErrorsPrintWithCannsSwitchAndLevel) {
  EXPECT_TRUE(parse({{"ASCEND_SLOG_PRINT_TO_STDOUT", "1"}}).printsAclErrors());
  EXPECT_TRUE(parse({{"ASCEND_SLOG_PRINT_TO_STDOUT", "1"}, {"ASCEND_GLOBAL_LOG_LEVEL", "3"}})
                  .printsAclErrors());
  EXPECT_FALSE(parse({{"ASCEND_SLOG_PRINT_TO_STDOUT", "1"}, {"ASCEND_GLOBAL_LOG_LEVEL", "4"}})
                   .printsAclErrors());
  EXPECT_FALSE(parse({{"ASCEND_SLOG_PRINT_TO_STDOUT", "0"}}).printsAclErrors());
  EXPECT_FALSE(parse({{"ASCEND_GLOBAL_LOG_LEVEL", "0"}}).printsAclErrors());
  EXPECT_EQ(onlyWarning({{"ASCEND_GLOBAL_LOG_LEVEL", "5"}}),
            "ASCEND_GLOBAL_LOG_LEVEL='5': expected 0 (debug), 1 (info), 2 (warning), "
            "3 (error) or 4 (none); using the default (3)");
}

TEST(Options, UnknownTilejitVariablesWarnWithTheClosestName) {
  EXPECT_EQ(onlyWarning({{"TILEJIT_FOO", "1"}}),
            "TILEJIT_FOO is not a tilejit option and is ignored");
  EXPECT_EQ(onlyWarning({{"TILEJIT_NUM_THREAD", "4"}}),
            "TILEJIT_NUM_THREAD is not a tilejit option and is ignored "
            "(did you mean TILEJIT_NUM_THREADS?)");
  EXPECT_EQ(onlyWarning({{"TILEJIT_CACHEDIR", "/x"}}),
            "TILEJIT_CACHEDIR is not a tilejit option and is ignored "
            "(did you mean TILEJIT_CACHE_DIR?)");
  EXPECT_EQ(onlyWarning({{"TILEJIT_dump", "all"}}),
            "TILEJIT_dump is not a tilejit option and is ignored (did you mean TILEJIT_DUMP?)");
  // Other prefixes are not tilejit's to judge.
  EXPECT_TRUE(parse({{"ASCEND_OTHER", "1"}, {"HOME", "/h"}, {"TILEJITFOO", "1"}})
                  .warnings()
                  .empty());
}

TEST(Options, TheTableIsWellFormed) {
  std::set<std::string> names;
  for (const jit::OptionInfo &o : jit::optionTable()) {
    SCOPED_TRACE(o.name.str());
    EXPECT_TRUE(names.insert(o.name.str()).second) << "listed twice";
    EXPECT_TRUE(o.name.starts_with("TILEJIT_") || o.name.starts_with("ASCEND_"));
    EXPECT_FALSE(o.defaultValue.empty());
    EXPECT_FALSE(o.rule.empty());
    EXPECT_FALSE(o.doc.empty());
    EXPECT_EQ(jit::findOption(o.name), &o);
  }
  EXPECT_EQ(jit::findOption("TILEJIT_FOO"), nullptr);
}

// docs/options.md is the one reference: a row per option, and none more.
TEST(Options, TheReferenceListsEveryOption) {
  std::ifstream in(std::string(TILEJIT_SOURCE_ROOT) + "/docs/options.md");
  ASSERT_TRUE(in) << "docs/options.md";
  std::set<std::string> documented;
  for (std::string line; std::getline(in, line);) {
    // Table rows open with "| `NAME` |".
    if (line.rfind("| `", 0) != 0)
      continue;
    size_t end = line.find('`', 3);
    if (end != std::string::npos)
      documented.insert(line.substr(3, end - 3));
  }
  std::set<std::string> table;
  for (const jit::OptionInfo &o : jit::optionTable())
    table.insert(o.name.str());
  EXPECT_EQ(documented, table);
}

TEST(Options, AnOverrideReplacesOneVariableForItsLifetime) {
  const std::optional<uint64_t> before = valueOf(Options::process().llcBytes());
  {
    jit::ScopedOptionOverride o("TILEJIT_LLC_BYTES", "12345");
    EXPECT_EQ(valueOf(Options::process().llcBytes()), 12345u);
    {
      jit::ScopedOptionOverride unset("TILEJIT_LLC_BYTES", std::nullopt);
      EXPECT_EQ(valueOf(Options::process().llcBytes()), std::nullopt);
    }
    EXPECT_EQ(valueOf(Options::process().llcBytes()), 12345u);
  }
  EXPECT_EQ(valueOf(Options::process().llcBytes()), before);
}
