//===- Launch.cpp - Runs a compiled kernel's grid across cores ------------===//
///
/// \file
/// The grid's programs are distributed over OpenMP threads with a static
/// schedule (the same program always runs on the same thread index for a
/// given thread count, so results are deterministic). Each thread owns a
/// 64-byte-aligned scratch area for the program's local buffers, reused across
/// launches.
///
//===----------------------------------------------------------------------===//
#include "jit/Compiler.h"
#include "jit/Errors.h"
#include "jit/Options.h"

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <string>

namespace tilejit::jit {

/// The first bounds violation of a debug-mode launch, in program order (the
/// lowest program that reports one, its first report): what a sequential
/// run would meet first, whatever the threads.
struct BoundsRecord {
  std::atomic<int64_t> program{INT64_MAX};
  std::mutex mutex;
  std::string message;
};
/// The record of the launch whose program this thread runs (null outside),
/// and that program's index.
thread_local BoundsRecord *currentRecord = nullptr;
thread_local int64_t currentProgram = 0;

namespace {

struct Scratch {
  void *data = nullptr;
  size_t bytes = 0;
  ~Scratch() { std::free(data); }
  void *reserve(size_t n) {
    if (n > bytes) {
      std::free(data);
      bytes = (n + 4095) / 4096 * 4096;
      data = std::aligned_alloc(64, bytes);
      if (!data)
        bytes = 0;
    }
    return data;
  }
};

thread_local Scratch threadScratch;

/// TILEJIT_NUM_THREADS, read once per process; 0 for no cap.
int threadCap() {
  static const int cap = static_cast<int>(Options::process().numThreads());
  return cap;
}

} // namespace

llvm::Error CompiledKernel::check(const rt::ArgPack &args) const {
  auto fail = [&](size_t i, const std::string &what, ErrorKind kind = ErrorKind::Type) {
    const rt::ParamSig &p = signature_[i];
    return makeError(kind, "argument " + std::to_string(i) + " ('" + p.name + "') of kernel " +
                               key_.fields().kernel + ": " + what);
  };
  auto declared = [](const rt::ParamSig &p) {
    return p.tensor ? "a tensor gm<" + std::string(rt::elemTypeName(p.type)) + "> of rank " +
                          std::to_string(p.rank)
                    : "a scalar " + std::string(rt::elemTypeName(p.type));
  };
  if (args.size() != signature_.size()) {
    std::string names;
    for (const rt::ParamSig &p : signature_)
      names += (names.empty() ? "" : ", ") + p.name;
    return makeError(ErrorKind::Type, "kernel " + key_.fields().kernel + " takes " +
                                          std::to_string(signature_.size()) + " arguments (" +
                                          names + "); given " + std::to_string(args.size()));
  }
  for (size_t i = 0; i < signature_.size(); ++i) {
    const rt::ParamSig &p = signature_[i];
    const rt::ArgPack::Entry &e = args.entry(i);
    if (e.name && p.name != e.name)
      return fail(i, "given an argument meant for '" + std::string(e.name) + "'");
    if (e.tensor != p.tensor || e.type != p.type)
      return fail(i, "is " + declared(p) + "; given " +
                         (e.tensor ? "a tensor of " : "a scalar ") + rt::elemTypeName(e.type));
    if (!p.tensor)
      continue;
    const auto *d = static_cast<const rt::TensorDesc *>(args.data()[i]);
    if (e.givenRank != p.rank)
      return fail(i, "is " + declared(p) + "; given rank " + std::to_string(e.givenRank),
                  ErrorKind::Value);
    if (d->rank != p.rank)
      return fail(i, "is " + declared(p) + "; given sizes and strides of different lengths",
                  ErrorKind::Value);
    bool empty = false;
    for (int64_t a = 0; a < std::min<int64_t>(d->rank, rt::kMaxRank); ++a) {
      if (d->sizes[a] < 0)
        return fail(i, "size " + std::to_string(d->sizes[a]) + " of axis " + std::to_string(a) +
                           " is negative",
                    ErrorKind::Value);
      empty |= d->sizes[a] == 0;
    }
    if (!d->data && !empty)
      return fail(i, "has elements but no data (a null pointer)", ErrorKind::Value);
  }
  return llvm::Error::success();
}

llvm::Error CompiledKernel::launch(const rt::ArgPack &args, int numThreads) const {
  if (llvm::Error err = check(args))
    return err;
  return run(args.data(), numThreads);
}

llvm::Error CompiledKernel::run(void *const *args, int numThreads) const {
  int64_t grid[3] = {1, 1, 1};
  int64_t rc = grid_(args, grid);
  if (rc != 0) {
    size_t k = static_cast<size_t>(rc - 1);
    return makeError(ErrorKind::Value, k < constraintMessages_.size()
                                           ? constraintMessages_[k]
                                           : "shape constraint violated");
  }
  for (int64_t &g : grid)
    g = std::max<int64_t>(g, 0);
  int64_t total;
  if (__builtin_mul_overflow(grid[0], grid[1], &total) ||
      __builtin_mul_overflow(total, grid[2], &total))
    return makeError(ErrorKind::Value, "kernel " + key_.fields().kernel + ": a grid of " +
                                   std::to_string(grid[0]) + " x " + std::to_string(grid[1]) +
                                   " x " + std::to_string(grid[2]) +
                                   " programs is more than int64 counts");
  if (total == 0)
    return llvm::Error::success();
  int threads = omp_get_max_threads();
  if (threadCap())
    threads = std::min(threads, threadCap());
  if (numThreads > 0)
    threads = std::min(threads, numThreads);
  threads = static_cast<int>(std::min<int64_t>(threads, total));
  const size_t scratch = static_cast<size_t>(std::max<int64_t>(scratchBytes_, 64));
  rt::ProgramFn program = program_;
  // Debug mode: the first bounds violation any program reports stops the
  // programs not yet started and becomes the launch's error.
  const bool debug = key_.fields().debug;
  BoundsRecord record;
  std::atomic<bool> noScratch{false};
  auto runRange = [&](int64_t begin, int64_t end, void *mem) {
    if (!mem) {
      noScratch = true;
      return;
    }
    BoundsRecord *const saved = currentRecord;
    if (debug)
      currentRecord = &record;
    int64_t pid[3];
    for (int64_t i = begin; i < end; ++i) {
      // Programs after one that reported need not run.
      if (debug && i > record.program.load(std::memory_order_relaxed))
        break;
      currentProgram = i;
      pid[0] = i % grid[0];
      pid[1] = (i / grid[0]) % grid[1];
      pid[2] = i / (grid[0] * grid[1]);
      program(args, pid, grid, mem);
    }
    currentRecord = saved;
  };
  if (threads <= 1) {
    runRange(0, total, threadScratch.reserve(scratch));
  } else {
#pragma omp parallel num_threads(threads)
    {
      void *mem = threadScratch.reserve(scratch);
      int t = omp_get_thread_num(), n = omp_get_num_threads();
      int64_t chunk = total / n, extra = total % n;
      int64_t begin = t * chunk + std::min<int64_t>(t, extra);
      int64_t end = begin + chunk + (t < extra ? 1 : 0);
      runRange(begin, end, mem);
    }
  }
  if (noScratch)
    return llvm::createStringError("kernel " + key_.fields().kernel + ": cannot allocate " +
                                   std::to_string(scratch) + " bytes of scratch per thread");
  if (record.program != INT64_MAX)
    return llvm::createStringError("bounds violation in kernel " + key_.fields().kernel + ": " +
                                   record.message);
  return llvm::Error::success();
}

} // namespace tilejit::jit

namespace tilejit::rt {

extern "C" TILEJIT_API void tilejit_rt_bounds_violation(const char *site, int64_t axis, int64_t index,
                                                int64_t extent, int64_t size) {
  jit::BoundsRecord *r = jit::currentRecord;
  if (!r)
    return; // a debug kernel's program run outside a launch: nothing to stop
  std::lock_guard lock(r->mutex);
  if (jit::currentProgram >= r->program)
    return; // an earlier program's report, or this program's first, stands
  r->message = std::string(site) + ": " +
               (extent == 1 ? "index " + std::to_string(index)
                            : "region [" + std::to_string(index) + ", " + std::to_string(index) +
                                  " + " + std::to_string(extent) + ")") +
               " on axis " + std::to_string(axis) + " is outside [0, " + std::to_string(size) +
               ")";
  r->program = jit::currentProgram;
}

} // namespace tilejit::rt
