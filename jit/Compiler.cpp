//===- Compiler.cpp - DSL source + specialisation -> callable kernel ------===//
///
/// \file
/// The pipeline as one linear list of named, timed steps (parse, sema, Tile IR
/// passes, codegen, LLVM optimisation, machine code), with stage dumps, and
/// the in-process kernel cache keyed by tiling key.
///
//===----------------------------------------------------------------------===//
#include "jit/Compiler.h"

#include "codegen/llvm/CodeGen.h"
#include "codegen/passes/Pipeline.h"
#include "dsl/Frontend.h"
#include "dsl/ir/Printer.h"
#include "jit/CompilePool.h"
#include "jit/DiskCache.h"
#include "jit/Errors.h"
#include "jit/KernelJIT.h"
#include "jit/Options.h"

#include "llvm/IR/DebugInfo.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/PassTimingInfo.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Transforms/Utils/Cloning.h"

#include <algorithm>
#include <array>
#include <cassert>
#include <cerrno>
#include <cstring>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>
#include <mutex>
#include <set>
#include <shared_mutex>
#include <sstream>
#include <unordered_map>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "CompilerFingerprint.h" // generated: a hash of the compiler's sources

#ifndef TILEJIT_VERSION
#define TILEJIT_VERSION "0"
#endif
#ifndef TILEJIT_LLVM_VERSION
#define TILEJIT_LLVM_VERSION "19"
#endif

namespace tilejit::jit {

char KindedError::ID = 0;

KernelSource::KernelSource(std::string name, std::string text)
    : name_(std::move(name)), text_(std::move(text)),
      hash_(hashBytes(text_.data(), text_.size())) {}

namespace {
/// Every source parsed in this process, by its text (found by its hash): one
/// parse per text, shared by every compiler (the host's and the forced
/// levels') and by binding, keying and compiling.
struct ParseCache {
  struct Entry {
    explicit Entry(std::string t) : text(std::move(t)) {}
    const std::string text;
    std::once_flag once;
    std::shared_ptr<const dsl::ParsedFile> file;
  };
  std::mutex mutex;
  /// Texts whose hashes collide share a bucket; each has its own entry.
  std::unordered_map<uint64_t, std::vector<std::shared_ptr<Entry>>> entries;
  std::atomic<uint64_t> parses{0};

  static ParseCache &get() {
    static ParseCache cache;
    return cache;
  }
};
} // namespace

llvm::Expected<std::shared_ptr<const dsl::ParsedFile>> KernelSource::parsed() const {
  ParseCache &cache = ParseCache::get();
  std::shared_ptr<ParseCache::Entry> entry;
  {
    std::lock_guard lock(cache.mutex);
    auto &bucket = cache.entries[hash_];
    for (const auto &e : bucket)
      if (e->text == text_)
        entry = e;
    if (!entry)
      entry = bucket.emplace_back(std::make_shared<ParseCache::Entry>(text_));
  }
  std::string errors;
  std::call_once(entry->once, [&] {
    cache.parses.fetch_add(1, std::memory_order_relaxed);
    DiagnosticEngine diags;
    auto file = dsl::parse(diags, diags.addBuffer(name_, text_));
    if (file)
      entry->file = std::move(file);
    else
      errors = diags.renderAll();
  });
  if (entry->file)
    return entry->file;
  if (errors.empty()) {
    // Another request's parse of this text failed: render it for this one.
    DiagnosticEngine diags;
    [[maybe_unused]] auto again = dsl::parse(diags, diags.addBuffer(name_, text_));
    errors = diags.renderAll();
  }
  // A failed parse is not kept: the next request parses again.
  std::lock_guard lock(cache.mutex);
  if (auto it = cache.entries.find(hash_); it != cache.entries.end()) {
    std::erase(it->second, entry);
    if (it->second.empty())
      cache.entries.erase(it);
  }
  return makeError(ErrorKind::Compile, errors);
}

uint64_t KernelSource::parseCount() { return ParseCache::get().parses.load(); }

llvm::Expected<KernelSource> KernelSource::fromFile(const std::string &path) {
  auto fail = [&](const std::string &why) {
    return llvm::createStringError("cannot read kernel source '" + path + "': " + why);
  };
  // Non-blocking, so that a FIFO cannot hang the caller; only a regular file
  // is read.
  int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0)
    return fail(std::strerror(errno));
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st;
  if (::fstat(fd, &st) != 0)
    return fail(std::strerror(errno));
  if (S_ISDIR(st.st_mode))
    return fail("it is a directory");
  if (!S_ISREG(st.st_mode))
    return fail("it is not a regular file");
  if (st.st_size > kMaxSourceBytes)
    return fail("it has " + std::to_string(st.st_size) + " bytes; a kernel source has at most " +
                std::to_string(kMaxSourceBytes));
  std::string text(static_cast<size_t>(st.st_size), '\0');
  size_t got = 0;
  while (got < text.size()) {
    ssize_t n = ::read(fd, text.data() + got, text.size() - got);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return fail(std::strerror(errno));
    if (n == 0)
      break; // shrank while read: take what is there
    got += static_cast<size_t>(n);
  }
  text.resize(got);
  return KernelSource(path, std::move(text));
}

namespace {

using Clock = std::chrono::steady_clock;
double msSince(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

const char *stageSuffix(DumpStage s) {
  switch (s) {
  case DumpStage::Ast:
    return ".ast";
  case DumpStage::Tile:
    return ".tile.tir";
  case DumpStage::TileOpt:
    return ".tile-opt.tir";
  case DumpStage::Llvm:
    return ".ll";
  case DumpStage::LlvmOpt:
    return ".opt.ll";
  case DumpStage::Asm:
    return ".s";
  case DumpStage::Passes:
    return ".passes.txt";
  }
  return ".txt";
}

/// emitObject with LLVM's legacy pass timers on, their report appended to
/// `out`. The timers are process-wide: one such compile at a time.
llvm::Expected<std::vector<char>> emitObjectTimingPasses(llvm::Module &module,
                                                         llvm::TargetMachine &tm,
                                                         llvm::raw_ostream &out) {
  static std::mutex timing;
  std::lock_guard lock(timing);
  llvm::TimePassesIsEnabled = true;
  auto object = emitObject(module, tm);
  llvm::TimePassesIsEnabled = false;
  llvm::reportAndResetTimings(&out);
  return object;
}

std::string moduleText(const llvm::Module &m) {
  std::string s;
  llvm::raw_string_ostream os(s);
  m.print(os, nullptr);
  return s;
}

/// Stage times as text for a disk entry, and back.
std::string formatTimes(const StageTimes &t) {
  std::string out;
  for (double v : {t.parse, t.sema, t.tilePasses, t.codegen, t.llvmOpt, t.machineCode, t.total})
    out += std::to_string(v) + " ";
  return out;
}
StageTimes parseTimes(const std::string &text) {
  StageTimes t;
  double *fields[] = {&t.parse, &t.sema, &t.tilePasses, &t.codegen,
                      &t.llvmOpt, &t.machineCode, &t.total};
  const char *p = text.c_str();
  for (double *f : fields) {
    char *end = nullptr;
    *f = std::strtod(p, &end);
    if (end == p)
      break;
    p = end;
  }
  return t;
}

/// The runtime signature of a lowered kernel.
std::vector<rt::ParamSig> signatureOf(const ir::Kernel &kernel) {
  static_assert(static_cast<int>(ir::ScalarKind::F32) == static_cast<int>(rt::ElemType::F32) &&
                    static_cast<int>(ir::ScalarKind::I1) == static_cast<int>(rt::ElemType::I1) &&
                    static_cast<int>(ir::ScalarKind::BF16) ==
                        static_cast<int>(rt::ElemType::BF16),
                "rt::ElemType lists the DSL's scalar kinds in their order");
  std::vector<rt::ParamSig> sig;
  for (const ir::Param &p : kernel.params)
    sig.push_back({p.name, p.type.isTensor(), static_cast<rt::ElemType>(p.type.elem()),
                   p.type.isTensor() ? static_cast<int64_t>(p.type.rank()) : 0});
  return sig;
}

/// A signature as text for a disk entry ("name t|s type rank" per line), and
/// back (nullopt if it is not one).
std::string formatSignature(const std::vector<rt::ParamSig> &sig) {
  std::string out = "signature\n";
  for (const rt::ParamSig &p : sig)
    out += p.name + (p.tensor ? " t " : " s ") + rt::elemTypeName(p.type) + " " +
           std::to_string(p.rank) + "\n";
  return out;
}
std::optional<std::vector<rt::ParamSig>> parseSignature(const std::string &text) {
  std::istringstream in(text);
  std::string line;
  if (!std::getline(in, line) || line != "signature")
    return std::nullopt;
  std::vector<rt::ParamSig> sig;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    rt::ParamSig p;
    std::string kind, type;
    if (!(fields >> p.name >> kind >> type >> p.rank) || (kind != "t" && kind != "s") ||
        p.rank < 0 || p.rank > rt::kMaxRank)
      return std::nullopt;
    p.tensor = kind == "t";
    ir::ScalarKind k;
    if (!ir::parseScalarKind(type, k))
      return std::nullopt;
    p.type = static_cast<rt::ElemType>(k);
    sig.push_back(std::move(p));
  }
  return sig;
}

/// The outcome of one compilation, shared by every waiter; an entry of the
/// in-memory tier.
struct Slot {
  std::shared_future<std::shared_ptr<const CompiledKernel>> future;
  /// A failed compile's error, for the callers that waited on it.
  std::shared_ptr<std::pair<ErrorKind, std::string>> error =
      std::make_shared<std::pair<ErrorKind, std::string>>();
  /// The tier's clock at the last request (least recently used goes first).
  std::atomic<uint64_t> lastUse{0};
  /// Set under the shard's lock once the kernel is in and counted: its
  /// bytes are in the tier's total while the slot is in the map.
  bool counted = false;
  uint64_t bytes = 0;
};

} // namespace

uint64_t CompiledKernel::codeBytes() const { return code_ ? code_->bytes() : 0; }

struct Compiler::Impl {
  TargetChoice target;
  /// Shared with every kernel's code, which removes itself from it.
  std::shared_ptr<KernelJIT> jit;
  /// Set for `forEmission` compilers whose target the host cannot run.
  bool emitOnly = false;
  unsigned dumpMask = Options::process().dumpMask();
  std::string dumpDir = Options::process().dumpDir();

  static constexpr unsigned kShards = 16;
  struct Shard {
    mutable std::shared_mutex mutex;
    std::unordered_map<TilingKey, std::shared_ptr<Slot>> map;
  };
  std::array<Shard, kShards> shards;
  std::atomic<uint64_t> memoryHits{0}, compiles{0};

  Shard &shardOf(const TilingKey &k) { return shards[k.hash() % kShards]; }

  /// The in-memory tier's bound and use: the bytes of code and data its
  /// counted entries map.
  std::atomic<uint64_t> maxBytes{Options::process().memoryCacheMaxBytes()};
  std::atomic<uint64_t> cachedBytes{0}, evictions{0};
  /// A clock ticked by every admission; an entry's lastUse is the tick at
  /// its last request (least recently used first out).
  std::atomic<uint64_t> clock{0};
  /// One eviction scan at a time.
  std::mutex evictMutex;

  /// Counts a finished kernel against the bound (if its slot is still the
  /// map's: a clear may have dropped it meanwhile), then evicts.
  void admit(const TilingKey &key, const std::shared_ptr<Slot> &slot, uint64_t bytes);
  /// Drops `slot` from the map if it is still there; uncounts its bytes.
  /// The shard's lock must be held.
  void dropLocked(Shard &shard, const TilingKey &key, const Slot *slot);
  /// Once the counted bytes exceed the bound, evicts the least recently
  /// used finished entries down to seven eighths of it.
  void evict();

  /// `spec` bound to `kernel`'s declaration (dsl::bindSpecialization): the
  /// typed, canonical value the key holds and the front end lowers with.
  llvm::Expected<Specialization> bind(const KernelSource &source,
                                      const std::string &kernel,
                                      const Specialization &spec);

  /// Keys made, by request: the source text, the kernel, the specialisation
  /// as given and the options. A request is bound once; asking again costs
  /// a mix of the specialisation's own hash and a probe. At most
  /// kMaxMadeKeys are kept (then the table starts again), so a process that
  /// meets new shapes all day does not grow it forever; a key handed out
  /// stays valid with its holder.
  struct MadeKey {
    uint64_t sourceHash;
    std::string kernel;
    Specialization spec;
    unsigned optLevel;
    bool debug;
    std::shared_ptr<const TilingKey> key;
  };
  static constexpr size_t kMaxMadeKeys = 1024;
  mutable std::shared_mutex madeMutex;
  std::unordered_multimap<uint64_t, MadeKey> made;
  llvm::Expected<std::shared_ptr<const TilingKey>> keyFor(const KernelSource &source, const std::string &kernel,
                                           const Specialization &spec,
                                           const CompileOptions &options);

  /// Requests seen since startRecording().
  std::atomic<bool> recording{false};
  mutable std::mutex recordMutex;
  std::set<Request> recorded;
  void record(const TilingKey &key, const KernelSource &source) {
    if (!recording.load(std::memory_order_relaxed))
      return;
    std::lock_guard lock(recordMutex);
    recorded.insert({source.name(), key.fields().kernel, key.fields().params});
  }

  /// The disk tier (off unless the environment allows it).
  DiskCache disk;
  std::atomic<uint64_t> diskHits{0};
  /// Warnings about the disk tier and dumps, each printed once per process.
  std::mutex warnMutex;
  std::set<std::string> warned;
  void warnOnce(const std::string &message) {
    std::lock_guard lock(warnMutex);
    if (warned.insert(message).second)
      llvm::errs() << "tilejit: warning: " << message << "\n";
  }
  /// The disk tier's key of runtime-library function `name` on this target:
  /// no source, parameters or L1 size (the compiler's fingerprint covers its
  /// code, which assumes nothing of the caches).
  TilingKey runtimeKey(const std::string &name) const;
  /// The runtime library's compiled functions in the disk tier, so that a
  /// process loading its kernels from disk compiles nothing
  /// (KernelJIT::RuntimeObjects).
  KernelJIT::RuntimeObjects runtimeObjects();
  /// A verified disk entry for `key`, linked; null on a miss. `warning` says
  /// why a present entry was not used (the caller prints it once, together
  /// with any failure to replace the entry).
  std::shared_ptr<const CompiledKernel> loadFromDisk(const TilingKey &key,
                                                     std::string &warning);

  void dump(const TilingKey &key, DumpStage stage, const std::string &text) {
    if (!(dumpMask & static_cast<unsigned>(stage)))
      return;
    std::string name = key.str();
    for (char &c : name)
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' &&
          c != '-' && c != '_' && c != '=' && c != ',')
        c = '_';
    // A missing TILEJIT_DUMP_DIR is made. A dump that cannot be written is
    // reported (once per reason) and the compile goes on: dumps are a view
    // of the compile, not part of it.
    std::error_code ec;
    std::filesystem::create_directories(dumpDir, ec);
    std::string path = dumpDir + "/" + name + stageSuffix(stage);
    if (!ec) {
      llvm::raw_fd_ostream out(path, ec, llvm::sys::fs::OF_Text);
      if (!ec) {
        out << text;
        out.close();
        ec = out.error();
        out.clear_error();
      }
    }
    if (ec)
      warnOnce("cannot write stage dumps into TILEJIT_DUMP_DIR '" + dumpDir + "': " +
               ec.message());
  }

  /// Runs the pipeline. With `stopAt` set, returns that stage's text in
  /// `stageText` and stops there; otherwise JITs the kernel, and fills
  /// `publish` (when given and the disk tier writes) with its disk entry.
  llvm::Expected<std::shared_ptr<const CompiledKernel>>
  compile(const TilingKey &key, const KernelSource &source,
          const Specialization &spec, unsigned optLevel,
          std::optional<DumpStage> stopAt, std::string *stageText,
          std::optional<DiskEntry> *publish = nullptr);
};

llvm::Expected<Specialization> Compiler::Impl::bind(const KernelSource &source,
                                                    const std::string &kernel,
                                                    const Specialization &spec) {
  auto parsed = source.parsed();
  if (!parsed)
    return parsed.takeError();
  const dsl::ParsedFile *file = parsed->get();
  // Binding reports nothing on success, so the source text is copied into a
  // diagnostic engine only to render a failure (its first buffer has the id
  // the parse gave the file's locations).
  DiagnosticEngine quiet;
  if (auto bound = dsl::bindSpecialization(*file, kernel, spec, quiet))
    return std::move(*bound);
  DiagnosticEngine diags;
  diags.addBuffer(source.name(), source.text());
  [[maybe_unused]] auto again = dsl::bindSpecialization(*file, kernel, spec, diags);
  assert(!again && diags.hasErrors() && "binding is deterministic");
  return makeError(ErrorKind::Compile, diags.renderAll());
}

llvm::Expected<std::shared_ptr<const CompiledKernel>>
Compiler::Impl::compile(const TilingKey &key, const KernelSource &source,
                        const Specialization &spec, unsigned optLevel,
                        std::optional<DumpStage> stopAt,
                        std::string *stageText,
                        std::optional<DiskEntry> *publish) {
  if (emitOnly && !stopAt)
    return llvm::createStringError("this CPU cannot run " + target.levelName +
                                   " code; this compiler only prints it");
  StageTimes times;
  auto start = Clock::now();
  auto wants = [&](DumpStage s) {
    return (stopAt && *stopAt == s) || (dumpMask & static_cast<unsigned>(s));
  };
  auto emitStage = [&](DumpStage s, const std::string &text) {
    if (stopAt && *stopAt == s)
      *stageText = text;
    else
      dump(key, s, text);
    return stopAt && *stopAt == s;
  };
  auto diagError = [](DiagnosticEngine &d) {
    return makeError(ErrorKind::Compile, d.renderAll());
  };

  // The source was parsed when the key was made (KernelSource::parsed); the
  // diagnostics' first buffer has the id that parse gave the locations.
  DiagnosticEngine diags;
  diags.addBuffer(source.name(), source.text());
  auto t = Clock::now();
  auto parsed = source.parsed();
  if (!parsed)
    return parsed.takeError();
  times.parse = msSince(t);
  if (wants(DumpStage::Ast) &&
      emitStage(DumpStage::Ast, dsl::printAST(**parsed)))
    return nullptr;

  t = Clock::now();
  // `spec` is the key's bound specialisation: the front end uses it as it
  // is (no second binding).
  auto kernel = dsl::lowerKernel(**parsed, key.fields().kernel, spec, diags);
  if (!kernel)
    return diagError(diags);
  kernel->debug = key.fields().debug;
  times.sema = msSince(t);
  // Tile IR stages carry each op's source location (`loc(line:col)`), as the
  // LLVM IR (!dbg) and the assembly (.loc) do.
  ir::PrintOptions located;
  located.printLocations = true;
  if (wants(DumpStage::Tile) && emitStage(DumpStage::Tile, ir::print(*kernel, located)))
    return nullptr;

  t = Clock::now();
  passes::PipelineOptions pipeline;
  pipeline.target = target.info; // the passes decide for the target codegen lowers for
  if (!passes::runDefaultPipeline(*kernel, diags, pipeline))
    return diagError(diags);
  times.tilePasses = msSince(t);
  if (wants(DumpStage::TileOpt) &&
      emitStage(DumpStage::TileOpt, ir::print(*kernel, located)))
    return nullptr;

  t = Clock::now();
  auto context = std::make_unique<llvm::LLVMContext>();
  // Each kernel links into a JITDylib of its own: the key's stem is enough.
  std::string stem = key.symbolStem();
  auto module =
      codegen::lowerToLLVM(*kernel, *context, target.info, stem, diags);
  if (!module)
    return diagError(diags);
  times.codegen = msSince(t);
  if (wants(DumpStage::Llvm) && emitStage(DumpStage::Llvm, moduleText(*module)))
    return nullptr;

  auto tm = jit->makeTargetMachine();
  if (!tm)
    return tm.takeError();
  module->setDataLayout((*tm)->createDataLayout());
  // The `passes` dump: each LLVM pass's time, optimisation then machine code.
  const bool timesPasses = !stopAt && (dumpMask & static_cast<unsigned>(DumpStage::Passes));
  std::string passText;
  llvm::raw_string_ostream passes(passText);
  t = Clock::now();
  codegen::optimizeModule(*module, **tm, optLevel, timesPasses ? &passes : nullptr);
  times.llvmOpt = msSince(t);
  if (wants(DumpStage::LlvmOpt) &&
      emitStage(DumpStage::LlvmOpt, moduleText(*module)))
    return nullptr;
  if (wants(DumpStage::Asm)) {
    auto clone = llvm::CloneModule(*module);
    if (emitStage(DumpStage::Asm, emitAssembly(*clone, **tm)))
      return nullptr;
  }

  t = Clock::now();
  std::vector<rt::ParamSig> signature = signatureOf(*kernel);
  std::vector<std::string> messages;
  for (const ir::ShapeConstraint &c : kernel->constraints)
    messages.push_back(c.message);
  // The disk entry keeps the optimised IR for dumps on hits; print it
  // before code generation changes the module.
  DiskEntry entry;
  const bool stores = publish && disk.mode() == DiskCache::Mode::ReadWrite;
  if (stores) {
    entry.tileIR = ir::print(*kernel, located);
    entry.llvmIR = moduleText(*module);
  }
  // The source locations served the dumps above (`.loc` in `asm`); nothing
  // reads DWARF from JIT code (no debugger registration, profilers use
  // TILEJIT_PERF_MAP), and tracking it costs the code generator time: the
  // object is built without it (LLVM emits the same instructions).
  llvm::StripDebugInfo(*module);
  auto object = timesPasses ? emitObjectTimingPasses(*module, **tm, passes)
                            : emitObject(*module, **tm);
  if (!object)
    return object.takeError();
  auto symbols = jit->addObject(*object, stem, key.str());
  if (!symbols)
    return symbols.takeError();
  times.machineCode = msSince(t);
  times.total = msSince(start);
  if (timesPasses) {
    passes << llvm::formatv("\n=== stages (ms) ===\nparse {0:F3}\nsema {1:F3}\n"
                            "tile passes {2:F3}\ncodegen {3:F3}\nllvm opt {4:F3}\n"
                            "machine code and link {5:F3}\ntotal {6:F3}\n",
                            times.parse, times.sema, times.tilePasses, times.codegen,
                            times.llvmOpt, times.machineCode, times.total);
    dump(key, DumpStage::Passes, passText);
  }
  if (stores) {
    entry.stem = stem;
    entry.object = std::move(*object);
    entry.constraints = messages;
    entry.signature = formatSignature(signature);
    entry.times = formatTimes(times);
    *publish = std::move(entry);
  }
  return std::make_shared<const CompiledKernel>(
      key, std::move(symbols->code), symbols->program, symbols->grid, symbols->scratchBytes,
      times, std::move(messages), std::move(signature));
}

std::shared_ptr<const CompiledKernel> Compiler::Impl::loadFromDisk(const TilingKey &key,
                                                                   std::string &warning) {
  if (disk.mode() == DiskCache::Mode::Off)
    return nullptr;
  // An entry holds the optimised Tile IR and LLVM IR; dumps of any other
  // stage need a compile.
  const unsigned stored =
      static_cast<unsigned>(DumpStage::TileOpt) | static_cast<unsigned>(DumpStage::LlvmOpt);
  if (dumpMask & ~stored)
    return nullptr;
  auto start = Clock::now();
  // A directory replaced since it was opened is said once; entries still
  // come from the one opened.
  if (llvm::Error replaced = disk.checkDirectory())
    warning = llvm::toString(std::move(replaced));
  llvm::Expected<std::optional<DiskEntry>> loaded = disk.load(key);
  if (!loaded) {
    warning += (warning.empty() ? "" : "; ") + llvm::toString(loaded.takeError()) +
               "; rebuilding it";
    return nullptr;
  }
  std::optional<DiskEntry> e = std::move(*loaded);
  if (!e)
    return nullptr;
  auto ignored = [&](const std::string &why) {
    warning += (warning.empty() ? "" : "; ") + ("cache entry " + disk.pathOf(key) +
                                                " ignored: " + why + "; rebuilding it");
    return nullptr;
  };
  auto symbols = jit->addObject(e->object, e->stem, key.str());
  if (!symbols)
    return ignored("it does not link (" + llvm::toString(symbols.takeError()) + ")");
  auto signature = parseSignature(e->signature);
  if (!signature)
    return ignored("its signature does not parse");
  StageTimes times = parseTimes(e->times);
  times.total = msSince(start); // this request's cost: load and link
  if (dumpMask & static_cast<unsigned>(DumpStage::TileOpt))
    dump(key, DumpStage::TileOpt, e->tileIR);
  if (dumpMask & static_cast<unsigned>(DumpStage::LlvmOpt))
    dump(key, DumpStage::LlvmOpt, e->llvmIR);
  return std::make_shared<const CompiledKernel>(key, std::move(symbols->code), symbols->program,
                                                symbols->grid, symbols->scratchBytes, times,
                                                std::move(e->constraints),
                                                std::move(*signature));
}

TilingKey Compiler::Impl::runtimeKey(const std::string &name) const {
  TilingKey::Fields f;
  f.kernel = name;
  f.level = target.levelName;
  f.cpu = target.info.cpu;
  f.features = target.info.features;
  f.tilejitVersion = TILEJIT_VERSION "+" TILEJIT_COMPILER_FINGERPRINT;
  f.llvmVersion = TILEJIT_LLVM_VERSION;
  return TilingKey(std::move(f));
}

KernelJIT::RuntimeObjects Compiler::Impl::runtimeObjects() {
  KernelJIT::RuntimeObjects objects;
  // As a kernel's entry: an unusable one is said once and rebuilt, a store
  // that fails is said once and the object is used anyway.
  objects.load = [this](const std::string &name) -> std::optional<std::vector<char>> {
    llvm::Expected<std::optional<DiskEntry>> loaded = disk.load(runtimeKey(name));
    if (!loaded) {
      warnOnce(llvm::toString(loaded.takeError()) + "; rebuilding it");
      return std::nullopt;
    }
    if (!*loaded)
      return std::nullopt;
    return std::move((*loaded)->object);
  };
  objects.store = [this](const std::string &name, llvm::ArrayRef<char> object) {
    if (disk.mode() != DiskCache::Mode::ReadWrite)
      return;
    DiskEntry entry;
    entry.stem = name;
    entry.object.assign(object.begin(), object.end());
    if (llvm::Error stored = disk.store(runtimeKey(name), entry))
      warnOnce(llvm::toString(std::move(stored)));
  };
  return objects;
}

Compiler::Compiler(TargetLevel) : impl_(std::make_unique<Impl>()) {
  impl_->disk = DiskCache::fromEnvironment(
      [this](const std::string &warning) { impl_->warnOnce(warning); });
}
Compiler::~Compiler() = default;

llvm::Expected<Compiler &> Compiler::instance(TargetLevel level) {
  static std::once_flag once[3];
  static std::unique_ptr<Compiler> compilers[3];
  static std::string errors[3];
  unsigned i = static_cast<unsigned>(level);
  std::call_once(once[i], [&] {
    auto target = chooseTarget(level);
    if (!target) {
      errors[i] = llvm::toString(target.takeError());
      return;
    }
    std::unique_ptr<Compiler> c(new Compiler(level));
    c->impl_->target = *target;
    auto jit = KernelJIT::create(*target, c->impl_->runtimeObjects());
    if (!jit) {
      errors[i] = llvm::toString(jit.takeError());
      return;
    }
    c->impl_->jit = std::move(*jit);
    compilers[i] = std::move(c);
  });
  if (!compilers[i])
    return llvm::createStringError(errors[i]);
  return *compilers[i];
}

llvm::Expected<Compiler &> Compiler::forEmission(TargetLevel level) {
  if (level == TargetLevel::Host || hostSupports(level))
    return instance(level);
  static std::once_flag once[3];
  static std::unique_ptr<Compiler> compilers[3];
  static std::string errors[3];
  unsigned i = static_cast<unsigned>(level);
  std::call_once(once[i], [&] {
    auto target = chooseTarget(level, /*emitOnly=*/true);
    if (!target) {
      errors[i] = llvm::toString(target.takeError());
      return;
    }
    auto jit = KernelJIT::create(*target);
    if (!jit) {
      errors[i] = llvm::toString(jit.takeError());
      return;
    }
    std::unique_ptr<Compiler> c(new Compiler(level));
    c->impl_->target = *target;
    c->impl_->jit = std::move(*jit);
    c->impl_->emitOnly = true;
    c->impl_->disk = DiskCache(); // prints code; never loads or stores any
    compilers[i] = std::move(c);
  });
  if (!compilers[i])
    return llvm::createStringError(errors[i]);
  return *compilers[i];
}

const std::string &Compiler::targetName() const {
  return impl_->target.levelName;
}
unsigned Compiler::vectorLanes() const { return impl_->target.info.f32Lanes(); }
bool Compiler::hasBf16Dot() const { return impl_->target.info.hasBf16Dot; }

bool Compiler::hasFastBf16Products() const {
  return impl_->target.info.hasAmxBf16 || impl_->target.info.bf16DotFast;
}
bool Compiler::prefetchesIntoL2(int64_t bytes) const {
  return impl_->target.info.prefetchesIntoL2(bytes);
}

llvm::Expected<Specialization> Compiler::specialize(const KernelSource &source,
                                                    const std::string &kernel,
                                                    const Specialization &spec) const {
  return impl_->bind(source, kernel, spec);
}

llvm::Expected<std::shared_ptr<const TilingKey>>
Compiler::Impl::keyFor(const KernelSource &source, const std::string &kernel,
                       const Specialization &spec, const CompileOptions &options) {
  const bool debug = options.debug.value_or(Options::process().debug());
  uint64_t h = (source.hash() ^ spec.hash()) * 0x9E3779B97F4A7C15ull;
  h = (h ^ hashBytes(kernel.data(), kernel.size())) * 0x100000001B3ull;
  h = (h ^ (options.optLevel * 2 + debug)) * 0x100000001B3ull;
  auto matches = [&](const MadeKey &m) {
    return m.sourceHash == source.hash() && m.optLevel == options.optLevel &&
           m.debug == debug && m.kernel == kernel && m.spec == spec;
  };
  {
    std::shared_lock lock(madeMutex);
    auto [lo, hi] = made.equal_range(h);
    for (auto it = lo; it != hi; ++it)
      if (matches(it->second))
        return it->second.key;
  }
  // One specialisation, one key: the parameters are bound to the kernel's
  // declaration (defaults applied, values typed and canonical) before
  // anything is hashed, and a bad one is an error here rather than after
  // keying. Failures are not kept.
  auto bound = bind(source, kernel, spec);
  if (!bound)
    return bound.takeError();
  TilingKey::Fields f;
  f.kernel = kernel;
  f.sourceHash = source.hash();
  f.params = std::move(*bound);
  f.level = target.levelName;
  f.cpu = target.info.cpu;
  f.features = target.info.features;
  f.l1dBytes = target.info.l1dBytes;
  // The release and the compiler's fingerprint: a rebuilt compiler never
  // serves a kernel compiled by another build of itself from the disk cache.
  f.tilejitVersion = TILEJIT_VERSION "+" TILEJIT_COMPILER_FINGERPRINT;
  f.llvmVersion = TILEJIT_LLVM_VERSION;
  f.optLevel = options.optLevel;
  f.debug = debug;
  auto key = std::make_shared<const TilingKey>(std::move(f));
  std::unique_lock lock(madeMutex);
  auto [lo, hi] = made.equal_range(h);
  for (auto it = lo; it != hi; ++it)
    if (matches(it->second))
      return it->second.key;
  if (made.size() >= kMaxMadeKeys)
    made.clear();
  made.emplace(h, MadeKey{source.hash(), kernel, spec, options.optLevel, debug, key});
  return key;
}

llvm::Expected<TilingKey>
Compiler::makeKey(const KernelSource &source, const std::string &kernel,
                  const Specialization &spec,
                  const CompileOptions &options) const {
  auto key = impl_->keyFor(source, kernel, spec, options);
  if (!key)
    return key.takeError();
  return **key;
}

llvm::Expected<KernelRef> Compiler::get(const KernelSource &source,
                                        const std::string &kernel,
                                        const Specialization &spec,
                                        const CompileOptions &options) {
  auto key = impl_->keyFor(source, kernel, spec, options);
  if (!key)
    return key.takeError();
  return get(**key, source);
}

llvm::Expected<KernelRef> Compiler::getPooled(const KernelSource &source,
                                              const std::string &kernel,
                                              const Specialization &spec,
                                              const CompileOptions &options) {
  auto key = impl_->keyFor(source, kernel, spec, options);
  if (!key)
    return key.takeError();
  const std::shared_ptr<const TilingKey> k = std::move(*key);
  bool entered;
  {
    Impl::Shard &shard = impl_->shardOf(*k);
    std::shared_lock lock(shard.mutex);
    entered = shard.map.count(*k) != 0;
  }
  // A pool thread never waits on the pool (it could be the one that must run).
  if (entered || CompilePool::onPoolThread())
    return get(*k, source);
  std::promise<llvm::Expected<KernelRef>> done;
  auto result = done.get_future();
  CompilePool::process().submit([&, k] { done.set_value(get(*k, source)); });
  return result.get();
}

llvm::Expected<KernelRef> Compiler::get(const TilingKey &key,
                                        const KernelSource &source) {
  impl_->record(key, source);
  Impl::Shard &shard = impl_->shardOf(key);
  // A hit reads the tier's clock and writes its entry only when the clock
  // has moved since the entry's last use: repeated hits write nothing shared.
  const uint64_t now = impl_->clock.load(std::memory_order_relaxed);
  std::shared_ptr<Slot> slot;
  {
    std::shared_lock lock(shard.mutex);
    auto it = shard.map.find(key);
    if (it != shard.map.end())
      slot = it->second;
  }
  bool owner = false;
  std::promise<std::shared_ptr<const CompiledKernel>> promise;
  if (!slot) {
    std::unique_lock lock(shard.mutex);
    auto it = shard.map.find(key);
    if (it != shard.map.end()) {
      slot = it->second;
    } else {
      slot = std::make_shared<Slot>();
      slot->future = promise.get_future().share();
      shard.map.emplace(key, slot);
      owner = true;
    }
  }
  if (slot->lastUse.load(std::memory_order_relaxed) != now)
    slot->lastUse.store(now, std::memory_order_relaxed);
  if (!owner) {
    // The kernel holds its code: an eviction after this line frees nothing
    // this caller uses.
    auto kernel = slot->future.get();
    if (!kernel)
      return makeError(slot->error->first, slot->error->second);
    impl_->memoryHits.fetch_add(1, std::memory_order_relaxed);
    return KernelRef{std::move(kernel), false};
  }
  // A fault of the disk tier (an unusable entry, a full disk, a replaced
  // directory) is one warning for this call: why the entry was not used and,
  // if so, why its replacement could not be stored. The call itself goes on.
  std::string diskWarning;
  if (auto fromDisk = impl_->loadFromDisk(key, diskWarning)) {
    if (!diskWarning.empty())
      impl_->warnOnce(diskWarning);
    impl_->diskHits.fetch_add(1, std::memory_order_relaxed);
    promise.set_value(fromDisk);
    impl_->admit(key, slot, fromDisk->codeBytes());
    return KernelRef{std::move(fromDisk), false};
  }
  // The key's parameters are the bound specialisation (typed, sorted).
  std::optional<DiskEntry> entry;
  auto compiled = impl_->compile(key, source, key.fields().params,
                                 key.fields().optLevel, std::nullopt, nullptr, &entry);
  if (compiled && entry) {
    if (llvm::Error stored = impl_->disk.store(key, *entry))
      diskWarning += (diskWarning.empty() ? "" : "; then ") + llvm::toString(std::move(stored));
  }
  if (!diskWarning.empty())
    impl_->warnOnce(diskWarning);
  if (!compiled) {
    *slot->error = takeKindedMessage(compiled.takeError());
    promise.set_value(nullptr);
    {
      std::unique_lock lock(shard.mutex);
      impl_->dropLocked(shard, key, slot.get()); // failures are not cached
    }
    return makeError(slot->error->first, slot->error->second);
  }
  impl_->compiles.fetch_add(1, std::memory_order_relaxed);
  promise.set_value(*compiled);
  impl_->admit(key, slot, (*compiled)->codeBytes());
  return KernelRef{*compiled, true};
}

void Compiler::Impl::dropLocked(Shard &shard, const TilingKey &key, const Slot *slot) {
  auto it = shard.map.find(key);
  if (it == shard.map.end() || it->second.get() != slot)
    return;
  if (slot->counted)
    cachedBytes.fetch_sub(slot->bytes, std::memory_order_relaxed);
  shard.map.erase(it);
}

void Compiler::Impl::admit(const TilingKey &key, const std::shared_ptr<Slot> &slot,
                           uint64_t bytes) {
  {
    Shard &shard = shardOf(key);
    std::unique_lock lock(shard.mutex);
    auto it = shard.map.find(key);
    if (it == shard.map.end() || it->second != slot)
      return; // cleared while it compiled: not in the tier
    slot->bytes = bytes;
    slot->counted = true;
    // Each admission ticks the clock: entries used since share its tick.
    slot->lastUse.store(clock.fetch_add(1, std::memory_order_relaxed) + 1,
                        std::memory_order_relaxed);
    cachedBytes.fetch_add(bytes, std::memory_order_relaxed);
  }
  if (cachedBytes.load(std::memory_order_relaxed) > maxBytes.load(std::memory_order_relaxed))
    evict();
}

void Compiler::Impl::evict() {
  std::lock_guard scan(evictMutex);
  const uint64_t limit = maxBytes.load(std::memory_order_relaxed);
  if (cachedBytes.load(std::memory_order_relaxed) <= limit)
    return;
  // Down to seven eighths of the bound, so that a stream of new keys scans
  // the entries once per many admissions rather than at each.
  const uint64_t bound = limit - limit / 8;
  // The counted entries, oldest use first. A kernel evicted here stays
  // alive (and its code mapped) for whoever holds it; the tier just stops
  // serving it.
  struct Candidate {
    uint64_t lastUse;
    size_t shard;
    TilingKey key;
    std::shared_ptr<Slot> slot;
  };
  std::vector<Candidate> all;
  for (size_t i = 0; i < kShards; ++i) {
    std::shared_lock lock(shards[i].mutex);
    for (const auto &[key, slot] : shards[i].map)
      if (slot->counted)
        all.push_back({slot->lastUse.load(std::memory_order_relaxed), i, key, slot});
  }
  std::sort(all.begin(), all.end(),
            [](const Candidate &a, const Candidate &b) { return a.lastUse < b.lastUse; });
  for (const Candidate &c : all) {
    if (cachedBytes.load(std::memory_order_relaxed) <= bound)
      break;
    std::unique_lock lock(shards[c.shard].mutex);
    auto it = shards[c.shard].map.find(c.key);
    if (it == shards[c.shard].map.end() || it->second != c.slot)
      continue;
    dropLocked(shards[c.shard], c.key, c.slot.get());
    evictions.fetch_add(1, std::memory_order_relaxed);
  }
}

llvm::Expected<std::string> Compiler::emit(const KernelSource &source,
                                           const std::string &kernel,
                                           const Specialization &spec,
                                           DumpStage stage,
                                           const CompileOptions &options) {
  auto key = makeKey(source, kernel, spec, options);
  if (!key)
    return key.takeError();
  std::string text;
  auto r = impl_->compile(*key, source, key->fields().params, options.optLevel, stage, &text);
  if (!r)
    return r.takeError();
  return text;
}

CacheStats Compiler::stats() const {
  CacheStats s;
  for (const auto &shard : impl_->shards) {
    std::shared_lock lock(shard.mutex);
    s.entries += shard.map.size();
  }
  s.memoryHits = impl_->memoryHits.load();
  s.diskHits = impl_->diskHits.load();
  s.compiles = impl_->compiles.load();
  s.memoryBytes = impl_->cachedBytes.load();
  s.memoryMaxBytes = impl_->maxBytes.load();
  s.evictions = impl_->evictions.load();
  s.mappedBytes = impl_->jit ? impl_->jit->mappedBytes() : 0;
  return s;
}

const DiskCache &Compiler::diskCache() const { return impl_->disk; }

void Compiler::startRecording() { impl_->recording = true; }

std::vector<Compiler::Request> Compiler::recordedRequests() const {
  std::lock_guard lock(impl_->recordMutex);
  return {impl_->recorded.begin(), impl_->recorded.end()};
}
void Compiler::setDiskCache(DiskCache disk) { impl_->disk = std::move(disk); }

void Compiler::clearMemoryCache() {
  for (auto &shard : impl_->shards) {
    // Kernels are freed outside the lock (their code leaves the JIT).
    std::unordered_map<TilingKey, std::shared_ptr<Slot>> dropped;
    std::unique_lock lock(shard.mutex);
    for (const auto &[key, slot] : shard.map)
      if (slot->counted)
        impl_->cachedBytes.fetch_sub(slot->bytes, std::memory_order_relaxed);
    dropped.swap(shard.map);
    lock.unlock();
  }
}

void Compiler::setMemoryCacheMaxBytes(uint64_t bytes) {
  impl_->maxBytes.store(bytes);
  impl_->evict();
}

} // namespace tilejit::jit
