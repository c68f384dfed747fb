//===- Main.cpp - tilejit-difftest: the compiler's differential tester -------===//
//
//   tilejit-difftest [--seed S] [--count N | --seconds T] [--save DIR]
//   tilejit-difftest --replay DIR|FILE...
//   tilejit-difftest --print S
//
// Generates programs S, S+1, ..., checks each in a worker process (Worker.h)
// and prints a summary: programs and programs per second, features used,
// failures by class (with their seeds), programs the interpreter could not
// run by reason. A failing program is minimised and written to DIR as
// <class>-<seed>.tile (at most --minimise-per-class of each class).
// --seconds bounds the whole run, minimising included.
//
//===----------------------------------------------------------------------===//
#include "Generator.h"
#include "Minimiser.h"
#include "Program.h"
#include "Worker.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <unistd.h>
#include <vector>

using namespace tilejit::difftest;
namespace fs = std::filesystem;

namespace {

struct Options {
  uint64_t seed = 0;
  bool seedGiven = false;
  int64_t count = -1;
  double seconds = -1;
  int chunk = 100;
  double timeout = 20;
  std::string save;
  int minimisePerClass = 2;
  double minimiseSeconds = 90;
  std::vector<std::string> replay;
  bool verbose = false;
};

std::string selfPath(const char *argv0) {
  std::error_code ec;
  fs::path p = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string(argv0) : p.string();
}

int usage() {
  std::cerr << "usage: tilejit-difftest [--seed S] [--count N | --seconds T] [--save DIR]\n"
               "         [--chunk N] [--timeout S] [--minimise-per-class N] [--minimise-seconds S] [-v]\n"
               "       tilejit-difftest --replay DIR|FILE...\n"
               "       tilejit-difftest --print S\n";
  return 2;
}

std::vector<std::string> regressionFiles(const std::vector<std::string> &paths) {
  std::vector<std::string> files;
  for (const std::string &p : paths) {
    if (fs::is_directory(p)) {
      std::vector<std::string> in;
      for (const auto &e : fs::directory_iterator(p))
        if (e.path().extension() == ".tile")
          in.push_back(fs::absolute(e.path()).string());
      std::sort(in.begin(), in.end());
      files.insert(files.end(), in.begin(), in.end());
    } else {
      files.push_back(fs::absolute(p).string());
    }
  }
  return files;
}

int replay(const Options &o, const std::string &self) {
  Worker w(self, o.chunk, o.timeout);
  std::vector<std::string> files = regressionFiles(o.replay);
  int failed = 0;
  for (const std::string &f : files) {
    JobResult r = w.run("file " + f);
    std::string name = fs::path(f).filename().string();
    if (r.failureClass.empty()) {
      std::cout << "PASS " << name
                << (r.notInterpreted.empty() ? "" : " (not interpreted: " + r.notInterpreted + ")") << "\n";
      continue;
    }
    ++failed;
    std::cout << "FAIL " << name << ": " << r.failureClass << "\n" << r.detail << "\n";
  }
  std::cout << files.size() << " regression(s), " << failed << " failing\n";
  return failed ? 1 : 0;
}

} // namespace

int main(int argc, char **argv) {
  Options o;
  std::optional<uint64_t> printSeed;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::cerr << "tilejit-difftest: " << a << " needs a value\n";
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--worker")
      return workerMain();
    if (a == "--seed") {
      o.seed = std::stoull(next());
      o.seedGiven = true;
    } else if (a == "--count") {
      o.count = std::stoll(next());
    } else if (a == "--seconds") {
      o.seconds = std::stod(next());
    } else if (a == "--chunk") {
      o.chunk = std::max(1, std::stoi(next()));
    } else if (a == "--timeout") {
      o.timeout = std::stod(next());
    } else if (a == "--save") {
      o.save = next();
    } else if (a == "--minimise-per-class") {
      o.minimisePerClass = std::stoi(next());
    } else if (a == "--minimise-seconds") {
      o.minimiseSeconds = std::stod(next());
    } else if (a == "--print") {
      printSeed = std::stoull(next());
    } else if (a == "-v" || a == "--verbose") {
      o.verbose = true;
    } else if (a == "--replay") {
      while (i + 1 < argc && argv[i + 1][0] != '-')
        o.replay.push_back(argv[++i]);
      if (o.replay.empty())
        return usage();
    } else {
      return usage();
    }
  }
  if (printSeed) {
    Program p = generateProgram(*printSeed);
    std::cout << printRegression(p, "none", "");
    return 0;
  }
  std::string self = selfPath(argv[0]);
  if (!o.replay.empty())
    return replay(o, self);

  if (!o.seedGiven)
    o.seed = static_cast<uint64_t>(std::time(nullptr)) * 100000u;
  if (o.count < 0 && o.seconds < 0)
    o.count = 100;
  std::cout << "difftest: seeds from " << o.seed << " (rerun one with --seed S --count 1)" << std::endl;

  Worker w(self, o.chunk, o.timeout);
  auto t0 = std::chrono::steady_clock::now();
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };
  std::map<std::string, int64_t> features, groupCounts, notInterpreted;
  std::map<std::string, std::vector<uint64_t>> failures;
  std::vector<std::string> saved;
  double minimiseTime = 0;
  int64_t n = 0;
  for (uint64_t seed = o.seed;; ++seed) {
    if (o.count >= 0 && n >= o.count)
      break;
    if (o.seconds >= 0 && elapsed() >= o.seconds) // minimising included
      break;
    Program p = generateProgram(seed);
    for (const std::string &f : p.features)
      ++features[f];
    for (const FeatureGroup &g : featureGroups())
      if (g.covers(p.features))
        ++groupCounts[g.name];
    ++n;
    JobResult r = w.run("seed " + std::to_string(seed));
    if (!r.notInterpreted.empty())
      ++notInterpreted[r.notInterpreted.substr(0, 80)];
    if (o.verbose)
      std::cout << "seed " << seed << ": " << (r.failureClass.empty() ? "pass" : r.failureClass) << std::endl;
    if (r.failureClass.empty())
      continue;
    failures[r.failureClass].push_back(seed);
    std::cout << "FAIL seed " << seed << ": " << r.failureClass << " (rerun: tilejit-difftest --seed "
              << seed << " --count 1)\n"
              << r.detail << std::flush;
    if (o.save.empty() || static_cast<int>(failures[r.failureClass].size()) > o.minimisePerClass)
      continue;
    // Minimise through candidate files the worker reads.
    auto m0 = std::chrono::steady_clock::now();
    std::string tmp = (fs::temp_directory_path() / ("difftest-" + std::to_string(getpid()) + ".tile")).string();
    std::string lastDetail = r.detail;
    auto classify = [&](const Program &q) {
      std::ofstream(tmp) << printRegression(q, r.failureClass, "");
      JobResult c = w.run("file " + tmp);
      if (c.failureClass == r.failureClass)
        lastDetail = c.detail;
      return c.failureClass;
    };
    int tries = 0;
    MinimiseBudget budget;
    budget.maxSeconds = o.minimiseSeconds;
    if (o.seconds >= 0) // the run's end: what is minimised by then is saved
      budget.deadline = t0 + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                 std::chrono::duration<double>(o.seconds));
    Program small = minimise(p, r.failureClass, classify, budget, tries);
    // The final program's own details (when there is time for one more run).
    if (tries > 0 && (!budget.deadline || std::chrono::steady_clock::now() < *budget.deadline))
      classify(small);
    fs::remove(tmp);
    fs::create_directories(o.save);
    std::string out = (fs::path(o.save) / (r.failureClass + "-" + std::to_string(seed) + ".tile")).string();
    std::ofstream(out) << printRegression(small, r.failureClass, lastDetail);
    saved.push_back(out);
    double dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - m0).count();
    minimiseTime += dt;
    std::cout << "  minimised in " << tries << " tries (" << static_cast<int>(dt) << " s): " << out << "\n";
  }
  double secs = elapsed();
  double checkSecs = secs - minimiseTime;
  std::cout << "\ndifftest summary: " << n << " programs from seed " << o.seed << " in "
            << static_cast<int>(secs) << " s (" << (checkSecs > 0 ? n / checkSecs : 0)
            << " programs/s checking, minimising " << static_cast<int>(minimiseTime) << " s)\n";
  std::cout << "features (programs using each):\n";
  for (const auto &[f, c] : features)
    std::cout << "  " << f << " " << c << "\n";
  std::cout << "issue 32's features (programs covering each; 0 is a gap):\n";
  for (const FeatureGroup &g : featureGroups()) {
    int64_t c = groupCounts[g.name];
    std::cout << "  " << g.name << " " << c << "\n";
  }
  std::cout << "not interpreted, by reason:";
  if (notInterpreted.empty())
    std::cout << " none";
  std::cout << "\n";
  for (const auto &[why, c] : notInterpreted)
    std::cout << "  " << c << "  " << why << "\n";
  int64_t failed = 0;
  std::cout << "failures by class:";
  if (failures.empty())
    std::cout << " none";
  std::cout << "\n";
  for (const auto &[cls, seeds] : failures) {
    failed += static_cast<int64_t>(seeds.size());
    std::cout << "  " << cls << " " << seeds.size() << ": seeds";
    for (size_t i = 0; i < seeds.size() && i < 12; ++i)
      std::cout << " " << seeds[i];
    std::cout << (seeds.size() > 12 ? " ..." : "") << "\n";
  }
  for (const std::string &s : saved)
    std::cout << "saved " << s << "\n";
  return failed ? 1 : 0;
}
