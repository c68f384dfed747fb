//===- FuzzAclnn.cpp - Fuzz target: the five aclnn operators --------------===//
///
/// \file
/// Drives the five operators through the public C API only (aclCreateTensor,
/// aclCreateIntArray, aclnnXxxGetWorkspaceSize, aclnnXxx, stream sync,
/// destroy), as a program written for CANN would. The bytes pick a small,
/// mostly consistent problem, then edit it: index contents, descriptors
/// that lie, attributes that make no sense.
///
/// Input layout (every read past the end reads 0, and 0 is always the
/// valid choice, so a one-byte input is a valid call of its operator):
///
///   byte 0        operator: value % 5 -> ScatterPaKvCache, GatherPaKvCache,
///                 IncreFlashAttentionV4, NsaCompressWithCache,
///                 FlashAttentionUnpaddingScoreGradV5
///   bytes 1..16   the problem: scenario, dtypes, small dimensions, the seed
///                 of the index contents, optional inputs (per operator, see
///                 build*); byte 16 picks how phase 2 is called (kPhase2)
///   bytes 17..    edits of 4 bytes [kind, target, x, y], applied in order
///                 (see applyEdit): an index element, a lie about one
///                 tensor (view past storage, offset, zero/negative/huge
///                 stride, null data, dims, rank, dtype, format, absent or
///                 present, a truthful non-contiguous layout), an integer,
///                 float or string attribute, an int array, a fill pattern
///
/// Every tensor's storage (the element count its storage dims claim) is
/// mapped so that its last byte abuts a PROT_NONE page, with another such
/// page before it: the JIT-compiled kernels are not instrumented by ASan,
/// so a read or write outside a storage must fault. After a call that
/// returned an error every buffer must be byte-identical to before; after
/// a successful call every input buffer must be. A violated rule aborts
/// with a message naming it. Numerics are the test suite's business.
///
/// Problems stay small (dimensions from small sets) so that the kernels
/// they need are few and stay in the in-memory JIT cache; the disk cache is
/// off (TILEJIT_CACHE=off) and launches use one thread
/// (TILEJIT_NUM_THREADS=1) unless the environment says otherwise.
///
//===----------------------------------------------------------------------===//
#include "FuzzTargets.h"

#include "acl/acl.h"
#include "aclnnop/aclnn_flash_attention_score_grad.h"
#include "aclnnop/aclnn_gather_pa_kv_cache.h"
#include "aclnnop/aclnn_incre_flash_attention_v4.h"
#include "aclnnop/aclnn_nsa_compress_with_cache.h"
#include "aclnnop/aclnn_scatter_pa_kv_cache.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace tilejit::fuzz {

namespace {

//===----------------------------------------------------------------------===//
// Bytes and interesting values
//===----------------------------------------------------------------------===//

constexpr size_t kHeaderBytes = 16;
/// A storage above this many bytes is not allocated: the input is skipped.
constexpr int64_t kMaxStorageBytes = 8 << 20;
/// A workspace above this is not allocated: phase 2 is not run.
constexpr uint64_t kMaxWorkspaceBytes = 64 << 20;
/// Index contents are written element by element up to this count.
constexpr int64_t kMaxIndexElements = 1 << 16;

/// The fuzz bytes: a fixed header, then edits; reads past the end give 0.
class Input {
public:
  Input(const uint8_t *data, size_t size) : data(data), size(size) {}
  uint8_t op() const { return size ? data[0] : 0; }
  /// Header byte i (0-based, i < kHeaderBytes).
  uint8_t h(size_t i) const { return 1 + i < size ? data[1 + i] : 0; }
  /// The edits after the header, 4 bytes each (a short last one is
  /// padded with 0).
  size_t editCount() const {
    const size_t start = 1 + kHeaderBytes;
    return size > start ? (size - start + 3) / 4 : 0;
  }
  uint8_t edit(size_t e, size_t k) const {
    const size_t at = 1 + kHeaderBytes + 4 * e + k;
    return at < size ? data[at] : 0;
  }

private:
  const uint8_t *data;
  size_t size;
};

/// Two's-complement arithmetic: edits stack, and the harness itself must
/// not overflow (UBSan runs with it).
int64_t wrapAdd(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}
int64_t wrapMul(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
}

/// Values that break index arithmetic, around `bound` (the natural limit:
/// slot count, block count, length).
int64_t interesting(uint8_t y, int64_t bound) {
  const int64_t hi = y >> 4;
  switch (y % 16) {
  case 0: return hi;
  case 1: return wrapAdd(bound, -1);
  case 2: return bound;
  case 3: return wrapAdd(bound, 1);
  case 4: return -1;
  case 5: return -hi - 2;
  case 6: return INT32_MAX;
  case 7: return INT32_MIN;
  case 8: return INT64_MAX;
  case 9: return INT64_MIN;
  case 10: return wrapAdd(wrapMul(2, bound), hi);
  case 11: return bound / 2;
  case 12: return int64_t{1} << (31 + hi);
  case 13: return wrapMul(-1, bound);
  case 14: return INT64_MAX - hi;
  default: return INT64_MIN + hi;
  }
}

/// A small deterministic generator for index contents.
struct Lcg {
  uint64_t state;
  explicit Lcg(uint8_t seed) : state(0x9E3779B97F4A7C15ull ^ seed) {}
  int64_t below(int64_t n) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return n > 0 ? static_cast<int64_t>((state >> 33) % static_cast<uint64_t>(n))
                 : 0;
  }
};

/// Every dtype, and unknown values (the enums have int as their underlying
/// type in C++, so any int is a value a C caller may pass).
const aclDataType kAnyDtypes[] = {
    ACL_FLOAT,         ACL_FLOAT16,       ACL_INT8,
    ACL_INT32,         ACL_UINT8,         ACL_INT16,
    ACL_UINT16,        ACL_UINT32,        ACL_INT64,
    ACL_UINT64,        ACL_DOUBLE,        ACL_BOOL,
    ACL_STRING,        ACL_COMPLEX64,     ACL_BF16,
    ACL_INT4,          ACL_UINT1,         ACL_HIFLOAT8,
    ACL_FLOAT8_E5M2,   ACL_FLOAT8_E4M3FN, ACL_FLOAT8_E8M0,
    ACL_FLOAT4_E2M1,   ACL_DT_UNDEFINED,  static_cast<aclDataType>(42),
    static_cast<aclDataType>(63),      static_cast<aclDataType>(999)};

/// A dtype from `valid` for bytes below 0x80, from every dtype otherwise.
aclDataType dtypeOf(uint8_t b, const std::vector<aclDataType> &valid) {
  if (b < 0x80)
    return valid[b % valid.size()];
  return kAnyDtypes[b % std::size(kAnyDtypes)];
}

const aclFormat kFormats[] = {ACL_FORMAT_ND,         ACL_FORMAT_FRACTAL_NZ,
                              ACL_FORMAT_NCHW,       ACL_FORMAT_NHWC,
                              ACL_FORMAT_UNDEFINED,  ACL_FORMAT_NC1HWC0,
                              ACL_FORMAT_FRACTAL_Z,  static_cast<aclFormat>(63),
                              static_cast<aclFormat>(-1000)};

const char *const kStrings[] = {
    nullptr, "",      "Norm", "PA_NZ", "None",         "Nct",
    "Alibi", "Rope",  "Omni", "BSH",   "BNSD",         "BSND",
    "TND",   "SBH",   "same_as_input", "norm",         "PA_NZ ",
    "N",     "BSH\x01"};

//===----------------------------------------------------------------------===//
// The problem: tensors, arrays, attributes
//===----------------------------------------------------------------------===//

/// One tensor argument: its descriptor and contents.
struct TensorSpec {
  const char *name;
  aclDataType dtype;
  std::vector<int64_t> dims;
  std::vector<int64_t> strides; ///< set by finalize(): contiguous
  int64_t offset = 0;
  std::vector<int64_t> storage; ///< set by finalize(): [numel]
  aclFormat format = ACL_FORMAT_ND;
  bool present = true;
  bool nullData = false;
  bool output = false;
  /// Index contents (INT32 or INT64 element values), written through the
  /// view; empty for data tensors, which are filled with `fill`.
  std::vector<int64_t> values;
  bool isIndex = false;
  int64_t bound = 0; ///< the natural limit of its values
  uint8_t fill = 0x3c;
};

struct ArraySpec {
  const char *name;
  std::vector<int64_t> values;
  bool present = true;
  int64_t bound = 0;
};

struct IntAttr {
  const char *name;
  int64_t value;
};

/// The arguments of one call, in the operator's own order (see call*).
struct Problem {
  std::vector<TensorSpec> tensors;
  std::vector<ArraySpec> arrays;
  std::vector<IntAttr> ints;
  std::vector<double> reals;
  std::vector<const char *> strings;
  /// IFA only: how many of the key/value tensors form each list.
  int64_t listLength = 1;
};

int64_t numelOf(const std::vector<int64_t> &dims) {
  int64_t n = 1;
  for (int64_t d : dims)
    if (__builtin_mul_overflow(n, d, &n))
      return -1;
  return n;
}

std::vector<int64_t> contiguous(const std::vector<int64_t> &dims) {
  std::vector<int64_t> s(dims.size(), 1);
  for (size_t i = dims.size(); i-- > 1;)
    s[i - 1] = wrapMul(s[i], std::max<int64_t>(dims[i], 1));
  return s;
}

/// Truthful contiguous strides and storage for every tensor.
void finalize(Problem &p) {
  for (TensorSpec &t : p.tensors) {
    t.strides = contiguous(t.dims);
    t.storage = {std::max<int64_t>(numelOf(t.dims), 0)};
  }
}

TensorSpec &add(Problem &p, const char *name, aclDataType dtype,
                std::vector<int64_t> dims, bool output = false) {
  TensorSpec t;
  t.name = name;
  t.dtype = dtype;
  t.dims = std::move(dims);
  t.output = output;
  p.tensors.push_back(std::move(t));
  return p.tensors.back();
}

TensorSpec &addIndex(Problem &p, const char *name, aclDataType dtype,
                     std::vector<int64_t> dims, std::vector<int64_t> values,
                     int64_t bound) {
  TensorSpec &t = add(p, name, dtype, std::move(dims));
  t.values = std::move(values);
  t.isIndex = true;
  t.bound = bound;
  return t;
}

aclDataType indexDtype(uint8_t b) {
  if (b >= 0xf0)
    return kAnyDtypes[b % std::size(kAnyDtypes)];
  return b & 1 ? ACL_INT64 : ACL_INT32;
}

/// Distinct values in [0, n) (as many as fit, then repeats), shuffled.
std::vector<int64_t> distinct(Lcg &rng, int64_t count, int64_t n) {
  std::vector<int64_t> all(static_cast<size_t>(std::max<int64_t>(n, 1)));
  for (size_t i = 0; i < all.size(); ++i)
    all[i] = static_cast<int64_t>(i);
  for (size_t i = all.size(); i > 1; --i)
    std::swap(all[i - 1], all[static_cast<size_t>(rng.below(
                              static_cast<int64_t>(i)))]);
  std::vector<int64_t> out(static_cast<size_t>(count));
  for (size_t i = 0; i < out.size(); ++i)
    out[i] = all[i % all.size()];
  return out;
}

//===----------------------------------------------------------------------===//
// ScatterPaKvCache
//===----------------------------------------------------------------------===//

const std::vector<aclDataType> kKvDtypes = {
    ACL_FLOAT16, ACL_BF16,    ACL_FLOAT,    ACL_INT8,          ACL_UINT8,
    ACL_INT16,   ACL_INT32,   ACL_HIFLOAT8, ACL_FLOAT8_E4M3FN, ACL_FLOAT8_E5M2};
const int64_t kHeadDims[] = {16, 8, 32, 3, 1, 24};
const int64_t kBlockSizes[] = {4, 1, 8, 16, 3, 32};

/// Scatter: tensors key, keyCacheRef, slotMapping, value, valueCacheRef,
/// compressLens, compressSeqOffset, seqLens; arrays strides, offsets;
/// strings cacheMode, scatterMode.
Problem buildScatter(const Input &in) {
  Problem p;
  Lcg rng(in.h(9));
  const int scenario = in.h(0) % 6; // S2, S6, S1, Nct, S4/S5, S3
  const aclDataType dt = dtypeOf(in.h(1), kKvDtypes);
  const aclDataType it = indexDtype(in.h(2));
  const int64_t t = 1 + in.h(3) % 6, n = 1 + in.h(4) % 3;
  int64_t dk = kHeadDims[in.h(5) % 6];
  int64_t dv = in.h(6) ? kHeadDims[in.h(6) % 6] : dk;
  const int64_t bs = kBlockSizes[in.h(7) % 6];
  const int64_t extra = in.h(8) % 3;
  const int64_t b = 1 + in.h(10) % 3, s = 1 + in.h(11) % 4;
  const char *cacheMode = nullptr, *scatterMode = nullptr;
  const int64_t es = std::max<int64_t>(aclDataTypeSize(dt), 1);

  if (scenario == 4 || scenario == 5) {
    // Per-head compression: S3 (4-D key) and S4/S5 (3-D key, B*N heads).
    const bool fourD = scenario == 5;
    const int sub = in.h(12) % 3; // Alibi, Rope, Omni (3-D); Mean or not (4-D)
    dv = dk;
    std::vector<int64_t> seq(static_cast<size_t>(b));
    int64_t tokens = 0;
    for (auto &l : seq) {
      l = 1 + rng.below(s);
      tokens += l;
    }
    const int64_t cap = b * n * s;
    const int64_t nb = (cap + bs - 1) / bs + extra;
    std::vector<int64_t> lens, offsets, slots;
    for (int64_t bi = 0; bi < b; ++bi)
      for (int64_t h = 0; h < n; ++h) {
        const int64_t l = seq[static_cast<size_t>(bi)];
        const int64_t c = 1 + rng.below(l);
        lens.push_back(c);
        offsets.push_back(rng.below(l - c + 1));
        slots.push_back((bi * n + h) * s);
      }
    if (fourD) {
      add(p, "key", dt, {b, s, n, dk});
      add(p, "keyCacheRef", dt, {nb, bs, 1, dk}, true);
      addIndex(p, "slotMapping", it, {b, n}, slots, nb * bs);
      add(p, "value", dt, {b, s, n, dv});
      add(p, "valueCacheRef", dt, {nb, bs, 1, dv}, true);
      addIndex(p, "compressLensOptional", it, {b, n}, lens, s);
      addIndex(p, "compressSeqOffsetOptional", it, {b * n}, offsets, s)
          .present = sub == 1;
      addIndex(p, "seqLensOptional", it, {b}, seq, s);
    } else {
      scatterMode = sub == 0 ? "Alibi" : sub == 1 ? "Rope" : "Omni";
      add(p, "key", dt, {tokens, n, dk});
      add(p, "keyCacheRef", dt, {nb, bs, 1, dk}, true);
      addIndex(p, "slotMapping", it, {b * n}, slots, nb * bs);
      add(p, "value", dt, {tokens, n, dv});
      add(p, "valueCacheRef", dt, {nb, bs, 1, dv}, true);
      addIndex(p, "compressLensOptional", it, {b * n}, lens, s);
      addIndex(p, "compressSeqOffsetOptional", it, {b * n}, offsets, s)
          .present = sub != 0;
      addIndex(p, "seqLensOptional", it, {b}, seq, s);
    }
  } else {
    int64_t nb = (t + bs - 1) / bs + extra;
    const bool nz = scenario == 2;
    if (nz) {
      cacheMode = "PA_NZ";
      const int64_t e = std::max<int64_t>(32 / es, 1);
      dk = e * (1 + in.h(5) % 2);
      dv = e * (1 + in.h(6) % 2);
      add(p, "key", dt, {t, n, dk});
      add(p, "keyCacheRef", dt, {nb, n * dk / e, bs, e}, true);
    } else {
      add(p, "key", dt, {t, n, dk});
      add(p, "keyCacheRef", dt, {nb, bs, n, dk}, true);
    }
    addIndex(p, "slotMapping", it, {t}, distinct(rng, t, nb * bs), nb * bs);
    if (scenario == 1) { // key only: value and its cache 0-D
      add(p, "value", dt, {});
      add(p, "valueCacheRef", dt, {}, true);
    } else if (nz) {
      const int64_t e = std::max<int64_t>(32 / es, 1);
      add(p, "value", dt, {t, n, dv});
      add(p, "valueCacheRef", dt, {nb, n * dv / e, bs, e}, true);
    } else {
      add(p, "value", dt, {t, n, dv});
      add(p, "valueCacheRef", dt, {nb, bs, n, dv}, true);
    }
    // The optional index tensors, absent (an edit may pass them).
    addIndex(p, "compressLensOptional", it, {t}, {}, t).present = false;
    addIndex(p, "compressSeqOffsetOptional", it, {t}, {}, t).present = false;
    addIndex(p, "seqLensOptional", it, {1}, {t}, t).present = false;
  }
  ArraySpec strides{"stridesOptional", {}, false, 0};
  ArraySpec offsets{"offsetsOptional", {}, false, 0};
  finalize(p);
  if (scenario == 3) {
    // Nct: rows of key/value at offset + i * stride in a larger buffer.
    scatterMode = "Nct";
    const int64_t padK = in.h(12) % 3, padV = in.h(13) % 3;
    const int64_t offK = in.h(14) % 4, offV = (in.h(14) >> 2) % 4;
    const int64_t rowK = n * dk, rowV = n * dv;
    strides = {"stridesOptional", {rowK + padK, rowV + padV}, true, rowK};
    offsets = {"offsetsOptional", {offK, offV}, true, t};
    p.tensors[0].storage = {offK + (t - 1) * (rowK + padK) + rowK};
    p.tensors[3].storage = {offV + (t - 1) * (rowV + padV) + rowV};
  }
  if (cacheMode && std::strcmp(cacheMode, "PA_NZ") == 0) {
    p.tensors[1].format = ACL_FORMAT_FRACTAL_NZ;
    p.tensors[4].format = ACL_FORMAT_FRACTAL_NZ;
  }
  p.arrays = {strides, offsets};
  p.strings = {cacheMode, scatterMode};
  return p;
}

//===----------------------------------------------------------------------===//
// GatherPaKvCache
//===----------------------------------------------------------------------===//

/// Gather: tensors keyCache, valueCache, blockTables, seqLens, keyRef,
/// valueRef, seqOffset; ints isSeqLensCumsum; strings cacheMode.
Problem buildGather(const Input &in) {
  Problem p;
  Lcg rng(in.h(9));
  const int mode = in.h(0) % 4; // "Norm", "PA_NZ", null, ""
  const bool nz = mode == 1;
  const aclDataType dt = dtypeOf(in.h(1), kKvDtypes);
  const aclDataType it = indexDtype(in.h(2));
  const int64_t b = 1 + in.h(3) % 3, n = 1 + in.h(4) % 3;
  const int64_t es = std::max<int64_t>(aclDataTypeSize(dt), 1);
  const int64_t e = std::max<int64_t>(32 / es, 1);
  int64_t dk = kHeadDims[in.h(5) % 6];
  int64_t dv = in.h(6) ? kHeadDims[in.h(6) % 6] : dk;
  if (nz) {
    dk = e * (1 + in.h(5) % 2);
    dv = e * (1 + in.h(6) % 2);
  }
  const int64_t bs = kBlockSizes[in.h(7) % 5];
  const bool cumsum = in.h(8) & 1;
  const bool withOffset = in.h(8) & 2;
  const int64_t maxBlocks = 1 + in.h(10) % 3;
  const int64_t nb = b * maxBlocks + in.h(11) % 3;

  std::vector<int64_t> lens(static_cast<size_t>(b)), offs(static_cast<size_t>(b));
  int64_t tokens = 0;
  for (size_t i = 0; i < lens.size(); ++i) {
    lens[i] = rng.below(maxBlocks * bs + 1);
    offs[i] = withOffset ? rng.below(bs) : 0;
    tokens += lens[i];
  }
  if (tokens == 0) {
    lens[0] = 1;
    tokens = 1;
  }
  std::vector<int64_t> seq = lens;
  if (cumsum) {
    seq.assign(1, 0);
    for (int64_t l : lens)
      seq.push_back(seq.back() + l);
  }
  if (nz) {
    add(p, "keyCache", dt, {nb, n * dk / e, bs, e});
    add(p, "valueCache", dt, {nb, n * dv / e, bs, e});
  } else {
    add(p, "keyCache", dt, {nb, bs, n, dk});
    add(p, "valueCache", dt, {nb, bs, n, dv});
  }
  addIndex(p, "blockTables", it, {b, maxBlocks},
           distinct(rng, b * maxBlocks, nb), nb);
  addIndex(p, "seqLens", it, {static_cast<int64_t>(seq.size())}, seq,
           maxBlocks * bs);
  if (nz) {
    add(p, "keyRef", dt, {tokens, n * dk}, true);
    add(p, "valueRef", dt, {tokens, n * dv}, true);
  } else {
    add(p, "keyRef", dt, {tokens, n, dk}, true);
    add(p, "valueRef", dt, {tokens, n, dv}, true);
  }
  addIndex(p, "seqOffsetOptional", it, {b}, offs, bs).present = withOffset;
  finalize(p);
  if (nz) {
    p.tensors[0].format = ACL_FORMAT_FRACTAL_NZ;
    p.tensors[1].format = ACL_FORMAT_FRACTAL_NZ;
  }
  p.ints = {{"isSeqLensCumsum", cumsum}};
  p.strings = {mode == 0 ? "Norm" : mode == 1 ? "PA_NZ" : mode == 2 ? nullptr : ""};
  return p;
}

//===----------------------------------------------------------------------===//
// IncreFlashAttentionV4
//===----------------------------------------------------------------------===//

/// IFA: tensors query, attentionOut, pseShift, attenMask, antiquantScale,
/// antiquantOffset, blocktable, kvPaddingSize, dequantScale1, quantScale1,
/// dequantScale2, quantScale2, quantOffset2, then listLength keys and as
/// many values; arrays actualSeqLengths; ints numHeads, numKeyValueHeads,
/// blockSize, innerPrecise; reals scaleValue; strings inputLayout.
Problem buildIfa(const Input &in) {
  Problem p;
  Lcg rng(in.h(9));
  const int layout = in.h(0) % 3; // BSH, BNSD, BSND
  const int64_t b = 1 + in.h(1) % 3, nkv = 1 + in.h(2) % 2;
  const int64_t n = nkv * (1 + in.h(3) % 2);
  const int64_t headDims[] = {16, 32, 8, 64};
  const int64_t d = headDims[in.h(4) % 4];
  const int64_t s = 1 + in.h(5) % 16;
  const aclDataType dt = dtypeOf(in.h(6), {ACL_FLOAT16, ACL_BF16});
  const int kvMode = in.h(7) % 3; // contiguous, list, paged
  const bool int8Kv = in.h(12) & 1;
  const aclDataType kvt = int8Kv ? ACL_INT8 : dt;
  const int64_t bs = (int8Kv ? 32 : 16) * (1 + in.h(8) % 2);
  const bool cache4d = layout == 1 && (in.h(8) & 2);

  auto qShape = [&]() -> std::vector<int64_t> {
    if (layout == 0)
      return {b, 1, n * d};
    if (layout == 1)
      return {b, n, 1, d};
    return {b, 1, n, d};
  };
  auto kvShape = [&](int64_t batch, int64_t len) -> std::vector<int64_t> {
    if (layout == 0)
      return {batch, len, nkv * d};
    if (layout == 1)
      return {batch, nkv, len, d};
    return {batch, len, nkv, d};
  };

  std::vector<int64_t> lens(static_cast<size_t>(b));
  for (auto &l : lens)
    l = rng.below(s + 1);
  int64_t width = s; // the KV length pse and mask must cover
  const bool asl = kvMode == 2 || (in.h(10) & 1);
  add(p, "query", dt, qShape());
  add(p, "attentionOut", dt, qShape(), true);
  // pse and mask: filled in below once the width is known.
  add(p, "pseShift", dt, {}).present = false;
  add(p, "attenMask", ACL_BOOL, {}).present = false;
  add(p, "antiquantScale", dt, {2, nkv * d}).present = int8Kv;
  add(p, "antiquantOffset", dt, {2, nkv * d}).present =
      int8Kv && (in.h(12) & 2);
  const int64_t maxBlocks = (s + bs - 1) / bs;
  const int64_t nb = b * maxBlocks + in.h(11) % 2;
  addIndex(p, "blocktable", ACL_INT32, {b, maxBlocks},
           distinct(rng, b * maxBlocks, nb), nb)
      .present = kvMode == 2;
  addIndex(p, "kvPaddingSize", ACL_INT64, {1}, {rng.below(s)}, s).present =
      kvMode == 0 && asl && (in.h(13) & 1);
  for (const char *name : {"dequantScale1", "quantScale1", "dequantScale2",
                           "quantScale2", "quantOffset2"})
    add(p, name, ACL_FLOAT, {1}).present = false;
  if (kvMode == 2) {
    width = maxBlocks * bs;
    std::vector<int64_t> cache =
        cache4d ? std::vector<int64_t>{nb, nkv, bs, d}
                : std::vector<int64_t>{nb, bs, nkv * d};
    add(p, "key", kvt, cache);
    add(p, "value", kvt, cache);
  } else if (kvMode == 1) {
    p.listLength = b;
    width = 0;
    std::vector<int64_t> len(static_cast<size_t>(b));
    for (auto &l : len) {
      l = 1 + rng.below(s);
      width = std::max(width, l);
    }
    for (int64_t i = 0; i < b; ++i)
      add(p, "key", kvt, kvShape(1, len[static_cast<size_t>(i)]));
    for (int64_t i = 0; i < b; ++i)
      add(p, "value", kvt, kvShape(1, len[static_cast<size_t>(i)]));
    for (size_t i = 0; i < lens.size(); ++i)
      lens[i] = std::min(lens[i], len[i]);
  } else {
    add(p, "key", kvt, kvShape(b, s));
    add(p, "value", kvt, kvShape(b, s));
  }
  TensorSpec &pse = p.tensors[2];
  pse.dims = {in.h(11) & 2 ? b : 1, n, 1, width + (in.h(13) >> 4) % 3};
  pse.present = in.h(11) & 4;
  TensorSpec &mask = p.tensors[3];
  const aclDataType maskDtypes[] = {ACL_BOOL, ACL_INT8, ACL_UINT8};
  mask.dtype = maskDtypes[(in.h(13) >> 1) % 3];
  mask.dims = (in.h(11) & 8) ? std::vector<int64_t>{b, 1, 1, width}
                             : std::vector<int64_t>{b, width};
  mask.present = in.h(11) & 16;
  mask.fill = in.h(14) & 1 ? 0 : 1;
  finalize(p);
  p.arrays = {{"actualSeqLengths", lens, asl, s}};
  p.ints = {{"numHeads", n},
            {"numKeyValueHeads", nkv},
            {"blockSize", kvMode == 2 ? bs : 0},
            {"innerPrecise", in.h(14) >> 7}};
  p.reals = {1.0 / std::sqrt(static_cast<double>(d))};
  p.strings = {layout == 0 ? "BSH" : layout == 1 ? "BNSD" : "BSND"};
  return p;
}

//===----------------------------------------------------------------------===//
// NsaCompressWithCache
//===----------------------------------------------------------------------===//

/// NSA: tensors input, weight, slotMapping, blockTable, outputCache; arrays
/// actSeqLen; ints compressBlockSize, compressStride, actSeqLenType,
/// pageBlockSize; strings layout.
Problem buildNsa(const Input &in) {
  Problem p;
  Lcg rng(in.h(9));
  const aclDataType dt = dtypeOf(in.h(0), {ACL_FLOAT16, ACL_BF16});
  const int64_t n = 1 + in.h(1) % 3, d = 16 * (1 + in.h(2) % 2);
  const int64_t windows[][2] = {{32, 16}, {16, 16}, {64, 32},
                                {64, 16}, {32, 32}, {48, 16}};
  const int64_t cbs = windows[in.h(3) % 6][0], stride = windows[in.h(3) % 6][1];
  const int64_t page = in.h(4) & 1 ? 128 : 64;
  const int64_t b = 1 + in.h(5) % 3, maxBlocks = 1 + in.h(6) % 2;
  const int64_t pages = b * maxBlocks + in.h(8) % 2;
  const int64_t slots = b + in.h(10) % 3;
  std::vector<int64_t> lens(static_cast<size_t>(b));
  for (auto &l : lens) {
    // Mostly lengths that end a window (those write a slot).
    const int64_t cap = maxBlocks * page;
    const int64_t w = (cap - cbs) / stride + 1;
    l = rng.below(4) ? cbs + stride * rng.below(w) : rng.below(cap + 1);
  }
  add(p, "input", dt, {pages, page, n, d});
  add(p, "weight", dt, {cbs, n});
  const aclDataType slotDtype =
      in.h(7) >= 0x80 ? kAnyDtypes[in.h(7) % std::size(kAnyDtypes)] : ACL_INT32;
  addIndex(p, "slotMapping", slotDtype, {b},
           distinct(rng, b, slots), slots);
  addIndex(p, "blockTableOptional", ACL_INT32, {b, maxBlocks},
           distinct(rng, b * maxBlocks, pages), pages);
  add(p, "outputCache", dt, {slots, n, d}, true);
  finalize(p);
  p.arrays = {{"actSeqLenOptional", lens, true, maxBlocks * page}};
  p.ints = {{"compressBlockSize", cbs},
            {"compressStride", stride},
            {"actSeqLenType", 1},
            {"pageBlockSize", page}};
  const char *layouts[] = {nullptr, "TND", "BSND", "BSH"};
  p.strings = {layouts[in.h(11) % 4]};
  return p;
}

//===----------------------------------------------------------------------===//
// FlashAttentionUnpaddingScoreGradV5
//===----------------------------------------------------------------------===//

/// FAG: tensors in the C signature's order (query, queryRope, keyIn,
/// keyInRope, value, dy, pseShift, dropMask, paddingMask, attenMask,
/// softmaxMax, softmaxSum, softmaxIn, attentionIn, sinkIn, dqOut,
/// dqRopeOut, dkOut, dkRopeOut, dvOut, dpseOut, dsinkOut); arrays prefix,
/// actualSeqQLen, actualSeqKvLen, qStartIdx, kvStartIdx; ints preTokens,
/// nextTokens, headNum, innerPrecise, sparseMode, pseType; reals
/// scaleValue, keepProb; strings inputLayout, softmaxInLayout.
Problem buildFag(const Input &in) {
  Problem p;
  Lcg rng(in.h(9));
  const aclDataType dt = dtypeOf(in.h(0), {ACL_FLOAT16, ACL_BF16, ACL_FLOAT});
  const int64_t b = 1 + in.h(1) % 2, n2 = 1 + in.h(2) % 2;
  const int64_t n1 = n2 * (1 + in.h(3) % 2);
  const int64_t headDims[] = {16, 8, 32, 64};
  const int64_t d = headDims[in.h(4) % 4];
  const int64_t dv = in.h(5) & 1 ? d / 2 : d;
  std::vector<int64_t> cq, ck;
  int64_t t1 = 0, t2 = 0, sqMax = 0, skvMax = 0, pairs = 0;
  for (int64_t i = 0; i < b; ++i) {
    const int64_t sq = 1 + rng.below(8), skv = 1 + rng.below(8);
    t1 += sq;
    t2 += skv;
    sqMax = std::max(sqMax, sq);
    skvMax = std::max(skvMax, skv);
    pairs += sq * skv;
    cq.push_back(t1);
    ck.push_back(t2);
  }
  // sparseMode with a mask form it accepts: 0 none or explicit, 1 explicit,
  // 2/3/4 compressed 2048 x 2048.
  const int maskChoice = in.h(6) % 4;
  const int64_t sparseModes[] = {0, 0, 1, 2};
  const int64_t sparse = sparseModes[maskChoice];
  const bool dropout = in.h(7) & 1, sink = in.h(7) & 2;
  add(p, "query", dt, {t1, n1, d});
  add(p, "queryRope", dt, {t1, n1, 8}).present = false;
  add(p, "keyIn", dt, {t2, n2, d});
  add(p, "keyInRope", dt, {t2, n2, 8}).present = false;
  add(p, "value", dt, {t2, n2, dv});
  add(p, "dy", dt, {t1, n1, dv});
  add(p, "pseShiftOptional", dt, {b, n1, sqMax, skvMax}).present = false;
  add(p, "dropMaskOptional", ACL_UINT8, {(n1 * pairs + 7) / 8}).present = dropout;
  p.tensors.back().fill = in.h(8);
  add(p, "paddingMaskOptional", dt, {1}).present = false;
  TensorSpec &mask = add(p, "attenMaskOptional", ACL_BOOL,
                         maskChoice == 3 ? std::vector<int64_t>{2048, 2048}
                                         : std::vector<int64_t>{sqMax, skvMax});
  mask.present = maskChoice != 0;
  mask.fill = in.h(8) & 1;
  add(p, "softmaxMaxOptional", ACL_FLOAT, {t1, n1, 8});
  add(p, "softmaxSumOptional", ACL_FLOAT, {t1, n1, 8});
  p.tensors.back().fill = 0x3f; // a positive sum
  add(p, "softmaxInOptional", ACL_FLOAT, {t1, n1, 8}).present = false;
  add(p, "attentionInOptional", dt, {t1, n1, dv});
  add(p, "sinkInOptional", ACL_FLOAT, {n1}).present = sink;
  add(p, "dqOut", dt, {t1, n1, d}, true);
  add(p, "dqRopeOut", dt, {t1, n1, 8}, true).present = false;
  add(p, "dkOut", dt, {t2, n2, d}, true);
  add(p, "dkRopeOut", dt, {t2, n2, 8}, true).present = false;
  add(p, "dvOut", dt, {t2, n2, dv}, true);
  add(p, "dpseOut", dt, {b, n1, sqMax, skvMax}, true).present = false;
  add(p, "dsinkOut", ACL_FLOAT, {n1}, true).present = sink;
  finalize(p);
  std::vector<int64_t> zeros(static_cast<size_t>(b), 0);
  p.arrays = {{"prefixOptional", zeros, false, skvMax},
              {"actualSeqQLenOptional", cq, true, t1},
              {"actualSeqKvLenOptional", ck, true, t2},
              {"qStartIdxOptional", zeros, false, t1},
              {"kvStartIdxOptional", zeros, false, t2}};
  p.ints = {{"preTokens", 65536},
            {"nextTokens", maskChoice == 3 ? 0 : 65536},
            {"headNum", n1},
            {"innerPrecise", 0},
            {"sparseMode", sparse},
            {"pseType", 1}};
  p.reals = {1.0 / std::sqrt(static_cast<double>(d)), dropout ? 0.5 : 1.0};
  p.strings = {"TND", in.h(10) & 1 ? "" : "same_as_input"};
  return p;
}

//===----------------------------------------------------------------------===//
// Edits
//===----------------------------------------------------------------------===//

std::vector<TensorSpec *> indexTensors(Problem &p) {
  std::vector<TensorSpec *> out;
  for (TensorSpec &t : p.tensors)
    if (t.isIndex)
      out.push_back(&t);
  return out;
}

/// The same shape laid out in another order (a permutation of two axes, or
/// padding between rows), with storage to match: a truthful descriptor that
/// is not contiguous.
void relayout(TensorSpec &t, uint8_t y) {
  const size_t rank = t.dims.size();
  if (rank == 0)
    return;
  std::vector<size_t> order(rank);
  for (size_t i = 0; i < rank; ++i)
    order[i] = i;
  if (rank >= 2 && (y & 1))
    std::swap(order[y % rank], order[(y / 2 + 1) % rank]);
  const int64_t pad = (y >> 4) % 4;
  int64_t stride = 1, extent = 1;
  for (size_t k = rank; k-- > 0;) {
    const size_t axis = order[k];
    t.strides[axis] = stride;
    const int64_t dim = std::max<int64_t>(t.dims[axis], 1);
    stride = wrapAdd(wrapMul(stride, dim), k + 1 == rank ? 0 : pad);
  }
  extent = 1;
  for (size_t i = 0; i < rank; ++i)
    if (t.dims[i] > 0)
      extent = wrapAdd(extent, wrapMul(t.dims[i] - 1, t.strides[i]));
  if (numelOf(t.dims) == 0)
    extent = 0;
  t.offset = (y >> 2) % 3;
  t.storage = {wrapAdd(t.offset, extent)};
}

void lie(TensorSpec &t, uint8_t x, uint8_t y) {
  const size_t rank = t.dims.size();
  const size_t axis = rank ? y % rank : 0;
  const int64_t storeN = std::max<int64_t>(numelOf(t.storage), 0);
  switch (x % 15) {
  case 0: // storage smaller than the view
    t.storage = {std::max<int64_t>(storeN - 1 - y % 3, 0)};
    break;
  case 1: // offset at or near the end of the storage
    t.offset = storeN - y % 4;
    break;
  case 2:
    t.offset = interesting(y, storeN);
    break;
  case 3: { // a zero, negative, unit or huge stride
    if (!rank)
      break;
    const int64_t s = t.strides[axis];
    const int64_t table[] = {0,          -1,
                             wrapMul(-1, s), wrapAdd(s, 1),
                             INT64_MAX / 4,  -(INT64_MAX / 4),
                             wrapMul(2, s),  int64_t{1} << 40};
    t.strides[axis] = table[(y / std::max<size_t>(rank, 1)) % 8];
    break;
  }
  case 4:
    t.nullData = true;
    break;
  case 5: // a dim grown, the storage not
    if (rank)
      t.dims[axis] = wrapAdd(t.dims[axis], 1 + (y >> 4) % 2);
    break;
  case 6: { // another dim, the descriptor truthful
    if (!rank)
      break;
    const int64_t dim = t.dims[axis];
    const int64_t table[] = {0, 1, -1, wrapAdd(dim, -1), wrapAdd(dim, 1),
                             wrapMul(2, dim), 3, int64_t{1} << 33};
    t.dims[axis] = table[(y >> 3) % 8];
    t.strides = contiguous(t.dims);
    t.storage = {std::max<int64_t>(numelOf(t.dims), 0)};
    break;
  }
  case 7: // another rank, truthful
    if (y & 1) {
      t.dims.insert(t.dims.begin() + static_cast<long>(rank ? axis : 0), 1);
    } else if (rank) {
      t.dims.erase(t.dims.begin() + static_cast<long>(axis));
    }
    t.strides = contiguous(t.dims);
    t.storage = {std::max<int64_t>(numelOf(t.dims), 0)};
    break;
  case 8: // another dtype, storage bytes to match
    t.dtype = kAnyDtypes[y % std::size(kAnyDtypes)];
    break;
  case 9:
    t.format = kFormats[y % std::size(kFormats)];
    break;
  case 10:
    t.present = !t.present;
    break;
  case 11:
    relayout(t, y);
    break;
  case 12: // strides of the wrong length: fewer dims given than strides
    if (rank)
      t.dims.pop_back();
    break;
  case 13: // storage dims as two dims of the same product, or with a zero
    if (y & 1)
      t.storage = {1, storeN};
    else
      t.storage = {storeN, 0};
    break;
  default: // a large truthful storage: the view is a window in it
    t.storage = {wrapAdd(storeN, y << 4)};
    t.offset = y;
    break;
  }
}

void applyEdit(Problem &p, uint8_t kind, uint8_t target, uint8_t x,
               uint8_t y) {
  switch (kind % 8) {
  case 0:
  case 1: { // one index element
    auto idx = indexTensors(p);
    if (idx.empty())
      return;
    TensorSpec &t = *idx[target % idx.size()];
    const int64_t n = std::max<int64_t>(numelOf(t.dims), 1);
    const size_t at = static_cast<size_t>(x % std::min<int64_t>(n, 256));
    if (t.values.size() <= at)
      t.values.resize(at + 1, 0);
    t.values[at] = kind % 8 == 1 && !t.values.empty() && (y & 1)
                       ? t.values[(at + 1) % t.values.size()] // a duplicate
                       : interesting(y, t.bound);
    return;
  }
  case 2:
  case 3: // a lie about one tensor (two kinds: the likeliest edit)
    lie(p.tensors[target % p.tensors.size()], x, y);
    return;
  case 4: { // an integer attribute
    if (p.ints.empty())
      return;
    IntAttr &a = p.ints[target % p.ints.size()];
    a.value = x & 1 ? interesting(y, a.value) : wrapAdd(a.value, y % 5 - 2);
    return;
  }
  case 5: { // a float attribute, or a string
    if ((x & 1) && !p.reals.empty()) {
      const double table[] = {0.0,
                              -0.0,
                              -1.0,
                              std::numeric_limits<double>::quiet_NaN(),
                              std::numeric_limits<double>::infinity(),
                              -std::numeric_limits<double>::infinity(),
                              1e308,
                              5e-324,
                              1e-30,
                              0.5,
                              2.0,
                              1e6,
                              1.0 + 1e-12};
      p.reals[target % p.reals.size()] = table[y % std::size(table)];
    } else if (!p.strings.empty()) {
      p.strings[target % p.strings.size()] = kStrings[y % std::size(kStrings)];
    }
    return;
  }
  case 6: { // an int array
    if (p.arrays.empty())
      return;
    ArraySpec &a = p.arrays[target % p.arrays.size()];
    switch (x % 5) {
    case 0:
      if (a.values.empty())
        a.values.push_back(0);
      a.values[(x >> 3) % a.values.size()] = interesting(y, a.bound);
      break;
    case 1:
      a.values.resize(y % 9, a.values.empty() ? 0 : a.values.back());
      break;
    case 2:
      a.present = !a.present;
      break;
    case 3:
      std::fill(a.values.begin(), a.values.end(), interesting(y, a.bound));
      break;
    default:
      std::reverse(a.values.begin(), a.values.end());
      break;
    }
    return;
  }
  default: { // a fill pattern of a data tensor, or a whole index tensor
    TensorSpec &t = p.tensors[target % p.tensors.size()];
    if (t.isIndex && (x & 1))
      std::fill(t.values.begin(), t.values.end(), interesting(y, t.bound));
    else
      t.fill = y;
    return;
  }
  }
}

//===----------------------------------------------------------------------===//
// Guarded buffers and the call
//===----------------------------------------------------------------------===//

/// `bytes` of memory whose last byte abuts a PROT_NONE page, with another
/// PROT_NONE page before the first page: reads and writes past the end
/// fault, as do those more than a page's remainder before the start.
class GuardedBuffer {
public:
  explicit GuardedBuffer(size_t bytes) : bytes(bytes) {
    const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    const size_t body = (bytes + page - 1) / page * page;
    mapped = body + 2 * page;
    void *m = mmap(nullptr, mapped, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) {
      std::perror("tile-fuzz-aclnn: mmap");
      std::abort();
    }
    base = static_cast<uint8_t *>(m);
    if (body && mprotect(base + page, body, PROT_READ | PROT_WRITE) != 0) {
      std::perror("tile-fuzz-aclnn: mprotect");
      std::abort();
    }
    data = base + page + body - bytes;
  }
  GuardedBuffer(const GuardedBuffer &) = delete;
  GuardedBuffer &operator=(const GuardedBuffer &) = delete;
  ~GuardedBuffer() { munmap(base, mapped); }

  uint8_t *data;
  size_t bytes;

private:
  uint8_t *base;
  size_t mapped;
};

/// One tensor made: its buffer and handle.
struct Made {
  const TensorSpec *spec;
  std::unique_ptr<GuardedBuffer> buffer;
  aclTensor *handle = nullptr;
  std::vector<uint8_t> before;
};

/// Writes the index values through the view (elements the view maps
/// outside the storage are skipped: the call must refuse that view).
void writeIndex(const TensorSpec &t, GuardedBuffer &buf, int64_t storeN) {
  const int64_t es = t.dtype == ACL_INT64 ? 8 : 4;
  const int64_t n = numelOf(t.dims);
  if (n <= 0 || n > kMaxIndexElements || t.strides.size() != t.dims.size())
    return;
  for (int64_t i = 0; i < n; ++i) {
    int64_t rem = i, pos = t.offset;
    bool ok = true;
    for (size_t k = t.dims.size(); k-- > 0;) {
      const int64_t idx = rem % t.dims[k];
      rem /= t.dims[k];
      int64_t step;
      if (__builtin_mul_overflow(idx, t.strides[k], &step) ||
          __builtin_add_overflow(pos, step, &pos))
        ok = false;
    }
    if (!ok || pos < 0 || pos >= storeN)
      continue;
    const int64_t v =
        static_cast<size_t>(i) < t.values.size() ? t.values[static_cast<size_t>(i)] : 0;
    if (es == 8) {
      std::memcpy(buf.data + pos * 8, &v, 8);
    } else {
      const auto w = static_cast<int32_t>(v);
      std::memcpy(buf.data + pos * 4, &w, 4);
    }
  }
}

/// Allocates and describes every present tensor; false when a storage is
/// too large to allocate (the input is skipped).
bool makeTensors(const Problem &p, std::vector<Made> &out) {
  out.resize(p.tensors.size());
  for (size_t i = 0; i < p.tensors.size(); ++i) {
    const TensorSpec &t = p.tensors[i];
    Made &m = out[i];
    m.spec = &t;
    if (!t.present)
      continue;
    int64_t storeN = 1;
    for (int64_t d : t.storage)
      if (storeN >= 0 && (d < 0 || __builtin_mul_overflow(storeN, d, &storeN)))
        storeN = -1;
    const int64_t es = std::max<int64_t>(aclDataTypeSize(t.dtype), 1);
    int64_t bytes = 0;
    if (storeN > 0 && (__builtin_mul_overflow(storeN, es, &bytes) ||
                       bytes > kMaxStorageBytes))
      return false;
    m.buffer = std::make_unique<GuardedBuffer>(static_cast<size_t>(bytes));
    std::memset(m.buffer->data, t.fill, static_cast<size_t>(bytes));
    if (t.isIndex && (t.dtype == ACL_INT32 || t.dtype == ACL_INT64))
      writeIndex(t, *m.buffer, storeN);
    m.before.assign(m.buffer->data, m.buffer->data + bytes);
    m.handle = aclCreateTensor(
        t.dims.data(), t.dims.size(), t.dtype,
        t.strides.empty() ? nullptr : t.strides.data(), t.offset, t.format, t.storage.data(), t.storage.size(),
        t.nullData ? nullptr : m.buffer->data);
  }
  return true;
}

[[noreturn]] void finding(const char *op, const char *what, const char *name) {
  const char *msg = aclGetRecentErrMsg();
  std::fprintf(stderr, "tile-fuzz-aclnn: %s: %s%s%s (last message: %s)\n", op,
               what, name ? ": " : "", name ? name : "", msg ? msg : "none");
  std::abort();
}

/// Every buffer (or, after a success, every input buffer) as it was.
void checkUnchanged(const char *op, const std::vector<Made> &made,
                    bool inputsOnly) {
  for (const Made &m : made) {
    if (!m.buffer || !m.buffer->bytes || (inputsOnly && m.spec->output))
      continue;
    if (std::memcmp(m.before.data(), m.buffer->data, m.buffer->bytes) != 0)
      finding(op,
              inputsOnly ? "a successful call wrote an input buffer"
                         : "a call that returned an error wrote a buffer",
              m.spec->name);
  }
}

/// The buffers as they are now: what a later failing call must leave.
void snapshot(std::vector<Made> &made) {
  for (Made &m : made)
    if (m.buffer)
      m.before.assign(m.buffer->data, m.buffer->data + m.buffer->bytes);
}

aclTensor *at(const std::vector<Made> &m, size_t i) { return m[i].handle; }

struct Arrays {
  std::vector<aclIntArray *> arrays;
  explicit Arrays(const Problem &p) {
    for (const ArraySpec &a : p.arrays)
      arrays.push_back(a.present ? aclCreateIntArray(a.values.data(), a.values.size())
                                 : nullptr);
  }
  ~Arrays() {
    for (aclIntArray *a : arrays)
      aclDestroyIntArray(a);
  }
  aclIntArray *operator[](size_t i) const { return arrays[i]; }
};

/// Writable copies of the string attributes (the C API takes char *).
struct Strings {
  std::vector<std::optional<std::string>> owned;
  explicit Strings(const Problem &p) {
    for (const char *s : p.strings)
      owned.push_back(s ? std::optional<std::string>(s) : std::nullopt);
  }
  char *operator[](size_t i) { return owned[i] ? owned[i]->data() : nullptr; }
};

using Phase2 = aclnnStatus (*)(void *, uint64_t, aclOpExecutor *, aclrtStream);

/// Phase 1 of operator `op` over the made tensors.
aclnnStatus phase1(int op, Problem &p, const std::vector<Made> &m,
                   uint64_t *ws, aclOpExecutor **exec) {
  Arrays arr(p);
  Strings str(p);
  switch (op) {
  case 0:
    return aclnnScatterPaKvCacheGetWorkspaceSize(
        at(m, 0), at(m, 1), at(m, 2), at(m, 3), at(m, 4), at(m, 5), at(m, 6),
        at(m, 7), str[0], str[1], arr[0], arr[1], ws, exec);
  case 1:
    return aclnnGatherPaKvCacheGetWorkspaceSize(
        at(m, 0), at(m, 1), at(m, 2), at(m, 3), at(m, 4), at(m, 5), at(m, 6),
        str[0], p.ints[0].value != 0, ws, exec);
  case 2: {
    // Keys and values follow the 13 fixed tensors.
    std::vector<const aclTensor *> keys, values;
    for (size_t i = 13; i < m.size(); ++i)
      (i < 13 + static_cast<size_t>(p.listLength) ? keys : values)
          .push_back(m[i].handle);
    aclTensorList *k = aclCreateTensorList(keys.data(), keys.size());
    aclTensorList *v = aclCreateTensorList(values.data(), values.size());
    aclnnStatus rc = aclnnIncreFlashAttentionV4GetWorkspaceSize(
        at(m, 0), k, v, at(m, 2), at(m, 3), arr[0], at(m, 8), at(m, 9),
        at(m, 10), at(m, 11), at(m, 12), at(m, 4), at(m, 5), at(m, 6),
        at(m, 7), p.ints[0].value, p.reals[0], str[0], p.ints[1].value,
        p.ints[2].value, p.ints[3].value, at(m, 1), ws, exec);
    aclDestroyTensorList(k);
    aclDestroyTensorList(v);
    return rc;
  }
  case 3:
    return aclnnNsaCompressWithCacheGetWorkspaceSize(
        at(m, 0), at(m, 1), at(m, 2), arr[0], at(m, 3), str[0],
        p.ints[0].value, p.ints[1].value, p.ints[2].value, p.ints[3].value,
        at(m, 4), ws, exec);
  default:
    return aclnnFlashAttentionUnpaddingScoreGradV5GetWorkspaceSize(
        at(m, 0), at(m, 1), at(m, 2), at(m, 3), at(m, 4), at(m, 5), at(m, 6),
        at(m, 7), at(m, 8), at(m, 9), at(m, 10), at(m, 11), at(m, 12),
        at(m, 13), at(m, 14), arr[0], arr[1], arr[2], arr[3], arr[4],
        p.reals[0], p.reals[1], p.ints[0].value, p.ints[1].value,
        p.ints[2].value, str[0], p.ints[3].value, p.ints[4].value,
        p.ints[5].value, str[1], at(m, 15), at(m, 16), at(m, 17), at(m, 18),
        at(m, 19), at(m, 20), at(m, 21), ws, exec);
  }
}

const Phase2 kPhase2Of[] = {aclnnScatterPaKvCache, aclnnGatherPaKvCache,
                            aclnnIncreFlashAttentionV4,
                            aclnnNsaCompressWithCache,
                            aclnnFlashAttentionUnpaddingScoreGradV5};
const char *const kOpNames[] = {
    "aclnnScatterPaKvCache", "aclnnGatherPaKvCache",
    "aclnnIncreFlashAttentionV4", "aclnnNsaCompressWithCache",
    "aclnnFlashAttentionUnpaddingScoreGradV5"};

/// How phase 2 is called (header byte 15).
enum class Phase2Kind {
  Plain,        ///< the default (null) stream
  Stream,       ///< a created stream, then aclrtSynchronizeStream
  Repeatable,   ///< made repeatable, run twice, destroyed
  NullWorkspace,///< workspace null (with its size)
  ShortSize,    ///< a workspace one byte short, its size said so
  NullExecutor, ///< phase 2 without the executor (then destroyed)
  Twice,        ///< run, then run the consumed handle again
  OtherOp,      ///< another operator's phase 2 (then destroyed)
  Destroy,      ///< destroyed unrun
};

aclrtStream fuzzStream() {
  static aclrtStream stream = [] {
    aclrtStream s = nullptr;
    if (aclrtCreateStream(&s) != ACL_SUCCESS)
      s = nullptr;
    return s;
  }();
  return stream;
}

void initialize() {
  static const bool done = [] {
    // Before the first call reads the options: no disk tier, one thread.
    setenv("TILEJIT_CACHE", "off", 1);
    setenv("TILEJIT_NUM_THREADS", "1", 0);
    (void)aclInit(nullptr);
    (void)aclrtSetDevice(0);
    return true;
  }();
  (void)done;
}

} // namespace

int aclnnOperators(const uint8_t *data, size_t size) {
  initialize();
  const Input in(data, size);
  const int op = in.op() % 5;
  Problem p;
  switch (op) {
  case 0: p = buildScatter(in); break;
  case 1: p = buildGather(in); break;
  case 2: p = buildIfa(in); break;
  case 3: p = buildNsa(in); break;
  default: p = buildFag(in); break;
  }
  for (size_t e = 0; e < in.editCount(); ++e)
    applyEdit(p, in.edit(e, 0), in.edit(e, 1), in.edit(e, 2), in.edit(e, 3));

  std::vector<Made> made;
  const bool ok = makeTensors(p, made);
  struct Destroy {
    std::vector<Made> &m;
    ~Destroy() {
      for (Made &x : m)
        aclDestroyTensor(x.handle);
    }
  } destroy{made};
  if (!ok)
    return 0;

  const char *name = kOpNames[op];
  uint64_t ws = 0;
  aclOpExecutor *exec = nullptr;
  (void)aclGetRecentErrMsg();
  const aclnnStatus rc1 = phase1(op, p, made, &ws, &exec);
  if (rc1 != ACLNN_SUCCESS) {
    if (exec)
      finding(name, "phase 1 failed but returned an executor", nullptr);
    checkUnchanged(name, made, false);
    return 0;
  }
  if (!exec)
    finding(name, "phase 1 succeeded without an executor", nullptr);
  if (ws > kMaxWorkspaceBytes) {
    aclDestroyAclOpExecutor(exec);
    return 0;
  }
  GuardedBuffer workspace(static_cast<size_t>(ws));
  const auto kind = static_cast<Phase2Kind>(in.h(15) % 9);
  const Phase2 run = kPhase2Of[op];
  aclrtStream stream = kind == Phase2Kind::Stream ? fuzzStream() : nullptr;
  void *wsData = ws ? workspace.data : nullptr;
  bool mustFail = false;
  aclnnStatus rc2 = ACLNN_SUCCESS;
  switch (kind) {
  case Phase2Kind::Repeatable:
    if (aclSetAclOpExecutorRepeatable(exec) != ACLNN_SUCCESS)
      finding(name, "a fresh executor could not be made repeatable", nullptr);
    rc2 = run(wsData, ws, exec, stream);
    if (rc2 == ACLNN_SUCCESS) {
      (void)aclrtSynchronizeStream(stream);
      checkUnchanged(name, made, true);
      snapshot(made);
      rc2 = run(wsData, ws, exec, stream);
    }
    break;
  case Phase2Kind::NullWorkspace:
    rc2 = run(nullptr, ws, exec, stream);
    mustFail = ws > 0;
    break;
  case Phase2Kind::ShortSize:
    if (ws > 0) {
      GuardedBuffer shorter(static_cast<size_t>(ws - 1));
      rc2 = run(shorter.data, ws - 1, exec, stream);
      mustFail = true;
      if (rc2 == ACLNN_SUCCESS)
        (void)aclrtSynchronizeStream(stream);
    } else {
      rc2 = run(wsData, ws, exec, stream);
    }
    break;
  case Phase2Kind::NullExecutor:
    rc2 = run(wsData, ws, nullptr, stream);
    mustFail = true;
    break;
  case Phase2Kind::OtherOp:
    rc2 = kPhase2Of[(op + 1) % 5](wsData, ws, exec, stream);
    mustFail = true;
    break;
  case Phase2Kind::Destroy:
    if (aclDestroyAclOpExecutor(exec) != ACLNN_SUCCESS)
      finding(name, "an unrun executor could not be destroyed", nullptr);
    checkUnchanged(name, made, false);
    return 0;
  default:
    rc2 = run(wsData, ws, exec, stream);
    if (kind == Phase2Kind::Twice && rc2 == ACLNN_SUCCESS) {
      (void)aclrtSynchronizeStream(stream);
      checkUnchanged(name, made, true);
      snapshot(made);
      if (run(wsData, ws, exec, stream) == ACLNN_SUCCESS)
        finding(name, "phase 2 ran a consumed executor", nullptr);
      checkUnchanged(name, made, false);
      return 0;
    }
    break;
  }
  const aclError sync = aclrtSynchronizeStream(stream);
  if (mustFail && rc2 == ACLNN_SUCCESS)
    finding(name, "phase 2 accepted a null or short workspace, a null "
                  "executor or another operator's executor",
            nullptr);
  // A refused phase 2 leaves the executor live, a repeatable one stays
  // live (the registry would refuse a consumed handle, never touch it).
  if (rc2 != ACLNN_SUCCESS || kind == Phase2Kind::Repeatable)
    aclDestroyAclOpExecutor(exec);
  if (rc2 != ACLNN_SUCCESS) {
    checkUnchanged(name, made, false);
    return 0;
  }
  (void)sync;
  checkUnchanged(name, made, true);
  return 0;
}

} // namespace tilejit::fuzz
