//===- InsertBoundsChecks.cpp - Debug mode: every access checked ----------===//
#include "codegen/passes/InsertBoundsChecks.h"

#include "dsl/ir/Walk.h"

#include <map>

namespace tilejit::passes {

bool insertBoundsChecks(ir::Kernel &kernel, const PassContext &) {
  if (!kernel.debug)
    return false;
  std::map<const ir::Value *, std::string> names;
  for (unsigned i = 0; i < kernel.params.size(); ++i)
    names[kernel.paramValue(i)] = kernel.params[i].name;
  std::vector<ir::Op *> accesses;
  ir::walk(kernel, [&](ir::Op &op) {
    switch (op.kind()) {
    case ir::OpKind::Load:
    case ir::OpKind::Store:
    case ir::OpKind::Gather:
    case ir::OpKind::Scatter:
    case ir::OpKind::LoadScalar:
    case ir::OpKind::StoreScalar:
      accesses.push_back(&op);
      break;
    default:
      break;
    }
  });
  for (ir::Op *op : accesses) {
    ir::Value *tensor = op->operand(0);
    const unsigned rank = tensor->type().rank();
    auto check = std::make_unique<ir::Op>(ir::OpKind::CheckBounds, op->loc());
    for (unsigned i = 0; i <= rank; ++i)
      check->addOperand(op->operand(i));
    ir::OpAttrs &a = check->attrs();
    auto name = names.find(tensor);
    a.name = std::string(ir::mnemonic(op->kind())) + " of " +
             (name != names.end() ? name->second : std::string("a tensor"));
    switch (op->kind()) {
    case ir::OpKind::Load:
    case ir::OpKind::Store: {
      // Leading axes take one index each; the tile covers the trailing ones.
      const ir::Type &data = op->kind() == ir::OpKind::Load ? op->result()->type()
                                                           : op->operand(1 + rank)->type();
      a.extent.assign(rank, 1);
      for (unsigned d = 0; d < data.rank(); ++d)
        a.extent[rank - data.rank() + d] = data.shape()[d];
      break;
    }
    case ir::OpKind::LoadScalar:
    case ir::OpKind::StoreScalar:
      a.extent.assign(rank, 1);
      break;
    default: // gather, scatter: element indices, under the access's mask
      if (op->attrs().hasMask) {
        a.hasMask = true;
        check->addOperand(op->operand(op->numOperands() - 1));
      }
      break;
    }
    ir::Block *block = op->parentBlock();
    for (size_t i = 0; i < block->ops().size(); ++i)
      if (block->ops()[i].get() == op) {
        block->insert(i, std::move(check));
        break;
      }
  }
  return !accesses.empty();
}

} // namespace tilejit::passes
