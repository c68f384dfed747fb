//===- NsaCompressWithCacheTest.cpp - NsaCompressWithCache against the spec
//===//
//
// Section 9's matrix and section 7's edge cases of
// ../shared/spec/nsa_compress_with_cache.md through the public C API,
// compared bit for bit with the scalar reference (the spec's reduction
// order); every window size, stride, page size, both dtypes, strided input
// and weight views; the hand-written twin; every validation rule with its
// status code, message and untouched output.
//
//===----------------------------------------------------------------------===//
#include "ops/nsa_compress_with_cache/NsaCompressWithCacheTwin.h"
#include "acl/acl.h"
#include "aclnnop/aclnn_nsa_compress_with_cache.h"
#include "ops/aclnn/AclObjects.h"
#include "ops/host/DataType.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <memory>
#include <numeric>
#include <random>
#include <string>
#include <vector>

using namespace tilejit;
using host::DataType;

namespace {

/// A host tensor: owned storage and its aclTensor view (contiguous unless
/// strides are given; then the storage holds `storageElems` elements).
struct Tensor {
  DataType dtype;
  std::vector<int64_t> shape, strides;
  std::vector<unsigned char> bytes;
  aclTensor *handle = nullptr;

  Tensor(DataType t, std::vector<int64_t> dims, std::vector<int64_t> st = {},
         int64_t storageElems = -1)
      : dtype(t), shape(std::move(dims)), strides(std::move(st)) {
    const int64_t n =
        storageElems >= 0 ? storageElems : host::shapeNumel(shape);
    bytes.assign(static_cast<size_t>(n * host::elementSize(t)), 0);
    makeHandle();
  }
  Tensor(const Tensor &o)
      : dtype(o.dtype), shape(o.shape), strides(o.strides), bytes(o.bytes) {
    makeHandle();
  }
  Tensor &operator=(const Tensor &) = delete;
  ~Tensor() { aclDestroyTensor(handle); }
  void makeHandle() {
    const int64_t n =
        static_cast<int64_t>(bytes.size()) / host::elementSize(dtype);
    std::vector<int64_t> storage{n};
    handle = aclCreateTensor(shape.data(), shape.size(),
                             static_cast<aclDataType>(dtype),
                             strides.empty() ? nullptr : strides.data(), 0,
                             ACL_FORMAT_ND, storage.data(), 1, bytes.data());
  }
  int64_t elems() const {
    return static_cast<int64_t>(bytes.size()) / host::elementSize(dtype);
  }
  /// Random finite values in [-lim, lim] of the dtype (every storage element).
  void random(unsigned seed, float lim = 4.0f) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> dist(-lim, lim);
    for (int64_t i = 0; i < elems(); ++i)
      setFloat(i, dist(rng));
  }
  void setFloat(int64_t i, float f) {
    const uint16_t h = dtype == DataType::BFloat16
                           ? host::floatToBFloat16Bits(f)
                           : host::floatToHalfBits(f);
    std::memcpy(bytes.data() + i * 2, &h, 2);
  }
  uint16_t bits(int64_t i) const {
    uint16_t h;
    std::memcpy(&h, bytes.data() + i * 2, 2);
    return h;
  }
  void setInts(const std::vector<int64_t> &values) {
    for (size_t i = 0; i < values.size(); ++i) {
      const int32_t v = static_cast<int32_t>(values[i]);
      std::memcpy(bytes.data() + i * 4, &v, 4);
    }
  }
};

/// " at element i: got x, want y" for the first differing 16-bit element.
std::string firstDifference(const Tensor &got, const Tensor &want) {
  for (int64_t i = 0; i < got.elems(); ++i)
    if (got.bits(i) != want.bits(i))
      return " at element " + std::to_string(i) + ": got 0x" +
             std::to_string(got.bits(i)) + ", want " +
             std::to_string(want.bits(i));
  return "";
}

/// One call: a paged cache, weights, slots, block table and lengths.
struct Case {
  DataType dtype = DataType::Float16;
  int64_t cbs = 32, stride = 16, page = 128, actSeqLenType = 1;
  const char *layout = nullptr;
  std::vector<int64_t> lens;
  std::unique_ptr<Tensor> input, weight, slots, table, out;
  bool passLens = true;

  aclnn::NsaCompressWithCacheArgs args(Tensor *o,
                                       const host::IntArray *l) const {
    aclnn::NsaCompressWithCacheArgs a;
    a.input = input ? input->handle : nullptr;
    a.weight = weight ? weight->handle : nullptr;
    a.slotMapping = slots ? slots->handle : nullptr;
    a.actSeqLenOptional = l;
    a.blockTableOptional = table ? table->handle : nullptr;
    a.layoutOptional = layout;
    a.compressBlockSize = cbs;
    a.compressStride = stride;
    a.actSeqLenType = actSeqLenType;
    a.pageBlockSize = page;
    a.outputCache = o ? o->handle : nullptr;
    return a;
  }

  int call(std::string *message = nullptr) {
    aclIntArray *l =
        passLens ? aclCreateIntArray(lens.data(), lens.size()) : nullptr;
    uint64_t ws = 1;
    aclOpExecutor *exec = nullptr;
    int rc = aclnnNsaCompressWithCacheGetWorkspaceSize(
        input ? input->handle : nullptr, weight ? weight->handle : nullptr,
        slots ? slots->handle : nullptr, l, table ? table->handle : nullptr,
        const_cast<char *>(layout), cbs, stride, actSeqLenType, page,
        out ? out->handle : nullptr, &ws, &exec);
    if (rc == 0) {
      EXPECT_EQ(ws, 0u);
      rc = aclnnNsaCompressWithCache(nullptr, 0, exec, nullptr);
    } else {
      EXPECT_EQ(exec, nullptr);
    }
    if (message) {
      const char *m = aclGetRecentErrMsg();
      *message = m ? m : "";
    }
    aclDestroyIntArray(l);
    return rc;
  }

  /// Runs the operator and the reference on copies of the output and
  /// expects identical bits; `changes`: whether the output must change.
  void expectMatchesReference(bool changes = true) {
    Tensor ref(*out), before(*out);
    ASSERT_EQ(call(), 0) << aclGetRecentErrMsg();
    host::IntArray l{lens};
    ops::nsaCompressWithCacheReference(args(&ref, &l));
    EXPECT_TRUE(out->bytes == ref.bytes)
        << "output differs from the reference" << firstDifference(*out, ref);
    if (changes) {
      EXPECT_TRUE(out->bytes != before.bytes) << "nothing was written";
    } else {
      EXPECT_TRUE(out->bytes == before.bytes) << "output written";
    }
  }

  void expectTwinMatches() {
    Tensor ref(*out), twin(*out);
    host::IntArray l{lens};
    ops::nsaCompressWithCacheReference(args(&ref, &l));
    ASSERT_TRUE(ops::nsaCompressWithCacheHandwritten(args(&twin, &l)));
    EXPECT_TRUE(twin.bytes == ref.bytes)
        << "twin differs" << firstDifference(twin, ref);
  }
};

struct Shape {
  DataType dtype = DataType::Float16;
  int64_t n = 4, d = 32, cbs = 32, stride = 16, page = 128;
  std::vector<int64_t> lens;
  int64_t blocks = 0;   // 0: enough for an identity-like table
  int64_t rows = 0;     // output rows; 0: B + 3
  bool permuted = true; // shuffled block table and slots
  bool stridedInput = false, stridedWeight = false;
  unsigned seed = 1;
};

Case makeCase(const Shape &s) {
  Case c;
  c.dtype = s.dtype;
  c.cbs = s.cbs;
  c.stride = s.stride;
  c.page = s.page;
  c.lens = s.lens;
  const int64_t b = static_cast<int64_t>(s.lens.size());
  int64_t maxLen = 1;
  for (int64_t l : s.lens)
    maxLen = std::max(maxLen, l);
  const int64_t w = (maxLen + s.page - 1) / s.page;
  const int64_t blocks = s.blocks ? s.blocks : b * w + 1;
  std::mt19937 rng(s.seed);
  if (s.stridedInput) {
    // Padded rows and heads: [NB, P, N, D] inside [NB, P, N + 1, D + 16].
    const int64_t dp = s.d + 16, np = s.n + 1;
    c.input = std::make_unique<Tensor>(
        s.dtype, std::vector<int64_t>{blocks, s.page, s.n, s.d},
        std::vector<int64_t>{s.page * np * dp, np * dp, dp, 1},
        blocks * s.page * np * dp);
  } else {
    c.input = std::make_unique<Tensor>(
        s.dtype, std::vector<int64_t>{blocks, s.page, s.n, s.d});
  }
  c.input->random(s.seed * 7 + 1);
  if (s.stridedWeight) // the transpose of an [N, cbs] buffer
    c.weight =
        std::make_unique<Tensor>(s.dtype, std::vector<int64_t>{s.cbs, s.n},
                                 std::vector<int64_t>{1, s.cbs}, s.cbs * s.n);
  else
    c.weight =
        std::make_unique<Tensor>(s.dtype, std::vector<int64_t>{s.cbs, s.n});
  c.weight->random(s.seed * 7 + 2, 1.0f);
  std::vector<int64_t> pages(static_cast<size_t>(blocks));
  std::iota(pages.begin(), pages.end(), 0);
  if (s.permuted)
    std::shuffle(pages.begin(), pages.end(), rng);
  c.table =
      std::make_unique<Tensor>(DataType::Int32, std::vector<int64_t>{b, w});
  std::vector<int64_t> tv;
  for (int64_t i = 0; i < b * w; ++i)
    tv.push_back(pages[static_cast<size_t>(i % blocks)]);
  c.table->setInts(tv);
  const int64_t rows = s.rows ? s.rows : b + 3;
  std::vector<int64_t> slots(static_cast<size_t>(rows));
  std::iota(slots.begin(), slots.end(), 0);
  if (s.permuted)
    std::shuffle(slots.begin(), slots.end(), rng);
  slots.resize(static_cast<size_t>(b));
  c.slots = std::make_unique<Tensor>(DataType::Int32, std::vector<int64_t>{b});
  c.slots->setInts(slots);
  c.out =
      std::make_unique<Tensor>(s.dtype, std::vector<int64_t>{rows, s.n, s.d});
  c.out->random(s.seed * 7 + 3);
  return c;
}

} // namespace

TEST(NsaCompressWithCache, NoWindowCompletes) { // matrix rows 1 and 9
  Shape s;
  s.n = 1;
  s.d = 192;
  s.lens = {43};
  makeCase(s).expectMatchesReference(false);
  Shape t;
  t.n = 32;
  t.d = 192;
  t.cbs = 16;
  t.lens = {1, 2, 3, 4};
  makeCase(t).expectMatchesReference(false);
}

TEST(NsaCompressWithCache, MatrixRows) {
  struct Row {
    DataType t;
    int64_t n, d, cbs, stride, page;
    std::vector<int64_t> lens;
  };
  const Row rows[] = {
      {DataType::Float16, 1, 192, 32, 16, 128, {48}},                   // 2
      {DataType::BFloat16, 32, 192, 16, 16, 128, {144, 192, 144, 144}}, // 3
      {DataType::Float16, 37, 256, 64, 16, 128, {144, 192}},            // 4
      {DataType::BFloat16, 13, 256, 48, 16, 128, {144, 192, 144, 144}}, // 5
      {DataType::BFloat16, 8, 64, 32, 16, 64, {80, 64, 70}},            // 8
      {DataType::Float16, 4, 32, 32, 32, 64, {32, 64}},                 // 10
  };
  unsigned seed = 10;
  for (const Row &r : rows) {
    SCOPED_TRACE("n=" + std::to_string(r.n) + " d=" + std::to_string(r.d) +
                 " cbs=" + std::to_string(r.cbs));
    Shape s;
    s.dtype = r.t;
    s.n = r.n;
    s.d = r.d;
    s.cbs = r.cbs;
    s.stride = r.stride;
    s.page = r.page;
    s.lens = r.lens;
    s.seed = seed++;
    makeCase(s).expectMatchesReference();
  }
}

TEST(NsaCompressWithCache, ManyEntriesMixedLengths) { // matrix rows 6 and 7
  std::mt19937 rng(5);
  for (auto [b, n, d, cbs] : {std::array<int64_t, 4>{32, 64, 96, 32},
                              std::array<int64_t, 4>{64, 1, 192, 48}}) {
    Shape s;
    s.n = n;
    s.d = d;
    s.cbs = cbs;
    for (int64_t i = 0; i < b; ++i)
      s.lens.push_back(static_cast<int64_t>(rng() % 300) - 10);
    s.lens[0] = cbs + 16 * 5; // at least one qualifies
    s.seed = static_cast<unsigned>(b);
    makeCase(s).expectMatchesReference();
  }
}

TEST(NsaCompressWithCache, EveryWindowStridePageAndDtype) {
  unsigned seed = 100;
  for (DataType t : {DataType::Float16, DataType::BFloat16})
    for (int64_t cbs : {16, 32, 48, 64})
      for (int64_t stride = 16; stride <= cbs; stride += 16)
        for (int64_t page : {64, 128}) {
          SCOPED_TRACE("cbs=" + std::to_string(cbs) +
                       " stride=" + std::to_string(stride) +
                       " page=" + std::to_string(page) +
                       (t == DataType::BFloat16 ? " bf16" : " f16"));
          Shape s;
          s.dtype = t;
          s.n = 3;
          // 64: whole 16-lane vectors (the twin's AVX-512 path); 48: not.
          s.d = page == 64 ? 64 : 48;
          s.cbs = cbs;
          s.stride = stride;
          s.page = page;
          // Completing and non-completing lengths; windows crossing pages.
          for (int64_t l :
               {cbs, cbs + stride, cbs + 3 * stride, cbs + 5 * stride,
                cbs + stride + 1, cbs - 1, int64_t(2) * page + 16})
            s.lens.push_back(l);
          s.seed = seed++;
          Case c = makeCase(s);
          c.expectMatchesReference();
          c.expectTwinMatches();
        }
}

TEST(NsaCompressWithCache, HeadCountsAndHeadDims) {
  unsigned seed = 200;
  for (int64_t n : {1, 2, 5, 37, 50, 64})
    for (int64_t d : {16, 80, 128, 256}) {
      SCOPED_TRACE("n=" + std::to_string(n) + " d=" + std::to_string(d));
      Shape s;
      s.dtype = seed % 2 ? DataType::BFloat16 : DataType::Float16;
      s.n = n;
      s.d = d;
      s.lens = {48, 64, 40, 96};
      s.seed = seed++;
      Case c = makeCase(s);
      c.expectMatchesReference();
      c.expectTwinMatches();
    }
}

TEST(NsaCompressWithCache, StridedInputAndWeightViews) {
  unsigned seed = 300;
  for (bool in : {false, true})
    for (bool w : {false, true})
      for (DataType t : {DataType::Float16, DataType::BFloat16}) {
        Shape s;
        s.dtype = t;
        s.n = 6;
        s.d = 64;
        s.cbs = 48;
        s.page = 64;
        s.lens = {48, 80, 112, 100, 176};
        s.stridedInput = in;
        s.stridedWeight = w;
        s.seed = seed++;
        Case c = makeCase(s);
        c.expectMatchesReference();
        c.expectTwinMatches();
      }
}

TEST(NsaCompressWithCache, SpecialValues) {
  for (DataType t : {DataType::Float16, DataType::BFloat16}) {
    Shape s;
    s.dtype = t;
    s.n = 2;
    s.d = 32;
    s.lens = {32, 48};
    Case c = makeCase(s);
    // Zero input with negative weights: every product is -0 and so is the
    // sum; NaN and inf; huge values overflowing fp16; ties needing rounding.
    for (int64_t i = 0; i < c.input->elems(); ++i) {
      const int64_t e = i % 32, k = (i / 64) % 128;
      float v = 0.0f;
      if (e == 1)
        v = k == 20 ? std::nanf("") : 1.0f;
      else if (e == 2)
        v = k == 21 ? INFINITY : -1.0f;
      else if (e == 3)
        v = 60000.0f;
      else if (e >= 4)
        v = 1.0f + static_cast<float>((i * 37) % 1024) / 1024.0f;
      c.input->setFloat(i, v);
    }
    for (int64_t i = 0; i < c.weight->elems(); ++i)
      c.weight->setFloat(
          i, i % 3 == 0 ? -0.5f : 1.0f + static_cast<float>(i % 7) / 128.0f);
    c.expectMatchesReference();
    c.expectTwinMatches();
  }
}

TEST(NsaCompressWithCache, InvalidSlotsAndPagesWriteNothingForThatEntry) {
  Shape s;
  s.n = 2;
  s.d = 16;
  s.lens = {32, 48, 64, 80};
  s.rows = 8;
  s.permuted = false;
  Case c = makeCase(s);
  c.slots->setInts({-1, 8, 2, 3});       // entries 0, 1: slot out of range
  c.table->setInts({0, 1000000, -5, 0}); // entries 1, 2: bad page ids
  Tensor before(*c.out);
  c.expectMatchesReference();
  for (int64_t r : {0, 1, 2, 4, 5, 6, 7})
    for (int64_t i = r * 32; i < (r + 1) * 32; ++i) {
      ASSERT_EQ(c.out->bits(i), before.bits(i)) << "row " << r;
    }
}

TEST(NsaCompressWithCache, DuplicateSlotsLaterEntryWins) {
  Shape s;
  s.n = 8;
  s.d = 32;
  s.lens = {32, 48, 64};
  s.permuted = false;
  Case c = makeCase(s);
  c.slots->setInts({1, 1, 1});
  c.expectMatchesReference();
  // Enough bytes for a program per core: entries are shared out by output
  // row, so equal rows stay in one program, in order.
  Shape big;
  big.n = 32;
  big.d = 128;
  big.lens = {32, 48, 64, 80, 96, 112, 128, 144};
  big.permuted = false;
  big.seed = 7;
  Case d = makeCase(big);
  d.slots->setInts({1, 2, 1, 4, 2, 1, 0, 4});
  d.expectMatchesReference();
}

TEST(NsaCompressWithCache, CppApiAndHandwrittenTwin) {
  Shape s;
  s.n = 32;
  s.d = 128;
  s.lens = std::vector<int64_t>(16, 160);
  Case c = makeCase(s);
  Tensor ref(*c.out);
  host::IntArray l{c.lens};
  ops::nsaCompressWithCacheReference(c.args(&ref, &l));
  ASSERT_TRUE(ops::nsaCompressWithCache(c.args(c.out.get(), &l)));
  EXPECT_TRUE(c.out->bytes == ref.bytes) << firstDifference(*c.out, ref);
  // Repeated calls reuse the compiled kernel and stay exact.
  ASSERT_TRUE(ops::nsaCompressWithCache(c.args(c.out.get(), &l)));
  EXPECT_TRUE(c.out->bytes == ref.bytes);
  c.expectTwinMatches();
}

//===----------------------------------------------------------------------===//
// Validation (section 4)
//===----------------------------------------------------------------------===//

namespace {

Case valid() {
  Shape s;
  s.n = 4;
  s.d = 32;
  s.lens = {48, 64};
  return makeCase(s);
}

void expectError(Case &c, int code, const std::string &needle) {
  std::unique_ptr<Tensor> before;
  if (c.out)
    before = std::make_unique<Tensor>(*c.out);
  std::string message;
  EXPECT_EQ(c.call(&message), code) << message;
  EXPECT_NE(message.find(needle), std::string::npos) << "message: " << message;
  if (c.out) {
    EXPECT_TRUE(c.out->bytes == before->bytes) << "output written on error";
  }
}

std::unique_ptr<Tensor> tensor(DataType t, std::vector<int64_t> dims) {
  return std::make_unique<Tensor>(t, std::move(dims));
}

} // namespace

// spec_rule: nsa-4.1
TEST(NsaCompressWithCacheErrors, NullArguments) { // matrix row 11
  {
    Case c = valid();
    c.input.reset();
    expectError(c, 161001, "input must not be null");
  }
  {
    Case c = valid();
    c.weight.reset();
    expectError(c, 161001, "weight must not be null");
  }
  {
    Case c = valid();
    c.slots.reset();
    expectError(c, 161001, "slotMapping must not be null");
  }
  {
    Case c = valid();
    c.out.reset();
    expectError(c, 161001, "outputCache must not be null");
  }
  {
    Case c = valid();
    uint64_t ws = 0;
    aclIntArray *l = aclCreateIntArray(c.lens.data(), c.lens.size());
    EXPECT_EQ(aclnnNsaCompressWithCacheGetWorkspaceSize(
                  c.input->handle, c.weight->handle, c.slots->handle, l,
                  c.table->handle, nullptr, 32, 16, 1, 128, c.out->handle, &ws,
                  nullptr),
              161001);
    aclOpExecutor *exec = nullptr;
    EXPECT_EQ(aclnnNsaCompressWithCacheGetWorkspaceSize(
                  c.input->handle, c.weight->handle, c.slots->handle, l,
                  c.table->handle, nullptr, 32, 16, 1, 128, c.out->handle,
                  nullptr, &exec),
              161001);
    aclDestroyIntArray(l);
  }
}

// spec_rule: nsa-4.2
TEST(NsaCompressWithCacheErrors, Dtypes) { // matrix row 11
  {
    Case c = valid();
    c.input = tensor(DataType::Float, c.input->shape);
    expectError(c, 161002, "input: dtype");
  }
  {
    Case c = valid();
    c.weight = tensor(DataType::BFloat16, c.weight->shape);
    expectError(c, 161002, "weight: dtype BFLOAT16 must equal input's dtype");
  }
  {
    Case c = valid();
    c.out = tensor(DataType::BFloat16, c.out->shape);
    expectError(c, 161002,
                "outputCache: dtype BFLOAT16 must equal input's dtype");
  }
  {
    Case c = valid();
    c.weight = tensor(DataType::Float, c.weight->shape);
    expectError(c, 161002, "weight: dtype");
  }
  {
    Case c = valid();
    c.slots = tensor(DataType::Int64, c.slots->shape);
    expectError(c, 161002, "slotMapping: dtype");
  }
  {
    Case c = valid();
    c.table = tensor(DataType::Int64, c.table->shape);
    expectError(c, 161002, "blockTableOptional: dtype");
  }
}

// spec_rule: nsa-4.3-empty
// spec_rule: nsa-4.3-window
// spec_rule: nsa-4.3-type
// spec_rule: nsa-4.3-layout
// spec_rule: nsa-4.3-ranks
// spec_rule: nsa-4.3-shapes
// spec_rule: nsa-4.3-page
// spec_rule: nsa-4.3-batch
// spec_rule: nsa-4.3-capacity
TEST(NsaCompressWithCacheErrors, TilingRules) { // matrix row 12
  auto expect = [](auto mutate, const std::string &needle) {
    Case c = valid();
    mutate(c);
    SCOPED_TRACE(needle);
    expectError(c, 561002, needle);
  };
  expect(
      [](Case &c) {
        c.input = tensor(DataType::Float16, {0, 128, 4, 32});
      },
      "input: must not be empty");
  expect(
      [](Case &c) {
        c.weight = tensor(DataType::Float16, {32, 0});
      },
      "weight: must not be empty");
  expect(
      [](Case &c) {
        c.out = tensor(DataType::Float16, {0, 4, 32});
      },
      "outputCache: must not be empty");
  expect([](Case &c) { c.cbs = 65; },
         "compressBlockSize: must be a multiple of 16");
  expect([](Case &c) { c.stride = 15; },
         "compressStride: must be a multiple of 16");
  expect(
      [](Case &c) {
        c.cbs = 16;
        c.stride = 32;
      },
      "compressBlockSize: must be >= compressStride");
  expect([](Case &c) { c.cbs = 80; }, "compressBlockSize: must be <= 64");
  expect([](Case &c) { c.stride = 0; }, "compressStride: must be >= 16");
  expect([](Case &c) { c.actSeqLenType = 0; }, "actSeqLenType: must be 1");
  expect([](Case &c) { c.layout = "XYZ"; },
         "layoutOptional: \"XYZ\" is not one of");
  expect(
      [](Case &c) {
        c.input = tensor(DataType::Float16, {2, 128, 128});
      },
      "input: rank must be 4");
  expect(
      [](Case &c) {
        c.weight = tensor(DataType::Float16, {32, 4, 1});
      },
      "weight: rank must be 2");
  expect(
      [](Case &c) {
        c.out = tensor(DataType::Float16, {5, 128});
      },
      "outputCache: rank must be 3");
  expect(
      [](Case &c) {
        c.slots = tensor(DataType::Int32, {2, 1});
      },
      "slotMapping: rank must be 1");
  expect([](Case &c) { c.table = tensor(DataType::Int32, {2}); },
         "blockTableOptional: rank must be 2");
  expect(
      [](Case &c) {
        c.weight = tensor(DataType::Float16, {32, 5});
      },
      "weight: shape[1] must equal input.shape[2]");
  expect(
      [](Case &c) {
        c.weight = tensor(DataType::Float16, {16, 4});
      },
      "weight: shape[0] must equal compressBlockSize");
  expect(
      [](Case &c) {
        c.out = tensor(DataType::Float16, {5, 3, 32});
      },
      "outputCache: shape[1] must equal input.shape[2]");
  expect(
      [](Case &c) {
        c.out = tensor(DataType::Float16, {5, 4, 48});
      },
      "outputCache: shape[2] must equal input.shape[3]");
  auto heads = [](int64_t n, int64_t d) {
    return [n, d](Case &c) {
      c.input = tensor(DataType::Float16, {3, 128, n, d});
      c.weight = tensor(DataType::Float16, {32, n});
      c.out = tensor(DataType::Float16, {5, n, d});
    };
  };
  expect(heads(4, 127), "head dim (shape[3]) must be a multiple of 16");
  expect(heads(4, 272), "head dim (shape[3]) must be <= 256");
  expect(heads(66, 32), "head count (shape[2]) must be <= 64");
  expect(heads(51, 32), "head count (shape[2]) above 50 must be even");
  expect([](Case &c) { c.page = 32; }, "pageBlockSize: must be 64 or 128");
  expect([](Case &c) { c.page = 64; },
         "input: shape[1] must equal pageBlockSize");
  expect([](Case &c) { c.passLens = false; },
         "actSeqLenOptional: must not be null");
  expect([](Case &c) { c.table.reset(); },
         "blockTableOptional: must not be null");
  expect(
      [](Case &c) {
        c.lens.assign(2049, 1);
        c.slots = tensor(DataType::Int32, {2049});
        c.table = tensor(DataType::Int32, {2049, 1});
      },
      "batch size must be <= 2048");
  expect([](Case &c) { c.slots = tensor(DataType::Int32, {3}); },
         "slotMapping: shape[0] must equal the batch size");
  expect(
      [](Case &c) {
        c.table = tensor(DataType::Int32, {3, 1});
      },
      "blockTableOptional: shape[0] must equal the batch size");
  expect([](Case &c) { c.lens = {48, 160}; }, "entry 1 has length 160");
}

// spec_rule: nsa-4.3-capacity
TEST(NsaCompressWithCacheErrors, CapacityPastInt64IsNoLimit) {
  // blockTableOptional.shape[1] * pageBlockSize past int64 (a stride-0
  // table, 2^57 entries a row, one stored; pages of 64 or 128 rows): the
  // product is checked, no length exceeds it, and the call runs as the
  // reference does.
  Case c = valid();
  const int64_t b = c.table->shape[0], w = c.table->shape[1];
  auto wide = std::make_unique<Tensor>(DataType::Int32,
                                       std::vector<int64_t>{b, int64_t(1) << 57},
                                       std::vector<int64_t>{1, 0}, b);
  for (int64_t i = 0; i < b; ++i) // row i: the valid table's first entry
    std::memcpy(wide->bytes.data() + i * 4, c.table->bytes.data() + i * w * 4, 4);
  c.table = std::move(wide);
  c.expectMatchesReference();
}

TEST(NsaCompressWithCacheErrors, AcceptedEdges) {
  // Lower-case layouts, N = 37 (odd <= 50) and a long non-qualifying length.
  Case c = valid();
  c.layout = "bsnd";
  c.lens = {48, 100001};
  c.expectMatchesReference();
}
