//===- Stream.cpp - In-order asynchronous work queues ---------------------===//
//
// One mutex guards the queue, the busy flag and the first error; the worker
// runs each task outside the lock so submitters never wait for a kernel.
// A task's recent-error message is recorded on the worker thread, so the
// error is carried as a Status and re-recorded by whoever synchronises.
//
//===----------------------------------------------------------------------===//
#include "ops/runtime/Stream.h"

#include <algorithm>
#include <vector>

namespace tilejit::runtime {

Stream::Stream() {
  worker_ = std::thread([this] { workerLoop(); });
}

Stream::~Stream() {
  {
    std::unique_lock<std::mutex> lock(mutex_);
    idle_.wait(lock, [this] { return queue_.empty() && !busy_; });
    stopping_ = true;
  }
  workAvailable_.notify_all();
  worker_.join();
}

void Stream::submit(Task task) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    queue_.push_back(std::move(task));
  }
  workAvailable_.notify_one();
}

Status Stream::synchronize() {
  std::unique_lock<std::mutex> lock(mutex_);
  idle_.wait(lock, [this] { return queue_.empty() && !busy_; });
  Status result = std::move(firstError_);
  firstError_ = Status::ok();
  return result;
}

bool Stream::isWorkerThread() const {
  return std::this_thread::get_id() == worker_.get_id();
}

uint64_t Stream::completedTasks() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return completed_;
}

void Stream::workerLoop() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (true) {
    workAvailable_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
    if (queue_.empty()) {
      if (stopping_)
        return;
      continue;
    }
    Task task = std::move(queue_.front());
    queue_.pop_front();
    bool skip = !firstError_.isOk();
    busy_ = true;
    lock.unlock();
    Status status = skip ? Status::ok() : task();
    // Destroy the task (and whatever it owns, e.g. an executor) before the
    // stream reports idle.
    task = nullptr;
    lock.lock();
    busy_ = false;
    if (!skip)
      ++completed_;
    if (!status.isOk() && firstError_.isOk())
      firstError_ = std::move(status);
    if (queue_.empty())
      idle_.notify_all();
  }
}

Status runOnStream(Stream *stream, Stream::Task task) {
  if (!stream)
    return task();
  stream->submit(std::move(task));
  return Status::ok();
}

namespace {
std::mutex registryMutex;
std::vector<Stream *> &liveStreams() {
  static std::vector<Stream *> streams;
  return streams;
}
} // namespace

void registerStream(Stream *stream) {
  std::lock_guard<std::mutex> lock(registryMutex);
  liveStreams().push_back(stream);
}

bool unregisterStream(Stream *stream) {
  std::lock_guard<std::mutex> lock(registryMutex);
  auto &streams = liveStreams();
  auto it = std::find(streams.begin(), streams.end(), stream);
  if (it == streams.end())
    return false;
  streams.erase(it);
  return true;
}

bool isRegisteredStream(const Stream *stream) {
  std::lock_guard<std::mutex> lock(registryMutex);
  const auto &streams = liveStreams();
  return std::find(streams.begin(), streams.end(), stream) != streams.end();
}

Status synchronizeAllStreams() {
  std::vector<Stream *> streams;
  {
    std::lock_guard<std::mutex> lock(registryMutex);
    streams = liveStreams();
  }
  Status first;
  for (Stream *s : streams) {
    Status st = s->synchronize();
    if (!st.isOk() && first.isOk())
      first = std::move(st);
  }
  return first;
}

} // namespace tilejit::runtime
