//===- Specialize.h - Compile-time parameters become constants ---*- C++ -*-===//
#ifndef TILEJIT_CODEGEN_PASSES_SPECIALIZE_H
#define TILEJIT_CODEGEN_PASSES_SPECIALIZE_H

#include "dsl/ir/IR.h"
#include "codegen/passes/PassContext.h"

namespace tilejit::passes {

/// Replaces every `const_param` by a `const` of the same type and value.
/// Pre: a verified kernel. Post: no `const_param` remains.
///   %0 = const_param {name = "D", value = 128} : i64  =>  %0 = const {value = 128} : i64
bool specializeKernel(ir::Kernel &kernel, const PassContext &ctx);

} // namespace tilejit::passes

#endif
