//===- Uses.h - Use counts and single users of Tile IR values -----*- C++ -*-===//
///
/// \file
/// An analysis: how many operand slots of a kernel's body refer to each value
/// and, for a value used once, the op that uses it. Tile IR keeps no use
/// lists; the passes that decide from uses (forward-tiles) and codegen (which
/// finds the store a forwarded producer writes into) compute it once here.
/// It is a snapshot: recompute it after a rewrite.
///
//===----------------------------------------------------------------------===//
#ifndef TILEJIT_DSL_IR_USES_H
#define TILEJIT_DSL_IR_USES_H

#include "dsl/ir/IR.h"

#include <unordered_map>

namespace tilejit::ir {

class Uses {
public:
  /// The uses in `kernel`'s body (the grid's values are its own).
  explicit Uses(const Kernel &kernel);

  /// Operand slots that refer to `v`.
  unsigned count(const Value *v) const {
    auto it = uses_.find(v);
    return it == uses_.end() ? 0 : it->second.count;
  }
  /// The op whose operand `v` is when it has exactly one use, else null.
  const Op *singleUser(const Value *v) const {
    auto it = uses_.find(v);
    return it != uses_.end() && it->second.count == 1 ? it->second.last : nullptr;
  }

private:
  struct Entry {
    unsigned count = 0;
    const Op *last = nullptr;
  };
  void add(const Block &block);
  std::unordered_map<const Value *, Entry> uses_;
};

} // namespace tilejit::ir

#endif
