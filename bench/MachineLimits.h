//===- MachineLimits.h - The machine's own limits, measured in the run ---*- C++ -*-===//
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

#include <cstddef>

namespace tilejit::bench {

/// Single-core f32 FMA peak in GFLOP/s (2 flops per lane per FMA).
double fmaPeakGflops();
/// Read bandwidth in GB/s over a buffer of `bytes`, with `threads` threads.
double readBandwidthGBs(size_t bytes, int threads);
/// Copy bandwidth in GB/s (bytes read + bytes written) over `bytes` each way.
double copyBandwidthGBs(size_t bytes, int threads);

} // namespace tilejit::bench

#endif
