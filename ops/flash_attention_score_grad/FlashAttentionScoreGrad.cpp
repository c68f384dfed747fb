//===- FlashAttentionScoreGrad.cpp - Phases, plan and launch --------------===//
//
// Section numbers refer to
// ../shared/spec/flash_attention_unpadding_score_grad_v5.md. The kernels are
// in flash_attention_score_grad.tile (its header comment says who owns what).
//
//===----------------------------------------------------------------------===//
#include "ops/flash_attention_score_grad/FlashAttentionScoreGrad.h"

#include "ops/Embedded.h"
#include "ops/host/KernelArgs.h"
#include "ops/host/Kernels.h"
#include "ops/host/OpRegistry.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace tilejit::ops {

using host::DataType;
using host::Status;
using host::TensorView;
namespace status = host::status;
using host::elemType;
using host::getKernel;
using host::hostCompiler;
using host::launchKernel;
using host::prepareAndRun;
using host::valueKind;

namespace {

const jit::KernelSource &source() {
  static const jit::KernelSource &src =
      embeddedKernel("ops/flash_attention_score_grad/flash_attention_score_grad.tile");
  return src;
}


/// Work items for the deterministic schedule: at least this many in all,
/// whatever the thread count (the split decides the dQ summation order, so
/// it must not depend on the machine), but no chunk of fewer than
/// kMinChunkBlocks KV blocks: every chunk adds a slice of dQ partials to
/// zero, update and sum.
constexpr int64_t kMinItems = 16;
constexpr int64_t kMinChunkBlocks = 4;

/// The prepared call: the problem, the kernels, the host tables.
struct Plan {
  fag::Problem p;
  int64_t bm = 64, bn = 64, dr = 8;
  int64_t slots = 1; ///< C: dQ partial slots
  bool bf16Products = false; ///< BFP: the products take bf16 operands
  std::shared_ptr<const jit::CompiledKernel> pre, main, dq, dqRope;
  std::vector<int64_t> seq;  ///< [bin, 8]
  std::vector<int64_t> work; ///< [items, 5]
  std::vector<int64_t> tb0, tb1;
  // Workspace layout (byte offsets).
  uint64_t stOff = 0, dqOff = 0, dqrOff = 0, dsOff = 0, total = 0;
  int64_t items() const { return static_cast<int64_t>(work.size() / 5); }
};

/// A [T, N, X] view as [N, T, X] (head-major: a head's rows at stride N * X),
/// for parameter `name`.
void packHeadMajor(rt::ArgPack &a, const TensorView &t, const char *name) {
  a.tensor(elemType(t.dtype), t.firstElement(), {t.dim(1), t.dim(0), t.dim(2)},
           {t.strides[1], t.strides[0], t.strides[2]})
      .named(name);
}

/// A view as it is, for parameter `name`.
void packView(rt::ArgPack &a, rt::ElemType type, const TensorView &t, const char *name) {
  a.tensor(type, t.firstElement(), t.shape, t.strides).named(name);
}


/// The keep band's bounds and the query rows of batch bi that may see a key
/// block [j0, j1) (section 5): [i0, i1).
std::pair<int64_t, int64_t> rowsSeeing(const fag::Problem::Band &band, int64_t sq, int64_t j0,
                                       int64_t j1) {
  if (j0 < band.prefix)
    return {0, sq};
  return {std::max<int64_t>(0, j0 - band.hi), std::min<int64_t>(sq, j1 - band.lo)};
}

void plan(Plan &pl) {
  fag::Problem &p = pl.p;
  pl.bm = pl.bn = p.d > 256 ? 32 : 64;
  // Key blocks of 128 halve the query side's work per product (its loads
  // and packing, the dQ partial read and written back, the accumulators
  // of dK and dV loaded and stored per query block against twice the
  // products), where a pair of blocks has products enough to pay for the
  // larger tiles: bf16 products (vdpbf16ps, AMX), or f32 from D = 128.
  if (p.d <= 256 && (pl.bf16Products || p.d >= 128))
    pl.bn = 128;
  pl.dr = p.dr > 0 ? p.dr : 8;
  // Per-batch table: q0, sq, k0, skv, lo, hi, prefix, Σ sq·skv before b.
  int64_t cnt = 0;
  for (int64_t b = 0; b < p.bin; ++b) {
    fag::Problem::Band band = p.band(b);
    pl.seq.insert(pl.seq.end(), {p.qBegin(b), p.sq(b), p.kBegin(b), p.skv(b), band.lo, band.hi,
                                 band.prefix, cnt});
    cnt += p.sq(b) * p.skv(b);
  }
  // Work items: per (batch, kv head), the KV blocks in chunks of about equal
  // work (query blocks visited), enough chunks for kMinItems items.
  int64_t active = 0;
  for (int64_t b = 0; b < p.b; ++b)
    if (p.skv(b) > 0)
      ++active;
  for (int64_t b = 0; b < p.b; ++b) {
    const int64_t skv = p.skv(b), sq = p.sq(b);
    if (skv == 0)
      continue;
    const int64_t nb = (skv + pl.bn - 1) / pl.bn;
    std::vector<int64_t> cost(static_cast<size_t>(nb));
    int64_t totalCost = 0;
    for (int64_t j = 0; j < nb; ++j) {
      auto [i0, i1] = rowsSeeing(p.band(b), sq, j * pl.bn, (j + 1) * pl.bn);
      cost[static_cast<size_t>(j)] = 1 + std::max<int64_t>(0, (i1 - i0 + pl.bm - 1) / pl.bm);
      totalCost += cost[static_cast<size_t>(j)];
    }
    const int64_t want =
        std::clamp<int64_t>((kMinItems + active * p.n2 - 1) / (active * p.n2), 1,
                            std::max<int64_t>(1, nb / kMinChunkBlocks));
    // Contiguous chunks, each closed once it reaches its share of the cost.
    std::vector<std::pair<int64_t, int64_t>> chunks;
    int64_t start = 0, acc = 0;
    for (int64_t j = 0; j < nb; ++j) {
      acc += cost[static_cast<size_t>(j)];
      const int64_t left = want - static_cast<int64_t>(chunks.size());
      if (left > 1 && acc * want >= totalCost * (static_cast<int64_t>(chunks.size()) + 1)) {
        chunks.push_back({start, j + 1});
        start = j + 1;
      }
    }
    if (start < nb)
      chunks.push_back({start, nb});
    pl.slots = std::max<int64_t>(pl.slots, static_cast<int64_t>(chunks.size()));
    for (int64_t n2 = 0; n2 < p.n2; ++n2)
      for (size_t c = 0; c < chunks.size(); ++c)
        pl.work.insert(pl.work.end(), {b, n2, chunks[c].first * pl.bn,
                                       std::min(skv, chunks[c].second * pl.bn),
                                       static_cast<int64_t>(c)});
  }
  // Stats rows: TND row t * N1 + h, or the legacy batch-blocked head-major
  // order (2.3): cq[b-1] * N1 + h * sq_b + i = t + cq[b-1] * (N1 - 1) + h * sq_b.
  pl.tb0.assign(static_cast<size_t>(p.t1), 0);
  pl.tb1.assign(static_cast<size_t>(p.t1), 1);
  for (int64_t t = 0; t < p.t1; ++t)
    pl.tb0[static_cast<size_t>(t)] = t * (p.n1 - 1);
  if (!p.statsTnd)
    for (int64_t b = 0; b < p.bin; ++b)
      for (int64_t i = 0; i < p.sq(b); ++i) {
        const int64_t t = p.qBegin(b) + i;
        pl.tb0[static_cast<size_t>(t)] = p.qBegin(b) * (p.n1 - 1);
        pl.tb1[static_cast<size_t>(t)] = p.sq(b);
      }
  // Workspace.
  auto carve = [&](uint64_t bytes) {
    uint64_t off = pl.total;
    pl.total += (bytes + 63) / 64 * 64;
    return off;
  };
  const uint64_t rows = static_cast<uint64_t>(p.n1 * p.t1);
  pl.stOff = carve(3 * rows * 4);
  pl.dqOff = carve(static_cast<uint64_t>(pl.slots) * rows * static_cast<uint64_t>(p.d) * 4);
  pl.dqrOff = carve(p.dr ? static_cast<uint64_t>(pl.slots) * rows * static_cast<uint64_t>(p.dr) * 4
                         : 0);
  pl.dsOff = carve(static_cast<uint64_t>(pl.items() * p.g) * 4 + 4);
  pl.total += 64; // the caller's workspace is aligned to 64 inside
}

/// The main pass first: `tilejit demo` reports the first kernel's key and
/// compile time.
Status getKernels(Plan &pl, host::Executor &executor) {
  const fag::Problem &p = pl.p;
  const jit::SpecValue t = jit::dtypeValue(host::elemType(valueKind(p.dtype)));
  const int64_t d = p.d, dv = p.dv, bm = pl.bm, dr = pl.dr;
  const bool rope = p.dr > 0;
  host::KernelUse use;
  auto get = [&](const char *name, const jit::Specialization &spec,
                 std::shared_ptr<const jit::CompiledKernel> &out) {
    Status s = getKernel(source(), name, spec, out, &use);
    if (s)
      executor.addKernelUse(use);
    return s;
  };
  if (pl.items() > 0) {
    const char *mask = "MNONE";
    switch (p.mask) {
    case fag::MaskForm::Shared:
      mask = "MSHARED";
      break;
    case fag::MaskForm::PerBatch:
      mask = "MBATCH";
      break;
    case fag::MaskForm::PerBatchHead:
      mask = "MHEAD";
      break;
    default:
      break;
    }
    const char *pse = "PNONE";
    switch (p.pse) {
    case fag::PseForm::AlibiCompressed:
      pse = "PALIBI";
      break;
    case fag::PseForm::PerKv:
      pse = "PKV";
      break;
    case fag::PseForm::Full:
      pse = "PFULL";
      break;
    case fag::PseForm::Slopes:
      pse = p.pseType == 3 ? "PSQRT" : "PSLOPE";
      break;
    default:
      break;
    }
    jit::Specialization spec{{"T", t}, {"D", d}, {"DV", dv}, {"G", p.g},
                             {"BM", bm}, {"BN", pl.bn}};
    if (rope) {
      spec.push_back({"DR", dr});
      spec.push_back({"ROPE", true});
    }
    if (p.mask != fag::MaskForm::None && p.mask != fag::MaskForm::Compressed)
      spec.push_back({"MASK", jit::SpecValue::enumerator(mask)});
    if (p.dropout)
      spec.push_back({"DROP", true});
    if (p.pse != fag::PseForm::None) {
      spec.push_back({"PSE", jit::SpecValue::enumerator(pse)});
      if (p.pseType == 1)
        spec.push_back({"PSEADD", true});
    }
    if (p.sink)
      spec.push_back({"SINK", true});
    if (pl.bf16Products)
      spec.push_back({"BFP", true});
    if (Status s = get("fag_main", spec, pl.main); !s)
      return s;
  }
  if (p.t1 > 0) {
    jit::Specialization pre{{"T", t}, {"DV", dv}, {"D", d}, {"BM", bm}};
    if (rope) {
      pre.push_back({"DR", dr});
      pre.push_back({"ROPE", true});
    }
    if (Status s = get("fag_pre", pre, pl.pre); !s)
      return s;
  }
  if (p.t1 > 0) {
    if (Status s = get("fag_dq", {{"T", t}, {"D", d}, {"BM", bm}}, pl.dq); !s)
      return s;
    if (rope)
      if (Status s = get("fag_dq", {{"T", jit::dtypeValue(rt::ElemType::BF16)}, {"D", dr}, {"BM", bm}},
                                 pl.dqRope); !s)
        return s;
  }
  return Status::ok();
}

/// Writes zeros to rows [from, to) of a [T, N, X] output view.
void zeroRows(const TensorView &t, int64_t from, int64_t to) {
  const int64_t es = t.elementSize();
  auto *base = static_cast<unsigned char *>(t.firstElement());
  for (int64_t r = from; r < to; ++r)
    for (int64_t n = 0; n < t.dim(1); ++n)
      for (int64_t x = 0; x < t.dim(2); ++x)
        std::memset(base + (r * t.strides[0] + n * t.strides[1] + x * t.strides[2]) * es, 0,
                    static_cast<size_t>(es));
}

Status run(const Plan &pl, const host::LaunchContext &ctx) {
  const fag::Problem &p = pl.p;
  auto *ws = reinterpret_cast<unsigned char *>(
      (reinterpret_cast<uintptr_t>(ctx.workspace) + 63) / 64 * 64);
  auto *st = reinterpret_cast<float *>(ws + pl.stOff);
  auto *dqw = reinterpret_cast<float *>(ws + pl.dqOff);
  auto *dqrw = reinterpret_cast<float *>(ws + pl.dqrOff);
  auto *dsw = reinterpret_cast<float *>(ws + pl.dsOff);
  const bool rope = p.dr > 0;
  const int64_t n1 = p.n1, t1 = p.t1, dr = pl.dr;
  using rt::ElemType;
  const ElemType t = elemType(p.dtype);
  auto packStats = [&](rt::ArgPack &a) {
    a.tensor(st, {3, n1, t1}).named("st");
  };
  auto packDqw = [&](rt::ArgPack &a) {
    a.tensor(dqw, {pl.slots, n1, t1, p.d}).named("dqw");
  };
  auto packDqrw = [&](rt::ArgPack &a) {
    if (rope)
      a.tensor(dqrw, {pl.slots, n1, t1, dr}).named("dqrw");
  };
  if (pl.pre) {
    rt::ArgPack a;
    packHeadMajor(a, p.dy, "dy");
    packHeadMajor(a, p.o, "o");
    packView(a, ElemType::F32, p.m, "m");
    packView(a, ElemType::F32, p.l, "l");
    a.tensor(pl.tb0.data(), {t1}).named("tb0");
    a.tensor(pl.tb1.data(), {t1}).named("tb1");
    packStats(a);
    packDqw(a);
    packDqrw(a);
    if (Status s = launchKernel(*pl.pre, a, "fag_pre"); !s)
      return s;
  }
  if (pl.main) {
    rt::ArgPack a;
    packHeadMajor(a, p.q, "q");
    packHeadMajor(a, p.k, "k");
    packHeadMajor(a, p.v, "v");
    packHeadMajor(a, p.dy, "dy");
    if (rope) {
      packHeadMajor(a, *p.qRope, "qr");
      packHeadMajor(a, *p.kRope, "kr");
    }
    packStats(a);
    a.tensor(pl.seq.data(), {p.bin, 8}).named("seq");
    a.tensor(pl.work.data(), {pl.items(), 5}).named("work");
    // The explicit mask, read packed as bytes (bool and uint8 alike); a
    // strided one is first gathered into its logical order (its content is
    // the call's, so phase 2 copies it).
    std::vector<unsigned char> maskCopy;
    if (p.attenMask && p.mask != fag::MaskForm::Compressed) {
      const TensorView &m = *p.attenMask;
      if (m.isContiguous()) {
        a.tensor(ElemType::U8, m.firstElement(), {m.numel()}).named("ms");
      } else {
        maskCopy.resize(static_cast<size_t>(m.numel()));
        std::vector<int64_t> idx(static_cast<size_t>(m.rank()), 0);
        const auto *src = static_cast<const unsigned char *>(m.firstElement());
        for (int64_t e = 0; e < m.numel(); ++e) {
          int64_t off = 0;
          for (int64_t k = 0; k < m.rank(); ++k)
            off += idx[static_cast<size_t>(k)] * m.strides[static_cast<size_t>(k)];
          maskCopy[static_cast<size_t>(e)] = src[off];
          for (int64_t k = m.rank(); k-- > 0;) {
            if (++idx[static_cast<size_t>(k)] < m.dim(k))
              break;
            idx[static_cast<size_t>(k)] = 0;
          }
        }
        a.tensor(maskCopy.data(), {m.numel()}).named("ms");
      }
    }
    if (p.dropout)
      a.tensor(ElemType::U8, p.dropMask->firstElement(), {p.dropMask->dim(0)},
               {p.dropMask->strides[0]})
          .named("drop");
    if (p.pse == fag::PseForm::AlibiCompressed)
      packView(a, t, *p.pseT, "pse4");
    if (p.pse == fag::PseForm::PerKv || p.pse == fag::PseForm::Full)
      a.tensor(t, p.pseT->firstElement(), {p.pseT->dim(0)}, {p.pseT->strides[0]}).named("pse1");
    if (p.pse == fag::PseForm::Slopes && p.pseT->rank() == 2)
      packView(a, ElemType::F32, *p.pseT, "slopes");
    else if (p.pse == fag::PseForm::Slopes)
      a.tensor(ElemType::F32, p.pseT->firstElement(), {1, p.pseT->dim(0)},
               {0, p.pseT->strides[0]})
          .named("slopes");
    if (p.sink)
      a.tensor(ElemType::F32, p.sinkT->firstElement(), {p.sinkT->dim(0)}, {p.sinkT->strides[0]})
          .named("sinkv");
    packDqw(a);
    packDqrw(a);
    packHeadMajor(a, p.dk, "dk");
    packHeadMajor(a, p.dvOut, "dvo");
    if (rope && p.dkRope) // (validation requires it with rope; the launch checks the count)
      packHeadMajor(a, *p.dkRope, "dkr");
    a.tensor(dsw, {pl.items(), p.g}).named("dsw");
    a.f32(p.scale).named("scale");
    a.f32(1.0f / p.keepProb).named("ikeep");
    a.i64(p.attenMask && p.mask == fag::MaskForm::Shared ? p.attenMask->dim(-1) : 0)
        .named("maskRow");
    a.i64(p.pseBatches > 1 ? 1 : 0).named("pseBatch");
    a.i64(p.skvMax - 1024).named("alibiOff");
    a.i64(p.kvStart - p.qStart).named("qk");
    if (Status s = launchKernel(*pl.main, a, "fag_main"); !s)
      return s;
  }
  if (pl.dq) {
    rt::ArgPack a;
    packDqw(a);
    packHeadMajor(a, p.dq, "dq");
    a.f32(p.scale).named("scale");
    if (Status s = launchKernel(*pl.dq, a, "fag_dq"); !s)
      return s;
  }
  if (pl.dqRope && p.dqRope) {
    rt::ArgPack a;
    a.tensor(dqrw, {pl.slots, n1, t1, dr}).named("dqw");
    packHeadMajor(a, *p.dqRope, "dq");
    a.f32(p.scale).named("scale");
    if (Status s = launchKernel(*pl.dqRope, a, "fag_dq"); !s)
      return s;
  }
  // Key tokens past the last offset belong to no batch (2.1): zero
  // gradients. (Query tokens past it read zeroed partials in fag_dq.)
  const int64_t kEnd = p.bin > 0 ? p.ck.back() : 0;
  if (kEnd < p.t2) {
    zeroRows(p.dk, kEnd, p.t2);
    zeroRows(p.dvOut, kEnd, p.t2);
    if (p.dkRope)
      zeroRows(*p.dkRope, kEnd, p.t2);
  }
  if (p.dsink) {
    // dθ_h = −Σ over the items of h's group, in item order.
    const TensorView &ds = *p.dsink;
    auto *out = static_cast<float *>(ds.firstElement());
    for (int64_t h = 0; h < n1; ++h) {
      float sum = 0.0f;
      if (p.sink)
        for (int64_t w = 0; w < pl.items(); ++w)
          if (pl.work[static_cast<size_t>(w * 5 + 1)] == h / p.g)
            sum += dsw[w * p.g + h % p.g];
      out[h * ds.strides[0]] = p.sink ? -sum : 0.0f;
    }
  }
  return Status::ok();
}

} // namespace

Status prepareFlashAttentionScoreGrad(const aclnn::FlashAttentionUnpaddingScoreGradV5Args &args,
                                      host::Executor &executor) {
  auto pl = std::make_shared<Plan>();
  if (Status s = fag::validate(args, pl->p); !s)
    return s;
  if (pl->p.empty)
    return Status::ok();
  jit::Compiler *compiler = nullptr;
  if (Status s = hostCompiler(compiler); !s)
    return s;
  pl->bf16Products = pl->p.dtype == DataType::BFloat16 && compiler->hasFastBf16Products();
  plan(*pl);
  if (Status s = getKernels(*pl, executor); !s)
    return s;
  executor.setWorkspaceSize(pl->total);
  executor.setLaunch([pl](const host::LaunchContext &ctx) -> Status {
    if (ctx.workspaceSize < pl->total || !ctx.workspace)
      return Status::error(status::ParamInvalid, "workspace: ", pl->total,
                           " bytes are needed, got ", ctx.workspaceSize);
    return run(*pl, ctx);
  });
  return Status::ok();
}

Status flashAttentionScoreGrad(const aclnn::FlashAttentionUnpaddingScoreGradV5Args &args) {
  return prepareAndRun(args, prepareFlashAttentionScoreGrad);
}


} // namespace tilejit::ops
