//===- Options.cpp - The environment variables tilejit reads --------------===//
///
/// \file
/// The table, the parse of one environment into typed values and messages,
/// and the process's parse (once, printing its warnings once). The parse
/// reads nothing but its argument, so every rule is testable without
/// touching the test process's environment.
///
//===----------------------------------------------------------------------===//
#include "jit/Options.h"

#include "jit/Compiler.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/raw_ostream.h"

#include <atomic>
#include <cassert>
#include <cstdint>
#include <mutex>

#include <unistd.h>

extern char **environ;

namespace tilejit::jit {

namespace {

constexpr uint64_t kMaxL1dBytes = uint64_t(1) << 30;

const OptionInfo kOptions[] = {
    {"TILEJIT_TARGET", OptionKind::Choice,
     "host: avx512 where the CPU has AVX-512 F/BW/VL/DQ, else avx2", "host, avx2 or avx512",
     BadValueKind::Error,
     "the instruction set generated code and the hand-written twins use"},
    {"TILEJIT_NUM_THREADS", OptionKind::Count, "all cores (OpenMP's thread count)",
     "a positive integer", BadValueKind::Warning, "cap on the threads a launch uses"},
    {"TILEJIT_L1D_BYTES", OptionKind::Bytes,
     "the host's L1 data cache (none for a target the host cannot run)",
     "a byte count from 0 to 1073741824", BadValueKind::Error,
     "the L1 data cache code generation assumes (0: assume nothing)"},
    {"TILEJIT_LLC_BYTES", OptionKind::Bytes, "the largest cache sysfs lists",
     "a byte count (a non-negative integer)", BadValueKind::Error,
     "the last-level cache host-side choices assume (0: every working set streams)"},
    {"TILEJIT_DUMP", OptionKind::StageList, "none",
     "a comma-separated list of ast, tile, tile-opt, llvm, llvm-opt (or opt), asm, passes, all",
     BadValueKind::Warning, "the stages of every compiled kernel to write to TILEJIT_DUMP_DIR"},
    {"TILEJIT_DUMP_DIR", OptionKind::Path, "the current directory",
     "a directory tilejit can create and write", BadValueKind::Warning,
     "where stage dumps go, one file per kernel and stage"},
    {"TILEJIT_CACHE", OptionKind::Choice, "readwrite", "off, read or readwrite",
     BadValueKind::Warning, "the disk tier of the kernel cache"},
    {"TILEJIT_CACHE_DIR", OptionKind::Path, "$XDG_CACHE_HOME/tilejit, else ~/.cache/tilejit",
     "a directory owned by you and writable by nobody else", BadValueKind::Warning,
     "where the disk tier lives"},
    {"TILEJIT_CACHE_MAX_BYTES", OptionKind::Bytes, "1073741824 (1 GiB)",
     "a positive byte count", BadValueKind::Warning,
     "the disk tier's size bound (least recently used entries go first)"},
    {"TILEJIT_MEMORY_CACHE_MAX_BYTES", OptionKind::Bytes, "268435456 (256 MiB)",
     "a positive byte count", BadValueKind::Warning,
     "the in-memory tier's bound: bytes of code and data mapped for cached kernels "
     "(least recently used entries go first)"},
    {"TILEJIT_COMPILE_THREADS", OptionKind::Count, "all cores",
     "a positive integer", BadValueKind::Warning,
     "the threads of the compile pool (compileAsync, aclnn phase 1, tilejit warm)"},
    {"TILEJIT_PERF_MAP", OptionKind::Flag, "0", "0 or 1 (also off/on, false/true, no/yes)",
     BadValueKind::Warning, "list each kernel's functions in /tmp/perf-PID.map for perf"},
    {"TILEJIT_DEBUG", OptionKind::Flag, "0", "0 or 1 (also off/on, false/true, no/yes)",
     BadValueKind::Warning,
     "bounds-checked kernels: an access outside its tensor stops the launch with its location"},
    {"TILEJIT_TEST_PRINT", OptionKind::Flag, "0", "0 or 1 (also off/on, false/true, no/yes)",
     BadValueKind::Warning, "tests print what they parsed (tests/unit)"},
    {"ASCEND_SLOG_PRINT_TO_STDOUT", OptionKind::Flag, "0", "0 or 1",
     BadValueKind::Warning, "print each aclnn/acl error message on stderr (CANN's switch)"},
    {"ASCEND_GLOBAL_LOG_LEVEL", OptionKind::Count, "3 (error)",
     "0 (debug), 1 (info), 2 (warning), 3 (error) or 4 (none)", BadValueKind::Warning,
     "CANN's log level: errors print at 0 to 3, nothing at 4"},
};

const OptionInfo &row(llvm::StringRef name) {
  const OptionInfo *r = findOption(name);
  assert(r && "every option the parse reads has a row in the table");
  return *r;
}

/// "NAME='value': expected RULE"
std::string badValue(llvm::StringRef name, llvm::StringRef value) {
  return (name + "='" + value + "': expected " + row(name).rule).str();
}

/// A decimal integer of digits only (no sign, space or suffix) up to `max`.
std::optional<uint64_t> parseDecimal(llvm::StringRef text, uint64_t max) {
  if (text.empty() || text.size() > 20 || !llvm::all_of(text, llvm::isDigit))
    return std::nullopt;
  uint64_t v = 0;
  if (text.getAsInteger(10, v) || v > max)
    return std::nullopt;
  return v;
}

std::optional<bool> parseFlag(llvm::StringRef text) {
  std::string t = text.lower();
  if (t == "1" || t == "on" || t == "true" || t == "yes")
    return true;
  if (t == "0" || t == "off" || t == "false" || t == "no")
    return false;
  return std::nullopt;
}

/// The known name closest to an unknown `TILEJIT_*` one, if close enough
/// to be a typo of it.
std::optional<llvm::StringRef> closestOption(llvm::StringRef unknown) {
  std::string upper = unknown.upper();
  std::optional<llvm::StringRef> best;
  unsigned bestDistance = std::max<unsigned>(2, (upper.size() - 8) / 4) + 1;
  for (const OptionInfo &o : kOptions) {
    unsigned d = llvm::StringRef(upper).edit_distance(o.name, true, bestDistance);
    if (d < bestDistance) {
      bestDistance = d;
      best = o.name;
    }
  }
  return best;
}

} // namespace

llvm::ArrayRef<OptionInfo> optionTable() { return kOptions; }

const OptionInfo *findOption(llvm::StringRef name) {
  for (const OptionInfo &o : kOptions)
    if (o.name == name)
      return &o;
  return nullptr;
}

Options Options::parse(Environment env) {
  Options o;
  o.env_ = std::move(env);
  // An empty value reads as unset (`VAR= command`).
  auto get = [&](llvm::StringRef name) -> std::optional<llvm::StringRef> {
    auto it = o.env_.find(name.str());
    if (it == o.env_.end() || it->second.empty())
      return std::nullopt;
    return llvm::StringRef(it->second);
  };
  auto warn = [&](llvm::StringRef name, llvm::StringRef value, llvm::StringRef then) {
    o.warnings_.push_back(badValue(name, value) + "; " + then.str());
  };
  auto flag = [&](llvm::StringRef name) {
    std::optional<llvm::StringRef> v = get(name);
    if (!v)
      return false;
    if (std::optional<bool> b = parseFlag(*v))
      return *b;
    warn(name, *v, "using the default (0)");
    return false;
  };

  if (auto v = get("TILEJIT_TARGET")) {
    if (*v == "host")
      o.target_ = TargetLevel::Host;
    else if (*v == "avx2")
      o.target_ = TargetLevel::Avx2;
    else if (*v == "avx512")
      o.target_ = TargetLevel::Avx512;
    else
      o.targetError_ = badValue("TILEJIT_TARGET", *v);
  } else {
    o.target_ = TargetLevel::Host;
  }

  if (auto v = get("TILEJIT_NUM_THREADS")) {
    std::optional<uint64_t> n = parseDecimal(*v, 1u << 20);
    if (n && *n > 0)
      o.numThreads_ = static_cast<unsigned>(*n);
    else
      warn("TILEJIT_NUM_THREADS", *v, "using the default (all cores)");
  }

  if (auto v = get("TILEJIT_L1D_BYTES")) {
    if (std::optional<uint64_t> n = parseDecimal(*v, kMaxL1dBytes))
      o.l1dBytes_ = *n;
    else
      o.l1dError_ = badValue("TILEJIT_L1D_BYTES", *v);
  }

  if (auto v = get("TILEJIT_LLC_BYTES")) {
    if (std::optional<uint64_t> n = parseDecimal(*v, uint64_t(INT64_MAX)))
      o.llcBytes_ = *n;
    else
      o.llcError_ = badValue("TILEJIT_LLC_BYTES", *v);
  }

  if (auto v = get("TILEJIT_DUMP")) {
    llvm::SmallVector<llvm::StringRef, 8> items;
    v->split(items, ',', -1, /*KeepEmpty=*/false);
    for (llvm::StringRef item : items) {
      unsigned bit = llvm::StringSwitch<unsigned>(item.trim())
                         .Case("all", 127)
                         .Case("ast", static_cast<unsigned>(DumpStage::Ast))
                         .Case("tile", static_cast<unsigned>(DumpStage::Tile))
                         .Case("tile-opt", static_cast<unsigned>(DumpStage::TileOpt))
                         .Case("llvm", static_cast<unsigned>(DumpStage::Llvm))
                         .Cases("llvm-opt", "opt", static_cast<unsigned>(DumpStage::LlvmOpt))
                         .Case("asm", static_cast<unsigned>(DumpStage::Asm))
                         .Case("passes", static_cast<unsigned>(DumpStage::Passes))
                         .Default(0);
      if (bit)
        o.dumpMask_ |= bit;
      else
        o.warnings_.push_back(badValue("TILEJIT_DUMP", *v) + "; '" + item.str() +
                              "' is not a stage and is ignored");
    }
  }
  if (auto v = get("TILEJIT_DUMP_DIR"))
    o.dumpDir_ = v->str();

  if (auto v = get("TILEJIT_CACHE")) {
    if (*v == "off")
      o.cacheMode_ = DiskCache::Mode::Off;
    else if (*v == "read")
      o.cacheMode_ = DiskCache::Mode::Read;
    else if (*v == "readwrite")
      o.cacheMode_ = DiskCache::Mode::ReadWrite;
    else {
      // Off rather than the default: the likelier intent of a misspelt value.
      o.cacheMode_ = DiskCache::Mode::Off;
      warn("TILEJIT_CACHE", *v, "the disk cache is off");
    }
  }
  if (auto d = get("TILEJIT_CACHE_DIR"))
    o.cacheDir_ = d->str();
  else if (auto x = get("XDG_CACHE_HOME"))
    o.cacheDir_ = x->str() + "/tilejit";
  else if (auto h = get("HOME"))
    o.cacheDir_ = h->str() + "/.cache/tilejit";
  if (auto v = get("TILEJIT_CACHE_MAX_BYTES")) {
    std::optional<uint64_t> n = parseDecimal(*v, UINT64_MAX);
    if (n && *n > 0)
      o.cacheMaxBytes_ = *n;
    else
      warn("TILEJIT_CACHE_MAX_BYTES", *v, "using the default (1 GiB)");
  }
  if (auto v = get("TILEJIT_MEMORY_CACHE_MAX_BYTES")) {
    std::optional<uint64_t> n = parseDecimal(*v, UINT64_MAX);
    if (n && *n > 0)
      o.memoryCacheMaxBytes_ = *n;
    else
      warn("TILEJIT_MEMORY_CACHE_MAX_BYTES", *v, "using the default (256 MiB)");
  }
  if (auto v = get("TILEJIT_COMPILE_THREADS")) {
    std::optional<uint64_t> n = parseDecimal(*v, 1u << 10);
    if (n && *n > 0)
      o.compileThreads_ = static_cast<unsigned>(*n);
    else
      warn("TILEJIT_COMPILE_THREADS", *v, "using the default (all cores)");
  }

  o.perfMap_ = flag("TILEJIT_PERF_MAP");
  o.debug_ = flag("TILEJIT_DEBUG");
  o.testPrint_ = flag("TILEJIT_TEST_PRINT");
  bool printLogs = flag("ASCEND_SLOG_PRINT_TO_STDOUT");
  uint64_t logLevel = 3;
  if (auto v = get("ASCEND_GLOBAL_LOG_LEVEL")) {
    if (std::optional<uint64_t> n = parseDecimal(*v, 4))
      logLevel = *n;
    else
      warn("ASCEND_GLOBAL_LOG_LEVEL", *v, "using the default (3)");
  }
  o.printsAclErrors_ = printLogs && logLevel <= 3;

  for (const auto &[name, value] : o.env_) {
    if (!llvm::StringRef(name).starts_with("TILEJIT_") || findOption(name))
      continue;
    std::string message = name + " is not a tilejit option and is ignored";
    if (std::optional<llvm::StringRef> near = closestOption(name))
      message += " (did you mean " + near->str() + "?)";
    o.warnings_.push_back(std::move(message));
  }
  return o;
}

Options::Environment Options::processEnvironment() {
  Environment env;
  for (char **e = environ; e && *e; ++e) {
    auto [name, value] = llvm::StringRef(*e).split('=');
    if (name.starts_with("TILEJIT_") || findOption(name) || name == "HOME" ||
        name == "XDG_CACHE_HOME")
      env.emplace(name.str(), value.str());
  }
  return env;
}

namespace {
std::atomic<const Options *> current{nullptr};
} // namespace

const Options &Options::process() {
  static std::once_flag once;
  std::call_once(once, [] {
    static const Options parsed = parse(processEnvironment());
    std::string text;
    for (const std::string &w : parsed.warnings())
      text += "tilejit: warning: " + w + "\n";
    llvm::errs() << text;
    current.store(&parsed, std::memory_order_release);
  });
  return *current.load(std::memory_order_acquire);
}

llvm::Expected<TargetLevel> Options::target() const {
  if (!targetError_.empty())
    return llvm::createStringError(targetError_);
  return *target_;
}

llvm::Expected<std::optional<uint64_t>> Options::l1dBytes() const {
  if (!l1dError_.empty())
    return llvm::createStringError(l1dError_);
  return l1dBytes_;
}

llvm::Expected<std::optional<uint64_t>> Options::llcBytes() const {
  if (!llcError_.empty())
    return llvm::createStringError(llcError_);
  return llcBytes_;
}

ScopedOptionOverride::ScopedOptionOverride(const std::string &name,
                                           std::optional<std::string> value)
    : previous_(&Options::process()) {
  Options::Environment env = previous_->environment();
  if (value)
    env[name] = std::move(*value);
  else
    env.erase(name);
  mine_ = std::make_unique<const Options>(Options::parse(std::move(env)));
  current.store(mine_.get(), std::memory_order_release);
}

ScopedOptionOverride::~ScopedOptionOverride() {
  assert(current.load(std::memory_order_relaxed) == mine_.get() &&
         "overrides end in the reverse order of their start");
  current.store(previous_, std::memory_order_release);
}

} // namespace tilejit::jit
