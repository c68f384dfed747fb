//===- Builder.h - Creates Tile IR ops at an insertion point -----*- C++ -*-===//
///
/// \file
/// `Builder` appends ops to a block (or inserts them before a position). It
/// does no type inference: the caller (sema, a pass, the IR-text parser) states
/// result types; the verifier checks them.
///
//===----------------------------------------------------------------------===//
#ifndef TILEJIT_DSL_IR_BUILDER_H
#define TILEJIT_DSL_IR_BUILDER_H

#include "dsl/ir/IR.h"

namespace tilejit::ir {

class Builder {
public:
  explicit Builder(Block *block) : block_(block), pos_(kAppend) {}

  /// Subsequent ops are appended to `block`.
  void setInsertionPointToEnd(Block *block) {
    block_ = block;
    pos_ = kAppend;
  }
  /// Subsequent ops are inserted before position `pos` of `block`.
  void setInsertionPoint(Block *block, size_t pos) {
    block_ = block;
    pos_ = pos;
  }
  Block *block() const { return block_; }

  /// Creates an op with the given operands and result types.
  Op *create(OpKind kind, SourceLoc loc, std::vector<Value *> operands,
             std::vector<Type> resultTypes, OpAttrs attrs = {}) {
    auto op = std::make_unique<Op>(kind, loc);
    op->setOperands(std::move(operands));
    for (Type &t : resultTypes)
      op->addResult(std::move(t));
    op->attrs() = std::move(attrs);
    if (pos_ == kAppend)
      return block_->append(std::move(op));
    return block_->insert(pos_++, std::move(op));
  }

  /// Creates a one-result op and returns the result.
  Value *createValue(OpKind kind, SourceLoc loc, std::vector<Value *> operands,
                     Type resultType, OpAttrs attrs = {}) {
    return create(kind, loc, std::move(operands), {std::move(resultType)},
                  std::move(attrs))
        ->result();
  }

  Value *intConstant(SourceLoc loc, ScalarKind kind, int64_t v) {
    OpAttrs a;
    a.intValue = v;
    return createValue(OpKind::Constant, loc, {}, Type::scalar(kind), a);
  }
  Value *floatConstant(SourceLoc loc, double v) {
    OpAttrs a;
    a.floatValue = v;
    return createValue(OpKind::Constant, loc, {}, Type::scalar(ScalarKind::F32),
                       a);
  }
  Value *yield(SourceLoc loc, std::vector<Value *> values) {
    create(OpKind::Yield, loc, std::move(values), {});
    return nullptr;
  }

private:
  static constexpr size_t kAppend = static_cast<size_t>(-1);
  Block *block_;
  size_t pos_;
};

} // namespace tilejit::ir

#endif
