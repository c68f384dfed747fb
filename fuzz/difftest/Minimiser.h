//===- Minimiser.h - Shrinking a failing program while it still fails -*- C++ -*-===//
///
/// \file
/// Greedy reduction in the manner of C-Reduce: each step tries one smaller
/// variant of the program (a statement deleted or replaced by its body, an
/// `else` dropped, an expression replaced by one of its operands or by a
/// constant of its type, a named argument dropped, a tile size or a tensor
/// axis shrunk, the unused parameters, an argument, a compile-time parameter
/// or the grid dropped) and keeps it when the
/// oracle still gives the same failure class; it stops at a fixed point or
/// when the budget is spent. Variants the compiler rejects are simply not
/// kept (unless the class being reduced is "rejected" itself).
///
//===----------------------------------------------------------------------===//
#ifndef TILEJIT_FUZZ_DIFFTEST_MINIMISER_H
#define TILEJIT_FUZZ_DIFFTEST_MINIMISER_H

#include "Program.h"

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace tilejit::difftest {

struct MinimiseBudget {
  int maxTries = 400;
  double maxSeconds = 90;
  /// No try starts after this (the campaign's own end); a try that has
  /// started runs to its end.
  std::optional<std::chrono::steady_clock::time_point> deadline;
};

/// The compile-time parameters and arguments that the kernel's text names
/// only where it declares them.
std::vector<std::string> unusedParameters(const Program &p);
/// Drops the compile-time parameters and arguments named; false when none was.
bool dropParameters(Program &p, const std::vector<std::string> &names);

/// Returns the smallest variant of `p` found for which `classify` still
/// returns `failureClass`; `tries` counts the variants tried.
Program minimise(const Program &p, const std::string &failureClass,
                 const std::function<std::string(const Program &)> &classify,
                 const MinimiseBudget &budget, int &tries);

/// Recomputes a tensor's strides and storage for its (new) shape, keeping
/// its layout: the order of its axes in memory, padding and offset.
void relayout(ArgSpec &a, const std::vector<int64_t> &oldShape);

} // namespace tilejit::difftest

#endif
