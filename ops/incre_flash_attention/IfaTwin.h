//===- IfaTwin.h - The hand-written twin's ISA-level entry -------*- C++
//-*-===//
///
/// \file
/// Arguments of the hand-written IncreFlashAttentionV4 twin (internal): f16
/// or bf16 query, KV and output with unit innermost strides, contiguous or
/// paged KV, no mask/pse/padding/quantisation.
///
//===----------------------------------------------------------------------===//
#ifndef TILEJIT_OPS_INCRE_FLASH_ATTENTION_IFATWIN_H
#define TILEJIT_OPS_INCRE_FLASH_ATTENTION_IFATWIN_H

#include <cstdint>

namespace tilejit::ops::ifa {

struct TwinArgs {
  const uint16_t *q = nullptr; ///< [B, Nkv, G, D]
  uint16_t *out = nullptr;     ///< [B, Nkv, G, D]
  int64_t qStride[3] = {};     ///< b, k, g strides of q (d stride 1)
  int64_t oStride[3] = {};     ///< the same for out
  const uint16_t *k = nullptr, *v = nullptr; ///< [blocks, Nkv, rows, D]
  int64_t kStride[3] = {}, vStride[3] = {};  ///< block, head, row strides
  const int32_t *table = nullptr; ///< [B, *] block table (paged) or null
  int64_t tableStride = 0, blockSize = 0;
  const int64_t *len = nullptr; ///< [B] window lengths (start 0)
  int64_t b = 0, nkv = 0, g = 1, d = 0;
  bool bf16 = false;
  float scale = 1.0f;
  int64_t parts = 1; ///< splits of the KV window per (batch, KV head)
};

/// Row `j` of the window of (batch b, KV head hk) in a [blocks, Nkv, rows,
/// D] cache with block, head and row strides `st` (through the block table
/// when paged).
inline const uint16_t *twinRow(const TwinArgs &a, const uint16_t *base, const int64_t *st,
                               int64_t b, int64_t hk, int64_t j) {
  int64_t blk = b, r = j;
  if (a.table) {
    blk = a.table[b * a.tableStride + j / a.blockSize];
    r = j % a.blockSize;
  }
  return base + blk * st[0] + hk * st[1] + r * st[2];
}

/// The partial softmax state (m, l: [G]; unnormalised acc: [G, D]) of
/// window positions [c0, c1) of (batch b, KV head hk). The AVX2/F16C/FMA
/// implementation (compiled with those flags).
void partialAvx2(const TwinArgs &a, int64_t b, int64_t hk, int64_t c0, int64_t c1, float *m,
                 float *l, float *acc);
/// The same for every KV head of batch b at once (m[hk], l[hk], acc[hk]: the
/// states of head hk), step by step over the heads, on AVX-512 (D a multiple
/// of 16, G <= 64).
void partialAvx512(const TwinArgs &a, int64_t b, int64_t c0, int64_t c1, float *const *m,
                   float *const *l, float *const *acc);

} // namespace tilejit::ops::ifa

#endif
