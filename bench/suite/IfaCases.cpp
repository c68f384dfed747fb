//===- IfaCases.cpp - IncreFlashAttentionV4: decode attention cases -------===//
//
// Decode attention over a paged cache (block size 128): B=8, N=32, N_kv=8,
// D=128, KV length 4096, f16, bf16 and INT8 KV (per-channel antiquant, f16
// query), over the 3-D cache (BSH) and the 4-D one ([blocks, N_kv, block
// size, D], BNSD query); the same with ragged lengths (none a multiple of
// the 64-row step); batch 1 with KV length 32768 (the window split over
// programs); the first with the table folded into 16 blocks (in the
// last-level cache: the kernel's arithmetic bound); and reads of the BSH
// cache with no arithmetic in the kernel's order and others (the machine's
// limit for that access pattern). Bound: the key and value bytes the
// windows read, against the read bandwidth. Each generated call includes
// phase 1 (validation, kernel lookup, argument packing). The peer (BSH f16
// and bf16): PyTorch gathering the pages of the block table, then
// matmul-softmax-matmul per KV head group.
//
//===----------------------------------------------------------------------===//
#include "HostOverhead.h"
#include "MachineLimits.h"
#include "Peer.h"
#include "PythonCases.h"
#include "Suite.h"

#include "acl/acl.h"
#include "aclnnop/aclnn_incre_flash_attention_v4.h"
#include "jit/Compiler.h"
#include "ops/common/StreamCopy.h"
#include "ops/incre_flash_attention/IncreFlashAttentionTwin.h"
#include "ops/host/TensorView.h"
#include "ops/samples/Samples.h"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <memory>
#include <numeric>
#include <random>
#include <string>
#include <vector>

using namespace tilejit;
using host::DataType;
using host::TensorView;

namespace {

struct Problem {
  int64_t b, n = 32, nkv = 8, d = 128, len, bs = 128;
  DataType qType, kvType;
  std::vector<unsigned char> q, out, k, v, scale;
  std::vector<int32_t> table;
  TensorView qv, ov, kv, vv, tv, sv;
  host::TensorList kl, vl;
  host::IntArray asl;
  aclnn::IncreFlashAttentionV4Args args;

  bool perHead = false;
  Problem(int64_t batch, int64_t length, DataType qt, DataType kt,
          bool headMajor = false)
      : b(batch), len(length), qType(qt), kvType(kt), perHead(headMajor) {
    const int64_t blocksPer = len / bs, blocks = b * blocksPer;
    const int64_t es = host::elementSize(kt);
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
        uint16_t h = host::floatToHalfBits(u(rng) * 0.5f);
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
    qv = host::contiguousView(q.data(), qt, rows);
    ov = host::contiguousView(out.data(), qt, rows);
    const std::vector<int64_t> cache =
        perHead ? std::vector<int64_t>{blocks, nkv, bs, d}
                : std::vector<int64_t>{blocks, bs, nkv * d};
    kv = host::contiguousView(k.data(), kt, cache);
    vv = host::contiguousView(v.data(), kt, cache);
    tv = host::contiguousView(table.data(), DataType::Int32, {b, blocksPer});
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
      const uint16_t h = host::floatToHalfBits(0.01f);
      for (size_t i = 0; i < scale.size(); i += 2)
        std::memcpy(&scale[i], &h, 2);
      sv = host::contiguousView(scale.data(), qt, {2, nkv * d});
      args.antiquantScale = &sv;
    }
  }
  /// Bytes of K and V the windows read (the whole cache unless lengths were
  /// set shorter).
  double kvBytes() const {
    int64_t rows = 0;
    for (int64_t l : asl.values)
      rows += l;
    return 2.0 *
           static_cast<double>(rows * nkv * d * host::elementSize(kvType));
  }
};

using bench::Bound;
using bench::Context;
using bench::Result;

/// Scenario of a case.
enum class Kind { Decode, Ragged, Long, InCache };

/// Arg 0: f16; 1: bf16; 2: INT8 KV with an f16 query.
void configure(int64_t arg, DataType &q, DataType &kv) {
  q = arg == 1 ? DataType::BFloat16 : DataType::Float16;
  kv = arg == 2 ? DataType::Int8 : q;
}

/// Sets the peer up on `p`'s inputs (BSH f16 or bf16 only): q, the caches,
/// the table and tilejit's output to compare with.
void setupPeer(Context &ctx, Problem &p, Result &r) {
  bench::Peer *peer = ctx.peer();
  if (!peer || p.perHead || p.kvType == DataType::Int8)
    return;
  (void)ops::increFlashAttentionV4(p.args);
  nlohmann::json spec = {
      {"case", "ifa"},
      {"dtype", p.qType == DataType::BFloat16 ? "bf16" : "f16"},
      {"b", p.b},
      {"n", p.n},
      {"nkv", p.nkv},
      {"d", p.d},
      {"len", p.len},
      {"bs", p.bs},
      {"lens", p.asl.values},
      {"q", peer->writeInput("q", p.q.data(), p.q.size())},
      {"k", peer->writeInput("k", p.k.data(), p.k.size())},
      {"v", peer->writeInput("v", p.v.data(), p.v.size())},
      {"table", peer->writeInput("table", p.table.data(), p.table.size() * 4)},
      {"expect", peer->writeInput("out", p.out.data(), p.out.size())}};
  peer->setupInto(spec, r);
}

Result runIfa(Context &ctx, Kind kind, int64_t arg, bool headMajor) {
  DataType q, kv;
  configure(arg, q, kv);
  Problem p(kind == Kind::Long ? 1 : 8, kind == Kind::Long ? 32768 : 4096, q,
            kv, headMajor);
  Result r;
  if (kind == Kind::Ragged)
    for (size_t i = 0; i < p.asl.values.size(); ++i)
      p.asl.values[i] = 4096 - 37 * static_cast<int64_t>(i + 1);
  if (kind == Kind::InCache) {
    for (int32_t &blk : p.table)
      blk %= 16;
    r.inCache = true;
    r.note = "table folded into 16 blocks: in the last-level cache";
  }
  if (host::Status s = ops::increFlashAttentionV4(p.args); !s) {
    r.error = s.message();
    return r;
  }
  r.bound = Bound::Read;
  r.bytes = p.kvBytes();
  r.workingSetBytes = kind == Kind::InCache
                          ? 2.0 * 16 *
                                static_cast<double>(p.bs * p.nkv * p.d *
                                                    host::elementSize(kv))
                          : r.bytes;
  int64_t rows = 0;
  for (int64_t l : p.asl.values)
    rows += l;
  r.flops = 4.0 * static_cast<double>(rows * p.n * p.d);
  r.peakGflops = ctx.limits().fmaGflops;
  r.peakName = "f32 FMA";
  const bool twinOk = ops::increFlashAttentionV4Handwritten(p.args);
  if (kind == Kind::Decode && !headMajor)
    setupPeer(ctx, p, r);
  ctx.measure(
      r, [&] { (void)ops::increFlashAttentionV4(p.args); },
      twinOk
          ? bench::Call([&] { ops::increFlashAttentionV4Handwritten(p.args); })
          : bench::Call(),
      true);
  if (!twinOk)
    r.twinNote = "no hand-written twin for this call";
  return r;
}

/// Reads of the BSH cache of the f16 decode case (128 MiB of K and V) with
/// no arithmetic, in four ways: the machine's limit for the kernel's access
/// pattern. Per batch entry (dealt to the threads round-robin) and 64-row
/// step of the window, each KV head in turn, K then V:
///   0: the head's share of the step's rows (16 KiB) in memory order;
///   1: the head's column (64 rows x 256 B, rows 2 KiB apart: the order in
///      which the kernel's dot and PV read);
///   2: as 1, with the next step's share requested in memory order, as many
///      lines before each row's piece as it has, and where the kernel's rule
///      sends it (L2 for a share of half the L1 or more): the kernel's
///      prefetch;
///   3: as 0, with the prefetches of 2.
long long readPattern(const Problem &p, int mode, int threads) {
  const int64_t rowBytes = p.nkv * p.d * 2, colBytes = p.d * 2, step = 64,
                share = step * colBytes, blockBytes = p.bs * rowBytes,
                perBatch = p.len / p.bs;
  const bool toL2 = jit::Compiler::instance().prefetchesIntoL2(share);
  long long total = 0;
#pragma omp parallel reduction(+ : total) num_threads(threads)
  {
    const int t = omp_get_thread_num();
    for (int64_t b = t; b < p.b; b += threads)
      for (int64_t j = 0; j < p.len; j += step) {
        auto at = [&](const std::vector<unsigned char> &buf, int64_t pos) {
          return reinterpret_cast<const char *>(buf.data()) +
                 p.table[b * perBatch + pos / p.bs] * blockBytes +
                 (pos % p.bs) * rowBytes;
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
  return total;
}

volatile long long patternSink;

Result runReadPattern(Context &ctx, int mode) {
  Problem p(8, 4096, DataType::Float16, DataType::Float16);
  Result r;
  r.bound = Bound::Read;
  r.bytes = r.workingSetBytes = p.kvBytes();
  const int threads = ctx.limits().threads;
  ctx.measure(
      r, [&] { patternSink = readPattern(p, mode, threads); }, {}, false);
  r.note = "no arithmetic: the limit of the kernel's access pattern";
  return r;
}

const std::string kShape = "B8-N32-KV8-D128-L4096";

// Registration order is the report's order.
bench::Registrar r0("ifa/decode/" + kShape + "/paged-bsh/f16", "ifa",
                    [](Context &c) {
                      return runIfa(c, Kind::Decode, 0, false);
                    });
bench::Registrar r1("ifa/decode/" + kShape + "/paged-bsh/bf16", "ifa",
                    [](Context &c) {
                      return runIfa(c, Kind::Decode, 1, false);
                    });
bench::Registrar r2("ifa/decode/" + kShape + "/paged-bsh/int8kv-f16q", "ifa",
                    [](Context &c) {
                      return runIfa(c, Kind::Decode, 2, false);
                    });
bench::Registrar r3("ifa/decode/" + kShape + "/paged-bnsd/f16", "ifa",
                    [](Context &c) {
                      return runIfa(c, Kind::Decode, 0, true);
                    });
bench::Registrar r4("ifa/decode/" + kShape + "/paged-bnsd/bf16", "ifa",
                    [](Context &c) {
                      return runIfa(c, Kind::Decode, 1, true);
                    });
bench::Registrar r5("ifa/decode/" + kShape + "/paged-bnsd/int8kv-f16q", "ifa",
                    [](Context &c) {
                      return runIfa(c, Kind::Decode, 2, true);
                    });
bench::Registrar r6("ifa/decode-ragged/B8-N32-KV8-D128-L4096-37i/paged-bsh/f16",
                    "ifa", [](Context &c) {
                      return runIfa(c, Kind::Ragged, 0, false);
                    });
bench::Registrar
    r7("ifa/decode-ragged/B8-N32-KV8-D128-L4096-37i/paged-bsh/bf16", "ifa",
       [](Context &c) { return runIfa(c, Kind::Ragged, 1, false); });
bench::Registrar r8("ifa/decode-long/B1-N32-KV8-D128-L32768/paged-bsh/f16",
                    "ifa",
                    [](Context &c) { return runIfa(c, Kind::Long, 0, false); });
bench::Registrar r9("ifa/decode-long/B1-N32-KV8-D128-L32768/paged-bsh/bf16",
                    "ifa",
                    [](Context &c) { return runIfa(c, Kind::Long, 1, false); });
bench::Registrar
    r10("ifa/decode-long/B1-N32-KV8-D128-L32768/paged-bsh/int8kv-f16q", "ifa",
        [](Context &c) { return runIfa(c, Kind::Long, 2, false); });
bench::Registrar r11("ifa/decode-in-llc/" + kShape + "-16blocks/paged-bsh/f16",
                     "ifa", [](Context &c) {
                       return runIfa(c, Kind::InCache, 0, false);
                     });
bench::Registrar r12("ifa/decode-in-llc/" + kShape + "-16blocks/paged-bsh/bf16",
                     "ifa", [](Context &c) {
                       return runIfa(c, Kind::InCache, 1, false);
                     });
bench::Registrar r13("ifa/read-pattern/" + kShape + "/head-shares/f16", "ifa",
                     [](Context &c) { return runReadPattern(c, 0); });
bench::Registrar r14("ifa/read-pattern/" + kShape + "/head-columns/f16", "ifa",
                     [](Context &c) { return runReadPattern(c, 1); });
bench::Registrar r15("ifa/read-pattern/" + kShape +
                         "/head-columns-prefetched/f16",
                     "ifa", [](Context &c) { return runReadPattern(c, 2); });
bench::Registrar r16("ifa/read-pattern/" + kShape +
                         "/head-shares-prefetched/f16",
                     "ifa", [](Context &c) { return runReadPattern(c, 3); });
} // namespace

/// The headline case (f16 decode over the paged BSH cache) through
/// torch.ops.tilejit.npu_incre_flash_attention and the C API.
tilejit::bench::Result tilejit::bench::ifaTorchOps(Context &ctx) {
  Problem p(8, 4096, DataType::Float16, DataType::Float16);
  AclTensors t({&p.qv, &p.kv, &p.vv, &p.tv, &p.ov});
  const aclTensor *k = t[1], *v = t[2];
  std::unique_ptr<aclTensorList, aclnnStatus (*)(const aclTensorList *)> keys(
      aclCreateTensorList(&k, 1), aclDestroyTensorList),
      values(aclCreateTensorList(&v, 1), aclDestroyTensorList);
  std::unique_ptr<aclIntArray, aclnnStatus (*)(const aclIntArray *)> lens(
      aclCreateIntArray(p.asl.values.data(), p.asl.values.size()),
      aclDestroyIntArray);
  char layout[] = "BSH";
  TorchOpsCall c;
  c.op = "npu_incre_flash_attention";
  c.inputs = [&](Peer &py) {
    return nlohmann::json{
        {"tensors",
         {{"query", pythonTensor(py, "q", p.qv)},
          {"key", pythonTensor(py, "k", p.kv)},
          {"value", pythonTensor(py, "v", p.vv)},
          {"block_table", pythonTensor(py, "table", p.tv)}}},
        {"args",
         {{{"tensor", "query"}}, {{"tensor", "key"}}, {{"tensor", "value"}}}},
        {"kwargs",
         {{"actual_seq_lengths", p.asl.values},
          {"block_table", {{"tensor", "block_table"}}},
          {"num_heads", p.n},
          {"scale_value", p.args.scaleValue},
          {"input_layout", layout},
          {"num_key_value_heads", p.nkv},
          {"block_size", p.bs},
          {"inner_precise", p.args.innerPrecise}}}};
  };
  c.call = [&] {
    uint64_t ws = 0;
    aclOpExecutor *exec = nullptr;
    const int rc = aclnnIncreFlashAttentionV4GetWorkspaceSize(
        t[0], keys.get(), values.get(), nullptr, nullptr, lens.get(), nullptr,
        nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, t[3], nullptr,
        p.n, p.args.scaleValue, layout, p.nkv, p.bs, p.args.innerPrecise, t[4],
        &ws, &exec);
    return rc != 0 ? rc
                   : runWithWorkspace(ws, exec, aclnnIncreFlashAttentionV4);
  };
  c.expect = [&](Peer &py) {
    nlohmann::json out = pythonTensor(py, "out", p.ov);
    out["of"] = "result";
    return nlohmann::json::array({out});
  };
  return torchOpsCase(ctx, c);
}
