//===- IncreFlashAttentionHandwritten.cpp - The twin's dispatcher ---------===//
//
// Takes the validated geometry, builds the twin's views, computes the
// partial softmax states with the AVX-512 build (or the AVX2 one: AVX2 host,
// TILEJIT_TARGET=avx2, or a shape the AVX-512 build does not take) and
// merges the splits.
//
//===----------------------------------------------------------------------===//
#include "ops/host/Kernels.h"
#include "ops/incre_flash_attention/IfaPlan.h"
#include "ops/incre_flash_attention/IfaTwin.h"
#include "ops/incre_flash_attention/IncreFlashAttentionTwin.h"
#include "ops/host/DataType.h"
#include "ops/samples/SamplesTwin.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

namespace tilejit::ops {

using host::DataType;
using host::TensorView;
using host::programsFor;
using namespace ifa;

namespace {
/// The window positions each split covers: a multiple of the twins' 32-row
/// tile.
int64_t twinChunk(const TwinArgs &a) {
  int64_t maxLen = 0;
  for (int64_t i = 0; i < a.b; ++i)
    maxLen = std::max(maxLen, a.len[i]);
  const int64_t parts = std::max<int64_t>(a.parts, 1), tile = 32;
  const int64_t per = (maxLen + parts - 1) / parts;
  return std::max(tile, (per + tile - 1) / tile * tile);
}
} // namespace

bool increFlashAttentionV4Handwritten(
    const aclnn::IncreFlashAttentionV4Args &a) {
  static const bool cpuOk = __builtin_cpu_supports("avx2") &&
                            __builtin_cpu_supports("fma") &&
                            __builtin_cpu_supports("f16c");
  if (!cpuOk)
    return false;
  Geometry g;
  if (!validate(a, g))
    return false;
  if (g.mode == KvMode::List || g.mask || g.pse || g.padding || g.quantKv ||
      g.quantOut)
    return false;
  const TensorView &q = *a.query, &out = *a.attentionOut;
  const TensorView &k = *a.key->at(0), &v = *a.value->at(0);
  if (q.strides.back() != 1 || out.strides.back() != 1 ||
      k.strides.back() != 1 || v.strides.back() != 1)
    return false;
  TwinArgs t;
  t.q = q.as<uint16_t>();
  t.out = out.as<uint16_t>();
  auto heads = [&](const TensorView &x, int64_t *st) {
    const auto &s = x.strides;
    if (g.layout == Layout::BSH) {
      st[0] = s[0];
      st[1] = g.g * g.d;
      st[2] = g.d;
    } else if (g.layout == Layout::BNSD) {
      st[0] = s[0];
      st[1] = g.g * s[1];
      st[2] = s[1];
    } else {
      st[0] = s[0];
      st[1] = g.g * s[2];
      st[2] = s[2];
    }
  };
  heads(q, t.qStride);
  heads(out, t.oStride);
  auto cache = [&](const TensorView &x, int64_t *st) {
    const auto &s = x.strides;
    if (g.paged && g.cache4d) {
      st[0] = s[0];
      st[1] = s[1];
      st[2] = s[2];
    } else if (g.paged || g.layout == Layout::BSH) {
      st[0] = s[0];
      st[1] = g.d;
      st[2] = s[1];
    } else if (g.layout == Layout::BNSD) {
      st[0] = s[0];
      st[1] = s[1];
      st[2] = s[2];
    } else {
      st[0] = s[0];
      st[1] = s[2];
      st[2] = s[1];
    }
  };
  t.k = k.as<uint16_t>();
  t.v = v.as<uint16_t>();
  cache(k, t.kStride);
  cache(v, t.vStride);
  if (g.paged) {
    t.table = a.blocktable->as<int32_t>();
    t.tableStride = a.blocktable->strides[0];
    t.blockSize = g.blockSize;
  }
  t.len = g.len.data();
  t.b = g.b;
  t.nkv = g.nkv;
  t.g = g.g;
  t.d = g.d;
  t.bf16 = q.dtype == DataType::BFloat16;
  t.scale = static_cast<float>(a.scaleValue);
  const int64_t units = g.b * g.nkv;
  const int64_t target = programsFor(std::numeric_limits<int32_t>::max());
  const int64_t maxLen =
      g.len.empty() ? 0 : *std::max_element(g.len.begin(), g.len.end());
  // Tasks: (batch, KV head, split) on AVX2; (batch, split) on AVX-512,
  // whose tasks walk every KV head. Enough splits for every core.
  const bool wide = std::string(handwrittenIsa()) == "avx512" && t.d % 16 == 0 && t.g <= 64;
  const int64_t tasks = wide ? g.b : units;
  if (tasks < target)
    t.parts = std::clamp<int64_t>((target + tasks - 1) / tasks, 1,
                                  std::max<int64_t>(1, maxLen / 512));
  const int64_t chunk = twinChunk(t), parts = std::max<int64_t>(t.parts, 1);
  const int64_t gd = t.g * t.d;
  std::vector<float> ms(static_cast<size_t>(units * parts * t.g)), ls(ms.size()),
      accs(static_cast<size_t>(units * parts * gd));
  if (wide) {
    // One task per (batch, split), all its KV heads step by step.
#pragma omp parallel for schedule(static)
    for (int64_t w = 0; w < t.b * parts; ++w) {
      const int64_t b = w / parts, p = w % parts;
      const int64_t c0 = std::min(p * chunk, t.len[b]);
      const int64_t c1 = std::min(c0 + chunk, t.len[b]);
      std::vector<float *> m(static_cast<size_t>(t.nkv)), l(m.size()), acc(m.size());
      for (int64_t hk = 0; hk < t.nkv; ++hk) {
        const size_t at = static_cast<size_t>((b * t.nkv + hk) * parts + p);
        m[static_cast<size_t>(hk)] = &ms[at * static_cast<size_t>(t.g)];
        l[static_cast<size_t>(hk)] = &ls[at * static_cast<size_t>(t.g)];
        acc[static_cast<size_t>(hk)] = &accs[at * static_cast<size_t>(gd)];
      }
      partialAvx512(t, b, c0, c1, m.data(), l.data(), acc.data());
    }
  } else {
#pragma omp parallel for schedule(static)
    for (int64_t w = 0; w < units * parts; ++w) {
      const int64_t u = w / parts, p = w % parts;
      const int64_t b = u / t.nkv, hk = u % t.nkv;
      const int64_t c0 = std::min(p * chunk, t.len[b]);
      const int64_t c1 = std::min(c0 + chunk, t.len[b]);
      partialAvx2(t, b, hk, c0, c1, &ms[static_cast<size_t>(w * t.g)],
                  &ls[static_cast<size_t>(w * t.g)], &accs[static_cast<size_t>(w * gd)]);
    }
  }
  // Merge the splits with log-sum-exp weights; normalise; round.
#pragma omp parallel for schedule(static)
  for (int64_t u = 0; u < units; ++u) {
    const int64_t b = u / t.nkv, hk = u % t.nkv;
    std::vector<float> o(static_cast<size_t>(t.d));
    for (int64_t i = 0; i < t.g; ++i) {
      float mx = -std::numeric_limits<float>::infinity();
      for (int64_t p = 0; p < parts; ++p)
        mx = std::max(mx, ms[static_cast<size_t>((u * parts + p) * t.g + i)]);
      const float safe = std::isinf(mx) ? 0.0f : mx;
      float z = 0;
      std::fill(o.begin(), o.end(), 0.0f);
      for (int64_t p = 0; p < parts; ++p) {
        const size_t w = static_cast<size_t>(u * parts + p);
        const float e = std::exp(ms[w * t.g + i] - safe);
        z += ls[w * t.g + i] * e;
        const float *src = &accs[w * gd + i * t.d];
        for (int64_t c = 0; c < t.d; ++c)
          o[static_cast<size_t>(c)] += src[c] * e;
      }
      const float inv = z == 0.0f ? 0.0f : 1.0f / z;
      uint16_t *dst = t.out + b * t.oStride[0] + hk * t.oStride[1] + i * t.oStride[2];
      for (int64_t c = 0; c < t.d; ++c) {
        const float x = o[static_cast<size_t>(c)] * inv;
        dst[c] = t.bf16 ? host::floatToBFloat16Bits(x) : host::floatToHalfBits(x);
      }
    }
  }
  return true;
}

} // namespace tilejit::ops
