//===- Driver.h - `tilejit bench`: every case, one JSON document, a report -*-
//C++ -*-===//
///
/// \file
/// Runs the suite's cases (those whose name matches a filter): the machine's
/// arithmetic peaks first, each case's bandwidths at its working-set size
/// before it runs, a progress line per case on stderr, then the result: one
/// JSON document (host, CPU flags, commit, limits, the peer's set-up, every
/// case) or one text line per case, and, on request, the report
/// (bench/report/make_report.py: the document, Markdown tables and plots in
/// one directory).
///
//===----------------------------------------------------------------------===//
#ifndef TILEJIT_BENCH_SUITE_DRIVER_H
#define TILEJIT_BENCH_SUITE_DRIVER_H

#include "llvm/Support/Error.h"

#include <ostream>
#include <string>

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
};

/// The command; writes its result to `out` (the JSON document with
/// args.json, else one line per case; with args.list, the case names).
/// Returns the exit status: 0 when every case ran, 1 when one failed (its
/// error is in the result). An error says why nothing could be run or
/// written: a bad filter or no matching case (std::errc::invalid_argument),
/// a report that could not be written or made.
llvm::Expected<int> runBenchCommand(const DriverArgs &args, std::ostream &out);

} // namespace tilejit::bench

#endif
