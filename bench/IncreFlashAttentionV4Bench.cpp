//===- IncreFlashAttentionV4Bench.cpp - Decode attention vs bandwidth -----===//
//
// Decode attention over a paged cache (3-D, block size 128, BSH): B=8, N=32,
// N_kv=8, D=128, KV length 4096, f16, bf16 and INT8 KV (per-channel
// antiquant, f16 query); the same over the paged 4-D cache ([blocks, N_kv,
// block size, D], BNSD query); the same with ragged lengths (none a multiple
// of the 64-row step); the first with the cache folded into 16 blocks (in
// the last-level cache: the arithmetic bound); and batch 1 with KV length
// 32768. Counters:
// effective KV bandwidth (key + value bytes read / time), the machine's read
// bandwidth at the same working-set size measured in this run
// (`of_read_bw`, best runs of both), and `vs_handwritten` = twin time /
// generated time (> 1: generated is faster; f16/bf16 only), the median over
// alternating runs. Each generated run includes phase 1 (validation, kernel
// lookup, argument packing). `BM_IfaReadPattern` reads the BSH cache with no
// arithmetic in the kernel's order and others: the machine's limit for that
// access pattern, against the same sequential read, each order with and
// without the kernel's prefetch of the next step.
//
//===----------------------------------------------------------------------===//
#include "MachineLimits.h"

#include "jit/Compiler.h"
#include "ops/common/StreamCopy.h"
#include "ops/incre_flash_attention/IncreFlashAttention.h"
#include "ops/runtime/TensorView.h"
#include "ops/samples/Samples.h"

#include <benchmark/benchmark.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <numeric>
#include <random>
#include <string>
#include <vector>

using namespace tilejit;
using runtime::DataType;
using runtime::TensorView;

namespace {

struct Problem {
  int64_t b, n = 32, nkv = 8, d = 128, len, bs = 128;
  DataType qType, kvType;
  std::vector<unsigned char> q, out, k, v, scale;
  std::vector<int32_t> table;
  TensorView qv, ov, kv, vv, tv, sv;
  runtime::TensorList kl, vl;
  runtime::IntArray asl;
  aclnn::IncreFlashAttentionV4Args args;

  bool perHead = false;
  Problem(int64_t batch, int64_t length, DataType qt, DataType kt,
          bool headMajor = false)
      : b(batch), len(length), qType(qt), kvType(kt), perHead(headMajor) {
    const int64_t blocksPer = len / bs, blocks = b * blocksPer;
    const int64_t es = runtime::elementSize(kt);
    auto fill = [](std::vector<unsigned char> &buf, size_t bytes, bool half,
                   unsigned seed) {
      buf.resize(bytes);
      std::mt19937 rng(seed);
      std::uniform_real_distribution<float> u(-1, 1);
      if (!half) {
        for (auto &x : buf)
          x = static_cast<unsigned char>(rng() % 200 + 28);
        return;
      }
      for (size_t i = 0; i + 1 < bytes; i += 2) {
        uint16_t h = runtime::floatToHalfBits(u(rng) * 0.5f);
        std::memcpy(&buf[i], &h, 2);
      }
    };
    const bool bf = qt == DataType::BFloat16;
    fill(q, static_cast<size_t>(b * n * d * 2), true, 1);
    if (bf) // bf16 bits: reuse the f16 pattern shifted into range
      for (size_t i = 1; i < q.size(); i += 2)
        q[i] = static_cast<unsigned char>(0x3e | (q[i] & 0x80));
    out.assign(q.size(), 0);
    const size_t kvBytes = static_cast<size_t>(blocks * bs * nkv * d * es);
    fill(k, kvBytes, kt != DataType::Int8, 2);
    fill(v, kvBytes, kt != DataType::Int8, 3);
    if (bf)
      for (auto *buf : {&k, &v})
        for (size_t i = 1; i < buf->size(); i += 2)
          (*buf)[i] = static_cast<unsigned char>(0x3e | ((*buf)[i] & 0x80));
    for (int64_t i = 0; i < blocks; ++i)
      table.push_back(static_cast<int32_t>(i));
    std::shuffle(table.begin(), table.end(), std::mt19937(4));
    const std::vector<int64_t> rows = perHead
                                          ? std::vector<int64_t>{b, n, 1, d}
                                          : std::vector<int64_t>{b, 1, n * d};
    qv = runtime::contiguousView(q.data(), qt, rows);
    ov = runtime::contiguousView(out.data(), qt, rows);
    const std::vector<int64_t> cache =
        perHead ? std::vector<int64_t>{blocks, nkv, bs, d}
                : std::vector<int64_t>{blocks, bs, nkv * d};
    kv = runtime::contiguousView(k.data(), kt, cache);
    vv = runtime::contiguousView(v.data(), kt, cache);
    tv = runtime::contiguousView(table.data(), DataType::Int32, {b, blocksPer});
    kl.entries.emplace_back(kv);
    vl.entries.emplace_back(vv);
    asl.values.assign(static_cast<size_t>(b), len);
    args.query = &qv;
    args.key = &kl;
    args.value = &vl;
    args.attentionOut = &ov;
    args.actualSeqLengths = &asl;
    args.blocktable = &tv;
    args.blockSize = bs;
    args.numHeads = n;
    args.numKeyValueHeads = nkv;
    args.scaleValue = 1.0 / std::sqrt(static_cast<double>(d));
    args.inputLayout = perHead ? "BNSD" : "BSH";
    args.innerPrecise = 1;
    if (kt == DataType::Int8) {
      scale.resize(static_cast<size_t>(2 * nkv * d * 2));
      const uint16_t h = runtime::floatToHalfBits(0.01f);
      for (size_t i = 0; i < scale.size(); i += 2)
        std::memcpy(&scale[i], &h, 2);
      sv = runtime::contiguousView(scale.data(), qt, {2, nkv * d});
      args.antiquantScale = &sv;
    }
  }
  /// Bytes of K and V the windows read (the whole cache unless lengths were
  /// set shorter).
  double kvBytes() const {
    int64_t rows = 0;
    for (int64_t l : asl.values)
      rows += l;
    return 2.0 * static_cast<double>(rows * nkv * d * runtime::elementSize(kvType));
  }
};

using bench::median;
using bench::seconds;

void report(benchmark::State &state, Problem &p) {
  if (runtime::Status s = ops::increFlashAttentionV4(p.args); !s) {
    state.SkipWithError(s.message().c_str());
    return;
  }
  for (auto _ : state)
    (void)ops::increFlashAttentionV4(p.args);
  const bool twinOk = ops::increFlashAttentionV4Handwritten(p.args);
  const double bytes = p.kvBytes();
  bench::ReadProbe probe(static_cast<size_t>(bytes), omp_get_max_threads());
  std::vector<double> gen, twin, ratio, paired;
  for (int i = 0; i < 15; ++i) {
    double g = seconds([&] { (void)ops::increFlashAttentionV4(p.args); });
    gen.push_back(g);
    paired.push_back(probe.seconds() / g);
    if (twinOk) {
      double t =
          seconds([&] { ops::increFlashAttentionV4Handwritten(p.args); });
      twin.push_back(t);
      ratio.push_back(t / g);
    }
  }
  const double read = bench::readBandwidthGBs(static_cast<size_t>(bytes),
                                              omp_get_max_threads());
  const double best = *std::min_element(gen.begin(), gen.end());
  state.counters["KV_GBs"] = bytes / median(gen) / 1e9;
  state.counters["best_KV_GBs"] = bytes / best / 1e9;
  state.counters["read_bw_GBs"] = read;
  state.counters["of_read_bw"] = bytes / best / 1e9 / read;
  // Each call against a read of as many bytes right after it: the median
  // ratio, which the host's drifting bandwidth moves far less. (Both stream
  // from memory: the KV cache is several times the last-level cache. At a
  // size that fits in it, a probe's buffer would evict the kernel's data.)
  state.counters["of_read_bw_paired"] = median(paired);
  state.counters["generated_us"] = median(gen) * 1e6;
  if (twinOk) {
    state.counters["handwritten_us"] = median(twin) * 1e6;
    state.counters["vs_handwritten"] = median(ratio);
  }
  state.counters["working_set_MiB"] = bytes / (1 << 20);
}

/// Arg 0: f16; 1: bf16; 2: INT8 KV with an f16 query.
void configure(int64_t arg, DataType &q, DataType &kv, const char *&label) {
  q = arg == 1 ? DataType::BFloat16 : DataType::Float16;
  kv = arg == 2 ? DataType::Int8 : q;
  label = arg == 0 ? "f16" : arg == 1 ? "bf16" : "int8 KV, f16 query";
}

/// B=8, N=32, N_kv=8, D=128, KV length 4096, paged (block size 128).
void BM_IfaDecode(benchmark::State &state) {
  DataType q, kv;
  const char *label;
  configure(state.range(0), q, kv, label);
  Problem p(8, 4096, q, kv);
  report(state, p);
  state.SetLabel(label);
}
BENCHMARK(BM_IfaDecode)->Arg(0)->Arg(1)->Arg(2)->Unit(benchmark::kMicrosecond);

/// BM_IfaDecode with every block id of the table folded into the first 16
/// blocks (8 MiB of K and V for f16, in the last-level cache): the same
/// arithmetic and access order with the memory out of the way, i.e. the
/// kernel's arithmetic bound. `generated_us` is the median of 15 calls back
/// to back (compare with BM_IfaDecode's `generated_us`); `KV_GBs` counts
/// the bytes the windows read, as there.
void BM_IfaDecodeHot(benchmark::State &state) {
  DataType q, kv;
  const char *label;
  configure(state.range(0), q, kv, label);
  Problem p(8, 4096, q, kv);
  for (int32_t &blk : p.table)
    blk %= 16;
  if (runtime::Status s = ops::increFlashAttentionV4(p.args); !s) {
    state.SkipWithError(s.message().c_str());
    return;
  }
  for (auto _ : state)
    (void)ops::increFlashAttentionV4(p.args);
  std::vector<double> gen;
  for (int i = 0; i < 15; ++i)
    gen.push_back(seconds([&] { (void)ops::increFlashAttentionV4(p.args); }));
  state.counters["generated_us"] = median(gen) * 1e6;
  state.counters["KV_GBs"] = p.kvBytes() / median(gen) / 1e9;
  state.counters["distinct_MiB"] =
      2.0 * 16 * static_cast<double>(p.bs * p.nkv * p.d * runtime::elementSize(kv)) / (1 << 20);
  state.SetLabel(std::string(label) + ", cache in the LLC");
}
BENCHMARK(BM_IfaDecodeHot)->Arg(0)->Arg(1)->Arg(2)->Unit(benchmark::kMicrosecond);

/// The same with the 4-D paged cache ([blocks, N_kv, block size, D]): each
/// head's rows of a block are one contiguous run.
void BM_IfaDecodeHeadMajor(benchmark::State &state) {
  DataType q, kv;
  const char *label;
  configure(state.range(0), q, kv, label);
  Problem p(8, 4096, q, kv, /*headMajor=*/true);
  report(state, p);
  state.SetLabel(label);
}
BENCHMARK(BM_IfaDecodeHeadMajor)
    ->Arg(0)
    ->Arg(1)
    ->Arg(2)
    ->Unit(benchmark::kMicrosecond);

/// The same cache with ragged lengths, none a multiple of the 64-row step
/// (4096 - 37 * i for entry i): each window ends in a partial step, as most
/// decode windows do.
void BM_IfaDecodeRagged(benchmark::State &state) {
  DataType q, kv;
  const char *label;
  configure(state.range(0), q, kv, label);
  Problem p(8, 4096, q, kv);
  for (size_t i = 0; i < p.asl.values.size(); ++i)
    p.asl.values[i] = 4096 - 37 * static_cast<int64_t>(i + 1);
  report(state, p);
  state.SetLabel(label);
}
BENCHMARK(BM_IfaDecodeRagged)->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond);

/// Reads of the BSH cache of BM_IfaDecode (f16, 128 MiB of K and V) with no
/// arithmetic, in four ways, against a sequential read of as many bytes
/// right after each (`of_read_bw_paired`, the median ratio): the machine's
/// limit for the kernel's access pattern. Per batch entry (dealt to the
/// threads round-robin) and 64-row step of the window, each KV head in turn,
/// K then V:
///   0: the head's share of the step's rows (16 KiB) in memory order;
///   1: the head's column (64 rows x 256 B, rows 2 KiB apart: the order in
///      which the kernel's dot and PV read);
///   2: as 1, with the next step's share requested in memory order, as many
///      lines before each row's piece as it has, and where the kernel's rule
///      sends it (L2 for a share of half the L1 or more): the kernel's
///      prefetch;
///   3: as 0, with the prefetches of 2.
void readPattern(const Problem &p, int mode, int threads) {
  const int64_t rowBytes = p.nkv * p.d * 2, colBytes = p.d * 2, step = 64,
                share = step * colBytes, blockBytes = p.bs * rowBytes, perBatch = p.len / p.bs;
  const bool toL2 = jit::Compiler::instance().prefetchesIntoL2(share);
  long long total = 0;
#pragma omp parallel reduction(+ : total) num_threads(threads)
  {
    const int t = omp_get_thread_num();
    for (int64_t b = t; b < p.b; b += threads)
      for (int64_t j = 0; j < p.len; j += step) {
        auto at = [&](const std::vector<unsigned char> &buf, int64_t pos) {
          return reinterpret_cast<const char *>(buf.data()) +
                 p.table[b * perBatch + pos / p.bs] * blockBytes + (pos % p.bs) * rowBytes;
        };
        const bool next = mode >= 2 && j + step < p.len;
        for (int64_t h = 0; h < p.nkv; ++h)
          for (const std::vector<unsigned char> *buf : {&p.k, &p.v}) {
            const char *base = at(*buf, j);
            const char *ahead = next ? at(*buf, j + step) + h * share : nullptr;
            for (int64_t r = 0; r < step; ++r) {
              if (ahead)
                ops::prefetchLines(ahead + r * colBytes, colBytes, toL2);
              total += bench::sumBytes(mode == 0 || mode == 3
                                           ? base + h * share + r * colBytes
                                           : base + r * rowBytes + h * colBytes,
                                       colBytes);
            }
          }
      }
  }
  benchmark::DoNotOptimize(total);
}

void BM_IfaReadPattern(benchmark::State &state) {
  const int mode = static_cast<int>(state.range(0));
  Problem p(8, 4096, DataType::Float16, DataType::Float16);
  const int threads = omp_get_max_threads();
  for (auto _ : state)
    readPattern(p, mode, threads);
  const double bytes = p.kvBytes();
  bench::ReadProbe probe(static_cast<size_t>(bytes), threads);
  std::vector<double> t, paired;
  for (int i = 0; i < 15; ++i) {
    double s = seconds([&] { readPattern(p, mode, threads); });
    t.push_back(s);
    paired.push_back(probe.seconds() / s);
  }
  state.counters["GBs"] = bytes / median(t) / 1e9;
  state.counters["of_read_bw_paired"] = median(paired);
  state.counters["working_set_MiB"] = bytes / (1 << 20);
  state.SetLabel(mode == 0   ? "head shares, memory order"
                 : mode == 1 ? "head columns"
                 : mode == 2 ? "head columns, next share prefetched"
                             : "head shares, memory order, next share prefetched");
}
BENCHMARK(BM_IfaReadPattern)->DenseRange(0, 3)->Unit(benchmark::kMicrosecond);

/// Batch 1, KV length 32768: the window is split over programs.
void BM_IfaDecodeLong(benchmark::State &state) {
  DataType q, kv;
  const char *label;
  configure(state.range(0), q, kv, label);
  Problem p(1, 32768, q, kv);
  report(state, p);
  state.SetLabel(label);
}
BENCHMARK(BM_IfaDecodeLong)
    ->Arg(0)
    ->Arg(1)
    ->Arg(2)
    ->Unit(benchmark::kMicrosecond);

} // namespace
