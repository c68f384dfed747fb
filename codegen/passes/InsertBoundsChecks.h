//===- InsertBoundsChecks.h - Debug mode: every access checked ---*- C++ -*-===//
#ifndef TILEJIT_CODEGEN_PASSES_INSERTBOUNDSCHECKS_H
#define TILEJIT_CODEGEN_PASSES_INSERTBOUNDSCHECKS_H

#include "dsl/ir/IR.h"
#include "codegen/passes/PassContext.h"

namespace tilejit::passes {

/// In a kernel compiled in debug mode (`Kernel::debug`, TILEJIT_DEBUG),
/// puts a `check_bounds` before every load, store, gather, scatter,
/// load_scalar and store_scalar, at the access's location: a tile access
/// whose region reaches no element of its tensor, and an element access
/// (scalar, or a gathered/scattered element where its mask is set) outside
/// the tensor, then stop the launch with that location instead of reading
/// `other` or skipping the write. A partial tile at a tensor's edge is
/// defined behaviour and passes. Without debug mode it changes nothing.
///   %v = load_scalar %x, %i : f32
///     =>  check_bounds %x, %i {extent = [1], name = "load_scalar of x"}
///         %v = load_scalar %x, %i : f32
bool insertBoundsChecks(ir::Kernel &kernel, const PassContext &ctx);

} // namespace tilejit::passes

#endif
