//===- NsaCases.cpp - NsaCompressWithCache: decode-step cases -------------===//
//
// A decode step: B = 64 entries that all complete a window (N = 32, D = 128,
// window 32, stride 16, 128-token pages, f16 and bf16): 16 MiB of windows.
// Bound: the windows' bytes and the weights, against the read bandwidth.
// Two scenarios: the windows from memory (as in serving, where the rest of
// the model passes through the last-level cache between two steps of one
// layer: a flush before each call) and in the cache (calls back to back on
// the same windows; the limit is a warm read of as many bytes).
//
//===----------------------------------------------------------------------===//
#include "HostOverhead.h"
#include "MachineLimits.h"
#include "PythonCases.h"
#include "Suite.h"

#include "acl/acl.h"
#include "aclnnop/aclnn_nsa_compress_with_cache.h"
#include "ops/nsa_compress_with_cache/NsaCompressWithCacheTwin.h"
#include "ops/host/TensorView.h"
#include "ops/samples/Samples.h"

#include <omp.h>

#include <algorithm>
#include <chrono>
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
  int64_t batch = 64, heads = 32, d = 128, cbs = 32, stride = 16, page = 128;
  int64_t width = 2, blocks;
  DataType dtype;
  std::vector<unsigned char> input, weight, out;
  std::vector<int32_t> table, slots;
  std::vector<int64_t> lens;
  host::IntArray lensArray;
  TensorView views[5];
  aclnn::NsaCompressWithCacheArgs args;

  /// Every entry has length 160 + 16 * (b % 4): its window (tokens 128 ..
  /// 191 at most) lies in its second page, a distinct shuffled page.
  explicit Problem(DataType t) : dtype(t) {
    blocks = batch * width;
    const ops::DType kind =
        t == DataType::BFloat16 ? ops::DType::BF16 : ops::DType::F16;
    input = ops::randomBuffer(kind, blocks * page * heads * d, 1);
    weight = ops::randomBuffer(kind, cbs * heads, 2);
    out = ops::randomBuffer(kind, batch * heads * d, 3);
    table.resize(static_cast<size_t>(blocks));
    std::iota(table.begin(), table.end(), 0);
    std::shuffle(table.begin(), table.end(), std::mt19937(4));
    slots.resize(static_cast<size_t>(batch));
    std::iota(slots.begin(), slots.end(), 0);
    for (int64_t b = 0; b < batch; ++b)
      lens.push_back(160 + 16 * (b % 4));
    lensArray.values = lens;
    views[0] =
        host::contiguousView(input.data(), t, {blocks, page, heads, d});
    views[1] = host::contiguousView(weight.data(), t, {cbs, heads});
    views[2] = host::contiguousView(slots.data(), DataType::Int32, {batch});
    views[3] =
        host::contiguousView(table.data(), DataType::Int32, {batch, width});
    views[4] = host::contiguousView(out.data(), t, {batch, heads, d});
    args.input = &views[0];
    args.weight = &views[1];
    args.slotMapping = &views[2];
    args.actSeqLenOptional = &lensArray;
    args.blockTableOptional = &views[3];
    args.compressBlockSize = cbs;
    args.compressStride = stride;
    args.actSeqLenType = 1;
    args.pageBlockSize = page;
    args.outputCache = &views[4];
  }
  /// Bytes read: every entry's window of cbs tokens, and the weights.
  double bytesRead() const {
    return 2.0 * static_cast<double>(batch * cbs * heads * d + cbs * heads);
  }
};

using bench::Bound;
using bench::Context;
using bench::Result;

Result runNsa(Context &ctx, DataType t, bool inCache) {
  Problem p(t);
  Result r;
  if (host::Status s = ops::nsaCompressWithCache(p.args); !s) {
    r.error = s.message();
    return r;
  }
  r.bound = Bound::Read;
  r.inCache = inCache;
  r.bytes = r.workingSetBytes = p.bytesRead();
  // Weighted sums: a multiply and an add per window element.
  r.flops = 2.0 * static_cast<double>(p.batch * p.cbs * p.heads * p.d);
  r.peakGflops = ctx.limits().fmaGflops;
  r.peakName = "f32 FMA";
  if (inCache)
    r.note = "windows in the last-level cache (calls back to back)";
  ctx.measure(
      r, [&] { (void)ops::nsaCompressWithCache(p.args); },
      [&] { ops::nsaCompressWithCacheHandwritten(p.args); }, false);
  return r;
}

const std::string kShape = "B64-N32-D128-W32-S16-P128";

// Registration order is the report's order.
bench::Registrar r0("nsa/decode/" + kShape + "/paged/f16", "nsa",
                    [](Context &c) {
                      return runNsa(c, DataType::Float16, false);
                    });
bench::Registrar r1("nsa/decode/" + kShape + "/paged/bf16", "nsa",
                    [](Context &c) {
                      return runNsa(c, DataType::BFloat16, false);
                    });
bench::Registrar r2("nsa/decode-in-llc/" + kShape + "/paged/f16", "nsa",
                    [](Context &c) {
                      return runNsa(c, DataType::Float16, true);
                    });
bench::Registrar r3("nsa/decode-in-llc/" + kShape + "/paged/bf16", "nsa",
                    [](Context &c) {
                      return runNsa(c, DataType::BFloat16, true);
                    });

} // namespace

/// The headline case (f16 decode step) through
/// torch.ops.tilejit.npu_nsa_compress_infer.cache and the C API.
tilejit::bench::Result tilejit::bench::nsaTorchOps(Context &ctx) {
  Problem p(DataType::Float16);
  AclTensors t(
      {&p.views[0], &p.views[1], &p.views[2], &p.views[3], &p.views[4]});
  std::unique_ptr<aclIntArray, aclnnStatus (*)(const aclIntArray *)> lens(
      aclCreateIntArray(p.lens.data(), p.lens.size()), aclDestroyIntArray);
  char layout[] = "TND";
  TorchOpsCall c;
  c.op = "npu_nsa_compress_infer.cache";
  c.inputs = [&](Peer &py) {
    return nlohmann::json{
        {"tensors",
         {{"input", pythonTensor(py, "input", p.views[0])},
          {"weight", pythonTensor(py, "weight", p.views[1])},
          {"slot_mapping", pythonTensor(py, "slots", p.views[2])},
          {"block_table", pythonTensor(py, "table", p.views[3])},
          {"cache", pythonTensor(py, "cache", p.views[4])}}},
        {"args",
         {{{"tensor", "input"}},
          {{"tensor", "weight"}},
          {{"tensor", "slot_mapping"}},
          p.cbs,
          p.stride,
          p.page}},
        {"kwargs",
         {{"block_table", {{"tensor", "block_table"}}},
          {"actual_seq_len", p.lens},
          {"cache", {{"tensor", "cache"}}}}}};
  };
  c.call = [&] {
    uint64_t ws = 0;
    aclOpExecutor *exec = nullptr;
    const int rc = aclnnNsaCompressWithCacheGetWorkspaceSize(
        t[0], t[1], t[2], lens.get(), t[3], layout, p.cbs, p.stride,
        p.args.actSeqLenType, p.page, t[4], &ws, &exec);
    return rc != 0 ? rc : runWithWorkspace(ws, exec, aclnnNsaCompressWithCache);
  };
  c.expect = [&](Peer &py) {
    nlohmann::json out = pythonTensor(py, "out", p.views[4]);
    out["of"] = "cache";
    return nlohmann::json::array({out});
  };
  return torchOpsCase(ctx, c);
}
