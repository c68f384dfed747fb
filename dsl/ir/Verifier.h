//===- Verifier.h - What is legal Tile IR ------------------------*- C++ -*-===//
///
/// \file
/// Checks the structural and type rules of dsl/ir/IR.h: operand counts and
/// types per op kind, dominance (a value is used only after its definition, in
/// its block or a nested one), terminators of for/if/fused/grid blocks,
/// `fused` bodies holding only elementwise ops on scalars, and, when
/// `requirePlanned`, a buffer for every materialised tile. Errors name the op
/// and go to `diags` at the op's location.
///
//===----------------------------------------------------------------------===//
#ifndef TILEJIT_DSL_IR_VERIFIER_H
#define TILEJIT_DSL_IR_VERIFIER_H

#include "dsl/ir/IR.h"
#include "dsl/support/Diagnostics.h"

namespace tilejit::ir {

struct VerifyOptions {
  /// Every tile value that codegen must materialise has a bufferOffset.
  bool requirePlanned = false;
};

/// Returns true if `kernel` is legal; reports every violation otherwise.
bool verify(const Kernel &kernel, DiagnosticEngine &diags,
            const VerifyOptions &options = {});

} // namespace tilejit::ir

#endif
