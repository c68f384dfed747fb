//===- Walk.h - Traversal and use-replacement helpers for Tile IR -*- C++ -*-===//
///
/// \file
/// Pre-order walks over a kernel's ops, use counting and use replacement. Tile
/// IR keeps no use lists (ops are few and passes rare), so these walk.
///
//===----------------------------------------------------------------------===//
#ifndef TILEJIT_DSL_IR_WALK_H
#define TILEJIT_DSL_IR_WALK_H

#include "dsl/ir/IR.h"

#include <functional>
#include <map>

namespace tilejit::ir {

/// Calls `fn` on every op of `block` and of its nested blocks, in pre-order.
void walk(Block &block, const std::function<void(Op &)> &fn);
void walk(Kernel &kernel, const std::function<void(Op &)> &fn);

/// Number of operand slots that refer to each value, over the whole kernel.
std::map<const Value *, unsigned> countUses(Kernel &kernel);

/// Replaces every operand `from` by `to` in the kernel.
void replaceAllUses(Kernel &kernel, const Value *from, Value *to);

/// True if the op writes memory or holds ops that do.
bool hasSideEffects(const Op &op);

} // namespace tilejit::ir

#endif
