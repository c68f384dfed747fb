//===- IncreFlashAttentionHandwritten.cpp - The twin's dispatcher ---------===//
//
// Takes the validated geometry, builds the twin's views and calls the AVX2
// build when the CPU has AVX2, FMA and F16C.
//
//===----------------------------------------------------------------------===//
#include "ops/common/KvCache.h"
#include "ops/incre_flash_attention/IfaPlan.h"
#include "ops/incre_flash_attention/IfaTwin.h"
#include "ops/incre_flash_attention/IncreFlashAttention.h"

#include <algorithm>
#include <limits>

namespace tilejit::ops {

using runtime::DataType;
using runtime::TensorView;
using namespace ifa;

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
  if (units < target)
    t.parts = std::clamp<int64_t>((target + units - 1) / units, 1,
                                  std::max<int64_t>(1, maxLen / 512));
  twinAvx2(t);
  return true;
}

} // namespace tilejit::ops
