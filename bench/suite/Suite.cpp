//===- Suite.cpp - The benchmark cases' registry and timing harness -------===//
#include "Suite.h"

#include "MachineLimits.h"
#include "Peer.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <exception>
#include <thread>

namespace tilejit::bench {

const char *boundName(Bound b) {
  switch (b) {
  case Bound::Read:
    return "read";
  case Bound::Copy:
    return "copy";
  case Bound::Compute:
    return "compute";
  case Bound::Latency:
    return "latency";
  case Bound::Compile:
    return "compile";
  }
  return "?";
}

std::vector<Case> &registry() {
  static std::vector<Case> cases;
  return cases;
}

Registrar::Registrar(std::string name, std::string op,
                     std::function<Result(Context &)> run) {
  registry().push_back({std::move(name), std::move(op), std::move(run)});
}

namespace {

/// The last-level cache in bytes (sysconf, then sysfs; 32 MiB if neither
/// says).
size_t llcBytes() {
  long v = ::sysconf(_SC_LEVEL3_CACHE_SIZE);
  if (v <= 0)
    v = ::sysconf(_SC_LEVEL2_CACHE_SIZE);
  return v > 0 ? static_cast<size_t>(v) : size_t(32) << 20;
}

} // namespace

Limits measurePeaks(int threads) {
  Limits l;
  l.threads = threads;
  l.fmaGflops = fmaPeakGflops() * threads;
  l.bf16DotGflops = bf16DotPeakGflops() * threads;
  l.amxGflops = amxBf16PeakGflops() * threads;
  l.llcBytes = llcBytes();
  return l;
}

Context::Context(const Options &opts, Limits &limits)
    : opts_(opts), limits_(limits) {
  size_t bytes = opts.flushBytes ? opts.flushBytes : limits.llcBytes / 2 * 3;
  limits_.flushBytes = bytes;
  flush_ = std::make_unique<ReadProbe>(bytes, limits.threads);
}

Context::~Context() = default;

double Context::flush() { return flush_->seconds(); }

namespace {

double processCpuSeconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

/// How long this process's OpenMP workers keep spinning after a parallel
/// region (libgomp's default wait policy spins before it sleeps): the time
/// until a millisecond of sleep costs the process almost no CPU, measured
/// after a region of the flush's kind. At most 100 ms.
double measureSpinSeconds(ReadProbe &probe) {
  (void)probe.seconds();
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < 100; ++i) {
    const double c0 = processCpuSeconds();
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    if (processCpuSeconds() - c0 < 1e-4)
      break;
  }
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

} // namespace

void Context::quiesce() {
  if (spinSeconds_ < 0)
    spinSeconds_ = measureSpinSeconds(*flush_);
  std::this_thread::sleep_for(std::chrono::duration<double>(2 * spinSeconds_ + 1e-3));
}

const Limits::Bandwidth &Context::bandwidthAt(size_t bytes) {
  auto it = limits_.bandwidth.find(bytes);
  if (it != limits_.bandwidth.end())
    return it->second;
  Limits::Bandwidth bw;
  const int threads = limits_.threads;
  const int reps = opts_.quick ? 3 : 7;
  const double n = static_cast<double>(bytes);
  // A limit is the best the machine did (case times are medians), over every
  // probe: the passes of the probes alternate, so a drift of the shared
  // host's bandwidth does not pick the winner.
  auto measureBest = [&](const std::vector<StreamPlan> &plans, bool copy,
                         double moved, bool cold, const auto &pass, double &gbs,
                         std::string &winner,
                         std::map<std::string, double> &byPlan) {
    std::vector<double> best(plans.size(), 1e30);
    if (!cold)
      for (const StreamPlan &plan : plans)
        (void)pass(plan); // warm the buffers (and the cache) once
    for (int i = 0; i < reps; ++i)
      for (size_t k = 0; k < plans.size(); ++k) {
        if (cold)
          flush();
        best[k] = std::min(best[k], pass(plans[k]));
      }
    for (size_t k = 0; k < plans.size(); ++k) {
      const double g = moved / best[k] / 1e9;
      byPlan[planName(plans[k], copy)] = g;
      if (g > gbs) {
        gbs = g;
        winner = planName(plans[k], copy);
      }
    }
  };
  {
    Buffer buf(bytes);
    auto read = [&](const StreamPlan &plan) {
      return readSeconds(buf.data(), bytes, threads, plan);
    };
    measureBest(readPlans(), false, n, true, read, bw.readGBs, bw.readPlan,
                bw.readByPlan);
    measureBest(readPlans(), false, n, false, read, bw.warmReadGBs,
                bw.warmReadPlan, bw.warmReadByPlan);
  }
  // Copy from memory: `bytes` read and as many written, counted as the
  // kernels count a copy (a regular store's read of the line it writes is
  // not counted: a probe that pays it loses to the non-temporal ones).
  Buffer src(bytes, 1), dst(bytes, 0);
  measureBest(
      copyPlans(), true, 2 * n, true,
      [&](const StreamPlan &plan) {
        return copySeconds(dst.data(), src.data(), bytes, threads, plan);
      },
      bw.copyGBs, bw.copyPlan, bw.copyByPlan);
  return limits_.bandwidth[bytes] = bw;
}

void Context::measure(Result &r, const Call &gen, const Call &twin,
                      bool withPeer, int n) {
  measureWith(
      r, gen, twin,
      withPeer && opts_.peer && opts_.peer->ready() ? opts_.peer : nullptr, n);
}

void Context::measureAgainst(Result &r, const Call &gen, Peer &other, int n) {
  measureWith(r, gen, {}, other.ready() ? &other : nullptr, n);
}

void Context::measureWith(Result &r, const Call &gen, const Call &twin,
                          Peer *peer, int n) {
  const int count = n > 0 ? n : samples();
  const bool cold = !r.inCache;
  const double flushBytes = static_cast<double>(limits_.flushBytes);
  std::vector<double> g, t, p, vsT, vsP, flushGBs, copyGBs;
  // A copy-bound case from memory also runs the copy probe that won at its
  // working-set size once per sample (after a flush of its own), so that its
  // limit follows the shared host's drift as the read limit does through
  // the flush reads.
  const size_t workingSet = static_cast<size_t>(r.workingSetBytes);
  const StreamPlan *copyPlan = nullptr;
  std::unique_ptr<Buffer> copySrc, copyDst;
  if (cold && r.bound == Bound::Copy && workingSet > 0) {
    const std::string &winner = bandwidthAt(workingSet).copyPlan;
    for (const StreamPlan &plan : copyPlans())
      if (planName(plan, true) == winner)
        copyPlan = &plan;
    copySrc = std::make_unique<Buffer>(workingSet, 1);
    copyDst = std::make_unique<Buffer>(workingSet, 0);
  }
  // One warm-up call of each side outside the timing.
  gen();
  if (twin)
    twin();
  if (peer) {
    if (llvm::Expected<double> warm = peer->run(); !warm) {
      // The case is timed without the peer; its row says why.
      r.peerNote += (r.peerNote.empty() ? "peer: " : "; peer: ") +
                    llvm::toString(warm.takeError());
      peer = nullptr;
    }
  }
  for (int i = 0; i < count; ++i) {
    if (copyPlan) {
      flush();
      copyGBs.push_back(2.0 * static_cast<double>(workingSet) /
                        copySeconds(copyDst->data(), copySrc->data(),
                                    workingSet, limits_.threads, *copyPlan) /
                        1e9);
    }
    double gs = 0, ts = 0, ps = 0;
    // With a peer (another process), each side runs alone: both processes'
    // OpenMP workers spin for a while after a parallel region, and on a few
    // cores one process's spinning slows the other's call. So before each
    // side the other process is given time to park its workers, and the
    // peer flushes the cache itself (a parallel read of its own, as this
    // process's flush is) right before its call, rather than this process
    // flushing and then spinning beside it.
    auto one = [&](int side) {
      if (peer)
        quiesce();
      if (cold && side != 2) {
        flushGBs.push_back(flushBytes / flush() / 1e9);
      }
      if (side == 0)
        gs = seconds(gen);
      else if (side == 1)
        ts = seconds(twin);
      else if (llvm::Expected<double> s =
                   peer->run(cold ? limits_.flushBytes : 0))
        ps = *s;
      else // A sample the peer could not time is left out.
        llvm::consumeError(s.takeError());
    };
    // The order rotates: generated first, then twin first, then peer first.
    const int sides = 1 + (twin ? 1 : 0) + (peer ? 1 : 0);
    int order[3] = {0, twin ? 1 : 2, 2};
    for (int k = 0; k < sides; ++k)
      one(order[(k + i) % sides]);
    g.push_back(gs);
    if (twin) {
      t.push_back(ts);
      vsT.push_back(ts / gs);
    }
    if (peer && ps > 0) {
      p.push_back(ps);
      vsP.push_back(ps / gs);
    }
  }
  r.samples = count;
  r.genSeconds = median(g);
  if (!t.empty()) {
    r.twinSeconds = median(t);
    r.vsTwin = median(vsT);
  }
  if (!p.empty()) {
    r.peerSeconds = median(p);
    r.vsPeer = median(vsP);
  }
  if (!flushGBs.empty())
    r.readGBsPaired = median(flushGBs);
  if (!copyGBs.empty())
    r.copyGBsPaired = median(copyGBs);

  // Limits and the roofline bound.
  if (r.bound == Bound::Latency || r.bound == Bound::Compile)
    return;
  const Limits::Bandwidth &bw =
      bandwidthAt(static_cast<size_t>(r.workingSetBytes));
  r.readGBs = r.inCache ? bw.warmReadGBs : bw.readGBs;
  r.copyGBs = bw.copyGBs;
  std::string readProbe = r.inCache ? bw.warmReadPlan : bw.readPlan;
  // Bytes against the read bandwidth from memory: the higher of the
  // bandwidth at the working-set size (the best of its passes in this run)
  // and that of the flush reads next to the calls (their median), since a
  // limit is the most the machine was seen to do; warm for in-cache cases.
  if (!r.inCache && r.readGBsPaired > r.readGBs) {
    r.readGBs = r.readGBsPaired;
    readProbe = "flush reads next to the calls";
  }
  double memBound = 0;
  if (r.bound == Bound::Copy) {
    r.limitProbe = bw.copyPlan;
    if (r.copyGBsPaired > r.copyGBs) {
      r.copyGBs = r.copyGBsPaired;
      r.limitProbe += ", next to the calls";
    }
    memBound = r.bytes / (r.copyGBs * 1e9);
  } else if (r.bytes > 0) {
    memBound = r.bytes / (r.readGBs * 1e9);
    r.limitProbe = readProbe;
  }
  const double peak = r.peakGflops;
  const double flopBound = peak > 0 && r.flops > 0 ? r.flops / (peak * 1e9) : 0;
  r.boundSeconds = std::max(memBound, flopBound);
  if (r.boundSeconds > 0 && r.genSeconds > 0)
    r.ofBound = r.boundSeconds / r.genSeconds;
}

Result runCase(const Case &c, Context &ctx) {
  Result r;
  try {
    r = c.run(ctx);
  } catch (const std::exception &e) {
    r.error = e.what();
  }
  r.name = c.name;
  r.op = c.op;
  if (ctx.peer())
    ctx.peer()->reset();
  if (ctx.python())
    ctx.python()->reset();
  return r;
}

} // namespace tilejit::bench
