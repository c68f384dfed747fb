//===- ScatterCases.cpp - ScatterPaKvCache: prefill and decode scatters ---===//
//
// Prefill-sized scatters (thousands of tokens into caches far beyond L2) and
// decode-sized ones (a few tokens), Norm and PA_NZ, f16. Prefill bound: the
// bytes moved (key and value rows read and written) against the copy
// bandwidth at the working-set size; for random slots also the same writes
// done by plain copies in the best order measured, where the copy
// bandwidth says little (a limit case of its own). Decode-sized calls are
// latency: µs per call. The generated side is phase 2 of a call prepared
// once (the launch); the host overhead of a whole call through the C API has
// cases of its own. The peer (Norm): PyTorch's index_put_ of the rows into
// the flattened caches.
//
//===----------------------------------------------------------------------===//
#include "HostOverhead.h"
#include "KvCopyCase.h"
#include "MachineLimits.h"
#include "Peer.h"
#include "PythonCases.h"
#include "Suite.h"

#include "acl/acl.h"
#include "aclnnop/aclnn_scatter_pa_kv_cache.h"
#include "ops/common/StreamCopy.h"
#include "ops/host/TensorView.h"
#include "ops/samples/Samples.h"
#include "ops/scatter_pa_kv_cache/ScatterPaKvCacheTwin.h"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <numeric>
#include <random>
#include <vector>

using namespace tilejit;
using bench::median;
using bench::seconds;
using host::DataType;
using host::TensorView;

namespace {

/// One problem: new key/value rows, the caches and the slot mapping, as host
/// buffers and views.
struct Problem {
  bool nz = false;
  int64_t blocks, bs, heads, d, tokens;
  DataType dtype = DataType::Float16;
  std::vector<unsigned char> key, value, keyCache, valueCache;
  std::vector<int32_t> slots;
  /// (position, token) of each block's tokens, sorted (sameWritesSeconds).
  std::vector<std::vector<std::pair<int64_t, int64_t>>> buckets;
  TensorView views[5];
  aclnn::ScatterPaKvCacheArgs args;

  /// `total` tokens into random distinct slots of `nb` blocks of `blockSize`.
  /// With `runs`, the tokens are requests of `bs * 4` tokens whose slots run
  /// through whole blocks picked at random (what a paged allocator hands a
  /// prefill); otherwise every token has a random slot.
  Problem(bool nzMode, int64_t nb, int64_t blockSize, int64_t n, int64_t dim,
          int64_t total, bool runs = false)
      : nz(nzMode), blocks(nb), bs(blockSize), heads(n), d(dim), tokens(total) {
    const int64_t size = host::elementSize(dtype), row = heads * d;
    const int64_t e = 32 / size;
    key = ops::randomBuffer(ops::DType::I16, tokens * row, 1);
    value = ops::randomBuffer(ops::DType::I16, tokens * row, 2);
    keyCache = ops::randomBuffer(ops::DType::I16, blocks * bs * row, 3);
    valueCache = keyCache;
    if (runs) {
      std::vector<int32_t> ids(static_cast<size_t>(blocks));
      std::iota(ids.begin(), ids.end(), 0);
      std::shuffle(ids.begin(), ids.end(), std::mt19937(4));
      for (int64_t i = 0; i < tokens; ++i)
        slots.push_back(static_cast<int32_t>(
            ids[static_cast<size_t>(i / bs)] * bs + i % bs));
    } else {
      std::vector<int32_t> all(static_cast<size_t>(blocks * bs));
      std::iota(all.begin(), all.end(), 0);
      std::shuffle(all.begin(), all.end(), std::mt19937(4));
      slots.assign(all.begin(), all.begin() + tokens);
    }
    buckets.resize(static_cast<size_t>(blocks));
    for (int64_t i = 0; i < tokens; ++i) {
      const int64_t s = slots[static_cast<size_t>(i)];
      buckets[static_cast<size_t>(s / bs)].push_back({s % bs, i});
    }
    for (auto &b : buckets)
      std::sort(b.begin(), b.end());
    const host::Format f =
        nz ? host::Format::FractalNZ : host::Format::ND;
    std::vector<int64_t> cacheShape =
        nz ? std::vector<int64_t>{blocks, row / e, bs, e}
           : std::vector<int64_t>{blocks, bs, heads, d};
    views[0] = host::contiguousView(key.data(), dtype, {tokens, heads, d});
    views[1] = host::contiguousView(keyCache.data(), dtype, cacheShape, f);
    views[2] = host::contiguousView(slots.data(), DataType::Int32, {tokens});
    views[3] = host::contiguousView(value.data(), dtype, {tokens, heads, d});
    views[4] = host::contiguousView(valueCache.data(), dtype, cacheShape, f);
    args.key = &views[0];
    args.keyCacheRef = &views[1];
    args.slotMapping = &views[2];
    args.value = &views[3];
    args.valueCacheRef = &views[4];
    args.cacheModeOptional = nz ? "PA_NZ" : "Norm";
  }
  /// Bytes read plus bytes written (key and value rows; the slots are noise).
  double bytesMoved() const {
    return 2.0 * 2 * static_cast<double>(key.size());
  }

  /// Seconds of the call's writes done by plain copies in the best order
  /// measured: the same bytes from the same rows to the same places (every
  /// row, or for PA_NZ every 32-byte strip of every row), block by block
  /// (block b by thread b % threads, as the kernel deals them), each block's
  /// tokens in position order (sorted beforehand, outside the timing), PA_NZ
  /// strip by strip with the next block's rows requested meanwhile. No index
  /// arithmetic, no validation: what the memory system gives these writes,
  /// where the copy bandwidth says little (random PA_NZ slots: each strip is
  /// half a line no other token of the call writes, so a line is read for
  /// ownership and written back per 32 bytes moved).
  double sameWritesSeconds(int threads) {
    const int64_t size = host::elementSize(dtype), row = heads * d * size;
    const int64_t strips = row / 32;
    return seconds([&] {
#pragma omp parallel num_threads(threads)
      {
        const int t = omp_get_thread_num();
        for (int kv = 0; kv < 2; ++kv) {
          const unsigned char *src = kv ? value.data() : key.data();
          unsigned char *cache = kv ? valueCache.data() : keyCache.data();
          for (int64_t b = t; b < blocks; b += threads) {
            const auto &bucket = buckets[static_cast<size_t>(b)];
            if (!nz) {
              for (auto [pos, i] : bucket)
                std::memcpy(cache + (b * bs + pos) * row, src + i * row,
                            static_cast<size_t>(row));
              continue;
            }
            // While this block's strips go out, the rows of the thread's
            // next block are requested, a share per strip (faster than the
            // same order without).
            const auto *next = b + threads < blocks
                                   ? &buckets[static_cast<size_t>(b + threads)]
                                   : nullptr;
            const int64_t lines = next ? next->size() * (row / 64) : 0;
            int64_t requested = 0;
            for (int64_t c = 0; c < strips; ++c) {
              for (auto [pos, i] : bucket)
                std::memcpy(cache + ((b * strips + c) * bs + pos) * 32,
                            src + i * row + c * 32, 32);
              for (; requested < (c + 1) * lines / strips; ++requested) {
                const int64_t i =
                    (*next)[static_cast<size_t>(requested / (row / 64))].second;
                ops::prefetchLines(src + i * row + requested % (row / 64) * 64,
                                   64);
              }
            }
          }
        }
      }
    });
  }
};

using bench::Bound;
using bench::Context;
using bench::Result;

void setupPeer(Context &ctx, Problem &p, Result &r) {
  bench::Peer *peer = ctx.peer();
  if (!peer || p.nz)
    return;
  nlohmann::json spec = {
      {"case", "scatter"},
      {"dtype", "f16"},
      {"rows", p.blocks * p.bs},
      {"row", p.heads * p.d},
      {"tokens", p.tokens},
      {"key", peer->writeInput("key", p.key.data(), p.key.size())},
      {"value", peer->writeInput("value", p.value.data(), p.value.size())},
      {"cache",
       peer->writeInput("cache", p.keyCache.data(), p.keyCache.size())},
      {"slots", peer->writeInput("slots", p.slots.data(), p.slots.size() * 4)}};
  peer->setupInto(spec, r);
}

Result runScatter(Context &ctx, Problem &p, bool decode) {
  return bench::kvCopyCase(ctx, p.args, ops::prepareScatterPaKvCache,
                           ops::scatterPaKvCacheHandwritten, p.bytesMoved(),
                           decode, [&](Result &r) { setupPeer(ctx, p, r); });
}

/// The same writes as the random-slot prefill, by plain copies in the best
/// order measured (Problem::sameWritesSeconds): a limit, no kernel.
Result runSameWrites(Context &ctx, bool nz) {
  Problem p(nz, 256, 128, 8, 128, 8192);
  Result r;
  r.bound = Bound::Copy;
  r.bytes = p.bytesMoved();
  r.workingSetBytes = r.bytes / 2;
  r.note = "plain copies of the same rows to the same slots: the limit of "
           "these writes";
  const int threads = ctx.limits().threads;
  ctx.measure(
      r, [&] { (void)p.sameWritesSeconds(threads); }, {}, false);
  return r;
}

/// Host overhead of a call through the C API (bench::hostOverheadCase).
/// `tiny`: one token of 16 f16 elements, so the time is nearly all host
/// overhead; else the decode-sized call (8 tokens of 8 x 128 f16 heads).
Result runHostOverhead(Context &ctx, bool tiny) {
  Problem p(false, 256, tiny ? 16 : 128, tiny ? 1 : 8, tiny ? 16 : 128,
            tiny ? 1 : 8);
  char mode[] = "Norm";
  return bench::hostOverheadCase(
      ctx, {&p.views[0], &p.views[1], &p.views[2], &p.views[3], &p.views[4]},
      p.bytesMoved(), [&](aclTensor *const *t) {
        uint64_t ws = 0;
        aclOpExecutor *exec = nullptr;
        int rc = aclnnScatterPaKvCacheGetWorkspaceSize(
            t[0], t[1], t[2], t[3], t[4], nullptr, nullptr, nullptr, mode,
            nullptr, nullptr, nullptr, &ws, &exec);
        if (rc == 0)
          rc = aclnnScatterPaKvCache(nullptr, 0, exec, nullptr);
        return rc;
      });
}

Result prefill(Context &c, bool nz, bool runs) {
  Problem p(nz, 256, 128, 8, 128, 8192, runs);
  return runScatter(c, p, false);
}
Result decode(Context &c, bool nz) {
  Problem p(nz, 256, 128, 8, 128, 8);
  return runScatter(c, p, true);
}

const std::string kPrefill = "/T8192-N8-D128-BS128-256blocks/",
                  kDecode = "/T8-N8-D128-BS128-256blocks/";

// Registration order is the report's order.
bench::Registrar r0("scatter/prefill-random-slots" + kPrefill + "norm/f16",
                    "scatter",
                    [](Context &c) { return prefill(c, false, false); });
bench::Registrar r1("scatter/prefill-block-runs" + kPrefill + "norm/f16",
                    "scatter",
                    [](Context &c) { return prefill(c, false, true); });
bench::Registrar r2("scatter/prefill-random-slots" + kPrefill + "pa-nz/f16",
                    "scatter",
                    [](Context &c) { return prefill(c, true, false); });
bench::Registrar r3("scatter/prefill-block-runs" + kPrefill + "pa-nz/f16",
                    "scatter",
                    [](Context &c) { return prefill(c, true, true); });
bench::Registrar r4("scatter/same-writes-limit" + kPrefill + "norm/f16",
                    "scatter",
                    [](Context &c) { return runSameWrites(c, false); });
bench::Registrar r5("scatter/same-writes-limit" + kPrefill + "pa-nz/f16",
                    "scatter",
                    [](Context &c) { return runSameWrites(c, true); });
bench::Registrar r6("scatter/decode" + kDecode + "norm/f16", "scatter",
                    [](Context &c) { return decode(c, false); });
bench::Registrar r7("scatter/decode" + kDecode + "pa-nz/f16", "scatter",
                    [](Context &c) { return decode(c, true); });
bench::Registrar r8("scatter/host-overhead/T8-N8-D128/c-api-norm/f16",
                    "scatter",
                    [](Context &c) { return runHostOverhead(c, false); });
bench::Registrar r9("scatter/host-overhead/T1-N1-D16/c-api-norm/f16", "scatter",
                    [](Context &c) { return runHostOverhead(c, true); });

} // namespace

/// The headline case (random slots, Norm) through
/// torch.ops.tilejit.npu_scatter_pa_kv_cache and the C API. The caches go
/// to the Python side before any call: the comparison is of what each
/// call wrote.
tilejit::bench::Result tilejit::bench::scatterTorchOps(Context &ctx) {
  Problem p(false, 256, 128, 8, 128, 8192);
  AclTensors t(
      {&p.views[0], &p.views[1], &p.views[2], &p.views[3], &p.views[4]});
  char mode[] = "Norm";
  TorchOpsCall c;
  c.op = "npu_scatter_pa_kv_cache";
  c.inputs = [&](Peer &py) {
    return nlohmann::json{
        {"tensors",
         {{"key", pythonTensor(py, "key", p.views[0])},
          {"key_cache", pythonTensor(py, "key_cache", p.views[1])},
          {"slot_mapping", pythonTensor(py, "slots", p.views[2])},
          {"value", pythonTensor(py, "value", p.views[3])},
          {"value_cache", pythonTensor(py, "value_cache", p.views[4])}}},
        {"args",
         {{{"tensor", "key"}},
          {{"tensor", "value"}},
          {{"tensor", "key_cache"}},
          {{"tensor", "value_cache"}},
          {{"tensor", "slot_mapping"}}}},
        {"kwargs", {{"cache_mode", mode}}}};
  };
  c.call = [&] {
    uint64_t ws = 0;
    aclOpExecutor *exec = nullptr;
    const int rc = aclnnScatterPaKvCacheGetWorkspaceSize(
        t[0], t[1], t[2], t[3], t[4], nullptr, nullptr, nullptr, mode, nullptr,
        nullptr, nullptr, &ws, &exec);
    return rc != 0 ? rc : runWithWorkspace(ws, exec, aclnnScatterPaKvCache);
  };
  c.expect = [&](Peer &py) {
    nlohmann::json k = pythonTensor(py, "key_cache_out", p.views[1]),
                   v = pythonTensor(py, "value_cache_out", p.views[4]);
    k["of"] = "key_cache";
    v["of"] = "value_cache";
    return nlohmann::json::array({k, v});
  };
  return torchOpsCase(ctx, c);
}
