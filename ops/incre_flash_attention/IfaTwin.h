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

/// The AVX2/F16C/FMA implementation (compiled with those flags).
void twinAvx2(const TwinArgs &a);

} // namespace tilejit::ops::ifa

#endif
