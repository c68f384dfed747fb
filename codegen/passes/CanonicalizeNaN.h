//===- CanonicalizeNaN.h - Which arithmetic NaNs may be seen -----*- C++ -*-===//
#ifndef TILEJIT_CODEGEN_PASSES_CANONICALIZENAN_H
#define TILEJIT_CODEGEN_PASSES_CANONICALIZENAN_H

#include "dsl/ir/IR.h"
#include "codegen/passes/PassContext.h"

namespace tilejit::passes {

/// Sets `nan = canonical` (dsl/ir/IR.h, "NaN bits") on exactly the float
/// arithmetic ops, float reductions and mmas whose NaN result's bits may be
/// seen,
/// and clears it elsewhere, so that codegen spends a compare and a select
/// only where docs/dsl.md 5's canonical NaN is observable. A value's bits
/// are seen where it is stored (`store`, `scatter`, `store_scalar`),
/// bitcast, or used by an op this pass does not know; they are carried on,
/// and seen where the carrier's are, by `splat`, `broadcast`, `reshape`,
/// `transpose`, `select`'s values, `neg`, `abs`, `floor`, `ceil`, `round`,
/// a cast to a float kind, `yield` (into a `for`'s iteration argument and
/// result, an `if`'s result, a `fused` op's result; a `for`'s init likewise)
/// and a `fused` op's input (its body argument). Arithmetic ops, `cmp`,
/// casts to integers, `reduce` and `mma` see only whether a value is NaN
/// (each gives a NaN of its own, canonical where seen), so their operands
/// are not seen.
/// Pre: fused (looks through `fused` bodies).
/// Post: the attribute on every such op as above; nothing else changed.
bool canonicalizeNaN(ir::Kernel &kernel, const PassContext &ctx);

} // namespace tilejit::passes

#endif
