//===- MachineLimits.h - The machine's own limits, measured in the run ---*- C++
//-*-===//
///
/// \file
/// Benchmarks report ratios against what this machine can do, measured in the
/// same process: single-core FMA peak (independent FMA chains in registers at
/// the widest ISA the host has) and read/copy bandwidth at a given working-set
/// size (the last-level cache here is large, so the size is always stated).
/// A bandwidth limit is the best of several honest ways of moving the bytes
/// (StreamPlan): no single loop is the machine's ceiling for every access
/// pattern, and a limit some kernel beats is no limit.
///
//===----------------------------------------------------------------------===//
#ifndef TILEJIT_BENCH_MACHINELIMITS_H
#define TILEJIT_BENCH_MACHINELIMITS_H

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

namespace tilejit::bench {

/// Single-core f32 FMA peak in GFLOP/s (2 flops per lane per FMA).
double fmaPeakGflops();
/// Single-core bf16 dot-product peak in GFLOP/s: independent `vdpbf16ps`
/// chains (2 products and 2 adds per f32 lane each); 0 without AVX512-BF16.
double bf16DotPeakGflops();
/// Single-core bf16 AMX peak in GFLOP/s (independent tdpbf16ps tile
/// products), 0 without AMX-BF16 or the kernel's leave to use it.
double amxBf16PeakGflops();
/// One way of reading or copying a buffer, a probe of the bandwidth limits.
/// Each thread of the pass takes an equal contiguous share of the buffer and
/// splits it into `streams` equal ranges that it walks together, 256 bytes
/// of each in turn: one stream per thread leaves most of the misses a core
/// can have in flight unused on some hosts, where a kernel that copies
/// several rows at once (K and V, chunks of different blocks) moves more.
struct StreamPlan {
  int streams = 1;
  /// Software prefetch of each range this many bytes ahead (0: none).
  int prefetchBytes = 0;
  /// Copy only: non-temporal stores, which write a line without reading it
  /// first (the kernels stream their prefill-sized outputs so).
  bool nonTemporal = false;
  /// Copy only: std::memcpy of each thread's share (the C library picks its
  /// stores; the other fields are ignored).
  bool libc = false;
};

/// A readable name of `plan`, as the JSON document records it ("4 streams,
/// prefetch 1024 B, non-temporal stores").
std::string planName(const StreamPlan &plan, bool copy);
/// The read probes: one stream and several, with and without prefetch.
const std::vector<StreamPlan> &readPlans();
/// The copy probes: the C library's memcpy, regular and non-temporal stores,
/// one stream and several, with and without prefetch.
const std::vector<StreamPlan> &copyPlans();

/// A 64-byte aligned buffer of `bytes`, every byte written once (so its
/// pages exist before any timing).
class Buffer {
public:
  explicit Buffer(size_t bytes, unsigned char fill = 1);
  char *data() { return data_.get(); }
  const char *data() const { return data_.get(); }
  size_t size() const { return bytes_; }

private:
  struct Free {
    void operator()(char *p) const;
  };
  std::unique_ptr<char, Free> data_;
  size_t bytes_;
};

/// Seconds of one read of `bytes` at `p` by `threads` threads with `plan`.
double readSeconds(const char *p, size_t bytes, int threads,
                   const StreamPlan &plan);
/// Seconds of one copy of `bytes` from `src` to `dst` by `threads` threads
/// with `plan` (non-temporal stores fenced before it returns).
double copySeconds(char *dst, const char *src, size_t bytes, int threads,
                   const StreamPlan &plan);

/// Warm read bandwidth in GB/s over a buffer of `bytes` with `threads`
/// threads: the best of a few passes of every read plan.
double readBandwidthGBs(size_t bytes, int threads);
/// Warm copy bandwidth in GB/s (bytes read + bytes written, as the kernels
/// count a copy) over `bytes` each way: the best of every copy plan.
double copyBandwidthGBs(size_t bytes, int threads);

/// Integer sum of the `n` bytes at `p` (AVX2 loads): a read that any data
/// survives and the compiler cannot drop.
long long sumBytes(const char *p, size_t n);

/// A read pass over its own buffer of `bytes` (allocated and touched once),
/// one stream per thread: the flush, and the read bandwidth measured
/// alternately with a kernel (on a shared host the bandwidth drifts from one
/// second to the next, and the ratio of neighbouring measurements drifts
/// far less than that of two measured apart).
class ReadProbe {
public:
  ReadProbe(size_t bytes, int threads);
  /// Seconds of one read of the whole buffer.
  double seconds();

private:
  Buffer buf_;
  int threads_;
};

/// Wall-clock seconds of one call of `f`.
template <typename F> double seconds(F &&f) {
  auto t = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t)
      .count();
}

/// The median of `v` (the upper one of an even count).
inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

} // namespace tilejit::bench

#endif
