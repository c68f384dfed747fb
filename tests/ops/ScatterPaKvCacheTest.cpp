//===- ScatterPaKvCacheTest.cpp - ScatterPaKvCache against the spec -------===//
//
// Every scenario of ../shared/spec/scatter_pa_kv_cache.md (section 10's
// matrix and its edge cases) through the public C API, compared bit for bit
// with the scalar reference (which follows the spec's pseudo-code); every
// validation rule with its status code, message and untouched outputs.
//
//===----------------------------------------------------------------------===//
#include "acl/acl.h"
#include "aclnnop/aclnn_scatter_pa_kv_cache.h"
#include "ops/aclnn/AclObjects.h"
#include "ops/host/DataType.h"
#include "ops/scatter_pa_kv_cache/ScatterPaKvCacheTwin.h"

#include <gtest/gtest.h>

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

/// A host tensor: owned bytes and its aclTensor (contiguous unless strides
/// are given).
struct Tensor {
  DataType dtype = DataType::Float16;
  std::vector<int64_t> shape;
  std::vector<unsigned char> bytes;
  aclTensor *handle = nullptr;

  Tensor(DataType t, std::vector<int64_t> dims, int64_t storageElems = -1)
      : dtype(t), shape(std::move(dims)) {
    int64_t n = storageElems >= 0 ? storageElems : host::shapeNumel(shape);
    bytes.assign(static_cast<size_t>(n * host::elementSize(t)), 0);
    std::vector<int64_t> storage{n};
    handle = aclCreateTensor(shape.data(), shape.size(), static_cast<aclDataType>(t), nullptr,
                             0, ACL_FORMAT_ND, storage.data(), 1, bytes.data());
  }
  Tensor(const Tensor &other) : Tensor(other.dtype, other.shape, other.elems()) {
    bytes = other.bytes;
  }
  Tensor &operator=(const Tensor &) = delete;
  ~Tensor() { aclDestroyTensor(handle); }
  int64_t elems() const {
    return static_cast<int64_t>(bytes.size()) / host::elementSize(dtype);
  }
  /// Fills with random bytes (pure data movement) or, for averaging tests,
  /// random finite values in [-8, 8].
  void random(unsigned seed, bool finite = false) {
    std::mt19937 rng(seed);
    if (!finite) {
      for (auto &b : bytes)
        b = static_cast<unsigned char>(rng());
      return;
    }
    std::uniform_real_distribution<float> dist(-8.0f, 8.0f);
    std::uniform_int_distribution<int> ints(-128, 127);
    const int64_t size = host::elementSize(dtype);
    for (int64_t i = 0; i < elems(); ++i) {
      unsigned char *p = bytes.data() + i * size;
      float f = dist(rng);
      uint16_t h;
      switch (dtype) {
      case DataType::Float16: h = host::floatToHalfBits(f); std::memcpy(p, &h, 2); break;
      case DataType::BFloat16: h = host::floatToBFloat16Bits(f); std::memcpy(p, &h, 2); break;
      case DataType::Float: std::memcpy(p, &f, 4); break;
      default: {
        for (int64_t b = 0; b < size; ++b)
          p[b] = static_cast<unsigned char>(rng());
      }
      }
      (void)ints;
    }
  }
  template <typename T> void set(const std::vector<T> &values) {
    ASSERT_EQ(values.size() * sizeof(T), bytes.size());
    std::memcpy(bytes.data(), values.data(), bytes.size());
  }
  template <typename T> T get(int64_t i) const {
    T v;
    std::memcpy(&v, bytes.data() + i * sizeof(T), sizeof(T));
    return v;
  }
};

/// " at byte i: got x, want y" for the first differing byte.
std::string firstDifference(const std::vector<unsigned char> &got,
                            const std::vector<unsigned char> &want) {
  for (size_t i = 0; i < got.size() && i < want.size(); ++i)
    if (got[i] != want[i])
      return " at byte " + std::to_string(i) + ": got " + std::to_string(got[i]) +
             ", want " + std::to_string(want[i]);
  return "";
}

/// Index tensor of INT32 or INT64 with `values`.
std::unique_ptr<Tensor> indices(DataType t, std::vector<int64_t> dims,
                                const std::vector<int64_t> &values) {
  auto x = std::make_unique<Tensor>(t, std::move(dims));
  for (size_t i = 0; i < values.size(); ++i) {
    if (t == DataType::Int64) {
      std::memcpy(x->bytes.data() + i * 8, &values[i], 8);
    } else {
      int32_t v = static_cast<int32_t>(values[i]);
      std::memcpy(x->bytes.data() + i * 4, &v, 4);
    }
  }
  return x;
}

/// One call of the operator: inputs, caches, optional tensors and modes.
struct Case {
  std::unique_ptr<Tensor> key, value, keyCache, valueCache, slots, lens, offs, seq;
  const char *cacheMode = nullptr, *scatterMode = nullptr;
  std::optional<std::vector<int64_t>> strides, offsets;

  aclnn::ScatterPaKvCacheArgs args(Tensor *kc, Tensor *vc, aclIntArray *st,
                                   aclIntArray *of) const {
    aclnn::ScatterPaKvCacheArgs a;
    a.key = key ? key->handle : nullptr;
    a.keyCacheRef = kc ? kc->handle : nullptr;
    a.slotMapping = slots ? slots->handle : nullptr;
    a.value = value ? value->handle : nullptr;
    a.valueCacheRef = vc ? vc->handle : nullptr;
    a.compressLensOptional = lens ? lens->handle : nullptr;
    a.compressSeqOffsetOptional = offs ? offs->handle : nullptr;
    a.seqLensOptional = seq ? seq->handle : nullptr;
    a.cacheModeOptional = cacheMode;
    a.scatterModeOptional = scatterMode;
    a.stridesOptional = st;
    a.offsetsOptional = of;
    return a;
  }

  /// Runs the C API on the caches; returns its status and fills `message`.
  int call(std::string *message = nullptr) {
    aclIntArray *st = strides ? aclCreateIntArray(strides->data(), strides->size()) : nullptr;
    aclIntArray *of = offsets ? aclCreateIntArray(offsets->data(), offsets->size()) : nullptr;
    uint64_t ws = 0;
    aclOpExecutor *exec = nullptr;
    int rc = aclnnScatterPaKvCacheGetWorkspaceSize(
        key ? key->handle : nullptr, keyCache ? keyCache->handle : nullptr,
        slots ? slots->handle : nullptr, value ? value->handle : nullptr,
        valueCache ? valueCache->handle : nullptr, lens ? lens->handle : nullptr,
        offs ? offs->handle : nullptr, seq ? seq->handle : nullptr,
        const_cast<char *>(cacheMode), const_cast<char *>(scatterMode), st, of, &ws, &exec);
    if (rc == 0) {
      EXPECT_EQ(ws, 0u);
      rc = aclnnScatterPaKvCache(nullptr, 0, exec, nullptr);
    } else {
      EXPECT_EQ(exec, nullptr);
    }
    if (message) {
      const char *m = aclGetRecentErrMsg();
      *message = m ? m : "";
    }
    aclDestroyIntArray(st);
    aclDestroyIntArray(of);
    return rc;
  }

  /// Runs the operator and the reference on copies of the caches and
  /// expects identical bytes; expects the operator to have changed
  /// something unless `expectChange` is false.
  void expectMatchesReference(bool expectChange = true) {
    Tensor kcRef(*keyCache), vcRef(*valueCache);
    Tensor kc0(*keyCache), vc0(*valueCache);
    ASSERT_EQ(call(), 0) << aclGetRecentErrMsg();
    aclIntArray *st = strides ? aclCreateIntArray(strides->data(), strides->size()) : nullptr;
    aclIntArray *of = offsets ? aclCreateIntArray(offsets->data(), offsets->size()) : nullptr;
    ops::scatterPaKvCacheReference(args(&kcRef, &vcRef, st, of));
    aclDestroyIntArray(st);
    aclDestroyIntArray(of);
    EXPECT_TRUE(keyCache->bytes == kcRef.bytes) << "key cache differs from the reference"
                                                << firstDifference(keyCache->bytes, kcRef.bytes);
    EXPECT_TRUE(valueCache->bytes == vcRef.bytes) << "value cache differs from the reference";
    if (expectChange) {
      EXPECT_TRUE(keyCache->bytes != kc0.bytes) << "nothing was written";
    }
  }
};

constexpr DataType kAllKv[] = {
    DataType::Float16, DataType::Float,  DataType::BFloat16, DataType::Int8,
    DataType::UInt8,   DataType::Int16,  DataType::UInt16,   DataType::Int32,
    DataType::UInt32,  DataType::HiFloat8, DataType::Float8E5M2, DataType::Float8E4M3FN};

/// An S2 (or S6 when dv == 0) case: T tokens, N heads, random unique slots
/// (plus the given ones first).
Case ndCase(DataType t, DataType idx, int64_t tokens, int64_t heads, int64_t dk, int64_t dv,
            int64_t blocks, int64_t bs, std::vector<int64_t> slots, unsigned seed) {
  Case c;
  c.key = std::make_unique<Tensor>(t, std::vector<int64_t>{tokens, heads, dk});
  c.keyCache = std::make_unique<Tensor>(t, std::vector<int64_t>{blocks, bs, heads, dk});
  if (dv > 0) {
    c.value = std::make_unique<Tensor>(t, std::vector<int64_t>{tokens, heads, dv});
    c.valueCache = std::make_unique<Tensor>(t, std::vector<int64_t>{blocks, bs, heads, dv});
  } else {
    c.value = std::make_unique<Tensor>(t, std::vector<int64_t>{});
    c.valueCache = std::make_unique<Tensor>(t, std::vector<int64_t>{});
  }
  c.key->random(seed);
  c.value->random(seed + 1);
  c.keyCache->random(seed + 2);
  c.valueCache->random(seed + 3);
  if (slots.empty()) {
    std::vector<int64_t> all(static_cast<size_t>(blocks * bs));
    std::iota(all.begin(), all.end(), 0);
    std::shuffle(all.begin(), all.end(), std::mt19937(seed));
    slots.assign(all.begin(), all.begin() + tokens);
  }
  c.slots = indices(idx, {tokens}, slots);
  return c;
}

} // namespace

//===----------------------------------------------------------------------===//
// S2 / S6: ND caches
//===----------------------------------------------------------------------===//

// spec_rule: scatter-8-values
TEST(ScatterPaKvCache, NdSkipsNegativeSlotsAndKeepsTheRest) { // matrix row 1
  Case c = ndCase(DataType::Float16, DataType::Int32, 4, 2, 32, 32, 2, 4, {0, 5, -1, 7}, 1);
  Tensor kc0(*c.keyCache);
  c.expectMatchesReference();
  const int64_t row = 2 * 32 * 2; // bytes per token
  auto rowOf = [&](const Tensor &t, int64_t r) {
    return std::vector<unsigned char>(t.bytes.begin() + r * row, t.bytes.begin() + (r + 1) * row);
  };
  EXPECT_EQ(rowOf(*c.keyCache, 5), rowOf(*c.key, 1));
  EXPECT_EQ(rowOf(*c.keyCache, 7), rowOf(*c.key, 3));
  for (int64_t r : {1, 2, 3, 4, 6})
    EXPECT_EQ(rowOf(*c.keyCache, r), rowOf(kc0, r)) << "slot " << r << " was touched";
}

TEST(ScatterPaKvCache, NdDifferentHeadSizesInt64) { // matrix row 2
  Case c = ndCase(DataType::BFloat16, DataType::Int64, 256, 1, 128, 64, 20, 16, {}, 2);
  c.expectMatchesReference();
}

TEST(ScatterPaKvCache, NdEveryDtype) { // matrix row 3
  for (DataType t : kAllKv) {
    for (DataType idx : {DataType::Int32, DataType::Int64}) {
      SCOPED_TRACE(std::string(host::dataTypeName(t)) + "/" +
                   std::string(host::dataTypeName(idx)));
      Case c = ndCase(t, idx, 3, 1, 8, 8, 2, 4, {}, 3);
      c.expectMatchesReference();
    }
  }
}

// spec_rule: scatter-8-values
TEST(ScatterPaKvCache, NdEdgeSlots) {
  // Slot cap-1 written, slot cap dropped, a duplicate: the later write wins.
  Case c = ndCase(DataType::Float, DataType::Int32, 5, 3, 20, 12, 3, 4, {11, 12, 4, 4, -7}, 4);
  c.expectMatchesReference();
  EXPECT_EQ(0, std::memcmp(c.keyCache->bytes.data() + 4 * 60 * 4, c.key->bytes.data() + 3 * 60 * 4, 60 * 4));
  // Many tokens into few blocks, duplicates across blocks and threads.
  Case d = ndCase(DataType::Int8, DataType::Int64, 300, 2, 24, 40, 40, 8,
                  std::vector<int64_t>(300, 0), 5);
  for (int64_t i = 0; i < 300; ++i)
    reinterpret_cast<int64_t *>(d.slots->bytes.data())[i] = (i * 7) % 40 - 3;
  d.expectMatchesReference();
}

TEST(ScatterPaKvCache, NdOneTokenOneHeadAndLargeRows) {
  Case a = ndCase(DataType::UInt16, DataType::Int32, 1, 1, 16, 16, 1, 1, {0}, 6);
  a.expectMatchesReference();
  Case b = ndCase(DataType::Float16, DataType::Int32, 9, 8, 256, 128, 3, 16, {}, 7);
  b.expectMatchesReference();
}

TEST(ScatterPaKvCache, NctWindowsOfAFusedBuffer) { // matrix row 4
  const int64_t t = 6, n = 2, d = 16, nd = n * d;
  for (DataType dt : {DataType::Float16, DataType::Int8, DataType::Float}) {
    Case c;
    c.key = std::make_unique<Tensor>(dt, std::vector<int64_t>{t, n, d}, t * 3 * nd);
    c.value = std::make_unique<Tensor>(dt, std::vector<int64_t>{t, n, d}, t * 3 * nd);
    // key and value view one fused QKV buffer each: same bytes.
    c.key->random(8);
    c.value->bytes = c.key->bytes;
    c.keyCache = std::make_unique<Tensor>(dt, std::vector<int64_t>{3, 4, n, d});
    c.valueCache = std::make_unique<Tensor>(dt, std::vector<int64_t>{3, 4, n, d});
    c.keyCache->random(9);
    c.valueCache->random(10);
    c.slots = indices(DataType::Int32, {t}, {3, 0, 11, -1, 5, 8});
    c.scatterMode = "Nct";
    c.strides = std::vector<int64_t>{3 * nd, 3 * nd};
    c.offsets = std::vector<int64_t>{nd, 2 * nd};
    c.expectMatchesReference();
    // Slot 3 holds the K part (offset nd) of row 0.
    const int64_t sz = host::elementSize(dt);
    EXPECT_EQ(0, std::memcmp(c.keyCache->bytes.data() + 3 * nd * sz, c.key->bytes.data() + nd * sz, nd * sz));
    EXPECT_EQ(0, std::memcmp(c.valueCache->bytes.data() + 3 * nd * sz,
                             c.key->bytes.data() + 2 * nd * sz, nd * sz));
  }
}

TEST(ScatterPaKvCache, KeyOnly) { // matrix rows 5 and 6
  Case c = ndCase(DataType::Int8, DataType::Int64, 5, 4, 16, 0, 2, 4, {}, 11);
  Tensor vc0(*c.valueCache);
  c.expectMatchesReference();
  EXPECT_EQ(c.valueCache->bytes, vc0.bytes);

  Case n;
  n.key = std::make_unique<Tensor>(DataType::Float16, std::vector<int64_t>{5, 4, 16}, 5 * 2 * 64);
  n.key->random(12);
  n.value = std::make_unique<Tensor>(DataType::Float16, std::vector<int64_t>{});
  n.valueCache = std::make_unique<Tensor>(DataType::Float16, std::vector<int64_t>{});
  n.keyCache = std::make_unique<Tensor>(DataType::Float16, std::vector<int64_t>{2, 4, 4, 16});
  n.keyCache->random(13);
  n.slots = indices(DataType::Int32, {5}, {7, 6, 5, 4, 3});
  n.scatterMode = "Nct";
  n.strides = std::vector<int64_t>{128, 0}; // strideV is not used
  n.offsets = std::vector<int64_t>{0, 0};
  n.expectMatchesReference();
}

//===----------------------------------------------------------------------===//
// S1: PA_NZ
//===----------------------------------------------------------------------===//

namespace {
Case nzCase(DataType t, DataType idx, int64_t tokens, int64_t heads, int64_t dk, int64_t dv,
            int64_t blocks, int64_t bs, std::vector<int64_t> slots, unsigned seed) {
  const int64_t e = 32 / host::elementSize(t);
  Case c = ndCase(t, idx, tokens, heads, dk, dv, blocks, bs, std::move(slots), seed);
  c.keyCache = std::make_unique<Tensor>(t, std::vector<int64_t>{blocks, heads * dk / e, bs, e});
  c.valueCache = std::make_unique<Tensor>(t, std::vector<int64_t>{blocks, heads * dv / e, bs, e});
  c.keyCache->random(seed + 20);
  c.valueCache->random(seed + 21);
  c.cacheMode = "PA_NZ";
  return c;
}
} // namespace

TEST(ScatterPaKvCache, NzUpstreamExample) { // matrix row 7
  Case c = nzCase(DataType::Float16, DataType::Int32, 2, 2, 32, 32, 1, 32, {1, 30}, 14);
  c.expectMatchesReference();
  // Strip 1 of token 0 (elements 16..31) sits at cache[0, 1, 1, :].
  const uint16_t *cache = reinterpret_cast<const uint16_t *>(c.keyCache->bytes.data());
  const uint16_t *key = reinterpret_cast<const uint16_t *>(c.key->bytes.data());
  EXPECT_EQ(0, std::memcmp(cache + (1 * 32 + 1) * 16, key + 16, 32));
}

TEST(ScatterPaKvCache, NzEveryWidth) { // matrix row 8
  for (DataType t : kAllKv)
    for (DataType idx : {DataType::Int32, DataType::Int64}) {
      SCOPED_TRACE(std::string(host::dataTypeName(t)) + "/" +
                   std::string(host::dataTypeName(idx)));
      Case c = nzCase(t, idx, 7, 2, 64, 32, 3, 5, {14, -1, 0, 3, 15, 9, 2}, 15);
      c.expectMatchesReference();
    }
  // Many strips per token (N*D = 4096 f16 elements: 256 strips).
  Case big = nzCase(DataType::Float16, DataType::Int32, 33, 32, 128, 128, 4, 16, {}, 16);
  big.expectMatchesReference();
}

TEST(ScatterPaKvCache, NzBlockRunsAndBrokenGroups) {
  // Groups of 16 tokens: runs through one block take the strip-by-strip path,
  // the others go token by token, in token order (a later token overwrites
  // the slots an earlier run wrote).
  std::vector<int64_t> slots;
  for (int64_t i = 0; i < 32; ++i)
    slots.push_back(32 + i); // two runs: block 1, positions 0..31
  for (int64_t i = 0; i < 16; ++i)
    slots.push_back(20 + i); // crosses from block 0 into block 1: overwrites 32..35
  for (int64_t i = 0; i < 16; ++i)
    slots.push_back(i == 7 ? -1 : 64 + i); // a padding token breaks the run
  for (int64_t i = 0; i < 6; ++i)
    slots.push_back(96 + i); // a partial last group
  for (DataType t : {DataType::Int8, DataType::Float16, DataType::Float})
    for (DataType idx : {DataType::Int32, DataType::Int64}) {
      SCOPED_TRACE(std::string(host::dataTypeName(t)) + "/" +
                   std::string(host::dataTypeName(idx)));
      // 70 tokens of 8 x 128 key and 8 x 64 value elements: enough bytes for
      // more than one program on a multi-core host.
      Case c = nzCase(t, idx, 70, 8, 128, 64, 4, 32, slots, 17);
      c.expectMatchesReference();
      // 21 key and 38 value strips: a run's tiles of 16 strips overhang both.
      const int64_t e = 32 / host::elementSize(t);
      Case odd = nzCase(t, idx, 70, 1, 21 * e, 38 * e, 4, 32, slots, 18);
      odd.expectMatchesReference();
    }
}

namespace {
/// Slots for 700 tokens into 24 blocks of 32 (768 slots): groups of 16
/// that are runs through a block and groups that are not, with slots named
/// twice or three times across them, padding and slots past the cache.
std::vector<int64_t> largeNzSlots() {
  std::vector<int64_t> slots;
  for (int64_t i = 0; i < 16; ++i)
    slots.push_back(i == 3 ? 40 : 700 - 5 * i); // slot 40: a later run wins
  for (int64_t i = 0; i < 32; ++i)
    slots.push_back(32 + i); // two runs through block 1
  for (int64_t i = 0; i < 16; ++i)
    slots.push_back(i == 9 ? 50 : i == 4 ? 7 : 600 + i); // 50: wins over the run
  for (int64_t i = 64; i < 700; ++i) {
    int64_t s = (i * 389) % 704; // scattered, some slots twice
    if (i % 50 == 0)
      s = -1 - i % 3; // padding
    if (i % 97 == 0)
      s = 768 + i % 5; // past the cache: skipped
    slots.push_back(s);
  }
  slots[100] = 7;
  slots[101] = 8; // slot 8's neighbour 7 is named three times
  slots[650] = 7;
  for (int64_t i = 0; i < 16; ++i) // a run through block 20 amid the scatter:
    slots[320 + i] = 640 + i;      // slot 641 is named before it (token 200)
  slots[200] = 641;                // and 645 after it (token 400)
  slots[400] = 645;
  return slots;
}
} // namespace

TEST(ScatterPaKvCache, NzLargeCallsWriteTheirTokensInCacheOrder) {
  // Calls moving 1 MiB or more collect the tokens of groups that are not
  // runs, sort them by slot and write them block by block; runs go out in
  // between, so the order rule must survive: a slot ends with its last
  // token's row. 700 tokens of 8 x 128 key and 8 x 64 value elements.
  const std::vector<int64_t> slots = largeNzSlots();
  for (DataType t : {DataType::Int8, DataType::Float16, DataType::Float})
    for (DataType idx : {DataType::Int32, DataType::Int64}) {
      SCOPED_TRACE(std::string(host::dataTypeName(t)) + "/" +
                   std::string(host::dataTypeName(idx)));
      Case c = nzCase(t, idx, 700, 8, 128, 64, 24, 32, slots, 44);
      c.expectMatchesReference();
    }
  // 21 key and 38 value strips: the sorted tiles of 4 strips overhang both.
  Case odd = nzCase(DataType::Float, DataType::Int32, 700, 1, 21 * 8, 38 * 8, 24, 32, slots, 45);
  odd.expectMatchesReference();
}

TEST(ScatterPaKvCache, LargeCallsStreamIntoTheCache) {
  // Calls moving 1 MiB or more write with non-temporal stores: 160 tokens of
  // 8 x 128 f32 key and value elements (1.25 MiB), Norm with random slots
  // (a padding token and a duplicate among them) and PA_NZ with runs
  // through blocks and broken groups.
  std::vector<int64_t> slots;
  for (int64_t i = 0; i < 160; ++i)
    slots.push_back((i * 37) % 512);
  slots[5] = -1;
  slots[90] = slots[3];
  Case nd = ndCase(DataType::Float, DataType::Int64, 160, 8, 128, 128, 16, 32, slots, 41);
  nd.expectMatchesReference();
  std::vector<int64_t> runs;
  for (int64_t i = 0; i < 160; ++i)
    runs.push_back(i < 100 ? 64 + i : 300 + (i - 100) * 2); // runs, then gaps
  Case nz = nzCase(DataType::Float, DataType::Int32, 160, 8, 128, 128, 16, 32, runs, 43);
  nz.expectMatchesReference();
}

//===----------------------------------------------------------------------===//
// S4, S5, S3: compressed modes
//===----------------------------------------------------------------------===//

namespace {
/// S4/S5: B batches, N heads, head size D, cache [nb, bs, 1, D].
Case headCase(DataType t, DataType idx, const char *mode, std::vector<int64_t> seqLens,
              int64_t heads, int64_t d, std::vector<int64_t> lens, std::vector<int64_t> offs,
              std::vector<int64_t> slots, int64_t blocks, int64_t bs, unsigned seed) {
  Case c;
  const int64_t b = static_cast<int64_t>(seqLens.size());
  const int64_t tokens = std::accumulate(seqLens.begin(), seqLens.end(), int64_t(0));
  c.key = std::make_unique<Tensor>(t, std::vector<int64_t>{tokens, heads, d});
  c.value = std::make_unique<Tensor>(t, std::vector<int64_t>{tokens, heads, d});
  c.keyCache = std::make_unique<Tensor>(t, std::vector<int64_t>{blocks, bs, 1, d});
  c.valueCache = std::make_unique<Tensor>(t, std::vector<int64_t>{blocks, bs, 1, d});
  c.key->random(seed, true);
  c.value->random(seed + 1, true);
  c.keyCache->random(seed + 2);
  c.valueCache->random(seed + 3);
  c.slots = indices(idx, {b * heads}, slots);
  c.lens = indices(idx, {b * heads}, lens);
  if (!offs.empty())
    c.offs = indices(idx, {b * heads}, offs);
  c.seq = indices(idx, {b}, seqLens);
  c.scatterMode = mode;
  return c;
}
} // namespace

TEST(ScatterPaKvCache, AlibiKeepsTheTail) { // matrix row 9
  for (DataType idx : {DataType::Int32, DataType::Int64}) {
    Case c = headCase(DataType::Float16, idx, "Alibi", {3, 5}, 2, 16, {2, 3, 1, 5}, {},
                      {0, 2, 9, 15}, 6, 4, 17);
    c.expectMatchesReference();
  }
  // Widths 1 and 4, a negative slot, a window reaching into the previous batch.
  Case w = headCase(DataType::Int8, DataType::Int32, "Alibi", {2, 6, 3}, 3, 40,
                    {1, 4, 2, 2, 6, 8, 0, 3, 1}, {}, {0, -1, 5, 10, 20, 30, 40, 47, 50}, 13, 4, 18);
  w.expectMatchesReference();
  Case f = headCase(DataType::UInt32, DataType::Int64, "Alibi", {4, 4}, 2, 8, {4, 3, 2, 1}, {},
                    {1, 6, 11, 15}, 4, 4, 19);
  f.expectMatchesReference();
}

TEST(ScatterPaKvCache, RopeAveragesTheWindow) { // matrix row 10
  for (DataType t : {DataType::Float16, DataType::BFloat16}) {
    SCOPED_TRACE(host::dataTypeName(t));
    Case c = headCase(t, DataType::Int32, "Rope", {6, 4}, 2, 16, {2, 0, 3, 1}, {1, -1, 0, 3},
                      {0, 8, 16, 24}, 8, 4, 20);
    c.expectMatchesReference();
    // Offsets at the end (L - w), equal to L (no mean), windows overrunning the batch.
    Case e = headCase(t, DataType::Int64, "Rope", {5, 7, 2}, 2, 48, {2, 5, 7, 3, 2, 4},
                      {3, 5, 0, 5, 1, 1}, {0, 10, 20, 30, 40, 50}, 16, 4, 21);
    e.expectMatchesReference();
  }
}

TEST(ScatterPaKvCache, RopeRoundingAndSignedZero) {
  // fp16 means that need rounding (ties to even) and a window of -0.0.
  Case c = headCase(DataType::Float16, DataType::Int32, "Rope", {3}, 2, 16, {3, 2}, {0, 0},
                    {0, 4}, 2, 4, 22);
  uint16_t *k = reinterpret_cast<uint16_t *>(c.key->bytes.data());
  for (int64_t tok = 0; tok < 3; ++tok)
    for (int64_t e = 0; e < 16; ++e) {
      k[(tok * 2 + 0) * 16 + e] = host::floatToHalfBits(1.0f + static_cast<float>(tok + e) * 0.0009765625f);
      k[(tok * 2 + 1) * 16 + e] = 0x8000; // -0.0
    }
  c.expectMatchesReference();
  const uint16_t *kc = reinterpret_cast<const uint16_t *>(c.keyCache->bytes.data());
  EXPECT_EQ(kc[4 * 16], 0x0000) << "the mean of -0.0 values is +0.0";
}

TEST(ScatterPaKvCache, OmniDropsTheWindow) { // matrix row 11
  Case c = headCase(DataType::BFloat16, DataType::Int64, "Omni", {6, 4}, 2, 16, {2, 0, 3, 1},
                    {1, -1, 0, 3}, {0, 8, 16, 24}, 8, 4, 23);
  Tensor kc0(*c.keyCache);
  c.expectMatchesReference();
  // Head (0,0): L=6, o=1, w=2: 4 rows written at slots 0..3, slot 4.. untouched.
  EXPECT_EQ(0, std::memcmp(c.keyCache->bytes.data() + 4 * 32, kc0.bytes.data() + 4 * 32, 4 * 32));
}

namespace {
/// S3: key [B, S, N, Dk], slots/lens [B, N], seqLens [B], offs [B*N] if given.
Case paddedCase(DataType t, int64_t b, int64_t s, int64_t n, int64_t dk, int64_t dv,
                std::vector<int64_t> seqLens, std::vector<int64_t> lens,
                std::vector<int64_t> offs, std::vector<int64_t> slots, int64_t blocks,
                int64_t bs, unsigned seed, DataType idx = DataType::Int32) {
  Case c;
  c.key = std::make_unique<Tensor>(t, std::vector<int64_t>{b, s, n, dk});
  c.value = std::make_unique<Tensor>(t, std::vector<int64_t>{b, s, n, dv});
  c.keyCache = std::make_unique<Tensor>(t, std::vector<int64_t>{blocks, bs, 1, dk});
  c.valueCache = std::make_unique<Tensor>(t, std::vector<int64_t>{blocks, bs, 1, dv});
  c.key->random(seed, true);
  c.value->random(seed + 1, true);
  c.keyCache->random(seed + 2);
  c.valueCache->random(seed + 3);
  c.slots = indices(idx, {b, n}, slots);
  c.lens = indices(idx, {b, n}, lens);
  c.seq = indices(idx, {b}, seqLens);
  if (!offs.empty())
    c.offs = indices(idx, {b * n}, offs);
  return c;
}
} // namespace

TEST(ScatterPaKvCache, PaddedTail) { // matrix row 12
  Case c = paddedCase(DataType::Float, 2, 4, 3, 8, 8, {4, 2}, {2, 0, 4, 1, 2, 2}, {},
                      {0, 4, 8, 14, 20, 25}, 7, 4, 24);
  c.expectMatchesReference();
  Case d = paddedCase(DataType::UInt8, 2, 4, 3, 33, 17, {4, 2}, {2, 0, 4, 1, 2, 2}, {},
                      {0, 4, 8, 14, -20, 25}, 7, 4, 25, DataType::Int64);
  d.expectMatchesReference();
}

TEST(ScatterPaKvCache, PaddedMeanUpstreamExample) { // matrix row 13
  Case c = paddedCase(DataType::Float, 2, 2, 3, 7, 7, {2, 2}, {1, 1, 1, 1, 1, 1},
                      {0, 0, 0, 0, 0, 0}, {0, 3, 6, 9, 12, 15}, 2, 2, 26);
  c.expectMatchesReference();
}

TEST(ScatterPaKvCache, PaddedMeanEveryArithmetic) { // matrix row 14
  const DataType types[] = {DataType::Float16, DataType::BFloat16, DataType::Float,
                            DataType::Int8,    DataType::Int16,    DataType::Int32,
                            DataType::UInt8,   DataType::UInt16,   DataType::UInt32};
  for (DataType t : types) {
    SCOPED_TRACE(host::dataTypeName(t));
    // Windows of 3 (non-divisible sums), offsets -1, 0, L-w, >= L; Dk != Dv.
    Case c = paddedCase(t, 2, 8, 3, 24, 40, {8, 6}, {3, 3, 5, 2, 0, 6}, {1, -1, 3, 0, 2, 6},
                        {0, 10, 20, 30, 40, 50}, 16, 4, 27);
    c.expectMatchesReference();
  }
}

TEST(ScatterPaKvCache, PaddedMeanFp8) {
  // Random codes (NaN, inf, subnormals included) and then codes whose means
  // land on subnormals, ties and the overflow edge.
  for (DataType t : {DataType::Float8E5M2, DataType::Float8E4M3FN}) {
    SCOPED_TRACE(host::dataTypeName(t));
    Case c = paddedCase(t, 2, 8, 3, 64, 32, {8, 6}, {3, 2, 5, 2, 4, 6}, {1, 0, 3, 0, 2, 0},
                        {0, 10, 20, 30, 40, 50}, 16, 4, 28);
    c.key->random(29);
    c.value->random(30);
    c.expectMatchesReference();
    // Every pair of codes of a 2-token window: all 65536 pairs over heads
    // and elements (N = 4 heads, D = 128: 512 elements per token row).
    const int64_t n = 4, d = 128;
    Case pairs = paddedCase(t, 128, 2, n, d, d, std::vector<int64_t>(128, 2),
                            std::vector<int64_t>(128 * n, 2), std::vector<int64_t>(128 * n, 0),
                            [&] {
                              std::vector<int64_t> s(128 * n);
                              std::iota(s.begin(), s.end(), 0);
                              return s;
                            }(),
                            128, 4, 32);
    for (int64_t b = 0; b < 128; ++b)
      for (int64_t x = 0; x < n * d; ++x) {
        const int64_t pair = b * n * d + x; // 0 .. 65535
        pairs.key->bytes[static_cast<size_t>((b * 2 + 0) * n * d + x)] = static_cast<unsigned char>(pair & 0xFF);
        pairs.key->bytes[static_cast<size_t>((b * 2 + 1) * n * d + x)] = static_cast<unsigned char>(pair >> 8);
      }
    pairs.expectMatchesReference();
  }
}

//===----------------------------------------------------------------------===//
// Validation (section 7): status, message, untouched outputs
//===----------------------------------------------------------------------===//

namespace {
/// Expects `c` to fail with `code` and a message containing `needle`, and
/// the caches to be untouched.
void expectError(Case &c, int code, const std::string &needle) {
  std::optional<Tensor> kc0, vc0;
  if (c.keyCache)
    kc0.emplace(*c.keyCache);
  if (c.valueCache)
    vc0.emplace(*c.valueCache);
  std::string message;
  EXPECT_EQ(c.call(&message), code) << message;
  EXPECT_NE(message.find(needle), std::string::npos) << "message: " << message;
  if (c.keyCache) {
    EXPECT_TRUE(c.keyCache->bytes == kc0->bytes) << "key cache written on error";
  }
  if (c.valueCache) {
    EXPECT_TRUE(c.valueCache->bytes == vc0->bytes) << "value cache written on error";
  }
}

Case small() { return ndCase(DataType::Float16, DataType::Int32, 4, 2, 16, 16, 2, 4, {}, 40); }
} // namespace

// spec_rule: scatter-7.1
TEST(ScatterPaKvCacheErrors, NullArguments) { // matrix row 15
  {
    Case c = small();
    c.key.reset();
    expectError(c, 161001, "key must not be null");
  }
  {
    Case c = small();
    c.value.reset();
    expectError(c, 161001, "value must not be null");
  }
  {
    Case c = small();
    c.slots.reset();
    expectError(c, 161001, "slotMapping must not be null");
  }
  {
    Case c = small();
    c.keyCache.reset();
    expectError(c, 161001, "keyCacheRef must not be null");
  }
  {
    Case c = small();
    c.valueCache.reset();
    expectError(c, 161001, "valueCacheRef must not be null");
  }
  // A null workspaceSize or executor: 161001, no executor, caches untouched.
  Case c = small();
  const std::vector<unsigned char> kc0 = c.keyCache->bytes, vc0 = c.valueCache->bytes;
  uint64_t ws = 0;
  aclOpExecutor *exec = nullptr;
  auto phase1 = [&](uint64_t *w, aclOpExecutor **e) {
    return aclnnScatterPaKvCacheGetWorkspaceSize(
        c.key->handle, c.keyCache->handle, c.slots->handle, c.value->handle,
        c.valueCache->handle, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, w,
        e);
  };
  EXPECT_EQ(phase1(nullptr, &exec), 161001);
  EXPECT_NE(std::string(aclGetRecentErrMsg()).find("workspaceSize"), std::string::npos)
      << aclGetRecentErrMsg();
  EXPECT_EQ(exec, nullptr);
  EXPECT_EQ(phase1(&ws, nullptr), 161001);
  EXPECT_NE(std::string(aclGetRecentErrMsg()).find("executor"), std::string::npos)
      << aclGetRecentErrMsg();
  EXPECT_TRUE(c.keyCache->bytes == kc0 && c.valueCache->bytes == vc0) << "a cache was written";
}

// spec_rule: scatter-7.3
TEST(ScatterPaKvCacheErrors, Ranks) { // matrix row 16
  {
    Case c = small();
    c.key = std::make_unique<Tensor>(DataType::Float16, std::vector<int64_t>{4, 32});
    expectError(c, 561002, "key: rank must be 3 or 4");
  }
  {
    Case c = small();
    c.value = std::make_unique<Tensor>(DataType::Float16, std::vector<int64_t>{1, 4, 2, 2, 4});
    expectError(c, 561002, "value: rank must be 0");
  }
  {
    Case c = small(); // 3-D key, 4-D value
    c.value = std::make_unique<Tensor>(DataType::Float16, std::vector<int64_t>{4, 1, 2, 16});
    expectError(c, 561002, "value: rank must equal key's");
  }
}

// spec_rule: scatter-7.4
TEST(ScatterPaKvCacheErrors, Dtypes) { // matrix row 17
  {
    Case c = small();
    c.keyCache = std::make_unique<Tensor>(DataType::BFloat16, std::vector<int64_t>{2, 4, 2, 16});
    expectError(c, 161002, "keyCacheRef: dtype BFLOAT16 must equal key's dtype FLOAT16");
  }
  {
    Case c = small();
    c.key = std::make_unique<Tensor>(DataType::Double, std::vector<int64_t>{4, 2, 16});
    expectError(c, 161002, "key: dtype DOUBLE is not supported");
  }
  {
    Case c = small();
    c.slots = indices(DataType::Int16, {4}, {});
    expectError(c, 161002, "slotMapping: dtype INT16");
  }
  {
    Case c = small();
    c.seq = indices(DataType::Int64, {1}, {4});
    expectError(c, 161002, "seqLensOptional: dtype INT64 must equal slotMapping's dtype INT32");
  }
  {
    Case c = small();
    c.value = std::make_unique<Tensor>(DataType::Int16, std::vector<int64_t>{4, 2, 16});
    c.valueCache = std::make_unique<Tensor>(DataType::Int16, std::vector<int64_t>{2, 4, 2, 16});
    expectError(c, 161002, "value: dtype INT16 must equal key's dtype FLOAT16");
  }
}

// spec_rule: scatter-7.5-modes
// spec_rule: scatter-7.5-nd
// spec_rule: scatter-7.5-nz
// spec_rule: scatter-7.5-capacity
// spec_rule: scatter-7.5-nct
// spec_rule: scatter-7.5-compressed
TEST(ScatterPaKvCacheErrors, ScenarioRules) { // matrix row 18
  auto with = [](auto edit, int code, const std::string &needle) {
    Case c = small();
    edit(c);
    expectError(c, code, needle);
  };
  with([](Case &c) { c.cacheMode = "NZ"; }, 561002, "cacheModeOptional: \"NZ\"");
  with([](Case &c) { c.scatterMode = "rope"; }, 561002, "scatterModeOptional: \"rope\"");
  with([](Case &c) {
    c.scatterMode = "Rope";
    c.key = std::make_unique<Tensor>(DataType::Int8, std::vector<int64_t>{4, 2, 16});
    c.value = std::make_unique<Tensor>(DataType::Int8, std::vector<int64_t>{4, 2, 16});
    c.keyCache = std::make_unique<Tensor>(DataType::Int8, std::vector<int64_t>{2, 4, 1, 16});
    c.valueCache = std::make_unique<Tensor>(DataType::Int8, std::vector<int64_t>{2, 4, 1, 16});
    c.slots = indices(DataType::Int32, {4}, {0, 1, 2, 3});
    c.lens = indices(DataType::Int32, {4}, {1, 1, 1, 1});
    c.offs = indices(DataType::Int32, {4}, {0, 0, 0, 0});
    c.seq = indices(DataType::Int32, {2}, {2, 2});
  }, 561002, "supports FLOAT16 and BFLOAT16 only");
  with([](Case &c) {
    c.keyCache = std::make_unique<Tensor>(DataType::Float16, std::vector<int64_t>{2, 4, 3, 16});
  }, 561002, "keyCacheRef: shape[2:4] must be [N, Dk]");
  with([](Case &c) {
    c.cacheMode = "PA_NZ";
    c.keyCache = std::make_unique<Tensor>(DataType::Float16, std::vector<int64_t>{2, 4, 4, 8});
    c.valueCache = std::make_unique<Tensor>(DataType::Float16, std::vector<int64_t>{2, 2, 4, 16});
  }, 561002, "keyCacheRef: PA_NZ last dim must be 32 / sizeof(FLOAT16) = 16");
  with([](Case &c) {
    c.cacheMode = "PA_NZ";
    c.key = std::make_unique<Tensor>(DataType::Float16, std::vector<int64_t>{4, 2, 8});
    c.value = std::make_unique<Tensor>(DataType::Float16, std::vector<int64_t>{4, 2, 16});
    c.keyCache = std::make_unique<Tensor>(DataType::Float16, std::vector<int64_t>{2, 1, 4, 16});
    c.valueCache = std::make_unique<Tensor>(DataType::Float16, std::vector<int64_t>{2, 2, 4, 16});
  }, 561002, "key: PA_NZ needs Dk * sizeof(dtype) to be a multiple of 32");
  with([](Case &c) {
    c.keyCache = std::make_unique<Tensor>(DataType::Float16, std::vector<int64_t>{1, 2, 2, 16});
    c.valueCache = std::make_unique<Tensor>(DataType::Float16, std::vector<int64_t>{1, 2, 2, 16});
  }, 561002, "capacity num_blocks * block_size = 2 must be >= key.shape[0] = 4");
  with([](Case &c) { c.scatterMode = "Nct"; }, 561002, "stridesOptional: Nct needs exactly 2");
  with([](Case &c) {
    c.scatterMode = "Nct";
    c.strides = std::vector<int64_t>{32, 32};
    c.offsets = std::vector<int64_t>{1, 0};
  }, 561002, "key: Nct window offset 1");
  with([](Case &c) {
    c.scatterMode = "Nct";
    c.strides = std::vector<int64_t>{0, 32};
    c.offsets = std::vector<int64_t>{0, 0};
  }, 561002, "stridesOptional[0]: must be >= 1");
  with([](Case &c) {
    c.value = std::make_unique<Tensor>(DataType::Float16, std::vector<int64_t>{});
  }, 561002, "key-only needs both 0-D");
  with([](Case &c) {
    c.cacheMode = "PA_NZ";
    c.value = std::make_unique<Tensor>(DataType::Float16, std::vector<int64_t>{});
    c.valueCache = std::make_unique<Tensor>(DataType::Float16, std::vector<int64_t>{});
  }, 561002, "key-only (0-D value) is not supported with PA_NZ");
  with([](Case &c) { c.slots = indices(DataType::Int32, {3}, {0, 1, 2}); }, 561002,
       "slotMapping: must be 1-D of length key.shape[0] = 4");
  with([](Case &c) { c.scatterMode = "Alibi"; }, 561002,
       "compressLensOptional: required by scatter mode Alibi");
}

// spec_rule: scatter-7.5-padded
TEST(ScatterPaKvCacheErrors, PaddedRules) {
  auto base = [] {
    return paddedCase(DataType::Float16, 2, 4, 3, 8, 8, {4, 2}, {2, 0, 4, 1, 2, 2}, {},
                      {0, 4, 8, 14, 20, 25}, 7, 4, 50);
  };
  {
    Case c = base();
    c.cacheMode = "PA_NZ";
    expectError(c, 561002, "a 4-D key needs the Norm cache mode");
  }
  {
    Case c = base();
    c.lens.reset();
    expectError(c, 561002, "compressLensOptional: required with a 4-D key");
  }
  {
    Case c = base();
    c.slots = indices(DataType::Int32, {6}, {0, 1, 2, 3, 4, 5});
    expectError(c, 561002, "slotMapping: must be 2-D [B, N]");
  }
  {
    Case c = base();
    c.offs = indices(DataType::Int32, {5}, {0, 0, 0, 0, 0});
    expectError(c, 561002, "compressSeqOffsetOptional: must be 1-D of length B*N = 6");
  }
  {
    Case c = paddedCase(DataType::HiFloat8, 2, 4, 3, 8, 8, {4, 2}, {2, 0, 4, 1, 2, 2},
                        {0, 0, 0, 0, 0, 0}, {0, 4, 8, 14, 20, 25}, 7, 4, 51);
    expectError(c, 561002, "does not support HIFLOAT8");
  }
}

// spec_rule: scatter-7.2
TEST(ScatterPaKvCache, EmptyInputsWriteNothing) { // matrix row 19
  // Empty key and value.
  Case c = ndCase(DataType::Float16, DataType::Int32, 0, 2, 16, 16, 2, 4, {}, 60);
  Tensor kc0(*c.keyCache), vc0(*c.valueCache);
  EXPECT_EQ(c.call(), 0);
  EXPECT_EQ(c.keyCache->bytes, kc0.bytes);
  EXPECT_EQ(c.valueCache->bytes, vc0.bytes);
  // Rule 2 reads (key or its cache empty) and (value or its cache empty):
  // empty caches with tokens to scatter, and an empty key cache with an
  // empty value, succeed too and write nothing (call() also checks that the
  // workspace is 0).
  for (int form = 0; form < 2; ++form) {
    SCOPED_TRACE(form == 0 ? "both caches empty" : "key cache and value empty");
    Case e = ndCase(DataType::Float16, DataType::Int32, 4, 2, 16, 16, 2, 4, {}, 61);
    e.keyCache = std::make_unique<Tensor>(DataType::Float16, std::vector<int64_t>{0, 4, 2, 16});
    if (form == 0)
      e.valueCache =
          std::make_unique<Tensor>(DataType::Float16, std::vector<int64_t>{0, 4, 2, 16});
    else
      e.value = std::make_unique<Tensor>(DataType::Float16, std::vector<int64_t>{0, 2, 16});
    Tensor v0(*e.valueCache);
    EXPECT_EQ(e.call(), 0) << aclGetRecentErrMsg();
    EXPECT_EQ(e.valueCache->bytes, v0.bytes);
  }
}

TEST(ScatterPaKvCache, CppApiAndRepeatedCalls) {
  Case c = ndCase(DataType::Float16, DataType::Int32, 8, 2, 64, 64, 4, 4, {}, 61);
  Tensor kcRef(*c.keyCache), vcRef(*c.valueCache);
  auto a = c.args(c.keyCache.get(), c.valueCache.get(), nullptr, nullptr);
  ASSERT_TRUE(ops::scatterPaKvCache(a).isOk());
  ops::scatterPaKvCacheReference(c.args(&kcRef, &vcRef, nullptr, nullptr));
  EXPECT_EQ(c.keyCache->bytes, kcRef.bytes);
  EXPECT_EQ(c.valueCache->bytes, vcRef.bytes);
  auto bad = a;
  bad.cacheModeOptional = "nz";
  host::Status s = ops::scatterPaKvCache(bad);
  EXPECT_EQ(s.code(), 561002);
  EXPECT_NE(s.message().find("cacheModeOptional"), std::string::npos);
}

TEST(ScatterPaKvCache, HandwrittenTwinMatches) {
  // Decode-sized ND and PA_NZ calls, and a prefill-sized PA_NZ call (the
  // twin sorts its scattered tokens there, as the kernel).
  for (int which = 0; which < 3; ++which) {
    Case c = which == 0 ? ndCase(DataType::BFloat16, DataType::Int64, 40, 4, 64, 32, 8, 8, {}, 62)
             : which == 1
                 ? nzCase(DataType::BFloat16, DataType::Int64, 40, 4, 64, 32, 8, 8, {}, 62)
                 : nzCase(DataType::Float16, DataType::Int32, 700, 8, 128, 64, 24, 32,
                          largeNzSlots(), 63);
    Tensor kcTwin(*c.keyCache), vcTwin(*c.valueCache);
    ASSERT_TRUE(ops::scatterPaKvCacheHandwritten(c.args(&kcTwin, &vcTwin, nullptr, nullptr)));
    c.expectMatchesReference();
    EXPECT_EQ(c.keyCache->bytes, kcTwin.bytes);
    EXPECT_EQ(c.valueCache->bytes, vcTwin.bytes);
  }
}
