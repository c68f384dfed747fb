//===- Stream.cpp - In-order asynchronous work queues ---------------------===//
//
// One mutex guards the queue, the busy flag and the first error; the worker
// runs each task outside the lock so submitters never wait for a kernel.
// A task's recent-error message is recorded on the worker thread, so the
// error is carried as a Status and re-recorded by whoever synchronises.
// Failures are kept per submitting thread (few: one per thread that failed
// and has not synchronised since), so a linear search is enough.
//
//===----------------------------------------------------------------------===//
#include "ops/host/Stream.h"

#include <algorithm>
#include <vector>

namespace tilejit::host {

namespace {
/// The calling thread's token: one per thread, destroyed when it exits.
const std::shared_ptr<const char> &threadToken() {
  thread_local const std::shared_ptr<const char> token =
      std::make_shared<const char>(0);
  return token;
}
/// True if `a` and `b` are the same thread's token. Owner equivalence holds
/// after the thread exits: a weak_ptr keeps the control block, so no other
/// thread's token can take its place.
template <typename A, typename B> bool sameOwner(const A &a, const B &b) {
  return !a.owner_before(b) && !b.owner_before(a);
}
} // namespace

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
    queue_.push_back({std::move(task), threadToken()});
    ++submitted_;
  }
  workAvailable_.notify_one();
}

Status Stream::synchronize() {
  std::unique_lock<std::mutex> lock(mutex_);
  const uint64_t target = submitted_;
  idle_.wait(lock, [&] { return finished_ >= target; });
  const std::shared_ptr<const char> &self = threadToken();
  auto own = std::find_if(failures_.begin(), failures_.end(),
                          [&](const Failure &f) { return sameOwner(f.owner, self); });
  if (own != failures_.end()) {
    Status result = std::move(own->status);
    failures_.erase(own);
    return result;
  }
  auto orphan = std::find_if(failures_.begin(), failures_.end(),
                             [](const Failure &f) { return f.owner.expired(); });
  if (orphan != failures_.end()) {
    Status result(orphan->status.code(),
                  "work a thread that has since exited queued on this stream "
                  "failed: " +
                      orphan->status.message());
    failures_.erase(orphan);
    return result;
  }
  if (failures_.empty())
    return Status::ok();
  const Status &other = failures_.front().status;
  return Status(other.code(),
                "work another thread queued on this stream failed: " +
                    other.message());
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
    Task task = std::move(queue_.front().task);
    Owner owner = std::move(queue_.front().owner);
    queue_.pop_front();
    const bool skip =
        std::any_of(failures_.begin(), failures_.end(),
                    [&](const Failure &f) { return sameOwner(f.owner, owner); });
    busy_ = true;
    lock.unlock();
    Status status = skip ? Status::ok() : task();
    // Destroy the task (and whatever it owns, e.g. an executor) before the
    // stream reports idle.
    task = nullptr;
    lock.lock();
    busy_ = false;
    ++finished_;
    if (!skip)
      ++completed_;
    if (!status.isOk())
      failures_.push_back({owner, std::move(status)});
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
std::vector<std::shared_ptr<Stream>> &liveStreams() {
  static std::vector<std::shared_ptr<Stream>> streams;
  return streams;
}
auto findLocked(const void *stream) {
  auto &streams = liveStreams();
  return std::find_if(
      streams.begin(), streams.end(),
      [&](const std::shared_ptr<Stream> &s) { return s.get() == stream; });
}
} // namespace

void registerStream(std::shared_ptr<Stream> stream) {
  std::lock_guard<std::mutex> lock(registryMutex);
  liveStreams().push_back(std::move(stream));
}

std::shared_ptr<Stream> unregisterStream(const void *stream) {
  std::lock_guard<std::mutex> lock(registryMutex);
  auto it = findLocked(stream);
  if (it == liveStreams().end())
    return nullptr;
  std::shared_ptr<Stream> found = std::move(*it);
  liveStreams().erase(it);
  return found;
}

std::shared_ptr<Stream> findStream(const void *stream) {
  std::lock_guard<std::mutex> lock(registryMutex);
  auto it = findLocked(stream);
  return it == liveStreams().end() ? nullptr : *it;
}

bool isRegisteredStream(const void *stream) {
  return findStream(stream) != nullptr;
}

Status synchronizeAllStreams() {
  // References, not pointers: a stream destroyed meanwhile stays alive
  // until this loop lets go of it.
  std::vector<std::shared_ptr<Stream>> streams;
  {
    std::lock_guard<std::mutex> lock(registryMutex);
    streams = liveStreams();
  }
  Status first;
  for (const std::shared_ptr<Stream> &s : streams) {
    Status st = s->synchronize();
    if (!st.isOk() && first.isOk())
      first = std::move(st);
  }
  return first;
}

} // namespace tilejit::host
