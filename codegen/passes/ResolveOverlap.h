//===- ResolveOverlap.h - A store against the loads that feed it -*- C++ -*-===//
#ifndef TILEJIT_CODEGEN_PASSES_RESOLVEOVERLAP_H
#define TILEJIT_CODEGEN_PASSES_RESOLVEOVERLAP_H

#include "dsl/ir/IR.h"
#include "codegen/passes/PassContext.h"

namespace tilejit::passes {

/// Decides, for every `store` whose value is fed directly by loads of the
/// tensor it writes (the value is such a load, or a `fused` op with such
/// loads among its inputs), whether the code may read those loads and write
/// the store in one pass, in place: it sets the store's `overlap` attribute
/// (dsl/ir/IR.h) to `disjoint` when some axis keeps the regions provably
/// apart, `in_place` when they are provably the same region of the same
/// shape, `buffered` when some load's region provably overlaps the store's
/// without being that same region (a shift, a row broadcast over the rows
/// it is part of), and `checked` when offsets are not known at compile time
/// (none of the above holds for some load). Offsets are
/// compared as a common SSA value plus a constant (`i`, `i + 32`,
/// `c * 64 - 1`); anything else is unknown. The value semantics of a store
/// (the whole source tile read first) hold under every decision.
/// Pre: fused (the inputs of `fused` ops are what is read in place).
/// Post: every other op unchanged.
bool resolveOverlap(ir::Kernel &kernel, const PassContext &ctx);

} // namespace tilejit::passes

#endif
