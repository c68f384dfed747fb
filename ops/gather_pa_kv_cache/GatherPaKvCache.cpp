//===- GatherPaKvCache.cpp - Validation, kernel choice and launch ---------===//
//
// Section numbers refer to ../shared/spec/gather_pa_kv_cache.md.
//
//===----------------------------------------------------------------------===//
#include "ops/gather_pa_kv_cache/GatherPaKvCache.h"

#include "ops/Embedded.h"
#include "ops/common/KernelLaunch.h"
#include "ops/common/KvCacheLayout.h"
#include "ops/host/KernelArgs.h"
#include "ops/host/Kernels.h"
#include "ops/host/OpRegistry.h"

#include <algorithm>
#include <initializer_list>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string_view>
#include <unordered_map>

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
using host::prepareAndRun;
using host::programsFor;

namespace {

const jit::KernelSource &source() {
  static const jit::KernelSource &src =
      embeddedKernel("ops/gather_pa_kv_cache/gather_pa_kv_cache.tile");
  return src;
}

Status invalid(const auto &...parts) {
  return Status::error(status::ParamInvalid, parts...);
}
Status tiling(const auto &...parts) {
  return Status::error(status::InnerTilingError, parts...);
}

std::string shapeOf(const TensorView &t) {
  return host::shapeToString(t.shape);
}

/// True for a null or empty cacheMode, or "Norm".
bool isNormMode(const char *mode) {
  return !mode || !*mode || std::string_view(mode) == "Norm";
}
bool isNzMode(const char *mode) {
  return mode && std::string_view(mode) == "PA_NZ";
}

//===----------------------------------------------------------------------===//
// Validation (section 5)
//===----------------------------------------------------------------------===//

/// Step 3: the ranks.
Status checkRanks(const aclnn::GatherPaKvCacheArgs &a) {
  struct Rule {
    const TensorView *t;
    const char *name;
    int64_t lo, hi;
  };
  const Rule rules[] = {
      {a.keyCache, "keyCache", 4, 4},       {a.valueCache, "valueCache", 4, 4},
      {a.blockTables, "blockTables", 2, 2}, {a.seqLens, "seqLens", 1, 1},
      {a.keyRef, "keyRef", 2, 3},           {a.valueRef, "valueRef", 2, 3}};
  for (const Rule &r : rules) {
    const int64_t rank = r.t->rank();
    if (rank >= r.lo && rank <= r.hi)
      continue;
    if (r.lo == r.hi)
      return invalid(r.name, ": rank must be ", r.lo, ", got ", rank, " (",
                     shapeOf(*r.t), ")");
    return invalid(r.name, ": rank must be ", r.lo, " or ", r.hi, ", got ",
                   rank, " (", shapeOf(*r.t), ")");
  }
  return Status::ok();
}

/// Step 4: the dtypes.
Status checkDtypes(const aclnn::GatherPaKvCacheArgs &a) {
  const std::pair<const TensorView *, const char *> kv[] = {
      {a.keyCache, "keyCache"},
      {a.valueCache, "valueCache"},
      {a.keyRef, "keyRef"},
      {a.valueRef, "valueRef"}};
  for (auto [t, name] : kv)
    if (!isKvDataType(t->dtype))
      return invalid(name, ": dtype ", t->dtype,
                     " is not supported (expected one of ", kvDataTypeList(),
                     ")");
  if (!isIndexDataType(a.blockTables->dtype))
    return invalid("blockTables: dtype ", a.blockTables->dtype,
                   " is not supported (expected INT32 or INT64)");
  if (!isIndexDataType(a.seqLens->dtype))
    return invalid("seqLens: dtype ", a.seqLens->dtype,
                   " is not supported (expected INT32 or INT64)");
  if (a.keyRef->dtype != a.keyCache->dtype)
    return invalid("keyRef: dtype ", a.keyRef->dtype,
                   " must equal keyCache's dtype ", a.keyCache->dtype);
  if (a.valueRef->dtype != a.valueCache->dtype)
    return invalid("valueRef: dtype ", a.valueRef->dtype,
                   " must equal valueCache's dtype ", a.valueCache->dtype);
  if (!isNzMode(a.cacheMode) && a.valueCache->dtype != a.keyCache->dtype)
    return invalid("valueCache: dtype ", a.valueCache->dtype,
                   " must equal keyCache's dtype ", a.keyCache->dtype,
                   " unless cacheMode is \"PA_NZ\"");
  if (a.seqLens->dtype != a.blockTables->dtype)
    return invalid("seqLens: dtype ", a.seqLens->dtype,
                   " must equal blockTables' dtype ", a.blockTables->dtype);
  if (const TensorView *o = a.seqOffsetOptional) {
    if (!isIndexDataType(o->dtype))
      return invalid("seqOffsetOptional: dtype ", o->dtype,
                     " is not supported (expected INT32 or INT64)");
    if (o->dtype != a.blockTables->dtype)
      return invalid("seqOffsetOptional: dtype ", o->dtype,
                     " must equal blockTables' dtype ", a.blockTables->dtype);
  }
  return Status::ok();
}

/// Step 5: the shape rules (after steps 1-4 passed).
Status checkShapes(const aclnn::GatherPaKvCacheArgs &a, bool nz) {
  const TensorView &kc = *a.keyCache, &vc = *a.valueCache, &bt = *a.blockTables,
                   &sl = *a.seqLens, &kr = *a.keyRef, &vr = *a.valueRef;
  const std::pair<const TensorView *, const char *> positive[] = {
      {&kc, "keyCache"},
      {&bt, "blockTables"},
      {&sl, "seqLens"},
      {&kr, "keyRef"}};
  for (auto [t, name] : positive)
    for (int64_t i = 0; i < t->rank(); ++i)
      if (t->dim(i) <= 0)
        return tiling(name, ": every dimension must be > 0, got ", shapeOf(*t));
  if (nz) {
    const int64_t ek = nzStripElems(kc.dtype), ev = nzStripElems(vc.dtype);
    if (kc.dim(3) != ek)
      return tiling("keyCache: PA_NZ last dimension must be 32 / sizeof(",
                    kc.dtype, ") = ", ek, ", got ", shapeOf(kc));
    if (vc.dim(3) != ev)
      return tiling("valueCache: PA_NZ last dimension must be 32 / sizeof(",
                    vc.dtype, ") = ", ev, ", got ", shapeOf(vc));
  }
  const host::Format want =
      nz ? host::Format::FractalNZ : host::Format::ND;
  if (kc.format != want)
    return tiling("keyCache: format must be ", want, " under cacheMode \"",
                  nz ? "PA_NZ" : "Norm", "\", got ", kc.format);
  if (vc.format != want)
    return tiling("valueCache: format must be ", want, " under cacheMode \"",
                  nz ? "PA_NZ" : "Norm", "\", got ", vc.format);
  for (int64_t i = 0; i < 4; ++i) {
    if (i == (nz ? 1 : 3))
      continue;
    if (vc.dim(i) != kc.dim(i))
      return tiling("valueCache: shape[", i, "] must equal keyCache's (",
                    kc.dim(i), "), got ", shapeOf(vc));
  }
  const int64_t b = bt.dim(0);
  const int64_t wantLens = a.isSeqLensCumsum ? b + 1 : b;
  if (sl.dim(0) != wantLens)
    return tiling("seqLens: shape[0] must be ", wantLens,
                  a.isSeqLensCumsum ? " (batch + 1, isSeqLensCumsum)"
                                    : " (batch, not isSeqLensCumsum)",
                  ", got ", shapeOf(sl));
  const int64_t rank = nz ? 2 : 3;
  const char *mode = nz ? "PA_NZ" : "Norm";
  if (kr.rank() != rank)
    return tiling("keyRef: rank must be ", rank, " under cacheMode \"", mode,
                  "\", got ", shapeOf(kr));
  if (!nz && (kr.dim(1) != kc.dim(2) || kr.dim(2) != kc.dim(3)))
    return tiling("keyRef: shape[1:3] must equal keyCache's [N, Dk] = [",
                  kc.dim(2), ", ", kc.dim(3), "], got ", shapeOf(kr));
  if (nz && kr.dim(1) != kc.dim(1) * kc.dim(3))
    return tiling("keyRef: shape[1] must be keyCache.shape[1] * shape[3] = ",
                  kc.dim(1) * kc.dim(3), ", got ", shapeOf(kr));
  if (vr.rank() != rank)
    return tiling("valueRef: rank must be ", rank, " under cacheMode \"", mode,
                  "\", got ", shapeOf(vr));
  for (int64_t i = 0; i + 1 < rank; ++i)
    if (vr.dim(i) != kr.dim(i))
      return tiling("valueRef: shape[", i, "] must equal keyRef's (", kr.dim(i),
                    "), got ", shapeOf(vr));
  if (!nz && (vr.dim(1) != vc.dim(2) || vr.dim(2) != vc.dim(3)))
    return tiling("valueRef: shape[1:3] must equal valueCache's [N, Dv] = [",
                  vc.dim(2), ", ", vc.dim(3), "], got ", shapeOf(vr));
  if (nz && vr.dim(1) != vc.dim(1) * vc.dim(3))
    return tiling(
        "valueRef: shape[1] must be valueCache.shape[1] * shape[3] = ",
        vc.dim(1) * vc.dim(3), ", got ", shapeOf(vr));
  if (const TensorView *o = a.seqOffsetOptional)
    if (o->rank() != 1 || o->dim(0) != b)
      return tiling("seqOffsetOptional: must be 1-D of length batch = ", b,
                    ", got ", shapeOf(*o));
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// Kernel choice and arguments
//===----------------------------------------------------------------------===//

/// The smallest power of two >= `n`, clamped to [lo, hi].
int64_t pow2Tile(int64_t n, int64_t lo, int64_t hi) {
  int64_t t = lo;
  while (t < n && t < hi)
    t *= 2;
  return t;
}

/// The prepared launch: the kernel and its argument block (the pack points
/// into itself, so it lives behind a shared_ptr and is never copied).
using Launch = KernelLaunch;

void pack(rt::ArgPack &p, rt::ElemType type, const TensorView &t, const char *name) {
  p.tensor(type, t.firstElement(), t.shape, t.strides).named(name);
}
void pack(rt::ArgPack &p, rt::ElemType type, const FlatView &f, const char *name) {
  p.tensor(type, f.data, f.sizes, f.strides).named(name);
}

/// A [NB, bs * H] (cache) or [T * H] (output) view whose innermost stride
/// is 1, or nullopt.
std::optional<FlatView> flatRuns(const TensorView &t, std::vector<int> groups) {
  auto f = collapse(t, groups);
  if (!f || f->strides.back() != 1)
    return std::nullopt;
  return f;
}

/// The [.., 1, N*D] form of a [.., N, D] view when the head axes nest, so
/// the row kernel moves a token in one tile row.
FlatView headsMerged(const FlatView &f) {
  FlatView r = f;
  r.sizes.insert(r.sizes.end() - 1, 1);
  r.strides.insert(r.strides.end() - 1, r.sizes.back() * r.strides.back());
  return r;
}

/// Bytes one program should move at least before another is worth a
/// thread (a fork costs microseconds; measured on PA_NZ too, whose decode
/// calls are latency-bound but still lose more to the fork than they gain).
constexpr int64_t kBytesPerProgram = 64 << 10;

/// The number of programs: enough for the cores when the output is large,
/// one (no thread fork) for decode-sized calls. Only shapes are used:
/// phase 1 never reads device data.
int64_t programsForShapes(const aclnn::GatherPaKvCacheArgs &a, int64_t bs) {
  const int64_t t = a.keyRef->dim(0), b = a.blockTables->dim(0);
  const int64_t rowBytes =
      (a.keyRef->numel() / t) * a.keyRef->elementSize() +
      (a.valueRef->numel() / t) * a.valueRef->elementSize();
  const int64_t chunks = std::min(a.blockTables->numel(), t / bs + b);
  const int64_t bytes = t * rowBytes;
  return programsFor(std::min(chunks, bytes / kBytesPerProgram));
}

Status plan(const aclnn::GatherPaKvCacheArgs &a, bool nz, Launch &out) {
  const TensorView &kc = *a.keyCache, &vc = *a.valueCache, &kr = *a.keyRef,
                   &vr = *a.valueRef;
  const int64_t width = kc.elementSize();
  const char *u = copyKind(width), *idx = indexKind(a.blockTables->dtype);
  const TensorView &offs =
      a.seqOffsetOptional ? *a.seqOffsetOptional : *a.seqLens;
  const bool hasOff = a.seqOffsetOptional != nullptr;
  rt::ArgPack &p = out.args;
  // Large outputs (a prefill's) are written with non-temporal stores.
  const bool stream =
      streamsOutput((kr.numel() + vr.numel()) * kr.elementSize());
  auto packIndices = [&] {
    pack(p, elemType(idx), *a.blockTables, "tables");
    pack(p, elemType(idx), *a.seqLens, "seq_lens");
    pack(p, elemType(idx), offs, "offs");
  };
  if (nz) {
    const int64_t bs = kc.dim(2);
    auto spec = [&] {
      return jit::Specialization{{"U", jit::dtypeValue(elemType(u))},
                                 {"I", jit::dtypeValue(elemType(idx))},
                                 {"E", kc.dim(3)},
                                 {"STREAM", stream}};
    };
    if (Status s =
            getKernel(source(), "gather_nz", spec(), out.kernel, &out.use);
        !s)
      return s;
    // The caches position-major ([NB, BS, C, E], two axes swapped) and the
    // outputs as [T, C, E] (strip c of row d at [d, c, 0]).
    auto byPosition = [&](const TensorView &cache, const char *name) {
      pack(p, elemType(u),
           FlatView{cache.firstElement(),
                    {cache.dim(0), cache.dim(2), cache.dim(1), cache.dim(3)},
                    {cache.strides[0], cache.strides[2], cache.strides[1], cache.strides[3]}},
           name);
    };
    auto strips = [&](const TensorView &o, const TensorView &cache, const char *name) {
      const int64_t e = cache.dim(3);
      pack(p, elemType(u),
           FlatView{o.firstElement(),
                    {o.dim(0), cache.dim(1), e},
                    {o.strides[0], o.strides[1] * e, o.strides[1]}},
           name);
    };
    byPosition(kc, "key_cache");
    byPosition(vc, "value_cache");
    packIndices();
    strips(kr, kc, "key_out");
    strips(vr, vc, "value_out");
    p.boolean(a.isSeqLensCumsum).named("cumsum");
    p.boolean(hasOff).named("has_off");
    p.i64(programsForShapes(a, bs)).named("P");
    return Status::ok();
  }
  const int64_t bs = kc.dim(1);
  auto kcFlat = flatRuns(kc, {1, 3}), vcFlat = flatRuns(vc, {1, 3});
  auto krFlat = flatRuns(kr, {3}), vrFlat = flatRuns(vr, {3});
  if (kcFlat && vcFlat && krFlat && vrFlat) {
    const int64_t hk = kc.dim(2) * kc.dim(3), hv = vc.dim(2) * vc.dim(3);
    // Tiles of 16 KiB, 512 bytes and 32 bytes: fixed by the width, so one
    // kernel per width and index type serves every shape.
    auto spec = [&] {
      return jit::Specialization{{"U", jit::dtypeValue(elemType(u))},
                                 {"I", jit::dtypeValue(elemType(idx))},
                                 {"BT", (16 << 10) / width},
                                 {"BM", 512 / width},
                                 {"BE", 32 / width},
                                 {"STREAM", stream}};
    };
    if (Status s = getKernel(source(), "gather_flat", spec(), out.kernel,
                             &out.use);
        !s)
      return s;
    pack(p, elemType(u), *kcFlat, "key_cache");
    pack(p, elemType(u), *vcFlat, "value_cache");
    packIndices();
    pack(p, elemType(u), *krFlat, "key_out");
    pack(p, elemType(u), *vrFlat, "value_out");
    p.i64(kr.dim(0)).named("T");
    p.i64(hk).named("hk");
    p.i64(hv).named("hv");
    p.i64(bs).named("bs");
    p.boolean(a.isSeqLensCumsum).named("cumsum");
    p.boolean(hasOff).named("has_off");
    p.i64(programsForShapes(a, bs)).named("P");
    return Status::ok();
  }
  // Any other Norm layout: token rows through strided views, the head axes
  // merged where both the cache and the output allow it.
  FlatView kcv{kc.firstElement(), kc.shape, kc.strides},
      vcv{vc.firstElement(), vc.shape, vc.strides},
      krv{kr.firstElement(), kr.shape, kr.strides},
      vrv{vr.firstElement(), vr.shape, vr.strides};
  auto kc3 = collapse(kc, {1, 1, 2}), kr2 = collapse(kr, {1, 2});
  if (kc3 && kr2) {
    kcv = headsMerged(*kc3);
    krv = headsMerged(*kr2);
  }
  auto vc3 = collapse(vc, {1, 1, 2}), vr2 = collapse(vr, {1, 2});
  if (vc3 && vr2) {
    vcv = headsMerged(*vc3);
    vrv = headsMerged(*vr2);
  }
  const int64_t inner = std::max(kcv.sizes[3], vcv.sizes[3]);
  const int64_t heads = std::max(kcv.sizes[2], vcv.sizes[2]);
  const int64_t bd = pow2Tile(inner, 1, 4096 / width);
  const int64_t bn =
      pow2Tile(heads, 1, std::max<int64_t>(1, 4096 / width / bd));
  auto spec = [&] {
    return jit::Specialization{{"U", jit::dtypeValue(elemType(u))},
                               {"I", jit::dtypeValue(elemType(idx))},
                               {"BN", bn},
                               {"BD", bd}};
  };
  if (Status s = getKernel(source(), "gather_rows", spec(), out.kernel,
                           &out.use);
      !s)
    return s;
  pack(p, elemType(u), kcv, "key_cache");
  pack(p, elemType(u), vcv, "value_cache");
  packIndices();
  pack(p, elemType(u), krv, "key_out");
  pack(p, elemType(u), vrv, "value_out");
  p.boolean(a.isSeqLensCumsum).named("cumsum");
  p.boolean(hasOff).named("has_off");
  p.i64(programsForShapes(a, bs)).named("P");
  return Status::ok();
}

} // namespace

Status prepareGatherPaKvCache(const aclnn::GatherPaKvCacheArgs &a,
                              host::Executor &executor) {
  // Step 1 (workspaceSize and executor are checked by the C API's prepareOp).
  if (Status s = host::requireNonNull({{"keyCache", a.keyCache},
                                          {"valueCache", a.valueCache},
                                          {"blockTables", a.blockTables},
                                          {"seqLens", a.seqLens},
                                          {"keyRef", a.keyRef},
                                          {"valueRef", a.valueRef}});
      !s)
    return s;
  // Step 2: an empty cache or output is a successful no-op.
  if (a.keyCache->isEmpty() || a.valueCache->isEmpty() || a.keyRef->isEmpty() ||
      a.valueRef->isEmpty())
    return Status::ok();
  if (Status s = checkRanks(a); !s)
    return s;
  if (Status s = checkDtypes(a); !s)
    return s;
  // Step 5.
  const bool nz = isNzMode(a.cacheMode);
  if (!nz && !isNormMode(a.cacheMode))
    return tiling("cacheMode: \"", a.cacheMode,
                  "\" is not a cache mode (expected \"Norm\" or \"PA_NZ\")");
  if (Status s = checkShapes(a, nz); !s)
    return s;
  auto launch = std::make_shared<Launch>();
  if (Status s = plan(a, nz, *launch); !s)
    return s;
  setKernelLaunch(executor, launch, "GatherPaKvCache");
  return Status::ok();
}

Status gatherPaKvCache(const aclnn::GatherPaKvCacheArgs &args) {
  return prepareAndRun(args, prepareGatherPaKvCache);
}


} // namespace tilejit::ops
