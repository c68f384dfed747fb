//===- AdversarialDescriptorTest.cpp - Lying tensor descriptors -----------===//
//
// Every tensor argument of every operator, given a descriptor that lies
// (../shared/spec: the specs' validation sections assume views inside their
// storage; issue 25 asks that no input reach memory it does not own),
// through the public C API only. Each operator starts from a valid call
// (checked to succeed and write its outputs); then, one argument at a time
// -- each optional tensor parameter the valid call leaves null included --
// its descriptor is replaced by one that
//   - views more elements than its storage holds,
//   - has an offset past its storage,
//   - has null data but elements,
//   - has a negative stride that escapes below the storage,
//   - has a dtype with no element size (DT_STRING),
// and the call must fail in phase 1 with the exact status, a message naming
// the operator, the argument and the rule, no executor, and every buffer of
// every argument byte-identical. aclCreateTensor itself must refuse sizes,
// strides and offsets whose products or sums overflow int64, and unknown
// dtypes. The suite runs under ASan/UBSan in CI (the sanitize build runs
// every test): a lie that reached a kernel would show there.
//
// IndexExtremes: the index arithmetic of the specs' pseudo-code at int64
// extremes (prefix sums past 2^63, windows past int64, capacities whose
// products overflow), with outputs compared row by row to what the spec
// writes.
//
//===----------------------------------------------------------------------===//
#include "acl/acl.h"
#include "aclnnop/aclnn_flash_attention_score_grad.h"
#include "aclnnop/aclnn_gather_pa_kv_cache.h"
#include "aclnnop/aclnn_incre_flash_attention_v4.h"
#include "aclnnop/aclnn_nsa_compress_with_cache.h"
#include "aclnnop/aclnn_scatter_pa_kv_cache.h"
#include "ops/aclnn/AclObjects.h"
#include "ops/host/DataType.h"
#include "ops/host/TensorView.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

using namespace tilejit;
using host::DataType;

namespace {

constexpr int32_t kNull = ACLNN_ERR_PARAM_NULLPTR;
constexpr int32_t kInvalid = ACLNN_ERR_PARAM_INVALID;
/// The byte non-index buffer `i` starts as: finite in every float type, and
/// different per argument, so that a copy from one to another shows.
unsigned char patternOf(size_t i) {
  return static_cast<unsigned char>(0x30 + 2 * i);
}

/// One tensor argument of a call: its name in the C API, its descriptor
/// and, for index tensors, its contents (INT32 or INT64).
struct ArgSpec {
  const char *name;
  DataType dtype;
  std::vector<int64_t> shape;
  std::vector<int64_t> values = {}; // empty: the byte pattern
};

/// How one argument's descriptor lies.
enum class Lie {
  None,              ///< a truthful contiguous descriptor
  ViewPastStorage,   ///< storage one element short of the view
  OffsetPastStorage, ///< offset past the end of a storage that fits the view
  NullData,          ///< data null, elements present
  NegativeStride,    ///< an outer stride negated, offset 0: escapes below 0
  SizelessDtype,     ///< DT_STRING: a known dtype with no element size
};

const char *lieName(Lie lie) {
  switch (lie) {
  case Lie::None: return "None";
  case Lie::ViewPastStorage: return "ViewPastStorage";
  case Lie::OffsetPastStorage: return "OffsetPastStorage";
  case Lie::NullData: return "NullData";
  case Lie::NegativeStride: return "NegativeStride";
  case Lie::SizelessDtype: return "SizelessDtype";
  }
  return "?";
}

/// The axis a NegativeStride lie negates: the outermost with extent >= 2.
int negatedAxis(const std::vector<int64_t> &shape) {
  for (size_t k = 0; k < shape.size(); ++k)
    if (shape[k] >= 2)
      return static_cast<int>(k);
  return -1;
}

/// The owned storage of one argument and its handle.
struct Arg {
  ArgSpec spec;
  std::vector<unsigned char> bytes;
  aclTensor *handle = nullptr;

  Arg(ArgSpec s, Lie lie, unsigned char pattern) : spec(std::move(s)) {
    const int64_t numel = host::shapeNumel(spec.shape);
    const int64_t size = host::elementSize(spec.dtype);
    // One more element than the view needs: an OffsetPastStorage lie then
    // still has real memory under its storage claim.
    bytes.assign(static_cast<size_t>((numel + 1) * size), pattern);
    for (size_t i = 0; i < spec.values.size(); ++i) {
      if (spec.dtype == DataType::Int64) {
        std::memcpy(bytes.data() + i * 8, &spec.values[i], 8);
      } else {
        const auto v = static_cast<int32_t>(spec.values[i]);
        std::memcpy(bytes.data() + i * 4, &v, 4);
      }
    }
    std::vector<int64_t> strides = host::contiguousStrides(spec.shape);
    std::vector<int64_t> storage{numel};
    int64_t offset = 0;
    void *data = bytes.data();
    auto dtype = static_cast<aclDataType>(spec.dtype);
    switch (lie) {
    case Lie::None:
      break;
    case Lie::ViewPastStorage:
      storage = {numel - 1};
      break;
    case Lie::OffsetPastStorage:
      offset = numel + 1;
      break;
    case Lie::NullData:
      data = nullptr;
      break;
    case Lie::NegativeStride: {
      int k = negatedAxis(spec.shape);
      EXPECT_GE(k, 0) << spec.name << " has no axis to negate";
      if (k >= 0)
        strides[static_cast<size_t>(k)] = -strides[static_cast<size_t>(k)];
      break;
    }
    case Lie::SizelessDtype:
      dtype = ACL_STRING;
      break;
    }
    handle = aclCreateTensor(spec.shape.data(), spec.shape.size(), dtype,
                             strides.data(), offset, ACL_FORMAT_ND,
                             storage.data(), storage.size(), data);
    EXPECT_NE(handle, nullptr) << spec.name << " " << lieName(lie) << ": "
                               << aclGetRecentErrMsg();
  }
  Arg(const Arg &) = delete;
  Arg &operator=(const Arg &) = delete;
  ~Arg() { aclDestroyTensor(handle); }
};

/// The tensors of one call, by argument name.
struct Args {
  std::vector<std::unique_ptr<Arg>> args;
  aclTensor *operator[](const char *name) const {
    if (aclTensor *t = opt(name))
      return t;
    ADD_FAILURE() << "no argument " << name;
    return nullptr;
  }
  /// An optional argument: null unless this call passes it.
  aclTensor *opt(const char *name) const {
    for (const auto &a : args)
      if (std::strcmp(a->spec.name, name) == 0)
        return a->handle;
    return nullptr;
  }
  std::vector<std::vector<unsigned char>> snapshot() const {
    std::vector<std::vector<unsigned char>> out;
    for (const auto &a : args)
      out.push_back(a->bytes);
    return out;
  }
};

/// One operator: the tensor arguments of a valid call and its phase 1 over
/// them (the C entry point with every other argument fixed).
struct OpCase {
  std::string op; ///< e.g. "aclnnGatherPaKvCache"
  std::vector<ArgSpec> specs;
  /// The optional tensor parameters the valid call leaves null: each is
  /// also passed once, lying (any descriptor is checked, used or not).
  std::vector<const char *> optionals = {};
  std::function<int32_t(const Args &, uint64_t *, aclOpExecutor **)> phase1;
  std::function<int32_t(void *, uint64_t, aclOpExecutor *)> phase2;
};

/// Builds the call's tensors with `lie` applied to argument `which` (or
/// none) and runs phase 1 (and phase 2 if phase 1 succeeded).
struct Outcome {
  int32_t rc = -1;
  std::string message;
  bool executorReturned = false;
};

Outcome run(const OpCase &c, Args &args) {
  Outcome out;
  uint64_t ws = 0;
  aclOpExecutor *exec = nullptr;
  (void)aclGetRecentErrMsg(); // clear
  out.rc = c.phase1(args, &ws, &exec);
  const char *m = aclGetRecentErrMsg();
  out.message = m ? m : "";
  out.executorReturned = exec != nullptr;
  if (out.rc == 0) {
    std::vector<unsigned char> workspace(static_cast<size_t>(ws) + 1);
    out.rc = c.phase2(workspace.data(), ws, exec);
    m = aclGetRecentErrMsg();
    out.message = m ? m : "";
  }
  return out;
}

Args build(const OpCase &c, int which, Lie lie,
           size_t required = SIZE_MAX) {
  Args a;
  for (size_t i = 0; i < c.specs.size(); ++i)
    if (i < required || static_cast<int>(i) == which)
      a.args.push_back(std::make_unique<Arg>(
          c.specs[i], static_cast<int>(i) == which ? lie : Lie::None,
          patternOf(i)));
  return a;
}

/// The valid call succeeds and writes something.
void expectBaselineWrites(const OpCase &c) {
  ASSERT_FALSE(c.specs.empty());
  Args a = build(c, -1, Lie::None);
  auto before = a.snapshot();
  Outcome o = run(c, a);
  ASSERT_EQ(o.rc, 0) << c.op << " baseline: " << o.message;
  EXPECT_TRUE(a.snapshot() != before) << c.op << " baseline wrote nothing";
}

/// What a lie must produce: the status and the rule's words.
struct Expected {
  int32_t rc;
  std::string rule;
};

Expected expectedFor(Lie lie, const ArgSpec &s) {
  const int64_t numel = host::shapeNumel(s.shape);
  std::vector<int64_t> strides = host::contiguousStrides(s.shape);
  switch (lie) {
  case Lie::ViewPastStorage:
    return {kInvalid, "the view reaches element index " +
                          std::to_string(numel - 1) +
                          " but its storage holds " +
                          std::to_string(numel - 1) + " elements"};
  case Lie::OffsetPastStorage:
    return {kInvalid, "the view reaches element index " +
                          std::to_string(2 * numel) +
                          " but its storage holds " + std::to_string(numel) +
                          " elements"};
  case Lie::NullData:
    return {kNull, "data is null but the view has " + std::to_string(numel) +
                       " elements"};
  case Lie::NegativeStride: {
    const auto k = static_cast<size_t>(negatedAxis(s.shape));
    return {kInvalid, "the view reaches element index " +
                          std::to_string(-(s.shape[k] - 1) * strides[k]) +
                          ", before the start of its storage"};
  }
  case Lie::SizelessDtype:
    return {kInvalid, "dtype " + std::to_string(ACL_STRING) +
                          " is not a data type with an element size"};
  case Lie::None:
    break;
  }
  return {0, ""};
}

/// Every lie on every argument of `c`, the optional ones included.
void expectEveryLieRefused(OpCase c) {
  const size_t required = c.specs.size();
  for (const char *name : c.optionals)
    c.specs.push_back({name, DataType::Float16, {4, 4}});
  for (size_t i = 0; i < c.specs.size(); ++i) {
    for (Lie lie : {Lie::ViewPastStorage, Lie::OffsetPastStorage,
                    Lie::NullData, Lie::NegativeStride, Lie::SizelessDtype}) {
      SCOPED_TRACE(c.op + " " + c.specs[i].name + " " + lieName(lie));
      Args a = build(c, static_cast<int>(i), lie, required);
      auto before = a.snapshot();
      Outcome o = run(c, a);
      Expected want = expectedFor(lie, c.specs[i]);
      EXPECT_EQ(o.rc, want.rc) << o.message;
      EXPECT_NE(o.message.find(c.op + "GetWorkspaceSize: " +
                               c.specs[i].name + ": " + want.rule),
                std::string::npos)
          << o.message;
      EXPECT_FALSE(o.executorReturned);
      EXPECT_TRUE(a.snapshot() == before) << "a buffer was written";
    }
  }
}

/// aclCreateTensor refuses, with a message, descriptors shaped like `s`
/// whose arithmetic overflows int64, and an unknown dtype.
void expectOverflowingDescriptorsRefused(const ArgSpec &s) {
  SCOPED_TRACE(s.name);
  const auto dtype = static_cast<aclDataType>(s.dtype);
  std::vector<int64_t> storage{host::shapeNumel(s.shape)};
  unsigned char byte = 0;
  auto refused = [&](std::vector<int64_t> dims, const int64_t *strides,
                     int64_t offset, std::vector<int64_t> store,
                     aclDataType type, const std::string &rule) {
    (void)aclGetRecentErrMsg();
    aclTensor *t =
        aclCreateTensor(dims.data(), dims.size(), type, strides, offset,
                        ACL_FORMAT_ND, store.empty() ? nullptr : store.data(),
                        store.size(), &byte);
    EXPECT_EQ(t, nullptr) << rule;
    aclDestroyTensor(t);
    const char *m = aclGetRecentErrMsg();
    EXPECT_NE(std::string(m ? m : "").find("aclCreateTensor: " + rule),
              std::string::npos)
        << (m ? m : "(no message)");
  };
  // The element count: dimension 0 grown until the product overflows.
  std::vector<int64_t> huge = s.shape;
  huge[0] = INT64_MAX / 2 + 1;
  if (huge.size() == 1)
    huge.push_back(2);
  huge.back() = std::max<int64_t>(huge.back(), 2);
  refused(huge, nullptr, 0, storage, dtype, "the product of viewDims");
  // stride * (size - 1).
  std::vector<int64_t> dims = s.shape;
  dims[0] = 3;
  std::vector<int64_t> strides = host::contiguousStrides(dims);
  strides[0] = INT64_MAX / 2 + 1;
  refused(dims, strides.data(), 0, storage, dtype, "offset 0 + (viewDims - 1)");
  // offset + extent.
  refused(dims, nullptr, INT64_MAX - 1, storage, dtype,
          "offset " + std::to_string(INT64_MAX - 1) + " + (viewDims - 1)");
  // offset + extent + 1, with no storage dims (the storage is the view).
  std::vector<int64_t> one(dims.size(), 1);
  refused(one, nullptr, INT64_MAX, {}, dtype, "the extent of the view");
  // The storage element count, and its byte count.
  refused(dims, nullptr, 0, {INT64_MAX / 2 + 1, 2}, dtype, "the storage [");
  if (host::elementSize(s.dtype) > 1)
    refused(dims, nullptr, 0, {INT64_MAX / 2}, dtype,
            "the storage [" + std::to_string(INT64_MAX / 2) + "]");
  // An unknown dtype.
  refused(dims, nullptr, 0, storage, static_cast<aclDataType>(999),
          "dataType 999 is not an aclDataType");
}

//===----------------------------------------------------------------------===//
// The five operators' valid calls
//===----------------------------------------------------------------------===//

OpCase scatterCase() {
  // S2: key [T=4, N=2, D=16], caches [nb=2, bs=4, N, D].
  OpCase c;
  c.op = "aclnnScatterPaKvCache";
  c.specs = {{"key", DataType::Float16, {4, 2, 16}},
             {"keyCacheRef", DataType::Float16, {2, 4, 2, 16}},
             {"slotMapping", DataType::Int32, {4}, {0, 5, 2, 7}},
             {"value", DataType::Float16, {4, 2, 16}},
             {"valueCacheRef", DataType::Float16, {2, 4, 2, 16}}};
  c.optionals = {"compressLensOptional", "compressSeqOffsetOptional",
                  "seqLensOptional"};
  c.phase1 = [](const Args &a, uint64_t *ws, aclOpExecutor **e) {
    return aclnnScatterPaKvCacheGetWorkspaceSize(
        a["key"], a["keyCacheRef"], a["slotMapping"], a["value"],
        a["valueCacheRef"], a.opt("compressLensOptional"),
        a.opt("compressSeqOffsetOptional"), a.opt("seqLensOptional"), nullptr,
        nullptr, nullptr, nullptr, ws, e);
  };
  c.phase2 = [](void *w, uint64_t n, aclOpExecutor *e) {
    return aclnnScatterPaKvCache(w, n, e, nullptr);
  };
  return c;
}

OpCase gatherCase() {
  // Norm: caches [nb=3, bs=4, N=2, D=8], lengths {3, 5} -> T = 8.
  OpCase c;
  c.op = "aclnnGatherPaKvCache";
  c.specs = {{"keyCache", DataType::Float16, {3, 4, 2, 8}},
             {"valueCache", DataType::Float16, {3, 4, 2, 8}},
             {"blockTables", DataType::Int32, {2, 2}, {0, 1, 2, 0}},
             {"seqLens", DataType::Int32, {2}, {3, 5}},
             {"keyRef", DataType::Float16, {8, 2, 8}},
             {"valueRef", DataType::Float16, {8, 2, 8}},
             {"seqOffsetOptional", DataType::Int32, {2}, {0, 0}}};
  c.phase1 = [](const Args &a, uint64_t *ws, aclOpExecutor **e) {
    char mode[] = "Norm";
    return aclnnGatherPaKvCacheGetWorkspaceSize(
        a["keyCache"], a["valueCache"], a["blockTables"], a["seqLens"],
        a["keyRef"], a["valueRef"], a["seqOffsetOptional"], mode, false, ws,
        e);
  };
  c.phase2 = [](void *w, uint64_t n, aclOpExecutor *e) {
    return aclnnGatherPaKvCache(w, n, e, nullptr);
  };
  return c;
}

OpCase ifaCase() {
  // BNSD: query [B=2, N=2, 1, D=16], KV as one tensor [B, Nkv=1, S=8, D].
  OpCase c;
  c.op = "aclnnIncreFlashAttentionV4";
  c.specs = {{"query", DataType::Float16, {2, 2, 1, 16}},
             {"key[0]", DataType::Float16, {2, 1, 8, 16}},
             {"value[0]", DataType::Float16, {2, 1, 8, 16}},
             {"attentionOut", DataType::Float16, {2, 2, 1, 16}}};
  c.optionals = {"pseShift",       "attenMask",       "dequantScale1",
                 "quantScale1",    "dequantScale2",   "quantScale2",
                 "quantOffset2",   "antiquantScale",  "antiquantOffset",
                 "blocktable",     "kvPaddingSize"};
  c.phase1 = [](const Args &a, uint64_t *ws, aclOpExecutor **e) {
    const aclTensor *k = a["key[0]"], *v = a["value[0]"];
    aclTensorList *keys = aclCreateTensorList(&k, 1);
    aclTensorList *values = aclCreateTensorList(&v, 1);
    char layout[] = "BNSD";
    int32_t rc = aclnnIncreFlashAttentionV4GetWorkspaceSize(
        a["query"], keys, values, a.opt("pseShift"), a.opt("attenMask"),
        nullptr, a.opt("dequantScale1"), a.opt("quantScale1"),
        a.opt("dequantScale2"), a.opt("quantScale2"), a.opt("quantOffset2"),
        a.opt("antiquantScale"), a.opt("antiquantOffset"), a.opt("blocktable"),
        a.opt("kvPaddingSize"), 2, 0.25, layout, 1, 0, 1, a["attentionOut"],
        ws, e);
    aclDestroyTensorList(keys);
    aclDestroyTensorList(values);
    return rc;
  };
  c.phase2 = [](void *w, uint64_t n, aclOpExecutor *e) {
    return aclnnIncreFlashAttentionV4(w, n, e, nullptr);
  };
  return c;
}

OpCase nsaCase() {
  // Two entries of 64 tokens, one page each: cbs 32, stride 16, P 64.
  OpCase c;
  c.op = "aclnnNsaCompressWithCache";
  c.specs = {{"input", DataType::Float16, {2, 64, 2, 16}},
             {"weight", DataType::Float16, {32, 2}},
             {"slotMapping", DataType::Int32, {2}, {0, 3}},
             {"blockTableOptional", DataType::Int32, {2, 1}, {1, 0}},
             {"outputCache", DataType::Float16, {4, 2, 16}}};
  c.phase1 = [](const Args &a, uint64_t *ws, aclOpExecutor **e) {
    const int64_t lens[] = {64, 64};
    aclIntArray *l = aclCreateIntArray(lens, 2);
    int32_t rc = aclnnNsaCompressWithCacheGetWorkspaceSize(
        a["input"], a["weight"], a["slotMapping"], l,
        a["blockTableOptional"], nullptr, 32, 16, 1, 64, a["outputCache"], ws,
        e);
    aclDestroyIntArray(l);
    return rc;
  };
  c.phase2 = [](void *w, uint64_t n, aclOpExecutor *e) {
    return aclnnNsaCompressWithCache(w, n, e, nullptr);
  };
  return c;
}

OpCase fagCase() {
  // TND, one batch: T1 = T2 = 8, N1 = N2 = 2, D = Dv = 16, no mask.
  OpCase c;
  c.op = "aclnnFlashAttentionUnpaddingScoreGradV5";
  const DataType h = DataType::Float16;
  c.specs = {{"query", h, {8, 2, 16}},
             {"keyIn", h, {8, 2, 16}},
             {"value", h, {8, 2, 16}},
             {"dy", h, {8, 2, 16}},
             {"softmaxMaxOptional", DataType::Float, {8, 2, 8}},
             {"softmaxSumOptional", DataType::Float, {8, 2, 8}},
             {"attentionInOptional", h, {8, 2, 16}},
             {"dqOut", h, {8, 2, 16}},
             {"dkOut", h, {8, 2, 16}},
             {"dvOut", h, {8, 2, 16}}};
  c.optionals = {"queryRope",           "keyInRope",
                 "pseShiftOptional",    "dropMaskOptional",
                 "paddingMaskOptional", "attenMaskOptional",
                 "softmaxInOptional",   "sinkInOptional",
                 "dqRopeOut",           "dkRopeOut",
                 "dpseOut",             "dsinkOut"};
  c.phase1 = [](const Args &a, uint64_t *ws, aclOpExecutor **e) {
    const int64_t eight[] = {8};
    aclIntArray *cq = aclCreateIntArray(eight, 1);
    aclIntArray *ck = aclCreateIntArray(eight, 1);
    char layout[] = "TND", same[] = "same_as_input";
    int32_t rc = aclnnFlashAttentionUnpaddingScoreGradV5GetWorkspaceSize(
        a["query"], a.opt("queryRope"), a["keyIn"], a.opt("keyInRope"),
        a["value"], a["dy"], a.opt("pseShiftOptional"),
        a.opt("dropMaskOptional"), a.opt("paddingMaskOptional"),
        a.opt("attenMaskOptional"), a["softmaxMaxOptional"],
        a["softmaxSumOptional"], a.opt("softmaxInOptional"),
        a["attentionInOptional"], a.opt("sinkInOptional"), nullptr, cq, ck,
        nullptr, nullptr, 0.25, 1.0, 65536, 65536, 2, layout, 0, 0, 1, same,
        a["dqOut"], a.opt("dqRopeOut"), a["dkOut"], a.opt("dkRopeOut"),
        a["dvOut"], a.opt("dpseOut"), a.opt("dsinkOut"), ws, e);
    aclDestroyIntArray(cq);
    aclDestroyIntArray(ck);
    return rc;
  };
  c.phase2 = [](void *w, uint64_t n, aclOpExecutor *e) {
    return aclnnFlashAttentionUnpaddingScoreGradV5(w, n, e, nullptr);
  };
  return c;
}

std::vector<OpCase> allCases() {
  return {scatterCase(), gatherCase(), ifaCase(), nsaCase(), fagCase()};
}

//===----------------------------------------------------------------------===//
// The tests
//===----------------------------------------------------------------------===//

// spec_rule: desc-data
// spec_rule: desc-storage
// spec_rule: desc-dtype
TEST(AdversarialDescriptor, ScatterPaKvCache) {
  OpCase c = scatterCase();
  expectBaselineWrites(c);
  expectEveryLieRefused(c);
}

// spec_rule: desc-data
// spec_rule: desc-storage
// spec_rule: desc-dtype
TEST(AdversarialDescriptor, GatherPaKvCache) {
  OpCase c = gatherCase();
  expectBaselineWrites(c);
  expectEveryLieRefused(c);
}

// spec_rule: desc-data
// spec_rule: desc-storage
// spec_rule: desc-dtype
TEST(AdversarialDescriptor, IncreFlashAttentionV4) {
  OpCase c = ifaCase();
  expectBaselineWrites(c);
  expectEveryLieRefused(c);
}

// spec_rule: desc-data
// spec_rule: desc-storage
// spec_rule: desc-dtype
TEST(AdversarialDescriptor, NsaCompressWithCache) {
  OpCase c = nsaCase();
  expectBaselineWrites(c);
  expectEveryLieRefused(c);
}

// spec_rule: desc-data
// spec_rule: desc-storage
// spec_rule: desc-dtype
TEST(AdversarialDescriptor, FlashAttentionUnpaddingScoreGradV5) {
  OpCase c = fagCase();
  expectBaselineWrites(c);
  expectEveryLieRefused(c);
}

// spec_rule: desc-int64
// spec_rule: desc-dtype
TEST(AdversarialDescriptor, CreateTensorRefusesOverflow) {
  for (const OpCase &c : allCases())
    for (const ArgSpec &s : c.specs)
      expectOverflowingDescriptorsRefused(s);
}

// spec_rule: desc-int64
TEST(AdversarialDescriptor, CreateIntArrayRefusesOverflow) {
  const int64_t v = 1;
  (void)aclGetRecentErrMsg();
  EXPECT_EQ(aclCreateIntArray(&v, UINT64_MAX / 4), nullptr);
  const char *m = aclGetRecentErrMsg();
  EXPECT_NE(std::string(m ? m : "").find("aclCreateIntArray: size "),
            std::string::npos);
  aclIntArray *ok = aclCreateIntArray(&v, 1);
  EXPECT_NE(ok, nullptr);
  aclDestroyIntArray(ok);
}

// A negative stride whose offset keeps the view inside the storage passes
// the descriptor check (the operator then decides on its own rules), and an
// empty view with null data needs no storage.
// spec_rule: desc-storage
TEST(AdversarialDescriptor, TruthfulUnusualDescriptorsPass) {
  std::vector<unsigned char> bytes(64);
  const int64_t dims[] = {4, 2}, strides[] = {-2, 1}, storage[] = {8};
  aclTensor *t = aclCreateTensor(dims, 2, ACL_FLOAT16, strides, 6,
                                 ACL_FORMAT_ND, storage, 1, bytes.data());
  ASSERT_NE(t, nullptr);
  EXPECT_TRUE(host::checkDescriptor(*t, "t").isOk());
  aclDestroyTensor(t);
  // One element lower and it escapes.
  t = aclCreateTensor(dims, 2, ACL_FLOAT16, strides, 5, ACL_FORMAT_ND,
                      storage, 1, bytes.data());
  ASSERT_NE(t, nullptr);
  host::Status s = host::checkDescriptor(*t, "t");
  EXPECT_EQ(s.code(), kInvalid);
  EXPECT_NE(s.message().find("t: the view reaches element index -1"),
            std::string::npos)
      << s.message();
  aclDestroyTensor(t);
  const int64_t empty[] = {0, 5};
  t = aclCreateTensor(empty, 2, ACL_FLOAT, nullptr, 0, ACL_FORMAT_ND, nullptr,
                      0, nullptr);
  ASSERT_NE(t, nullptr);
  EXPECT_TRUE(host::checkDescriptor(*t, "t").isOk());
  aclDestroyTensor(t);
}

//===----------------------------------------------------------------------===//
// Index arithmetic at int64 extremes
//===----------------------------------------------------------------------===//

/// A tensor over owned bytes with any strides and storage.
struct Owned {
  std::vector<unsigned char> bytes;
  aclTensor *handle = nullptr;
  Owned(DataType t, std::vector<int64_t> shape, unsigned char fill,
        std::vector<int64_t> strides = {}, int64_t storageElems = -1) {
    if (storageElems < 0)
      storageElems = host::shapeNumel(shape);
    bytes.assign(static_cast<size_t>(storageElems * host::elementSize(t)),
                 fill);
    if (strides.empty())
      strides = host::contiguousStrides(shape);
    handle = aclCreateTensor(shape.data(), shape.size(),
                             static_cast<aclDataType>(t), strides.data(), 0,
                             ACL_FORMAT_ND, &storageElems, 1, bytes.data());
    EXPECT_NE(handle, nullptr) << aclGetRecentErrMsg();
  }
  Owned(const Owned &) = delete;
  Owned &operator=(const Owned &) = delete;
  ~Owned() { aclDestroyTensor(handle); }
  void setI64(const std::vector<int64_t> &v) {
    ASSERT_EQ(v.size() * 8, bytes.size());
    std::memcpy(bytes.data(), v.data(), bytes.size());
  }
  void setI32(const std::vector<int32_t> &v) {
    ASSERT_EQ(v.size() * 4, bytes.size());
    std::memcpy(bytes.data(), v.data(), bytes.size());
  }
};

/// Runs both phases of a scatter and expects success.
void scatter(Owned &key, Owned &keyCache, Owned &slots, Owned &value,
             Owned &valueCache, Owned &lens, Owned &seqLens, const char *mode,
             Owned *offsets = nullptr) {
  uint64_t ws = 0;
  aclOpExecutor *exec = nullptr;
  std::string m = mode;
  ASSERT_EQ(aclnnScatterPaKvCacheGetWorkspaceSize(
                key.handle, keyCache.handle, slots.handle, value.handle,
                valueCache.handle, lens.handle,
                offsets ? offsets->handle : nullptr, seqLens.handle,
                nullptr, m.data(), nullptr, nullptr, &ws, &exec),
            0)
      << aclGetRecentErrMsg();
  std::vector<unsigned char> workspace(static_cast<size_t>(ws) + 1);
  ASSERT_EQ(aclnnScatterPaKvCache(workspace.data(), ws, exec, nullptr), 0)
      << aclGetRecentErrMsg();
}

/// Alibi (S4) keeps the last w tokens of each batch: rows [end[b] - w,
/// end[b]) with end[b] the inclusive prefix sum of seqLens, exactly
/// (spec section 5, S4; section 3). Batch 0 is a truthful control
/// (seqLens 2, w = 2: rows 0, 1 to slots 0, 1); then seqLens = INT64_MAX
/// with compressLens = INT64_MIN writes nothing (w <= 0), and batches whose
/// end passes 2^64 (and so wrapped back to 2 in 64 bits) write nothing.
// spec_rule: scatter-8-values
TEST(IndexExtremes, ScatterAlibiLengthsPastInt64) {
  const int64_t kMax = INT64_MAX, kMin = INT64_MIN;
  const int64_t t = 4, d = 16;
  Owned key(DataType::Float16, {t, 1, d}, 0);
  for (int64_t r = 0; r < t; ++r) // row r: bytes 0x10 + r
    std::memset(key.bytes.data() + r * d * 2, 0x10 + static_cast<int>(r),
                static_cast<size_t>(d * 2));
  Owned value(DataType::Float16, {t, 1, d}, 0);
  value.bytes = key.bytes;
  Owned keyCache(DataType::Float16, {2, 8, 1, d}, 0xEE);
  Owned valueCache(DataType::Float16, {2, 8, 1, d}, 0xEE);
  Owned slots(DataType::Int64, {5}, 0);
  Owned lens(DataType::Int64, {5}, 0);
  Owned seq(DataType::Int64, {5}, 0);
  slots.setI64({0, 4, 6, 8, 10});
  lens.setI64({2, kMin, 1, 2, 2});
  // Ends: 2; 2^63 + 1 (w = MIN <= 0); 2^64; 2^64 + 1 and 2^64 + 3, which
  // 64-bit sums wrap to 1 and 3 (rows 0 to slot 9, rows 1-2 to slots 10-11).
  seq.setI64({2, kMax, kMax, 1, 2});
  scatter(key, keyCache, slots, value, valueCache, lens, seq, "Alibi");
  const int64_t row = d * 2;
  for (const Owned *cache : {&keyCache, &valueCache}) {
    for (int64_t slot = 0; slot < 16; ++slot) {
      const unsigned char want =
          slot < 2 ? static_cast<unsigned char>(0x10 + slot) : 0xEE;
      for (int64_t b = 0; b < row; ++b)
        ASSERT_EQ(cache->bytes[static_cast<size_t>(slot * row + b)], want)
            << "slot " << slot;
    }
  }
}

/// Omni (S5) reads row(j) = key[start[b] + j] with start[b] the exclusive
/// prefix sum, exactly: a negative start (-3) reaches rows 0-1 from j = 3;
/// a batch of length MAX covers rows 2-3; the batches starting at 2^63 + 1
/// and 2^64 (which 64 bits wrap to row 0) read nothing.
// spec_rule: scatter-8-values
TEST(IndexExtremes, ScatterOmniStartsPastInt64) {
  const int64_t kMax = INT64_MAX;
  const int64_t t = 4, d = 16;
  Owned key(DataType::Float16, {t, 1, d}, 0);
  for (int64_t r = 0; r < t; ++r)
    std::memset(key.bytes.data() + r * d * 2, 0x10 + static_cast<int>(r),
                static_cast<size_t>(d * 2));
  Owned value(DataType::Float16, {t, 1, d}, 0);
  value.bytes = key.bytes;
  Owned keyCache(DataType::Float16, {2, 8, 1, d}, 0xEE);
  Owned valueCache(DataType::Float16, {2, 8, 1, d}, 0xEE);
  Owned slots(DataType::Int64, {5}, 0);
  Owned lens(DataType::Int64, {5}, 0);
  Owned offs(DataType::Int64, {5}, 0);
  Owned seq(DataType::Int64, {5}, 0);
  slots.setI64({0, 2, 8, 10, 12});
  lens.setI64({1, 1, 1, 1, 1});
  offs.setI64({-1, -1, -1, -1, -1}); // no window: every row copied
  seq.setI64({-3, 5, kMax, kMax, 2});
  scatter(key, keyCache, slots, value, valueCache, lens, seq, "Omni", &offs);
  const int64_t row = d * 2;
  for (const Owned *cache : {&keyCache, &valueCache}) {
    for (int64_t slot = 0; slot < 16; ++slot) {
      unsigned char want = 0xEE;
      if (slot == 5 || slot == 6)
        want = static_cast<unsigned char>(0x10 + slot - 5);
      if (slot == 8 || slot == 9)
        want = static_cast<unsigned char>(0x12 + slot - 8);
      for (int64_t b = 0; b < row; ++b)
        ASSERT_EQ(cache->bytes[static_cast<size_t>(slot * row + b)], want)
            << "slot " << slot;
    }
  }
}

/// The same in S3 (4-D key, TAIL): t = seqLens[b] - w + j for j < w, with
/// seqLens[b] - w below -2^63 (which 64 bits wrap to 1) and w = MAX: no row
/// t lies in [0, S) since t < seqLens[b] < 0.
// spec_rule: scatter-8-values
TEST(IndexExtremes, ScatterPaddedTailWindowPastInt64) {
  const int64_t s = 4, d = 16;
  Owned key(DataType::Float16, {2, s, 1, d}, 0x11);
  Owned value(DataType::Float16, {2, s, 1, d}, 0x11);
  Owned keyCache(DataType::Float16, {2, 8, 1, d}, 0xEE);
  Owned valueCache(DataType::Float16, {2, 8, 1, d}, 0xEE);
  Owned slots(DataType::Int64, {2, 1}, 0);
  Owned lens(DataType::Int64, {2, 1}, 0);
  Owned seq(DataType::Int64, {2}, 0);
  slots.setI64({0, 8});
  // Batch 0: the last 2 of 3 rows (control); batch 1: len = MIN, w = MAX.
  lens.setI64({2, INT64_MAX});
  seq.setI64({3, INT64_MIN});
  scatter(key, keyCache, slots, value, valueCache, lens, seq, "None");
  const int64_t row = d * 2;
  for (int64_t slot = 0; slot < 16; ++slot) {
    const unsigned char want = slot < 2 ? 0x11 : 0xEE;
    for (int64_t b = 0; b < row; ++b)
      ASSERT_EQ(keyCache.bytes[static_cast<size_t>(slot * row + b)], want)
          << "slot " << slot;
  }
}

/// Runs both phases of a Norm gather and expects success.
void gather(Owned &keyCache, Owned &valueCache, Owned &tables, Owned &seqLens,
            Owned &keyRef, Owned &valueRef, bool cumsum) {
  uint64_t ws = 0;
  aclOpExecutor *exec = nullptr;
  char mode[] = "Norm";
  ASSERT_EQ(aclnnGatherPaKvCacheGetWorkspaceSize(
                keyCache.handle, valueCache.handle, tables.handle,
                seqLens.handle, keyRef.handle, valueRef.handle, nullptr, mode,
                cumsum, &ws, &exec),
            0)
      << aclGetRecentErrMsg();
  std::vector<unsigned char> workspace(static_cast<size_t>(ws) + 1);
  ASSERT_EQ(aclnnGatherPaKvCache(workspace.data(), ws, exec, nullptr), 0)
      << aclGetRecentErrMsg();
}

/// Gather with caches whose token p of block k holds bytes 0x20 + 8k + p:
/// `want[r]` is the byte output row r must hold (0xEE: untouched).
void expectGatherRows(bool cumsum, const std::vector<int64_t> &lengths,
                      const std::vector<int32_t> &table,
                      const std::vector<unsigned char> &want) {
  const int64_t nb = 5, bs = 4, d = 8, t = 8;
  const auto batches = static_cast<int64_t>(table.size() / 2);
  Owned keyCache(DataType::Float16, {nb, bs, 1, d}, 0);
  for (int64_t k = 0; k < nb; ++k)
    for (int64_t p = 0; p < bs; ++p)
      std::memset(keyCache.bytes.data() + (k * bs + p) * d * 2,
                  static_cast<int>(0x20 + 8 * k + p),
                  static_cast<size_t>(d * 2));
  Owned valueCache(DataType::Float16, {nb, bs, 1, d}, 0);
  valueCache.bytes = keyCache.bytes;
  Owned tables(DataType::Int64, {batches, 2}, 0);
  std::vector<int64_t> table64(table.begin(), table.end());
  tables.setI64(table64);
  Owned seq(DataType::Int64, {static_cast<int64_t>(lengths.size())}, 0);
  seq.setI64(lengths);
  Owned keyRef(DataType::Float16, {t, 1, d}, 0xEE);
  Owned valueRef(DataType::Float16, {t, 1, d}, 0xEE);
  gather(keyCache, valueCache, tables, seq, keyRef, valueRef, cumsum);
  for (const Owned *out : {&keyRef, &valueRef})
    for (int64_t r = 0; r < t; ++r)
      for (int64_t b = 0; b < d * 2; ++b)
        ASSERT_EQ(out->bytes[static_cast<size_t>(r * d * 2 + b)],
                  want[static_cast<size_t>(r)])
            << "row " << r;
}

/// Section 3: start(b) is the exact sum of the earlier lengths. Batch 0
/// writes rows 0-2 (block 0), batch 1 (length MAX) rows 3-7 (blocks 1, 2);
/// batches 2-4 start past 2^63 -- a 64-bit sum wraps batch 3 back to row 1
/// and batch 4 to row 3 -- and write nothing.
// spec_rule: gather-6-values
TEST(IndexExtremes, GatherLengthsSumPast2To63) {
  const int64_t kMax = INT64_MAX;
  expectGatherRows(false, {3, kMax, kMax, 2, 3},
                   {0, 0, 1, 2, 3, 3, 4, 4, 4, 4},
                   {0x20, 0x21, 0x22, 0x28, 0x29, 0x2A, 0x2B, 0x30});
}

/// Cumsum mode: len(b) = seqLens[b+1] - seqLens[b] exactly; 3 - (MIN + 1)
/// is negative (no rows), not a 64-bit wrap to a huge length.
// spec_rule: gather-6-values
TEST(IndexExtremes, GatherCumsumDifferencePastInt64) {
  expectGatherRows(true, {0, 3, INT64_MIN + 1}, {0, 0, 1, 2},
                   {0x20, 0x21, 0x22, 0xEE, 0xEE, 0xEE, 0xEE, 0xEE});
}

/// A block table whose capacity W * blockSize passes int64 (a stride-0
/// table can be that wide) is refused, naming the argument; a 64-bit
/// product would wrap to a small capacity.
// spec_rule: ifa-8.13
TEST(IndexExtremes, IfaBlockTableCapacityPastInt64) {
  const int64_t w = (int64_t(1) << 60) + 1000, bs = 16;
  Owned query(DataType::Float16, {1, 2, 1, 16}, 0x30);
  Owned cache(DataType::Float16, {2, bs, 16}, 0x30);
  Owned out(DataType::Float16, {1, 2, 1, 16}, 0xEE);
  Owned table(DataType::Int32, {1, w}, 0, {0, 0}, 1);
  const aclTensor *k = cache.handle;
  aclTensorList *keys = aclCreateTensorList(&k, 1);
  aclTensorList *values = aclCreateTensorList(&k, 1);
  const int64_t asl[] = {16};
  aclIntArray *lens = aclCreateIntArray(asl, 1);
  char layout[] = "BNSD";
  uint64_t ws = 0;
  aclOpExecutor *exec = nullptr;
  EXPECT_EQ(aclnnIncreFlashAttentionV4GetWorkspaceSize(
                query.handle, keys, values, nullptr, nullptr, lens, nullptr,
                nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,
                table.handle, nullptr, 2, 0.25, layout, 1, bs, 1, out.handle,
                &ws, &exec),
            kInvalid);
  const char *m = aclGetRecentErrMsg();
  EXPECT_NE(std::string(m ? m : "")
                .find("blocktable: capacity dim 1 (" + std::to_string(w) +
                      ") * blockSize (16) overflows int64"),
            std::string::npos)
      << (m ? m : "");
  EXPECT_EQ(exec, nullptr);
  for (unsigned char c : out.bytes)
    ASSERT_EQ(c, 0xEE);
  aclDestroyTensorList(keys);
  aclDestroyTensorList(values);
  aclDestroyIntArray(lens);
}

/// Nct windows: offset + (T - 1) * stride + N * D past int64 is refused as
/// past the buffer, not wrapped to a small end.
// spec_rule: scatter-7.5-nct
TEST(IndexExtremes, ScatterNctWindowPastInt64) {
  const int64_t t = 3, n = 1, d = 16;
  Owned key(DataType::Float16, {t, n, d}, 0x11);
  Owned value(DataType::Float16, {t, n, d}, 0x11);
  Owned keyCache(DataType::Float16, {1, 8, n, d}, 0xEE);
  Owned valueCache(DataType::Float16, {1, 8, n, d}, 0xEE);
  Owned slots(DataType::Int32, {t}, 0);
  slots.setI32({0, 1, 2});
  // (3 - 1) * 2^62 + 16 wraps to 16 in 64 bits: inside a 48-element buffer.
  const int64_t strideV[] = {int64_t(1) << 62, d}, offsetV[] = {0, 0};
  aclIntArray *strides = aclCreateIntArray(strideV, 2);
  aclIntArray *offsets = aclCreateIntArray(offsetV, 2);
  char mode[] = "Nct";
  uint64_t ws = 0;
  aclOpExecutor *exec = nullptr;
  EXPECT_EQ(aclnnScatterPaKvCacheGetWorkspaceSize(
                key.handle, keyCache.handle, slots.handle, value.handle,
                valueCache.handle, nullptr, nullptr, nullptr, nullptr, mode,
                strides, offsets, &ws, &exec),
            ACLNN_ERR_INNER_TILING_ERROR);
  const char *m = aclGetRecentErrMsg();
  EXPECT_NE(std::string(m ? m : "").find("key: Nct window offset 0 + (3 - 1) "
                                         "* stride 4611686018427387904 + 16 "
                                         "overflows int64"),
            std::string::npos)
      << (m ? m : "");
  EXPECT_EQ(exec, nullptr);
  for (unsigned char c : keyCache.bytes)
    ASSERT_EQ(c, 0xEE);
  aclDestroyIntArray(strides);
  aclDestroyIntArray(offsets);
}

} // namespace
