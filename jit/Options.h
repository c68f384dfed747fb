//===- Options.h - The environment variables tilejit reads -------*- C++ -*-===//
///
/// \file
/// The one table of every environment variable tilejit reads (`TILEJIT_*`
/// and the two CANN logging variables it follows), and the one place they
/// are read and checked: `Options::process()` reads the process environment
/// once, on first use and thread-safely, and every room asks it through the
/// typed accessors below; nothing else calls getenv for them.
///
/// A bad value is never ignored in silence. Each variable either falls back
/// to its default with a warning on stderr (printed once per process, naming
/// the variable, the value and the rule), or, where a wrong guess would
/// generate code for another machine than the one asked for, is a hard
/// error the consumer returns as a value (an llvm::Error or an aclnn
/// status). Unknown `TILEJIT_*` variables, likely typos, are warned about
/// once, with the closest known name. docs/options.md is the reference.
///
/// Tests parse an injected environment (`Options::parse`) rather than
/// setting variables in their own process; `ScopedOptionOverride` covers
/// the few consumers that read options on every call.
///
//===----------------------------------------------------------------------===//
#ifndef TILEJIT_JIT_OPTIONS_H
#define TILEJIT_JIT_OPTIONS_H

#include "jit/DiskCache.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace tilejit::jit {

enum class TargetLevel; // jit/Compiler.h

/// How an option's value is spelled.
enum class OptionKind {
  Choice,    ///< one of a few words
  Count,     ///< a decimal integer
  Bytes,     ///< a decimal byte count
  StageList, ///< comma-separated stage names
  Path,      ///< a directory
  Flag,      ///< 0/1 (also off/on, false/true, no/yes)
};

/// What a value that breaks the rule leads to.
enum class BadValueKind {
  Warning, ///< a warning on stderr, then the default
  Error,   ///< an error value from the call that needs the option
};

/// One row of the options table.
struct OptionInfo {
  llvm::StringRef name;
  OptionKind kind;
  llvm::StringRef defaultValue; ///< in words, as documented
  llvm::StringRef rule;         ///< what a valid value is, as messages say it
  BadValueKind onBadValue;
  llvm::StringRef doc; ///< one line
};

/// Every variable tilejit reads, in documentation order.
llvm::ArrayRef<OptionInfo> optionTable();
/// The row for `name`, or null.
const OptionInfo *findOption(llvm::StringRef name);

/// Option values as read from one environment.
class Options {
public:
  /// Variable name -> value.
  using Environment = std::map<std::string, std::string>;

  /// Parses `env` (no printing, no process state): tests inject theirs.
  static Options parse(Environment env);
  /// This process's variables: every `TILEJIT_*` one, the table's others,
  /// and HOME and XDG_CACHE_HOME (the disk cache's fallbacks).
  static Environment processEnvironment();
  /// The process's options, parsed from processEnvironment() on first use;
  /// that first use prints every warning once. The reference stays valid
  /// until a ScopedOptionOverride in effect at the call ends.
  static const Options &process();

  //===--- Hard errors: an llvm::Error naming the variable ----------------===//

  /// TILEJIT_TARGET: Host (the host's widest level) unless it names one.
  llvm::Expected<TargetLevel> target() const;
  /// TILEJIT_L1D_BYTES: the L1 data cache code generation assumes; nullopt
  /// where unset (the host's).
  llvm::Expected<std::optional<uint64_t>> l1dBytes() const;
  /// TILEJIT_LLC_BYTES: the last-level cache host-side choices assume;
  /// nullopt where unset (the host's).
  llvm::Expected<std::optional<uint64_t>> llcBytes() const;

  //===--- Warnings, then the default --------------------------------------===//

  /// TILEJIT_NUM_THREADS: the cap on a launch's threads; 0 for none.
  unsigned numThreads() const { return numThreads_; }
  /// TILEJIT_DUMP: the stages to dump, as DumpStage bits (jit/Compiler.h).
  unsigned dumpMask() const { return dumpMask_; }
  /// TILEJIT_DUMP_DIR: where dumps go ("." where unset).
  const std::string &dumpDir() const { return dumpDir_; }
  /// TILEJIT_CACHE: the disk tier's mode (Off after a bad value).
  DiskCache::Mode cacheMode() const { return cacheMode_; }
  /// TILEJIT_CACHE_DIR, else $XDG_CACHE_HOME/tilejit, else
  /// $HOME/.cache/tilejit; empty where none is set.
  const std::string &cacheDir() const { return cacheDir_; }
  /// TILEJIT_CACHE_MAX_BYTES: the disk tier's size bound.
  uint64_t cacheMaxBytes() const { return cacheMaxBytes_; }
  /// TILEJIT_MEMORY_CACHE_MAX_BYTES: the in-memory tier's bound, in bytes of
  /// code and data mapped for the kernels it holds.
  uint64_t memoryCacheMaxBytes() const { return memoryCacheMaxBytes_; }
  /// TILEJIT_COMPILE_THREADS: the compile pool's threads; 0 for every core.
  unsigned compileThreads() const { return compileThreads_; }
  /// TILEJIT_PERF_MAP: whether kernels are listed in /tmp/perf-PID.map.
  bool perfMap() const { return perfMap_; }
  /// TILEJIT_DEBUG: whether kernels are compiled bounds-checked (a field of
  /// the tiling key).
  bool debug() const { return debug_; }
  /// ASCEND_SLOG_PRINT_TO_STDOUT and ASCEND_GLOBAL_LOG_LEVEL: whether each
  /// message recorded for aclGetRecentErrMsg is printed on stderr too.
  bool printsAclErrors() const { return printsAclErrors_; }
  /// TILEJIT_TEST_PRINT: whether tests print what they parsed.
  bool testPrint() const { return testPrint_; }

  /// One message per bad value of a Warning option and per unknown
  /// `TILEJIT_*` variable, without the "tilejit: warning: " prefix.
  const std::vector<std::string> &warnings() const { return warnings_; }
  /// The environment these options were parsed from.
  const Environment &environment() const { return env_; }

private:
  Options() = default;

  Environment env_;
  std::vector<std::string> warnings_;
  // Hard-error options: the value, or the message of the error.
  std::optional<TargetLevel> target_;
  std::optional<uint64_t> l1dBytes_, llcBytes_;
  std::string targetError_, l1dError_, llcError_;
  unsigned numThreads_ = 0;
  unsigned dumpMask_ = 0;
  std::string dumpDir_ = ".";
  DiskCache::Mode cacheMode_ = DiskCache::Mode::ReadWrite;
  std::string cacheDir_;
  uint64_t cacheMaxBytes_ = uint64_t(1) << 30;
  uint64_t memoryCacheMaxBytes_ = uint64_t(256) << 20;
  unsigned compileThreads_ = 0;
  bool perfMap_ = false;
  bool debug_ = false;
  bool printsAclErrors_ = false;
  bool testPrint_ = false;
};

/// For tests of consumers that read Options::process() on every call: sets
/// (or, with nullopt, unsets) one variable in the process's options for
/// its lifetime, then restores them. The process environment itself is not
/// touched. Not for use while other threads read options.
class ScopedOptionOverride {
public:
  ScopedOptionOverride(const std::string &name, std::optional<std::string> value);
  ~ScopedOptionOverride();
  ScopedOptionOverride(const ScopedOptionOverride &) = delete;
  ScopedOptionOverride &operator=(const ScopedOptionOverride &) = delete;

private:
  const Options *previous_;
  std::unique_ptr<const Options> mine_;
};

} // namespace tilejit::jit

#endif
