//===- GatherCases.cpp - GatherPaKvCache: prefill and decode gathers ------===//
//
// Prefill-sized gathers (thousands of tokens from caches far beyond L2) and
// decode-sized ones (a few tokens), Norm and PA_NZ, f16. Prefill bound: the
// bytes moved (read and written, key and value) against the copy bandwidth
// at the working-set size; decode-sized calls are latency: µs per call. The
// generated side is phase 2 of a call prepared once (the launch); the host
// overhead of a whole call through the C API has cases of its own. The peer
// (Norm): PyTorch's index_select of the rows the block table names.
//
//===----------------------------------------------------------------------===//
#include "HostOverhead.h"
#include "KvCopyCase.h"
#include "MachineLimits.h"
#include "Peer.h"
#include "PythonCases.h"
#include "Suite.h"

#include "acl/acl.h"
#include "aclnnop/aclnn_gather_pa_kv_cache.h"
#include "ops/gather_pa_kv_cache/GatherPaKvCacheTwin.h"
#include "ops/host/TensorView.h"
#include "ops/samples/Samples.h"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <numeric>
#include <random>
#include <vector>

using namespace tilejit;
using host::DataType;
using host::TensorView;

namespace {

/// One problem: caches, outputs and index tensors, as host buffers and views.
struct Problem {
  bool nz = false;
  int64_t blocks, bs, heads, d, tokens, batches, width;
  DataType dtype = DataType::Float16;
  std::vector<unsigned char> keyCache, valueCache, keyOut, valueOut;
  std::vector<int32_t> table, lens;
  TensorView views[6];
  aclnn::GatherPaKvCacheArgs args;

  /// `batches` requests of about `tokens / batches` tokens each, random
  /// distinct blocks.
  Problem(bool nzMode, int64_t nb, int64_t blockSize, int64_t n, int64_t dim,
          int64_t total, int64_t b)
      : nz(nzMode), blocks(nb), bs(blockSize), heads(n), d(dim), tokens(total),
        batches(b) {
    const int64_t size = host::elementSize(dtype), row = heads * d;
    const int64_t e = 32 / size;
    keyCache = ops::randomBuffer(ops::DType::I16, blocks * bs * row, 1);
    valueCache = ops::randomBuffer(ops::DType::I16, blocks * bs * row, 2);
    keyOut.assign(static_cast<size_t>(tokens * row * size), 0);
    valueOut = keyOut;
    for (int64_t i = 0; i < batches; ++i)
      lens.push_back(
          static_cast<int32_t>(tokens / batches + (i < tokens % batches)));
    width = (tokens / batches + 1 + bs - 1) / bs;
    std::vector<int32_t> ids(static_cast<size_t>(blocks));
    std::iota(ids.begin(), ids.end(), 0);
    std::shuffle(ids.begin(), ids.end(), std::mt19937(3));
    for (int64_t i = 0; i < batches * width; ++i)
      table.push_back(ids[static_cast<size_t>(i % blocks)]);
    const host::Format f =
        nz ? host::Format::FractalNZ : host::Format::ND;
    std::vector<int64_t> cacheShape =
        nz ? std::vector<int64_t>{blocks, row / e, bs, e}
           : std::vector<int64_t>{blocks, bs, heads, d};
    std::vector<int64_t> outShape = nz ? std::vector<int64_t>{tokens, row}
                                       : std::vector<int64_t>{tokens, heads, d};
    views[0] = host::contiguousView(keyCache.data(), dtype, cacheShape, f);
    views[1] = host::contiguousView(valueCache.data(), dtype, cacheShape, f);
    views[2] = host::contiguousView(table.data(), DataType::Int32,
                                       {batches, width});
    views[3] = host::contiguousView(lens.data(), DataType::Int32, {batches});
    views[4] = host::contiguousView(keyOut.data(), dtype, outShape);
    views[5] = host::contiguousView(valueOut.data(), dtype, outShape);
    args.keyCache = &views[0];
    args.valueCache = &views[1];
    args.blockTables = &views[2];
    args.seqLens = &views[3];
    args.keyRef = &views[4];
    args.valueRef = &views[5];
    args.cacheMode = nz ? "PA_NZ" : "Norm";
  }
  /// Bytes read plus bytes written.
  double bytesMoved() const {
    return 2.0 * 2 * static_cast<double>(keyOut.size());
  }
};

using bench::Context;
using bench::Result;

void setupPeer(Context &ctx, Problem &p, Result &r) {
  bench::Peer *peer = ctx.peer();
  if (!peer || p.nz)
    return;
  // The rows each request reads, in order: what index_select takes.
  std::vector<int64_t> rows;
  for (int64_t b = 0; b < p.batches; ++b)
    for (int64_t i = 0; i < p.lens[static_cast<size_t>(b)]; ++i)
      rows.push_back(p.table[static_cast<size_t>(b * p.width + i / p.bs)] *
                         p.bs +
                     i % p.bs);
  nlohmann::json spec = {
      {"case", "gather"},
      {"dtype", "f16"},
      {"rows", p.blocks * p.bs},
      {"row", p.heads * p.d},
      {"tokens", p.tokens},
      {"key_cache",
       peer->writeInput("kc", p.keyCache.data(), p.keyCache.size())},
      {"value_cache",
       peer->writeInput("vc", p.valueCache.data(), p.valueCache.size())},
      {"index", peer->writeInput("index", rows.data(), rows.size() * 8)}};
  peer->setupInto(spec, r);
}

Result runGather(Context &ctx, Problem &p, bool decode) {
  return bench::kvCopyCase(ctx, p.args, ops::prepareGatherPaKvCache,
                           ops::gatherPaKvCacheHandwritten, p.bytesMoved(),
                           decode, [&](Result &r) { setupPeer(ctx, p, r); });
}

/// Host overhead of a call through the C API (bench::hostOverheadCase).
/// `tiny`: one token of 16 f16 elements, so the time is nearly all host
/// overhead; else the decode-sized call (8 requests of one token).
Result runHostOverhead(Context &ctx, bool tiny) {
  Problem p(false, 256, tiny ? 16 : 128, tiny ? 1 : 8, tiny ? 16 : 128,
            tiny ? 1 : 8, tiny ? 1 : 8);
  char mode[] = "Norm";
  return bench::hostOverheadCase(
      ctx,
      {&p.views[0], &p.views[1], &p.views[2], &p.views[3], &p.views[4],
       &p.views[5]},
      p.bytesMoved(), [&](aclTensor *const *t) {
        uint64_t ws = 0;
        aclOpExecutor *exec = nullptr;
        int rc = aclnnGatherPaKvCacheGetWorkspaceSize(t[0], t[1], t[2], t[3],
                                                      t[4], t[5], nullptr, mode,
                                                      false, &ws, &exec);
        if (rc == 0)
          rc = aclnnGatherPaKvCache(nullptr, 0, exec, nullptr);
        return rc;
      });
}

Result prefill(Context &c, bool nz) {
  Problem p(nz, 256, 128, 8, 128, 8192, 16);
  return runGather(c, p, false);
}
Result decode(Context &c, bool nz) {
  Problem p(nz, 256, 128, 8, 128, 8, 8);
  return runGather(c, p, true);
}

// Registration order is the report's order.
bench::Registrar r0("gather/prefill/T8192-R16-N8-D128-BS128-256blocks/norm/f16",
                    "gather", [](Context &c) { return prefill(c, false); });
bench::Registrar
    r1("gather/prefill/T8192-R16-N8-D128-BS128-256blocks/pa-nz/f16", "gather",
       [](Context &c) { return prefill(c, true); });
bench::Registrar r2("gather/decode/T8-R8-N8-D128-BS128-256blocks/norm/f16",
                    "gather", [](Context &c) { return decode(c, false); });
bench::Registrar r3("gather/decode/T8-R8-N8-D128-BS128-256blocks/pa-nz/f16",
                    "gather", [](Context &c) { return decode(c, true); });
bench::Registrar r4("gather/host-overhead/T8-N8-D128/c-api-norm/f16", "gather",
                    [](Context &c) { return runHostOverhead(c, false); });
bench::Registrar r5("gather/host-overhead/T1-N1-D16/c-api-norm/f16", "gather",
                    [](Context &c) { return runHostOverhead(c, true); });

} // namespace

/// The headline case (prefill, Norm) through
/// torch.ops.tilejit.npu_gather_pa_kv_cache and the C API (the cache mode
/// follows from the caches' format, ND: Norm, as torch_npu chooses it).
tilejit::bench::Result tilejit::bench::gatherTorchOps(Context &ctx) {
  Problem p(false, 256, 128, 8, 128, 8192, 16);
  AclTensors t({&p.views[0], &p.views[1], &p.views[2], &p.views[3], &p.views[4],
                &p.views[5]});
  char mode[] = "Norm";
  TorchOpsCall c;
  c.op = "npu_gather_pa_kv_cache";
  c.inputs = [&](Peer &py) {
    return nlohmann::json{
        {"tensors",
         {{"key_cache", pythonTensor(py, "key_cache", p.views[0])},
          {"value_cache", pythonTensor(py, "value_cache", p.views[1])},
          {"block_tables", pythonTensor(py, "table", p.views[2])},
          {"seq_lens", pythonTensor(py, "lens", p.views[3])},
          {"key", pythonTensor(py, "key", p.views[4])},
          {"value", pythonTensor(py, "value", p.views[5])}}},
        {"args",
         {{{"tensor", "key_cache"}},
          {{"tensor", "value_cache"}},
          {{"tensor", "block_tables"}},
          {{"tensor", "seq_lens"}},
          {{"tensor", "key"}},
          {{"tensor", "value"}}}},
        {"kwargs", nlohmann::json::object()}};
  };
  c.call = [&] {
    uint64_t ws = 0;
    aclOpExecutor *exec = nullptr;
    const int rc = aclnnGatherPaKvCacheGetWorkspaceSize(
        t[0], t[1], t[2], t[3], t[4], t[5], nullptr, mode, false, &ws, &exec);
    return rc != 0 ? rc : runWithWorkspace(ws, exec, aclnnGatherPaKvCache);
  };
  c.expect = [&](Peer &py) {
    nlohmann::json k = pythonTensor(py, "key_out", p.views[4]),
                   v = pythonTensor(py, "value_out", p.views[5]);
    k["of"] = "key";
    v["of"] = "value";
    return nlohmann::json::array({k, v});
  };
  return torchOpsCase(ctx, c);
}
