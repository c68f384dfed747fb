//===- ScatterPaKvCacheReference.cpp - The spec's pseudo-code, literally --===//
//
// Sections 4-6 of ../shared/spec/scatter_pa_kv_cache.md, one element at a
// time through the original views' strides. Written from the spec alone; it
// shares nothing with the kernels or their planning.
//
//===----------------------------------------------------------------------===//
#include "ops/scatter_pa_kv_cache/ScatterPaKvCacheTwin.h"

#include <cmath>
#include <cstring>
#include <functional>
#include <initializer_list>
#include <string_view>
#include <vector>

namespace tilejit::ops {

using host::DataType;
using host::TensorView;

namespace {

char *at(const TensorView &t, std::initializer_list<int64_t> idx) {
  int64_t off = 0, k = 0;
  for (int64_t i : idx)
    off += i * t.strides[static_cast<size_t>(k++)];
  return static_cast<char *>(t.firstElement()) + off * t.elementSize();
}

int64_t index(const TensorView &t, std::initializer_list<int64_t> idx) {
  const char *p = at(t, idx);
  if (t.dtype == DataType::Int64) {
    int64_t v;
    std::memcpy(&v, p, 8);
    return v;
  }
  int32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

/// One head vector or token vector, as element addresses.
using Row = std::vector<const char *>;

/// The value of an FP8 code (E5M2: bias 15, 2 mantissa bits, inf/NaN at
/// exponent 31; E4M3FN: bias 7, 3 mantissa bits, NaN at S.1111.111 only).
double fp8Value(DataType type, unsigned code) {
  const bool e5 = type == DataType::Float8E5M2;
  const int mbits = e5 ? 2 : 3, bias = e5 ? 15 : 7;
  const unsigned e = (code >> mbits) & (e5 ? 31u : 15u), m = code & ((1u << mbits) - 1);
  const double sign = (code & 0x80) ? -1.0 : 1.0;
  if (e5 && e == 31)
    return m ? std::copysign(std::nan(""), sign) : sign * INFINITY;
  if (!e5 && e == 15 && m == 7)
    return std::copysign(std::nan(""), sign);
  if (e == 0)
    return sign * std::ldexp(m, 1 - bias - mbits);
  return sign * std::ldexp((1u << mbits) + m, static_cast<int>(e) - bias - mbits);
}

/// The FP8 code nearest to `x` by exhaustive search, ties to the even code;
/// beyond the largest finite value (past the rounding midpoint) E5M2 gives
/// inf and E4M3FN NaN. A NaN mean is stored as 0x7F.
unsigned fp8Encode(DataType type, float x) {
  const bool e5 = type == DataType::Float8E5M2;
  if (std::isnan(x))
    return 0x7F; // the canonical NaN, whatever the sign
  const unsigned sign = std::signbit(x) ? 0x80 : 0;
  const double a = std::fabs(static_cast<double>(x));
  if (e5 ? a >= 61440.0 : a > 464.0)
    return sign | (e5 ? 0x7C : 0x7F);
  unsigned best = 0;
  double bestErr = INFINITY;
  for (unsigned code = 0; code < 0x80; ++code) {
    const double v = fp8Value(type, code);
    if (!std::isfinite(v))
      continue;
    const double err = std::fabs(v - a);
    if (err < bestErr || (err == bestErr && (code & 1) == 0)) {
      best = code;
      bestErr = err;
    }
  }
  return sign | best;
}

/// The mean of section 6, element by element.
void meanInto(DataType type, const std::vector<Row> &rows, std::vector<char> &out) {
  const int64_t size = host::elementSize(type), len = static_cast<int64_t>(rows[0].size());
  const int64_t n = static_cast<int64_t>(rows.size());
  out.assign(static_cast<size_t>(len * size), 0);
  for (int64_t e = 0; e < len; ++e) {
    char *dst = out.data() + e * size;
    auto each = [&](auto read) {
      for (const Row &r : rows)
        read(r[static_cast<size_t>(e)]);
    };
    switch (type) {
    case DataType::Float16:
    case DataType::BFloat16:
    case DataType::Float: {
      float acc = 0.0f;
      each([&](const char *p) {
        if (type == DataType::Float) {
          float f;
          std::memcpy(&f, p, 4);
          acc = acc + f;
        } else {
          uint16_t h;
          std::memcpy(&h, p, 2);
          acc = acc + (type == DataType::Float16 ? host::halfBitsToFloat(h)
                                                 : host::bfloat16BitsToFloat(h));
        }
      });
      volatile float q = acc / static_cast<float>(n);
      float r = q;
      if (type == DataType::Float) {
        std::memcpy(dst, &r, 4);
      } else {
        uint16_t h = type == DataType::Float16 ? host::floatToHalfBits(r)
                                               : host::floatToBFloat16Bits(r);
        std::memcpy(dst, &h, 2);
      }
      break;
    }
    case DataType::Int8:
    case DataType::Int16: {
      int32_t acc = 0;
      each([&](const char *p) {
        if (type == DataType::Int8) {
          acc += *reinterpret_cast<const int8_t *>(p);
        } else {
          int16_t v;
          std::memcpy(&v, p, 2);
          acc += v;
        }
      });
      int32_t q = acc / static_cast<int32_t>(n);
      std::memcpy(dst, &q, static_cast<size_t>(size)); // little-endian low bytes
      break;
    }
    case DataType::UInt8:
    case DataType::UInt16:
    case DataType::UInt32: {
      uint32_t acc = 0;
      each([&](const char *p) {
        uint32_t v = 0;
        std::memcpy(&v, p, static_cast<size_t>(size));
        acc += v;
      });
      uint32_t q = acc / static_cast<uint32_t>(n);
      std::memcpy(dst, &q, static_cast<size_t>(size));
      break;
    }
    case DataType::Int32: {
      uint32_t acc = 0; // two's-complement wrap
      each([&](const char *p) {
        uint32_t v;
        std::memcpy(&v, p, 4);
        acc += v;
      });
      int32_t q = static_cast<int32_t>(acc) / static_cast<int32_t>(n);
      std::memcpy(dst, &q, 4);
      break;
    }
    case DataType::Float8E5M2:
    case DataType::Float8E4M3FN: {
      float acc = 0.0f;
      each([&](const char *p) {
        acc = acc + static_cast<float>(fp8Value(type, static_cast<unsigned char>(*p)));
      });
      volatile float q = acc / static_cast<float>(n);
      *dst = static_cast<char>(fp8Encode(type, q));
      break;
    }
    default:
      break; // HIFLOAT8 is rejected by phase 1
    }
  }
}

} // namespace

void scatterPaKvCacheReference(const aclnn::ScatterPaKvCacheArgs &a) {
  const TensorView &k = *a.key, &v = *a.value, &kc = *a.keyCacheRef,
                   &vc = *a.valueCacheRef, &slots = *a.slotMapping;
  if ((k.isEmpty() || kc.isEmpty()) && (v.isEmpty() || vc.isEmpty()))
    return;
  const int64_t size = k.elementSize();
  auto mode = [](const char *m) { return std::string_view(m ? m : ""); };
  const bool keyOnly = v.rank() == 0;
  const bool nz = mode(a.cacheModeOptional) == "PA_NZ";
  const std::string_view sm = mode(a.scatterModeOptional);

  if (k.rank() == 3 && (nz || sm.empty() || sm == "None" || sm == "Nct")) {
    // S1, S2, S6.
    const bool nct = !nz && sm == "Nct";
    auto tokenRow = [&](const TensorView &t, int which, int64_t i) {
      const int64_t n = t.dim(1), d = t.dim(2);
      Row r;
      for (int64_t h = 0; h < n; ++h)
        for (int64_t e = 0; e < d; ++e) {
          if (nct) {
            int64_t flat = i * (*a.stridesOptional)[which] + (*a.offsetsOptional)[which] + h * d + e;
            r.push_back(static_cast<const char *>(t.firstElement()) + flat * t.elementSize());
          } else {
            r.push_back(at(t, {i, h, e}));
          }
        }
      return r;
    };
    auto store = [&](const TensorView &cache, int64_t s, const Row &r) {
      const int64_t bs = nz ? cache.dim(2) : cache.dim(1);
      if (s < 0 || s >= cache.dim(0) * bs)
        return;
      const int64_t blk = s / bs, pos = s % bs;
      for (size_t x = 0; x < r.size(); ++x) {
        char *dst;
        if (nz) {
          const int64_t ew = cache.dim(3), flat = static_cast<int64_t>(x);
          dst = at(cache, {blk, flat / ew, pos, flat % ew});
        } else {
          const int64_t d = cache.dim(3), flat = static_cast<int64_t>(x);
          dst = at(cache, {blk, pos, flat / d, flat % d});
        }
        std::memcpy(dst, r[x], static_cast<size_t>(size));
      }
    };
    for (int64_t i = 0; i < k.dim(0); ++i) {
      const int64_t s = index(slots, {i});
      if (s < 0)
        continue;
      store(kc, s, tokenRow(k, 0, i));
      if (!keyOnly)
        store(vc, s, tokenRow(v, 1, i));
    }
    return;
  }

  // S3, S4, S5: one head vector per slot; caches [nb, bs, 1, D].
  const bool padded = k.rank() == 4;
  const int64_t n = padded ? k.dim(2) : k.dim(1);
  const TensorView &seq = *a.seqLensOptional, &lens = *a.compressLensOptional;
  const int64_t batches = seq.dim(0);
  const int64_t tokens = k.dim(0), padLen = padded ? k.dim(1) : 0;
  const int64_t cap = kc.dim(0) * kc.dim(1);
  auto put = [&](const TensorView &cache, int64_t d, const Row &r) {
    if (d < 0 || d >= cap)
      return;
    for (size_t x = 0; x < r.size(); ++x)
      std::memcpy(at(cache, {d / cache.dim(1), d % cache.dim(1), 0, static_cast<int64_t>(x)}),
                  r[x], static_cast<size_t>(size));
  };
  std::vector<int64_t> start(static_cast<size_t>(batches) + 1, 0);
  for (int64_t b = 0; b < batches; ++b)
    start[static_cast<size_t>(b) + 1] = start[static_cast<size_t>(b)] + index(seq, {b});
  for (int64_t b = 0; b < batches; ++b) {
    for (int64_t h = 0; h < n; ++h) {
      const int64_t i = b * n + h;
      const int64_t s = padded ? index(slots, {b, h}) : index(slots, {i});
      if (s < 0)
        continue;
      const int64_t w = padded ? index(lens, {b, h}) : index(lens, {i});
      const int64_t len = index(seq, {b});
      // row(j) of this batch and head; false if outside the source.
      auto row = [&](const TensorView &t, int64_t j, Row &r) {
        int64_t src;
        if (padded) {
          if (j < 0 || j >= padLen)
            return false;
          src = j;
        } else {
          src = start[static_cast<size_t>(b)] + j;
          if (src < 0 || src >= tokens)
            return false;
        }
        r.clear();
        for (int64_t e = 0; e < t.dim(-1); ++e)
          r.push_back(padded ? at(t, {b, src, h, e}) : at(t, {src, h, e}));
        return true;
      };
      auto putRow = [&](int64_t d, int64_t j) {
        Row r;
        if (row(k, j, r))
          put(kc, d, r);
        if (row(v, j, r))
          put(vc, d, r);
      };
      const bool tail = padded ? !a.compressSeqOffsetOptional : sm == "Alibi";
      if (tail) {
        for (int64_t j = 0; j < w; ++j)
          putRow(s + j, len - w + j);
        continue;
      }
      const bool mean = padded || sm == "Rope";
      const int64_t L = padded ? std::min(len, padLen) : len;
      const int64_t o = index(*a.compressSeqOffsetOptional, {i});
      if (o < 0 || w <= 0 || o >= L) {
        for (int64_t j = 0; j < L; ++j)
          putRow(s + j, j);
        continue;
      }
      const int64_t we = std::min(w, L - o);
      for (int64_t j = 0; j < o; ++j)
        putRow(s + j, j);
      int64_t base = s + o;
      if (mean) {
        for (const TensorView *t : {&k, &v}) {
          std::vector<Row> window;
          Row r;
          bool readable = true;
          for (int64_t j = o; j < o + we; ++j) {
            readable = readable && row(*t, j, r);
            window.push_back(r);
          }
          if (!readable)
            continue;
          std::vector<char> avg;
          meanInto(t->dtype, window, avg);
          Row out;
          for (int64_t e = 0; e < t->dim(-1); ++e)
            out.push_back(avg.data() + e * size);
          put(t == &k ? kc : vc, s + o, out);
        }
        base = s + o + 1;
      }
      for (int64_t j = o + we; j < L; ++j)
        putRow(base + (j - o - we), j);
    }
  }
}

} // namespace tilejit::ops
