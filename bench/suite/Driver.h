//===- Driver.h - `tilejit bench`: every case, one JSON document, a report -*-
//C++ -*-===//
///
/// \file
/// Runs the suite's cases (those whose name matches a filter): the machine's
/// arithmetic peaks first, each case's bandwidths at its working-set size
/// before it runs, a progress line per case on stderr, then one JSON
/// document (host, CPU flags, commit, limits, the peer's set-up, every case)
/// and, on request, the report (bench/report/make_report.py: Markdown
/// tables and plots).
///
//===----------------------------------------------------------------------===//
#ifndef TILEJIT_BENCH_SUITE_DRIVER_H
#define TILEJIT_BENCH_SUITE_DRIVER_H

#include <string>

namespace tilejit::bench {

struct DriverArgs {
  std::string filter;   ///< ECMAScript regex searched in case names; empty: all
  std::string jsonPath; ///< where the document goes ("-" or empty: stdout
                        ///< unless a report is made)
  std::string reportDir; ///< make the report here (empty: none)
  std::string python;    ///< the interpreter for the peer and the report
                         ///< (empty: /usr/bin/python3 where present)
  std::string commit;    ///< the build's commit
  std::string version;   ///< the release
  bool quick = false;    ///< few samples (CI)
  bool noPeer = false;   ///< skip the PyTorch peer
  bool list = false;     ///< print the case names only
  int samples = 15;
};

/// The command; its exit status (0: every case ran).
int runBenchCommand(const DriverArgs &args);

} // namespace tilejit::bench

#endif
