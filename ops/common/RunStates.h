//===- RunStates.h - Per-run state of a repeatable launch -------*- C++ -*-===//
///
/// \file
/// A repeatable executor may run on several streams at once, so whatever a
/// run writes (the operator's own scratch buffers, and the argument packs
/// that point into them) must belong to that run. RunStates keeps a pool of
/// such states: a run takes a free one, or clones the first when all are
/// taken (as many as there were concurrent runs, reused after), and gives
/// it back when done. A single-stream decode loop keeps using the first.
///
/// `State` provides `std::unique_ptr<State> clone() const`, which reads only
/// what no run writes (the packs, the buffers' sizes: never their contents,
/// which a concurrent run may be writing) and gives the clone fresh buffers
/// with its packs relocated into them (rt::ArgPack::relocate).
///
//===----------------------------------------------------------------------===//
#ifndef TILEJIT_OPS_COMMON_RUNSTATES_H
#define TILEJIT_OPS_COMMON_RUNSTATES_H

#include "ops/host/Status.h"

#include <memory>
#include <mutex>
#include <utility>
#include <vector>

namespace tilejit::ops {

/// A pool of per-run states; thread-safe.
template <class State> class RunStates {
public:
  /// The pool starts with `first`, which clones copy.
  explicit RunStates(std::unique_ptr<State> first) : first_(first.get()) {
    free_.push_back(std::move(first));
  }
  RunStates(const RunStates &) = delete;
  RunStates &operator=(const RunStates &) = delete;

  /// The first state (for phase 1 to fill before any run).
  State &first() { return *first_; }

  /// Runs `fn(State &)` with a state no concurrent run holds.
  template <class Fn> host::Status run(Fn &&fn) {
    std::unique_ptr<State> state;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!free_.empty()) {
        state = std::move(free_.back());
        free_.pop_back();
      }
    }
    // The first state is never freed before the pool, so cloning it while
    // another run uses it is safe (clone() reads no run's writes).
    if (!state)
      state = first_->clone();
    host::Status status = fn(*state);
    std::lock_guard<std::mutex> lock(mutex_);
    free_.push_back(std::move(state));
    return status;
  }

private:
  State *first_;
  std::mutex mutex_;
  std::vector<std::unique_ptr<State>> free_;
};

/// A buffer of `T` a clone allocates afresh (zeroed) and relocates its
/// packs into: `buffer` of the clone, given the original's.
template <class T, class... Packs>
void relocateBuffer(const std::vector<T> &from, std::vector<T> &to,
                    Packs &...packs) {
  to.assign(from.size(), T());
  (packs.relocate(from.data(), from.size() * sizeof(T), to.data()), ...);
}

} // namespace tilejit::ops

#endif
