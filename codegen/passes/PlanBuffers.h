//===- PlanBuffers.h - Local-buffer (Unified Buffer) planning ----*- C++ -*-===//
#ifndef TILEJIT_CODEGEN_PASSES_PLANBUFFERS_H
#define TILEJIT_CODEGEN_PASSES_PLANBUFFERS_H

#include "dsl/ir/IR.h"
#include "codegen/passes/PassContext.h"

namespace tilejit::passes {

/// Default per-program local-buffer budget (192 KiB, Ascend's Unified Buffer).
constexpr int64_t kDefaultLocalBudget = 196608;

/// Gives every materialised tile value (tile results of body ops, tile
/// arguments of `for` bodies) a 64-byte-aligned offset in the program's
/// scratch area, reusing memory between values whose live ranges do not
/// overlap. A `for` result shares its iteration argument's buffer. Sets
/// `scratchBytes` and `buffersPlanned`; exceeding the budget is an error that
/// names the largest tiles.
/// Pre: fused (codegen reads inputs of `fused` ops from their buffers).
bool planBuffers(ir::Kernel &kernel, const PassContext &ctx);

} // namespace tilejit::passes

#endif
