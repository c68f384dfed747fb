//===- IncreFlashAttentionTwin.h - IncreFlashAttentionV4: reference and twin -*- C++ -*-===//
///
/// \file
/// What the operator of IncreFlashAttention.h is proved and measured
/// against: the float64 reference and the hand-written twin (whose ISA
/// builds meet in IfaTwin.h). Test support (tilejit_testsupport,
/// ops/CMakeLists.txt): linked by the tests, the benchmarks and the
/// `tilejit` command line, not part of libtilejit.so.
///
//===----------------------------------------------------------------------===//
#ifndef TILEJIT_OPS_INCRE_FLASH_ATTENTION_INCREFLASHATTENTIONTWIN_H
#define TILEJIT_OPS_INCRE_FLASH_ATTENTION_INCREFLASHATTENTIONTWIN_H

#include "ops/incre_flash_attention/IncreFlashAttention.h"

namespace tilejit::ops {

/// The float64 scalar reference (section 4 of the spec, through the views'
/// strides); writes attentionOut. `args` must pass phase 1.
void increFlashAttentionV4Reference(
    const aclnn::IncreFlashAttentionV4Args &args);

/// The hand-written twin: AVX-512 intrinsics (or an AVX2 build), float32,
/// online softmax, GQA groups sharing one pass, threads over (batch, KV
/// head, split of the window). Returns false (and does nothing) for what it
/// does not cover: only contiguous or paged f16/bf16 KV without
/// pse/mask/padding/quantisation. `args` must pass phase 1.
bool increFlashAttentionV4Handwritten(
    const aclnn::IncreFlashAttentionV4Args &args);

} // namespace tilejit::ops

#endif
