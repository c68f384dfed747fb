//===- PassContext.h - What every Tile IR pass is given -----------*- C++ -*-===//
///
/// \file
/// A pass is `bool fn(ir::Kernel &, const PassContext &)` (Passes.def): it
/// rewrites the kernel, reports errors to `diags` and returns whether it
/// changed anything. Passes that decide for the target (select-mma, ...)
/// read `target`; the others ignore it.
///
//===----------------------------------------------------------------------===//
#ifndef TILEJIT_CODEGEN_PASSES_PASSCONTEXT_H
#define TILEJIT_CODEGEN_PASSES_PASSCONTEXT_H

#include "codegen/passes/Target.h"
#include "dsl/ir/IR.h"
#include "dsl/support/Diagnostics.h"

namespace tilejit::passes {

struct PassContext {
  const codegen::TargetInfo &target;
  DiagnosticEngine &diags;
};

} // namespace tilejit::passes

#endif
