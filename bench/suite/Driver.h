//===- Driver.h - `tilejit bench`: every case, one JSON document, a report -*-
//C++ -*-===//
///
/// \file
/// Runs the suite's cases (those whose name matches a filter): the machine's
/// arithmetic peaks first, each case's bandwidths at its working-set size
/// before it runs, a progress line per case on stderr, then the result: one
/// JSON document (host, CPU flags, commit, limits, the peer's set-up, every
/// case, and with --threads the memory-bound cases and the limits at each
/// other thread count) or one text line per case, and, on request, the report
/// (bench/report/make_report.py: the document, Markdown tables and plots in
/// one directory).
///
//===----------------------------------------------------------------------===//
#ifndef TILEJIT_BENCH_SUITE_DRIVER_H
#define TILEJIT_BENCH_SUITE_DRIVER_H

#include "llvm/Support/Error.h"

#include <ostream>
#include <string>
#include <vector>

namespace tilejit::bench {

struct DriverArgs {
  std::string filter;    ///< ECMAScript regex searched in case names; empty: all
  std::string reportDir; ///< write the document and the report here (empty: none)
  std::string python;    ///< the interpreter for the peer and the report
                         ///< (empty: /usr/bin/python3 where present)
  std::string commit;    ///< the build's commit
  std::string version;   ///< the release
  bool json = false;     ///< the result is the JSON document (else text lines)
  bool quick = false;    ///< few samples (CI)
  bool noPeer = false;   ///< skip the PyTorch peer
  bool list = false;     ///< print the case names only
  int samples = 15;
  /// The thread counts to run, as given to --threads: a comma-separated
  /// list of counts and `all` (e.g. "1,2,all"); by default all only. Every
  /// case runs at all threads (the document's `cases`); the memory-bound
  /// ones (bound read or copy) run again at each other count, with the
  /// limits measured at that count (the document's `scaling`).
  std::string threads = "all";
};

/// The counts of a --threads list, ascending, each once: `all` is `all`,
/// a count is a whole number from 1 to `most` (`mostWhy` says what sets
/// it: "the 16 cores", "TILEJIT_NUM_THREADS=4"). An error
/// (std::errc::invalid_argument) names the item that is not one: empty,
/// 0, negative, above `most`, not a number.
llvm::Expected<std::vector<int>> parseThreadCounts(const std::string &list,
                                                   int all, int most,
                                                   const std::string &mostWhy);

/// The command; writes its result to `out` (the JSON document with
/// args.json, else one line per case; with args.list, the case names).
/// Returns the exit status: 0 when every case ran, 1 when one failed (its
/// error is in the result). An error says why nothing could be run or
/// written: a bad filter, a bad --threads list or no matching case
/// (std::errc::invalid_argument),
/// a report that could not be written or made.
llvm::Expected<int> runBenchCommand(const DriverArgs &args, std::ostream &out);

} // namespace tilejit::bench

#endif
