//===- Specialize.cpp - Compile-time parameters become constants ----------===//
#include "codegen/passes/Specialize.h"

#include "dsl/ir/Walk.h"

namespace tilejit::passes {

bool specializeKernel(ir::Kernel &kernel, const PassContext &) {
  bool changed = false;
  ir::UseReplacer replacer;
  ir::walk(kernel, [&](ir::Op &op) {
    if (op.kind() != ir::OpKind::ConstParam)
      return;
    // Ops are immutable in kind: rebuild it in place as a constant.
    auto replacement = std::make_unique<ir::Op>(ir::OpKind::Constant, op.loc());
    ir::Value *res = replacement->addResult(op.result()->type());
    replacement->attrs().intValue = op.attrs().intValue;
    ir::Block *block = op.parentBlock();
    ir::Value *old = op.result();
    for (size_t i = 0; i < block->ops().size(); ++i)
      if (block->ops()[i].get() == &op) {
        replacement->setParentBlock(block);
        replacer.replace(old, res);
        replacer.retire(std::move(block->ops()[i]));
        block->ops()[i] = std::move(replacement);
        break;
      }
    changed = true;
  });
  replacer.apply(kernel);
  return changed;
}

} // namespace tilejit::passes
