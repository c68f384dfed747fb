//===- IncreFlashAttentionV4Test.cpp - IncreFlashAttentionV4 against the spec
//-===//
//
// The operator (C++ API, and the C API for the document example) against the
// float64 reference of ../shared/spec/incre_flash_attention_v4.md section 4
// with section 7's per-dtype tolerances, over layouts, paged/non-paged
// caches, GQA ratios, masks, pse, padding, INT8 KV and INT8 output; the
// validation rules of section 8 (code, message, output untouched); and a
// decode loop with growing lengths that compiles once.
//
//===----------------------------------------------------------------------===//
#include "acl/acl.h"
#include "aclnnop/aclnn_incre_flash_attention_v4.h"
#include "jit/Compiler.h"
#include "jit/Options.h"
#include "ops/aclnn/AclObjects.h"
#include "ops/incre_flash_attention/IncreFlashAttentionTwin.h"
#include "ops/host/DataType.h"

#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <numeric>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

using namespace tilejit;
using host::DataType;
using host::TensorView;

namespace {

/// An owned host tensor and its (contiguous) view.
struct Buf {
  DataType dtype = DataType::Float16;
  std::vector<int64_t> shape;
  std::vector<unsigned char> bytes;
  TensorView v;

  Buf() = default;
  Buf(DataType t, std::vector<int64_t> s) : dtype(t), shape(std::move(s)) {
    bytes.assign(static_cast<size_t>(host::shapeNumel(shape) *
                                     host::elementSize(t)),
                 0);
    refresh();
  }
  void refresh() { v = host::contiguousView(bytes.data(), dtype, shape); }
  int64_t numel() const { return host::shapeNumel(shape); }
  void set(int64_t i, double x) {
    unsigned char *p = bytes.data() + i * host::elementSize(dtype);
    switch (dtype) {
    case DataType::Float16: {
      uint16_t h = host::floatToHalfBits(static_cast<float>(x));
      std::memcpy(p, &h, 2);
      break;
    }
    case DataType::BFloat16: {
      uint16_t h = host::floatToBFloat16Bits(static_cast<float>(x));
      std::memcpy(p, &h, 2);
      break;
    }
    case DataType::Float: {
      float f = static_cast<float>(x);
      std::memcpy(p, &f, 4);
      break;
    }
    case DataType::Int32: {
      int32_t f = static_cast<int32_t>(x);
      std::memcpy(p, &f, 4);
      break;
    }
    case DataType::Int64: {
      int64_t f = static_cast<int64_t>(x);
      std::memcpy(p, &f, 8);
      break;
    }
    default:
      *p = static_cast<unsigned char>(static_cast<int>(x));
    }
  }
  double get(int64_t i) const {
    const unsigned char *p = bytes.data() + i * host::elementSize(dtype);
    uint16_t h;
    switch (dtype) {
    case DataType::Float16:
      std::memcpy(&h, p, 2);
      return host::halfBitsToFloat(h);
    case DataType::BFloat16:
      std::memcpy(&h, p, 2);
      return host::bfloat16BitsToFloat(h);
    case DataType::Int8:
      return static_cast<int8_t>(*p);
    default:
      return *p;
    }
  }
  double get32(int64_t i) const {
    int32_t x;
    std::memcpy(&x, bytes.data() + i * 4, 4);
    return x;
  }
  void random(std::mt19937 &rng, double lo, double hi) {
    std::uniform_real_distribution<double> u(lo, hi);
    for (int64_t i = 0; i < numel(); ++i)
      set(i, dtype == DataType::Int8 ? std::round(u(rng)) : u(rng));
  }
};

host::TensorList listOf(std::vector<const Buf *> bufs) {
  host::TensorList l;
  for (const Buf *b : bufs)
    l.entries.emplace_back(b->v);
  return l;
}

/// One test case: shapes and the optional features.
struct Case {
  std::string layout = "BNSD";
  int64_t b = 2, n = 4, nkv = 1, d = 64, s = 100;
  DataType dtype = DataType::Float16;
  std::vector<int64_t> asl; // empty: absent
  int64_t blockSize = 0;    // > 0: page attention
  bool cache4d = false;
  bool mask = false;
  DataType maskType = DataType::Bool;
  int maskRank = 4;
  bool pse = false, pseBroadcast = false;
  std::optional<int64_t> pad; // kvPaddingSize[0] (absent: no tensor)
  bool nkvZero = false;        // numKeyValueHeads passed as 0 (means N)
  int aq = 0;       // 0: f16/bf16 KV; 1: INT8 per-tensor; 2: per-channel
  bool aqOffset = true;
  int oq = 0; // 0: out == query; 1: INT8 per-tensor; 2: per-channel
  DataType oqType = DataType::Float;
  bool list = false;          // key/value as one tensor per batch
  std::vector<int64_t> listS; // S_b for lists
  double scale = 0.125;
  unsigned seed = 1;
};

/// All tensors of a case.
struct Inputs {
  Buf q, out, ref, pse, mask, bt, pad, aqs, aqo, qs, qo;
  std::vector<Buf> k, v;
  host::TensorList kl, vl;
  host::IntArray asl;
  aclnn::IncreFlashAttentionV4Args args;
};

void build(const Case &c, Inputs &in) {
  std::mt19937 rng(c.seed);
  std::vector<int64_t> qshape =
      c.layout == "BSH"    ? std::vector<int64_t>{c.b, 1, c.n * c.d}
      : c.layout == "BNSD" ? std::vector<int64_t>{c.b, c.n, 1, c.d}
                           : std::vector<int64_t>{c.b, 1, c.n, c.d};
  in.q = Buf(c.dtype, qshape);
  in.q.random(rng, -1, 1);
  const DataType od = c.oq ? DataType::Int8 : c.dtype;
  in.out = Buf(od, qshape);
  for (auto &x : in.out.bytes)
    x = 0x5a;
  in.out.refresh();
  in.ref = in.out;
  in.ref.refresh();
  const DataType kd = c.aq ? DataType::Int8 : c.dtype;
  auto kvShape = [&](int64_t bb, int64_t s) {
    if (c.layout == "BSH")
      return std::vector<int64_t>{bb, s, c.nkv * c.d};
    if (c.layout == "BNSD")
      return std::vector<int64_t>{bb, c.nkv, s, c.d};
    return std::vector<int64_t>{bb, s, c.nkv, c.d};
  };
  const double lo = c.aq ? -127 : -1, hi = c.aq ? 127 : 1;
  int64_t capacity = c.s;
  if (c.blockSize > 0) {
    const int64_t bs = c.blockSize;
    const int64_t per = (c.s + bs - 1) / bs;
    capacity = per * bs;
    int64_t used = 0;
    for (int64_t l :
         c.asl.size() == 1 ? std::vector<int64_t>(c.b, c.asl[0]) : c.asl)
      used += (l + bs - 1) / bs;
    const int64_t nb = used + 3;
    std::vector<int64_t> cs = c.cache4d
                                  ? std::vector<int64_t>{nb, c.nkv, bs, c.d}
                                  : std::vector<int64_t>{nb, bs, c.nkv * c.d};
    in.k.emplace_back(kd, cs);
    in.v.emplace_back(kd, cs);
    in.bt = Buf(DataType::Int32, {c.b, per});
    std::vector<int64_t> ids(static_cast<size_t>(nb));
    std::iota(ids.begin(), ids.end(), 0);
    std::shuffle(ids.begin(), ids.end(), rng);
    size_t next = 0;
    for (int64_t i = 0; i < c.b; ++i) {
      const int64_t l = c.asl.size() == 1 ? c.asl[0] : c.asl[i];
      for (int64_t j = 0; j < per; ++j)
        in.bt.set(i * per + j, j < (l + bs - 1) / bs
                                   ? static_cast<double>(ids[next++])
                                   : -1);
    }
    if (c.b > 1 && c.asl[0] > 0 && c.asl[1] > 0) // a block shared by two rows
      in.bt.set(per, in.bt.get32(0));
    in.bt.refresh();
  } else if (c.list) {
    for (int64_t i = 0; i < c.b; ++i) {
      in.k.emplace_back(kd, kvShape(1, c.listS[static_cast<size_t>(i)]));
      in.v.emplace_back(kd, kvShape(1, c.listS[static_cast<size_t>(i)]));
    }
    capacity = *std::max_element(c.listS.begin(), c.listS.end());
  } else {
    in.k.emplace_back(kd, kvShape(c.b, c.s));
    in.v.emplace_back(kd, kvShape(c.b, c.s));
  }
  for (auto &t : in.k) {
    t.random(rng, lo, hi);
    t.refresh();
  }
  for (auto &t : in.v) {
    t.random(rng, lo, hi);
    t.refresh();
  }
  std::vector<const Buf *> kp, vp;
  for (auto &t : in.k)
    kp.push_back(&t);
  for (auto &t : in.v)
    vp.push_back(&t);
  in.kl = listOf(kp);
  in.vl = listOf(vp);
  auto &a = in.args;
  a.query = &in.q.v;
  a.key = &in.kl;
  a.value = &in.vl;
  a.attentionOut = &in.out.v;
  a.numHeads = c.n;
  a.numKeyValueHeads = c.nkvZero ? 0 : c.nkv;
  a.scaleValue = c.scale;
  a.inputLayout = c.layout.c_str();
  a.innerPrecise = 1;
  if (!c.asl.empty()) {
    in.asl.values = c.asl;
    a.actualSeqLengths = &in.asl;
  }
  if (c.blockSize > 0) {
    a.blocktable = &in.bt.v;
    a.blockSize = c.blockSize;
  }
  if (c.mask) {
    const int64_t sm = capacity + 3;
    std::vector<int64_t> ms = c.maskRank == 2 ? std::vector<int64_t>{c.b, sm}
                              : c.maskRank == 3
                                  ? std::vector<int64_t>{c.b, 1, sm}
                                  : std::vector<int64_t>{c.b, 1, 1, sm};
    in.mask = Buf(c.maskType, ms);
    for (int64_t i = 0; i < in.mask.numel(); ++i)
      in.mask.set(i,
                  rng() % 4 == 0 ? (c.maskType == DataType::UInt8 ? 2 : 1) : 0);
    in.mask.refresh();
    a.attenMask = &in.mask.v;
  }
  if (c.pse) {
    in.pse = Buf(c.dtype, {c.pseBroadcast ? 1 : c.b, c.n, 1, capacity + 5});
    in.pse.random(rng, -2, 2);
    in.pse.refresh();
    a.pseShift = &in.pse.v;
  }
  if (c.pad) {
    in.pad = Buf(DataType::Int64, {1});
    in.pad.set(0, static_cast<double>(*c.pad));
    in.pad.refresh();
    a.kvPaddingSize = &in.pad.v;
  }
  if (c.aq) {
    std::vector<int64_t> as = c.aq == 1 ? std::vector<int64_t>{2}
                                        : std::vector<int64_t>{2, c.nkv, c.d};
    in.aqs = Buf(c.dtype, as);
    std::uniform_real_distribution<double> u(0.002, 0.02);
    for (int64_t i = 0; i < in.aqs.numel(); ++i)
      in.aqs.set(i, u(rng) * (i >= in.aqs.numel() / 2 ? 2 : 1));
    in.aqs.refresh();
    a.antiquantScale = &in.aqs.v;
    if (c.aqOffset) {
      in.aqo = Buf(c.dtype, as);
      in.aqo.random(rng, -20, 20);
      in.aqo.refresh();
      a.antiquantOffset = &in.aqo.v;
    }
  }
  if (c.oq) {
    std::vector<int64_t> qsShape =
        c.oq == 1 ? std::vector<int64_t>{1} : std::vector<int64_t>{c.n, c.d};
    in.qs = Buf(c.oqType, qsShape);
    in.qs.random(rng, 20, 200);
    in.qs.refresh();
    in.qo = Buf(c.oqType, qsShape);
    in.qo.random(rng, -10, 10);
    in.qo.refresh();
    a.quantScale2 = &in.qs.v;
    a.quantOffset2 = &in.qo.v;
  }
}

/// Section 4.1's window of batch b as the inputs give it: {start, L}, or
/// L = 0 for the zero output.
std::pair<int64_t, int64_t> window(const Case &c, const Inputs &in, int64_t b) {
  const std::vector<int64_t> &asl = in.asl.values;
  const bool aslGiven = in.args.actualSeqLengths && !asl.empty();
  const int64_t sb = c.list ? c.listS[static_cast<size_t>(b)] : c.s;
  const int64_t l = !aslGiven ? sb : asl.size() == 1 ? asl[0] : asl[static_cast<size_t>(b)];
  int64_t start = 0;
  if (in.args.kvPaddingSize && c.blockSize == 0 && !c.list && aslGiven) {
    start = c.s - std::max<int64_t>(*c.pad, 0) - l;
    if (start < 0)
      return {0, 0};
  }
  return {start, l};
}

/// deqV of value (b, KV head k, absolute position p, channel d) as stored
/// (section 3.2's addressing, section 4.2's dequantisation).
double deqV(const Case &c, const Inputs &in, int64_t b, int64_t k, int64_t p, int64_t d) {
  const Buf *v = &in.v[0];
  int64_t at;
  if (c.blockSize > 0) {
    const int64_t bs = c.blockSize, per = (c.s + bs - 1) / bs;
    const int64_t blk = static_cast<int64_t>(in.bt.get32(b * per + p / bs));
    at = c.cache4d ? ((blk * c.nkv + k) * bs + p % bs) * c.d + d
                   : (blk * bs + p % bs) * c.nkv * c.d + k * c.d + d;
  } else {
    int64_t bb = b, s = c.s;
    if (c.list) {
      v = &in.v[static_cast<size_t>(b)];
      bb = 0;
      s = c.listS[static_cast<size_t>(b)];
    }
    at = c.layout == "BNSD" ? ((bb * c.nkv + k) * s + p) * c.d + d
                            : ((bb * s + p) * c.nkv + k) * c.d + d;
  }
  const double x = v->get(at);
  if (!c.aq)
    return x;
  const int64_t ch = c.aq == 1 ? 1 : c.nkv * c.d + k * c.d + d; // row 1: value
  const double off = c.aqOffset ? in.aqo.get(ch) : 0.0;
  return (x + off) * in.aqs.get(ch);
}

/// Section 7's A(b, n) for every KV head: max |deqV| over batch b's window
/// (1 where the window is empty); [b * Nkv + k].
std::vector<double> windowMaxAbsV(const Case &c, const Inputs &in) {
  std::vector<double> a(static_cast<size_t>(c.b * c.nkv), 1.0);
  for (int64_t b = 0; b < c.b; ++b) {
    const auto [start, l] = window(c, in, b);
    if (l == 0)
      continue;
    for (int64_t k = 0; k < c.nkv; ++k) {
      double m = 0;
      for (int64_t p = start; p < start + l; ++p)
        for (int64_t d = 0; d < c.d; ++d)
          m = std::max(m, std::abs(deqV(c, in, b, k, p, d)));
      a[static_cast<size_t>(b * c.nkv + k)] = m;
    }
  }
  return a;
}

/// Compares the operator's output with the reference's by section 7: FP16
/// |o - r| <= 1e-3 |r| + 2e-3 A(b, n), BF16 8e-3 |r| + 8e-3 A(b, n), INT8
/// within 1, and a zero output (empty window) exact.
void expectWithinSection7(const Case &c, const Inputs &in) {
  const bool bf = c.dtype == DataType::BFloat16;
  const double rtol = bf ? 8e-3 : 1e-3, atol = bf ? 8e-3 : 2e-3;
  const std::vector<double> a = windowMaxAbsV(c, in);
  const int64_t g = c.n / c.nkv;
  int bad = 0;
  for (int64_t i = 0; i < in.out.numel() && bad < 5; ++i) {
    const int64_t b = i / (c.n * c.d), n = i / c.d % c.n;
    const bool zero = window(c, in, b).second == 0;
    const double o = in.out.get(i), r = in.ref.get(i);
    const double tol = zero ? 0.0
                       : c.oq ? 1.0
                              : rtol * std::abs(r) + atol * a[static_cast<size_t>(b * c.nkv + n / g)];
    if (!(std::abs(o - r) <= tol)) {
      ++bad;
      ADD_FAILURE() << "element " << i << " (b " << b << ", n " << n << "): got " << o
                    << ", reference " << r << ", bound " << tol
                    << (zero ? " (zero output)" : "");
    }
  }
}

/// Runs the operator and the reference; compares with section 7's bounds.
void check(const Case &c) {
  Inputs in;
  build(c, in);
  host::Status st = ops::increFlashAttentionV4(in.args);
  ASSERT_TRUE(st.isOk()) << st.code() << ": " << st.message();
  aclnn::IncreFlashAttentionV4Args ra = in.args;
  ra.attentionOut = &in.ref.v;
  ra.numKeyValueHeads = c.nkv; // the reference is told N_kv explicitly
  ops::increFlashAttentionV4Reference(ra);
  expectWithinSection7(c, in);
}

} // namespace

TEST(IncreFlashAttentionV4, DocumentExample) {
  // Section 11.1: all-ones, scale 1/4, zero INT8 mask: every output is 1.
  Case c;
  c.b = 1;
  c.n = c.nkv = 2;
  c.d = 16;
  c.s = 16;
  c.mask = true;
  c.maskType = DataType::Int8;
  Inputs in;
  build(c, in);
  for (auto *t : {&in.q, &in.k[0], &in.v[0]})
    for (int64_t i = 0; i < t->numel(); ++i)
      t->set(i, 1.0);
  for (int64_t i = 0; i < in.mask.numel(); ++i)
    in.mask.set(i, 0);
  in.args.scaleValue = 0.25;
  ASSERT_TRUE(ops::increFlashAttentionV4(in.args).isOk());
  for (int64_t i = 0; i < in.out.numel(); ++i)
    EXPECT_EQ(in.out.get(i), 1.0) << i;
}

TEST(IncreFlashAttentionV4, LayoutsAndGqa) {
  // G = 2, 4 and 8 fill the lanes with a pass's score accumulators (their
  // sums stay in registers); 1 and 64 go through the buffer.
  for (const char *layout : {"BSH", "BNSD", "BSND"})
    for (int64_t g : {1, 2, 4, 8, 64})
      for (DataType dt : {DataType::Float16, DataType::BFloat16}) {
        Case c;
        c.layout = layout;
        c.nkv = g == 64 ? 1 : 2;
        c.n = c.nkv * g;
        c.d = g == 64 ? 32 : 64;
        c.dtype = dt;
        c.s = 77;
        c.seed = static_cast<unsigned>(g);
        SCOPED_TRACE(std::string(layout) + " G=" + std::to_string(g));
        check(c);
      }
}

TEST(IncreFlashAttentionV4, HeadDims) {
  // Section 11.3: FP16 and BF16, D up to 512.
  for (DataType dt : {DataType::Float16, DataType::BFloat16})
    for (int64_t d : {16, 64, 128, 256, 512}) {
      Case c;
      c.d = d;
      c.n = 2;
      c.nkv = 1;
      c.s = 70;
      c.dtype = dt;
      SCOPED_TRACE(std::to_string(d) + (dt == DataType::BFloat16 ? " bf16" : " f16"));
      check(c);
    }
}

TEST(IncreFlashAttentionV4, SequenceLengthsAndRandomScales) {
  // Section 11.3: S in {1, 17, 1000, 8192}, scales drawn at random.
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> scale(0.01, 2.0);
  for (DataType dt : {DataType::Float16, DataType::BFloat16})
    for (int64_t s : {1, 17, 1000, 8192}) {
      Case c;
      c.b = 2;
      c.n = 4;
      c.nkv = 2;
      c.d = 128;
      c.s = s;
      c.dtype = dt;
      c.scale = scale(rng);
      c.seed = static_cast<unsigned>(s);
      SCOPED_TRACE("S=" + std::to_string(s) + " scale=" + std::to_string(c.scale) +
                   (dt == DataType::BFloat16 ? " bf16" : " f16"));
      check(c);
    }
}

TEST(IncreFlashAttentionV4, ActualSeqLengths) {
  Case c;
  c.b = 3;
  c.asl = {0, 100, 37, 5}; // longer than B, zero row, full row
  check(c);
  c.asl = {41};
  check(c);
  c.layout = "BSH";
  c.asl = {1, 0, 99};
  check(c);
}

TEST(IncreFlashAttentionV4, LongSequenceSplit) {
  // Batch 1: the window is split over programs and merged.
  for (DataType dt : {DataType::Float16, DataType::BFloat16}) {
    Case c;
    c.b = 1;
    c.n = 8;
    c.nkv = 2;
    c.d = 64;
    c.s = 9000;
    c.asl = {8999};
    c.dtype = dt;
    c.mask = true;
    check(c);
  }
}

TEST(IncreFlashAttentionV4, Masks) {
  for (DataType mt : {DataType::Bool, DataType::Int8, DataType::UInt8})
    for (int rank : {2, 3, 4}) {
      Case c;
      c.mask = true;
      c.maskType = mt;
      c.maskRank = rank;
      c.asl = {60, 33};
      check(c);
    }
}

TEST(IncreFlashAttentionV4, FullyMaskedRowIsMeanOfV) {
  Case c;
  c.mask = true;
  c.b = 1;
  Inputs in;
  build(c, in);
  for (int64_t i = 0; i < in.mask.numel(); ++i)
    in.mask.set(i, 1);
  ASSERT_TRUE(ops::increFlashAttentionV4(in.args).isOk());
  aclnn::IncreFlashAttentionV4Args ra = in.args;
  ra.attentionOut = &in.ref.v;
  ops::increFlashAttentionV4Reference(ra);
  for (int64_t i = 0; i < in.out.numel(); ++i)
    EXPECT_NEAR(in.out.get(i), in.ref.get(i), 2e-3) << i;
}

TEST(IncreFlashAttentionV4, Pse) {
  for (bool bc : {false, true}) {
    Case c;
    c.pse = true;
    c.pseBroadcast = bc;
    c.scale = 0.5;
    c.mask = true;
    check(c);
    c.layout = "BSH";
    c.dtype = DataType::BFloat16;
    check(c);
  }
}

TEST(IncreFlashAttentionV4, LeftPadding) {
  Case c;
  c.b = 2;
  c.s = 64;
  c.asl = {10, 20};
  c.pad = 5;
  c.mask = true;
  c.pse = true;
  check(c);
  c.pad = 60; // start < 0: zero output
  check(c);
  c.layout = "BSND";
  c.pad = 0;
  check(c);
}

// Section 11.10: the largest block, 512 rows (FP16 and BF16), on both cache
// forms, with lengths that end inside a block; and INT8 KV with 128-row
// blocks (32 is in Int8Kv).
TEST(IncreFlashAttentionV4, PagedAttentionLargestBlocks) {
  for (bool c4 : {false, true})
    for (DataType dt : {DataType::Float16, DataType::BFloat16}) {
      Case c;
      c.b = 3;
      c.n = 4;
      c.nkv = 2;
      c.cache4d = c4;
      c.layout = c4 ? "BNSD" : "BSH";
      c.blockSize = 512;
      c.s = 1100;
      c.asl = {1100, 0, 513};
      c.dtype = dt;
      c.mask = c4;
      SCOPED_TRACE(std::string(c4 ? "4-D" : "3-D") + (dt == DataType::BFloat16 ? " bf16" : " f16"));
      check(c);
    }
  for (int aq : {1, 2}) {
    Case c;
    c.b = 2;
    c.n = 4;
    c.nkv = 2;
    c.blockSize = 128;
    c.s = 300;
    c.asl = {300, 129};
    c.aq = aq;
    c.layout = "BSH";
    SCOPED_TRACE("INT8 KV, antiquant " + std::to_string(aq));
    check(c);
  }
}

// Section 6.4: a negative kvPaddingSize acts as 0 (section 11.9: -3): the
// same window, the same result bit for bit, and the reference's.
TEST(IncreFlashAttentionV4, NegativePaddingActsAsZero) {
  for (const char *layout : {"BNSD", "BSH"}) {
    Case c;
    c.b = 2;
    c.s = 64;
    c.asl = {10, 20};
    c.mask = true;
    c.pse = true;
    c.layout = layout;
    SCOPED_TRACE(layout);
    c.pad = -3;
    check(c);
    Inputs neg, zero;
    build(c, neg);
    c.pad = 0;
    build(c, zero);
    ASSERT_TRUE(ops::increFlashAttentionV4(neg.args).isOk());
    ASSERT_TRUE(ops::increFlashAttentionV4(zero.args).isOk());
    EXPECT_EQ(neg.out.bytes, zero.out.bytes);
  }
}

// Sections 1 and 11.4: numKeyValueHeads = 0 is a valid call meaning N
// (MHA); the reference is told N_kv = N explicitly.
TEST(IncreFlashAttentionV4, ZeroKeyValueHeadsMeansNumHeads) {
  for (const char *layout : {"BSH", "BNSD", "BSND"})
    for (int64_t bs : {0, 32}) {
      Case c;
      c.layout = layout;
      c.n = c.nkv = 4;
      c.s = 90;
      c.nkvZero = true;
      if (bs) {
        c.blockSize = bs;
        c.asl = {90, 41};
      }
      SCOPED_TRACE(std::string(layout) + (bs ? " paged" : ""));
      check(c);
    }
}

TEST(IncreFlashAttentionV4, PagedAttention) {
  for (bool c4 : {false, true})
    for (int64_t bs : {16, 48, 128})
      for (DataType dt : {DataType::Float16, DataType::BFloat16}) {
        Case c;
        c.b = 3;
        c.n = 8;
        c.nkv = 2;
        c.cache4d = c4;
        c.layout = c4 ? "BNSD" : "BSH";
        c.blockSize = bs;
        c.s = 300;
        c.asl = {300, 0, 131};
        c.dtype = dt;
        c.mask = bs == 48;
        c.pse = bs == 48;
        SCOPED_TRACE(std::to_string(bs) + (c4 ? " 4-D" : " 3-D"));
        check(c);
      }
}

// A window's last step is usually partial: its rows past the window (the
// rest of a paged block, or of a contiguous cache) are read but must not
// count. Here they hold NaN, in keys and values, on every layout: a NaN
// value times a zero weight would poison the output.
TEST(IncreFlashAttentionV4, NanRowsPastTheWindowAreIgnored) {
  for (int kind = 0; kind < 4; ++kind) // paged 3-D, paged 4-D, BSH, BNSD
    for (DataType dt : {DataType::Float16, DataType::BFloat16}) {
      Case c;
      c.b = 3;
      c.n = 8;
      c.nkv = 2;
      c.s = 300;
      c.dtype = dt;
      c.asl = {131, 0, 77};
      c.blockSize = kind < 2 ? 128 : 0;
      c.cache4d = kind == 1;
      c.layout = kind == 0 || kind == 2 ? "BSH" : "BNSD";
      SCOPED_TRACE("kind " + std::to_string(kind) + (dt == DataType::BFloat16 ? " bf16" : " f16"));
      Inputs in;
      build(c, in);
      const int64_t hd = c.nkv * c.d;
      for (int64_t i = 0; i < c.b; ++i) {
        const int64_t l = c.asl[static_cast<size_t>(i)];
        const int64_t end = c.blockSize ? (l + 127) / 128 * 128 : c.s;
        for (int64_t j = l; j < end; ++j)
          for (int64_t e = 0; e < hd; ++e) {
            const int64_t h = e / c.d, x = e % c.d;
            int64_t at;
            if (kind == 0 || kind == 1) {
              const int64_t blk = in.bt.get32(i * ((c.s + 127) / 128) + j / 128);
              at = kind == 0 ? (blk * 128 + j % 128) * hd + e
                             : ((blk * c.nkv + h) * 128 + j % 128) * c.d + x;
            } else {
              at = kind == 2 ? (i * c.s + j) * hd + e : ((i * c.nkv + h) * c.s + j) * c.d + x;
            }
            in.k[0].set(at, std::nan(""));
            in.v[0].set(at, std::nan(""));
          }
      }
      host::Status st = ops::increFlashAttentionV4(in.args);
      ASSERT_TRUE(st.isOk()) << st.message();
      aclnn::IncreFlashAttentionV4Args ra = in.args;
      ra.attentionOut = &in.ref.v;
      ops::increFlashAttentionV4Reference(ra);
      const bool bf = dt == DataType::BFloat16;
      for (int64_t i = 0; i < in.out.numel(); ++i) {
        const double o = in.out.get(i), r = in.ref.get(i);
        ASSERT_TRUE(std::isfinite(r)) << i;
        ASSERT_NEAR(o, r, (bf ? 8e-3 : 1e-3) * std::abs(r) + (bf ? 8e-3 : 2e-3)) << i;
      }
    }
}

TEST(IncreFlashAttentionV4, Int8Kv) {
  for (int aq : {1, 2})
    for (bool off : {false, true})
      for (DataType dt : {DataType::Float16, DataType::BFloat16}) {
        Case c;
        c.aq = aq;
        c.aqOffset = off;
        c.dtype = dt;
        c.n = 8;
        c.nkv = 2;
        check(c);
        c.blockSize = 32;
        c.asl = {90, 64};
        c.mask = true;
        check(c);
      }
}

TEST(IncreFlashAttentionV4, Int8Output) {
  for (int oq : {1, 2})
    for (DataType dt : {DataType::Float16, DataType::BFloat16})
      for (DataType st : {DataType::Float, DataType::BFloat16}) {
        if (st == DataType::BFloat16 && dt != DataType::BFloat16)
          continue;
        Case c;
        c.oq = oq;
        c.oqType = st;
        c.dtype = dt;
        c.asl = {0, 50};
        check(c);
      }
}

TEST(IncreFlashAttentionV4, Int8OutputWithStridedPerChannelParameters) {
  // quantScale2 / quantOffset2 as views that are not contiguous: [N, D]
  // stored transposed, [1, N * D] taking every other element, and
  // [1, N, 1, D] with padded rows. Same logical values, same output as the
  // contiguous [N, D] parameters, and as the reference.
  Case c;
  c.oq = 2;
  c.n = 8;
  c.nkv = 2;
  c.asl = {50, 9};
  Inputs base;
  build(c, base);
  ASSERT_TRUE(ops::increFlashAttentionV4(base.args).isOk());
  const int64_t n = c.n, d = c.d;
  auto logical = [&](const Buf &b, int64_t i) {
    float f;
    std::memcpy(&f, b.bytes.data() + i * 4, 4);
    return f;
  };
  for (int form = 0; form < 3; ++form) {
    SCOPED_TRACE(form);
    Inputs in;
    build(c, in);
    std::vector<float> qs(static_cast<size_t>(4 * n * d), -99.0f), qo = qs;
    TensorView sv, ov;
    for (TensorView *v : {&sv, &ov}) {
      v->dtype = DataType::Float;
      v->data = v == &sv ? qs.data() : qo.data();
    }
    for (int64_t h = 0; h < n; ++h)
      for (int64_t e = 0; e < d; ++e) {
        const int64_t ch = h * d + e;
        int64_t at = form == 0 ? e * n + h : form == 1 ? 2 * ch : h * (2 * d) + e;
        qs[static_cast<size_t>(at)] = logical(in.qs, ch);
        qo[static_cast<size_t>(at)] = logical(in.qo, ch);
      }
    for (TensorView *v : {&sv, &ov}) {
      if (form == 0) {
        v->shape = {n, d};
        v->strides = {1, n};
      } else if (form == 1) {
        v->shape = {1, n * d};
        v->strides = {n * d * 2, 2};
      } else {
        v->shape = {1, n, 1, d};
        v->strides = {n * 2 * d, 2 * d, d, 1};
      }
      v->storageShape = {4 * n * d};
    }
    in.args.quantScale2 = &sv;
    in.args.quantOffset2 = &ov;
    host::Status st = ops::increFlashAttentionV4(in.args);
    ASSERT_TRUE(st.isOk()) << st.message();
    EXPECT_EQ(in.out.bytes, base.out.bytes);
    aclnn::IncreFlashAttentionV4Args ra = in.args;
    ra.attentionOut = &in.ref.v;
    ops::increFlashAttentionV4Reference(ra);
    for (int64_t i = 0; i < in.out.numel(); ++i)
      EXPECT_LE(std::abs(in.out.get(i) - in.ref.get(i)), 1.0) << i;
  }
}

TEST(IncreFlashAttentionV4, TensorListsWithEveryFeature) {
  // One partial-kernel launch per list element: every per-batch view (query
  // rows, mask rows, pse rows or its broadcast, the workspace rows) must
  // line up with its element.
  for (const char *layout : {"BSH", "BNSD", "BSND"})
    for (int64_t g : {1, 8})
      for (int extras = 0; extras < 3; ++extras)
        for (int aq : {0, 2})
          for (int oq : {0, 2}) {
            Case c;
            c.layout = layout;
            c.b = 3;
            c.nkv = 2;
            c.n = 2 * g;
            c.list = true;
            c.listS = {70, 17, 0};
            c.asl = {66, 17, 0};
            c.mask = extras >= 1;
            c.pse = extras == 2;
            c.pseBroadcast = aq == 2;
            c.aq = aq;
            c.oq = oq;
            SCOPED_TRACE(std::string(layout) + " G=" + std::to_string(g) + " extras=" +
                         std::to_string(extras) + " aq=" + std::to_string(aq) +
                         " oq=" + std::to_string(oq));
            check(c);
          }
}

TEST(IncreFlashAttentionV4, TensorLists) {
  Case c;
  c.b = 3;
  c.list = true;
  c.listS = {5, 17, 0};
  check(c);
  c.layout = "BSH";
  c.listS = {5, 17, 4};
  c.asl = {4};
  check(c);
  c.layout = "BSND";
  c.asl = {3, 17, 0};
  check(c);
}

TEST(IncreFlashAttentionV4, CrossProductOfEveryFeature) {
  // The whole product the issue asks for: query layout x KV storage
  // (contiguous, paged 3-D cache, paged 4-D cache where the layout allows
  // it) x GQA ratio x {none, mask, pse, mask + pse + left padding} x KV
  // (f16/bf16, INT8 per-tensor, INT8 per-channel) x output (query dtype,
  // INT8 per-tensor, INT8 per-channel) x f16/bf16. Lengths 61, 0, 33 (not
  // multiples of the 32-row blocks; a zero-length row). Left padding is
  // ignored with page attention (spec 3.2), and still passed.
  int cases = 0;
  for (const char *layout : {"BSH", "BNSD", "BSND"})
    for (int storage : {0, 3, 4}) {
      if (storage == 4 && std::string(layout) != "BNSD")
        continue; // a 4-D cache needs BNSD (spec 8.13)
      for (int64_t g : {1, 4, 8, 64})
        for (int extras = 0; extras < 4; ++extras)
          for (int aq : {0, 1, 2})
            for (int oq : {0, 1, 2})
              for (DataType dt : {DataType::Float16, DataType::BFloat16}) {
                Case c;
                c.layout = layout;
                c.b = 3;
                c.nkv = g == 64 ? 1 : 2;
                c.n = c.nkv * g;
                c.d = g == 64 ? 32 : 64;
                c.s = 64;
                c.asl = {61, 0, 33};
                if (storage) {
                  c.blockSize = 32;
                  c.cache4d = storage == 4;
                }
                c.mask = extras == 1 || extras == 3;
                c.maskType = g % 2 ? DataType::Bool : DataType::UInt8;
                c.pse = extras == 2 || extras == 3;
                c.pseBroadcast = aq == 1;
                if (extras == 3)
                  c.pad = 2;
                c.aq = aq;
                c.aqOffset = oq != 1;
                c.oq = oq;
                c.dtype = dt;
                c.seed = static_cast<unsigned>(cases);
                SCOPED_TRACE(std::string(layout) + " storage=" + std::to_string(storage) +
                             " G=" + std::to_string(g) + " extras=" + std::to_string(extras) +
                             " aq=" + std::to_string(aq) + " oq=" + std::to_string(oq) +
                             (dt == DataType::BFloat16 ? " bf16" : " f16"));
                check(c);
                ++cases;
                if (HasFailure())
                  return;
              }
    }
  EXPECT_EQ(cases, 7 * 4 * 4 * 3 * 3 * 2);
}

TEST(IncreFlashAttentionV4, SameResultInEveryLayout) {
  // Section 11.2: the same logical data in BSH, BSND and BNSD.
  Case base;
  base.b = 2;
  base.n = 4;
  base.nkv = 2;
  base.d = 32;
  base.s = 40;
  Inputs ref;
  build(base, ref);
  ASSERT_TRUE(ops::increFlashAttentionV4(ref.args).isOk());
  for (const char *layout : {"BSH", "BSND"}) {
    Case c = base;
    c.layout = layout;
    Inputs in;
    build(c, in);
    in.q.bytes = ref.q.bytes; // the same linear order for queries
    for (int64_t b = 0; b < c.b; ++b)
      for (int64_t k = 0; k < c.nkv; ++k)
        for (int64_t p = 0; p < c.s; ++p)
          for (int64_t d = 0; d < c.d; ++d) {
            const int64_t src = ((b * c.nkv + k) * c.s + p) * c.d + d;
            const int64_t dst = ((b * c.s + p) * c.nkv + k) * c.d + d;
            std::memcpy(&in.k[0].bytes[dst * 2], &ref.k[0].bytes[src * 2], 2);
            std::memcpy(&in.v[0].bytes[dst * 2], &ref.v[0].bytes[src * 2], 2);
          }
    ASSERT_TRUE(ops::increFlashAttentionV4(in.args).isOk());
    EXPECT_EQ(in.out.bytes, ref.out.bytes) << layout;
  }
}

TEST(IncreFlashAttentionV4, DecodeLoopCompilesOnce) {
  Case c;
  c.b = 2;
  c.n = 8;
  c.nkv = 2;
  c.d = 64;
  c.s = 260;
  c.blockSize = 16;
  c.asl = {260, 200};
  Inputs in;
  build(c, in);
  // Warm up, then count compilations over 200 steps of growing lengths.
  in.asl.values = {1, 1};
  ASSERT_TRUE(ops::increFlashAttentionV4(in.args).isOk());
  auto compiled = [] {
    const auto st = jit::Compiler::instance().stats();
    return st.compiles + st.diskHits;
  };
  const auto before = compiled();
  for (int64_t step = 1; step <= 200; ++step) {
    in.asl.values = {step + 50, step};
    ASSERT_TRUE(ops::increFlashAttentionV4(in.args).isOk());
  }
  EXPECT_EQ(compiled(), before);
  aclnn::IncreFlashAttentionV4Args ra = in.args;
  ra.attentionOut = &in.ref.v;
  ops::increFlashAttentionV4Reference(ra);
  for (int64_t i = 0; i < in.out.numel(); ++i)
    EXPECT_NEAR(in.out.get(i), in.ref.get(i),
                2e-3 + 1e-3 * std::abs(in.ref.get(i)));
}

namespace {

/// Builds `c`, applies `mutate`, runs phase 1 and 2; expects `code` with a
/// message containing `text`, and attentionOut untouched.
void expectError(const Case &c, const std::function<void(Inputs &)> &mutate,
                 int32_t code, const std::string &text) {
  Inputs in;
  build(c, in);
  mutate(in);
  const auto before = in.out.bytes;
  host::Status st = ops::increFlashAttentionV4(in.args);
  EXPECT_EQ(st.code(), code) << st.message();
  EXPECT_NE(st.message().find(text), std::string::npos)
      << "message: " << st.message() << "\nexpected to contain: " << text;
  EXPECT_EQ(in.out.bytes, before) << "attentionOut was written";
}

constexpr int32_t kNull = host::status::ParamNullptr;
constexpr int32_t kInvalid = host::status::ParamInvalid;

} // namespace

namespace {

/// The specialisations of `kernel` requested while `run` ran (recorded
/// requests are distinct, so a kernel compiled before counts only when it
/// was first recorded: the cases below use shapes no other test does).
std::vector<jit::Specialization> requestsDuring(const std::string &kernel,
                                                const std::function<void()> &run) {
  jit::Compiler &jc = jit::Compiler::instance();
  jc.startRecording();
  const auto seen = jc.recordedRequests();
  const std::set<jit::Compiler::Request> before(seen.begin(), seen.end());
  run();
  std::vector<jit::Specialization> out;
  for (const auto &r : jc.recordedRequests())
    if (r.kernel == kernel && !before.count(r))
      out.push_back(r.spec);
  return out;
}

bool has(const jit::Specialization &spec, const std::string &name, const std::string &value) {
  const jit::SpecValue *v = spec.find(name);
  return v && v->str() == value;
}

} // namespace

// bf16 on AVX512-BF16 hosts: P goes into PV as bf16 pairs only where the
// cache fits in the last-level cache (TILEJIT_LLC_BYTES stands in for the
// host's); both forms meet the bound, on both kernels, masked or not.
TEST(IncreFlashAttentionV4, Bf16FormsForCachedAndStreamedKv) {
  const bool bfDot = jit::Compiler::instance().hasBf16Dot();
  for (const char *llc : {"0", "1000000000000"})
    for (bool c4 : {false, true}) {
      Case c;
      c.b = 2;
      c.n = 12;
      c.nkv = 3;
      c.d = 96;
      c.cache4d = c4;
      c.layout = c4 ? "BNSD" : "BSH";
      c.blockSize = 32;
      c.s = 150;
      c.asl = {150, 77};
      c.dtype = DataType::BFloat16;
      c.mask = c4;
      SCOPED_TRACE(std::string("TILEJIT_LLC_BYTES=") + llc + (c4 ? ", 4-D" : ", 3-D"));
      // The process's options only: the environment is not touched.
      jit::ScopedOptionOverride o("TILEJIT_LLC_BYTES", llc);
      const auto specs =
          requestsDuring(c4 ? "ifa_partial" : "ifa_rows", [&] { check(c); });
      if (!bfDot)
        continue;
      ASSERT_EQ(specs.size(), 1u);
      EXPECT_TRUE(has(specs[0], "BFDOT", "true"));
      EXPECT_EQ(has(specs[0], "BFPV", "true"), std::string(llc) != "0");
    }
  // The results were checked above on any host; the forms only here.
  if (!bfDot)
    GTEST_SKIP() << "no AVX512-BF16 for the operators' compiler on this host: the bf16-pair "
                    "kernels (BFDOT scores, BFPV for a cache that fits the LLC) are not "
                    "tested, only the f32 forms";
}

TEST(IncreFlashAttentionV4Validation, IllFormedLlcOverride) {
  jit::ScopedOptionOverride o("TILEJIT_LLC_BYTES", "32M");
  expectError(Case{}, [](Inputs &) {}, host::status::RuntimeError, "TILEJIT_LLC_BYTES");
}

// spec_rule: ifa-8.0
TEST(IncreFlashAttentionV4Validation, NullPointers) {
  Case c;
  expectError(
      c, [](Inputs &in) { in.args.query = nullptr; }, kNull, "query");
  expectError(
      c, [](Inputs &in) { in.args.key = nullptr; }, kNull, "key");
  expectError(
      c, [](Inputs &in) { in.args.value = nullptr; }, kNull, "value");
  expectError(
      c, [](Inputs &in) { in.args.attentionOut = nullptr; }, kNull,
      "attentionOut");
  expectError(
      c, [](Inputs &in) { in.args.inputLayout = nullptr; }, kNull,
      "inputLayout");
  expectError(
      c, [](Inputs &in) { in.kl.entries[0].reset(); }, kNull,
      "key: list element 0");
}

// spec_rule: ifa-8.0
TEST(IncreFlashAttentionV4Validation, NullWorkspaceSizeOrExecutor) {
  // Phase 1 through the C API with valid tensors: a null workspaceSize or
  // executor is 161001, no executor, the output untouched; with both the
  // same call succeeds and phase 2 runs.
  Case c;
  Inputs in;
  build(c, in);
  auto phase1 = [&](uint64_t *ws, aclOpExecutor **exec) {
    const aclnn::IncreFlashAttentionV4Args &a = in.args;
    auto t = [](const TensorView *v) { return static_cast<const aclTensor *>(v); };
    return aclnnIncreFlashAttentionV4GetWorkspaceSize(
        t(a.query), static_cast<const aclTensorList *>(a.key),
        static_cast<const aclTensorList *>(a.value), t(a.pseShift), t(a.attenMask),
        static_cast<const aclIntArray *>(a.actualSeqLengths), t(a.dequantScale1),
        t(a.quantScale1), t(a.dequantScale2), t(a.quantScale2), t(a.quantOffset2),
        t(a.antiquantScale), t(a.antiquantOffset), t(a.blocktable), t(a.kvPaddingSize),
        a.numHeads, a.scaleValue, const_cast<char *>(a.inputLayout), a.numKeyValueHeads,
        a.blockSize, a.innerPrecise, t(a.attentionOut), ws, exec);
  };
  const auto before = in.out.bytes;
  uint64_t ws = 0;
  aclOpExecutor *exec = nullptr;
  EXPECT_EQ(phase1(nullptr, &exec), kNull);
  EXPECT_NE(std::string(aclGetRecentErrMsg()).find("workspaceSize"), std::string::npos)
      << aclGetRecentErrMsg();
  EXPECT_EQ(exec, nullptr);
  EXPECT_EQ(phase1(&ws, nullptr), kNull);
  EXPECT_NE(std::string(aclGetRecentErrMsg()).find("executor"), std::string::npos)
      << aclGetRecentErrMsg();
  EXPECT_EQ(in.out.bytes, before) << "attentionOut was written";
  ASSERT_EQ(phase1(&ws, &exec), 0) << aclGetRecentErrMsg();
  std::vector<unsigned char> workspace(std::max<uint64_t>(ws, 1));
  EXPECT_EQ(aclnnIncreFlashAttentionV4(workspace.data(), ws, exec, nullptr), 0)
      << aclGetRecentErrMsg();
  EXPECT_NE(in.out.bytes, before);
}

// spec_rule: ifa-8.1
TEST(IncreFlashAttentionV4Validation, Dtypes) {
  Case c;
  expectError(
      c, [](Inputs &in) { in.q.v.dtype = DataType::Float; }, kInvalid,
      "query: dtype");
  expectError(
      c, [](Inputs &in) { in.kl.entries[0]->dtype = DataType::BFloat16; },
      kInvalid, "key: dtype");
  expectError(
      c, [](Inputs &in) { in.vl.entries[0]->dtype = DataType::Int8; }, kInvalid,
      "value: dtype");
  expectError(
      c, [](Inputs &in) { in.out.v.dtype = DataType::BFloat16; }, kInvalid,
      "attentionOut: dtype");
  expectError(
      c, [](Inputs &in) { in.q.v.format = host::Format::FractalNZ; },
      kInvalid, "query: format");
}

// spec_rule: ifa-8.2
// spec_rule: ifa-8.3
// spec_rule: ifa-8.4
TEST(IncreFlashAttentionV4Validation, LayoutHeadsAndPrecise) {
  Case c;
  for (const char *bad : {"TND", "SH", "BSSH", "bsh"})
    expectError(
        c, [bad](Inputs &in) { in.args.inputLayout = bad; }, kInvalid,
        "inputLayout");
  expectError(
      c, [](Inputs &in) { in.args.numHeads = 0; }, kInvalid, "numHeads");
  expectError(
      c, [](Inputs &in) { in.args.numKeyValueHeads = -1; }, kInvalid,
      "numKeyValueHeads");
  expectError(
      c, [](Inputs &in) { in.args.numKeyValueHeads = 8; }, kInvalid,
      "numKeyValueHeads");
  expectError(
      c, [](Inputs &in) { in.args.numKeyValueHeads = 3; }, kInvalid,
      "multiple of numKeyValueHeads");
  Case g65;
  g65.layout = "BSH";
  g65.n = 65;
  g65.nkv = 1;
  g65.d = 16;
  expectError(
      g65, [](Inputs &) {}, kInvalid, "<= 64");
  Case many;
  many.layout = "BSH";
  many.b = 1;
  many.n = many.nkv = 257;
  many.d = 16;
  many.s = 2;
  expectError(
      many, [](Inputs &) {}, kInvalid, "numKeyValueHeads: must be <= 256");
  for (int64_t p : {-1, 2})
    expectError(
        c, [p](Inputs &in) { in.args.innerPrecise = p; }, kInvalid,
        "innerPrecise");
}

// spec_rule: ifa-8.5
TEST(IncreFlashAttentionV4Validation, QueryAndOutputShapes) {
  Case c;
  expectError(
      c,
      [](Inputs &in) {
        in.q.v.shape = {2, 4, 2, 32};
      },
      kInvalid, "query: S must be 1");
  expectError(
      c,
      [](Inputs &in) {
        in.args.numHeads = 2;
        in.args.numKeyValueHeads = 1;
      },
      kInvalid, "must equal numHeads");
  expectError(
      c,
      [](Inputs &in) {
        in.q.v.shape = {2, 4, 64};
      },
      kInvalid, "query: rank");
  expectError(
      c,
      [](Inputs &in) {
        in.out.v.shape = {2, 4, 1, 32};
      },
      kInvalid, "attentionOut: shape");
  Case bsh;
  bsh.layout = "BSH";
  expectError(
      bsh,
      [](Inputs &in) {
        in.args.numHeads = 3;
        in.args.numKeyValueHeads = 3;
      },
      kInvalid, "multiple of numHeads");
  Case d513;
  d513.n = 1;
  d513.d = 513;
  d513.s = 2;
  expectError(
      d513, [](Inputs &) {}, kInvalid, "D must be <= 512");
}

// spec_rule: ifa-8.6
TEST(IncreFlashAttentionV4Validation, KvShapes) {
  Case c;
  expectError(
      c, [](Inputs &in) { in.kl.entries[0]->shape[1] = 2; }, kInvalid,
      "key: N");
  expectError(
      c, [](Inputs &in) { in.kl.entries[0]->shape[3] = 32; }, kInvalid,
      "key: D");
  expectError(
      c, [](Inputs &in) { in.vl.entries[0]->shape[2] = 50; }, kInvalid,
      "value: shape");
  expectError(
      c,
      [](Inputs &in) {
        in.kl.entries[0]->shape = {2, 1, 100};
      },
      kInvalid, "key: rank");
  Case l;
  l.b = 3;
  l.list = true;
  l.listS = {5, 17, 0};
  expectError(
      l,
      [](Inputs &in) {
        in.kl.entries.pop_back();
        in.vl.entries.pop_back();
      },
      kInvalid, "one tensor per batch");
  expectError(
      l, [](Inputs &in) { in.kl.entries[1]->shape[0] = 2; }, kInvalid,
      "key: batch dimension");
  expectError(
      l, [](Inputs &in) { in.vl.entries[1]->shape[2] = 3; }, kInvalid,
      "value: list element 1");
  expectError(
      l, [](Inputs &in) { in.kl.entries[2]->shape[1] = 2; }, kInvalid,
      "key: N");
  // A single tensor whose dim 0 is not B (B = 2, dim 0 = 1: a list of one
  // tensor for two batches).
  expectError(
      c,
      [](Inputs &in) {
        in.kl.entries[0]->shape[0] = 1;
        in.vl.entries[0]->shape[0] = 1;
      },
      kInvalid, "key: a tensor list must hold one tensor per batch (2), got 1");
  // Tensor lists allow B <= 256 (section 8 #6).
  Case many;
  many.layout = "BSH";
  many.b = 257;
  many.n = many.nkv = 1;
  many.d = 16;
  many.list = true;
  many.listS.assign(257, 2);
  expectError(
      many, [](Inputs &) {}, kInvalid, "tensor lists allow B <= 256, got 257");
  many.b = 256;
  many.listS.assign(256, 2);
  check(many);
}

// spec_rule: ifa-8.7
TEST(IncreFlashAttentionV4Validation, ActualSeqLengths) {
  Case c;
  c.b = 3;
  c.asl = {1, 2, 3};
  expectError(
      c,
      [](Inputs &in) {
        in.asl.values = {1, 2};
      },
      kInvalid, "actualSeqLengths: length");
  expectError(
      c,
      [](Inputs &in) {
        in.asl.values = {1, -1, 2};
      },
      kInvalid, "actualSeqLengths: values must be >= 0");
  expectError(
      c, [](Inputs &in) { in.asl.values = {101}; }, kInvalid,
      "exceeds the KV sequence length");
}

// spec_rule: ifa-8.8
// spec_rule: ifa-8.9
TEST(IncreFlashAttentionV4Validation, PseAndMask) {
  Case c;
  c.pse = true;
  c.mask = true;
  expectError(
      c, [](Inputs &in) { in.pse.v.dtype = DataType::BFloat16; }, kInvalid,
      "pseShift: dtype");
  expectError(
      c,
      [](Inputs &in) {
        in.pse.v.shape = {2, 4, 105};
      },
      kInvalid, "pseShift: rank");
  expectError(
      c, [](Inputs &in) { in.pse.v.shape[0] = 3; }, kInvalid,
      "pseShift: dim 0");
  expectError(
      c, [](Inputs &in) { in.pse.v.shape[1] = 2; }, kInvalid,
      "pseShift: dim 1");
  expectError(
      c, [](Inputs &in) { in.pse.v.shape[3] = 99; }, kInvalid,
      "pseShift: last dim");
  expectError(
      c, [](Inputs &in) { in.mask.v.dtype = DataType::Float16; }, kInvalid,
      "attenMask: dtype");
  expectError(
      c, [](Inputs &in) { in.mask.v.shape[0] = 1; }, kInvalid,
      "attenMask: dim 0");
  expectError(
      c, [](Inputs &in) { in.mask.v.shape[3] = 99; }, kInvalid,
      "attenMask: last dim");
  expectError(
      c,
      [](Inputs &in) {
        in.mask.v.shape = {2, 4, 1, 103};
      },
      kInvalid, "attenMask: shape");
}

// spec_rule: ifa-8.13
TEST(IncreFlashAttentionV4Validation, PageAttention) {
  Case c;
  c.b = 2;
  c.layout = "BSH";
  c.blockSize = 16;
  c.asl = {40, 20};
  c.s = 48;
  expectError(
      c, [](Inputs &in) { in.args.blockSize = 0; }, kInvalid, "blockSize");
  expectError(
      c, [](Inputs &in) { in.args.blockSize = 8; }, kInvalid, "blockSize");
  expectError(
      c, [](Inputs &in) { in.args.blockSize = 528; }, kInvalid, "blockSize");
  expectError(
      c, [](Inputs &in) { in.args.actualSeqLengths = nullptr; }, kInvalid,
      "actualSeqLengths: required");
  expectError(
      c,
      [](Inputs &in) {
        in.asl.values = {49, 1};
      },
      kInvalid, "capacity");
  expectError(
      c, [](Inputs &in) { in.bt.v.shape[0] = 1; }, kInvalid,
      "blocktable: shape");
  expectError(
      c, [](Inputs &in) { in.bt.v.dtype = DataType::Int64; }, kInvalid,
      "blocktable: dtype");
  expectError(
      c,
      [](Inputs &in) {
        in.kl.entries[0]->shape[0] = 2;
        in.vl.entries[0]->shape[0] = 2;
      },
      kInvalid, "blocks");
  expectError(
      c, [](Inputs &in) { in.bt.set(1, 99); }, kInvalid,
      "blocktable: entry [0, 1]");
  Case i8 = c;
  i8.aq = 1;
  i8.blockSize = 16;
  expectError(
      i8, [](Inputs &) {}, kInvalid, "multiple of 32");
  Case c4 = c;
  c4.layout = "BSND";
  c4.cache4d = true;
  expectError(
      c4, [](Inputs &) {}, kInvalid, "4-D cache needs inputLayout");
  // Nkv * D = 65536 does not fit a 3-D cache's rows (<= 65535); a 4-D
  // cache of the same heads is fine.
  Case rows = c;
  rows.n = rows.nkv = 128;
  rows.d = 512;
  rows.b = 1;
  rows.asl = {16};
  rows.s = 16;
  expectError(
      rows, [](Inputs &) {}, kInvalid, "numKeyValueHeads * D must be <= 65535");
  rows.layout = "BNSD";
  rows.cache4d = true;
  check(rows);
  Case wide = c;
  wide.n = wide.nkv = 1024;
  wide.d = 64;
  wide.b = 1;
  wide.asl = {16};
  wide.s = 16;
  expectError(
      wide, [](Inputs &in) { in.args.numKeyValueHeads = 0; }, kInvalid,
      "numKeyValueHeads");
}

// spec_rule: ifa-8.10
// spec_rule: ifa-8.11
// spec_rule: ifa-8.12
TEST(IncreFlashAttentionV4Validation, Quantisation) {
  Case c;
  c.aq = 2;
  expectError(
      c, [](Inputs &in) { in.args.antiquantScale = nullptr; }, kInvalid,
      "antiquantScale: required");
  expectError(
      c, [](Inputs &in) { in.aqs.v.dtype = DataType::Float; }, kInvalid,
      "antiquantScale: dtype");
  expectError(
      c,
      [](Inputs &in) {
        in.aqo.v.shape = {2, 64};
      },
      kInvalid, "antiquantOffset: shape");
  expectError(
      c,
      [](Inputs &in) {
        in.aqs.v.shape = {2, 2, 32};
      },
      kInvalid, "antiquantScale: shape");
  Case f;
  expectError(
      f, [&](Inputs &in) { in.args.antiquantScale = &in.q.v; }, kInvalid,
      "antiquantScale: only allowed");
  expectError(
      f, [&](Inputs &in) { in.args.antiquantOffset = &in.q.v; }, kInvalid,
      "antiquantOffset: only allowed");
  Case o;
  o.oq = 2;
  expectError(
      o, [](Inputs &in) { in.args.quantScale2 = nullptr; }, kInvalid,
      "quantScale2: required");
  expectError(
      o,
      [](Inputs &in) {
        in.qs.v.dtype = DataType::BFloat16;
        in.qo.v.dtype = DataType::BFloat16;
      },
      kInvalid, "quantScale2: dtype");
  expectError(
      o, [](Inputs &in) { in.qo.v.dtype = DataType::Float16; }, kInvalid,
      "quantOffset2: dtype");
  expectError(
      o,
      [](Inputs &in) {
        in.qs.v.shape = {4, 32, 1};
        in.qo.v.shape = {4, 32, 1};
      },
      kInvalid, "quantScale2: shape");
  expectError(
      o,
      [](Inputs &in) {
        in.qo.v.shape = {1, 4, 32};
      },
      kInvalid, "quantOffset2: shape");
  expectError(
      f, [&](Inputs &in) { in.args.quantScale2 = &in.q.v; }, kInvalid,
      "quantScale2: only allowed");
  expectError(
      f, [&](Inputs &in) { in.args.dequantScale1 = &in.q.v; }, kInvalid,
      "dequantScale1");
  expectError(
      f, [&](Inputs &in) { in.args.quantScale1 = &in.q.v; }, kInvalid,
      "quantScale1");
  expectError(
      f, [&](Inputs &in) { in.args.dequantScale2 = &in.q.v; }, kInvalid,
      "dequantScale2");
}

TEST(IncreFlashAttentionV4Validation, EmptyOptionalsAreAbsent) {
  Case c;
  Inputs in;
  build(c, in);
  Buf empty(DataType::Float, {0});
  in.args.dequantScale1 = &empty.v;
  in.args.pseShift = &empty.v;
  in.args.blocktable = &empty.v;
  EXPECT_TRUE(ops::increFlashAttentionV4(in.args).isOk());
}

TEST(IncreFlashAttentionV4, HandwrittenTwinAgreesWithReference) {
  // Group sizes that fill whole and partial register groups of the AVX-512
  // build (8 heads for scores, 4 for PV), and a head dim it leaves to the
  // AVX2 build (40).
  for (int64_t bs : {0, 16, 128})
    for (DataType dt : {DataType::Float16, DataType::BFloat16})
      for (int64_t g : {1, 4, 5, 64}) {
        Case c;
        c.b = 2;
        c.n = 2 * g;
        c.nkv = 2;
        c.d = g == 5 ? 40 : g == 64 ? 32 : 64;
        c.s = 300;
        c.dtype = dt;
        c.layout = "BSH";
        if (bs) {
          c.blockSize = bs;
          c.asl = {300, 77};
        }
        Inputs in;
        build(c, in);
        ASSERT_TRUE(ops::increFlashAttentionV4Handwritten(in.args));
        aclnn::IncreFlashAttentionV4Args ra = in.args;
        ra.attentionOut = &in.ref.v;
        ops::increFlashAttentionV4Reference(ra);
        const bool bf = dt == DataType::BFloat16;
        for (int64_t i = 0; i < in.out.numel(); ++i) {
          const double r = in.ref.get(i);
          EXPECT_NEAR(in.out.get(i), r,
                      (bf ? 8e-3 : 1e-3) * std::abs(r) + (bf ? 8e-3 : 2e-3))
              << i;
        }
      }
  Case masked;
  masked.mask = true;
  Inputs in;
  build(masked, in);
  EXPECT_FALSE(ops::increFlashAttentionV4Handwritten(in.args));
}

TEST(IncreFlashAttentionV4, InnerPreciseZeroAndOneAgree) {
  Case c;
  c.nkv = 2;
  Inputs a, b;
  build(c, a);
  build(c, b);
  a.args.innerPrecise = 0;
  b.args.innerPrecise = 1;
  ASSERT_TRUE(ops::increFlashAttentionV4(a.args).isOk());
  ASSERT_TRUE(ops::increFlashAttentionV4(b.args).isOk());
  EXPECT_EQ(a.out.bytes, b.out.bytes);
}

// Section 11.16: S = 65536 with scores of about 1e4 (|Q·K| up to about 10,
// scale 1000), the window split across programs and merged; section 7's
// bound holds, and the result is the same on a second run.
TEST(IncreFlashAttentionV4, LongWindowWithScoresNear1e4) {
  for (DataType dt : {DataType::Float16, DataType::BFloat16}) {
    Case c;
    c.b = 1;
    c.n = 4;
    c.nkv = 1;
    c.d = 64;
    c.s = 65536;
    c.scale = 1000.0;
    c.dtype = dt;
    SCOPED_TRACE(dt == DataType::BFloat16 ? "bf16" : "f16");
    Inputs in;
    build(c, in);
    ASSERT_TRUE(ops::increFlashAttentionV4(in.args).isOk());
    aclnn::IncreFlashAttentionV4Args ra = in.args;
    ra.attentionOut = &in.ref.v;
    ops::increFlashAttentionV4Reference(ra);
    for (int64_t i = 0; i < in.ref.numel(); ++i)
      ASSERT_TRUE(std::isfinite(in.ref.get(i)) && std::isfinite(in.out.get(i))) << i;
    expectWithinSection7(c, in);
    const auto first = in.out.bytes;
    ASSERT_TRUE(ops::increFlashAttentionV4(in.args).isOk());
    EXPECT_EQ(in.out.bytes, first);
  }
}

TEST(IncreFlashAttentionV4, LargeScoresStayFinite) {
  // Scores around 1e2..1e3: max subtraction prevents overflow.
  Case c;
  c.scale = 100.0;
  c.s = 500;
  check(c);
}

// Section 7 [R]: bitwise the same result at 1, 2 and the default number of
// threads (and 3, which splits work differently from 2), for a window
// split across programs, paged caches, bf16 and INT8 KV. A launch uses
// OpenMP's thread count at the time of the call.
TEST(IncreFlashAttentionV4, DeterministicAcrossThreadCounts) {
  std::vector<Case> cases(4);
  cases[0].b = 1;
  cases[0].s = 5000;
  cases[0].n = 8;
  cases[0].nkv = 2;
  cases[1] = cases[0];
  cases[1].dtype = DataType::BFloat16;
  cases[1].layout = "BSH";
  cases[2].b = 3;
  cases[2].n = 8;
  cases[2].nkv = 2;
  cases[2].s = 700;
  cases[2].blockSize = 64;
  cases[2].asl = {700, 3, 333};
  cases[2].mask = true;
  cases[3] = cases[2];
  cases[3].aq = 2;
  cases[3].cache4d = true;
  const int saved = omp_get_max_threads();
  for (size_t i = 0; i < cases.size(); ++i) {
    SCOPED_TRACE("case " + std::to_string(i));
    Inputs in;
    build(cases[i], in);
    auto runWith = [&](int threads) {
      omp_set_num_threads(threads);
      std::fill(in.out.bytes.begin(), in.out.bytes.end(), 0x5a);
      const host::Status st = ops::increFlashAttentionV4(in.args);
      omp_set_num_threads(saved);
      EXPECT_TRUE(st.isOk()) << st.message();
      return in.out.bytes;
    };
    const auto byDefault = runWith(saved);
    EXPECT_EQ(runWith(1), byDefault) << "one thread versus the default (" << saved << ")";
    EXPECT_EQ(runWith(2), byDefault) << "two threads versus the default (" << saved << ")";
    EXPECT_EQ(runWith(3), byDefault) << "three threads versus the default (" << saved << ")";
  }
}

TEST(IncreFlashAttentionV4, Deterministic) {
  Case c;
  c.b = 1;
  c.s = 5000;
  c.n = 8;
  c.nkv = 2;
  Inputs a;
  build(c, a);
  ASSERT_TRUE(ops::increFlashAttentionV4(a.args).isOk());
  const auto first = a.out.bytes;
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(ops::increFlashAttentionV4(a.args).isOk());
    EXPECT_EQ(a.out.bytes, first);
  }
}

// spec_rule: ifa-8.5
TEST(IncreFlashAttentionV4Validation, BatchLimit) {
  Case c;
  c.layout = "BSH";
  c.n = c.nkv = 1;
  c.d = 16;
  c.s = 1;
  c.b = 65536;
  check(c);
  c.b = 65537;
  expectError(
      c, [](Inputs &) {}, kInvalid, "B must be <= 65536");
}
