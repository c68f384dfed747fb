//===- IncreFlashAttention.h - IncreFlashAttentionV4: the C++ API -*- C++
//-*-===//
///
/// \file
/// Decode attention (one query token per head) over a KV cache: the operator
/// of ../shared/spec/incre_flash_attention_v4.md. Phase 1
/// (`prepareIncreFlashAttentionV4`, registered as the aclnn operator's
/// GetWorkspaceSize) validates the arguments (section 8, 161001/161002 with a
/// message naming the argument and the rule), computes each batch's KV window
/// from the host-side actualSeqLengths, picks the specialisation of
/// incre_flash_attention.tile (dtypes, D, group size, tile, paging, which
/// optional inputs are present; never batch or lengths) and packs the
/// arguments. Phase 2 only launches. Nothing is written when phase 1 fails.
///
/// Supported: layouts BSH/BNSD/BSND with contiguous (single-tensor) KV of
/// any strides, page attention with 3-D and 4-D caches, GQA, actualSeqLengths,
/// attenMask, pseShift, kvPaddingSize, INT8 KV (antiquant), INT8 output
/// (quantScale2/quantOffset2). Tensor lists with one tensor per batch: one
/// launch of the partial kernel per element, over views (no copies).
///
//===----------------------------------------------------------------------===//
#ifndef TILEJIT_OPS_INCRE_FLASH_ATTENTION_INCREFLASHATTENTION_H
#define TILEJIT_OPS_INCRE_FLASH_ATTENTION_INCREFLASHATTENTION_H

#include "ops/host/Executor.h"
#include "ops/host/Status.h"
#include "ops/incre_flash_attention/IncreFlashAttentionArgs.h"

namespace tilejit::ops {

/// Phase 1: validates `args` and fills `executor`. Writes nothing.
host::Status
prepareIncreFlashAttentionV4(const aclnn::IncreFlashAttentionV4Args &args,
                             host::Executor &executor);

/// Validates and runs synchronously on the calling thread.
host::Status
increFlashAttentionV4(const aclnn::IncreFlashAttentionV4Args &args);

} // namespace tilejit::ops

#endif
