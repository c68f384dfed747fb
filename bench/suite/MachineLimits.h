//===- MachineLimits.h - The machine's own limits, measured in the run ---*- C++
//-*-===//
///
/// \file
/// Benchmarks report ratios against what this machine can do, measured in the
/// same process: single-core FMA peak (independent FMA chains in registers at
/// the widest ISA the host has) and read/copy bandwidth at a given working-set
/// size (the last-level cache here is large, so the size is always stated).
///
//===----------------------------------------------------------------------===//
#ifndef TILEJIT_BENCH_MACHINELIMITS_H
#define TILEJIT_BENCH_MACHINELIMITS_H

#include <algorithm>
#include <chrono>
#include <cstddef>
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
/// Read bandwidth in GB/s over a buffer of `bytes`, with `threads` threads.
double readBandwidthGBs(size_t bytes, int threads);
/// Copy bandwidth in GB/s (bytes read + bytes written) over `bytes` each way.
double copyBandwidthGBs(size_t bytes, int threads);

/// Integer sum of the `n` bytes at `p` (AVX2 loads): a read that any data
/// survives and the compiler cannot drop.
long long sumBytes(const char *p, size_t n);

/// A read pass over its own buffer of `bytes` (allocated and touched once),
/// for measuring the read bandwidth alternately with a kernel: on a shared
/// host the bandwidth drifts from one second to the next, and the ratio of
/// neighbouring measurements drifts far less than that of two measured
/// apart.
class ReadProbe {
public:
  ReadProbe(size_t bytes, int threads);
  /// Seconds of one read of the whole buffer.
  double seconds();

private:
  std::vector<float> buf_;
  int threads_;
};

/// A run of bytes a kernel reads.
struct Region {
  const void *data;
  size_t bytes;
};

/// Seconds of one read of `regions`, region i by thread i % threads: the very
/// bytes a kernel reads, dealt to the threads the way a kernel that deals its
/// work items round-robin reads them. Timed right after the kernel (and the
/// kernel right after it), it measures the read bandwidth of those bytes in
/// the cache state the kernel leaves them in, with the threads as warm: for
/// a working set that fits in the last-level cache, where a probe over a
/// buffer of its own would evict the kernel's data.
double readRegionsSeconds(const std::vector<Region> &regions, int threads);

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
