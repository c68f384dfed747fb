//===- Operators.h - The built-in aclnn operators ---------------*- C++ -*-===//
///
/// \file
/// The five operators tilejit ships, each one folder (ops/<operator>/): its
/// .tile kernels, its host side (validation, tiling, launch), its parameter
/// table and argument struct (<Operator>Args.h), its C entry points and its
/// registration (<Operator>Aclnn.cpp). This header is what C++ code needs to
/// drive them as the C API does: their argument structs, the two phases
/// every operator shares (aclnn::prepareOp, runOp: ops/aclnn/AclnnCommon.h)
/// and the one function that registers them all.
///
//===----------------------------------------------------------------------===//
#ifndef TILEJIT_OPS_OPERATORS_H
#define TILEJIT_OPS_OPERATORS_H

#include "ops/aclnn/AclnnCommon.h"
#include "ops/flash_attention_score_grad/FlashAttentionScoreGradArgs.h"
#include "ops/gather_pa_kv_cache/GatherPaKvCacheArgs.h"
#include "ops/host/OpRegistry.h"
#include "ops/incre_flash_attention/IncreFlashAttentionArgs.h"
#include "ops/nsa_compress_with_cache/NsaCompressWithCacheArgs.h"
#include "ops/scatter_pa_kv_cache/ScatterPaKvCacheArgs.h"

namespace tilejit::ops {

/// Installs the Prepare function of every built-in operator in its registry
/// slot (host::OpRegistry), once: the first call does it (std::call_once),
/// later ones return at once. Called by the registry on its first use and
/// by aclInit; nothing needs to call it first.
void registerBuiltinOperators();

} // namespace tilejit::ops

#endif
