//===- Walk.cpp - Traversal and use-replacement helpers for Tile IR -------===//
#include "dsl/ir/Walk.h"

namespace tilejit::ir {

void walk(Block &block, const std::function<void(Op &)> &fn) {
  for (size_t i = 0; i < block.ops().size(); ++i) {
    fn(*block.ops()[i]);
    // `fn` may have replaced the op in place; visit what is there now.
    Op &op = *block.ops()[i];
    for (unsigned b = 0; b < op.numBlocks(); ++b)
      walk(*op.block(b), fn);
  }
}

void walk(Kernel &kernel, const std::function<void(Op &)> &fn) {
  walk(kernel.grid(), fn);
  walk(kernel.body(), fn);
}

std::map<const Value *, unsigned> countUses(Kernel &kernel) {
  std::map<const Value *, unsigned> uses;
  walk(kernel, [&](Op &op) {
    for (Value *v : op.operands())
      ++uses[v];
  });
  return uses;
}

void replaceAllUses(Kernel &kernel, const Value *from, Value *to) {
  walk(kernel, [&](Op &op) {
    for (unsigned i = 0; i < op.numOperands(); ++i)
      if (op.operand(i) == from)
        op.setOperand(i, to);
  });
}

bool hasSideEffects(const Op &op) {
  switch (op.kind()) {
  case OpKind::Store:
  case OpKind::Scatter:
  case OpKind::StoreScalar:
  case OpKind::Prefetch: // a hint, but one the kernel asked for: kept
    return true;
  default:
    break;
  }
  for (unsigned b = 0; b < op.numBlocks(); ++b)
    for (const auto &inner : op.block(b)->ops())
      if (hasSideEffects(*inner))
        return true;
  return false;
}

} // namespace tilejit::ir
