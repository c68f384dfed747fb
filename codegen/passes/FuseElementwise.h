//===- FuseElementwise.h - Chains of vector ops become one loop --*- C++ -*-===//
#ifndef TILEJIT_CODEGEN_PASSES_FUSEELEMENTWISE_H
#define TILEJIT_CODEGEN_PASSES_FUSEELEMENTWISE_H

#include "dsl/ir/IR.h"
#include "codegen/passes/PassContext.h"

namespace tilejit::passes {

/// Groups each chain of elementwise ops on tiles into one `fused` op whose
/// body holds the scalar versions of the ops, so codegen emits one loop over
/// the tile instead of one per op. A producer joins its consumer's group when
/// all its uses are in that group and it lives in the same block; `splat`
/// producers become scalar inputs and `broadcast` producers become inputs with
/// size-1 dimensions. Single elementwise tile ops become one-op `fused` ops.
/// Scalar ops are untouched.
///   %2 = sub %0, %1 : tile<f32, 8>; %3 = exp %2 : tile<f32, 8>
///     =>  %3 = fused %0, %1 { ^(%a: f32, %b: f32): %t = sub %a, %b; %e = exp %t; yield %e }
bool fuseElementwise(ir::Kernel &kernel, const PassContext &ctx);

} // namespace tilejit::passes

#endif
