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

Value *UseReplacer::resolve(Value *v) const {
  for (auto it = map_.find(v); it != map_.end(); it = map_.find(v))
    v = it->second;
  return v;
}

void UseReplacer::rewrite(Op &op) const {
  if (map_.empty())
    return;
  for (unsigned i = 0; i < op.numOperands(); ++i)
    if (Value *to = resolve(op.operand(i)); to != op.operand(i))
      op.setOperand(i, to);
}

void UseReplacer::apply(Kernel &kernel) {
  if (!map_.empty())
    walk(kernel, [&](Op &op) { rewrite(op); });
  map_.clear();
  retired_.clear();
}

bool hasSideEffects(const Op &op) {
  switch (op.kind()) {
  case OpKind::Store:
  case OpKind::Scatter:
  case OpKind::StoreScalar:
  case OpKind::Copy:
  case OpKind::Prefetch: // a hint, but one the kernel asked for: kept
  case OpKind::CheckBounds: // debug mode: a violation stops the launch
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
