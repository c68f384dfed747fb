//===- Stream.h - In-order asynchronous work queues -------------*- C++ -*-===//
///
/// \file
/// A Stream stands in for a device queue: work submitted to it runs in
/// submission order on the stream's own worker thread, asynchronously to
/// the submitter. synchronize() waits until everything submitted has run.
///
/// Several threads may share a stream, so a failure belongs to the thread
/// that submitted the failing task: that thread's later tasks are skipped
/// (they would read its unfinished results) until it synchronises, which
/// reports the failure and clears it; other threads' tasks still run. A
/// synchronize() by a thread with no failure of its own reports another
/// thread's failure without clearing it (so neither thread's work fails
/// silently); the failing thread's own synchronize() clears it. A failure
/// whose thread has exited can never reach its owner: the next synchronize()
/// by any thread reports it and clears it. Threads are told apart by a token
/// that lives as long as the thread, not by std::thread::id, whose values
/// the system reuses: a new thread never inherits a dead one's failure.
///
/// The default stream (a null aclrtStream) is not a Stream: work for it runs
/// at once on the calling thread (see runOnStream).
///
//===----------------------------------------------------------------------===//
#ifndef TILEJIT_OPS_HOST_STREAM_H
#define TILEJIT_OPS_HOST_STREAM_H

#include "ops/host/Status.h"

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <memory>
#include <thread>
#include <vector>

namespace tilejit::host {

/// An in-order queue of host work with its own worker thread.
///
/// Aligned to 256 bytes, so a handle's lowest byte is zero: the upstream
/// example programs copy the layout string into a char array one byte too
/// short (`char s[len]; strcpy(s, ...)`), and the terminating NUL can land
/// on the lowest byte of the neighbouring aclrtStream variable; with this
/// alignment that write leaves the handle intact.
class alignas(256) Stream {
public:
  /// A unit of work; its status decides whether later tasks run.
  using Task = std::function<Status()>;

  /// Starts the worker thread.
  Stream();
  /// Waits for the pending work, then stops the worker.
  ~Stream();
  Stream(const Stream &) = delete;
  Stream &operator=(const Stream &) = delete;

  /// Queues `task` behind everything submitted before; returns at once.
  /// The calling thread owns the task's failure.
  void submit(Task task);
  /// Waits until every task submitted before the call has run (or been
  /// skipped; later submissions by other threads do not hold it up); returns
  /// the calling thread's first failure since its last synchronize() and
  /// clears it, else the failure of a thread that has exited (cleared), else
  /// another live thread's pending failure (not cleared), else success.
  Status synchronize();
  /// True if the calling thread is this stream's worker.
  bool isWorkerThread() const;
  /// The number of tasks that ran (not skipped) since creation.
  uint64_t completedTasks() const;

private:
  void workerLoop();

  /// The submitting thread's token: expires when the thread exits.
  using Owner = std::weak_ptr<const char>;
  /// A queued task and the thread that submitted it.
  struct Entry {
    Task task;
    Owner owner;
  };
  /// The first failure of one submitting thread, not yet reported to it.
  struct Failure {
    Owner owner;
    Status status;
  };

  mutable std::mutex mutex_;
  std::condition_variable workAvailable_;
  std::condition_variable idle_;
  std::deque<Entry> queue_;
  bool busy_ = false;
  bool stopping_ = false;
  uint64_t submitted_ = 0; ///< tasks queued since creation
  uint64_t finished_ = 0;  ///< of which run or skipped (in order)
  std::vector<Failure> failures_; ///< in the order they happened
  uint64_t completed_ = 0;
  std::thread worker_;
};

/// Runs `task` on `stream`: queued when `stream` is non-null (returns
/// success), at once on the calling thread when it is null (returns the
/// task's status).
Status runOnStream(Stream *stream, Stream::Task task);

/// The registry of the streams created through the C API (for handle checks
/// and aclrtSynchronizeDevice). It holds each stream by a shared_ptr, and so
/// does everyone who uses one after looking it up: a stream destroyed while
/// another thread synchronises it or submits to it is freed by whoever lets
/// go of it last, never while in use.
void registerStream(std::shared_ptr<Stream> stream);
/// Unregisters a stream and hands back the registry's reference; null if
/// `stream` was not registered.
std::shared_ptr<Stream> unregisterStream(const void *stream);
/// The live registered stream `stream` points to, or null.
std::shared_ptr<Stream> findStream(const void *stream);
/// True if `stream` is a live registered stream.
bool isRegisteredStream(const void *stream);
/// Synchronises every registered stream; returns the first failure.
Status synchronizeAllStreams();

} // namespace tilejit::host

#endif
