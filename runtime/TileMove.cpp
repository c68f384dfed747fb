//===- TileMove.cpp - Out-of-line moves of partial, masked, strided tiles -===//
///
/// \file
/// The runtime half of tile `load`/`store` (see `tilejit_rt_load_tile` in
/// Runtime.h): generated code moves whole, contiguous, unmasked tiles itself
/// and calls here for everything else. Rows are handled as runs: the columns
/// inside the tensor, split where the mask changes, each run copied with one
/// memcpy when the innermost axis is contiguous, element by element when it is
/// strided; the rest is filled with the `other` value (loads) or left alone
/// (stores).
///
//===----------------------------------------------------------------------===//
#include "runtime/Runtime.h"

#include <algorithm>
#include <cstring>

namespace {

using tilejit::rt::TensorDesc;

/// Where one tile row lies in the tensor: `ok` when the row is inside it,
/// then its first element's index (`base`, in elements, column 0 of the tile)
/// and the tile columns [lo, hi) inside the tensor.
struct Row {
  bool ok;
  int64_t base, lo, hi;
};

/// Walks the rows of a tile (every axis but the last) in row-major order.
template <typename Fn>
void forEachRow(const TensorDesc *t, int64_t rank, const int64_t *off, const int64_t *shape,
                int64_t tileRank, Fn &&fn) {
  const int64_t lead = rank - tileRank, last = rank - 1, n = shape[tileRank - 1];
  bool leadOk = true;
  int64_t leadBase = 0;
  for (int64_t d = 0; d < lead; ++d) {
    leadOk = leadOk && off[d] >= 0 && off[d] < t->sizes[d];
    leadBase += off[d] * t->strides[d];
  }
  const int64_t c0 = off[last];
  Row row;
  row.lo = std::clamp<int64_t>(-c0, 0, n);
  row.hi = std::clamp<int64_t>(t->sizes[last] - c0, 0, n);
  int64_t rows = 1;
  for (int64_t q = 0; q + 1 < tileRank; ++q)
    rows *= shape[q];
  int64_t idx[tilejit::rt::kMaxRank] = {};
  for (int64_t r = 0; r < rows; ++r) {
    row.ok = leadOk && row.lo < row.hi;
    row.base = leadBase;
    for (int64_t q = 0; q + 1 < tileRank; ++q) {
      int64_t pos = off[lead + q] + idx[q];
      row.ok = row.ok && pos >= 0 && pos < t->sizes[lead + q];
      row.base += pos * t->strides[lead + q];
    }
    if (row.ok)
      row.base += c0 * t->strides[last];
    fn(r, row);
    for (int64_t q = tileRank - 1; q-- > 0;) { // next row index
      if (++idx[q] < shape[q])
        break;
      idx[q] = 0;
    }
  }
}

/// Copies `count` elements of `eb` bytes; `stride` (in elements) applies to
/// the tensor side.
template <typename E>
void copyStrided(char *dst, int64_t dstStride, const char *src, int64_t srcStride,
                 int64_t count) {
  for (int64_t j = 0; j < count; ++j)
    std::memcpy(dst + j * dstStride * int64_t(sizeof(E)), src + j * srcStride * int64_t(sizeof(E)),
                sizeof(E));
}

void copyElems(char *dst, int64_t dstStride, const char *src, int64_t srcStride,
               int64_t count, int64_t eb) {
  if (dstStride == 1 && srcStride == 1) {
    std::memcpy(dst, src, static_cast<size_t>(count * eb));
    return;
  }
  switch (eb) {
  case 1: copyStrided<uint8_t>(dst, dstStride, src, srcStride, count); break;
  case 2: copyStrided<uint16_t>(dst, dstStride, src, srcStride, count); break;
  case 4: copyStrided<uint32_t>(dst, dstStride, src, srcStride, count); break;
  default: copyStrided<uint64_t>(dst, dstStride, src, srcStride, count); break;
  }
}

void fill(char *dst, int64_t count, const void *other, int64_t eb) {
  for (int64_t j = 0; j < count; ++j)
    std::memcpy(dst + j * eb, other, static_cast<size_t>(eb));
}

/// Calls `run(j0, j1, on)` for the maximal runs of columns in [lo, hi) whose
/// mask byte is the same (all of them "on" without a mask).
template <typename Fn>
void forEachRun(const uint8_t *mask, int64_t lo, int64_t hi, Fn &&run) {
  if (!mask) {
    run(lo, hi, true);
    return;
  }
  for (int64_t j = lo; j < hi;) {
    bool on = mask[j] != 0;
    int64_t e = j + 1;
    while (e < hi && (mask[e] != 0) == on)
      ++e;
    run(j, e, on);
    j = e;
  }
}

} // namespace

extern "C" TILEJIT_API void tilejit_rt_load_tile(void *buffer, const TensorDesc *t, int64_t rank,
                                     const int64_t *off, const int64_t *shape,
                                     int64_t tileRank, int64_t eb, const uint8_t *mask,
                                     const void *other, int64_t boolean) {
  const int64_t n = shape[tileRank - 1], stride = t->strides[rank - 1];
  const char *data = static_cast<const char *>(t->data);
  char *buf = static_cast<char *>(buffer);
  forEachRow(t, rank, off, shape, tileRank, [&](int64_t r, const Row &row) {
    char *dst = buf + r * n * eb;
    const uint8_t *m = mask ? mask + r * n : nullptr;
    if (!row.ok) {
      fill(dst, n, other, eb);
      return;
    }
    fill(dst, row.lo, other, eb);
    fill(dst + row.hi * eb, n - row.hi, other, eb);
    forEachRun(m, row.lo, row.hi, [&](int64_t j0, int64_t j1, bool on) {
      if (on)
        copyElems(dst + j0 * eb, 1, data + (row.base + j0 * stride) * eb, stride, j1 - j0, eb);
      else
        fill(dst + j0 * eb, j1 - j0, other, eb);
    });
    if (boolean)
      for (int64_t j = row.lo; j < row.hi; ++j)
        dst[j] = dst[j] != 0;
  });
}

extern "C" TILEJIT_API void tilejit_rt_store_tile(const void *buffer, const TensorDesc *t, int64_t rank,
                                      const int64_t *off, const int64_t *shape,
                                      int64_t tileRank, int64_t eb, const uint8_t *mask) {
  const int64_t n = shape[tileRank - 1], stride = t->strides[rank - 1];
  char *data = static_cast<char *>(t->data);
  const char *buf = static_cast<const char *>(buffer);
  forEachRow(t, rank, off, shape, tileRank, [&](int64_t r, const Row &row) {
    if (!row.ok)
      return;
    const char *src = buf + r * n * eb;
    const uint8_t *m = mask ? mask + r * n : nullptr;
    forEachRun(m, row.lo, row.hi, [&](int64_t j0, int64_t j1, bool on) {
      if (on)
        copyElems(data + (row.base + j0 * stride) * eb, stride, src + j0 * eb, 1, j1 - j0, eb);
    });
  });
}
