//===- Suite.h - The benchmark cases, shared by tilejit-bench and the CLI -*-
//C++ -*-===//
///
/// \file
/// One registry of benchmark cases, each a function that builds its problem,
/// times the generated operator alternately with its hand-written twin (and
/// the peer, where one is attached) and returns what it measured. Two
/// drivers run them: `tilejit bench` (progress lines, one JSON document, the
/// report) and the Google Benchmark binary `tilejit-bench` (one benchmark per
/// case, the same figures as counters), so each case exists once.
///
/// Timing rules, the same for every case:
///   - samples alternate: every sample calls each side (generated, twin,
///     peer) once, the order rotating from one sample to the next;
///   - a case whose data comes from memory ("cold", the default) reads a
///     separate flush buffer larger than the last-level cache before every
///     timed call, so no call is served from what the previous one left in
///     the cache; each flush read is timed too, which gives the memory read
///     bandwidth measured next to the calls (`read_GBs_paired`); a
///     copy-bound case also runs the copy probe that won at its working-set
///     size once per sample, after a flush (`copy_GBs_paired`);
///   - a case meant to be in the cache says so (`inCache`): its calls run
///     back to back and its read limit is the bandwidth of a warm read of a
///     separate buffer of the working set's size;
///   - times are medians; ratios are medians of the per-sample ratios;
///   - the roofline bound is max(bytes / bandwidth, FLOPs / peak) with the
///     limits of this host measured in the run: the copy bandwidth at the
///     case's working-set size from memory (a copy of that many bytes, read
///     plus written counted as the cases count them, each pass after a
///     flush), or the median of the paired copies where higher; the read
///     bandwidth likewise, or the median of the flush reads where higher;
///     warm for in-cache cases. Each is the best pass of several probes (one
///     stream per thread and several, prefetch, regular and non-temporal
///     stores: StreamPlan), since one loop's bandwidth is not the machine's;
///     the JSON document names the probe that won. A fraction is given only
///     for cases whose time is set by those limits (not decode-sized calls,
///     which report microseconds per call and calls per second).
///
//===----------------------------------------------------------------------===//
#ifndef TILEJIT_BENCH_SUITE_SUITE_H
#define TILEJIT_BENCH_SUITE_SUITE_H

#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace tilejit::bench {

class Peer;
class ReadProbe;

/// What bounds a case's time.
enum class Bound {
  Read,    ///< bytes read from memory (or the cache, for in-cache cases)
  Copy,    ///< bytes read + written, against the copy bandwidth
  Compute, ///< FLOPs against the arithmetic peak for the dtype
  Latency, ///< decode-sized: µs per call, no roofline fraction
  Compile, ///< compile latency: stage times, no roofline
};

const char *boundName(Bound b);

/// The machine's limits, measured in this process (per-core peaks times the
/// threads the kernels use).
struct Limits {
  int threads = 1;
  double fmaGflops = 0;     ///< f32 FMA, all threads
  double bf16DotGflops = 0; ///< vdpbf16ps, all threads (0: none)
  double amxGflops = 0;     ///< AMX tdpbf16ps, all threads (0: none)
  size_t llcBytes = 0;
  size_t flushBytes = 0;
  /// Read and copy bandwidth (GB/s, from memory: each pass after a flush)
  /// and warm read bandwidth, by working-set size in bytes: each the best
  /// pass of every probe (StreamPlan), with the probe that gave it and
  /// every probe's best (GB/s by plan name).
  struct Bandwidth {
    double readGBs = 0, copyGBs = 0, warmReadGBs = 0;
    std::string readPlan, copyPlan, warmReadPlan;
    std::map<std::string, double> readByPlan, copyByPlan, warmReadByPlan;
  };
  std::map<size_t, Bandwidth> bandwidth;
};

/// What one case measured. Seconds are medians over the samples.
struct Result {
  std::string name, op, note, error;
  Bound bound = Bound::Read;
  bool inCache = false;
  double workingSetBytes = 0, bytes = 0, flops = 0;
  int samples = 0;
  double genSeconds = 0, twinSeconds = 0, peerSeconds = 0;
  double vsTwin = 0, vsPeer = 0; ///< median of twin/gen, peer/gen (0: none)
  std::string twinNote, peerNote;
  double peerMaxAbsDiff = -1; ///< peer output vs tilejit's (-1: not compared)
  double readGBs = 0, copyGBs = 0, readGBsPaired = 0, copyGBsPaired = 0,
         peakGflops = 0;
  std::string peakName;
  double boundSeconds = 0, ofBound = 0;
  /// The probe whose bandwidth is the case's memory limit (StreamPlan name).
  std::string limitProbe;
  /// Extra named figures (compile stages in ms, ...).
  std::vector<std::pair<std::string, double>> extra;
};

struct Options {
  int samples = 15;      ///< alternating samples per case
  bool quick = false;    ///< fewer samples, for CI
  size_t flushBytes = 0; ///< 0: 1.5 x the last-level cache
  Peer *peer = nullptr;  ///< the PyTorch peer, if running
  /// tilejit's own Python package in a process of its own (python/ cases),
  /// if running.
  Peer *python = nullptr;
  std::string pythonNote; ///< why it is not running (python/ cases say so)
};

class Context;

/// One benchmark case.
struct Case {
  std::string name; ///< descriptive: op/scenario/shape/layout/dtype
  std::string op;   ///< operator group of the report
  std::function<Result(Context &)> run;
};

/// Every registered case, in registration order (file by file).
std::vector<Case> &registry();
/// Registers a case at static-initialisation time.
struct Registrar {
  Registrar(std::string name, std::string op,
            std::function<Result(Context &)> run);
};

/// One side of a timed comparison: a call, or nothing.
using Call = std::function<void()>;

/// The state a case runs with: options, limits, flush buffer.
class Context {
public:
  Context(const Options &opts, Limits &limits);
  ~Context();

  const Options &options() const { return opts_; }
  Limits &limits() { return limits_; }
  int samples() const { return opts_.quick ? 3 : opts_.samples; }
  Peer *peer() const { return opts_.peer; }
  Peer *python() const { return opts_.python; }

  /// Times `gen`, `twin` (if set) and the peer (if `withPeer` and the peer
  /// is set up for this case) alternately over `samples()` samples (or
  /// `n` if > 0), a flush before each call unless `r.inCache`, and fills
  /// r's times, ratios, bandwidth limits and roofline fraction.
  void measure(Result &r, const Call &gen, const Call &twin, bool withPeer,
               int n = 0);
  /// The same, `gen` against `other`'s `run` (another process, set up for
  /// this case): r's peer fields hold the other side's times and the
  /// median of the per-sample ratios other / gen.
  void measureAgainst(Result &r, const Call &gen, Peer &other, int n = 0);

  /// Bandwidths at `bytes`, measured once per size in this run.
  const Limits::Bandwidth &bandwidthAt(size_t bytes);
  /// One read of the flush buffer; returns its seconds.
  double flush();
  /// Sleeps until this process's OpenMP workers, and a peer's, have
  /// stopped spinning after their last parallel region (twice the spin
  /// time measured here, once per run).
  void quiesce();

private:
  void measureWith(Result &r, const Call &gen, const Call &twin, Peer *peer,
                   int n);

  Options opts_;
  Limits &limits_;
  std::unique_ptr<ReadProbe> flush_;
  double spinSeconds_ = -1; ///< measured on the first quiesce()
};

/// Measures the arithmetic peaks and the cache size (bandwidths come per
/// working-set size as the cases run).
Limits measurePeaks(int threads);

/// Runs `c`, catching errors into Result::error.
Result runCase(const Case &c, Context &ctx);

} // namespace tilejit::bench

#endif
