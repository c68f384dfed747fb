//===- IncreFlashAttentionReference.cpp - Section 4 in float64 ------------===//
//
// Sections 3 and 4 of ../shared/spec/incre_flash_attention_v4.md, element by
// element through the original views' strides, in double. Written from the
// spec alone; it shares nothing with the kernels or their planning.
//
//===----------------------------------------------------------------------===//
#include "ops/incre_flash_attention/IncreFlashAttentionTwin.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <initializer_list>
#include <string_view>
#include <vector>

namespace tilejit::ops {

using host::DataType;
using host::TensorView;

namespace {

int64_t offsetOf(const TensorView &t, std::initializer_list<int64_t> idx) {
  int64_t off = 0;
  size_t k = 0;
  for (int64_t i : idx)
    off += i * t.strides[k++];
  return off;
}

/// Element `flat` of `t` in row-major order of its shape.
int64_t flatOffset(const TensorView &t, int64_t flat) {
  int64_t off = 0;
  for (size_t k = t.shape.size(); k-- > 0;) {
    off += (flat % t.shape[k]) * t.strides[k];
    flat /= t.shape[k];
  }
  return off;
}

double valueAt(const TensorView &t, int64_t off) {
  const char *p =
      static_cast<const char *>(t.firstElement()) + off * t.elementSize();
  switch (t.dtype) {
  case DataType::Float16: {
    uint16_t v;
    std::memcpy(&v, p, 2);
    return host::halfBitsToFloat(v);
  }
  case DataType::BFloat16: {
    uint16_t v;
    std::memcpy(&v, p, 2);
    return host::bfloat16BitsToFloat(v);
  }
  case DataType::Float: {
    float v;
    std::memcpy(&v, p, 4);
    return v;
  }
  case DataType::Int8:
    return static_cast<int8_t>(*p);
  case DataType::Int32: {
    int32_t v;
    std::memcpy(&v, p, 4);
    return v;
  }
  case DataType::Int64: {
    int64_t v;
    std::memcpy(&v, p, 8);
    return static_cast<double>(v);
  }
  default:
    return static_cast<uint8_t>(*p);
  }
}

double flatValue(const TensorView &t, int64_t flat) {
  return valueAt(t, flatOffset(t, flat));
}

void store(const TensorView &t, int64_t flat, double v) {
  char *p = static_cast<char *>(t.firstElement()) +
            flatOffset(t, flat) * t.elementSize();
  if (t.dtype == DataType::Float16) {
    uint16_t h = host::floatToHalfBits(static_cast<float>(v));
    std::memcpy(p, &h, 2);
  } else if (t.dtype == DataType::BFloat16) {
    uint16_t h = host::floatToBFloat16Bits(static_cast<float>(v));
    std::memcpy(p, &h, 2);
  } else {
    const double r = std::nearbyint(v); // half to even
    const int8_t y = static_cast<int8_t>(std::clamp(r, -128.0, 127.0));
    std::memcpy(p, &y, 1);
  }
}

bool present(const TensorView *t) { return t && !t->isEmpty(); }

} // namespace

void increFlashAttentionV4Reference(const aclnn::IncreFlashAttentionV4Args &a) {
  const TensorView &q = *a.query, &out = *a.attentionOut;
  const std::string_view layout = a.inputLayout;
  const int64_t n = a.numHeads;
  const int64_t nkv = a.numKeyValueHeads ? a.numKeyValueHeads : n;
  const int64_t grp = n / nkv;
  const int64_t b = q.dim(0);
  const int64_t d = q.numel() / (b * n);
  const bool paged = present(a.blocktable);
  const int64_t listLen = a.key->size();
  const TensorView &k0 = *a.key->at(0);
  const bool contiguous = !paged && listLen == 1 && k0.dim(0) == b;
  const int64_t bs = a.blockSize;
  const bool hasAsl = a.actualSeqLengths && a.actualSeqLengths->size() > 0;
  const float scale = static_cast<float>(a.scaleValue);

  // The S of batch i's tensor and the offset of (i, k, p, d) in key/value.
  auto seqOf = [&](int64_t i) -> int64_t {
    if (paged)
      return a.blocktable->dim(1) * bs;
    const TensorView &t = contiguous ? k0 : *a.key->at(i);
    return layout == "BNSD" ? t.dim(2) : t.dim(1);
  };
  auto kvOffset = [&](const TensorView &t, int64_t i, int64_t k, int64_t p,
                      int64_t c) -> int64_t {
    if (paged) {
      const int64_t blk = static_cast<int64_t>(
          valueAt(*a.blocktable, offsetOf(*a.blocktable, {i, p / bs})));
      const int64_t off = p % bs;
      if (t.rank() == 3)
        return offsetOf(t, {blk, off, k * d + c});
      return offsetOf(t, {blk, k, off, c});
    }
    const int64_t bi = contiguous ? i : 0;
    if (layout == "BNSD")
      return offsetOf(t, {bi, k, p, c});
    if (layout == "BSND")
      return offsetOf(t, {bi, p, k, c});
    return offsetOf(t, {bi, p, k * d + c});
  };
  const bool quantKv = k0.dtype == DataType::Int8;
  auto antiquant = [&](const TensorView *t, int64_t row, int64_t k, int64_t c,
                       double dflt) -> double {
    if (!present(t))
      return dflt;
    if (t->numel() == 2)
      return flatValue(*t, row);
    return flatValue(*t, row * nkv * d + k * d + c);
  };
  const bool outInt8 = out.dtype == DataType::Int8;
  auto finalize = [&](int64_t flat, int64_t ch, double x) {
    if (outInt8) {
      const TensorView &s = *a.quantScale2;
      const double sc = flatValue(s, s.numel() == 1 ? 0 : ch);
      const double of =
          present(a.quantOffset2)
              ? flatValue(*a.quantOffset2, s.numel() == 1 ? 0 : ch)
              : 0.0;
      x = x * sc + of;
    }
    store(out, flat, x);
  };

  const bool padding = present(a.kvPaddingSize) && contiguous && hasAsl;
  int64_t pad = 0;
  if (padding)
    pad = std::max<int64_t>(
        0, static_cast<int64_t>(flatValue(*a.kvPaddingSize, 0)));

  std::vector<double> s, acc(static_cast<size_t>(d));
  for (int64_t i = 0; i < b; ++i) {
    const int64_t sb = seqOf(i);
    int64_t len = sb;
    if (hasAsl)
      len = a.actualSeqLengths->size() == 1 ? (*a.actualSeqLengths)[0]
                                            : (*a.actualSeqLengths)[i];
    int64_t start = 0;
    bool zero = len == 0;
    if (padding) {
      start = sb - pad - len;
      if (start < 0)
        zero = true;
    }
    const TensorView &kt = contiguous || paged ? k0 : *a.key->at(i);
    const TensorView &vt =
        contiguous || paged ? *a.value->at(0) : *a.value->at(i);
    for (int64_t h = 0; h < n; ++h) {
      const int64_t k = h / grp;
      if (zero) {
        for (int64_t c = 0; c < d; ++c)
          finalize((i * n + h) * d + c, h * d + c, 0.0);
        continue;
      }
      s.assign(static_cast<size_t>(len), 0.0);
      double mx = -INFINITY;
      for (int64_t j = 0; j < len; ++j) {
        const int64_t p = start + j;
        double dotv = 0;
        for (int64_t c = 0; c < d; ++c) {
          double kv = valueAt(kt, kvOffset(kt, i, k, p, c));
          if (quantKv)
            kv = (kv + antiquant(a.antiquantOffset, 0, k, c, 0.0)) *
                 antiquant(a.antiquantScale, 0, k, c, 1.0);
          dotv += flatValue(q, (i * n + h) * d + c) * kv;
        }
        double sc = static_cast<double>(scale) * dotv;
        if (present(a.pseShift)) {
          const TensorView &ps = *a.pseShift;
          const int64_t pb = ps.dim(0) == b ? i : 0;
          sc += flatValue(ps, (pb * n + h) * ps.dim(3) + p);
        }
        if (present(a.attenMask) &&
            flatValue(*a.attenMask, i * a.attenMask->dim(-1) + p) != 0)
          sc = -1e12;
        s[static_cast<size_t>(j)] = sc;
        mx = std::max(mx, sc);
      }
      double z = 0;
      std::fill(acc.begin(), acc.end(), 0.0);
      for (int64_t j = 0; j < len; ++j) {
        const double e = std::exp(s[static_cast<size_t>(j)] - mx);
        z += e;
        for (int64_t c = 0; c < d; ++c) {
          double vv = valueAt(vt, kvOffset(vt, i, k, start + j, c));
          if (quantKv)
            vv = (vv + antiquant(a.antiquantOffset, 1, k, c, 0.0)) *
                 antiquant(a.antiquantScale, 1, k, c, 1.0);
          acc[static_cast<size_t>(c)] += e * vv;
        }
      }
      for (int64_t c = 0; c < d; ++c)
        finalize((i * n + h) * d + c, h * d + c,
                 acc[static_cast<size_t>(c)] / z);
    }
  }
}

} // namespace tilejit::ops
