//===- IncreFlashAttention.cpp - Validation, planning and launch ----------===//
//
// Section numbers refer to ../shared/spec/incre_flash_attention_v4.md.
//
//===----------------------------------------------------------------------===//
#include "ops/incre_flash_attention/IncreFlashAttention.h"

#include "ops/Embedded.h"
#include "ops/incre_flash_attention/IfaPlan.h"
#include "ops/host/OpRegistry.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <numeric>
#include <string>
#include <string_view>

namespace tilejit::ops {

using host::DataType;
using host::Status;
using host::TensorView;
namespace status = host::status;

namespace ifa {

namespace {

Status invalid(const auto &...parts) {
  return Status::error(status::ParamInvalid, parts...);
}
std::string shapeOf(const TensorView &t) {
  return host::shapeToString(t.shape);
}
bool isFloatType(DataType t) {
  return t == DataType::Float16 || t == DataType::BFloat16;
}
bool isNdFormat(host::Format f) {
  return f == host::Format::ND || f == host::Format::NCHW ||
         f == host::Format::NHWC || f == host::Format::NCDHW;
}
Status checkFormat(const TensorView &t, const char *name) {
  if (!isNdFormat(t.format))
    return invalid(name, ": format must be ND, got ", t.format);
  return Status::ok();
}

/// Checks a per-channel antiquant shape (2.1) for Nkv, D; returns true if ok.
bool antiquantShapeOk(const TensorView &t, int64_t nkv, int64_t d) {
  const auto &s = t.shape;
  using V = std::vector<int64_t>;
  return s == V{2} || s == V{2, nkv, 1, d} || s == V{2, 1, nkv, d} ||
         s == V{2, nkv, d} || s == V{2, nkv * d};
}

/// The per-channel quantScale2 shapes of 6.6 for N, D.
bool quantShapeOk(const TensorView &t, int64_t n, int64_t d) {
  if (t.numel() == 1)
    return t.rank() <= 4;
  const auto &s = t.shape;
  using V = std::vector<int64_t>;
  const int64_t h = n * d;
  return s == V{h} || s == V{1, h} || s == V{1, 1, h} || s == V{n, d} ||
         s == V{n, 1, d} || s == V{1, n, d} || s == V{1, n, 1, d} ||
         s == V{1, 1, n, d};
}

} // namespace

Status validate(const aclnn::IncreFlashAttentionV4Args &a, Geometry &g) {
  if (Status s = host::requireNonNull({{"query", a.query},
                                          {"key", a.key},
                                          {"value", a.value},
                                          {"attentionOut", a.attentionOut},
                                          {"inputLayout", a.inputLayout}});
      !s)
    return s;
  for (int64_t i = 0; i < a.key->size(); ++i)
    if (!a.key->at(i))
      return Status::error(status::ParamNullptr, "key: list element ", i,
                           " must not be null");
  for (int64_t i = 0; i < a.value->size(); ++i)
    if (!a.value->at(i))
      return Status::error(status::ParamNullptr, "value: list element ", i,
                           " must not be null");
  if (a.key->size() == 0)
    return invalid("key: the tensor list must not be empty");
  if (a.value->size() != a.key->size())
    return invalid("value: the tensor list must have as many tensors as key (",
                   a.key->size(), "), got ", a.value->size());
  const TensorView &q = *a.query, &out = *a.attentionOut;
  const TensorView &k0 = *a.key->at(0);
  auto present = [](const TensorView *t) { return t && !t->isEmpty(); };

  // Rule 1: dtypes and formats.
  if (!isFloatType(q.dtype))
    return invalid("query: dtype ", q.dtype,
                   " is not supported (expected FLOAT16 or BFLOAT16)");
  for (int64_t i = 0; i < a.key->size(); ++i) {
    const TensorView &k = *a.key->at(i), &v = *a.value->at(i);
    if (k.dtype != q.dtype && k.dtype != DataType::Int8)
      return invalid("key: dtype ", k.dtype, " must equal query's dtype ",
                     q.dtype, " or be INT8");
    if (v.dtype != k.dtype)
      return invalid("value: dtype ", v.dtype, " must equal key's dtype ",
                     k.dtype);
    if (k.dtype != k0.dtype)
      return invalid("key: list element ", i, " has dtype ", k.dtype,
                     ", element 0 has ", k0.dtype);
    if (Status s = checkFormat(k, "key"); !s)
      return s;
    if (Status s = checkFormat(v, "value"); !s)
      return s;
  }
  if (out.dtype != q.dtype && out.dtype != DataType::Int8)
    return invalid("attentionOut: dtype ", out.dtype,
                   " must equal query's dtype ", q.dtype, " or be INT8");
  if (Status s = checkFormat(q, "query"); !s)
    return s;
  if (Status s = checkFormat(out, "attentionOut"); !s)
    return s;
  const TensorView *opt[] = {
      a.pseShift,       a.attenMask,       a.quantScale2, a.quantOffset2,
      a.antiquantScale, a.antiquantOffset, a.blocktable,  a.kvPaddingSize};
  const char *optNames[] = {"pseShift",     "attenMask",      "quantScale2",
                            "quantOffset2", "antiquantScale", "antiquantOffset",
                            "blocktable",   "kvPaddingSize"};
  for (size_t i = 0; i < std::size(opt); ++i)
    if (present(opt[i]))
      if (Status s = checkFormat(*opt[i], optNames[i]); !s)
        return s;

  // Rule 2: layout.
  const std::string_view layout = a.inputLayout;
  if (layout == "BSH")
    g.layout = Layout::BSH;
  else if (layout == "BNSD")
    g.layout = Layout::BNSD;
  else if (layout == "BSND")
    g.layout = Layout::BSND;
  else
    return invalid("inputLayout: \"", layout,
                   "\" is not supported (expected \"BSH\", \"BNSD\" or "
                   "\"BSND\")");

  // Rule 3: heads.
  if (a.numHeads <= 0)
    return invalid("numHeads: must be > 0, got ", a.numHeads);
  if (a.numKeyValueHeads < 0)
    return invalid("numKeyValueHeads: must be >= 0, got ", a.numKeyValueHeads);
  g.n = a.numHeads;
  g.nkv = a.numKeyValueHeads == 0 ? g.n : a.numKeyValueHeads;
  if (g.nkv > g.n)
    return invalid("numKeyValueHeads: ", g.nkv, " must be <= numHeads (", g.n,
                   ")");
  if (g.n % g.nkv != 0)
    return invalid("numHeads: ", g.n,
                   " must be a multiple of numKeyValueHeads (", g.nkv, ")");
  g.g = g.n / g.nkv;
  if (g.g > 64)
    return invalid("numHeads / numKeyValueHeads: must be <= 64, got ", g.g);
  if (g.nkv > 256)
    return invalid("numKeyValueHeads: must be <= 256, got ", g.nkv);

  // Rule 4.
  if (a.innerPrecise != 0 && a.innerPrecise != 1)
    return invalid("innerPrecise: must be 0 or 1, got ", a.innerPrecise);

  // Rule 5: query and output shapes.
  const int64_t qRank = g.layout == Layout::BSH ? 3 : 4;
  if (q.rank() != qRank)
    return invalid("query: rank must be ", qRank, " for layout ", layout,
                   ", got ", shapeOf(q));
  if (q.isEmpty())
    return invalid("query: must not be empty, got ", shapeOf(q));
  g.b = q.dim(0);
  int64_t qs = 0, qn = 0;
  if (g.layout == Layout::BSH) {
    qs = q.dim(1);
    qn = g.n;
    if (q.dim(2) % g.n != 0)
      return invalid("query: H = ", q.dim(2),
                     " must be a multiple of numHeads (", g.n, ")");
    g.d = q.dim(2) / g.n;
  } else if (g.layout == Layout::BNSD) {
    qn = q.dim(1);
    qs = q.dim(2);
    g.d = q.dim(3);
  } else {
    qs = q.dim(1);
    qn = q.dim(2);
    g.d = q.dim(3);
  }
  if (qs != 1)
    return invalid("query: S must be 1, got ", shapeOf(q));
  if (qn != g.n)
    return invalid("query: N = ", qn, " must equal numHeads (", g.n, ")");
  if (g.d > 512)
    return invalid("query: D must be <= 512, got ", g.d);
  if (g.b > 65536)
    return invalid("query: B must be <= 65536, got ", g.b);
  if (out.shape != q.shape)
    return invalid("attentionOut: shape ", shapeOf(out),
                   " must equal query's shape ", shapeOf(q));

  // Mode of the KV tensors.
  g.paged = present(a.blocktable);
  g.kvDtype = k0.dtype;
  const int64_t listLen = a.key->size();
  if (g.paged) {
    g.mode = KvMode::Paged;
    if (listLen != 1)
      return invalid("key: page attention takes one cache tensor, got a list "
                     "of ",
                     listLen);
  } else if (listLen == 1 && k0.rank() > 0 && k0.dim(0) == g.b) {
    g.mode = KvMode::Contiguous;
  } else {
    g.mode = KvMode::List;
  }

  // Rule 6: KV shapes.
  auto kvShape = [&](const TensorView &t, const char *name, int64_t batch,
                     int64_t &sOut) -> Status {
    const int64_t rank = g.layout == Layout::BSH ? 3 : 4;
    if (t.rank() != rank)
      return invalid(name, ": rank must be ", rank, " for layout ", layout,
                     ", got ", shapeOf(t));
    if (t.dim(0) != batch)
      return invalid(name, ": batch dimension must be ", batch, ", got ",
                     shapeOf(t));
    int64_t nk = 0, dk = 0;
    if (g.layout == Layout::BSH) {
      sOut = t.dim(1);
      if (t.dim(2) != g.nkv * g.d)
        return invalid(name, ": H = ", t.dim(2),
                       " must equal numKeyValueHeads * D = ", g.nkv * g.d);
      nk = g.nkv;
      dk = g.d;
    } else if (g.layout == Layout::BNSD) {
      nk = t.dim(1);
      sOut = t.dim(2);
      dk = t.dim(3);
    } else {
      sOut = t.dim(1);
      nk = t.dim(2);
      dk = t.dim(3);
    }
    if (nk != g.nkv)
      return invalid(name, ": N = ", nk, " must equal numKeyValueHeads (",
                     g.nkv, "), got ", shapeOf(t));
    if (dk != g.d)
      return invalid(name, ": D = ", dk, " must equal query's D (", g.d,
                     "), got ", shapeOf(t));
    return Status::ok();
  };
  if (g.mode == KvMode::Contiguous) {
    int64_t s = 0;
    if (Status st = kvShape(k0, "key", g.b, s); !st)
      return st;
    if (a.value->at(0)->shape != k0.shape)
      return invalid("value: shape ", shapeOf(*a.value->at(0)),
                     " must equal key's shape ", shapeOf(k0));
    g.sMax = s;
    g.sOf.assign(static_cast<size_t>(g.b), s);
  } else if (g.mode == KvMode::List) {
    if (listLen != g.b)
      return invalid("key: a tensor list must hold one tensor per batch (", g.b,
                     "), got ", listLen);
    if (g.b > 256)
      return invalid("key: tensor lists allow B <= 256, got ", g.b);
    g.sOf.resize(static_cast<size_t>(g.b));
    for (int64_t i = 0; i < listLen; ++i) {
      const TensorView &k = *a.key->at(i), &v = *a.value->at(i);
      int64_t s = 0;
      if (Status st = kvShape(k, "key", 1, s); !st)
        return st;
      if (v.shape != k.shape)
        return invalid("value: list element ", i, " has shape ", shapeOf(v),
                       ", key's has ", shapeOf(k));
      g.sOf[static_cast<size_t>(i)] = s;
      g.sMax = std::max(g.sMax, s);
    }
  }

  // Rule 7: actualSeqLengths.
  const host::IntArray *asl = a.actualSeqLengths;
  const bool hasAsl = asl && asl->size() > 0;
  if (hasAsl && asl->size() > 1 && asl->size() < g.b)
    return invalid("actualSeqLengths: length must be 1 or >= B (", g.b,
                   "), got ", asl->size());
  g.len.assign(static_cast<size_t>(g.b), 0);
  for (int64_t i = 0; i < g.b; ++i) {
    int64_t l = 0;
    if (hasAsl) {
      l = asl->size() == 1 ? (*asl)[0] : (*asl)[i];
      if (l < 0)
        return invalid("actualSeqLengths: values must be >= 0, got ", l,
                       " for batch ", i);
      if (!g.paged && l > g.sOf[static_cast<size_t>(i)])
        return invalid("actualSeqLengths: value ", l, " for batch ", i,
                       " exceeds the KV sequence length ",
                       g.sOf[static_cast<size_t>(i)]);
    } else if (!g.paged) {
      l = g.sOf[static_cast<size_t>(i)];
    }
    g.len[static_cast<size_t>(i)] = l;
  }
  const int64_t maxLen =
      g.b ? *std::max_element(g.len.begin(), g.len.end()) : 0;

  // Rule 13: page attention (before pse/mask: their widths depend on it).
  if (g.paged) {
    const TensorView &bt = *a.blocktable;
    if (bt.dtype != DataType::Int32)
      return invalid("blocktable: dtype must be INT32, got ", bt.dtype);
    if (bt.rank() != 2 || bt.dim(0) != g.b)
      return invalid("blocktable: shape must be (B = ", g.b,
                     ", maxBlocksPerSeq), got ", shapeOf(bt));
    const int64_t bs = a.blockSize;
    if (bs <= 0 || bs > 512)
      return invalid("blockSize: must be in (0, 512] with page attention, got ",
                     bs);
    const int64_t align = g.kvDtype == DataType::Int8 ? 32 : 16;
    if (bs % align != 0)
      return invalid("blockSize: must be a multiple of ", align, " for ",
                     g.kvDtype, " KV, got ", bs);
    if (!hasAsl)
      return invalid("actualSeqLengths: required with page attention");
    g.blockSize = bs;
    if (__builtin_mul_overflow(bt.dim(1), bs, &g.sMax))
      return invalid("blocktable: capacity dim 1 (", bt.dim(1),
                     ") * blockSize (", bs, ") overflows int64");
    if (maxLen > g.sMax)
      return invalid("actualSeqLengths: max value ", maxLen,
                     " exceeds the block table capacity ", g.sMax,
                     " (blocktable.dim1 * blockSize)");
    const TensorView &kc = k0, &vc = *a.value->at(0);
    if (kc.rank() == 3) {
      if (kc.dim(1) != bs || kc.dim(2) != g.nkv * g.d)
        return invalid("key: 3-D cache must be (blocks, blockSize = ", bs,
                       ", numKeyValueHeads * D = ", g.nkv * g.d, "), got ",
                       shapeOf(kc));
      if (g.nkv * g.d > 65535)
        return invalid("key: numKeyValueHeads * D must be <= 65535 for a 3-D "
                       "cache, got ",
                       g.nkv * g.d);
    } else if (kc.rank() == 4) {
      if (g.layout != Layout::BNSD)
        return invalid("key: a 4-D cache needs inputLayout \"BNSD\", got \"",
                       layout, "\"");
      if (kc.dim(1) != g.nkv || kc.dim(2) != bs || kc.dim(3) != g.d)
        return invalid(
            "key: 4-D cache must be (blocks, numKeyValueHeads = ", g.nkv,
            ", blockSize = ", bs, ", D = ", g.d, "), got ", shapeOf(kc));
    } else {
      return invalid("key: page attention cache rank must be 3 or 4, got ",
                     shapeOf(kc));
    }
    if (vc.shape != kc.shape)
      return invalid("value: shape ", shapeOf(vc), " must equal key's shape ",
                     shapeOf(kc));
    g.numBlocks = kc.dim(0);
    int64_t need = 0;
    // Each term is at most dim 1 of the table, so the sum is at most its
    // element count; (l + bs - 1) / bs would wrap for l near INT64_MAX.
    for (int64_t l : g.len)
      need += l / bs + (l % bs != 0);
    if (g.numBlocks < need)
      return invalid("key: the cache holds ", g.numBlocks,
                     " blocks, actualSeqLengths need ", need);
    g.cache4d = kc.rank() == 4;
  }

  // Windows (4.1).
  g.start.assign(static_cast<size_t>(g.b), 0);
  const bool padding = present(a.kvPaddingSize) &&
                       g.mode == KvMode::Contiguous && hasAsl && !g.paged;
  int64_t pad = 0;
  if (padding) {
    if (a.kvPaddingSize->dtype != DataType::Int64)
      return invalid("kvPaddingSize: dtype must be INT64, got ",
                     a.kvPaddingSize->dtype);
    g.padding = true;
  }
  (void)pad;

  // Rule 8: pse.
  const int64_t wantWidth = g.sMax;
  if (present(a.pseShift)) {
    const TensorView &p = *a.pseShift;
    if (p.dtype != q.dtype)
      return invalid("pseShift: dtype ", p.dtype, " must equal query's dtype ",
                     q.dtype);
    if (p.rank() != 4)
      return invalid("pseShift: rank must be 4, got ", shapeOf(p));
    if (p.dim(0) != 1 && p.dim(0) != g.b)
      return invalid("pseShift: dim 0 must be 1 or B (", g.b, "), got ",
                     shapeOf(p));
    if (p.dim(1) != g.n)
      return invalid("pseShift: dim 1 must equal numHeads (", g.n, "), got ",
                     shapeOf(p));
    if (p.dim(2) != 1)
      return invalid("pseShift: dim 2 must be 1, got ", shapeOf(p));
    if (p.dim(3) < wantWidth)
      return invalid("pseShift: last dim must be >= ", wantWidth,
                     " (the KV sequence length), got ", shapeOf(p));
    g.pse = true;
  }

  // Rule 9: mask.
  if (present(a.attenMask)) {
    const TensorView &m = *a.attenMask;
    if (m.dtype != DataType::Bool && m.dtype != DataType::Int8 &&
        m.dtype != DataType::UInt8)
      return invalid("attenMask: dtype ", m.dtype,
                     " is not supported (expected BOOL, INT8 or UINT8)");
    const bool shapeOk = (m.rank() == 2) || (m.rank() == 3 && m.dim(1) == 1) ||
                         (m.rank() == 4 && m.dim(1) == 1 && m.dim(2) == 1);
    if (!shapeOk)
      return invalid("attenMask: shape must be (B, S), (B, 1, S) or (B, 1, 1, "
                     "S), got ",
                     shapeOf(m));
    if (m.dim(0) != g.b)
      return invalid("attenMask: dim 0 must equal B (", g.b, "), got ",
                     shapeOf(m));
    const int64_t need = g.paged ? g.sMax : (g.padding ? g.sMax : maxLen);
    if (m.dim(-1) < need)
      return invalid("attenMask: last dim must be >= ", need, ", got ",
                     shapeOf(m));
    g.mask = true;
  }

  // Rule 10: antiquant.
  const bool kvInt8 = g.kvDtype == DataType::Int8;
  if (kvInt8 && !present(a.antiquantScale))
    return invalid("antiquantScale: required with INT8 key/value");
  if (!kvInt8 && present(a.antiquantScale))
    return invalid("antiquantScale: only allowed with INT8 key/value");
  if (!kvInt8 && present(a.antiquantOffset))
    return invalid("antiquantOffset: only allowed with INT8 key/value");
  if (kvInt8) {
    const TensorView &s = *a.antiquantScale;
    if (s.dtype != q.dtype)
      return invalid("antiquantScale: dtype ", s.dtype,
                     " must equal query's dtype ", q.dtype);
    if (!antiquantShapeOk(s, g.nkv, g.d))
      return invalid("antiquantScale: shape must be (2), (2, Nkv, 1, D), (2, "
                     "1, Nkv, D), (2, Nkv, D) or (2, Nkv * D), got ",
                     shapeOf(s));
    if (present(a.antiquantOffset)) {
      const TensorView &o = *a.antiquantOffset;
      if (o.dtype != s.dtype)
        return invalid("antiquantOffset: dtype ", o.dtype,
                       " must equal antiquantScale's dtype ", s.dtype);
      if (o.shape != s.shape)
        return invalid("antiquantOffset: shape ", shapeOf(o),
                       " must equal antiquantScale's shape ", shapeOf(s));
    }
    g.quantKv = true;
  } else if (present(a.antiquantOffset)) {
    return invalid("antiquantOffset: only allowed with INT8 key/value");
  }

  // Rule 11: post-quant.
  const bool outInt8 = out.dtype == DataType::Int8;
  if (outInt8 && !present(a.quantScale2))
    return invalid("quantScale2: required with INT8 attentionOut");
  if (!outInt8 && present(a.quantScale2))
    return invalid("quantScale2: only allowed with INT8 attentionOut");
  if (!outInt8 && present(a.quantOffset2))
    return invalid("quantOffset2: only allowed with INT8 attentionOut");
  if (outInt8) {
    const TensorView &s = *a.quantScale2;
    if (s.dtype != DataType::Float &&
        !(s.dtype == DataType::BFloat16 && q.dtype == DataType::BFloat16))
      return invalid("quantScale2: dtype ", s.dtype,
                     " is not supported (FLOAT, or BFLOAT16 with a BFLOAT16 "
                     "query)");
    if (!quantShapeOk(s, g.n, g.d))
      return invalid("quantScale2: shape ", shapeOf(s),
                     " is neither one element nor a per-channel shape of N * "
                     "D = ",
                     g.n * g.d, " elements");
    if (present(a.quantOffset2)) {
      const TensorView &o = *a.quantOffset2;
      if (o.dtype != s.dtype)
        return invalid("quantOffset2: dtype ", o.dtype,
                       " must equal quantScale2's dtype ", s.dtype);
      if (o.shape != s.shape)
        return invalid("quantOffset2: shape ", shapeOf(o),
                       " must equal quantScale2's shape ", shapeOf(s));
    }
    g.quantOut = true;
  }

  // Rule 12.
  if (present(a.dequantScale1))
    return invalid("dequantScale1: not supported (must be absent)");
  if (present(a.quantScale1))
    return invalid("quantScale1: not supported (must be absent)");
  if (present(a.dequantScale2))
    return invalid("dequantScale2: not supported (must be absent)");
  return Status::ok();
}

} // namespace ifa
} // namespace tilejit::ops
