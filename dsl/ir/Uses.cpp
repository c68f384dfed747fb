//===- Uses.cpp - Use counts and single users of Tile IR values -----------===//
#include "dsl/ir/Uses.h"

namespace tilejit::ir {

Uses::Uses(const Kernel &kernel) { add(kernel.body()); }

void Uses::add(const Block &block) {
  for (const auto &op : block.ops()) {
    for (const Value *v : op->operands()) {
      Entry &e = uses_[v];
      ++e.count;
      e.last = op.get();
    }
    // A fused body refers only to its own arguments.
    if (op->kind() != OpKind::Fused)
      for (unsigned i = 0; i < op->numBlocks(); ++i)
        add(*op->block(i));
  }
}

} // namespace tilejit::ir
