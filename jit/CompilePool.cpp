//===- CompilePool.cpp - The process's bounded pool of compile threads ----===//
#include "jit/CompilePool.h"

#include "jit/Options.h"

#include <algorithm>

namespace tilejit::jit {

namespace {
thread_local bool tlsOnPool = false;
} // namespace

CompilePool::CompilePool() {
  unsigned n = Options::process().compileThreads();
  wanted_ = n ? n : std::max(1u, std::thread::hardware_concurrency());
}

CompilePool &CompilePool::process() {
  // Never destroyed: its threads wait for work until the process ends, and
  // a task may still run while static destructors do.
  static CompilePool *pool = new CompilePool();
  return *pool;
}

llvm::Error CompilePool::setThreads(unsigned n) {
  std::lock_guard lock(mutex_);
  if (n == 0)
    return llvm::createStringError("the compile pool needs at least one thread");
  if (!threads_.empty())
    return llvm::createStringError("the compile pool has started with " +
                                   std::to_string(threads_.size()) + " threads");
  wanted_ = n;
  return llvm::Error::success();
}

unsigned CompilePool::threads() const {
  std::lock_guard lock(mutex_);
  return wanted_;
}

bool CompilePool::onPoolThread() { return tlsOnPool; }

void CompilePool::startLocked() {
  for (unsigned i = 0; i < wanted_; ++i) {
    threads_.emplace_back([this] { work(); });
    threads_.back().detach();
  }
}

void CompilePool::submit(std::function<void()> task) {
  {
    std::lock_guard lock(mutex_);
    if (threads_.empty())
      startLocked();
    queue_.push_back(std::move(task));
  }
  ready_.notify_one();
}

void CompilePool::work() {
  tlsOnPool = true;
  for (;;) {
    std::function<void()> task;
    {
      std::unique_lock lock(mutex_);
      ready_.wait(lock, [&] { return !queue_.empty(); });
      task = std::move(queue_.front());
      queue_.pop_front();
    }
    task();
  }
}

} // namespace tilejit::jit
