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

/// The window positions each split covers (a multiple of the twins' 32-row
/// tile).
int64_t twinChunk(const TwinArgs &a);
/// The partial softmax states (m, l, unnormalised acc) of every (batch, KV
/// head, split), in that order: [units * parts, G] and [units * parts, G,
/// D]. The AVX2/F16C/FMA implementation (compiled with those flags), and
/// the AVX-512 one, which returns false for shapes it does not take (D not
/// a multiple of 16, G > 64).
void partialsAvx2(const TwinArgs &a, int64_t chunk, float *ms, float *ls, float *accs);
bool partialsAvx512(const TwinArgs &a, int64_t chunk, float *ms, float *ls, float *accs);

} // namespace tilejit::ops::ifa

#endif
