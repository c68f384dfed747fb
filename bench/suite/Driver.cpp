//===- Driver.cpp - `tilejit bench`: every case, one JSON document, a report
//===//
#include "Driver.h"

#include "MachineLimits.h"
#include "Peer.h"
#include "Suite.h"

#include "jit/Options.h"

#include <nlohmann/json.hpp>
#include <omp.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <regex>
#include <sstream>
#include <system_error>

namespace tilejit::bench {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

/// A value, or null where it was not measured (0).
json orNull(double v) { return v > 0 ? json(v) : json(nullptr); }

std::string cpuField(const std::string &key) {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind(key, 0) == 0) {
      const size_t colon = line.find(':');
      return colon == std::string::npos ? "" : line.substr(colon + 2);
    }
  return "";
}

std::string envOr(const char *name, const char *fallback) {
  const char *v = std::getenv(name);
  return v ? v : fallback;
}

json loadAverage() {
  double l[3] = {0, 0, 0};
  if (::getloadavg(l, 3) != 3)
    return nullptr;
  return {l[0], l[1], l[2]};
}

json hostInfo(int threads, const Limits &limits) {
  char name[256] = {};
  ::gethostname(name, sizeof name - 1);
  struct utsname u {};
  ::uname(&u);
  // The flags that decide which kernels run and which peaks exist.
  json flags = json::array();
  std::istringstream all(cpuField("flags"));
  for (std::string f; all >> f;)
    for (const char *want :
         {"avx2", "fma", "avx512f", "avx512bw", "avx512vl", "avx512_fp16",
          "avx512_bf16", "amx_tile", "amx_bf16", "amx_int8"})
      if (f == want)
        flags.push_back(f);
  return {{"name", name},
          {"cpu", cpuField("model name")},
          {"flags", flags},
          {"cores", static_cast<int>(::sysconf(_SC_NPROCESSORS_ONLN))},
          {"threads", threads},
          {"llc_bytes", limits.llcBytes},
          {"memory_bytes", static_cast<double>(::sysconf(_SC_PHYS_PAGES)) *
                               static_cast<double>(::sysconf(_SC_PAGESIZE))},
          {"kernel", std::string(u.sysname) + " " + u.release},
          {"omp_wait_policy", envOr("OMP_WAIT_POLICY", "default")}};
}

json caseJson(const Result &r) {
  json c = {{"name", r.name},
            {"op", r.op},
            {"bound", boundName(r.bound)},
            {"in_cache", r.inCache},
            {"working_set_bytes", r.workingSetBytes},
            {"bytes", r.bytes},
            {"flops", r.flops},
            {"samples", r.samples},
            {"generated_s", orNull(r.genSeconds)},
            {"handwritten_s", orNull(r.twinSeconds)},
            {"peer_s", orNull(r.peerSeconds)},
            {"vs_handwritten", orNull(r.vsTwin)},
            {"vs_peer", orNull(r.vsPeer)},
            {"note", r.note},
            {"twin_note", r.twinNote},
            {"peer_note", r.peerNote},
            {"peer_max_abs_diff",
             r.peerMaxAbsDiff >= 0 ? json(r.peerMaxAbsDiff) : json(nullptr)},
            {"error", r.error.empty() ? json(nullptr) : json(r.error)}};
  const bool timed = r.genSeconds > 0;
  const bool roofline = r.bound == Bound::Read || r.bound == Bound::Copy ||
                        r.bound == Bound::Compute;
  c["GBs"] = timed && r.bytes > 0 && r.bound != Bound::Compile
                 ? json(r.bytes / r.genSeconds / 1e9)
                 : json(nullptr);
  c["GFLOPs"] =
      timed && r.flops > 0 ? json(r.flops / r.genSeconds / 1e9) : json(nullptr);
  c["us_per_call"] = timed ? json(r.genSeconds * 1e6) : json(nullptr);
  c["calls_per_s"] = timed ? json(1.0 / r.genSeconds) : json(nullptr);
  c["read_GBs"] = orNull(r.readGBs);
  c["read_GBs_paired"] = orNull(r.readGBsPaired);
  c["copy_GBs"] = r.bound == Bound::Copy ? orNull(r.copyGBs) : json(nullptr);
  c["copy_GBs_paired"] =
      r.bound == Bound::Copy ? orNull(r.copyGBsPaired) : json(nullptr);
  c["peak_GFLOPs"] = roofline ? orNull(r.peakGflops) : json(nullptr);
  c["peak_name"] = r.peakName;
  c["limit_probe"] =
      roofline && !r.limitProbe.empty() ? json(r.limitProbe) : json(nullptr);
  c["bound_s"] = roofline ? orNull(r.boundSeconds) : json(nullptr);
  c["of_bound"] = roofline ? orNull(r.ofBound) : json(nullptr);
  json extra = json::object();
  for (const auto &[k, v] : r.extra)
    extra[k] = v;
  c["extra"] = extra;
  return c;
}

/// The limits as the document records them: the peaks and the bandwidth
/// table (every working-set size measured, each limit with its probe).
json limitsJson(const Limits &limits) {
  json bw = json::array();
  for (const auto &[bytes, b] : limits.bandwidth)
    bw.push_back({{"bytes", bytes},
                  {"read_GBs", b.readGBs},
                  {"copy_GBs", b.copyGBs},
                  {"warm_read_GBs", b.warmReadGBs},
                  {"read_probe", b.readPlan},
                  {"copy_probe", b.copyPlan},
                  {"warm_read_probe", b.warmReadPlan},
                  {"probes",
                   {{"read", b.readByPlan},
                    {"copy", b.copyByPlan},
                    {"warm_read", b.warmReadByPlan}}}});
  return {{"threads", limits.threads},
          {"fma_GFLOPs", limits.fmaGflops},
          {"bf16_dot_GFLOPs", orNull(limits.bf16DotGflops)},
          {"amx_bf16_GFLOPs", orNull(limits.amxGflops)},
          {"llc_bytes", limits.llcBytes},
          {"flush_bytes", limits.flushBytes},
          {"bandwidth", bw}};
}

/// A memory-bound case (bound read or copy) in a `scaling` entry: what the
/// thread-scaling table shows.
json scalingCaseJson(const Result &r) {
  const json c = caseJson(r);
  json s = json::object();
  for (const char *key : {"name", "op", "bound", "working_set_bytes", "bytes",
                          "samples", "generated_s", "us_per_call", "GBs",
                          "read_GBs", "copy_GBs", "limit_probe", "of_bound",
                          "vs_handwritten", "error"})
    s[key] = c[key];
  return s;
}

/// Whether a case of the run at all threads runs again at the other
/// counts: an operator case that ran and is memory-bound (bound read or
/// copy: the roofline cases of ifa, nsa, scatter and gather).
bool memoryBound(const Result &r) {
  static const char *ops[] = {"ifa", "nsa", "scatter", "gather"};
  return (r.bound == Bound::Read || r.bound == Bound::Copy) &&
         r.error.empty() && r.genSeconds > 0 &&
         std::find(std::begin(ops), std::end(ops), r.op) != std::end(ops);
}

std::string humanSeconds(double s) {
  char buf[32];
  if (s >= 1)
    std::snprintf(buf, sizeof buf, "%.2f s", s);
  else if (s >= 1e-3)
    std::snprintf(buf, sizeof buf, "%.2f ms", s * 1e3);
  else if (s >= 1e-6)
    std::snprintf(buf, sizeof buf, "%.2f us", s * 1e6);
  else
    std::snprintf(buf, sizeof buf, "%.0f ns", s * 1e9);
  return buf;
}

/// What a case measured, in a few words: its time, throughput, fraction of
/// its bound and ratios (or its error, or why it did not run).
std::string summary(const Result &r) {
  std::string line;
  char buf[96];
  if (!r.error.empty()) {
    line += "error: " + r.error;
  } else if (r.genSeconds <= 0 && !r.note.empty()) {
    line += r.note; // not available (a python/ case without its Python side)
  } else {
    line += humanSeconds(r.genSeconds);
    if (r.bound == Bound::Compute && r.genSeconds > 0) {
      std::snprintf(buf, sizeof buf, "  %.1f GFLOP/s",
                    r.flops / r.genSeconds / 1e9);
      line += buf;
    } else if (r.bound == Bound::Read || r.bound == Bound::Copy) {
      std::snprintf(buf, sizeof buf, "  %.1f GB/s",
                    r.bytes / r.genSeconds / 1e9);
      line += buf;
    }
    if (r.ofBound > 0) {
      std::snprintf(buf, sizeof buf, "  %.2f of bound", r.ofBound);
      line += buf;
    }
    if (r.vsTwin > 0) {
      std::snprintf(buf, sizeof buf, "  twin/gen %.2f", r.vsTwin);
      line += buf;
    }
    if (r.vsPeer > 0 && r.op == "python") {
      std::snprintf(buf, sizeof buf, "  python %s  python/C %.3f",
                    humanSeconds(r.peerSeconds).c_str(), r.vsPeer);
      line += buf;
    } else if (r.vsPeer > 0) {
      std::snprintf(buf, sizeof buf, "  peer/gen %.2f", r.vsPeer);
      line += buf;
    }
  }
  return line;
}

void progress(size_t i, size_t n, const Result &r, double wall) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "  (%.1f s)", wall);
  std::cerr << "[" << i << "/" << n << "] " << r.name << "  " << summary(r) << buf
            << std::endl;
}

llvm::Error usageError(const std::string &message) {
  return llvm::createStringError(std::make_error_code(std::errc::invalid_argument), message);
}

/// The directory the bench scripts live in: next to the sources this was
/// built from.
fs::path scriptDir() {
#ifdef TILEJIT_SOURCE_DIR
  return fs::path(TILEJIT_SOURCE_DIR) / "bench";
#else
  return fs::current_path() / "bench";
#endif
}

/// Where this build's Python package is (PYTHONPATH for the python/ cases).
fs::path pythonPackageDir() {
#ifdef TILEJIT_PYTHON_DIR
  return fs::path(TILEJIT_PYTHON_DIR);
#else
  return fs::current_path() / "build" / "python";
#endif
}

/// The running peer's `hello` for the document: installed where its BLAS is
/// an optimised one; else "no peer", with the BLAS it loaded and why that is
/// not a peer a user would run (the reference BLAS: torch's matmuls there
/// are many times slower than on any BLAS a user would install).
json peerInfo(const Peer &peer, const std::string &blasDir) {
  json info = peer.info();
  info.erase("ok");
  info["library_path"] = blasDir.empty() ? json(nullptr) : json(blasDir);
  info["installed"] = info.value("blas_optimised", false);
  if (!info["installed"].get<bool>()) {
    const std::string blas = info.value("blas", std::string("unknown"));
    const bool reference = blas.rfind("reference", 0) == 0;
    info["no_peer"] = reference ? "reference BLAS" : "unidentified BLAS";
    std::string note = "no peer (" + info["no_peer"].get<std::string>() +
                       "): PyTorch's process loaded " + blas;
    if (info.contains("blas_path") && info["blas_path"].is_string())
      note += " (" + info["blas_path"].get<std::string>() + ")";
    note += ", " + info.value("blas_why", std::string("not an optimised BLAS"));
    note += blasDir.empty()
                ? "; no OpenBLAS was found to put first (Debian: "
                  "libopenblas0-openmp, installed by scripts/dev.sh bench)"
                : "; " + blasDir + " was first on its LD_LIBRARY_PATH";
    info["note"] = note;
  }
  return info;
}

/// Starts the python/ cases' process (bench/peer/python_peer.py, the build's
/// package first on its PYTHONPATH); its `hello` for the document, with
/// "installed" false and a note where it does not start. Its library path
/// is left as it is: the python/ cases time tilejit's own calls through the
/// package (its kernels, torch.ops.tilejit, NumPy launches), no torch
/// matmul, so which BLAS it loads changes none of their figures.
json startPython(Peer &py, const std::string &python, int threads) {
  const fs::path script = scriptDir() / "peer" / "python_peer.py";
  const fs::path dir = pythonPackageDir();
  json info = {{"installed", false}};
  if (!fs::exists(script)) {
    info["note"] = "no " + script.filename().string();
    return info;
  }
  if (!fs::exists(dir / "tilejit" / "__init__.py")) {
    info["note"] = "tilejit's Python package is not built in this build "
                   "(the tilejit-python target)";
    return info;
  }
  std::string path = dir.string();
  if (const char *given = std::getenv("PYTHONPATH"); given && *given)
    path += std::string(":") + given;
  if (llvm::Error e = py.start(python, script.string(), threads,
                               {{"PYTHONPATH", path}})) {
    info["note"] =
        "the Python process did not start: " + llvm::toString(std::move(e));
    return info;
  }
  info = py.info();
  info["installed"] = true;
  info["interpreter"] = python;
  info.erase("ok");
  return info;
}

/// Runs `argv` and waits; its exit status. What it prints goes to stderr:
/// stdout holds the command's result only.
int runProcess(const std::vector<std::string> &argv) {
  std::cout.flush();
  const pid_t pid = ::fork();
  if (pid < 0)
    return -1;
  if (pid == 0) {
    ::dup2(STDERR_FILENO, STDOUT_FILENO);
    std::vector<char *> a;
    for (const std::string &s : argv)
      a.push_back(const_cast<char *>(s.c_str()));
    a.push_back(nullptr);
    ::execvp(a[0], a.data());
    std::perror(a[0]);
    ::_exit(127);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/// Runs `cases` in `ctx`, a progress line each (`tag` before the count:
/// the thread count of a scaling run), its text line appended to `lines`;
/// the results, and the number that failed added to `failed`.
std::vector<Result> runCases(const std::vector<const Case *> &cases,
                             Context &ctx, const std::string &tag,
                             std::string &lines, int &failed) {
  std::vector<Result> out;
  for (size_t i = 0; i < cases.size(); ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    Result r = runCase(*cases[i], ctx);
    const double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
            .count();
    failed += !r.error.empty();
    if (!tag.empty())
      std::cerr << tag << " ";
    progress(i + 1, cases.size(), r, wall);
    lines += (tag.empty() ? "" : tag + " ") + r.name + "  " + summary(r) + "\n";
    out.push_back(std::move(r));
  }
  return out;
}

} // namespace

llvm::Expected<std::vector<int>> parseThreadCounts(const std::string &list,
                                                   int all, int most,
                                                   const std::string &mostWhy) {
  auto bad = [&](const std::string &item, const std::string &why) {
    return usageError("bad --threads '" + list + "': " +
                      (item.empty() ? why : "'" + item + "' " + why) +
                      " (a comma-separated list of thread counts from 1 to " +
                      std::to_string(most) + " and 'all', e.g. 1,2,all)");
  };
  std::vector<int> counts;
  size_t pos = 0;
  while (true) {
    const size_t comma = list.find(',', pos);
    std::string item = list.substr(
        pos, comma == std::string::npos ? std::string::npos : comma - pos);
    const size_t b = item.find_first_not_of(" \t");
    const size_t e = item.find_last_not_of(" \t");
    item = b == std::string::npos ? "" : item.substr(b, e - b + 1);
    if (item.empty())
      return bad("", "has an empty item");
    if (item == "all") {
      counts.push_back(all);
    } else {
      const bool negative = item[0] == '-';
      const std::string digits = negative ? item.substr(1) : item;
      if (digits.empty() ||
          digits.find_first_not_of("0123456789") != std::string::npos)
        return bad(item, "is not a thread count");
      if (negative)
        return bad(item, "is negative");
      // Past 6 digits it is above any machine's cores (and int's range).
      const long n = digits.size() > 6 ? 10000000L : std::stol(digits);
      if (n == 0)
        return bad(item, "is no threads: at least 1");
      if (n > most)
        return bad(item, "is more than " + mostWhy);
      counts.push_back(static_cast<int>(n));
    }
    if (comma == std::string::npos)
      break;
    pos = comma + 1;
  }
  std::sort(counts.begin(), counts.end());
  counts.erase(std::unique(counts.begin(), counts.end()), counts.end());
  return counts;
}

llvm::Expected<int> runBenchCommand(const DriverArgs &given, std::ostream &out) {
  DriverArgs args = given;
  // Debian's interpreter (where python3-torch and python3-matplotlib live)
  // rather than whichever python3 comes first on the PATH.
  if (args.python.empty())
    args.python =
        fs::exists("/usr/bin/python3") ? "/usr/bin/python3" : "python3";
  std::regex filter;
  try {
    filter = std::regex(args.filter.empty() ? std::string(".") : args.filter);
  } catch (const std::regex_error &e) {
    return usageError(std::string("bad --filter: ") + e.what());
  }
  // The threads of the run: all (TILEJIT_NUM_THREADS, else OpenMP's
  // count); --threads adds other counts, up to the cores (or that cap,
  // past which the kernels' launches would not go).
  const unsigned capped = jit::Options::process().numThreads();
  const int ompThreads = omp_get_max_threads();
  const int threads = capped ? static_cast<int>(capped) : ompThreads;
  const int cores = static_cast<int>(::sysconf(_SC_NPROCESSORS_ONLN));
  int most = std::max(cores, 1);
  std::string mostWhy = "the " + std::to_string(most) + " cores";
  if (capped && static_cast<int>(capped) < most) {
    most = static_cast<int>(capped);
    mostWhy = "TILEJIT_NUM_THREADS=" + std::to_string(capped);
  }
  llvm::Expected<std::vector<int>> parsed =
      parseThreadCounts(args.threads, threads, most, mostWhy);
  if (!parsed)
    return parsed.takeError();
  const std::vector<int> counts = *parsed;
  std::vector<const Case *> cases;
  for (const Case &c : registry())
    if (std::regex_search(c.name, filter))
      cases.push_back(&c);
  // The report's order: operators as below, each file's cases as it
  // registers them (static registration runs in link order).
  auto rank = [](const Case *c) {
    static const char *order[] = {"ifa", "nsa",     "scatter", "gather",
                                  "fag", "compile", "python"};
    return std::find(std::begin(order), std::end(order), c->op) -
           std::begin(order);
  };
  std::stable_sort(
      cases.begin(), cases.end(),
      [&](const Case *a, const Case *b) { return rank(a) < rank(b); });
  if (args.list) {
    json names = json::array();
    for (const Case *c : cases)
      names.push_back(c->name);
    if (args.json)
      out << names.dump(2) << "\n";
    else
      for (const Case *c : cases)
        out << c->name << "\n";
    return 0;
  }
  if (cases.empty())
    return usageError("no case matches '" + args.filter + "'");
  const auto start = std::chrono::steady_clock::now();
  const json loadStart = loadAverage();

  std::cerr << "tilejit bench: " << cases.size() << " cases, " << threads
            << " threads; measuring the arithmetic peaks" << std::endl;
  Limits limits = measurePeaks(threads);

  // The peer: PyTorch, where it imports.
  Peer peer;
  json peerJson = {{"installed", false}};
  const bool wantsPeer =
      !args.noPeer &&
      std::any_of(cases.begin(), cases.end(), [](const Case *c) {
        return c->op == "ifa" || c->op == "scatter" || c->op == "gather" ||
               c->op == "fag";
      });
  if (wantsPeer) {
    const fs::path script = scriptDir() / "peer" / "torch_peer.py";
    // PyTorch on an optimised BLAS, for the peer's process only.
    const std::string blasDir = optimisedBlasDir();
    if (!fs::exists(script)) {
      peerJson["note"] =
          "peer not installed (no " + script.filename().string() + ")";
    } else if (llvm::Error e = peer.start(args.python, script.string(),
                                          threads, {}, blasDir)) {
      peerJson["note"] = "peer not installed: " + llvm::toString(std::move(e));
    } else {
      peerJson = peerInfo(peer, blasDir);
    }
  } else {
    peerJson["note"] =
        args.noPeer ? "peer not run (--no-peer)" : "no case has a peer";
  }
  if (!peerJson["installed"].get<bool>())
    std::cerr << "tilejit bench: " << peerJson["note"].get<std::string>()
              << std::endl;
  else
    std::cerr << "tilejit bench: peer: PyTorch "
              << peerJson.value("torch", std::string("?")) << " on "
              << peerJson.value("blas", std::string("an unknown BLAS"))
              << (peerJson.contains("blas_path") &&
                          peerJson["blas_path"].is_string()
                      ? " (" + peerJson["blas_path"].get<std::string>() + ")"
                      : std::string())
              << std::endl;

  // tilejit's own Python package, for the python/ cases.
  Peer python;
  json pythonJson = {{"installed", false}, {"note", "no python/ case ran"}};
  if (std::any_of(cases.begin(), cases.end(),
                  [](const Case *c) { return c->op == "python"; })) {
    pythonJson = startPython(python, args.python, threads);
    if (!pythonJson["installed"].get<bool>())
      std::cerr << "tilejit bench: the python/ cases are not available: "
                << pythonJson["note"].get<std::string>() << std::endl;
  }

  Options opts;
  opts.quick = args.quick;
  opts.samples = args.samples;
  opts.peer = peer.running() && peerJson["installed"].get<bool>() ? &peer
                                                                  : nullptr;
  opts.python = pythonJson["installed"].get<bool>() ? &python : nullptr;
  if (!opts.python)
    opts.pythonNote = pythonJson.value("note", "");
  Context ctx(opts, limits);

  std::string lines; // the text result
  int failed = 0;
  const std::vector<Result> all = runCases(cases, ctx, "", lines, failed);
  json results = json::array();
  for (const Result &r : all)
    results.push_back(caseJson(r));

  // Thread scaling: the memory-bound cases (as the run at all threads found
  // them) again at each other count, OpenMP's count set for the kernels,
  // the twins and the probes alike, the limits measured afresh at that
  // count; no peer and no python/ process there.
  std::vector<const Case *> scaled;
  for (size_t i = 0; i < cases.size(); ++i)
    if (memoryBound(all[i]))
      scaled.push_back(cases[i]);
  json scaling = json::array();
  for (const int count : counts) {
    json entry = {{"threads", count}};
    json scaledCases = json::array();
    if (count == threads) {
      entry["limits"] = limitsJson(limits);
      for (const Result &r : all)
        if (memoryBound(r))
          scaledCases.push_back(scalingCaseJson(r));
    } else {
      const std::string at =
          std::to_string(count) + (count == 1 ? " thread" : " threads");
      std::cerr << "tilejit bench: " << scaled.size()
                << " memory-bound cases at " << at
                << "; measuring the arithmetic peaks" << std::endl;
      omp_set_num_threads(count);
      Limits atCount = measurePeaks(count);
      Options scaledOpts = opts;
      scaledOpts.peer = nullptr;
      scaledOpts.python = nullptr;
      Context scaledCtx(scaledOpts, atCount);
      const std::string tag = "[" + at + "]";
      for (const Result &r : runCases(scaled, scaledCtx, tag, lines, failed))
        scaledCases.push_back(scalingCaseJson(r));
      omp_set_num_threads(ompThreads);
      entry["limits"] = limitsJson(atCount);
    }
    entry["cases"] = scaledCases;
    scaling.push_back(entry);
  }
  char date[32];
  const std::time_t now = std::time(nullptr);
  std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  json doc = {{"schema", 1},
              {"tool", "tilejit bench"},
              {"version", args.version},
              {"commit", args.commit},
              {"date", date},
              {"host", hostInfo(threads, limits)},
              {"options",
               {{"quick", args.quick},
                {"samples", ctx.samples()},
                {"filter", args.filter},
                {"threads", counts}}},
              {"load_average_start", loadStart},
              {"load_average_end", loadAverage()},
              {"duration_s", std::chrono::duration<double>(
                                 std::chrono::steady_clock::now() - start)
                                 .count()},
              {"limits", limitsJson(limits)},
              {"peer", peerJson},
              {"python", pythonJson},
              {"cases", results},
              {"scaling", scaling}};

  // The report first (the document beside it, HOST-COMMIT.json, then the
  // Markdown and the plots made from that file), so that a failure is the
  // command's one result.
  if (!args.reportDir.empty()) {
    std::error_code ec;
    fs::create_directories(args.reportDir, ec);
    if (ec)
      return llvm::createStringError(ec, "cannot create the report directory " +
                                             args.reportDir + ": " + ec.message());
    const std::string host = doc["host"]["name"];
    const std::string jsonPath =
        (fs::path(args.reportDir) / (host + "-" + args.commit + ".json")).string();
    std::ofstream file(jsonPath);
    file << doc.dump(2) << "\n";
    file.close();
    if (!file)
      return llvm::createStringError(std::make_error_code(std::errc::io_error),
                                     "cannot write " + jsonPath);
    std::cerr << "tilejit bench: wrote " << jsonPath << std::endl;
    const fs::path script = scriptDir() / "report" / "make_report.py";
    const int rc =
        runProcess({args.python, script.string(), jsonPath, args.reportDir});
    if (rc != 0)
      return llvm::createStringError(std::make_error_code(std::errc::io_error),
                                     "the report failed (" + script.string() + ", status " +
                                         std::to_string(rc) + "; the document is " +
                                         jsonPath + ")");
  }
  if (args.json)
    out << doc.dump(2) << "\n";
  else
    out << lines;
  return failed ? 1 : 0;
}

} // namespace tilejit::bench
