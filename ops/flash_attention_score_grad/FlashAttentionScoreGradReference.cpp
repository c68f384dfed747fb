//===- FlashAttentionScoreGradReference.cpp - Section 4 in float64 --------===//
//
// The oracle of ../shared/spec/flash_attention_unpadding_score_grad_v5.md:
// section 4 element by element in double, reading every tensor through its
// view's strides and deriving everything (lengths, B, mask form and rule,
// bands, prefix, pse form, dropout bits, sink, stats layout) from the
// arguments alone. It shares nothing with the operator, its Problem or the
// test-data builder.
//
//===----------------------------------------------------------------------===//
#include "ops/flash_attention_score_grad/FlashAttentionScoreGradTwin.h"
#include "ops/flash_attention_score_grad/FlashAttentionScoreGradData.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string_view>
#include <vector>

namespace tilejit::ops {

using host::DataType;
using host::TensorView;

namespace {

using Args = aclnn::FlashAttentionUnpaddingScoreGradV5Args;

bool present(const TensorView *t) { return t && t->rank() > 0; }
bool writable(const TensorView *t) { return present(t) && t->numel() > 0; }

int64_t flatOffset(const TensorView &t, int64_t flat) {
  int64_t off = 0;
  for (size_t k = t.shape.size(); k-- > 0;) {
    off += (flat % t.shape[k]) * t.strides[k];
    flat /= t.shape[k];
  }
  return off;
}

double readElement(const TensorView &t, int64_t flat) {
  return host::loadElementAsDouble(t.dtype, static_cast<const char *>(t.firstElement()) +
                                                   flatOffset(t, flat) * t.elementSize());
}

/// Rounds to nearest even into the view's dtype.
void writeElement(const TensorView &t, int64_t flat, double v) {
  host::storeElementFromDouble(
      t.dtype, static_cast<char *>(t.firstElement()) + flatOffset(t, flat) * t.elementSize(), v);
}

/// The whole view, row-major, as doubles (empty for an absent tensor).
std::vector<double> load(const TensorView *t) {
  std::vector<double> out;
  if (!present(t))
    return out;
  out.resize(static_cast<size_t>(t->numel()));
  for (int64_t e = 0; e < t->numel(); ++e)
    out[static_cast<size_t>(e)] = readElement(*t, e);
  return out;
}

void storeAll(const TensorView *t, const std::vector<double> &values) {
  if (!writable(t))
    return;
  for (int64_t e = 0; e < t->numel(); ++e)
    writeElement(*t, e, values[static_cast<size_t>(e)]);
}

/// The gradients, dense row-major, and dθ's tolerance scale.
struct Grads {
  std::vector<double> dq, dk, dv, dqr, dkr, dsink, sinkScale;
};

Grads compute(const Args &a) {
  const TensorView &q = *a.query, &k = *a.keyIn, &v = *a.value;
  const int64_t t1 = q.dim(0), n1 = q.dim(1), d = q.dim(2);
  const int64_t t2 = k.dim(0), n2 = k.dim(1), dv = v.dim(2);
  const int64_t g = n1 / n2;
  const bool rope = present(a.queryRope) && present(a.keyInRope);
  const int64_t dr = rope ? a.queryRope->dim(2) : 0;
  const float sigma = static_cast<float>(a.scaleValue);
  const float kappa = static_cast<float>(a.keepProb);
  const bool dropout = kappa < 1.0f;

  // Section 2.1: cumulative ends, starts and lengths per batch; B.
  const std::vector<int64_t> &cq = a.actualSeqQLenOptional->values;
  const std::vector<int64_t> &ck = a.actualSeqKvLenOptional->values;
  const int64_t bin = static_cast<int64_t>(cq.size());
  std::vector<int64_t> q0(cq.size()), k0(ck.size()), sq(cq.size()), skv(ck.size());
  std::vector<int64_t> pairs(cq.size() + 1, 0); // Σ_{b'<b} sq_b'·skv_b'
  int64_t sqMax = 0, skvMax = 0;
  for (size_t u = 0; u < cq.size(); ++u) {
    q0[u] = u == 0 ? 0 : cq[u - 1];
    k0[u] = u == 0 ? 0 : ck[u - 1];
    sq[u] = cq[u] - q0[u];
    skv[u] = ck[u] - k0[u];
    pairs[u + 1] = pairs[u] + sq[u] * skv[u];
    sqMax = std::max(sqMax, sq[u]);
    skvMax = std::max(skvMax, skv[u]);
  }
  int64_t bEff = bin;
  while (bEff > 0 && sq[static_cast<size_t>(bEff - 1)] == 0 && skv[static_cast<size_t>(bEff - 1)] == 0)
    --bEff;
  (void)bEff; // only validation checks leading dimensions against B

  // Section 5: the mask (rule 0: absent keeps everything).
  const bool masked = present(a.attenMaskOptional);
  const int64_t mode = a.sparseMode;
  enum class Explicit { Shared, PerBatch, PerBatchHead } form = Explicit::Shared;
  std::vector<double> maskValues;
  if (masked && (mode == 0 || mode == 1)) {
    const TensorView &mk = *a.attenMaskOptional;
    if (mk.rank() == 4 && !(mk.dim(0) == 1 && mk.dim(1) == 1))
      form = mk.dim(1) == 1 ? Explicit::PerBatch : Explicit::PerBatchHead;
    maskValues = load(&mk);
  }
  int64_t beta = -1; // modes 7 and 8: the band batch
  for (int64_t bi = 0; bi < bin; ++bi) {
    if (sq[static_cast<size_t>(bi)] == 0)
      continue;
    if (mode == 7 || beta < 0)
      beta = bi;
  }
  const int64_t pre = a.preTokens, nxt = a.nextTokens;
  auto keeps = [&](int64_t bi, int64_t h, int64_t i, int64_t j) {
    if (!masked)
      return true;
    const size_t u = static_cast<size_t>(bi);
    const int64_t delta = skv[u] - sq[u];
    auto explicitKept = [&] {
      int64_t e = i * skvMax + j;
      if (form == Explicit::PerBatch)
        e = pairs[u] + i * skv[u] + j;
      else if (form == Explicit::PerBatchHead)
        e = n1 * pairs[u] + h * sq[u] * skv[u] + i * skv[u] + j;
      return maskValues[static_cast<size_t>(e)] == 0;
    };
    const bool upperLeft = j <= i;
    const bool lowerRight = j <= i + delta;
    const bool band = i + delta - pre <= j && j <= i + delta + nxt;
    switch (mode) {
    case 0:
      return explicitKept() && -pre <= j - i && j - i <= nxt;
    case 1:
      return explicitKept();
    case 2:
      return upperLeft;
    case 3:
      return lowerRight;
    case 4:
      return band;
    case 6:
      return lowerRight || j < a.prefixOptional->values[u];
    case 7:
      return bi == beta ? band : lowerRight;
    case 8:
      return bi == beta ? band : upperLeft;
    default:
      return true;
    }
  };

  // Section 6: the position bias.
  const bool hasPse = present(a.pseShiftOptional);
  const int64_t pseType = a.pseType;
  const std::vector<double> pse = load(a.pseShiftOptional);
  int64_t qs = 0, ks = 0;
  if (a.qStartIdxOptional && a.qStartIdxOptional->size() > 0 && a.kvStartIdxOptional &&
      a.kvStartIdxOptional->size() > 0) {
    qs = (*a.qStartIdxOptional)[0];
    ks = (*a.kvStartIdxOptional)[0];
  }
  auto bias = [&](int64_t bi, int64_t h, int64_t i, int64_t j) -> double {
    if (!hasPse)
      return 0;
    const TensorView &p = *a.pseShiftOptional;
    const size_t u = static_cast<size_t>(bi);
    if (pseType == 2 || pseType == 3) {
      const double alpha = pse[static_cast<size_t>(p.rank() == 1 ? h : bi * n1 + h)];
      const double dist = static_cast<double>(std::llabs((j + ks) - (i + qs)));
      return pseType == 2 ? -alpha * dist : -alpha * std::sqrt(dist);
    }
    if (p.rank() == 4) {
      const int64_t t = (i - j) - (skvMax - 1024);
      const int64_t bb = p.dim(0) == 1 ? 0 : bi;
      const int64_t row = t >= 0 ? t : 0, col = t >= 0 ? 0 : -t;
      return pse[static_cast<size_t>(((bb * n1 + h) * 1024 + row) * skvMax + col)];
    }
    if (p.numel() == n1 * t2)
      return pse[static_cast<size_t>(n1 * k0[u] + h * skv[u] + j)];
    return pse[static_cast<size_t>(n1 * pairs[u] + h * sq[u] * skv[u] + i * skv[u] + j)];
  };

  // Section 2.4: the dropout bits.
  std::vector<double> dropBytes;
  if (dropout)
    dropBytes = load(a.dropMaskOptional);
  auto keepBit = [&](int64_t bi, int64_t h, int64_t i, int64_t j) {
    const size_t u = static_cast<size_t>(bi);
    const int64_t e = n1 * pairs[u] + h * sq[u] * skv[u] + i * skv[u] + j;
    return (static_cast<int>(dropBytes[static_cast<size_t>(e / 8)]) >> (e % 8)) & 1;
  };

  const bool hasSink = present(a.sinkInOptional);
  const std::vector<double> sink = load(a.sinkInOptional);
  const bool statsTnd =
      a.softmaxInLayout && std::string_view(a.softmaxInLayout) == "same_as_input";
  const std::vector<double> mv = load(a.softmaxMaxOptional), lv = load(a.softmaxSumOptional);
  const std::vector<double> qv = load(&q), kv = load(&k), vv = load(&v);
  const std::vector<double> dyv = load(a.dy), ov = load(a.attentionInOptional);
  const std::vector<double> qrv = rope ? load(a.queryRope) : std::vector<double>();
  const std::vector<double> krv = rope ? load(a.keyInRope) : std::vector<double>();

  Grads gr;
  gr.dq.assign(static_cast<size_t>(t1 * n1 * d), 0.0);
  gr.dk.assign(static_cast<size_t>(t2 * n2 * d), 0.0);
  gr.dv.assign(static_cast<size_t>(t2 * n2 * dv), 0.0);
  gr.dqr.assign(static_cast<size_t>(t1 * n1 * dr), 0.0);
  gr.dkr.assign(static_cast<size_t>(t2 * n2 * dr), 0.0);
  gr.dsink.assign(static_cast<size_t>(n1), 0.0);
  gr.sinkScale.assign(static_cast<size_t>(n1), 0.0);

  std::vector<double> p, dx;
  for (int64_t bi = 0; bi < bin; ++bi) {
    const size_t u = static_cast<size_t>(bi);
    for (int64_t h = 0; h < n1; ++h) {
      const int64_t n = h / g;
      for (int64_t i = 0; i < sq[u]; ++i) {
        const int64_t qi = q0[u] + i;
        const int64_t stat = statsTnd ? (qi * n1 + h) * 8 : (q0[u] * n1 + h * sq[u] + i) * 8;
        const double mRow = mv[static_cast<size_t>(stat)], lRow = lv[static_cast<size_t>(stat)];
        const double *dyRow = &dyv[static_cast<size_t>((qi * n1 + h) * dv)];
        double delta = 0;
        for (int64_t c = 0; c < dv; ++c)
          delta += dyRow[c] * ov[static_cast<size_t>((qi * n1 + h) * dv + c)];
        double sumPdP = 0;
        p.assign(static_cast<size_t>(skv[u]), 0.0);
        dx.assign(static_cast<size_t>(skv[u]), 0.0);
        for (int64_t j = 0; j < skv[u]; ++j) {
          if (!keeps(bi, h, i, j))
            continue;
          const int64_t kj = k0[u] + j;
          double x = 0;
          for (int64_t c = 0; c < d; ++c)
            x += qv[static_cast<size_t>((qi * n1 + h) * d + c)] *
                 kv[static_cast<size_t>((kj * n2 + n) * d + c)];
          for (int64_t c = 0; c < dr; ++c)
            x += qrv[static_cast<size_t>((qi * n1 + h) * dr + c)] *
                 krv[static_cast<size_t>((kj * n2 + n) * dr + c)];
          const double b = bias(bi, h, i, j);
          const double s = pseType == 1 ? double(sigma) * (x + b) : double(sigma) * x + b;
          const double pij = std::exp(s - mRow) / lRow;
          double dw = 0;
          for (int64_t c = 0; c < dv; ++c)
            dw += dyRow[c] * vv[static_cast<size_t>((kj * n2 + n) * dv + c)];
          const int z = dropout ? keepBit(bi, h, i, j) : 1;
          const double dp = dropout ? dw * z / double(kappa) : dw;
          const double w = dropout ? pij * z / double(kappa) : pij;
          sumPdP += pij * dp;
          p[static_cast<size_t>(j)] = w;
          dx[static_cast<size_t>(j)] = double(sigma) * pij * (dp - delta);
        }
        if (hasSink) {
          const double psink = std::exp(sink[static_cast<size_t>(h)] - mRow) / lRow;
          gr.dsink[static_cast<size_t>(h)] -= psink * sumPdP;
          gr.sinkScale[static_cast<size_t>(h)] += std::fabs(psink * sumPdP);
        }
        for (int64_t j = 0; j < skv[u]; ++j) {
          const double w = p[static_cast<size_t>(j)], x = dx[static_cast<size_t>(j)];
          if (w == 0 && x == 0)
            continue;
          const int64_t kj = k0[u] + j;
          for (int64_t c = 0; c < d; ++c) {
            gr.dq[static_cast<size_t>((qi * n1 + h) * d + c)] +=
                x * kv[static_cast<size_t>((kj * n2 + n) * d + c)];
            gr.dk[static_cast<size_t>((kj * n2 + n) * d + c)] +=
                x * qv[static_cast<size_t>((qi * n1 + h) * d + c)];
          }
          for (int64_t c = 0; c < dr; ++c) {
            gr.dqr[static_cast<size_t>((qi * n1 + h) * dr + c)] +=
                x * krv[static_cast<size_t>((kj * n2 + n) * dr + c)];
            gr.dkr[static_cast<size_t>((kj * n2 + n) * dr + c)] +=
                x * qrv[static_cast<size_t>((qi * n1 + h) * dr + c)];
          }
          for (int64_t c = 0; c < dv; ++c)
            gr.dv[static_cast<size_t>((kj * n2 + n) * dv + c)] += w * dyRow[c];
        }
      }
    }
  }
  return gr;
}

} // namespace

void flashAttentionScoreGradReference(const aclnn::FlashAttentionUnpaddingScoreGradV5Args &args) {
  const Grads gr = compute(args);
  storeAll(args.dqOut, gr.dq);
  storeAll(args.dkOut, gr.dk);
  storeAll(args.dvOut, gr.dv);
  if (present(args.queryRope) && present(args.keyInRope)) {
    storeAll(args.dqRopeOut, gr.dqr);
    storeAll(args.dkRopeOut, gr.dkr);
  }
  storeAll(args.dsinkOut, gr.dsink);
}

namespace fag {

std::vector<double> sinkGradScale(const aclnn::FlashAttentionUnpaddingScoreGradV5Args &args) {
  return compute(args).sinkScale;
}

} // namespace fag

} // namespace tilejit::ops
