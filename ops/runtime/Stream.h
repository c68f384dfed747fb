//===- Stream.h - In-order asynchronous work queues -------------*- C++ -*-===//
///
/// \file
/// A Stream stands in for a device queue: work submitted to it runs in
/// submission order on the stream's own worker thread, asynchronously to
/// the submitter. synchronize() waits until everything submitted has run and
/// reports the first failure since the previous synchronize(); once a task
/// fails, the tasks queued behind it are skipped (they would read its
/// unfinished results) until that synchronize() clears the error.
///
/// The default stream (a null aclrtStream) is not a Stream: work for it runs
/// at once on the calling thread (see runOnStream).
///
//===----------------------------------------------------------------------===//
#ifndef TILEJIT_OPS_RUNTIME_STREAM_H
#define TILEJIT_OPS_RUNTIME_STREAM_H

#include "ops/runtime/Status.h"

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

namespace tilejit::runtime {

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
  void submit(Task task);
  /// Waits until every submitted task has run (or been skipped); returns
  /// the first failure since the last synchronize() and clears it.
  Status synchronize();
  /// True if the calling thread is this stream's worker.
  bool isWorkerThread() const;
  /// The number of tasks that ran (not skipped) since creation.
  uint64_t completedTasks() const;

private:
  void workerLoop();

  mutable std::mutex mutex_;
  std::condition_variable workAvailable_;
  std::condition_variable idle_;
  std::deque<Task> queue_;
  bool busy_ = false;
  bool stopping_ = false;
  Status firstError_;
  uint64_t completed_ = 0;
  std::thread worker_;
};

/// Runs `task` on `stream`: queued when `stream` is non-null (returns
/// success), at once on the calling thread when it is null (returns the
/// task's status).
Status runOnStream(Stream *stream, Stream::Task task);

/// Registers a stream created through the C API (for handle checks and
/// aclrtSynchronizeDevice).
void registerStream(Stream *stream);
/// Unregisters a stream; returns false if it was not registered.
bool unregisterStream(Stream *stream);
/// True if `stream` is a live registered stream.
bool isRegisteredStream(const Stream *stream);
/// Synchronises every registered stream; returns the first failure.
Status synchronizeAllStreams();

} // namespace tilejit::runtime

#endif
