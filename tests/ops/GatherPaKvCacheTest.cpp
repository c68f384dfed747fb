//===- GatherPaKvCacheTest.cpp - GatherPaKvCache against the spec ---------===//
//
// Every row of the test matrix of ../shared/spec/gather_pa_kv_cache.md
// (section 9) and its edge cases, mostly through the public C API, compared
// bit for bit with the scalar reference (section 4's pseudo-code). Outputs
// start filled with random bytes, and the whole storage is compared, so rows
// (and padding) the operator must not touch are checked too. Every
// validation rule of section 5: status code, a message naming the argument,
// and untouched outputs.
//
//===----------------------------------------------------------------------===//
#include "ops/gather_pa_kv_cache/GatherPaKvCacheTwin.h"
#include "acl/acl.h"
#include "aclnnop/aclnn_gather_pa_kv_cache.h"
#include "ops/aclnn/AclObjects.h"
#include "ops/host/DataType.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <numeric>
#include <optional>
#include <random>
#include <string>
#include <vector>

using namespace tilejit;
using host::DataType;

namespace {

/// A host tensor: owned bytes (random at first) and its aclTensor
/// (contiguous unless strides are given; the storage may be larger than
/// the view).
struct Tensor {
  DataType dtype;
  std::vector<int64_t> shape, strides;
  aclFormat format;
  std::vector<unsigned char> bytes;
  aclTensor *handle = nullptr;

  Tensor(DataType t, std::vector<int64_t> dims, unsigned seed = 0,
         aclFormat fmt = ACL_FORMAT_ND, std::vector<int64_t> stridesIn = {},
         int64_t storageElems = -1)
      : dtype(t), shape(std::move(dims)), strides(std::move(stridesIn)),
        format(fmt) {
    int64_t n = storageElems >= 0 ? storageElems : host::shapeNumel(shape);
    bytes.assign(static_cast<size_t>(n * host::elementSize(t)), 0);
    std::mt19937 rng(seed);
    for (auto &b : bytes)
      b = static_cast<unsigned char>(rng());
    std::vector<int64_t> storage{n};
    handle =
        aclCreateTensor(shape.data(), shape.size(), static_cast<aclDataType>(t),
                        strides.empty() ? nullptr : strides.data(), 0, fmt,
                        storage.data(), 1, bytes.data());
  }
  Tensor(const Tensor &o)
      : Tensor(o.dtype, o.shape, 0, o.format, o.strides, o.elems()) {
    bytes = o.bytes;
  }
  Tensor &operator=(const Tensor &) = delete;
  ~Tensor() { aclDestroyTensor(handle); }
  int64_t elems() const {
    return static_cast<int64_t>(bytes.size()) / host::elementSize(dtype);
  }
};

/// Index tensor of INT32 or INT64 with `values`.
std::unique_ptr<Tensor> indices(DataType t, std::vector<int64_t> dims,
                                const std::vector<int64_t> &values) {
  auto x = std::make_unique<Tensor>(t, std::move(dims));
  EXPECT_EQ(static_cast<int64_t>(values.size()), x->elems());
  for (size_t i = 0; i < values.size() && static_cast<int64_t>(i) < x->elems();
       ++i) {
    // By element width (the error tests also build int16 index tensors).
    const size_t w = host::elementSize(t);
    if (w == 8) {
      std::memcpy(x->bytes.data() + i * 8, &values[i], 8);
    } else if (w == 2) {
      int16_t v = static_cast<int16_t>(values[i]);
      std::memcpy(x->bytes.data() + i * 2, &v, 2);
    } else {
      int32_t v = static_cast<int32_t>(values[i]);
      std::memcpy(x->bytes.data() + i * 4, &v, 4);
    }
  }
  return x;
}

/// " at byte i: got x, want y" for the first differing byte.
std::string firstDifference(const std::vector<unsigned char> &got,
                            const std::vector<unsigned char> &want) {
  for (size_t i = 0; i < got.size() && i < want.size(); ++i)
    if (got[i] != want[i])
      return " at byte " + std::to_string(i) + ": got " +
             std::to_string(got[i]) + ", want " + std::to_string(want[i]);
  return "";
}

/// One call of the operator.
struct Case {
  std::unique_ptr<Tensor> keyCache, valueCache, tables, lens, keyRef, valueRef,
      offs;
  const char *cacheMode = nullptr;
  bool cumsum = false;

  aclnn::GatherPaKvCacheArgs args(Tensor *kr, Tensor *vr) const {
    aclnn::GatherPaKvCacheArgs a;
    a.keyCache = keyCache ? keyCache->handle : nullptr;
    a.valueCache = valueCache ? valueCache->handle : nullptr;
    a.blockTables = tables ? tables->handle : nullptr;
    a.seqLens = lens ? lens->handle : nullptr;
    a.keyRef = kr ? kr->handle : nullptr;
    a.valueRef = vr ? vr->handle : nullptr;
    a.seqOffsetOptional = offs ? offs->handle : nullptr;
    a.cacheMode = cacheMode;
    a.isSeqLensCumsum = cumsum;
    return a;
  }

  /// Runs both phases of the C API on the default stream; returns the status
  /// and fills `message` with the recent error message.
  int call(std::string *message = nullptr) {
    uint64_t ws = 1;
    aclOpExecutor *exec = nullptr;
    int rc = aclnnGatherPaKvCacheGetWorkspaceSize(
        keyCache ? keyCache->handle : nullptr,
        valueCache ? valueCache->handle : nullptr,
        tables ? tables->handle : nullptr, lens ? lens->handle : nullptr,
        keyRef ? keyRef->handle : nullptr,
        valueRef ? valueRef->handle : nullptr, offs ? offs->handle : nullptr,
        const_cast<char *>(cacheMode), cumsum, &ws, &exec);
    if (rc == 0) {
      EXPECT_EQ(ws, 0u);
      rc = aclnnGatherPaKvCache(nullptr, 0, exec, nullptr);
    } else {
      EXPECT_EQ(exec, nullptr);
    }
    if (message) {
      const char *m = aclGetRecentErrMsg();
      *message = m ? m : "";
    }
    return rc;
  }

  /// Runs the operator (C API, or C++ API with `cpp`) and the reference on
  /// copies of the outputs and expects identical bytes everywhere; expects
  /// the operator to have changed something unless `expectChange` is false.
  void expectMatchesReference(bool expectChange = true, bool cpp = false) {
    Tensor krRef(*keyRef), vrRef(*valueRef), kr0(*keyRef), vr0(*valueRef);
    if (cpp) {
      host::Status s =
          ops::gatherPaKvCache(args(keyRef.get(), valueRef.get()));
      ASSERT_TRUE(s.isOk()) << s.message();
    } else {
      std::string msg;
      ASSERT_EQ(call(&msg), 0) << msg;
    }
    ops::gatherPaKvCacheReference(args(&krRef, &vrRef));
    EXPECT_TRUE(keyRef->bytes == krRef.bytes)
        << "keyRef differs from the reference"
        << firstDifference(keyRef->bytes, krRef.bytes);
    EXPECT_TRUE(valueRef->bytes == vrRef.bytes)
        << "valueRef differs from the reference"
        << firstDifference(valueRef->bytes, vrRef.bytes);
    if (expectChange) {
      EXPECT_TRUE(keyRef->bytes != kr0.bytes)
          << "nothing was written to keyRef";
      EXPECT_TRUE(valueRef->bytes != vr0.bytes)
          << "nothing was written to valueRef";
    }
  }

  /// The bytes of output row `row` of `t` (contiguous outputs).
  static std::vector<unsigned char> row(const Tensor &t, int64_t r) {
    const int64_t size = static_cast<int64_t>(t.bytes.size()) / t.shape[0];
    return {t.bytes.begin() + r * size, t.bytes.begin() + (r + 1) * size};
  }
};

/// What a case is made of; caches and outputs get random bytes.
struct Shape {
  DataType key = DataType::Float16, value = DataType::Undefined; // same as key
  DataType index = DataType::Int32;
  bool nz = false, cumsum = false;
  int64_t blocks = 8, bs = 4, heads = 2, dk = 16, dv = 16;
  std::vector<int64_t> lens;                ///< per batch (cumsum is derived)
  std::optional<std::vector<int64_t>> offs; ///< seqOffset
  int64_t width = 0;                        ///< W (0: enough for every batch)
  std::vector<int64_t> table; ///< empty: random distinct valid ids
  int64_t tokens = -1;        ///< T (-1: the total length)
  unsigned seed = 1;
};

Case make(const Shape &s) {
  Case c;
  const DataType vt = s.value == DataType::Undefined ? s.key : s.value;
  const int64_t batches = static_cast<int64_t>(s.lens.size());
  const int64_t total =
      std::accumulate(s.lens.begin(), s.lens.end(), int64_t(0));
  const int64_t t = s.tokens >= 0 ? s.tokens : total;
  int64_t w = s.width;
  if (!w) {
    for (size_t b = 0; b < s.lens.size(); ++b) {
      int64_t col0 = s.offs ? (*s.offs)[b] / s.bs : 0;
      w = std::max(w, col0 + (s.lens[b] + s.bs - 1) / s.bs);
    }
    w = std::max<int64_t>(w, 1);
  }
  std::vector<int64_t> table = s.table;
  if (table.empty()) {
    std::mt19937 rng(s.seed + 7);
    std::vector<int64_t> ids(static_cast<size_t>(s.blocks));
    for (int64_t b = 0; b < batches; ++b) {
      std::iota(ids.begin(), ids.end(), 0);
      std::shuffle(ids.begin(), ids.end(), rng);
      for (int64_t j = 0; j < w; ++j)
        table.push_back(ids[static_cast<size_t>(j % s.blocks)]);
    }
  }
  if (s.nz) {
    const int64_t ek = 32 / host::elementSize(s.key),
                  ev = 32 / host::elementSize(vt);
    const int64_t hk = s.heads * s.dk, hv = s.heads * s.dv;
    c.keyCache = std::make_unique<Tensor>(
        s.key, std::vector<int64_t>{s.blocks, hk / ek, s.bs, ek}, s.seed,
        ACL_FORMAT_FRACTAL_NZ);
    c.valueCache = std::make_unique<Tensor>(
        vt, std::vector<int64_t>{s.blocks, hv / ev, s.bs, ev}, s.seed + 1,
        ACL_FORMAT_FRACTAL_NZ);
    c.keyRef = std::make_unique<Tensor>(s.key, std::vector<int64_t>{t, hk},
                                        s.seed + 2);
    c.valueRef =
        std::make_unique<Tensor>(vt, std::vector<int64_t>{t, hv}, s.seed + 3);
    c.cacheMode = "PA_NZ";
  } else {
    c.keyCache = std::make_unique<Tensor>(
        s.key, std::vector<int64_t>{s.blocks, s.bs, s.heads, s.dk}, s.seed);
    c.valueCache = std::make_unique<Tensor>(
        vt, std::vector<int64_t>{s.blocks, s.bs, s.heads, s.dv}, s.seed + 1);
    c.keyRef = std::make_unique<Tensor>(
        s.key, std::vector<int64_t>{t, s.heads, s.dk}, s.seed + 2);
    c.valueRef = std::make_unique<Tensor>(
        vt, std::vector<int64_t>{t, s.heads, s.dv}, s.seed + 3);
    c.cacheMode = "Norm";
  }
  c.tables = indices(s.index, {batches, w}, table);
  std::vector<int64_t> lens = s.lens;
  if (s.cumsum) {
    lens.assign(1, 0);
    for (int64_t l : s.lens)
      lens.push_back(lens.back() + l);
  }
  c.lens = indices(s.index, {static_cast<int64_t>(lens.size())}, lens);
  if (s.offs)
    c.offs = indices(s.index, {batches}, *s.offs);
  c.cumsum = s.cumsum;
  return c;
}

constexpr DataType kAllKv[] = {
    DataType::Float16,  DataType::Float,      DataType::BFloat16,
    DataType::Int8,     DataType::UInt8,      DataType::Int16,
    DataType::UInt16,   DataType::Int32,      DataType::UInt32,
    DataType::HiFloat8, DataType::Float8E5M2, DataType::Float8E4M3FN};

//===----------------------------------------------------------------------===//
// Norm
//===----------------------------------------------------------------------===//

TEST(GatherPaKvCache, UpstreamExample) { // matrix row 1
  Shape s;
  s.blocks = 2;
  s.bs = 2;
  s.heads = 32;
  s.dk = 2;
  s.dv = 4;
  s.lens = {3, 3, 3, 3};
  s.offs = std::vector<int64_t>{2, 2, 2, 2};
  s.width = 6;
  s.table.assign(24, 1);
  Case c = make(s);
  c.expectMatchesReference();
  // seqOffset 2 / bs 2 = column 1 (block 1); 3 tokens: positions 0, 1 of
  // block 1, then position 0 of column 2 (block 1 again).
  const int64_t row = 32 * 2 * 2;
  for (int64_t r = 0; r < 12; ++r) {
    const int64_t pos = (r % 3) % 2;
    EXPECT_TRUE(std::equal(c.keyRef->bytes.begin() + r * row,
                           c.keyRef->bytes.begin() + (r + 1) * row,
                           c.keyCache->bytes.begin() + (1 * 2 + pos) * row))
        << "row " << r;
  }
}

TEST(GatherPaKvCache, CumsumGoldenStyle) { // matrix row 2
  std::mt19937 rng(5);
  for (unsigned seed = 0; seed < 6; ++seed) {
    Shape s;
    s.blocks = 8;
    s.bs = 64;
    s.heads = 4;
    s.dk = s.dv = 64;
    s.cumsum = true;
    s.lens = {1 + static_cast<int64_t>(rng() % 10),
              1 + static_cast<int64_t>(rng() % 10)};
    s.offs = std::vector<int64_t>{static_cast<int64_t>(rng() % 64),
                                  static_cast<int64_t>(rng() % 64)};
    s.seed = 20 + seed;
    Case c = make(s);
    c.expectMatchesReference();
  }
}

TEST(GatherPaKvCache, LargeDocumentExample) { // matrix row 3 (C++ API)
  Shape s;
  s.key = DataType::BFloat16;
  s.index = DataType::Int64;
  s.blocks = 128;
  s.bs = 128;
  s.heads = 16;
  s.dk = 144;
  s.dv = 128;
  s.width = 12;
  std::mt19937 rng(9);
  std::vector<int64_t> offs;
  int64_t total = 0;
  for (int b = 0; b < 16; ++b) {
    int64_t len =
        b == 15 ? 8931 - total : 540 + static_cast<int64_t>(rng() % 40);
    s.lens.push_back(len);
    total += len;
    // Leave room for the blocks after the offset's column.
    offs.push_back(
        static_cast<int64_t>(rng() % ((12 - (len + 127) / 128) * 128)));
  }
  ASSERT_EQ(total, 8931);
  s.offs = offs;
  s.seed = 30;
  Case c = make(s);
  c.expectMatchesReference(true, /*cpp=*/true);
}

TEST(GatherPaKvCache, EveryDtypeNorm) { // matrix row 4
  unsigned seed = 40;
  for (DataType t : kAllKv)
    for (DataType idx : {DataType::Int32, DataType::Int64}) {
      SCOPED_TRACE(std::string(host::dataTypeName(t)) + " / " +
                   std::string(host::dataTypeName(idx)));
      Shape s;
      s.key = t;
      s.index = idx;
      s.blocks = 6;
      s.bs = 4;
      s.heads = 3;
      s.dk = 5;
      s.dv = 7;
      s.lens = {6, 1, 9};
      s.offs = std::vector<int64_t>{4, 0, 1};
      s.seed = seed++;
      Case c = make(s);
      c.expectMatchesReference();
    }
}

TEST(GatherPaKvCache, ZeroLengthBatchAndPartialBlock) { // matrix row 8
  Shape s;
  s.key = DataType::Int8;
  s.blocks = 5;
  s.bs = 4;
  s.heads = 2;
  s.dk = 8;
  s.dv = 8;
  s.lens = {5, 0, 3};
  s.seed = 50;
  for (bool cumsum : {false, true}) {
    s.cumsum = cumsum;
    Case c = make(s);
    c.expectMatchesReference();
  }
}

// spec_rule: gather-6-values
TEST(GatherPaKvCache, InvalidColumnsAndBlockIdsWriteZeros) { // matrix row 9
  Shape s;
  s.key = DataType::Float;
  s.blocks = 4;
  s.bs = 2;
  s.heads = 1;
  s.dk = 8;
  s.dv = 4;
  s.lens = {7, 3, 4};
  s.width = 3;                            // batch 0 needs 4 columns
  s.table = {0, 1, 2, -1, 4, 3, 1, 2, 3}; // -1 and 4 (= nb) are invalid
  s.offs = std::vector<int64_t>{0, 0, 3}; // batch 2: columns 1, 2
  s.seed = 60;
  Case c = make(s);
  c.expectMatchesReference();
  const std::vector<unsigned char> zeroK(8 * 4, 0), zeroV(4 * 4, 0);
  // Batch 0 column 3 (past W), batch 1 block -1 (rows 7, 8) and block 4.
  for (int64_t r : {6, 7, 8, 9}) {
    EXPECT_EQ(Case::row(*c.keyRef, r), zeroK) << "row " << r;
    EXPECT_EQ(Case::row(*c.valueRef, r), zeroV) << "row " << r;
  }
  for (int64_t r : {0, 5, 10, 13})
    EXPECT_NE(Case::row(*c.keyRef, r), zeroK) << "row " << r;
}

// spec_rule: gather-6-values
TEST(GatherPaKvCache, TruncationAndUntouchedRows) { // matrix row 10
  for (int64_t tokens : {9, 20}) {
    SCOPED_TRACE("T = " + std::to_string(tokens));
    Shape s;
    s.blocks = 8;
    s.bs = 4;
    s.lens = {6, 5, 3}; // 14 in all
    s.tokens = tokens;
    s.seed = 70;
    for (bool cumsum : {false, true}) {
      s.cumsum = cumsum;
      Case c = make(s);
      Tensor kr0(*c.keyRef);
      c.expectMatchesReference();
      for (int64_t r = 14; r < tokens; ++r)
        EXPECT_EQ(Case::row(*c.keyRef, r), Case::row(kr0, r))
            << "tail row " << r;
    }
  }
}

TEST(GatherPaKvCache, CumsumRowsBeforeFirstStartUntouched) {
  // seqLens[0] != 0 breaks a precondition; section 4 still defines it:
  // batch b starts at row seqLens[b], rows before seqLens[0] stay.
  Shape s;
  s.lens = {3, 4};
  s.tokens = 10;
  s.cumsum = true;
  s.seed = 75;
  Case c = make(s);
  c.lens = indices(DataType::Int32, {3}, {2, 5, 9});
  Tensor kr0(*c.keyRef);
  c.expectMatchesReference();
  for (int64_t r : {0, 1})
    EXPECT_EQ(Case::row(*c.keyRef, r), Case::row(kr0, r)) << "row " << r;
}

TEST(GatherPaKvCache, SeqOffsetRemaindersAndNegativeOffsets) {
  Shape s;
  s.blocks = 6;
  s.bs = 4;
  s.lens = {3, 5, 6, 4};
  s.width = 4;
  // 5 / 4 = column 1 (remainder dropped); -5 / 4 truncates to -1 (zeros for
  // the first column); 13 / 4 = column 3, then column 4 is past W (zeros).
  s.offs = std::vector<int64_t>{5, -5, 13, 3};
  s.seed = 80;
  for (DataType idx : {DataType::Int32, DataType::Int64}) {
    s.index = idx;
    Case c = make(s);
    c.expectMatchesReference();
  }
}

TEST(GatherPaKvCache, SingleBatchAndBlockSizeOne) {
  for (int64_t bs : {1, 3}) {
    Shape s;
    s.blocks = 16;
    s.bs = bs;
    s.heads = 1;
    s.dk = 32;
    s.dv = 8;
    s.lens = {11};
    s.seed = 90 + static_cast<unsigned>(bs);
    for (bool nz : {false, true}) {
      s.nz = nz;
      s.dk = nz ? 32 : 3;
      s.dv = nz ? 16 : 8;
      Case c = make(s);
      c.expectMatchesReference();
    }
  }
}

TEST(GatherPaKvCache, ManyBatchesManyPrograms) {
  // Enough chunks and bytes for a multi-program grid, cumsum and not.
  Shape s;
  s.blocks = 64;
  s.bs = 16;
  s.heads = 4;
  s.dk = 128;
  s.dv = 64;
  std::mt19937 rng(3);
  for (int b = 0; b < 40; ++b)
    s.lens.push_back(static_cast<int64_t>(rng() % 120));
  for (bool cumsum : {false, true}) {
    s.cumsum = cumsum;
    s.seed = cumsum ? 100 : 101;
    Case c = make(s);
    c.expectMatchesReference();
  }
}

TEST(GatherPaKvCache, StridedViews) {
  // Outputs with padded rows and caches whose [N, D] axes do not nest take
  // the strided row kernel; padding must stay untouched.
  Shape s;
  s.blocks = 5;
  s.bs = 4;
  s.heads = 3;
  s.dk = 6;
  s.dv = 4;
  s.lens = {7, 2, 5};
  s.offs = std::vector<int64_t>{0, 4, 0};
  s.seed = 110;
  Case c = make(s);
  const int64_t t = 14;
  // keyRef rows padded by 5 elements.
  c.keyRef = std::make_unique<Tensor>(
      DataType::Float16, std::vector<int64_t>{t, 3, 6}, 111, ACL_FORMAT_ND,
      std::vector<int64_t>{23, 6, 1}, t * 23);
  // valueCache heads padded by 2 elements: [5, 4, 3, 4] with strides
  // [4*3*6, 3*6, 6, 1].
  c.valueCache = std::make_unique<Tensor>(
      DataType::Float16, std::vector<int64_t>{5, 4, 3, 4}, 112, ACL_FORMAT_ND,
      std::vector<int64_t>{72, 18, 6, 1}, 5 * 72);
  // valueRef stored D-major ([N, D] transposed): strided innermost axis.
  c.valueRef = std::make_unique<Tensor>(
      DataType::Float16, std::vector<int64_t>{t, 3, 4}, 113, ACL_FORMAT_ND,
      std::vector<int64_t>{12, 1, 3}, t * 12);
  c.expectMatchesReference();
}

TEST(GatherPaKvCache, DecodeSizedCallsRepeat) {
  // Decode-sized problems run in one program; calling twice gives the same.
  Shape s;
  s.blocks = 32;
  s.bs = 128;
  s.heads = 8;
  s.dk = s.dv = 128;
  s.lens = {1, 2, 1, 3};
  s.offs = std::vector<int64_t>{128, 0, 256, 5};
  s.seed = 120;
  Case c = make(s);
  c.expectMatchesReference();
  c.expectMatchesReference(false);
}

TEST(GatherPaKvCache, EveryTileLevelCopiesAndZeros) {
  // Runs long enough for every tile size of each kernel, with odd row
  // lengths (masked tails) and invalid block ids (zero fills at every
  // level): Norm flat (contiguous), Norm rows (padded output) and PA_NZ.
  for (int layout = 0; layout < 3; ++layout) {
    SCOPED_TRACE("layout " + std::to_string(layout));
    Shape s;
    s.nz = layout == 2;
    s.blocks = 6;
    s.bs = 64;
    s.heads = 3;
    s.dk = s.nz ? 128 : 131;
    s.dv = s.nz ? 64 : 45;
    s.lens = {150, 64, 77};
    s.width = 3;
    s.table = {0, -1, 2, 6, 1, 3, 4, 5, -7};
    s.seed = 230 + static_cast<unsigned>(layout);
    Case c = make(s);
    if (layout == 1) {
      const int64_t t = 291, row = 3 * 131 + 7;
      c.keyRef = std::make_unique<Tensor>(
          DataType::Float16, std::vector<int64_t>{t, 3, 131}, 233,
          ACL_FORMAT_ND, std::vector<int64_t>{row, 131, 1}, t * row);
    }
    c.expectMatchesReference();
  }
}

//===----------------------------------------------------------------------===//
// PA_NZ
//===----------------------------------------------------------------------===//

TEST(GatherPaKvCache, NzStripReassembly) { // matrix row 5
  Shape s;
  s.nz = true;
  s.blocks = 6;
  s.bs = 16;
  s.heads = 4;
  s.dk = 16; // key cache [6, 4, 16, 16]
  s.dv = 32; // value cache [6, 8, 16, 16]
  s.lens = {20, 9, 33};
  s.width = 3;
  s.seed = 130;
  for (bool cumsum : {false, true}) {
    s.cumsum = cumsum;
    Case c = make(s);
    ASSERT_EQ(c.keyCache->shape, (std::vector<int64_t>{6, 4, 16, 16}));
    c.expectMatchesReference();
    // Token 0 of batch 0: element c*16 + e is cache[blk, c, 0, e].
    int32_t blk;
    std::memcpy(&blk, c.tables->bytes.data(), 4);
    for (int64_t strip = 0; strip < 4; ++strip)
      EXPECT_EQ(0, std::memcmp(c.keyRef->bytes.data() + strip * 32,
                               c.keyCache->bytes.data() +
                                   ((blk * 4 + strip) * 16) * 32,
                               32))
          << "strip " << strip;
  }
}

TEST(GatherPaKvCache, NzEveryWidth) { // matrix row 6, and every dtype by width
  unsigned seed = 140;
  for (DataType t : kAllKv)
    for (DataType idx : {DataType::Int32, DataType::Int64}) {
      SCOPED_TRACE(std::string(host::dataTypeName(t)) + " / " +
                   std::string(host::dataTypeName(idx)));
      Shape s;
      s.nz = true;
      s.key = t;
      s.index = idx;
      s.blocks = 7;
      s.bs = 8;
      s.heads = 2;
      s.dk = 32;
      s.dv = 64;
      s.lens = {13, 0, 8, 3};
      s.offs = std::vector<int64_t>{0, 0, 9, 16};
      s.seed = seed++;
      Case c = make(s);
      c.expectMatchesReference();
    }
}

TEST(GatherPaKvCache, NzEveryStripGrouping) {
  // The kernel moves strips 8, then 4, then 1 at a time: 21 key strips
  // (2 x 8 + 4 + 1) and 38 value strips (4 x 8 + 4 + 2), with a partial
  // last chunk, an invalid block id (zeros) and a column past the table;
  // positions 128 per tile (blocks of 128), then 16 per tile, then one by
  // one (blocks of 32: 45 = 2 x 16 + 13; of 128: 300 = 2 x 128 + 2 x 16 +
  // 12).
  unsigned seed = 150;
  for (int64_t bs : {8, 32, 128})
    for (DataType t : {DataType::Float16, DataType::Float}) {
      SCOPED_TRACE(host::dataTypeName(t));
      SCOPED_TRACE(bs);
      const int64_t perStrip = 32 / host::elementSize(t);
      Shape s;
      s.nz = true;
      s.key = t;
      s.blocks = 5;
      s.bs = bs;
      s.heads = 1;
      s.dk = 21 * perStrip;
      s.dv = 38 * perStrip;
      s.lens = {21, bs == 8 ? 13 : bs == 32 ? 45 : 300};
      s.width = 3;
      s.table = {4, -1, 0, bs == 8 ? 2 : -1, 1, 3};
      s.seed = seed++;
      Case c = make(s);
      ASSERT_EQ(c.keyCache->shape, (std::vector<int64_t>{5, 21, bs, perStrip}));
      c.expectMatchesReference();
    }
}

TEST(GatherPaKvCache,
     NzMixedDtypesOfOneWidth) { // matrix row 7 (accepted pairs)
  const std::pair<DataType, DataType> pairs[] = {
      {DataType::Float16, DataType::BFloat16},
      {DataType::Int8, DataType::Float8E4M3FN},
      {DataType::Float, DataType::UInt32}};
  unsigned seed = 160;
  for (auto [k, v] : pairs) {
    Shape s;
    s.nz = true;
    s.key = k;
    s.value = v;
    s.blocks = 4;
    s.bs = 8;
    s.heads = 2;
    s.dk = 32;
    s.dv = 16;
    s.lens = {9, 6};
    s.seed = seed++;
    Case c = make(s);
    c.expectMatchesReference();
  }
}

TEST(GatherPaKvCache, NzInvalidIdsTruncationAndStridedOutput) {
  Shape s;
  s.nz = true;
  s.key = DataType::Int8;
  s.blocks = 3;
  s.bs = 4;
  s.heads = 1;
  s.dk = 64;
  s.dv = 32;
  s.lens = {6, 5, 4};
  s.width = 2;
  s.table = {2, -1, 3, 0, 1, 1};
  s.tokens = 13;
  s.seed = 170;
  Case c = make(s);
  c.expectMatchesReference();
  // The same with keyRef rows padded by 32 bytes.
  Case d = make(s);
  d.keyRef = std::make_unique<Tensor>(
      DataType::Int8, std::vector<int64_t>{13, 64}, 171, ACL_FORMAT_ND,
      std::vector<int64_t>{96, 1}, 13 * 96);
  d.expectMatchesReference();
}

TEST(GatherPaKvCache, LargeOutputsAreStreamedExactly) {
  // Outputs of 16 MiB or more go out with non-temporal stores (streamed
  // strip groups and 16 KiB / 512-byte runs; leftover strips and 32-byte
  // tails plain): 69 key strips (4 x 16 + 4 + 1) and 67 value strips per
  // token, 4100 tokens (17.4 MiB of outputs), a partial last chunk, an
  // invalid block id (streamed zeros), and the twin alike.
  for (bool nz : {false, true}) {
    SCOPED_TRACE(nz ? "PA_NZ" : "Norm");
    Shape s;
    s.nz = nz;
    s.blocks = 40;
    s.bs = 128;
    s.heads = 1;
    s.dk = 69 * 16;
    s.dv = 67 * 16;
    s.lens = {2500, 1600};
    s.width = 20;
    for (int64_t b = 0; b < 2; ++b)
      for (int64_t j = 0; j < 20; ++j)
        s.table.push_back(b == 1 && j == 3 ? -1 : (b * 20 + j * 7) % 40);
    s.seed = 175;
    Case c = make(s);
    ASSERT_GE(
        static_cast<int64_t>(c.keyRef->bytes.size() + c.valueRef->bytes.size()),
        int64_t(16) << 20);
    c.expectMatchesReference();
    Tensor krTwin(*c.keyRef), vrTwin(*c.valueRef);
    ASSERT_TRUE(ops::gatherPaKvCacheHandwritten(c.args(&krTwin, &vrTwin)));
    EXPECT_EQ(c.keyRef->bytes, krTwin.bytes);
    EXPECT_EQ(c.valueRef->bytes, vrTwin.bytes);
  }
}

//===----------------------------------------------------------------------===//
// Empty tensors and the twin
//===----------------------------------------------------------------------===//

// spec_rule: gather-5.2
TEST(GatherPaKvCache, EmptyOutputWritesNothing) { // matrix row 14
  Shape s;
  s.lens = {3};
  Case c = make(s);
  c.keyRef = std::make_unique<Tensor>(DataType::Float16,
                                      std::vector<int64_t>{0, 2, 16});
  Tensor vr0(*c.valueRef);
  std::string msg;
  EXPECT_EQ(c.call(&msg), 0) << msg;
  EXPECT_EQ(c.valueRef->bytes, vr0.bytes);
  // Empty wins over later rules (a wrong rank, a null seqOffset is fine).
  c.tables = indices(DataType::Int32, {3}, {0, 1, 2});
  EXPECT_EQ(c.call(&msg), 0) << msg;
  EXPECT_EQ(c.valueRef->bytes, vr0.bytes);
  // Each of the four empty (dim 0 = 0) on an otherwise valid call: success,
  // and neither output written.
  for (int which = 0; which < 4; ++which) {
    SCOPED_TRACE(which);
    Case e = make(s);
    std::unique_ptr<Tensor> *t = which == 0   ? &e.keyCache
                                 : which == 1 ? &e.valueCache
                                 : which == 2 ? &e.keyRef
                                              : &e.valueRef;
    std::vector<int64_t> dims = (*t)->shape;
    dims[0] = 0;
    *t = std::make_unique<Tensor>((*t)->dtype, dims);
    const std::vector<unsigned char> kr0 = e.keyRef->bytes, vr1 = e.valueRef->bytes;
    EXPECT_EQ(e.call(&msg), 0) << msg;
    EXPECT_EQ(e.keyRef->bytes, kr0);
    EXPECT_EQ(e.valueRef->bytes, vr1);
  }
}

TEST(GatherPaKvCache, HandwrittenTwinMatches) {
  for (bool nz : {false, true}) {
    Shape s;
    s.nz = nz;
    s.key = DataType::BFloat16;
    s.index = DataType::Int64;
    s.blocks = 16;
    s.bs = 16;
    s.heads = 2;
    s.dk = 64;
    s.dv = 32;
    s.lens = {40, 0, 17, 33};
    s.offs = std::vector<int64_t>{16, 0, 0, 20};
    s.width = 4;
    s.seed = 180;
    Case c = make(s);
    Tensor krTwin(*c.keyRef), vrTwin(*c.valueRef);
    ASSERT_TRUE(ops::gatherPaKvCacheHandwritten(c.args(&krTwin, &vrTwin)));
    c.expectMatchesReference();
    EXPECT_EQ(c.keyRef->bytes, krTwin.bytes);
    EXPECT_EQ(c.valueRef->bytes, vrTwin.bytes);
  }
}

//===----------------------------------------------------------------------===//
// Validation (section 5)
//===----------------------------------------------------------------------===//

/// A valid small Norm case to break one rule at a time.
Case small() {
  Shape s;
  s.blocks = 4;
  s.bs = 4;
  s.heads = 2;
  s.dk = 16;
  s.dv = 8;
  s.lens = {3, 5};
  s.seed = 200;
  return make(s);
}

Case smallNz() {
  Shape s;
  s.nz = true;
  s.blocks = 4;
  s.bs = 4;
  s.heads = 2;
  s.dk = 16;
  s.dv = 32;
  s.lens = {3, 5};
  s.seed = 210;
  return make(s);
}

/// Expects `code`, a message containing `needle`, and untouched outputs.
void expectError(Case &c, int code, const std::string &needle) {
  SCOPED_TRACE(needle);
  std::vector<unsigned char> k0 =
      c.keyRef ? c.keyRef->bytes : std::vector<unsigned char>{};
  std::vector<unsigned char> v0 =
      c.valueRef ? c.valueRef->bytes : std::vector<unsigned char>{};
  std::string msg;
  EXPECT_EQ(c.call(&msg), code) << msg;
  EXPECT_NE(msg.find(needle), std::string::npos) << "message: " << msg;
  if (c.keyRef) {
    EXPECT_EQ(c.keyRef->bytes, k0);
  }
  if (c.valueRef) {
    EXPECT_EQ(c.valueRef->bytes, v0);
  }
}

template <typename Edit>
void expectErrorAfter(Case (*base)(), Edit edit, int code,
                      const std::string &needle) {
  Case c = base();
  edit(c);
  expectError(c, code, needle);
}

// spec_rule: gather-5.1
TEST(GatherPaKvCacheErrors, NullPointers) { // matrix row 11
  expectErrorAfter(
      small, [](Case &c) { c.lens.reset(); }, 161001,
      "seqLens must not be null");
  expectErrorAfter(
      small, [](Case &c) { c.keyRef.reset(); }, 161001,
      "keyRef must not be null");
  expectErrorAfter(
      small, [](Case &c) { c.keyCache.reset(); }, 161001,
      "keyCache must not be null");
  expectErrorAfter(
      small, [](Case &c) { c.valueCache.reset(); }, 161001,
      "valueCache must not be null");
  expectErrorAfter(
      small, [](Case &c) { c.tables.reset(); }, 161001,
      "blockTables must not be null");
  expectErrorAfter(
      small, [](Case &c) { c.valueRef.reset(); }, 161001,
      "valueRef must not be null");
  // Null beats empty (step 1 before step 2).
  expectErrorAfter(
      small,
      [](Case &c) {
        c.keyRef = std::make_unique<Tensor>(DataType::Float16,
                                            std::vector<int64_t>{0, 2, 16});
        c.tables.reset();
      },
      161001, "blockTables must not be null");
  Case c = small();
  uint64_t ws;
  aclOpExecutor *exec;
  EXPECT_EQ(aclnnGatherPaKvCacheGetWorkspaceSize(
                c.keyCache->handle, c.valueCache->handle, c.tables->handle,
                c.lens->handle, c.keyRef->handle, c.valueRef->handle, nullptr,
                nullptr, false, nullptr, &exec),
            161001);
  EXPECT_EQ(aclnnGatherPaKvCacheGetWorkspaceSize(
                c.keyCache->handle, c.valueCache->handle, c.tables->handle,
                c.lens->handle, c.keyRef->handle, c.valueRef->handle, nullptr,
                nullptr, false, &ws, nullptr),
            161001);
}

// spec_rule: gather-5.3
TEST(GatherPaKvCacheErrors, Ranks) { // matrix row 12 (ranks)
  auto tensor = [](DataType t, std::vector<int64_t> dims) {
    return std::make_unique<Tensor>(t, std::move(dims));
  };
  expectErrorAfter(
      small,
      [&](Case &c) {
        c.keyCache = tensor(DataType::Float16, {4, 4, 32});
      },
      161002, "keyCache: rank must be 4, got 3");
  expectErrorAfter(
      small,
      [&](Case &c) {
        c.valueCache = tensor(DataType::Float16, {4, 4, 2, 8, 1});
      },
      161002, "valueCache: rank must be 4, got 5");
  expectErrorAfter(
      small,
      [&](Case &c) {
        c.tables = indices(DataType::Int32, {2}, {0, 1});
      },
      161002, "blockTables: rank must be 2, got 1");
  expectErrorAfter(
      small,
      [&](Case &c) {
        c.lens = indices(DataType::Int32, {2, 1}, {3, 5});
      },
      161002, "seqLens: rank must be 1, got 2");
  expectErrorAfter(
      small,
      [&](Case &c) {
        c.keyRef = tensor(DataType::Float16, {8, 2, 16, 1});
      },
      161002, "keyRef: rank must be 2 or 3, got 4");
  expectErrorAfter(
      small, [&](Case &c) { c.valueRef = tensor(DataType::Float16, {64}); },
      161002, "valueRef: rank must be 2 or 3, got 1");
}

// spec_rule: gather-5.4
TEST(GatherPaKvCacheErrors, Dtypes) { // matrix row 12 (dtypes)
  auto tensor = [](DataType t, std::vector<int64_t> dims) {
    return std::make_unique<Tensor>(t, std::move(dims));
  };
  expectErrorAfter(
      small,
      [&](Case &c) {
        c.keyCache = tensor(DataType::Double, {4, 4, 2, 16});
      },
      161002, "keyCache: dtype DOUBLE is not supported");
  expectErrorAfter(
      small,
      [&](Case &c) {
        c.valueCache = tensor(DataType::Int64, {4, 4, 2, 8});
      },
      161002, "valueCache: dtype INT64 is not supported");
  expectErrorAfter(
      small,
      [&](Case &c) {
        c.keyRef = tensor(DataType::Bool, {8, 2, 16});
      },
      161002, "keyRef: dtype BOOL is not supported");
  expectErrorAfter(
      small,
      [&](Case &c) {
        c.valueRef = tensor(DataType::Double, {8, 2, 8});
      },
      161002, "valueRef: dtype DOUBLE is not supported");
  expectErrorAfter(
      small,
      [&](Case &c) {
        c.tables = indices(DataType::Int16, {2, 2}, {0, 1, 2, 3});
      },
      161002, "blockTables: dtype INT16 is not supported");
  expectErrorAfter(
      small,
      [&](Case &c) {
        c.lens =
            std::make_unique<Tensor>(DataType::UInt32, std::vector<int64_t>{2});
      },
      161002, "seqLens: dtype UINT32 is not supported");
  expectErrorAfter(
      small,
      [&](Case &c) {
        c.keyRef = tensor(DataType::BFloat16, {8, 2, 16});
      },
      161002, "keyRef: dtype BFLOAT16 must equal keyCache's dtype FLOAT16");
  expectErrorAfter(
      small,
      [&](Case &c) {
        c.valueRef = tensor(DataType::Int16, {8, 2, 8});
      },
      161002, "valueRef: dtype INT16 must equal valueCache's dtype FLOAT16");
  expectErrorAfter(
      small,
      [&](Case &c) {
        c.valueCache = tensor(DataType::BFloat16, {4, 4, 2, 8});
        c.valueRef = tensor(DataType::BFloat16, {8, 2, 8});
      },
      161002, "valueCache: dtype BFLOAT16 must equal keyCache's dtype FLOAT16");
  // Only "PA_NZ" exempts the pair, even when cacheMode is itself invalid.
  expectErrorAfter(
      small,
      [&](Case &c) {
        c.cacheMode = "nz";
        c.valueCache = tensor(DataType::BFloat16, {4, 4, 2, 8});
        c.valueRef = tensor(DataType::BFloat16, {8, 2, 8});
      },
      161002, "valueCache: dtype BFLOAT16 must equal keyCache's dtype FLOAT16");
  expectErrorAfter(
      small,
      [&](Case &c) {
        c.lens = indices(DataType::Int64, {2}, {3, 5});
      },
      161002, "seqLens: dtype INT64 must equal blockTables' dtype INT32");
  expectErrorAfter(
      small,
      [&](Case &c) {
        c.offs =
            std::make_unique<Tensor>(DataType::Float, std::vector<int64_t>{2});
      },
      161002, "seqOffsetOptional: dtype FLOAT is not supported");
  expectErrorAfter(
      small,
      [&](Case &c) {
        c.offs = indices(DataType::Int64, {2}, {0, 0});
      },
      161002,
      "seqOffsetOptional: dtype INT64 must equal blockTables' dtype INT32");
  // Rank errors come before dtype errors (step 3 before step 4).
  expectErrorAfter(
      small,
      [&](Case &c) {
        c.keyRef = tensor(DataType::Double, {8, 2, 16, 1});
      },
      161002, "keyRef: rank must be 2 or 3");
}

// spec_rule: gather-5.5-mode
// spec_rule: gather-5.5-dims
// spec_rule: gather-5.5-nz
// spec_rule: gather-5.5-caches
// spec_rule: gather-5.5-seqlens
// spec_rule: gather-5.5-outputs
// spec_rule: gather-5.5-offset
TEST(GatherPaKvCacheErrors, TilingRules) { // matrix rows 7 and 13
  auto tensor = [](DataType t, std::vector<int64_t> dims,
                   aclFormat f = ACL_FORMAT_ND) {
    return std::make_unique<Tensor>(t, std::move(dims), 0, f);
  };
  expectErrorAfter(
      small, [](Case &c) { c.cacheMode = "nz"; }, 561002,
      "cacheMode: \"nz\" is not a cache mode");
  expectErrorAfter(
      small, [](Case &c) { c.cacheMode = "PZ_NZ"; }, 561002,
      "cacheMode: \"PZ_NZ\"");
  expectErrorAfter(
      small, [](Case &c) { c.cacheMode = "norm"; }, 561002,
      "cacheMode: \"norm\"");
  expectErrorAfter(
      small,
      [](Case &c) {
        c.tables = indices(DataType::Int32, {2, 0}, {});
      },
      561002, "blockTables: every dimension must be > 0");
  expectErrorAfter(
      small,
      [](Case &c) {
        c.tables = indices(DataType::Int32, {0, 2}, {});
        c.lens = indices(DataType::Int32, {0}, {});
      },
      561002, "blockTables: every dimension must be > 0");
  // NZ last dim 16 for int8 (E = 32).
  expectErrorAfter(
      smallNz,
      [&](Case &c) {
        c.keyCache =
            tensor(DataType::Int8, {4, 2, 4, 16}, ACL_FORMAT_FRACTAL_NZ);
        c.valueCache =
            tensor(DataType::Int8, {4, 4, 4, 16}, ACL_FORMAT_FRACTAL_NZ);
        c.keyRef = tensor(DataType::Int8, {8, 32});
        c.valueRef = tensor(DataType::Int8, {8, 64});
      },
      561002, "keyCache: PA_NZ last dimension must be 32 / sizeof(INT8) = 32");
  expectErrorAfter(
      smallNz,
      [&](Case &c) {
        c.valueCache =
            tensor(DataType::Float16, {4, 4, 4, 8}, ACL_FORMAT_FRACTAL_NZ);
      },
      561002,
      "valueCache: PA_NZ last dimension must be 32 / sizeof(FLOAT16) = 16");
  // FP8_E4M3FN key with a FLOAT16 value: last dims 32 != 16.
  expectErrorAfter(
      smallNz,
      [&](Case &c) {
        c.keyCache = tensor(DataType::Float8E4M3FN, {4, 1, 4, 32},
                            ACL_FORMAT_FRACTAL_NZ);
        c.keyRef = tensor(DataType::Float8E4M3FN, {8, 32});
      },
      561002, "valueCache: shape[3] must equal keyCache's (32)");
  // Storage formats.
  expectErrorAfter(
      smallNz,
      [&](Case &c) {
        c.keyCache = tensor(DataType::Float16, {4, 2, 4, 16});
      },
      561002, "keyCache: format must be FRACTAL_NZ under cacheMode \"PA_NZ\"");
  expectErrorAfter(
      small,
      [&](Case &c) {
        c.valueCache =
            tensor(DataType::Float16, {4, 4, 2, 8}, ACL_FORMAT_FRACTAL_NZ);
      },
      561002, "valueCache: format must be ND under cacheMode \"Norm\"");
  expectErrorAfter(
      small,
      [&](Case &c) {
        c.valueCache = tensor(DataType::Float16, {5, 4, 2, 8});
      },
      561002, "valueCache: shape[0] must equal keyCache's (4)");
  expectErrorAfter(
      small,
      [&](Case &c) {
        c.valueCache = tensor(DataType::Float16, {4, 4, 3, 8});
      },
      561002, "valueCache: shape[2] must equal keyCache's (2)");
  expectErrorAfter(
      smallNz,
      [&](Case &c) {
        c.valueCache =
            tensor(DataType::Float16, {4, 4, 8, 16}, ACL_FORMAT_FRACTAL_NZ);
      },
      561002, "valueCache: shape[2] must equal keyCache's (4)");
  // seqLens [B] with cumsum = true, and [B+1] without.
  expectErrorAfter(
      small, [](Case &c) { c.cumsum = true; }, 561002,
      "seqLens: shape[0] must be 3 (batch + 1, isSeqLensCumsum)");
  expectErrorAfter(
      small,
      [](Case &c) {
        c.lens = indices(DataType::Int32, {3}, {0, 3, 8});
      },
      561002, "seqLens: shape[0] must be 2 (batch, not isSeqLensCumsum)");
  expectErrorAfter(
      small,
      [&](Case &c) {
        c.keyRef = tensor(DataType::Float16, {8, 32});
      },
      561002, "keyRef: rank must be 3 under cacheMode \"Norm\"");
  expectErrorAfter(
      smallNz,
      [&](Case &c) {
        c.keyRef = tensor(DataType::Float16, {8, 2, 16});
      },
      561002, "keyRef: rank must be 2 under cacheMode \"PA_NZ\"");
  expectErrorAfter(
      small,
      [&](Case &c) {
        c.keyRef = tensor(DataType::Float16, {8, 1, 16});
      },
      561002, "keyRef: shape[1:3] must equal keyCache's [N, Dk] = [2, 16]");
  expectErrorAfter(
      smallNz,
      [&](Case &c) {
        c.keyRef = tensor(DataType::Float16, {8, 48});
      },
      561002, "keyRef: shape[1] must be keyCache.shape[1] * shape[3] = 32");
  expectErrorAfter(
      small,
      [&](Case &c) {
        c.valueRef = tensor(DataType::Float16, {8, 2, 8, 1});
      },
      161002, "valueRef: rank must be 2 or 3");
  expectErrorAfter(
      small,
      [&](Case &c) {
        c.valueRef = tensor(DataType::Float16, {8, 16});
      },
      561002, "valueRef: rank must be 3 under cacheMode \"Norm\"");
  expectErrorAfter(
      small,
      [&](Case &c) {
        c.valueRef = tensor(DataType::Float16, {9, 2, 8});
      },
      561002, "valueRef: shape[0] must equal keyRef's (8)");
  expectErrorAfter(
      small,
      [&](Case &c) {
        c.valueRef = tensor(DataType::Float16, {8, 2, 16});
      },
      561002, "valueRef: shape[1:3] must equal valueCache's [N, Dv] = [2, 8]");
  expectErrorAfter(
      smallNz,
      [&](Case &c) {
        c.valueRef = tensor(DataType::Float16, {8, 32});
      },
      561002, "valueRef: shape[1] must be valueCache.shape[1] * shape[3] = 64");
  expectErrorAfter(
      small,
      [](Case &c) {
        c.offs = indices(DataType::Int32, {3}, {0, 0, 0});
      },
      561002, "seqOffsetOptional: must be 1-D of length batch = 2, got [3]");
  expectErrorAfter(
      small,
      [](Case &c) {
        c.offs = indices(DataType::Int32, {2, 1}, {0, 0});
      },
      561002, "seqOffsetOptional: must be 1-D of length batch = 2, got [2, 1]");
}

TEST(GatherPaKvCacheErrors, CppApi) {
  Case c = small();
  auto a = c.args(c.keyRef.get(), c.valueRef.get());
  a.cacheMode = "PA_NZ";
  std::vector<unsigned char> k0 = c.keyRef->bytes;
  host::Status s = ops::gatherPaKvCache(a);
  EXPECT_EQ(s.code(), 561002);
  EXPECT_NE(s.message().find("valueCache: PA_NZ last dimension"),
            std::string::npos)
      << s.message();
  EXPECT_EQ(c.keyRef->bytes, k0);
  a.seqLens = nullptr;
  s = ops::gatherPaKvCache(a);
  EXPECT_EQ(s.code(), 161001);
  EXPECT_NE(s.message().find("seqLens"), std::string::npos);
}

} // namespace
