//===- CompilePool.h - The process's bounded pool of compile threads -*- C++ -*-===//
///
/// \file
/// One pool of threads per process runs every compile that is not the
/// caller's own: `tilejit::compileAsync`, the kernels aclnn phase 1 and the
/// operators miss (Compiler::getPooled), `tilejit warm`. Its size is
/// TILEJIT_COMPILE_THREADS (every core where unset), so however many callers
/// meet new shapes at once, at most that many compiles run, and a caller
/// that does not want to wait need not.
///
/// Threads start on first use and live as long as the process; tasks run in
/// the order submitted.
///
//===----------------------------------------------------------------------===//
#ifndef TILEJIT_JIT_COMPILEPOOL_H
#define TILEJIT_JIT_COMPILEPOOL_H

#include "llvm/Support/Error.h"

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace tilejit::jit {

class CompilePool {
public:
  /// The process's pool.
  static CompilePool &process();

  /// Sets the number of threads before the pool's first use (`tilejit warm
  /// --threads`); an error once it has started.
  llvm::Error setThreads(unsigned n);
  /// The threads it runs (or will run).
  unsigned threads() const;

  /// Queues `task`; a pool thread runs it.
  void submit(std::function<void()> task);

  /// Whether the calling thread is one of the pool's (a task that would wait
  /// on the pool runs its work inline instead).
  static bool onPoolThread();

private:
  CompilePool();
  void startLocked();
  void work();

  mutable std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<std::function<void()>> queue_;
  std::vector<std::thread> threads_;
  unsigned wanted_;
};

} // namespace tilejit::jit

#endif
