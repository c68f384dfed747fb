//===- SelectMoves.cpp - How tiles move between tensors and buffers -------===//
#include "codegen/passes/SelectMoves.h"

#include "dsl/ir/Walk.h"

#include <algorithm>

namespace tilejit::passes {

using namespace ir;

namespace {

RowMask rowMaskOf(const Op &op, const Type &tile) {
  if (!op.attrs().hasMask || op.operand(0)->type().elem() == ScalarKind::I1)
    return RowMask::None;
  const Value *mask = op.operand(op.numOperands() - 1);
  const std::vector<int64_t> &shape = tile.shape();
  if (const Op *def = mask->definingOp(); def && def->kind() == OpKind::Broadcast) {
    const std::vector<int64_t> &src = def->operand(0)->type().shape();
    if (src.size() == shape.size() && src.back() == 1 &&
        std::equal(src.begin(), src.end() - 1, shape.begin()))
      return RowMask::Rows;
  }
  return RowMask::Lanes;
}

/// Whether the rows of `tile` can be written in 16-byte non-temporal
/// stores: 32 bytes or more, a multiple of 16.
bool rowsStream(const Type &tile, ScalarKind elem) {
  int64_t rowBytes = tile.shape().back() * byteWidth(elem);
  return rowBytes >= 32 && rowBytes % 16 == 0;
}

} // namespace

bool selectMoves(Kernel &kernel, const PassContext &) {
  bool changed = false;
  walk(kernel.body(), [&](Op &op) {
    // A copy (unmasked) streams as its store would.
    if (op.kind() == OpKind::Copy && op.attrs().stream &&
        !rowsStream(op.result()->type(), op.operand(0)->type().elem())) {
      op.attrs().stream = false;
      changed = true;
    }
    if (op.kind() != OpKind::Load && op.kind() != OpKind::Store)
      return;
    OpAttrs &at = op.attrs();
    unsigned rank = op.operand(0)->type().rank();
    const Type &tile =
        op.kind() == OpKind::Load ? op.result()->type() : op.operand(1 + rank)->type();
    RowMask how = rowMaskOf(op, tile);
    changed |= how != at.rowMask;
    at.rowMask = how;
    if (op.kind() == OpKind::Store && at.stream &&
        !rowsStream(tile, op.operand(0)->type().elem())) {
      at.stream = false;
      changed = true;
    }
  });
  return changed;
}

} // namespace tilejit::passes
