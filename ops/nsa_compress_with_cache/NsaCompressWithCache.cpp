//===- NsaCompressWithCache.cpp - Validation, kernel choice and launch ----===//
//
// Section numbers refer to ../shared/spec/nsa_compress_with_cache.md.
//
//===----------------------------------------------------------------------===//
#include "ops/nsa_compress_with_cache/NsaCompressWithCache.h"

#include "ops/Embedded.h"
#include "ops/common/KernelLaunch.h"
#include "ops/host/KernelArgs.h"
#include "ops/host/Kernels.h"
#include "ops/host/OpRegistry.h"

#include <algorithm>
#include <limits>
#include <cctype>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <unordered_map>
#include <vector>

namespace tilejit::ops {

using host::DataType;
using host::Status;
using host::TensorView;
namespace status = host::status;
using host::elemType;
using host::getKernel;
using host::prepareAndRun;
using host::programsForBytes;

namespace {

const jit::KernelSource &source() {
  static const jit::KernelSource &src = embeddedKernel(
      "ops/nsa_compress_with_cache/nsa_compress_with_cache.tile");
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

bool isHalfType(DataType t) {
  return t == DataType::Float16 || t == DataType::BFloat16;
}

//===----------------------------------------------------------------------===//
// Validation (section 4)
//===----------------------------------------------------------------------===//

/// Step 2: the dtypes.
Status checkDtypes(const aclnn::NsaCompressWithCacheArgs &a) {
  const std::pair<const TensorView *, const char *> data[] = {
      {a.input, "input"}, {a.weight, "weight"}, {a.outputCache, "outputCache"}};
  for (auto [t, name] : data)
    if (!isHalfType(t->dtype))
      return invalid(name, ": dtype ", t->dtype,
                     " is not supported (expected FLOAT16 or BFLOAT16)");
  if (a.slotMapping->dtype != DataType::Int32)
    return invalid("slotMapping: dtype ", a.slotMapping->dtype,
                   " is not supported (expected INT32)");
  if (a.blockTableOptional && a.blockTableOptional->dtype != DataType::Int32)
    return invalid("blockTableOptional: dtype ", a.blockTableOptional->dtype,
                   " is not supported (expected INT32)");
  if (a.weight->dtype != a.input->dtype)
    return invalid("weight: dtype ", a.weight->dtype,
                   " must equal input's dtype ", a.input->dtype);
  if (a.outputCache->dtype != a.input->dtype)
    return invalid("outputCache: dtype ", a.outputCache->dtype,
                   " must equal input's dtype ", a.input->dtype);
  return Status::ok();
}

bool isLayout(const char *layout) {
  std::string s(layout);
  for (char &c : s)
    c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s == "BSH" || s == "SBH" || s == "BSND" || s == "BNSD" || s == "TND";
}

/// Step 3: the tiling rules, in the spec's order.
Status checkTiling(const aclnn::NsaCompressWithCacheArgs &a) {
  const TensorView &in = *a.input, &w = *a.weight, &out = *a.outputCache;
  const std::pair<const TensorView *, const char *> data[] = {
      {&in, "input"}, {&w, "weight"}, {&out, "outputCache"}};
  for (auto [t, name] : data)
    if (t->isEmpty())
      return tiling(name, ": must not be empty, got ", shapeOf(*t));
  const int64_t cbs = a.compressBlockSize, stride = a.compressStride;
  if (cbs % 16 != 0)
    return tiling("compressBlockSize: must be a multiple of 16, got ", cbs);
  if (stride % 16 != 0)
    return tiling("compressStride: must be a multiple of 16, got ", stride);
  if (cbs < stride)
    return tiling("compressBlockSize: must be >= compressStride (", stride,
                  "), got ", cbs);
  if (cbs > 64)
    return tiling("compressBlockSize: must be <= 64, got ", cbs);
  if (stride < 16)
    return tiling("compressStride: must be >= 16, got ", stride);
  if (a.actSeqLenType != 1)
    return tiling("actSeqLenType: must be 1 (per-entry lengths), got ",
                  a.actSeqLenType);
  if (a.layoutOptional && !isLayout(a.layoutOptional))
    return tiling("layoutOptional: \"", a.layoutOptional,
                  "\" is not one of BSH, SBH, BSND, BNSD, TND");
  struct Rank {
    const TensorView *t;
    const char *name;
    int64_t rank;
  };
  const Rank ranks[] = {{&in, "input", 4},
                        {&w, "weight", 2},
                        {&out, "outputCache", 3},
                        {a.slotMapping, "slotMapping", 1},
                        {a.blockTableOptional, "blockTableOptional", 2}};
  for (const Rank &r : ranks)
    if (r.t && r.t->rank() != r.rank)
      return tiling(r.name, ": rank must be ", r.rank, ", got ", r.t->rank(),
                    " (", shapeOf(*r.t), ")");
  const int64_t n = in.dim(2), d = in.dim(3);
  if (w.dim(1) != n)
    return tiling("weight: shape[1] must equal input.shape[2] (N = ", n,
                  "), got ", shapeOf(w));
  if (w.dim(0) != cbs)
    return tiling("weight: shape[0] must equal compressBlockSize (", cbs,
                  "), got ", shapeOf(w));
  if (out.dim(1) != n)
    return tiling("outputCache: shape[1] must equal input.shape[2] (N = ", n,
                  "), got ", shapeOf(out));
  if (out.dim(2) != d)
    return tiling("outputCache: shape[2] must equal input.shape[3] (D = ", d,
                  "), got ", shapeOf(out));
  if (d % 16 != 0)
    return tiling("input: head dim (shape[3]) must be a multiple of 16, got ",
                  d);
  if (d > 256)
    return tiling("input: head dim (shape[3]) must be <= 256, got ", d);
  if (n == 0)
    return tiling("input: head count (shape[2]) must be > 0");
  if (n > 64)
    return tiling("input: head count (shape[2]) must be <= 64, got ", n);
  if (n > 50 && n % 2 != 0)
    return tiling("input: head count (shape[2]) above 50 must be even, got ",
                  n);
  if (a.pageBlockSize != 64 && a.pageBlockSize != 128)
    return tiling("pageBlockSize: must be 64 or 128, got ", a.pageBlockSize);
  if (in.dim(1) != a.pageBlockSize)
    return tiling("input: shape[1] must equal pageBlockSize (", a.pageBlockSize,
                  "), got ", shapeOf(in));
  if (!a.actSeqLenOptional)
    return tiling("actSeqLenOptional: must not be null (only the paged "
                  "layout is supported)");
  if (!a.blockTableOptional)
    return tiling("blockTableOptional: must not be null (only the paged "
                  "layout is supported)");
  const int64_t b = a.actSeqLenOptional->size();
  if (b > 2048)
    return tiling("actSeqLenOptional: batch size must be <= 2048, got ", b);
  if (a.slotMapping->dim(0) != b)
    return tiling("slotMapping: shape[0] must equal the batch size "
                  "len(actSeqLenOptional) = ",
                  b, ", got ", shapeOf(*a.slotMapping));
  if (a.blockTableOptional->dim(0) != b)
    return tiling("blockTableOptional: shape[0] must equal the batch size "
                  "len(actSeqLenOptional) = ",
                  b, ", got ", shapeOf(*a.blockTableOptional));
  // The table's capacity; past int64 (a stride-0 table can be that wide) no
  // length exceeds it.
  int64_t maxLen;
  if (__builtin_mul_overflow(a.blockTableOptional->dim(1), a.pageBlockSize,
                             &maxLen))
    maxLen = std::numeric_limits<int64_t>::max();
  for (int64_t i = 0; i < b; ++i) {
    const int64_t s = (*a.actSeqLenOptional)[i];
    if (s >= cbs && (s - cbs) % stride == 0 && s > maxLen)
      return tiling("actSeqLenOptional: entry ", i, " has length ", s,
                    ", more than blockTableOptional.shape[1] * pageBlockSize "
                    "= ",
                    maxLen);
  }
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// Kernel choice and arguments
//===----------------------------------------------------------------------===//

/// The prepared launch: the kernel, the work list it reads and its argument
/// block (the pack points into both, so it lives behind a shared_ptr).
struct Launch : KernelLaunch {
  std::vector<int64_t> work; // (b, k0) per qualifying entry
};

void pack(rt::ArgPack &p, const TensorView &t, const char *name) {
  p.tensor(elemType(t.dtype), t.firstElement(), t.shape, t.strides).named(name);
}

/// Heads per tile: a power of two with at most 2048 f32 elements per
/// [BN, D] tile (8 KiB: fewer, larger tiles amortise the per-tile work;
/// 4 KiB tiles measured slower), no more than the heads there are (a
/// tile past N is work for nothing), and at most the 64 heads the spec
/// allows.
int64_t headTile(int64_t n, int64_t d) {
  int64_t bn = 1;
  while (bn < 64 && bn < n && 2 * bn * d <= 2048)
    bn *= 2;
  return bn;
}

Status plan(const aclnn::NsaCompressWithCacheArgs &a, Launch &out) {
  const TensorView &in = *a.input;
  const int64_t cbs = a.compressBlockSize, page = a.pageBlockSize;
  const int64_t n = in.dim(2), d = in.dim(3);
  const int64_t bn = headTile(n, d);
  const bool bf16 = in.dtype == DataType::BFloat16;
  auto spec = [&] {
    return jit::Specialization{{"T", jit::dtypeValue(bf16 ? rt::ElemType::BF16 : rt::ElemType::F16)},
                               {"CBS", cbs},
                               {"PS", page},
                               {"D", d},
                               {"BN", bn}};
  };
  if (Status s = getKernel(source(), "nsa_compress", spec(), out.kernel, &out.use); !s)
    return s;
  const int64_t m = static_cast<int64_t>(out.work.size() / 2);
  const int64_t bytes = m * cbs * n * d * in.elementSize();
  rt::ArgPack &p = out.args;
  pack(p, in, "input");
  pack(p, *a.weight, "weight");
  pack(p, *a.slotMapping, "slots");
  pack(p, *a.blockTableOptional, "tables");
  p.tensor(out.work.data(), {m, 2}).named("work");
  pack(p, *a.outputCache, "out");
  p.i64(programsForBytes(m, bytes)).named("G");
  return Status::ok();
}

} // namespace

Status prepareNsaCompressWithCache(const aclnn::NsaCompressWithCacheArgs &a,
                                   host::Executor &executor) {
  // Step 1 (workspaceSize and executor are checked by the C API's prepareOp).
  if (Status s = host::requireNonNull({{"input", a.input},
                                          {"weight", a.weight},
                                          {"slotMapping", a.slotMapping},
                                          {"outputCache", a.outputCache}});
      !s)
    return s;
  if (Status s = checkDtypes(a); !s)
    return s;
  if (Status s = checkTiling(a); !s)
    return s;
  auto launch = std::make_shared<Launch>();
  const int64_t cbs = a.compressBlockSize, stride = a.compressStride;
  for (int64_t b = 0; b < a.actSeqLenOptional->size(); ++b) {
    const int64_t s = (*a.actSeqLenOptional)[b];
    if (s >= cbs && (s - cbs) % stride == 0) {
      launch->work.push_back(b);
      launch->work.push_back(s - cbs);
    }
  }
  if (launch->work.empty())
    return Status::ok(); // no entry completes a window: nothing to do
  if (Status s = plan(a, *launch); !s)
    return s;
  setKernelLaunch(executor, launch, "NsaCompressWithCache");
  return Status::ok();
}

Status nsaCompressWithCache(const aclnn::NsaCompressWithCacheArgs &args) {
  return prepareAndRun(args, prepareNsaCompressWithCache);
}


} // namespace tilejit::ops
