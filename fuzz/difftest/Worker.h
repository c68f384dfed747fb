//===- Worker.h - Checking programs in a child process -*- C++ -*-===//
///
/// \file
/// Compiled code is never freed (one JIT per process keeps every kernel),
/// and a miscompiled program may crash or never end: the differential
/// tester checks programs in a child process (the same executable with
/// `--worker`), one job per line on its standard input, one result per job
/// on its standard output. The parent never compiles anything: it restarts
/// the child after a number of jobs, and when the child dies (class
/// "crash") or a job runs past its time limit (class "hang", the child is
/// killed).
///
//===----------------------------------------------------------------------===//
#ifndef TILEJIT_FUZZ_DIFFTEST_WORKER_H
#define TILEJIT_FUZZ_DIFFTEST_WORKER_H

#include <string>
#include <sys/types.h>

namespace tilejit::difftest {

struct JobResult {
  std::string failureClass; ///< "" passed; "crash", "hang" from the parent
  std::string notInterpreted;
  std::string detail;
};

class Worker {
public:
  /// `self`: the executable; `jobsPerChild`: jobs before a fresh child;
  /// `timeoutSeconds`: one job's limit.
  Worker(std::string self, int jobsPerChild, double timeoutSeconds)
      : self_(std::move(self)), jobsPerChild_(jobsPerChild), timeout_(timeoutSeconds) {}
  ~Worker() { stop(); }
  Worker(const Worker &) = delete;
  Worker &operator=(const Worker &) = delete;

  /// Runs one job: "seed S" (the generated program S) or "file PATH" (a
  /// program with its launch in the regression format).
  JobResult run(const std::string &job);
  void stop();

private:
  bool start();
  std::string self_;
  int jobsPerChild_;
  double timeout_;
  pid_t pid_ = -1;
  int toChild_ = -1, fromChild_ = -1;
  int jobs_ = 0;
  std::string buffer_;
};

/// The child's loop (`--worker`): reads jobs until end of input.
int workerMain();

/// Escapes newlines and tabs so that a result fits on one line, and back.
std::string escapeLine(const std::string &s);
std::string unescapeLine(const std::string &s);

} // namespace tilejit::difftest

#endif
