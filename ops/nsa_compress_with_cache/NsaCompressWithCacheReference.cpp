//===- NsaCompressWithCacheReference.cpp - The spec's pseudo-code ---------===//
//
// Section 3 of ../shared/spec/nsa_compress_with_cache.md, one element at a
// time through the views' strides, with the fold of the spec written as
// its loop (not the expanded formulas). Written from the spec alone; it
// shares nothing with the kernel or its planning.
//
//===----------------------------------------------------------------------===//
#include "ops/nsa_compress_with_cache/NsaCompressWithCacheTwin.h"

#include "ops/host/DataType.h"

#include <cstring>
#include <initializer_list>
#include <vector>

namespace tilejit::ops {

using host::DataType;
using host::TensorView;

namespace {

char *at(const TensorView &t, std::initializer_list<int64_t> idx) {
  int64_t off = 0;
  size_t k = 0;
  for (int64_t i : idx)
    off += i * t.strides[k++];
  return static_cast<char *>(t.firstElement()) + off * t.elementSize();
}

float readValue(const TensorView &t, std::initializer_list<int64_t> idx) {
  uint16_t bits;
  std::memcpy(&bits, at(t, idx), 2);
  return t.dtype == DataType::BFloat16 ? host::bfloat16BitsToFloat(bits)
                                       : host::halfBitsToFloat(bits);
}

void writeValue(const TensorView &t, std::initializer_list<int64_t> idx,
                float v) {
  const uint16_t bits = t.dtype == DataType::BFloat16
                            ? host::floatToBFloat16Bits(v)
                            : host::floatToHalfBits(v);
  std::memcpy(at(t, idx), &bits, 2);
}

int64_t readInt32(const TensorView &t, std::initializer_list<int64_t> idx) {
  int32_t v;
  std::memcpy(&v, at(t, idx), 4);
  return v;
}

/// The spec's fold, in place, in f32.
float fold(float *v, int64_t n) {
  int64_t a = 1;
  while (a < n)
    a *= 2;
  a /= 2;
  for (int64_t j = 0; j < n - a; ++j)
    v[j] = v[j] + v[j + a];
  while (a > 1) {
    a /= 2;
    for (int64_t j = 0; j < a; ++j)
      v[j] = v[j] + v[j + a];
  }
  return v[0];
}

} // namespace

void nsaCompressWithCacheReference(
    const aclnn::NsaCompressWithCacheArgs &args) {
  const TensorView &in = *args.input, &w = *args.weight,
                   &slots = *args.slotMapping,
                   &table = *args.blockTableOptional, &out = *args.outputCache;
  const int64_t cbs = args.compressBlockSize, stride = args.compressStride;
  const int64_t page = args.pageBlockSize;
  const int64_t blocks = in.dim(0), n = in.dim(2), d = in.dim(3);
  const int64_t rows = out.dim(0), cols = table.dim(1);
  std::vector<float> p(static_cast<size_t>(cbs));
  std::vector<float> q(static_cast<size_t>(cbs / 8));
  for (int64_t b = 0; b < args.actSeqLenOptional->size(); ++b) {
    const int64_t s = (*args.actSeqLenOptional)[b];
    if (s < cbs || (s - cbs) % stride != 0)
      continue;
    const int64_t k0 = s - cbs;
    const int64_t r = readInt32(slots, {b});
    // Section 5: an invalid slot or page id writes nothing for the entry.
    bool valid = r >= 0 && r < rows;
    for (int64_t k = k0; k < s && valid; ++k) {
      const int64_t col = k / page;
      const int64_t blk = col < cols ? readInt32(table, {b, col}) : -1;
      valid = blk >= 0 && blk < blocks;
    }
    if (!valid)
      continue;
    for (int64_t h = 0; h < n; ++h)
      for (int64_t e = 0; e < d; ++e) {
        for (int64_t t = 0; t < cbs; ++t) {
          const int64_t k = k0 + t;
          const int64_t blk = readInt32(table, {b, k / page});
          const float x = readValue(in, {blk, k % page, h, e});
          p[static_cast<size_t>(t)] = x * readValue(w, {t, h});
        }
        for (int64_t t = 0; t < cbs / 8; ++t)
          q[static_cast<size_t>(t)] = fold(&p[static_cast<size_t>(8 * t)], 8);
        writeValue(out, {r, h, e}, fold(q.data(), cbs / 8));
      }
  }
}

} // namespace tilejit::ops
