//===- IncreFlashAttentionLaunch.cpp - Kernel choice, arguments, launch ---===//
//
// Section numbers refer to ../shared/spec/incre_flash_attention_v4.md.
//
//===----------------------------------------------------------------------===//
#include "ops/Embedded.h"
#include "ops/common/HostCache.h"
#include "ops/host/KernelArgs.h"
#include "ops/host/Kernels.h"
#include "ops/common/RunStates.h"
#include "ops/incre_flash_attention/IfaPlan.h"
#include "ops/incre_flash_attention/IncreFlashAttention.h"
#include "ops/host/OpRegistry.h"

#include <algorithm>
#include <limits>
#include <memory>
#include <numeric>
#include <string>

namespace tilejit::ops {

using host::DataType;
using host::Status;
using host::TensorView;
namespace status = host::status;
using host::collapse;
using host::elemType;
using host::FlatView;
using host::getKernel;
using host::hostCompiler;
using host::launchKernel;
using host::prepareAndRun;
using host::programsFor;
using host::valueKind;
using namespace ifa;

namespace {

const jit::KernelSource &source() {
  static const jit::KernelSource &src =
      embeddedKernel("ops/incre_flash_attention/incre_flash_attention.tile");
  return src;
}


/// [B, Nkv, G, D] view of a query-shaped tensor (3.1).
FlatView headView(const TensorView &t, const Geometry &g) {
  const auto &s = t.strides;
  FlatView f{t.firstElement(), {g.b, g.nkv, g.g, g.d}, {}};
  if (g.layout == Layout::BSH)
    f.strides = {s[0], g.g * g.d * s[2], g.d * s[2], s[2]};
  else if (g.layout == Layout::BNSD)
    f.strides = {s[0], g.g * s[1], s[1], s[3]};
  else
    f.strides = {s[0], g.g * s[2], s[2], s[3]};
  return f;
}

/// [blocks, Nkv, rows, D] view of a contiguous-mode or paged KV tensor.
FlatView kvView(const TensorView &t, const Geometry &g) {
  const auto &s = t.strides;
  FlatView f{t.firstElement(), {}, {}};
  if (g.mode == KvMode::Paged) {
    f.sizes = {t.dim(0), g.nkv, g.blockSize, g.d};
    if (g.cache4d)
      f.strides = s;
    else
      f.strides = {s[0], g.d * s[2], s[1], s[2]};
    return f;
  }
  if (g.layout == Layout::BNSD) {
    f.sizes = t.shape;
    f.strides = s;
  } else if (g.layout == Layout::BSND) {
    f.sizes = {t.dim(0), g.nkv, t.dim(1), g.d};
    f.strides = {s[0], s[2], s[1], s[3]};
  } else {
    f.sizes = {t.dim(0), g.nkv, t.dim(1), g.d};
    f.strides = {s[0], g.d * s[2], s[1], s[2]};
  }
  return f;
}

/// [2, Nkv, D] view of an antiquant parameter (4.2).
FlatView antiquantView(const TensorView &t, const Geometry &g) {
  const auto &s = t.strides;
  FlatView f{t.firstElement(), {2, g.nkv, g.d}, {}};
  if (t.rank() == 1)
    f.strides = {s[0], 0, 0};
  else if (t.rank() == 2)
    f.strides = {s[0], g.d * s[1], s[1]};
  else if (t.rank() == 3)
    f.strides = {s[0], s[1], s[2]};
  else if (t.dim(1) == 1)
    f.strides = {s[0], s[2], s[3]};
  else
    f.strides = {s[0], s[1], s[3]};
  return f;
}

/// [Nkv, G, D] view of a quantScale2/quantOffset2 (6.6), with any strides.
/// Per-channel values are in channel order h * D + d over the row-major
/// order of an accepted shape: either one axis of N * D elements, or axes
/// of N then axes of D (size-1 axes aside), so the axes that multiply to D
/// and the rest each reduce to one axis with one stride.
FlatView quantView(const TensorView &t, const Geometry &g) {
  FlatView f{t.firstElement(), {g.nkv, g.g, g.d}, {0, 0, 0}};
  if (t.numel() == 1)
    return f;
  const int rank = static_cast<int>(t.rank());
  int64_t tail = 1;
  for (int k = rank; k-- > 1;) {
    tail *= t.dim(k);
    if (tail != g.d)
      continue;
    if (auto two = collapse(t, {k, rank - k})) {
      const int64_t eh = two->strides[0], ed = two->strides[1];
      f.strides = {g.g * eh, eh, ed};
      return f;
    }
  }
  // One axis of N * D (validate() admits no other shape).
  int64_t e = 0;
  for (int k = 0; k < rank; ++k)
    if (t.dim(k) != 1)
      e = t.strides[static_cast<size_t>(k)];
  f.strides = {g.g * g.d * e, g.d * e, e};
  return f;
}

void pack(rt::ArgPack &p, rt::ElemType type, const FlatView &f, const char *name) {
  p.tensor(type, f.data, f.sizes, f.strides).named(name);
}

int64_t roundUp(int64_t x, int64_t m) { return (x + m - 1) / m * m; }

/// What one run writes (the KV window per batch entry, the partial
/// results) and the argument packs that point into it: one per concurrent
/// run of a repeatable executor (RunStates).
struct RunState {
  rt::ArgPack pa, pc;
  // Tensor lists: one launch of the partial kernel per batch entry, each
  // over that entry's key and value tensors (nothing is copied).
  std::vector<rt::ArgPack> perBatch;
  std::vector<int64_t> start, len;
  std::vector<float> ws;

  std::unique_ptr<RunState> clone() const {
    auto c = std::make_unique<RunState>();
    c->pa = pa;
    c->pc = pc;
    c->perBatch = perBatch;
    auto move = [&](const auto &from, auto &to) {
      to.assign(from.size(), {});
      const size_t bytes = from.size() * sizeof(from[0]);
      c->pa.relocate(from.data(), bytes, to.data());
      c->pc.relocate(from.data(), bytes, to.data());
      for (rt::ArgPack &p : c->perBatch)
        p.relocate(from.data(), bytes, to.data());
    };
    move(start, c->start);
    move(len, c->len);
    move(ws, c->ws);
    return c;
  }
};

struct Launch {
  Geometry g;
  std::shared_ptr<const jit::CompiledKernel> partial, combine;
  std::optional<TensorView> padding, table;
  RunStates<RunState> states{std::make_unique<RunState>()};

  Status run() {
    return states.run([this](RunState &r) { return run(r); });
  }

  Status run(RunState &r) {
    std::vector<int64_t> &start = r.start, &len = r.len;
    int64_t pad = 0;
    if (padding)
      std::memcpy(&pad, padding->firstElement(), 8);
    pad = std::max<int64_t>(pad, 0);
    for (size_t b = 0; b < g.len.size(); ++b) {
      int64_t l = g.len[b], st = 0;
      if (padding) {
        st = g.sOf[b] - pad - l;
        if (st < 0) {
          st = 0;
          l = 0;
        }
      }
      start[b] = st;
      len[b] = l;
    }
    if (table) {
      const TensorView &t = *table;
      for (int64_t b = 0; b < g.b; ++b) {
        const int64_t used =
            (len[static_cast<size_t>(b)] + g.blockSize - 1) / g.blockSize;
        for (int64_t i = 0; i < used; ++i) {
          int32_t id = 0;
          std::memcpy(&id,
                      static_cast<const char *>(t.firstElement()) +
                          (b * t.strides[0] + i * t.strides[1]) * 4,
                      4);
          if (id < 0 || id >= g.numBlocks)
            return Status::error(status::ParamInvalid, "blocktable: entry [", b,
                                 ", ", i, "] = ", id,
                                 " is not a block of the cache (0 .. ",
                                 g.numBlocks - 1, ")");
        }
      }
    }
    if (r.perBatch.empty()) {
      if (Status s = launchKernel(*partial, r.pa, "IncreFlashAttentionV4"); !s)
        return s;
    }
    for (const rt::ArgPack &p : r.perBatch)
      if (Status s = launchKernel(*partial, p, "IncreFlashAttentionV4"); !s)
        return s;
    return launchKernel(*combine, r.pc, "IncreFlashAttentionV4");
  }
};

Status plan(const aclnn::IncreFlashAttentionV4Args &a, Launch &L,
            host::Executor &executor) {
  Geometry &g = L.g;
  const int64_t bkv =
      g.paged ? std::gcd<int64_t>(g.blockSize, 64) : (g.d > 256 ? 32 : 64);
  const TensorView &q = *a.query, &out = *a.attentionOut;
  // Caches whose rows hold every KV head, one after another (BSH, BSND,
  // paged 3-D), go to ifa_rows, which reads them row by row; with one KV
  // head both kernels read the same way.
  auto byRow = [&](const FlatView &f) {
    return f.strides[3] == 1 && f.strides[1] == g.d && f.strides[2] == g.nkv * g.d;
  };
  bool interleaved = g.nkv > 1;
  for (int64_t i = 0; interleaved && i < (g.mode == KvMode::List ? g.b : 1); ++i)
    interleaved = byRow(kvView(*a.key->at(i), g)) && byRow(kvView(*a.value->at(i), g));
  const bool hasOff = a.antiquantOffset && !a.antiquantOffset->isEmpty();
  const bool hasQOff = a.quantOffset2 && !a.quantOffset2->isEmpty();
  auto dtype = [](DataType t) { return jit::dtypeValue(host::elemType(valueKind(t))); };
  jit::Specialization sp{{"T", dtype(q.dtype)},
                         {"KT", dtype(g.kvDtype)},
                         {"D", g.d},
                         {"G", g.g},
                         {"BKV", bkv},
                         {"PAGED", g.paged},
                         {"MASK", g.mask},
                         {"PSE", g.pse},
                         {"QUANTKV", g.quantKv}};
  if (g.quantKv && hasOff)
    sp.push_back({"AOFF", true});
  // bf16 query and keys on AVX512-BF16: the scores are dots of the stored
  // query and key rows (pairs of bf16 products per lane), scaled after; P
  // goes into PV as bf16 pairs too where the cache (the key and value
  // tensors' whole storage: fixed for a decode loop, whatever its lengths)
  // fits in the last-level cache. Streamed from memory, PV on bf16 pairs
  // ran slower (Zen 4; docs/notes/2026-11-tuning-history.md).
  int64_t llc = 0;
  if (Status s = lastLevelCacheBytes(llc); !s)
    return s;
  jit::Compiler *compiler = nullptr;
  if (Status s = hostCompiler(compiler); !s)
    return s;
  if (q.dtype == DataType::BFloat16 && g.kvDtype == DataType::BFloat16 &&
      compiler->hasBf16Dot()) {
    sp.push_back({"BFDOT", true});
    int64_t rows = g.paged ? g.numBlocks * g.blockSize : 0;
    for (int64_t sb : g.sOf)
      rows += sb;
    const int64_t bytes = 2 * rows * g.nkv * g.d * host::elementSize(g.kvDtype);
    if (bytes <= llc)
      sp.push_back({"BFPV", true});
  }
  if (g.mask)
    sp.push_back({"MT", jit::dtypeValue(a.attenMask->dtype == DataType::Int8 ? rt::ElemType::I8
                                                                             : rt::ElemType::U8)});
  // ifa_rows requests a split's first step (BKV rows of NKV * D elements)
  // as one region: the number of KV heads is a model constant, so this adds
  // no compiles to a decode loop.
  if (interleaved)
    sp.push_back({"CH", bkv * g.nkv * g.d});
  host::KernelUse use;
  if (Status s = getKernel(source(), interleaved ? "ifa_rows" : "ifa_partial", sp, L.partial, &use);
      !s)
    return s;
  executor.addKernelUse(use);
  jit::Specialization sc{{"O", dtype(out.dtype)},
                         {"D", g.d},
                         {"G", g.g},
                         {"QUANT", g.quantOut}};
  if (g.quantOut)
    sc.push_back({"QS", dtype(a.quantScale2->dtype)});
  if (g.quantOut && hasQOff)
    sc.push_back({"QOFF", true});
  if (Status s = getKernel(source(), "ifa_combine", sc, L.combine, &use); !s)
    return s;
  executor.addKernelUse(use);

  // The split of the KV window over programs: enough splits for every core
  // even at batch 1 (counted per batch entry, as ifa_rows runs one program
  // per entry and split; ifa_partial, one per KV head too, takes the same
  // splits so that every layout sums in the same order), chunks of at least
  // 512 positions.
  const int64_t maxLen =
      g.len.empty() ? 0 : *std::max_element(g.len.begin(), g.len.end());
  const bool lists = g.mode == KvMode::List;
  const int64_t units = g.b * g.nkv, perLaunch = lists ? 1 : g.b;
  const int64_t target = programsFor(std::numeric_limits<int32_t>::max());
  int64_t parts = 1;
  if (perLaunch < target)
    parts = std::clamp<int64_t>((target + perLaunch - 1) / perLaunch, 1,
                                std::max<int64_t>(1, maxLen / 512));
  const int64_t chunk =
      std::max(bkv, roundUp((maxLen + parts - 1) / parts, bkv));
  parts = std::max<int64_t>(1, (maxLen + chunk - 1) / chunk);

  RunState &R = L.states.first();
  R.start.assign(static_cast<size_t>(g.b), 0);
  R.len.assign(static_cast<size_t>(g.b), 0);
  const int64_t rows = units * parts * g.g;
  R.ws.assign(static_cast<size_t>(rows * (2 + g.d)), 0.0f);

  // The partial kernel's arguments for batch entries [b0, b0 + nb): views
  // of those rows (a broadcast axis stays put), the given key and value.
  float *pm = R.ws.data(), *pl = pm + rows, *po = pl + rows;
  auto rowsOf = [](FlatView f, int64_t b0, int64_t nb, int64_t es) {
    f.data = static_cast<char *>(f.data) + b0 * f.strides[0] * es;
    f.sizes[0] = nb;
    return f;
  };
  const int64_t qes = host::elementSize(q.dtype);
  using rt::ElemType;
  const ElemType tq = elemType(q.dtype), tkv = elemType(g.kvDtype);
  const ElemType tm = g.mask && a.attenMask->dtype == DataType::Int8 ? ElemType::I8 : ElemType::U8;
  auto packRange = [&](rt::ArgPack &p, int64_t b0, int64_t nb, const FlatView &kv,
                       const FlatView &vv) {
    pack(p, tq, rowsOf(headView(q, g), b0, nb, qes), "q");
    pack(p, tkv, kv, "k");
    pack(p, tkv, vv, "v");
    if (g.paged)
      p.tensor(ElemType::I32, a.blocktable->firstElement(), a.blocktable->shape,
               a.blocktable->strides)
          .named("bt");
    p.tensor(R.start.data() + b0, {nb}).named("start");
    p.tensor(R.len.data() + b0, {nb}).named("len");
    if (g.mask) {
      const TensorView &m = *a.attenMask;
      pack(p, tm,
           rowsOf(FlatView{m.firstElement(), {g.b, m.dim(-1)}, {m.strides[0], m.strides.back()}},
                  b0, nb, host::elementSize(m.dtype)),
           "mask");
    }
    if (g.pse) {
      const TensorView &t = *a.pseShift;
      const auto &st = t.strides;
      pack(p, elemType(t.dtype),
           rowsOf(FlatView{t.firstElement(), {g.b, g.nkv, g.g, t.dim(3)},
                           {t.dim(0) == 1 ? 0 : st[0], g.g * st[1], st[1], st[3]}},
                  b0, nb, host::elementSize(t.dtype)),
           "pse");
    }
    if (g.quantKv)
      pack(p, elemType(a.antiquantScale->dtype), antiquantView(*a.antiquantScale, g), "asc");
    if (g.quantKv && hasOff)
      pack(p, elemType(a.antiquantOffset->dtype), antiquantView(*a.antiquantOffset, g), "aof");
    const int64_t r0 = b0 * g.nkv * parts * g.g;
    p.tensor(pm + r0, {nb * g.nkv, parts, g.g}).named("pm");
    p.tensor(pl + r0, {nb * g.nkv, parts, g.g}).named("pl");
    p.tensor(po + r0 * g.d, {nb * g.nkv, parts, g.g, g.d}).named("po");
    if (interleaved) {
      // The caches as runs of rows ([blocks, rows * NKV * D]), which the
      // kernel prefetches.
      const int64_t h = g.nkv * g.d;
      p.tensor(tkv, kv.data, {kv.sizes[0], kv.sizes[2] * h}, {kv.strides[0], 1}).named("kf");
      p.tensor(tkv, vv.data, {vv.sizes[0], vv.sizes[2] * h}, {vv.strides[0], 1}).named("vf");
    }
    p.f32(static_cast<float>(a.scaleValue)).named("scale");
    p.i64(chunk).named("chunk");
    p.i64(parts).named("P");
  };
  if (g.paged)
    L.table = *a.blocktable;
  if (g.padding)
    L.padding = *a.kvPaddingSize;
  if (lists) {
    Geometry one = g;
    one.mode = KvMode::Contiguous;
    R.perBatch.resize(static_cast<size_t>(g.b));
    for (int64_t i = 0; i < g.b; ++i)
      packRange(R.perBatch[static_cast<size_t>(i)], i, 1, kvView(*a.key->at(i), one),
                kvView(*a.value->at(i), one));
  } else {
    packRange(R.pa, 0, g.b, kvView(*a.key->at(0), g), kvView(*a.value->at(0), g));
  }

  rt::ArgPack &c = R.pc;
  c.tensor(pm, {units, parts, g.g}).named("pm");
  c.tensor(pl, {units, parts, g.g}).named("pl");
  c.tensor(po, {units, parts, g.g, g.d}).named("po");
  pack(c, elemType(out.dtype), headView(out, g), "out");
  if (g.quantOut)
    pack(c, elemType(a.quantScale2->dtype), quantView(*a.quantScale2, g), "qs");
  if (g.quantOut && hasQOff)
    pack(c, elemType(a.quantOffset2->dtype), quantView(*a.quantOffset2, g), "qo");
  return Status::ok();
}

} // namespace

Status prepareIncreFlashAttentionV4(const aclnn::IncreFlashAttentionV4Args &a,
                                    host::Executor &executor) {
  auto launch = std::make_shared<Launch>();
  if (Status s = validate(a, launch->g); !s)
    return s;
  if (Status s = plan(a, *launch, executor); !s)
    return s;
  executor.setLaunch(
      [launch](const host::LaunchContext &) { return launch->run(); });
  return Status::ok();
}

Status increFlashAttentionV4(const aclnn::IncreFlashAttentionV4Args &args) {
  return prepareAndRun(args, prepareIncreFlashAttentionV4);
}


} // namespace tilejit::ops
