//===- tilejit.cpp - The tilejit command line -----------------------------===//
//
// tilejit compile FILE.tile --kernel NAME --set K=V ... [--emit STAGE]
// tilejit dump [NAME] [--stage STAGE]
// tilejit cache stats | cache ls | cache clear | cache prune
// tilejit warm MANIFEST [--threads N]; tilejit demo [--record MANIFEST]
// tilejit bench [--filter RE] [--report DIR] [--quick] ...
// tilejit --version
//
// Every flag means one thing in every verb:
//   --json         the command's result is one JSON document (a flag, never
//                  a path); with it, a failure is JSON too:
//                  {"error": {"message": ..., "status": N}} on stdout, N
//                  being the (nonzero) exit status.
//   -o, --output   the result goes to this file instead of stdout (JSON
//                  with --json, else text); failures still go to stdout
//                  (--json) or stderr, so the file only ever holds a result
//                  (a command that fails before it has one leaves no file).
// Progress lines and warnings are text on stderr.
//
//===----------------------------------------------------------------------===//
#include "jit/CompilePool.h"
#include "jit/Compiler.h"
#include "jit/DiskCache.h"
#include "jit/KernelJIT.h"
#include "ops/Embedded.h"
#include "ops/Workloads.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/Error.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ostream.h>
#include <nlohmann/json.hpp>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <system_error>
#include <future>
#include <thread>
#include <ctime>
#include <iostream>

#include "BuildInfo.h"           // generated: the git commit
#include "Driver.h"              // bench/suite: `tilejit bench`
#include "CompilerFingerprint.h" // generated: a hash of the compiler's sources

using namespace tilejit;

namespace {

/// Set when the command line asks for --json: errors are JSON on stdout.
bool jsonErrors = false;

/// Where a command's result goes: stdout, or the file -o names.
std::ostream *out = &std::cout;

/// Writes `doc`, the command's result with --json.
void printJson(const nlohmann::json &doc) { *out << doc.dump(2) << "\n"; }

/// Reports a failure and returns the exit status `status`.
int fail(std::string msg, int status = 1) {
  if (jsonErrors) {
    while (!msg.empty() && msg.back() == '\n')
      msg.pop_back();
    nlohmann::json out = {{"error", {{"message", msg}, {"status", status}}}};
    std::cout << out.dump(2) << "\n";
    return status;
  }
  std::cerr << "tilejit: error: " << msg << "\n";
  return status;
}

/// A failure whose text is already rendered (DSL diagnostics:
/// file:line:col: error: ..., with their source lines).
int failRendered(const std::string &text) {
  if (jsonErrors)
    return fail(text);
  std::cerr << text;
  return 1;
}

/// `tilejit --version`: the build and the target the JIT compiles for.
std::string versionText() {
  std::string out = fmt::format("tilejit {}\ncommit       {}\nfingerprint  {}\nLLVM         {}\n",
                                TILEJIT_VERSION, TILEJIT_GIT_COMMIT,
                                TILEJIT_COMPILER_FINGERPRINT, LLVM_VERSION_STRING);
  auto target = jit::chooseTarget(jit::TargetLevel::Host);
  if (!target)
    return out + "target       unavailable: " + llvm::toString(target.takeError());
  const codegen::TargetInfo &info = target->info;
  std::vector<llvm::StringRef> features;
  llvm::SmallVector<llvm::StringRef, 64> all;
  llvm::StringRef(info.features).split(all, ',', -1, /*KeepEmpty=*/false);
  for (llvm::StringRef f : all)
    if (f.consume_front("+"))
      features.push_back(f);
  out += fmt::format("target       {} ({}-bit vectors)\ntriple       {}\ncpu          {}\n"
                     "l1d bytes    {}\nfeatures     {}",
                     target->levelName, info.vectorBits, info.triple, info.cpu,
                     info.l1dBytes, fmt::join(features, " "));
  return out;
}

/// A specialisation value as the command line and manifests write it.
template <typename V> std::string specText(const V &v) {
  if constexpr (requires { v.str(); })
    return v.str();
  else
    return std::string(v);
}

const std::vector<std::string> kStages = {"ast",  "tile",     "tile-opt",
                                          "llvm", "llvm-opt", "asm"};

jit::DumpStage stageOf(const std::string &s) {
  if (s == "ast")
    return jit::DumpStage::Ast;
  if (s == "tile")
    return jit::DumpStage::Tile;
  if (s == "tile-opt")
    return jit::DumpStage::TileOpt;
  if (s == "llvm")
    return jit::DumpStage::Llvm;
  if (s == "llvm-opt")
    return jit::DumpStage::LlvmOpt;
  return jit::DumpStage::Asm;
}

/// The compiler for `--target`; one that only prints code (`--emit`, `dump`)
/// may target an instruction set this CPU lacks.
llvm::Expected<jit::Compiler &> compilerFor(const std::string &target,
                                            bool emitOnly) {
  jit::TargetLevel level = target == "avx2"     ? jit::TargetLevel::Avx2
                           : target == "avx512" ? jit::TargetLevel::Avx512
                                                : jit::TargetLevel::Host;
  return emitOnly ? jit::Compiler::forEmission(level)
                  : jit::Compiler::instance(level);
}

bool parseSets(const std::vector<std::string> &sets, jit::Specialization &spec,
               std::string &error) {
  for (const std::string &s : sets) {
    auto eq = s.find('=');
    if (eq == std::string::npos || eq == 0) {
      error = "--set expects NAME=VALUE, got '" + s + "'";
      return false;
    }
    spec.emplace_back(s.substr(0, eq), s.substr(eq + 1));
  }
  return true;
}

nlohmann::json timesJson(const jit::StageTimes &t) {
  return {{"parse_ms", t.parse},
          {"sema_ms", t.sema},
          {"tile_passes_ms", t.tilePasses},
          {"codegen_ms", t.codegen},
          {"llvm_opt_ms", t.llvmOpt},
          {"machine_code_ms", t.machineCode},
          {"total_ms", t.total}};
}

int compileCommand(const std::string &file, const std::string &kernel,
                   const std::vector<std::string> &sets,
                   const std::string &emit, bool json,
                   const std::string &target) {
  auto source = jit::KernelSource::fromFile(file);
  if (!source)
    return fail(llvm::toString(source.takeError()));
  jit::Specialization spec;
  std::string error;
  if (!parseSets(sets, spec, error))
    return fail(error);
  auto compiler = compilerFor(target, !emit.empty());
  if (!compiler)
    return fail(llvm::toString(compiler.takeError()));
  if (!emit.empty()) {
    auto text = compiler->emit(*source, kernel, spec, stageOf(emit));
    if (!text)
      return failRendered(llvm::toString(text.takeError()));
    if (json)
      printJson({{"kernel", kernel}, {"stage", emit}, {"text", *text}});
    else
      *out << *text;
    return 0;
  }
  auto k = compiler->get(*source, kernel, spec);
  if (!k)
    return failRendered(llvm::toString(k.takeError()));
  const jit::StageTimes &t = k->kernel->times();
  if (json) {
    nlohmann::json doc = {
        {"tiling_key", k->kernel->key().str()},
        {"key_hash", fmt::format("{:016x}", k->kernel->key().hash())},
        {"from_cache", !k->compiled},
        {"scratch_bytes", k->kernel->scratchBytes()},
        {"times", timesJson(t)}};
    printJson(doc);
    return 0;
  }
  fmt::print(*out, "tiling key   {}\n", k->kernel->key().str());
  fmt::print(*out, "from cache   {}\n", k->compiled ? "no" : "yes");
  fmt::print(*out, "scratch      {} bytes per program\n", k->kernel->scratchBytes());
  fmt::print(*out, "compile      parse {:.2f} ms, sema {:.2f} ms, tile passes {:.2f} "
             "ms, codegen "
             "{:.2f} ms, llvm opt {:.2f} ms, machine code {:.2f} ms, total "
             "{:.2f} ms\n",
             t.parse, t.sema, t.tilePasses, t.codegen, t.llvmOpt, t.machineCode,
             t.total);
  return 0;
}

int dumpCommand(const std::string &name, const std::string &stage,
                const std::string &target, bool json) {
  const auto &kernels = ops::builtinKernels();
  if (name.empty()) {
    if (json) {
      nlohmann::json all = nlohmann::json::array();
      for (const auto &k : kernels) {
        nlohmann::json spec = nlohmann::json::object();
        for (const auto &[n, v] : k.spec)
          spec[n] = specText(v);
        all.push_back({{"name", k.name},
                       {"source", k.sourcePath},
                       {"kernel", k.kernel},
                       {"spec", spec}});
      }
      printJson(all);
      return 0;
    }
    fmt::print(*out, "built-in kernels (tilejit dump NAME --stage {}):\n",
               fmt::join(kStages, "|"));
    for (const auto &k : kernels) {
      std::string spec;
      for (const auto &[n, v] : k.spec)
        spec += (spec.empty() ? "" : ",") + n + "=" + specText(v);
      fmt::print(*out, "  {:<12} {} [{}]\n", k.name, k.sourcePath, spec);
    }
    return 0;
  }
  for (const auto &k : kernels) {
    if (k.name != name)
      continue;
    auto compiler = compilerFor(target, /*emitOnly=*/true);
    if (!compiler)
      return fail(llvm::toString(compiler.takeError()));
    auto text = compiler->emit(ops::embeddedKernel(k.sourcePath), k.kernel,
                               k.spec, stageOf(stage));
    if (!text)
      return failRendered(llvm::toString(text.takeError()));
    if (json)
      printJson({{"name", k.name}, {"stage", stage}, {"text", *text}});
    else
      *out << *text;
    return 0;
  }
  return fail("no built-in kernel named '" + name +
              "' (run `tilejit dump` for the list)");
}

/// Compiles every kernel a manifest (JSON lines: source, kernel, spec) lists,
/// on `threads` threads; sources are embedded paths or files.
int warmCommand(const std::string &path, unsigned threads, bool json) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    return fail("cannot read the manifest " + path + ": " +
                (std::filesystem::is_directory(path, ec) ? "it is a directory"
                                                         : "no such regular file"));
  std::ifstream in(path);
  if (!in)
    return fail("cannot read the manifest " + path);
  struct Item {
    std::string source, kernel;
    jit::Specialization spec;
  };
  std::vector<Item> items;
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    if (line.find_first_not_of(" \t\r") == std::string::npos)
      continue;
    auto j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.is_object() || !j.contains("source") || !j.contains("kernel") ||
        !j["source"].is_string() || !j["kernel"].is_string())
      return fail(fmt::format("{}:{}: expected {{\"source\": ..., \"kernel\": ..., "
                              "\"spec\": {{...}}}}",
                              path, n));
    Item it{j["source"], j["kernel"], {}};
    if (j.contains("spec") && j["spec"].is_object())
      for (auto &[k, v] : j["spec"].items())
        it.spec.emplace_back(k, v.is_string() ? v.get<std::string>() : v.dump());
    items.push_back(std::move(it));
  }
  // Sources: embedded ones by path, else files (read once each).
  std::map<std::string, std::unique_ptr<jit::KernelSource>> files;
  for (const Item &it : items) {
    if (!ops::embeddedSource(it.source).empty() || files.count(it.source))
      continue;
    auto src = jit::KernelSource::fromFile(it.source);
    if (!src)
      return fail(llvm::toString(src.takeError()));
    files[it.source] = std::make_unique<jit::KernelSource>(std::move(*src));
  }
  auto sourceOf = [&](const std::string &name) -> const jit::KernelSource & {
    auto f = files.find(name);
    return f != files.end() ? *f->second : ops::embeddedKernel(name);
  };
  jit::Compiler &c = jit::Compiler::instance();
  auto start = std::chrono::steady_clock::now();
  jit::CacheStats before = c.stats();
  // The process's compile pool runs the compiles (--threads sizes it).
  jit::CompilePool &pool = jit::CompilePool::process();
  if (threads)
    if (llvm::Error err = pool.setThreads(threads))
      return fail(llvm::toString(std::move(err)));
  std::atomic<size_t> failed{0};
  std::mutex errMutex;
  nlohmann::json errors = nlohmann::json::array();
  std::vector<std::future<void>> done;
  for (const Item &item : items) {
    auto task = std::make_shared<std::packaged_task<void()>>([&, item] {
      auto k = c.get(sourceOf(item.source), item.kernel, item.spec);
      if (k)
        return;
      failed.fetch_add(1);
      std::string message = llvm::toString(k.takeError());
      std::lock_guard lock(errMutex);
      errors.push_back(
          {{"source", item.source}, {"kernel", item.kernel}, {"message", message}});
      if (!json)
        std::cerr << item.source << " " << item.kernel << ": " << message << "\n";
    });
    done.push_back(task->get_future());
    pool.submit([task] { (*task)(); });
  }
  for (auto &d : done)
    d.wait();
  jit::CacheStats after = c.stats();
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                  .count();
  if (json)
    printJson({{"kernels", items.size()},
               {"ms", ms},
               {"compiled", after.compiles - before.compiles},
               {"from_disk", after.diskHits - before.diskHits},
               {"failed", failed.load()},
               {"errors", errors}});
  else
    fmt::print(*out, "warmed {} kernels in {:.0f} ms: {} compiled, {} from disk, {} failed\n",
               items.size(), ms, after.compiles - before.compiles,
               after.diskHits - before.diskHits, failed.load());
  return failed ? 1 : 0;
}

int demoCommand(bool json) {
  nlohmann::json all = nlohmann::json::array();
  bool ok = true;
  if (!json)
    fmt::print(*out, "{:<32} {:>8} {:>10} {:>11} {:>6} {:>13} {:>13} {:>7}\n",
               "workload", "compiled", "compile_ms", "max_abs_err", "passed",
               "generated_us", "handwritten_us", "ratio");
  for (const ops::Workload &w : ops::workloads()) {
    ops::WorkloadResult r = w.run();
    ok &= r.passed && r.error.empty();
    nlohmann::json j = {{"name", r.name},
                        {"tiling_key", r.tilingKey},
                        {"compiled", r.compiled},
                        {"compile_ms", r.compileMs},
                        {"max_abs_err", r.maxAbsErr},
                        {"passed", r.passed},
                        {"generated_us", r.generatedUs},
                        {"handwritten_us", r.handwrittenUs}};
    if (!r.error.empty())
      j["error"] = r.error;
    all.push_back(j);
    if (json)
      continue;
    if (!r.error.empty()) {
      fmt::print(*out, "{:<32} error: {}\n", r.name, r.error);
      continue;
    }
    fmt::print(*out, "{:<32} {:>8} {:>10.2f} {:>11.3g} {:>6} {:>13.1f} {:>13.1f} "
               "{:>6.2f}x\n",
               r.name, r.compiled ? "yes" : "no", r.compileMs, r.maxAbsErr,
               r.passed ? "yes" : "NO", r.generatedUs, r.handwrittenUs,
               r.generatedUs > 0 ? r.handwrittenUs / r.generatedUs : 0.0);
  }
  if (json) {
    printJson(all);
  } else {
    jit::Compiler &c = jit::Compiler::instance();
    fmt::print(*out, "\ntarget {} ({} x f32 lanes); times are medians of 9 alternating runs "
               "of each; ratio = hand-written time / generated time "
               "(> 1: the generated kernel is faster)\n",
               c.targetName(), c.vectorLanes());
  }
  return ok ? 0 : 1;
}

/// The flags every verb shares: --json (the result as JSON) and
/// -o/--output (the result into a file).
struct OutputFlags {
  bool json = false;
  std::string output;
  void addTo(CLI::App *verb, const std::string &jsonHelp) {
    verb->add_flag("--json", json, jsonHelp);
    verb->add_option("-o,--output", output,
                     "write the result to this file instead of stdout (JSON with --json)")
        ->type_name("PATH");
  }
};

int cacheCommand(CLI::App *stats, CLI::App *ls, CLI::App *clear, CLI::App *prune, bool json) {
  const jit::DiskCache &disk = jit::Compiler::instance().diskCache();
  if (*stats) {
    jit::CacheStats s = jit::Compiler::instance().stats();
    // Memory figures are this process's; entries and bytes are the disk's.
    uint64_t entries = 0, bytes = 0;
    for (const jit::DiskListing &l : disk.list()) {
      ++entries;
      bytes += l.bytes;
    }
    const char *mode = disk.mode() == jit::DiskCache::Mode::ReadWrite ? "readwrite"
                       : disk.mode() == jit::DiskCache::Mode::Read    ? "read"
                                                                      : "off";
    if (json)
      printJson({{"entries", entries},
                 {"bytes", bytes},
                 {"memory_hits", s.memoryHits},
                 {"disk_hits", s.diskHits},
                 {"compiles", s.compiles},
                 {"dir", disk.dir()},
                 {"mode", mode},
                 {"max_bytes", disk.maxBytes()},
                 {"memory", {{"entries", s.entries},
                             {"bytes", s.memoryBytes},
                             {"max_bytes", s.memoryMaxBytes},
                             {"evictions", s.evictions},
                             {"mapped_bytes", s.mappedBytes}}}});
    else
      fmt::print(*out,
                 "dir {}\nmode {}\nmax_bytes {}\nentries {}\nbytes {}\nmemory_hits {}\n"
                 "disk_hits {}\ncompiles {}\nmemory_entries {}\nmemory_bytes {}\n"
                 "memory_max_bytes {}\nmemory_evictions {}\nmapped_bytes {}\n",
                 disk.dir().empty() ? "(disk cache off)" : disk.dir(), mode, disk.maxBytes(),
                 entries, bytes, s.memoryHits, s.diskHits, s.compiles, s.entries,
                 s.memoryBytes, s.memoryMaxBytes, s.evictions, s.mappedBytes);
    return 0;
  }
  if (*ls) {
    auto all = disk.list();
    if (json) {
      nlohmann::json doc = nlohmann::json::array();
      for (const jit::DiskListing &l : all)
        doc.push_back({{"key", l.key}, {"bytes", l.bytes}, {"last_use", l.lastUse},
                       {"file", l.file}});
      printJson(doc);
    } else {
      for (const jit::DiskListing &l : all) {
        char when[32];
        std::time_t t = static_cast<std::time_t>(l.lastUse);
        std::strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", std::localtime(&t));
        fmt::print(*out, "{:>9}  {}  {}\n", l.bytes, when, l.key);
      }
    }
    return 0;
  }
  size_t removed = 0;
  if (*clear) {
    jit::Compiler::instance().clearMemoryCache();
    removed = disk.clear();
  } else if (*prune) {
    removed = disk.prune();
  }
  if (json)
    printJson({{"removed", removed}});
  else if (*clear)
    fmt::print(*out, "cache cleared ({} disk entries removed)\n", removed);
  else
    fmt::print(*out, "{} disk entries removed\n", removed);
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  CLI::App app{"tilejit: Ascend attention operators on x86-64, JIT-compiled "
               "from a tile DSL"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::function<std::string()>(versionText),
                       "print the version, the commit, LLVM's version and the target, then exit");
  app.footer("Every verb takes --json (its result as one JSON document; a failure too) and "
             "-o/--output PATH (its result into PATH instead of stdout).");
  OutputFlags flags;

  std::string file, kernel, emit, target;
  std::vector<std::string> sets;
  auto *compile = app.add_subcommand(
      "compile",
      "compile a .tile kernel and report its tiling key and stage times");
  compile->add_option("file", file, "the .tile source")->required();
  compile->add_option("--kernel", kernel, "kernel name")->required();
  compile->add_option("--set", sets,
                      "compile-time parameter NAME=VALUE (repeatable)");
  compile->add_option("--emit", emit, "print this stage instead")
      ->check(CLI::IsMember(kStages));
  flags.addTo(compile, "the tiling key, cache use and stage times (with --emit: the stage's "
                       "text) as one JSON object");
  compile
      ->add_option("--target", target,
                   "avx2|avx512 (default: host or TILEJIT_TARGET)")
      ->check(CLI::IsMember({"avx2", "avx512"}));

  std::string dumpName, dumpStage = "tile-opt";
  auto *dump = app.add_subcommand(
      "dump", "show a stage of a built-in kernel (no NAME: list them)");
  dump->add_option("name", dumpName, "built-in kernel");
  dump->add_option("--stage", dumpStage, "stage")
      ->check(CLI::IsMember(kStages));
  dump->add_option("--target", target, "avx2|avx512")
      ->check(CLI::IsMember({"avx2", "avx512"}));
  flags.addTo(dump, "the stage's text (no NAME: the list) as JSON");

  auto *cache =
      app.add_subcommand("cache", "inspect or clear the kernel cache");
  cache->require_subcommand(1);
  auto *stats =
      cache->add_subcommand("stats", "entries, bytes, hits and compiles");
  flags.addTo(stats, "one JSON object");
  auto *clear = cache->add_subcommand("clear", "drop every cached kernel (memory and disk)");
  flags.addTo(clear, "how many disk entries were removed, as JSON");
  auto *ls = cache->add_subcommand("ls", "the disk entries: key, size, last use");
  flags.addTo(ls, "one JSON array, one object per entry");
  auto *prune = cache->add_subcommand(
      "prune", "remove disk entries that do not verify, then evict down to the size bound");
  flags.addTo(prune, "how many disk entries were removed, as JSON");

  auto *demo =
      app.add_subcommand("demo", "run every built-in workload against its "
                                 "reference and hand-written twin");
  flags.addTo(demo, "one JSON array, one object per workload");
  std::string recordPath;
  demo->add_option("--record", recordPath,
                   "also write the kernels the run used to this manifest (for `tilejit warm`)");

  std::string manifest;
  unsigned warmThreads = 0;
  auto *warm = app.add_subcommand(
      "warm", "compile the kernels a manifest lists ahead of time, in parallel");
  warm->add_option("manifest", manifest, "JSON lines: {source, kernel, spec}")->required();
  warm->add_option("--threads", warmThreads,
                   "threads of the compile pool (default: TILEJIT_COMPILE_THREADS, else every core)");
  flags.addTo(warm, "the counts and each failure as one JSON object");

  bench::DriverArgs benchArgs;
  auto *benchCmd = app.add_subcommand(
      "bench", "measure the machine's limits, then every operator's benchmark cases, the "
               "compile latency and the PyTorch peer where installed; JSON and a report");
  benchCmd->add_option("--filter", benchArgs.filter, "only the cases whose name matches this regex");
  flags.addTo(benchCmd, "the whole document (host, limits, peers, every case) as JSON "
                        "(without: one line per case; with --list: the names)");
  benchCmd
      ->add_option("--report", benchArgs.reportDir,
                   "also write the JSON document (HOST-COMMIT.json), the Markdown report "
                   "and its plots into this directory")
      ->type_name("DIR");
  benchCmd->add_flag("--quick", benchArgs.quick, "few samples per case (CI)");
  benchCmd->add_option("--samples", benchArgs.samples, "alternating samples per case (default 15)");
  benchCmd->add_flag("--no-peer", benchArgs.noPeer, "do not start the PyTorch peer");
  benchCmd
      ->add_option("--threads", benchArgs.threads,
                   "thread counts to run, e.g. 1,2,all (default: all): every case at all "
                   "threads, the memory-bound ones again at each other count with the "
                   "limits measured there (the report's thread-scaling table)")
      ->type_name("LIST");
  benchCmd->add_flag("--list", benchArgs.list, "print the case names and exit");
  benchCmd->add_option("--python", benchArgs.python,
                       "the Python for the peer and the report (default: Debian's /usr/bin/python3 where "
                       "present, else python3 on the PATH)");

  // Known before parsing, so that a command-line error is JSON too.
  for (int i = 1; i < argc; ++i)
    jsonErrors |= llvm::StringRef(argv[i]) == "--json";
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError &e) {
    // --help and --version are "errors" with exit status 0.
    if (!jsonErrors || e.get_exit_code() == 0)
      return app.exit(e);
    return fail(e.what(), e.get_exit_code());
  }
  const bool json = flags.json;

  // A bad TILEJIT_TARGET (or a CPU without AVX2) is a clear error, not an
  // abort.
  if (auto host = jit::Compiler::instance(jit::TargetLevel::Host); !host)
    return fail(llvm::toString(host.takeError()));

  // The result goes to -o's file; it is opened before the command runs, so
  // that a path that cannot be written fails before any work.
  std::ofstream outputFile;
  if (!flags.output.empty()) {
    outputFile.open(flags.output, std::ios::out | std::ios::trunc);
    if (!outputFile)
      return fail("cannot write " + flags.output + ": " + std::strerror(errno));
    out = &outputFile;
  }
  int rc = 0;
  if (*benchCmd) {
#ifdef TILEJIT_HAVE_BENCH
    benchArgs.commit = TILEJIT_GIT_COMMIT;
    benchArgs.version = TILEJIT_VERSION;
    benchArgs.json = json;
    llvm::Expected<int> status = bench::runBenchCommand(benchArgs, *out);
    if (!status) {
      // A usage error (a bad filter, no matching case) exits with 2.
      int code = 1;
      std::string message;
      llvm::handleAllErrors(status.takeError(), [&](const llvm::ErrorInfoBase &e) {
        message = e.message();
        if (e.convertToErrorCode() == std::errc::invalid_argument)
          code = 2;
      });
      rc = fail("bench: " + message, code);
    } else {
      rc = *status;
    }
#else
    rc = fail("this tilejit was built without the benchmarks (TILE_ENABLE_BENCH=OFF)");
#endif
  } else if (*compile) {
    rc = compileCommand(file, kernel, sets, emit, json, target);
  } else if (*dump) {
    rc = dumpCommand(dumpName, dumpStage, target, json);
  } else if (*cache) {
    rc = cacheCommand(stats, ls, clear, prune, json);
  } else if (*demo) {
    if (!recordPath.empty())
      jit::Compiler::instance().startRecording();
    rc = demoCommand(json);
    if (!recordPath.empty()) {
      std::ofstream manifestOut(recordPath);
      for (const jit::Compiler::Request &r : jit::Compiler::instance().recordedRequests()) {
        nlohmann::json spec = nlohmann::json::object();
        for (const auto &[n, v] : r.spec)
          spec[n] = specText(v);
        manifestOut << nlohmann::json{{"source", r.source}, {"kernel", r.kernel}, {"spec", spec}}.dump()
                    << "\n";
      }
      if (!manifestOut)
        rc = fail("cannot write " + recordPath);
    }
  } else if (*warm) {
    rc = warmCommand(manifest, warmThreads, json);
  }
  out->flush();
  if (!*out)
    return fail("cannot write " + (flags.output.empty() ? std::string("stdout") : flags.output));
  // A command that failed before it had a result leaves no empty file
  // behind (a device such as /dev/null is left alone).
  if (rc != 0 && outputFile.is_open() && outputFile.tellp() == 0) {
    outputFile.close();
    std::error_code ec;
    if (std::filesystem::is_regular_file(flags.output, ec))
      std::filesystem::remove(flags.output, ec);
  }
  return rc;
}
