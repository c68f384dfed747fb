//===- ScatterPaKvCache.cpp - Validation, scenario choice and launch ------===//
//
// Section numbers refer to ../shared/spec/scatter_pa_kv_cache.md.
//
//===----------------------------------------------------------------------===//
#include "ops/scatter_pa_kv_cache/ScatterPaKvCache.h"

#include "ops/Embedded.h"
#include "ops/common/KernelLaunch.h"
#include "ops/common/KvCacheLayout.h"
#include "ops/host/KernelArgs.h"
#include "ops/host/Kernels.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <string_view>

namespace tilejit::ops {

using host::DataType;
using host::Status;
using host::TensorView;
namespace status = host::status;
using host::collapse;
using host::copyKind;
using host::elemType;
using host::FlatView;
using host::getKernel;
using host::indexKind;
using host::launchThreads;
using host::prepareAndRun;
using host::programsForBytes;

namespace {

const jit::KernelSource &source() {
  static const jit::KernelSource &src =
      embeddedKernel("ops/scatter_pa_kv_cache/scatter_pa_kv_cache.tile");
  return src;
}

/// The scenarios of section 4.
enum class Scenario { S1, S2, S3, S4, S5, S6 };
/// What the compressed scenarios do with a head (the kernel's MODE).
enum class HeadMode { Tail, Mean, Drop };

bool normLike(const char *mode) {
  return !mode || !*mode || std::string_view(mode) == "Norm";
}
bool noneLike(const char *mode) {
  return !mode || !*mode || std::string_view(mode) == "None";
}
bool is(const char *mode, std::string_view name) {
  return mode && std::string_view(mode) == name;
}

Status tiling(const auto &...parts) {
  return Status::error(status::InnerTilingError, parts...);
}
Status invalid(const auto &...parts) {
  return Status::error(status::ParamInvalid, parts...);
}

std::string shapeOf(const TensorView &t) {
  return host::shapeToString(t.shape);
}

/// "name: must be <rank>-D, got [..]" unless `t` has rank `rank`.
Status requireRank(const TensorView &t, const char *name, int64_t rank,
                   const char *why) {
  if (t.rank() != rank)
    return tiling(name, ": must be ", rank, "-D ", why, ", got ", shapeOf(t));
  return Status::ok();
}

/// Section 7, step 4: the dtype rules.
Status checkDtypes(const aclnn::ScatterPaKvCacheArgs &a) {
  auto kv = [](const TensorView &t, const char *name) {
    if (!isKvDataType(t.dtype))
      return invalid(name, ": dtype ", t.dtype,
                     " is not supported (expected one of ", kvDataTypeList(),
                     ")");
    return Status::ok();
  };
  if (Status s = kv(*a.key, "key"); !s)
    return s;
  if (Status s = kv(*a.keyCacheRef, "keyCacheRef"); !s)
    return s;
  if (!isIndexDataType(a.slotMapping->dtype))
    return invalid("slotMapping: dtype ", a.slotMapping->dtype,
                   " is not supported (expected INT32 or INT64)");
  if (a.keyCacheRef->dtype != a.key->dtype)
    return invalid("keyCacheRef: dtype ", a.keyCacheRef->dtype,
                   " must equal key's dtype ", a.key->dtype);
  if (Status s = kv(*a.value, "value"); !s)
    return s;
  if (Status s = kv(*a.valueCacheRef, "valueCacheRef"); !s)
    return s;
  if (a.valueCacheRef->dtype != a.value->dtype)
    return invalid("valueCacheRef: dtype ", a.valueCacheRef->dtype,
                   " must equal value's dtype ", a.value->dtype);
  if (a.value->dtype != a.key->dtype)
    return invalid("value: dtype ", a.value->dtype, " must equal key's dtype ",
                   a.key->dtype);
  const std::pair<const TensorView *, const char *> optional[] = {
      {a.compressLensOptional, "compressLensOptional"},
      {a.compressSeqOffsetOptional, "compressSeqOffsetOptional"},
      {a.seqLensOptional, "seqLensOptional"}};
  for (auto [t, name] : optional)
    if (t && t->dtype != a.slotMapping->dtype)
      return invalid(name, ": dtype ", t->dtype,
                     " must equal slotMapping's dtype ", a.slotMapping->dtype);
  return Status::ok();
}

/// Section 4: the scenario, after the mode strings are known to be valid.
Status selectScenario(const aclnn::ScatterPaKvCacheArgs &a, Scenario &scenario,
                      HeadMode &mode, bool &nct) {
  const char *cm = a.cacheModeOptional, *sm = a.scatterModeOptional;
  if (!normLike(cm) && !is(cm, "PA_NZ"))
    return tiling("cacheModeOptional: \"", cm,
                  "\" is not a cache mode (expected \"Norm\" or \"PA_NZ\")");
  if (!noneLike(sm) && !is(sm, "Nct") && !is(sm, "Alibi") && !is(sm, "Rope") &&
      !is(sm, "Omni"))
    return tiling("scatterModeOptional: \"", sm,
                  "\" is not a scatter mode (expected \"None\", \"Nct\", "
                  "\"Alibi\", \"Rope\" or \"Omni\")");
  const bool valueScalar = a.value->rank() == 0,
             cacheScalar = a.valueCacheRef->rank() == 0;
  if (valueScalar != cacheScalar)
    return tiling("value and valueCacheRef: key-only needs both 0-D, got ",
                  shapeOf(*a.value), " and ", shapeOf(*a.valueCacheRef));
  const bool keyOnly = valueScalar;
  if (!keyOnly && a.value->rank() != a.key->rank())
    return tiling("value: rank must equal key's (", a.key->rank(), "), got ",
                  shapeOf(*a.value));
  nct = false;
  mode = HeadMode::Tail;
  if (a.key->rank() == 4) {
    if (!normLike(cm))
      return tiling("cacheModeOptional: a 4-D key needs the Norm cache mode, "
                    "got \"PA_NZ\"");
    if (keyOnly)
      return tiling(
          "value: key-only (0-D value) is not supported with a 4-D key");
    scenario = Scenario::S3;
    mode = a.compressSeqOffsetOptional ? HeadMode::Mean : HeadMode::Tail;
    return Status::ok();
  }
  if (is(cm, "PA_NZ")) {
    if (keyOnly)
      return tiling("value: key-only (0-D value) is not supported with PA_NZ");
    scenario = Scenario::S1;
    return Status::ok();
  }
  if (noneLike(sm) || is(sm, "Nct")) {
    scenario = keyOnly ? Scenario::S6 : Scenario::S2;
    nct = is(sm, "Nct");
    return Status::ok();
  }
  if (keyOnly)
    return tiling(
        "value: key-only (0-D value) is not supported with scatter mode \"", sm,
        "\"");
  if (is(sm, "Alibi")) {
    scenario = Scenario::S4;
    return Status::ok();
  }
  scenario = Scenario::S5;
  mode = is(sm, "Rope") ? HeadMode::Mean : HeadMode::Drop;
  return Status::ok();
}

/// The Nct rules for one of key/value: strides/offsets given, in range, and
/// the windows inside the buffer.
Status checkNct(const aclnn::ScatterPaKvCacheArgs &a, int which,
                const TensorView &t, const char *name) {
  if (!a.stridesOptional || a.stridesOptional->size() != 2)
    return tiling(
        "stridesOptional: Nct needs exactly 2 values {strideK, strideV}");
  if (!a.offsetsOptional || a.offsetsOptional->size() != 2)
    return tiling(
        "offsetsOptional: Nct needs exactly 2 values {offsetK, offsetV}");
  int64_t stride = (*a.stridesOptional)[which],
          offset = (*a.offsetsOptional)[which];
  if (stride < 1)
    return tiling("stridesOptional[", which, "]: must be >= 1, got ", stride);
  if (offset < 0)
    return tiling("offsetsOptional[", which, "]: must be >= 0, got ", offset);
  int64_t rows = t.dim(0), row = t.dim(1) * t.dim(2);
  int64_t available = t.storageNumel() - t.offset;
  // offset + (rows - 1) * stride + row, checked: past int64 it is past any
  // buffer.
  int64_t end = 0;
  bool overflows = __builtin_mul_overflow(rows - 1, stride, &end) ||
                   __builtin_add_overflow(end, offset, &end) ||
                   __builtin_add_overflow(end, row, &end);
  if (rows > 0 && (overflows || end > available))
    return tiling(name, ": Nct window offset ", offset, " + (", rows,
                  " - 1) * stride ", stride, " + ", row,
                  overflows ? " overflows int64, exceeding" : " exceeds",
                  " its buffer of ", available, " elements");
  return Status::ok();
}

/// Section 7, step 5: the rules of the chosen scenario.
Status checkScenario(const aclnn::ScatterPaKvCacheArgs &a, Scenario sc,
                     HeadMode mode, bool nct) {
  const TensorView &k = *a.key, &kc = *a.keyCacheRef, &v = *a.value,
                   &vc = *a.valueCacheRef, &slots = *a.slotMapping;
  if (Status s = requireRank(kc, "keyCacheRef", 4, "(a paged cache)"); !s)
    return s;
  if (sc == Scenario::S1 || sc == Scenario::S2 || sc == Scenario::S6) {
    if (slots.rank() != 1 || slots.dim(0) != k.dim(0))
      return tiling("slotMapping: must be 1-D of length key.shape[0] = ",
                    k.dim(0), ", got ", shapeOf(slots));
    if (sc != Scenario::S6) {
      if (Status s = requireRank(vc, "valueCacheRef", 4, "(a paged cache)"); !s)
        return s;
      if (v.dim(0) != k.dim(0) || v.dim(1) != k.dim(1))
        return tiling("value: shape[0:2] must equal key's ", k.dim(0), ", ",
                      k.dim(1), ", got ", shapeOf(v));
    }
  }
  const int64_t n = k.rank() == 3 ? k.dim(1) : k.dim(2), dk = k.dim(-1);
  if (sc == Scenario::S2 || sc == Scenario::S6) {
    if (kc.dim(2) != n || kc.dim(3) != dk)
      return tiling("keyCacheRef: shape[2:4] must be [N, Dk] = [", n, ", ", dk,
                    "], got ", shapeOf(kc));
    if (sc == Scenario::S2) {
      if (vc.dim(3) != v.dim(2))
        return tiling("valueCacheRef: shape[3] must be Dv = ", v.dim(2),
                      ", got ", shapeOf(vc));
      if (vc.dim(0) != kc.dim(0) || vc.dim(1) != kc.dim(1) ||
          vc.dim(2) != kc.dim(2))
        return tiling(
            "valueCacheRef: shape[0:3] must equal keyCacheRef's, got ",
            shapeOf(vc), " and ", shapeOf(kc));
    }
  }
  if (sc == Scenario::S1) {
    const int64_t ek = nzStripElems(k.dtype), ev = nzStripElems(v.dtype);
    const int64_t dv = v.dim(2);
    if (kc.dim(3) != ek)
      return tiling("keyCacheRef: PA_NZ last dim must be 32 / sizeof(", k.dtype,
                    ") = ", ek, ", got ", shapeOf(kc));
    if (vc.dim(3) != ev)
      return tiling("valueCacheRef: PA_NZ last dim must be 32 / sizeof(",
                    v.dtype, ") = ", ev, ", got ", shapeOf(vc));
    if (dk * k.elementSize() % 32 != 0)
      return tiling("key: PA_NZ needs Dk * sizeof(dtype) to be a multiple of "
                    "32 bytes, got Dk = ",
                    dk);
    if (dv * v.elementSize() % 32 != 0)
      return tiling("value: PA_NZ needs Dv * sizeof(dtype) to be a multiple of "
                    "32 bytes, got Dv = ",
                    dv);
    if (kc.dim(1) != n * dk / ek)
      return tiling("keyCacheRef: PA_NZ shape[1] must be N*Dk/Ek = ",
                    n * dk / ek, ", got ", shapeOf(kc));
    if (vc.dim(1) != n * dv / ev)
      return tiling("valueCacheRef: PA_NZ shape[1] must be N*Dv/Ev = ",
                    n * dv / ev, ", got ", shapeOf(vc));
    if (kc.dim(0) != vc.dim(0))
      return tiling(
          "valueCacheRef: shape[0] (blocks) must equal keyCacheRef's ",
          kc.dim(0), ", got ", shapeOf(vc));
    if (kc.dim(2) != vc.dim(2))
      return tiling(
          "valueCacheRef: shape[2] (block size) must equal keyCacheRef's ",
          kc.dim(2), ", got ", shapeOf(vc));
    if (kc.dim(2) > 65535)
      return tiling("keyCacheRef: PA_NZ block size must be <= 65535, got ",
                    kc.dim(2));
  }
  if (sc != Scenario::S3) {
    const int64_t bs = sc == Scenario::S1 ? kc.dim(2) : kc.dim(1);
    if (kc.dim(0) * bs < k.dim(0))
      return tiling("keyCacheRef: capacity num_blocks * block_size = ",
                    kc.dim(0) * bs, " must be >= key.shape[0] = ", k.dim(0));
  }
  if (nct) {
    if (Status s = checkNct(a, 0, k, "key"); !s)
      return s;
    if (sc == Scenario::S2)
      if (Status s = checkNct(a, 1, v, "value"); !s)
        return s;
  }
  if (sc == Scenario::S4 || sc == Scenario::S5) {
    const char *what = sc == Scenario::S4 ? "Alibi" : "Rope/Omni";
    if (!a.compressLensOptional)
      return tiling("compressLensOptional: required by scatter mode ", what);
    if (!a.seqLensOptional)
      return tiling("seqLensOptional: required by scatter mode ", what);
    if (sc == Scenario::S5 && !a.compressSeqOffsetOptional)
      return tiling("compressSeqOffsetOptional: required by scatter mode ",
                    what);
    const TensorView &seq = *a.seqLensOptional;
    if (seq.rank() != 1)
      return tiling("seqLensOptional: must be 1-D [B], got ", shapeOf(seq));
    const int64_t bn = seq.dim(0) * n;
    const std::pair<const TensorView *, const char *> perHead[] = {
        {a.compressLensOptional, "compressLensOptional"},
        {a.slotMapping, "slotMapping"},
        {sc == Scenario::S5 ? a.compressSeqOffsetOptional : nullptr,
         "compressSeqOffsetOptional"}};
    for (auto [t, name] : perHead)
      if (t && (t->rank() != 1 || t->dim(0) != bn))
        return tiling(name, ": must be 1-D of length B*N = ", bn, ", got ",
                      shapeOf(*t));
    if (Status s = requireRank(vc, "valueCacheRef", 4, "(a paged cache)"); !s)
      return s;
    if (kc.dim(2) != 1)
      return tiling("keyCacheRef: shape[2] must be 1 (one head per slot), got ",
                    shapeOf(kc));
    if (vc.dim(2) != 1)
      return tiling(
          "valueCacheRef: shape[2] must be 1 (one head per slot), got ",
          shapeOf(vc));
    if (kc.dim(3) != dk)
      return tiling("keyCacheRef: shape[3] must be Dk = ", dk, ", got ",
                    shapeOf(kc));
    if (vc.dim(3) != v.dim(2))
      return tiling("valueCacheRef: shape[3] must be Dv = ", v.dim(2), ", got ",
                    shapeOf(vc));
    if (dk != v.dim(2))
      return tiling("value: scatter mode ", what, " needs Dk == Dv, got ", dk,
                    " and ", v.dim(2));
    if (v.dim(0) != k.dim(0) || v.dim(1) != k.dim(1))
      return tiling("value: shape[0:2] must equal key's, got ", shapeOf(v),
                    " and ", shapeOf(k));
    if (vc.dim(0) != kc.dim(0) || vc.dim(1) != kc.dim(1) ||
        vc.dim(2) != kc.dim(2))
      return tiling("valueCacheRef: shape[0:3] must equal keyCacheRef's, got ",
                    shapeOf(vc), " and ", shapeOf(kc));
    if (sc == Scenario::S5 && k.dtype != DataType::Float16 &&
        k.dtype != DataType::BFloat16)
      return tiling("key: scatter mode ", a.scatterModeOptional,
                    " supports FLOAT16 and BFLOAT16 only, got ", k.dtype);
  }
  if (sc == Scenario::S3) {
    if (!a.compressLensOptional)
      return tiling("compressLensOptional: required with a 4-D key");
    if (!a.seqLensOptional)
      return tiling("seqLensOptional: required with a 4-D key");
    const int64_t b = k.dim(0);
    if (slots.rank() != 2 || slots.dim(0) != b || slots.dim(1) != n)
      return tiling("slotMapping: must be 2-D [B, N] = [", b, ", ", n,
                    "], got ", shapeOf(slots));
    const TensorView &lens = *a.compressLensOptional;
    if (lens.rank() != 2 || lens.dim(0) != b || lens.dim(1) != n)
      return tiling("compressLensOptional: must be 2-D [B, N] = [", b, ", ", n,
                    "], got ", shapeOf(lens));
    const TensorView &seq = *a.seqLensOptional;
    if (seq.rank() != 1 || seq.dim(0) != b)
      return tiling("seqLensOptional: must be 1-D [B] = [", b, "], got ",
                    shapeOf(seq));
    if (const TensorView *o = a.compressSeqOffsetOptional)
      if (o->rank() != 1 || o->dim(0) != b * n)
        return tiling("compressSeqOffsetOptional: must be 1-D of length B*N = ",
                      b * n, ", got ", shapeOf(*o));
    if (v.dim(0) != k.dim(0) || v.dim(1) != k.dim(1) || v.dim(2) != k.dim(2))
      return tiling("value: shape[0:3] must equal key's, got ", shapeOf(v),
                    " and ", shapeOf(k));
    if (Status s = requireRank(vc, "valueCacheRef", 4, "(a paged cache)"); !s)
      return s;
    if (kc.dim(2) != 1)
      return tiling("keyCacheRef: shape[2] must be 1 (one head per slot), got ",
                    shapeOf(kc));
    if (vc.dim(2) != 1)
      return tiling(
          "valueCacheRef: shape[2] must be 1 (one head per slot), got ",
          shapeOf(vc));
    if (kc.dim(3) != dk)
      return tiling("keyCacheRef: shape[3] must be Dk = ", dk, ", got ",
                    shapeOf(kc));
    if (vc.dim(3) != v.dim(3))
      return tiling("valueCacheRef: shape[3] must be Dv = ", v.dim(3), ", got ",
                    shapeOf(vc));
    if (vc.dim(0) != kc.dim(0) || vc.dim(1) != kc.dim(1))
      return tiling("valueCacheRef: shape[0:2] must equal keyCacheRef's, got ",
                    shapeOf(vc), " and ", shapeOf(kc));
    if (mode == HeadMode::Mean && k.dtype == DataType::HiFloat8)
      return tiling("key: averaging (compressSeqOffsetOptional given) does not "
                    "support HIFLOAT8");
  }
  return Status::ok();
}

/// The kinds the MEAN kernel computes in: element kind T and accumulator A
/// (section 6; FP8 formats move as u8 and convert inside the kernel); false
/// for the dtypes the kernel does not average.
bool meanKinds(DataType t, const char *&elem, const char *&acc) {
  switch (t) {
  case DataType::Float16:
    elem = "f16";
    acc = "f32";
    return true;
  case DataType::BFloat16:
    elem = "bf16";
    acc = "f32";
    return true;
  case DataType::Float:
    elem = "f32";
    acc = "f32";
    return true;
  case DataType::Int8:
    elem = "i8";
    acc = "i32";
    return true;
  case DataType::Int16:
    elem = "i16";
    acc = "i32";
    return true;
  case DataType::Int32:
    elem = "i32";
    acc = "i32";
    return true;
  case DataType::UInt8:
    elem = "u8";
    acc = "u32";
    return true;
  case DataType::UInt16:
    elem = "u16";
    acc = "u32";
    return true;
  case DataType::UInt32:
    elem = "u32";
    acc = "u32";
    return true;
  case DataType::Float8E5M2:
  case DataType::Float8E4M3FN:
    elem = "u8";
    acc = "f32";
    return true;
  default:
    return false;
  }
}

/// Tile length for rows of `elems` elements of `bytes` bytes: the row rounded
/// up to a power of two, at most 4 KiB per tile.
int64_t tileFor(int64_t elems, int64_t bytes) {
  int64_t t = 16;
  while (t < elems && t * bytes < 4096)
    t *= 2;
  return t;
}

/// A view as the kernel's argument (rank and strides as given).
struct ArgView {
  void *data;
  std::vector<int64_t> sizes, strides;
};

ArgView asIs(const TensorView &t) {
  return {t.firstElement(), t.shape, t.strides};
}
ArgView fromFlat(const FlatView &f) { return {f.data, f.sizes, f.strides}; }

/// Rows of `t` ([rows, N, D] or, with Nct, windows of a flat buffer) as the
/// [rows, H, D'] view scatter_rows takes: [rows, 1, N*D] when [N, D] nest.
ArgView rowsView(const TensorView &t, bool nct, int64_t stride, int64_t offset,
                 bool flat) {
  const int64_t rows = t.dim(0), n = t.dim(1), d = t.dim(2);
  if (nct) {
    void *base =
        static_cast<char *>(t.firstElement()) + offset * t.elementSize();
    if (flat)
      return {base, {rows, 1, n * d}, {stride, n * d, 1}};
    return {base, {rows, n, d}, {stride, d, 1}};
  }
  if (flat)
    if (auto m = collapse(t, {1, 2}))
      return {m->data, {rows, 1, n * d}, {m->strides[0], n * d, m->strides[1]}};
  return asIs(t);
}

/// A 1-D per-head index tensor [B*N] as [B, N].
ArgView perHead(const TensorView &t, int64_t b, int64_t n) {
  if (t.rank() == 2)
    return asIs(t);
  const int64_t s = t.strides[0];
  return {t.firstElement(), {b, n}, {n * s, s}};
}

/// A [T, C*E] row view as [T, C, E] (strips of E elements).
ArgView strips3(const FlatView &f, int64_t e) {
  return {f.data,
          {f.sizes[0], f.sizes[1] / e, e},
          {f.strides[0], e * f.strides[1], f.strides[1]}};
}

/// A [T, C*E] row view as [C, T, E] (strip-major: strip c of every token).
ArgView stripMajor(const FlatView &f, int64_t e) {
  return {f.data,
          {f.sizes[1] / e, f.sizes[0], e},
          {e * f.strides[1], f.strides[0], f.strides[1]}};
}

/// A [T, C*E] row view as one run of T*C*E elements, for prefetching several
/// rows as one region; empty (a region never inside it) when the rows do not
/// follow each other in memory.
ArgView flatRows(const FlatView &f) {
  const bool dense = f.strides[1] == 1 && f.strides[0] == f.sizes[1];
  return {f.data, {dense ? f.sizes[0] * f.sizes[1] : 0}, {1}};
}

/// A PA_NZ cache [NB, C, BS, E] as [NB, BS, C, E] (axes swapped, same
/// memory), so a token's strips are one [C, E] tile at [blk, pos, 0, 0].
ArgView positionMajor(const TensorView &t) {
  return {t.firstElement(),
          {t.dim(0), t.dim(2), t.dim(1), t.dim(3)},
          {t.strides[0], t.strides[2], t.strides[1], t.strides[3]}};
}

/// Bytes of key and value rows a call moves.
int64_t bytesMoved(const aclnn::ScatterPaKvCacheArgs &a) {
  int64_t bytes = a.key->numel() * a.key->elementSize();
  if (a.value->rank() != 0)
    bytes += a.value->numel() * a.value->elementSize();
  return bytes;
}

/// Whether the rows stream into the cache (non-temporal stores): for calls
/// moving 1 MiB or more (a prefill, whose rows are read much later); a
/// decode step's rows stay in the caches for the attention that reads them.
bool streams(const aclnn::ScatterPaKvCacheArgs &a) {
  return bytesMoved(a) >= (int64_t(1) << 20);
}

/// Programs for a call: one per core when the call moves enough bytes to pay
/// for the threads (random slots spread the rows evenly over the cache
/// blocks each program owns, and every program walks all slots, so more
/// programs only add walks), one for decode-sized calls. Shapes only.
int64_t programsOf(const aclnn::ScatterPaKvCacheArgs &a, const TensorView &kc) {
  return std::min(programsForBytes(kc.dim(0), bytesMoved(a)), launchThreads());
}

/// The prepared launch: the kernel, its argument block and the workspace
/// the PA_NZ kernel sorts its tokens in (allocated here in phase 1, so
/// phase 2 only launches; one launch of an executor runs at a time).
using Launch = KernelLaunch;

/// Whether a PA_NZ call writes its scattered tokens in cache order
/// (scatter_nz's SORT): prefill-sized calls, whose tokens are worth sorting,
/// with slots that fit the kernel's sort keys (slot << 32 | token).
bool sortsTokens(const aclnn::ScatterPaKvCacheArgs &a, const TensorView &kc) {
  return streams(a) && kc.dim(0) * kc.dim(2) < (int64_t(1) << 31) &&
         a.key->dim(0) < (int64_t(1) << 31);
}

void pack(rt::ArgPack &p, rt::ElemType type, const ArgView &v, const char *name) {
  p.tensor(type, v.data, v.sizes, v.strides).named(name);
}

Status plan(const aclnn::ScatterPaKvCacheArgs &a, Scenario sc, HeadMode mode,
            bool nct, Launch &out) {
  const TensorView &k = *a.key, &kc = *a.keyCacheRef, &v = *a.value,
                   &vc = *a.valueCacheRef, &slots = *a.slotMapping;
  const int64_t width = k.elementSize();
  const char *u = copyKind(width), *idx = indexKind(slots.dtype);
  rt::ArgPack &p = out.args;
  if (sc == Scenario::S2 || sc == Scenario::S6) {
    const bool hasV = sc == Scenario::S2;
    // Caches as [capacity, N, D]; flat rows [capacity, 1, N*D] when both the
    // cache and its source nest.
    auto kcRows = collapse(kc, {2, 1, 1});
    if (!kcRows)
      return tiling(
          "keyCacheRef: the block and slot axes must nest (stride[0] == "
          "shape[1] * stride[1]), got strides ",
          host::shapeToString(kc.strides));
    auto kcFlat = collapse(kc, {2, 2});
    const bool kFlat = kcFlat && (nct || collapse(k, {1, 2}));
    ArgView kcv = kFlat ? ArgView{kcFlat->data,
                                  {kcFlat->sizes[0], 1, kcFlat->sizes[1]},
                                  {kcFlat->strides[0], kcFlat->sizes[1],
                                   kcFlat->strides[1]}}
                        : fromFlat(*kcRows);
    ArgView kv = rowsView(k, nct, nct ? (*a.stridesOptional)[0] : 0,
                          nct ? (*a.offsetsOptional)[0] : 0, kFlat);
    ArgView vv = kv, vcv = kcv;
    if (hasV) {
      auto vcRows = collapse(vc, {2, 1, 1});
      if (!vcRows)
        return tiling(
            "valueCacheRef: the block and slot axes must nest (stride[0] == "
            "shape[1] * stride[1]), got strides ",
            host::shapeToString(vc.strides));
      auto vcFlat = collapse(vc, {2, 2});
      const bool vFlat = vcFlat && (nct || collapse(v, {1, 2}));
      vcv = vFlat ? ArgView{vcFlat->data,
                            {vcFlat->sizes[0], 1, vcFlat->sizes[1]},
                            {vcFlat->strides[0], vcFlat->sizes[1],
                             vcFlat->strides[1]}}
                  : fromFlat(*vcRows);
      vv = rowsView(v, nct, nct ? (*a.stridesOptional)[1] : 0,
                    nct ? (*a.offsetsOptional)[1] : 0, vFlat);
    }
    jit::Specialization spec{
        {"U", jit::dtypeValue(elemType(u))},
        {"I", jit::dtypeValue(elemType(idx))},
        {"HAS_V", hasV},
        {"BK", tileFor(kv.sizes[2], width)},
        {"BV", tileFor(vv.sizes[2], width)},
        {"STREAM", streams(a)}};
    if (Status s =
            getKernel(source(), "scatter_rows", spec, out.kernel, &out.use);
        !s)
      return s;
    pack(p, elemType(u), kv, "key");
    pack(p, elemType(idx), asIs(slots), "slots");
    pack(p, elemType(u), kcv, "key_cache");
    pack(p, elemType(u), vv, "value");
    pack(p, elemType(u), vcv, "value_cache");
    p.i64(kc.dim(1)).named("bs");
    p.i64(programsOf(a, kc)).named("P");
    return Status::ok();
  }
  if (sc == Scenario::S1) {
    auto kf = collapse(k, {1, 2}), vf = collapse(v, {1, 2});
    if (!kf)
      return tiling("key: PA_NZ needs the [N, D] axes to nest, got strides ",
                    host::shapeToString(k.strides));
    if (!vf)
      return tiling("value: PA_NZ needs the [N, D] axes to nest, got strides ",
                    host::shapeToString(v.strides));
    const int64_t e = kc.dim(3), strips = std::max(kc.dim(1), vc.dim(1));
    int64_t cb = 1;
    while (cb < strips && cb * 32 < 1024)
      cb *= 2;
    // Strips per tile of a run: a power of two up to 4 and up to the
    // smaller cache's strip count (a last tile past it is a partial one).
    int64_t cs = 1;
    while (cs < 4 && cs * 2 <= std::min(kc.dim(1), vc.dim(1)))
      cs *= 2;
    const bool sort = sortsTokens(a, kc);
    jit::Specialization spec{{"U", jit::dtypeValue(elemType(u))},
                             {"I", jit::dtypeValue(elemType(idx))},
                             {"E", e},
                             {"CB", cb},
                             {"CS", cs},
                             {"STREAM", streams(a)},
                             {"SORT", sort}};
    if (Status s =
            getKernel(source(), "scatter_nz", spec, out.kernel, &out.use);
        !s)
      return s;
    const int64_t programs = programsOf(a, kc), tokens = k.dim(0);
    // Two rows of a token each per program: the collected tokens and the
    // merge sort's other buffer.
    if (sort)
      out.scratch.resize(static_cast<size_t>(programs * 2 * tokens));
    pack(p, elemType(u), strips3(*kf, e), "key");
    pack(p, elemType(idx), asIs(slots), "slots");
    pack(p, elemType(u), positionMajor(kc), "key_cache");
    pack(p, elemType(u), strips3(*vf, e), "value");
    pack(p, elemType(u), positionMajor(vc), "value_cache");
    pack(p, elemType(u), stripMajor(*kf, e), "key_t");
    pack(p, elemType(u), asIs(kc), "key_cache_t");
    pack(p, elemType(u), stripMajor(*vf, e), "value_t");
    pack(p, elemType(u), asIs(vc), "value_cache_t");
    pack(p, elemType(u), flatRows(*kf), "key_f");
    pack(p, elemType(u), flatRows(*vf), "value_f");
    p.tensor(out.scratch.data(), {sort ? programs : 0, 2, sort ? tokens : 0}).named("ws");
    p.i64(programs).named("P");
    return Status::ok();
  }
  // S3, S4, S5: one head vector per cache row.
  const bool padded = sc == Scenario::S3;
  auto kcf = collapse(kc, {2, 2}), vcf = collapse(vc, {2, 2});
  if (!kcf)
    return tiling(
        "keyCacheRef: the block and slot axes must nest, got strides ",
        host::shapeToString(kc.strides));
  if (!vcf)
    return tiling(
        "valueCacheRef: the block and slot axes must nest, got strides ",
        host::shapeToString(vc.strides));
  ArgView kv = asIs(k), vv = asIs(v);
  if (padded) {
    auto kr = collapse(k, {2, 1, 1}), vr = collapse(v, {2, 1, 1});
    if (!kr || !vr)
      return tiling(
          !kr ? "key" : "value",
          ": the batch and sequence axes of a 4-D key/value must nest");
    kv = fromFlat(*kr);
    vv = fromFlat(*vr);
  }
  const char *elem = u, *acc = "f32";
  if (mode == HeadMode::Mean && !meanKinds(k.dtype, elem, acc))
    return tiling("key: averaging does not support ", k.dtype);
  const char *f8 = mode != HeadMode::Mean              ? "NONE"
                   : k.dtype == DataType::Float8E5M2   ? "E5M2"
                   : k.dtype == DataType::Float8E4M3FN ? "E4M3"
                                                       : "NONE";
  const int64_t n = padded ? k.dim(2) : k.dim(1);
  const int64_t b = a.seqLensOptional->dim(0);
  const char *modeName = mode == HeadMode::Tail   ? "TAIL"
                         : mode == HeadMode::Mean ? "MEAN"
                                                  : "DROP";
  jit::Specialization spec{{"U", jit::dtypeValue(elemType(u))},
                           {"T", jit::dtypeValue(elemType(elem))},
                           {"A", jit::dtypeValue(elemType(acc))},
                           {"I", jit::dtypeValue(elemType(idx))},
                           {"MODE", jit::SpecValue::enumerator(modeName)},
                           {"PADDED", padded},
                           {"F8", jit::SpecValue::enumerator(f8)},
                           {"BK", tileFor(kv.sizes[2], width)},
                           {"BV", tileFor(vv.sizes[2], width)}};
  if (Status s =
          getKernel(source(), "scatter_heads", spec, out.kernel, &out.use);
      !s)
    return s;
  const TensorView *offs = a.compressSeqOffsetOptional;
  pack(p, elemType(u), kv, "key");
  pack(p, elemType(u), fromFlat(*kcf), "key_cache");
  pack(p, elemType(u), vv, "value");
  pack(p, elemType(u), fromFlat(*vcf), "value_cache");
  pack(p, elemType(idx), perHead(slots, b, n), "slots");
  pack(p, elemType(idx), perHead(*a.compressLensOptional, b, n), "lens");
  pack(p, elemType(idx), perHead(mode == HeadMode::Tail || !offs ? slots : *offs, b, n), "offs");
  pack(p, elemType(idx), asIs(*a.seqLensOptional), "seq_lens");
  p.i64(padded ? k.dim(1) : 0).named("S");
  p.i64(kc.dim(1)).named("bs");
  p.i64(programsOf(a, kc)).named("P");
  return Status::ok();
}

} // namespace

Status prepareScatterPaKvCache(const aclnn::ScatterPaKvCacheArgs &a,
                               host::Executor &executor) {
  if (Status s = host::requireNonNull({{"key", a.key},
                                          {"keyCacheRef", a.keyCacheRef},
                                          {"slotMapping", a.slotMapping},
                                          {"value", a.value},
                                          {"valueCacheRef", a.valueCacheRef}});
      !s)
    return s;
  if ((a.key->isEmpty() || a.keyCacheRef->isEmpty()) &&
      (a.value->isEmpty() || a.valueCacheRef->isEmpty()))
    return Status::ok(); // section 7, step 2: nothing to do
  if (a.key->rank() != 3 && a.key->rank() != 4)
    return tiling("key: rank must be 3 or 4, got ", shapeOf(*a.key));
  if (a.value->rank() != 0 && a.value->rank() != 3 && a.value->rank() != 4)
    return tiling("value: rank must be 0 (key-only), 3 or 4, got ",
                  shapeOf(*a.value));
  if (Status s = checkDtypes(a); !s)
    return s;
  Scenario sc;
  HeadMode mode;
  bool nct;
  if (Status s = selectScenario(a, sc, mode, nct); !s)
    return s;
  if (Status s = checkScenario(a, sc, mode, nct); !s)
    return s;
  if (a.key->dim(0) == 0 || (a.slotMapping->isEmpty()))
    return Status::ok();
  auto launch = std::make_shared<Launch>();
  if (Status s = plan(a, sc, mode, nct, *launch); !s)
    return s;
  setKernelLaunch(executor, launch, "ScatterPaKvCache");
  return Status::ok();
}

Status scatterPaKvCache(const aclnn::ScatterPaKvCacheArgs &args) {
  return prepareAndRun(args, prepareScatterPaKvCache);
}


} // namespace tilejit::ops
