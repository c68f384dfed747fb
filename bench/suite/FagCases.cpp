//===- FagCases.cpp - FlashAttentionUnpaddingScoreGradV5: backward cases --===//
//
// The attention backward on the shapes of issue 23: T = 4 x 1024 (four
// batches of 1024), N = 8, D = 128, no mask and causal (mode 3), bf16 and
// fp32; one sequence of 8192 with a band of 1024 (mode 4, pre = 1024,
// next = 0); GQA 8/2 causal; the band and GQA shapes again at D = 64 and
// D = 256. Compute-bound: the useful FLOPs (5 products x
// 2 D per kept (i, j) per query head, kept positions counted exactly from
// Problem::band) against the arithmetic peak of the dtype measured in this
// run: the f32 FMA peak for fp32; for bf16 the AMX tdpbf16ps peak where
// the host has AMX (the generated kernel's bf16 products run there), else
// the vdpbf16ps peak, else the f32 FMA peak. The generated side includes
// phase 1. The peer (4 x 1024, no mask and causal): PyTorch's autograd
// backward of softmax(Q K^T scale + mask) V per batch, on the same
// inputs (the graph built once; each call computes dQ, dK, dV from it).
// Problems (inputs, a float64 forward for M, L and O) are built once per
// process.
//
//===----------------------------------------------------------------------===//
#include "HostOverhead.h"
#include "MachineLimits.h"
#include "Peer.h"
#include "PythonCases.h"
#include "Suite.h"

#include "acl/acl.h"
#include "aclnnop/aclnn_flash_attention_score_grad.h"

#include "ops/flash_attention_score_grad/FlashAttentionScoreGradTwin.h"
#include "ops/flash_attention_score_grad/FlashAttentionScoreGradData.h"

#include <omp.h>

#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <vector>

using namespace tilejit;
namespace fag = tilejit::ops::fag;
using host::DataType;

namespace {

/// Shape ids: 0 no mask, 1 causal (both T = 4 x 1024, N = 8), 2 one 8192
/// sequence with a 1024 band, 3 GQA 8/2 causal, all at D = 128; 4 and 5 the
/// GQA and band shapes at D = 64, 6 and 7 at D = 256 (the block and
/// register choices beyond the headline head size).
struct Shape {
  const char *name;
  int64_t kind; ///< 0 no mask, 1 causal, 2 band, 3 GQA causal
  int64_t d;
};
constexpr Shape kShapes[] = {
    {"full/T4x1024-N8-D128/tnd", 0, 128},
    {"causal/T4x1024-N8-D128/tnd", 1, 128},
    {"band/T8192-N8-D128-W1024/tnd", 2, 128},
    {"causal-gqa/T4x1024-N8-KV2-D128/tnd", 3, 128},
    {"causal-gqa/T4x1024-N8-KV2-D64/tnd", 3, 64},
    {"band/T8192-N8-D64-W1024/tnd", 2, 64},
    {"causal-gqa/T4x1024-N8-KV2-D256/tnd", 3, 256},
    {"band/T8192-N8-D256-W1024/tnd", 2, 256},
};

fag::Config shapeConfig(int64_t shape, DataType t) {
  const Shape &s = kShapes[shape];
  fag::Config c;
  c.dtype = t;
  c.n1 = 8;
  c.n2 = s.kind == 3 ? 2 : 8;
  c.d = s.d;
  c.seqQ = c.seqKv =
      s.kind == 2 ? std::vector<int64_t>{8192} : std::vector<int64_t>(4, 1024);
  if (s.kind != 0) {
    c.mask = fag::MaskForm::Compressed;
    c.sparseMode = s.kind == 2 ? 4 : 3;
    c.preTokens = s.kind == 2 ? 1024 : 65536;
    c.nextTokens = s.kind == 2 ? 0 : 65536;
  }
  return c;
}

const char *shapeName(int64_t shape) { return kShapes[shape].name; }

/// Useful FLOPs: 5 products x 2 D per kept (i, j) per query head.
double usefulFlops(const fag::Data &data) {
  fag::Problem p;
  if (!fag::validate(data.args(), p))
    return 0;
  double kept = 0;
  for (int64_t b = 0; b < p.bin; ++b) {
    const fag::Problem::Band band = p.band(b);
    const int64_t sq = p.sq(b);
    for (int64_t j = 0; j < p.skv(b); ++j) {
      if (j < band.prefix) {
        kept += static_cast<double>(sq);
        continue;
      }
      const int64_t lo = std::max<int64_t>(0, j - band.hi),
                    hi = std::min(sq - 1, j - band.lo);
      kept += static_cast<double>(std::max<int64_t>(0, hi - lo + 1));
    }
  }
  return kept * static_cast<double>(p.n1) * 5.0 * 2.0 *
         static_cast<double>(p.d);
}

using bench::Bound;
using bench::Context;
using bench::Result;

size_t viewBytes(const host::TensorView &v) {
  int64_t n = host::elementSize(v.dtype);
  for (int64_t s : v.shape)
    n *= s;
  return static_cast<size_t>(n);
}

void setupPeer(Context &ctx, fag::Data &data, int64_t shape, Result &r) {
  bench::Peer *peer = ctx.peer();
  if (!peer || shape > 1)
    return;
  const auto &a = data.args();
  auto put = [&](const char *name, const host::TensorView *v) {
    return peer->writeInput(name, v->data, viewBytes(*v));
  };
  nlohmann::json spec = {
      {"case", "fag"},
      {"dtype", a.query->dtype == DataType::BFloat16 ? "bf16" : "f32"},
      {"seq", data.config().seqQ},
      {"n", data.config().n1},
      {"d", data.config().d},
      {"causal", shape == 1},
      {"scale", a.scaleValue},
      {"q", put("q", a.query)},
      {"k", put("k", a.keyIn)},
      {"v", put("v", a.value)},
      {"dy", put("dy", a.dy)},
      {"expect_dq", put("dq", a.dqOut)}};
  peer->setupInto(spec, r);
}

Result runFag(Context &ctx, int64_t shape, DataType t) {
  auto owned = std::make_unique<fag::Data>(shapeConfig(shape, t));
  fag::Data &data = *owned;
  Result r;
  if (host::Status s = ops::flashAttentionScoreGrad(data.args()); !s) {
    r.error = s.message();
    return r;
  }
  r.bound = Bound::Compute;
  r.flops = usefulFlops(data);
  const bench::Limits &l = ctx.limits();
  r.peakGflops = l.fmaGflops;
  r.peakName = "f32 FMA";
  if (t == DataType::BFloat16 && l.amxGflops > 0) {
    r.peakGflops = l.amxGflops;
    r.peakName = "AMX bf16";
  } else if (t == DataType::BFloat16 && l.bf16DotGflops > 0) {
    r.peakGflops = l.bf16DotGflops;
    r.peakName = "vdpbf16ps";
  }
  const auto &a = data.args();
  for (const host::TensorView *v :
       {a.query, a.keyIn, a.value, a.dy, a.dqOut, a.dkOut, a.dvOut})
    r.bytes += static_cast<double>(viewBytes(*v));
  r.workingSetBytes = r.bytes;
  const bool twinOk = ops::flashAttentionScoreGradHandwritten(data.args());
  // The generated kernel's outputs are what the peer compares with.
  (void)ops::flashAttentionScoreGrad(data.args());
  setupPeer(ctx, data, shape, r);
  ctx.measure(
      r, [&] { (void)ops::flashAttentionScoreGrad(data.args()); },
      twinOk ? bench::Call([&] {
        (void)ops::flashAttentionScoreGradHandwritten(data.args());
      })
             : bench::Call(),
      true, ctx.options().quick ? 2 : 3);
  if (!twinOk)
    r.twinNote = "the twin does not cover this call (or this host)";
  return r;
}

std::string caseName(int64_t shape, DataType t) {
  return std::string("fag/") + shapeName(shape) +
         (t == DataType::Float ? "/f32" : "/bf16");
}

// Registration order is the report's order: the D = 128 cases (full and
// causal in bf16 then f32, then band and GQA), then GQA and band at D = 64
// and D = 256, bf16 before f32.
const bool registered = [] {
  const std::pair<int64_t, int64_t> order[] = {{0, 1}, {2, 3}, {4, 5}, {6, 7}};
  for (auto [first, second] : order)
    for (DataType t : {DataType::BFloat16, DataType::Float})
      for (int64_t shape : {first, second})
        bench::Registrar(caseName(shape, t), "fag",
                         [shape, t](Context &c) { return runFag(c, shape, t); });
  return true;
}();

} // namespace

/// The headline case (T = 4 x 1024, no mask, bf16) through
/// torch.ops.tilejit.npu_fusion_attention_grad (its TND route, with
/// actual_seq_qlen and actual_seq_kvlen) and the C API.
tilejit::bench::Result tilejit::bench::fagTorchOps(Context &ctx) {
  auto owned = std::make_unique<fag::Data>(shapeConfig(0, DataType::BFloat16));
  const auto &a = owned->args();
  Result r;
  if (a.queryRope || a.keyInRope || a.dropMaskOptional || a.qStartIdxOptional ||
      a.kvStartIdxOptional || a.dqRopeOut || a.dkRopeOut) {
    r.error = "torch_npu's schema cannot express this call";
    return r;
  }
  AclTensors t({a.query, a.keyIn, a.value, a.dy, a.pseShiftOptional,
                a.paddingMaskOptional, a.attenMaskOptional,
                a.softmaxMaxOptional, a.softmaxSumOptional, a.softmaxInOptional,
                a.attentionInOptional, a.sinkInOptional, a.dqOut, a.dkOut,
                a.dvOut, a.dpseOut, a.dsinkOut});
  using IntArrayPtr =
      std::unique_ptr<aclIntArray, aclnnStatus (*)(const aclIntArray *)>;
  auto intArray = [](const host::IntArray *v) {
    return IntArrayPtr(v ? aclCreateIntArray(v->values.data(), v->values.size())
                         : nullptr,
                       aclDestroyIntArray);
  };
  IntArrayPtr prefix = intArray(a.prefixOptional),
              seqQ = intArray(a.actualSeqQLenOptional),
              seqKv = intArray(a.actualSeqKvLenOptional);
  std::string layout = a.inputLayout ? a.inputLayout : "",
              statsLayout = a.softmaxInLayout ? a.softmaxInLayout : "";
  TorchOpsCall c;
  c.op = "npu_fusion_attention_grad";
  c.samples = ctx.options().quick ? 2 : 5;
  c.inputs = [&](Peer &py) {
    nlohmann::json tensors = {{"query", pythonTensor(py, "q", *a.query)},
                              {"key", pythonTensor(py, "k", *a.keyIn)},
                              {"value", pythonTensor(py, "v", *a.value)},
                              {"dy", pythonTensor(py, "dy", *a.dy)}};
    nlohmann::json kwargs = {{"scale_value", a.scaleValue},
                             {"keep_prob", a.keepProb},
                             {"pre_tockens", a.preTokens},
                             {"next_tockens", a.nextTokens},
                             {"inner_precise", a.innerPrecise},
                             {"sparse_mode", a.sparseMode},
                             // op-plugin passes "TND" on as "same_as_input".
                             {"softmax_layout", statsLayout == "same_as_input"
                                                    ? "TND"
                                                    : statsLayout}};
    using NamedView = std::pair<const char *, const host::TensorView *>;
    using NamedArray = std::pair<const char *, const host::IntArray *>;
    for (auto [name, v] : std::initializer_list<NamedView>{
             {"pse", a.pseShiftOptional},
             {"padding_mask", a.paddingMaskOptional},
             {"atten_mask", a.attenMaskOptional},
             {"softmax_max", a.softmaxMaxOptional},
             {"softmax_sum", a.softmaxSumOptional},
             {"softmax_in", a.softmaxInOptional},
             {"attention_in", a.attentionInOptional},
             {"sink", a.sinkInOptional}})
      if (v) {
        tensors[name] = pythonTensor(py, name, *v);
        kwargs[name] = {{"tensor", name}};
      }
    for (auto [name, v] : std::initializer_list<NamedArray>{
             {"prefix", a.prefixOptional},
             {"actual_seq_qlen", a.actualSeqQLenOptional},
             {"actual_seq_kvlen", a.actualSeqKvLenOptional}})
      if (v)
        kwargs[name] = v->values;
    return nlohmann::json{{"tensors", tensors},
                          {"args",
                           {{{"tensor", "query"}},
                            {{"tensor", "key"}},
                            {{"tensor", "value"}},
                            {{"tensor", "dy"}},
                            a.headNum,
                            layout}},
                          {"kwargs", kwargs}};
  };
  c.call = [&] {
    uint64_t ws = 0;
    aclOpExecutor *exec = nullptr;
    const int rc = aclnnFlashAttentionUnpaddingScoreGradV5GetWorkspaceSize(
        t[0], nullptr, t[1], nullptr, t[2], t[3], t[4], nullptr, t[5], t[6],
        t[7], t[8], t[9], t[10], t[11], prefix.get(), seqQ.get(), seqKv.get(),
        nullptr, nullptr, a.scaleValue, a.keepProb, a.preTokens, a.nextTokens,
        a.headNum, layout.data(), a.innerPrecise, a.sparseMode, a.pseType,
        a.softmaxInLayout ? statsLayout.data() : nullptr, t[12], nullptr, t[13],
        nullptr, t[14], t[15], t[16], &ws, &exec);
    return rc != 0 ? rc
                   : runWithWorkspace(ws, exec,
                                      aclnnFlashAttentionUnpaddingScoreGradV5);
  };
  c.expect = [&](Peer &py) {
    nlohmann::json out = nlohmann::json::array();
    int i = 0;
    using NamedView = std::pair<const char *, const host::TensorView *>;
    for (auto [name, v] : std::initializer_list<NamedView>{
             {"dq", a.dqOut}, {"dk", a.dkOut}, {"dv", a.dvOut}}) {
      nlohmann::json e = pythonTensor(py, name, *v);
      e["of"] = "result." + std::to_string(i++);
      out.push_back(e);
    }
    return out;
  };
  return torchOpsCase(ctx, c);
}
