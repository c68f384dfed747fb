//===- ForwardTiles.cpp - Tiles read and written in place -----------------===//
#include "codegen/passes/ForwardTiles.h"

#include "codegen/passes/SelectMma.h"
#include "dsl/ir/Uses.h"
#include "dsl/ir/Walk.h"

#include <functional>
#include <memory>
#include <set>
#include <utility>
#include <vector>

namespace tilejit::passes {

using namespace ir;

namespace {

size_t positionOf(const Op &op) {
  const auto &ops = op.parentBlock()->ops();
  size_t i = 0;
  while (ops[i].get() != &op)
    ++i;
  return i;
}

/// Whether an op strictly between `from` and `to` (one block) writes memory.
bool writesBetween(const Op &from, const Op &to) {
  std::function<bool(const Op &)> writes = [&](const Op &o) {
    if (o.kind() == OpKind::Store || o.kind() == OpKind::Scatter ||
        o.kind() == OpKind::StoreScalar || o.kind() == OpKind::Copy)
      return true;
    for (unsigned i = 0; i < o.numBlocks(); ++i)
      for (const auto &inner : o.block(i)->ops())
        if (writes(*inner))
          return true;
    return false;
  };
  const auto &ops = from.parentBlock()->ops();
  for (size_t i = positionOf(from) + 1; i < ops.size() && ops[i].get() != &to; ++i)
    if (writes(*ops[i]))
      return true;
  return false;
}

/// If the one user of `producer`'s result (a fused op or a load) is an
/// unmasked store of it in the same block, not `buffered`, with only pure
/// scalar ops between the two, that store.
Op *forwardableStore(const Op &producer, const Uses &uses) {
  const Value *r = producer.result();
  Op *user = const_cast<Op *>(uses.singleUser(r));
  if (!user || user->kind() != OpKind::Store || user->attrs().hasMask ||
      user->parentBlock() != producer.parentBlock())
    return nullptr;
  // resolve-overlap found the value reads the region being written, shifted:
  // it is computed into its buffer first, whole, then stored.
  if (user->attrs().overlap == Overlap::Buffered)
    return nullptr;
  unsigned rank = user->operand(0)->type().rank();
  if (user->operand(1 + rank) != r)
    return nullptr;
  // Writing early must not be observable: nothing between the two touches
  // memory or holds code that might, and everything between is scalar.
  const auto &ops = producer.parentBlock()->ops();
  for (size_t i = positionOf(producer) + 1; ops[i].get() != user; ++i) {
    const Op &o = *ops[i];
    OpFamily f = family(o.kind());
    if (f == OpFamily::Memory || f == OpFamily::Control || f == OpFamily::Tile ||
        (o.result() && o.result()->type().isTile()))
      return nullptr;
  }
  return user;
}

/// Whether scalar `v` can be computed where `at` stands: it is defined
/// before it (in its block or one around it), or by pure scalar ops on such
/// values (codegen then emits them early).
bool computableAt(const Value *v, const Op &at) {
  // The blocks around `at`, innermost first, with the op of each that holds
  // `at` (or `at` itself).
  const Block *home = v->isBlockArgument() ? v->ownerBlock() : v->definingOp()->parentBlock();
  const Op *holder = &at;
  for (const Block *b = at.parentBlock(); b; holder = b->parentOp(), b = holder ? holder->parentBlock() : nullptr) {
    if (b != home)
      continue;
    if (v->isBlockArgument() || positionOf(*v->definingOp()) < positionOf(*holder))
      return true;
    break;
  }
  if (!isRecomputableScalar(*v))
    return false;
  const Op *d = v->definingOp();
  for (const Value *o : d->operands())
    if (!o->type().isTensor() && !computableAt(o, at))
      return false;
  return true;
}

/// Whether `user`, an mma, may read `tile` in place: as a or b, not acc, and
/// (with few rows, where b is read once among the FMAs) only data the
/// program has just brought in.
bool mmaReadsInPlace(const Op &user, const Value *tile, bool cached,
                     const codegen::TargetInfo &target) {
  return user.kind() == OpKind::Mma && user.operand(2) != tile &&
         (user.result()->type().shape()[0] > mmaFewRows(target) || cached);
}

/// A load whose every use is an mma reading it in place, all in the load's
/// block after it with nothing between writing memory (the query block of
/// the attention backward: S = Q Kᵀ and dK += dSᵀ Q read the same Q rows),
/// none of them reading it as an f32 b in place: the last of those mmas,
/// else null.
const Op *lastOfMmaUsers(const Op &load, const Uses &uses, const codegen::TargetInfo &target) {
  const Value *tile = load.result();
  const auto &ops = load.parentBlock()->ops();
  unsigned seen = 0;
  const Op *last = nullptr;
  for (size_t i = positionOf(load) + 1; i < ops.size(); ++i) {
    const Op &o = *ops[i];
    bool reads = false;
    for (const Value *v : o.operands())
      if (v == tile) {
        reads = true;
        ++seen;
      }
    if (!reads)
      continue;
    if (!mmaReadsInPlace(o, tile, load.attrs().cached, target))
      return nullptr;
    // An f32 b that is not transposed is read where it is, once per block
    // of rows (select-mma packs only what it must convert or transpose):
    // from the tensor that is once per row block from rows far apart.
    if (o.operand(1) == tile && !o.attrs().transB && tile->type().elem() == ScalarKind::F32)
      return nullptr;
    last = &o;
  }
  // A use elsewhere (inside a region, a yield) reads the buffer.
  if (!last || seen != uses.count(tile) || writesBetween(load, *last))
    return nullptr;
  return last;
}

/// Decides for one load; returns the store it copies to (`copy`), or null.
Op *decideLoad(Op &load, const Uses &uses, const codegen::TargetInfo &target) {
  OpAttrs &at = load.attrs();
  const Value *tile = load.result();
  const Op *user = uses.singleUser(tile);
  bool forward = !at.hasMask && user && user->parentBlock() == load.parentBlock() &&
                 (user->kind() == OpKind::Fused || mmaReadsInPlace(*user, tile, at.cached, target)) &&
                 !writesBetween(load, *user);
  if (!forward && !at.hasMask && uses.count(tile) > 1)
    forward = lastOfMmaUsers(load, uses, target) != nullptr;
  Op *copyTo = !at.hasMask && !forward ? forwardableStore(load, uses) : nullptr;
  // A store of this tensor with offsets known only at run time (checked):
  // the fast path tests the regions at the load, so its offsets must be
  // computable there.
  const Op *checked = copyTo;
  if (forward && user && user->kind() == OpKind::Fused)
    checked = uses.singleUser(user->result());
  if (checked && checked->kind() == OpKind::Store && checked->operand(0) == load.operand(0) &&
      checked->attrs().overlap == Overlap::Checked) {
    unsigned rank = load.operand(0)->type().rank();
    for (unsigned d = 0; d < rank; ++d)
      if (!computableAt(checked->operand(1 + d), load)) {
        forward = false;
        copyTo = nullptr;
      }
  }
  at.forward = forward;
  at.copy = copyTo != nullptr;
  if (copyTo)
    copyTo->attrs().forwarded = true;
  return copyTo;
}

/// The `copy` op that does what `load` (a `load {copy}`) and `store` (its
/// `store {forwarded}`) do.
std::unique_ptr<Op> copyOp(const Op &load, const Op &store) {
  auto copy = std::make_unique<Op>(OpKind::Copy, load.loc());
  for (Value *v : load.operands())
    copy->addOperand(v);
  unsigned drank = store.operand(0)->type().rank();
  for (unsigned i = 0; i <= drank; ++i)
    copy->addOperand(store.operand(i));
  Value *tile = copy->addResult(load.result()->type());
  tile->setNameHint(load.result()->nameHint());
  tile->setBufferOffset(load.result()->bufferOffset());
  OpAttrs &at = copy->attrs();
  at.intValue = load.attrs().intValue;
  at.floatValue = load.attrs().floatValue;
  at.cached = load.attrs().cached;
  at.stream = store.attrs().stream;
  at.overlap = store.attrs().overlap;
  at.writeLoc = store.loc();
  return copy;
}

/// Replaces each `load {copy}` whose store comes right after it (nothing
/// between: the two are emitted back to back either way) by one `copy`.
/// A pair with pure scalar ops between stays as it is: those ops, emitted
/// between the load's code and the store's, would move.
bool formCopies(const std::vector<std::pair<Op *, Op *>> &pairs) {
  for (auto [load, store] : pairs) {
    Block *block = load->parentBlock();
    size_t pos = positionOf(*load);
    auto copy = copyOp(*load, *store);
    auto &ops = block->ops();
    ops.erase(ops.begin() + static_cast<std::ptrdiff_t>(pos),
              ops.begin() + static_cast<std::ptrdiff_t>(pos) + 2);
    block->insert(pos, std::move(copy));
  }
  return !pairs.empty();
}

} // namespace

bool forwardTiles(Kernel &kernel, const PassContext &ctx) {
  const Uses uses(kernel);
  bool changed = false;
  std::set<const Op *> wasForwarded;
  walk(kernel.body(), [&](Op &op) {
    if (op.kind() == OpKind::Store && op.attrs().forwarded) {
      wasForwarded.insert(&op);
      op.attrs().forwarded = false; // decided again by its producer below
    }
  });
  std::vector<std::pair<Op *, Op *>> copies;
  walk(kernel.body(), [&](Op &op) {
    OpAttrs &at = op.attrs();
    if (op.kind() == OpKind::Load) {
      bool forward = at.forward, copy = at.copy;
      if (Op *store = decideLoad(op, uses, ctx.target)) {
        const auto &ops = op.parentBlock()->ops();
        size_t next = positionOf(op) + 1;
        if (next < ops.size() && ops[next].get() == store)
          copies.push_back({&op, store});
      }
      changed |= forward != at.forward || copy != at.copy;
    } else if (op.kind() == OpKind::Fused) {
      if (Op *store = forwardableStore(op, uses))
        store->attrs().forwarded = true;
    }
  });
  walk(kernel.body(), [&](Op &op) {
    if (op.kind() == OpKind::Store)
      changed |= op.attrs().forwarded != wasForwarded.count(&op);
  });
  changed |= formCopies(copies);
  return changed;
}

} // namespace tilejit::passes
