//===- FlashAttentionScoreGradData.cpp - Consistent test problems ---------===//
//
// Random inputs, then the forward of section 3 of
// ../shared/spec/flash_attention_unpadding_score_grad_v5.md in float64 from
// the stored (rounded) inputs, so that M, L and O are those a forward pass
// would have produced. The forward reads the config's forms directly (it
// knows what it built); the reference parses the arguments on its own, so
// the two readings check each other in the finite-difference test.
//
//===----------------------------------------------------------------------===//
#include "ops/flash_attention_score_grad/FlashAttentionScoreGradData.h"

#include <algorithm>
#include <array>
#include <cassert>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>

namespace tilejit::ops::fag {

using host::DataType;
using host::TensorView;

namespace {

constexpr double kNeg = -3.4028234663852886e38;
constexpr double kSentinel = 12345.0;
constexpr int kOutputs = 6; // dq, dk, dv, dqRope, dkRope, dsink
const char *const kOutputNames[kOutputs] = {"dq", "dk", "dv", "dqRope", "dkRope", "dsink"};

int64_t flatOffset(const TensorView &t, int64_t flat) {
  int64_t off = 0;
  for (size_t k = t.shape.size(); k-- > 0;) {
    off += (flat % t.shape[k]) * t.strides[k];
    flat /= t.shape[k];
  }
  return off;
}

/// Element `index` of the storage (not of the view), as double.
double readStorage(const TensorView &t, int64_t index) {
  return host::loadElementAsDouble(t.dtype,
                                      static_cast<const char *>(t.data) + index * t.elementSize());
}

void writeStorage(const TensorView &t, int64_t index, double v) {
  host::storeElementFromDouble(t.dtype, static_cast<char *>(t.data) + index * t.elementSize(),
                                  v);
}

/// An owned buffer and a view over it; `present` false for an absent input.
struct Tensor {
  std::vector<unsigned char> bytes;
  TensorView view;
  bool present = false;

  int64_t numel() const { return present ? view.numel() : 0; }
  int64_t storageElements() const { return view.storageNumel(); }
  double get(int64_t flat) const { return readStorage(view, view.offset + flatOffset(view, flat)); }
  void set(int64_t flat, double v) const {
    writeStorage(view, view.offset + flatOffset(view, flat), v);
  }
  /// The whole view as doubles, row-major.
  std::vector<double> load() const {
    std::vector<double> out(static_cast<size_t>(numel()));
    for (int64_t e = 0; e < numel(); ++e)
      out[static_cast<size_t>(e)] = get(e);
    return out;
  }
};

/// A tensor of `shape`; strided: innermost dimension contiguous, every outer
/// stride padded (the N axis by 3 elements past D), a 1-D tensor with stride
/// 2, and the view starting one element into the storage. Input gaps hold
/// 0x7f bytes (a huge or NaN value if misread).
Tensor makeTensor(DataType dtype, std::vector<int64_t> shape, bool strided) {
  Tensor t;
  t.present = true;
  const size_t r = shape.size();
  std::vector<int64_t> strides(r, 1);
  int64_t offset = 0;
  if (strided && r > 0) {
    offset = 1;
    if (r == 1) {
      strides[0] = 2;
    } else {
      for (size_t k = r - 1; k-- > 0;)
        strides[k] = strides[k + 1] * shape[k + 1] + (k + 2 == r ? 3 : 1);
    }
  } else {
    strides = host::contiguousStrides(shape);
  }
  int64_t count = offset + 1;
  for (size_t k = 0; k < r; ++k)
    count += (std::max<int64_t>(shape[k], 1) - 1) * strides[k];
  t.bytes.assign(static_cast<size_t>(count * host::elementSize(dtype)), 0x7f);
  t.view.data = t.bytes.data();
  t.view.dtype = dtype;
  t.view.shape = std::move(shape);
  t.view.strides = std::move(strides);
  t.view.offset = offset;
  t.view.storageShape = {count};
  return t;
}

void fillSentinel(const Tensor &t) {
  for (int64_t e = 0; e < t.storageElements(); ++e)
    writeStorage(t.view, e, kSentinel);
}

/// Deterministic uniform numbers, independent of the standard library's
/// distributions.
struct Rng {
  std::mt19937_64 gen;
  explicit Rng(uint64_t seed) : gen(seed) {}
  double unit() { return static_cast<double>(gen() >> 11) * 0x1.0p-53; }
  double uniform(double lo, double hi) { return lo + (hi - lo) * unit(); }
};

} // namespace

Tolerance toleranceFor(DataType t) {
  switch (t) {
  case DataType::Float16:
    return {2e-3, 1e-3, 1e-3, 2e-3};
  case DataType::BFloat16:
    return {1e-2, 8e-3, 8e-3, 1e-2};
  default:
    return {1e-4, 1e-5, 1e-5, 1e-4};
  }
}

double outputSentinel(DataType dtype) {
  unsigned char buf[8] = {};
  TensorView v;
  v.data = buf;
  v.dtype = dtype;
  writeStorage(v, 0, kSentinel);
  return readStorage(v, 0);
}

//===----------------------------------------------------------------------===//
// The problem
//===----------------------------------------------------------------------===//

struct Data::Impl {
  Config c;
  int64_t t1 = 0, t2 = 0, n1 = 1, n2 = 1, g = 1, d = 1, dv = 1, dr = 0;
  int64_t bin = 0, b = 0, sqMax = 0, skvMax = 0, beta = -1;
  std::vector<int64_t> sq, skv, cq0, ck0; ///< per batch: lengths and starts
  std::vector<int64_t> pairsBefore;       ///< sum over b' < b of sq * skv
  float scale = 1, keep = 1;

  Tensor q, k, v, dy, o, m, l, qr, kr, pse, drop, mask, sink;
  std::array<std::array<Tensor, kOutputs>, 2> out;
  bool freshMade = false;
  host::IntArray cqArr, ckArr, prefixArr, qStartArr, kvStartArr;
  std::array<aclnn::FlashAttentionUnpaddingScoreGradV5Args, 2> args;

  explicit Impl(const Config &config);
  Tensor *input(const std::string &name);
  void makeOutputs(int set);
  bool keeps(int64_t bi, int64_t h, int64_t i, int64_t j) const;
  double bias(int64_t bi, int64_t h, int64_t i, int64_t j) const;
  Forward forward() const;
  void storeForward();
  void buildMask(Rng &rng);
};

Data::Impl::Impl(const Config &config) : c(config) {
  assert(c.seqQ.size() == c.seqKv.size() && "one q and one kv length per batch");
  sq = c.seqQ;
  skv = c.seqKv;
  for (int64_t e = 0; e < c.trailingEmptyBatches; ++e) {
    sq.push_back(0);
    skv.push_back(0);
  }
  bin = static_cast<int64_t>(sq.size());
  b = bin;
  while (b > 0 && sq[static_cast<size_t>(b - 1)] == 0 && skv[static_cast<size_t>(b - 1)] == 0)
    --b;
  int64_t sumQ = 0, sumKv = 0, pairs = 0;
  for (int64_t bi = 0; bi < bin; ++bi) {
    const size_t u = static_cast<size_t>(bi);
    cq0.push_back(sumQ);
    ck0.push_back(sumKv);
    pairsBefore.push_back(pairs);
    sumQ += sq[u];
    sumKv += skv[u];
    pairs += sq[u] * skv[u];
    cqArr.values.push_back(sumQ);
    ckArr.values.push_back(sumKv);
    sqMax = std::max(sqMax, sq[u]);
    skvMax = std::max(skvMax, skv[u]);
  }
  pairsBefore.push_back(pairs);
  t1 = sumQ + c.extraTokensQ;
  t2 = sumKv + c.extraTokensKv;
  n1 = c.n1;
  n2 = c.n2;
  g = n1 / n2;
  d = c.d;
  dv = c.dv > 0 ? c.dv : c.d;
  dr = c.dr;
  scale = static_cast<float>(c.scale != 0 ? c.scale : 1.0 / std::sqrt(static_cast<double>(d)));
  keep = static_cast<float>(c.keepProb);
  for (int64_t bi = 0; bi < bin; ++bi) {
    if (sq[static_cast<size_t>(bi)] == 0)
      continue;
    if (c.sparseMode == 8 && beta < 0)
      beta = bi;
    if (c.sparseMode == 7)
      beta = bi;
  }

  Rng rng(c.seed);
  const bool st = c.strided;
  auto randomize = [&](Tensor &t, double lo, double hi) {
    for (int64_t e = 0; e < t.numel(); ++e)
      t.set(e, rng.uniform(lo, hi));
  };
  q = makeTensor(c.dtype, {t1, n1, d}, st);
  k = makeTensor(c.dtype, {t2, n2, d}, st);
  v = makeTensor(c.dtype, {t2, n2, dv}, st);
  dy = makeTensor(c.dtype, {t1, n1, dv}, st);
  o = makeTensor(c.dtype, {t1, n1, dv}, st);
  m = makeTensor(DataType::Float, {t1, n1, 8}, st);
  l = makeTensor(DataType::Float, {t1, n1, 8}, st);
  randomize(q, -1, 1);
  randomize(k, -1, 1);
  randomize(v, -1, 1);
  randomize(dy, -1, 1);
  randomize(o, -1, 1); // rows in a batch are overwritten by the forward
  if (dr > 0) {
    qr = makeTensor(DataType::BFloat16, {t1, n1, dr}, st);
    kr = makeTensor(DataType::BFloat16, {t2, n2, dr}, st);
    randomize(qr, -1, 1);
    randomize(kr, -1, 1);
  }
  if (c.sink) {
    sink = makeTensor(DataType::Float, {n1}, st);
    for (int64_t h = 0; h < n1; ++h)
      sink.set(h, c.sinkValues.empty() ? rng.uniform(-1, 1)
                                       : c.sinkValues[static_cast<size_t>(h)]);
  }

  switch (c.pse) {
  case PseForm::None:
    break;
  case PseForm::AlibiCompressed: {
    // The last 1024 rows of a Toeplitz bias F(i, j) = f(i - j): row t of E
    // is row Skvmax - 1024 + t of F.
    const int64_t bp = c.pseBatches;
    pse = makeTensor(c.dtype, {bp, n1, 1024, skvMax}, st);
    const int64_t lo = -std::max<int64_t>(skvMax, 1024);
    const int64_t hi = std::max(sqMax, skvMax);
    std::vector<double> f(static_cast<size_t>(hi - lo + 1));
    for (int64_t bh = 0; bh < bp * n1; ++bh) {
      for (double &x : f)
        x = rng.uniform(-1, 1);
      for (int64_t t = 0; t < 1024; ++t)
        for (int64_t cc = 0; cc < skvMax; ++cc)
          pse.set((bh * 1024 + t) * skvMax + cc,
                  f[static_cast<size_t>(skvMax - 1024 + t - cc - lo)]);
    }
    break;
  }
  case PseForm::PerKv:
    pse = makeTensor(c.dtype, {n1 * t2}, st);
    randomize(pse, -1, 1);
    break;
  case PseForm::Full:
    pse = makeTensor(c.dtype, {n1 * pairsBefore.back()}, st);
    randomize(pse, -1, 1);
    break;
  case PseForm::Slopes:
    pse = makeTensor(DataType::Float,
                     c.pseBatches == 1 ? std::vector<int64_t>{n1}
                                       : std::vector<int64_t>{b, n1},
                     st);
    randomize(pse, 0.01, 0.25);
    break;
  }
  if (c.qStartGiven)
    qStartArr.values = {c.qStart};
  if (c.kvStartGiven)
    kvStartArr.values = {c.kvStart};
  prefixArr.values = c.prefix;

  if (c.keepProb < 1 || c.dropMaskAlways) {
    const int64_t bits = n1 * pairsBefore.back();
    drop = makeTensor(DataType::UInt8, {(bits + 7) / 8 + c.dropMaskExtraBytes}, st);
    for (int64_t e = 0; e < drop.numel(); ++e) {
      int byte = 0;
      for (int bit = 0; bit < 8; ++bit)
        byte |= (rng.unit() < c.keepProb ? 1 : 0) << bit;
      drop.set(e, byte);
    }
  }
  buildMask(rng);
  storeForward();

  makeOutputs(0);
  auto &a = args[0];
  a.query = &q.view;
  a.queryRope = qr.present ? &qr.view : nullptr;
  a.keyIn = &k.view;
  a.keyInRope = kr.present ? &kr.view : nullptr;
  a.value = &v.view;
  a.dy = &dy.view;
  a.pseShiftOptional = pse.present ? &pse.view : nullptr;
  a.dropMaskOptional = drop.present ? &drop.view : nullptr;
  a.attenMaskOptional = mask.present ? &mask.view : nullptr;
  a.softmaxMaxOptional = &m.view;
  a.softmaxSumOptional = &l.view;
  a.attentionInOptional = &o.view;
  a.sinkInOptional = sink.present ? &sink.view : nullptr;
  a.prefixOptional = c.prefix.empty() ? nullptr : &prefixArr;
  a.actualSeqQLenOptional = &cqArr;
  a.actualSeqKvLenOptional = &ckArr;
  a.qStartIdxOptional = c.qStartGiven ? &qStartArr : nullptr;
  a.kvStartIdxOptional = c.kvStartGiven ? &kvStartArr : nullptr;
  a.scaleValue = c.scale != 0 ? c.scale : 1.0 / std::sqrt(static_cast<double>(d));
  a.keepProb = c.keepProb;
  a.preTokens = c.preTokens;
  a.nextTokens = c.nextTokens;
  a.headNum = n1;
  a.inputLayout = "TND";
  a.innerPrecise = 0;
  a.sparseMode = c.sparseMode;
  a.pseType = c.pseType;
  a.softmaxInLayout = c.statsTnd ? "same_as_input" : "";
  a.dqOut = &out[0][0].view;
  a.dkOut = &out[0][1].view;
  a.dvOut = &out[0][2].view;
  a.dqRopeOut = dr > 0 ? &out[0][3].view : nullptr;
  a.dkRopeOut = dr > 0 ? &out[0][4].view : nullptr;
  a.dsinkOut = &out[0][5].view;
  args[1] = args[0];
}

void Data::Impl::makeOutputs(int set) {
  auto &o6 = out[static_cast<size_t>(set)];
  const bool st = c.strided;
  o6[0] = makeTensor(c.dtype, {t1, n1, d}, st);
  o6[1] = makeTensor(c.dtype, {t2, n2, d}, st);
  o6[2] = makeTensor(c.dtype, {t2, n2, dv}, st);
  if (dr > 0) {
    o6[3] = makeTensor(DataType::BFloat16, {t1, n1, dr}, st);
    o6[4] = makeTensor(DataType::BFloat16, {t2, n2, dr}, st);
  }
  o6[5] = makeTensor(DataType::Float, {n1}, st);
  for (const Tensor &t : o6)
    if (t.present)
      fillSentinel(t);
}

/// Builds the attenMask: canonical content for the compressed forms, random
/// content (density c.maskDensity) for the explicit ones, with every row
/// that the band leaves something to keep given at least one kept column
/// (the documents forbid all-masked rows).
void Data::Impl::buildMask(Rng &rng) {
  const DataType dt = c.maskBool ? DataType::Bool : DataType::UInt8;
  auto lead = [&](std::vector<int64_t> tail, int64_t b0, int64_t b1, bool keep4d) {
    if (keep4d)
      tail.insert(tail.begin(), {b0, b1});
    return tail;
  };
  switch (c.mask) {
  case MaskForm::None:
    return;
  case MaskForm::Compressed: {
    const int64_t rows = c.sparseMode == 6 ? 3072 : 2048;
    mask = makeTensor(dt, lead({rows, 2048}, 1, 1, c.mask4d), c.strided);
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t cc = 0; cc < 2048; ++cc)
        mask.set(r * 2048 + cc, r < 2048 ? (cc > r ? 1 : 0) : (cc >= 1024 ? 1 : 0));
    return;
  }
  case MaskForm::Shared:
    mask = makeTensor(dt, lead({sqMax, skvMax}, 1, 1, c.mask4d), c.strided);
    break;
  case MaskForm::PerBatch:
    mask = makeTensor(dt, {b, 1, sqMax, skvMax}, c.strided);
    break;
  case MaskForm::PerBatchHead:
    mask = makeTensor(dt, {b, n1, sqMax, skvMax}, c.strided);
    break;
  }
  for (int64_t e = 0; e < mask.numel(); ++e)
    mask.set(e, rng.unit() < c.maskDensity ? 1 : 0);
  const int64_t pre = c.preTokens, nxt = c.nextTokens;
  for (int64_t bi = 0; bi < bin; ++bi) {
    const int64_t s = sq[static_cast<size_t>(bi)], kv = skv[static_cast<size_t>(bi)];
    for (int64_t h = 0; h < n1; ++h)
      for (int64_t i = 0; i < s; ++i) {
        auto index = [&](int64_t j) {
          if (c.mask == MaskForm::Shared)
            return i * skvMax + j;
          const int64_t base = c.mask == MaskForm::PerBatch
                                   ? pairsBefore[static_cast<size_t>(bi)]
                                   : n1 * pairsBefore[static_cast<size_t>(bi)] + h * s * kv;
          return base + i * kv + j;
        };
        auto inBand = [&](int64_t j) { return c.sparseMode != 0 || (j - i >= -pre && j - i <= nxt); };
        int64_t first = -1;
        bool any = false;
        for (int64_t j = 0; j < kv && !any; ++j) {
          if (!inBand(j))
            continue;
          if (first < 0)
            first = j;
          any = mask.get(index(j)) == 0;
        }
        if (!any && first >= 0)
          mask.set(index(first), 0);
      }
  }
}

bool Data::Impl::keeps(int64_t bi, int64_t h, int64_t i, int64_t j) const {
  if (c.mask == MaskForm::None)
    return true;
  const size_t u = static_cast<size_t>(bi);
  const int64_t s = sq[u], kv = skv[u], delta = kv - s;
  const int64_t pre = c.preTokens, nxt = c.nextTokens;
  auto explicitKept = [&] {
    int64_t e = 0;
    if (c.mask == MaskForm::Shared)
      e = i * skvMax + j;
    else if (c.mask == MaskForm::PerBatch)
      e = pairsBefore[u] + i * kv + j;
    else
      e = n1 * pairsBefore[u] + h * s * kv + i * kv + j;
    return mask.get(e) == 0;
  };
  auto causalTopLeft = [&] { return j <= i; };
  auto causalBottomRight = [&] { return j <= i + delta; };
  auto bandBottomRight = [&] { return j >= i + delta - pre && j <= i + delta + nxt; };
  switch (c.sparseMode) {
  case 0:
    return explicitKept() && j - i >= -pre && j - i <= nxt;
  case 1:
    return explicitKept();
  case 2:
    return causalTopLeft();
  case 3:
    return causalBottomRight();
  case 4:
    return bandBottomRight();
  case 6:
    return causalBottomRight() || j < c.prefix[u];
  case 7:
    return bi == beta ? bandBottomRight() : causalBottomRight();
  case 8:
    return bi == beta ? bandBottomRight() : causalTopLeft();
  default:
    return true;
  }
}

double Data::Impl::bias(int64_t bi, int64_t h, int64_t i, int64_t j) const {
  const size_t u = static_cast<size_t>(bi);
  switch (c.pse) {
  case PseForm::None:
    return 0;
  case PseForm::AlibiCompressed: {
    const int64_t t = (i - j) - (skvMax - 1024);
    const int64_t bb = c.pseBatches == 1 ? 0 : bi;
    const int64_t row = t >= 0 ? t : 0, col = t >= 0 ? 0 : -t;
    return pse.get(((bb * n1 + h) * 1024 + row) * skvMax + col);
  }
  case PseForm::PerKv:
    return pse.get(n1 * ck0[u] + h * skv[u] + j);
  case PseForm::Full:
    return pse.get(n1 * pairsBefore[u] + h * sq[u] * skv[u] + i * skv[u] + j);
  case PseForm::Slopes: {
    const bool both = c.qStartGiven && c.kvStartGiven;
    const int64_t qs = both ? c.qStart : 0, ks = both ? c.kvStart : 0;
    const double alpha = pse.get(c.pseBatches == 1 ? h : bi * n1 + h);
    const double dist = static_cast<double>(std::llabs((j + ks) - (i + qs)));
    return c.pseType == 3 ? -alpha * std::sqrt(dist) : -alpha * dist;
  }
  }
  return 0;
}

Forward Data::Impl::forward() const {
  Forward f;
  f.m.assign(static_cast<size_t>(t1 * n1), 0.0);
  f.l.assign(static_cast<size_t>(t1 * n1), 0.0);
  f.o.assign(static_cast<size_t>(t1 * n1 * dv), 0.0);
  const std::vector<double> qv = q.load(), kv = k.load(), vv = v.load();
  const std::vector<double> qrv = qr.load(), krv = kr.load();
  const double sigma = scale, kappa = keep;
  const bool dropout = keep < 1.0f;
  std::vector<double> s;
  std::vector<char> kept;
  for (int64_t bi = 0; bi < bin; ++bi) {
    const size_t u = static_cast<size_t>(bi);
    for (int64_t h = 0; h < n1; ++h) {
      const int64_t hk = h / g;
      for (int64_t i = 0; i < sq[u]; ++i) {
        const int64_t qi = cq0[u] + i;
        s.assign(static_cast<size_t>(skv[u]), 0.0);
        kept.assign(static_cast<size_t>(skv[u]), 0);
        double mx = sink.present ? sink.get(h) : -INFINITY;
        for (int64_t j = 0; j < skv[u]; ++j) {
          if (!keeps(bi, h, i, j))
            continue;
          const int64_t kj = ck0[u] + j;
          double x = 0;
          for (int64_t c0 = 0; c0 < d; ++c0)
            x += qv[static_cast<size_t>((qi * n1 + h) * d + c0)] *
                 kv[static_cast<size_t>((kj * n2 + hk) * d + c0)];
          for (int64_t c0 = 0; c0 < dr; ++c0)
            x += qrv[static_cast<size_t>((qi * n1 + h) * dr + c0)] *
                 krv[static_cast<size_t>((kj * n2 + hk) * dr + c0)];
          const double p = bias(bi, h, i, j);
          const double sc = c.pseType == 1 ? sigma * (x + p) : sigma * x + p;
          s[static_cast<size_t>(j)] = sc;
          kept[static_cast<size_t>(j)] = 1;
          mx = std::max(mx, sc);
        }
        if (mx == -INFINITY)
          continue; // nothing kept and no sink
        double sum = sink.present ? std::exp(sink.get(h) - mx) : 0.0;
        for (int64_t j = 0; j < skv[u]; ++j)
          if (kept[static_cast<size_t>(j)])
            sum += std::exp(s[static_cast<size_t>(j)] - mx);
        const size_t row = static_cast<size_t>(qi * n1 + h);
        f.m[row] = mx;
        f.l[row] = sum;
        for (int64_t j = 0; j < skv[u]; ++j) {
          if (!kept[static_cast<size_t>(j)])
            continue;
          double w = std::exp(s[static_cast<size_t>(j)] - mx) / sum;
          if (dropout) {
            const int64_t e = n1 * pairsBefore[u] + h * sq[u] * skv[u] + i * skv[u] + j;
            const int bit = (static_cast<int>(drop.get(e / 8)) >> (e % 8)) & 1;
            w = w * bit / kappa;
          }
          const int64_t kj = ck0[u] + j;
          for (int64_t c0 = 0; c0 < dv; ++c0)
            f.o[row * static_cast<size_t>(dv) + static_cast<size_t>(c0)] +=
                w * vv[static_cast<size_t>((kj * n2 + hk) * dv + c0)];
        }
      }
    }
  }
  return f;
}

/// Writes the forward's O (rounded to the dtype), M and L (fp32, 8 lanes, in
/// the chosen layout) for the rows of every batch; rows outside all batches
/// keep their random O and get M = 0, L = 1. A row with nothing kept and no
/// sink gets M = NEG, L = 1, O = 0 (no test depends on such rows).
void Data::Impl::storeForward() {
  const Forward f = forward();
  for (int64_t e = 0; e < t1 * n1 * 8; ++e) {
    m.set(e, 0.0);
    l.set(e, 1.0);
  }
  for (int64_t bi = 0; bi < bin; ++bi) {
    const size_t u = static_cast<size_t>(bi);
    for (int64_t h = 0; h < n1; ++h)
      for (int64_t i = 0; i < sq[u]; ++i) {
        const int64_t qi = cq0[u] + i;
        const size_t row = static_cast<size_t>(qi * n1 + h);
        const bool empty = f.l[row] == 0;
        const int64_t lin = c.statsTnd ? (qi * n1 + h) * 8 : (cq0[u] * n1 + h * sq[u] + i) * 8;
        for (int64_t lane = 0; lane < 8; ++lane) {
          m.set(lin + lane, empty ? kNeg : f.m[row]);
          l.set(lin + lane, empty ? 1.0 : f.l[row]);
        }
        for (int64_t c0 = 0; c0 < dv; ++c0)
          o.set(static_cast<int64_t>(row) * dv + c0,
                f.o[row * static_cast<size_t>(dv) + static_cast<size_t>(c0)]);
      }
  }
}

Tensor *Data::Impl::input(const std::string &name) {
  if (name == "query")
    return &q;
  if (name == "keyIn")
    return &k;
  if (name == "value")
    return &v;
  if (name == "dy")
    return &dy;
  if (name == "queryRope")
    return &qr;
  if (name == "keyInRope")
    return &kr;
  if (name == "attentionIn")
    return &o;
  if (name == "softmaxMax")
    return &m;
  if (name == "softmaxSum")
    return &l;
  if (name == "sink")
    return &sink;
  if (name == "pse")
    return &pse;
  if (name == "dropMask")
    return &drop;
  if (name == "attenMask")
    return &mask;
  assert(false && "unknown input name");
  return nullptr;
}

//===----------------------------------------------------------------------===//
// Data
//===----------------------------------------------------------------------===//

Data::Data(const Config &config) : impl_(std::make_unique<Impl>(config)) {}
Data::~Data() = default;

const Config &Data::config() const { return impl_->c; }

const aclnn::FlashAttentionUnpaddingScoreGradV5Args &Data::args() const { return impl_->args[0]; }

aclnn::FlashAttentionUnpaddingScoreGradV5Args Data::argsWithFreshOutputs() {
  Impl &im = *impl_;
  if (!im.freshMade) {
    im.makeOutputs(1);
    im.freshMade = true;
  }
  resetOutputs(1);
  auto a = im.args[0];
  auto &o6 = im.out[1];
  a.dqOut = &o6[0].view;
  a.dkOut = &o6[1].view;
  a.dvOut = &o6[2].view;
  a.dqRopeOut = o6[3].present ? &o6[3].view : nullptr;
  a.dkRopeOut = o6[4].present ? &o6[4].view : nullptr;
  a.dsinkOut = &o6[5].view;
  im.args[1] = a;
  return a;
}

std::vector<double> Data::output(const std::string &name, int set) const {
  for (int idx = 0; idx < kOutputs; ++idx)
    if (name == kOutputNames[idx])
      return impl_->out[static_cast<size_t>(set)][static_cast<size_t>(idx)].load();
  assert(false && "unknown output name");
  return {};
}

void Data::resetOutputs(int set) {
  for (const Tensor &t : impl_->out[static_cast<size_t>(set)])
    if (t.present)
      fillSentinel(t);
}

bool Data::outputGapsIntact(int set) const {
  for (const Tensor &t : impl_->out[static_cast<size_t>(set)]) {
    if (!t.present)
      continue;
    std::vector<char> addressed(static_cast<size_t>(t.storageElements()), 0);
    for (int64_t e = 0; e < t.view.numel(); ++e)
      addressed[static_cast<size_t>(t.view.offset + flatOffset(t.view, e))] = 1;
    const double sentinel = outputSentinel(t.view.dtype);
    for (int64_t e = 0; e < t.storageElements(); ++e)
      if (!addressed[static_cast<size_t>(e)] && readStorage(t.view, e) != sentinel)
        return false;
  }
  return true;
}

double Data::input(const std::string &name, int64_t flat) const {
  return const_cast<Impl &>(*impl_).input(name)->get(flat);
}

void Data::setInput(const std::string &name, int64_t flat, double value) {
  impl_->input(name)->set(flat, value);
}

int64_t Data::inputNumel(const std::string &name) const {
  return const_cast<Impl &>(*impl_).input(name)->numel();
}

Forward Data::forward() const { return impl_->forward(); }

void Data::refreshForward() { impl_->storeForward(); }

} // namespace tilejit::ops::fag
