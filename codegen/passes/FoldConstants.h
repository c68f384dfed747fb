//===- FoldConstants.h - Folds constants, dead branches and dead code -*- C++ -*-===//
#ifndef TILEJIT_CODEGEN_PASSES_FOLDCONSTANTS_H
#define TILEJIT_CODEGEN_PASSES_FOLDCONSTANTS_H

#include "dsl/ir/IR.h"
#include "codegen/passes/PassContext.h"

namespace tilejit::passes {

/// Folds scalar ops whose operands are all constants, computing each with
/// dsl/ir/ScalarSemantics.h, the rules codegen's instructions obey too:
/// integers in their kind's width (wrap-around, division by zero = 0, shift
/// amounts modulo the width, signedness from the kind), f32 correctly rounded
/// with canonical NaN results and `min`/`max` ordering -0 below +0, casts
/// between every pair of kinds (float->int saturating, int->float rounded
/// once), `bitcast` between i32/u32 and f32; never `exp`/`log`/`rsqrt` and the other math builtins (`exp2` ...
/// `pow`), whose results codegen approximates. It also forwards the
/// chosen operand of a `select` on a constant condition, replaces an `if` on a
/// constant condition by its taken block, drops `for` loops whose constant
/// bounds run zero iterations, and removes unused ops without side effects.
/// Pre: no `const_param` left (run `specialize` first) for full effect.
///   %c = const {value = 1} : i1; %r = if %c { yield %a } else { yield %b }  =>  uses of %r use %a
bool foldConstants(ir::Kernel &kernel, const PassContext &ctx);

} // namespace tilejit::passes

#endif
