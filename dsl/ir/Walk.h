//===- Walk.h - Traversal and use-replacement helpers for Tile IR -*- C++ -*-===//
///
/// \file
/// Pre-order walks over a kernel's ops, use counting and use replacement. Tile
/// IR keeps no use lists (ops are few and passes rare), so these walk; a pass
/// that replaces many values batches them in a UseReplacer (one walk in all,
/// not one per replacement, which was quadratic in the kernel's size).
///
//===----------------------------------------------------------------------===//
#ifndef TILEJIT_DSL_IR_WALK_H
#define TILEJIT_DSL_IR_WALK_H

#include "dsl/ir/IR.h"

#include <functional>
#include <map>
#include <memory>
#include <unordered_map>
#include <vector>

namespace tilejit::ir {

/// Calls `fn` on every op of `block` and of its nested blocks, in pre-order.
void walk(Block &block, const std::function<void(Op &)> &fn);
void walk(Kernel &kernel, const std::function<void(Op &)> &fn);

/// Number of operand slots that refer to each value, over the whole kernel.
std::map<const Value *, unsigned> countUses(Kernel &kernel);

/// Replaces every operand `from` by `to` in the kernel.
void replaceAllUses(Kernel &kernel, const Value *from, Value *to);

/// Use replacements collected during a pass and applied in one walk. The ops
/// whose results were replaced are kept alive (retire()) until apply(), so an
/// operand not yet rewritten never dangles.
class UseReplacer {
public:
  /// Records that every use of `from` becomes a use of `to`.
  void replace(const Value *from, Value *to) { map_[from] = to; }
  /// `v` after the replacements recorded so far (followed transitively).
  Value *resolve(Value *v) const;
  /// Rewrites `op`'s own operands (not those of its nested ops).
  void rewrite(Op &op) const;
  /// Keeps a removed op alive until apply().
  void retire(std::unique_ptr<Op> op) { retired_.push_back(std::move(op)); }
  /// Rewrites every operand of the kernel; frees the retired ops.
  void apply(Kernel &kernel);

private:
  std::unordered_map<const Value *, Value *> map_;
  std::vector<std::unique_ptr<Op>> retired_;
};

/// True if the op writes memory or holds ops that do.
bool hasSideEffects(const Op &op);

} // namespace tilejit::ir

#endif
