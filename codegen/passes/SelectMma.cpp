//===- SelectMma.cpp - How each mma is computed ---------------------------===//
#include "codegen/passes/SelectMma.h"

#include "dsl/ir/Uses.h"
#include "dsl/ir/Walk.h"

#include <algorithm>

namespace tilejit::passes {

using namespace ir;

namespace {

/// The `for` ops around `op`, outermost first.
std::vector<const Op *> loopsAround(const Op &op) {
  std::vector<const Op *> loops;
  for (const Block *b = op.parentBlock(); b && b->parentOp(); b = b->parentOp()->parentBlock())
    if (b->parentOp()->kind() == OpKind::For)
      loops.insert(loops.begin(), b->parentOp());
  return loops;
}

/// Out of how many of `loops` (the mma's, outermost first) packing `v` may
/// be hoisted: those from the outermost one whose body does not define v
/// (a loop's own iteration values vary with it) inwards.
int64_t hoistDepth(const Value *v, const std::vector<const Op *> &loops) {
  std::vector<const Op *> around;
  const Block *blk = v->isBlockArgument() ? v->ownerBlock() : v->definingOp()->parentBlock();
  if (v->isBlockArgument() && blk && blk->parentOp())
    around.push_back(blk->parentOp());
  for (; blk && blk->parentOp(); blk = blk->parentOp()->parentBlock())
    around.push_back(blk->parentOp());
  for (size_t i = 0; i < loops.size(); ++i)
    if (std::find(around.begin(), around.end(), loops[i]) == around.end())
      return static_cast<int64_t>(loops.size() - i);
  return 0;
}

void select(Op &op, const codegen::TargetInfo &target) {
  OpAttrs &at = op.attrs();
  const Value *a = op.operand(0), *bv = op.operand(1);
  const bool ta = at.transA, tb = at.transB;
  const int64_t M = op.result()->type().shape()[0], N = op.result()->type().shape()[1];
  const int64_t K = ta ? a->type().shape()[0] : a->type().shape()[1];
  const ScalarKind ka = a->type().elem(), kb = bv->type().elem();
  const int64_t L = target.f32Lanes();
  const bool few = M <= mmaFewRows(target);
  const bool bf16 = ka == ScalarKind::BF16 && kb == ScalarKind::BF16 && L == 16;
  const std::vector<const Op *> loops = loopsAround(op);
  auto hoist = [&](const Value *v) { return hoistDepth(v, loops); };

  at.dpbf16 = false;
  at.blockRows = at.blockCols = 0;
  at.packA = at.packB = -1;
  // Many rows of bf16 where bf16 products are fast: pairs of k, on AMX
  // tiles when whole tiles cover the mma (every tile one shape).
  const bool amx = target.hasAmxBf16 && M % 16 == 0 && N % 16 == 0 && K % 32 == 0;
  if (!few && bf16 && (target.bf16DotFast || amx) && K % 2 == 0) {
    at.mmaForm = amx ? MmaForm::Amx : MmaForm::Bf16Pairs;
    at.packB = hoist(bv);
    if (ta)
      at.packA = hoist(a);
    if (!amx) {
      at.blockRows = 8;
      at.blockCols = 2;
    }
    return;
  }
  if (tb && few) {
    at.mmaForm = MmaForm::Dot;
    at.dpbf16 = bf16 && !ta && target.hasBf16Dot;
    if (!at.dpbf16 && (ka != ScalarKind::F32 || ta))
      at.packA = hoist(a);
    // R rows of b per pass: M x R accumulators, plus R + M operand
    // vectors, within the register file.
    int64_t budget = L >= 16 ? 16 : 8, cap = L >= 16 ? 8 : 4, R = 1;
    while (R * 2 <= cap && R * 2 * M <= budget)
      R *= 2;
    at.blockRows = M;
    at.blockCols = R;
    return;
  }
  at.mmaForm = MmaForm::Broadcast;
  at.dpbf16 = few && !ta && !tb && bf16 && target.hasBf16Dot && K % 2 == 0 && N % (2 * L) == 0;
  if (!at.dpbf16 && (ka != ScalarKind::F32 || ta))
    at.packA = hoist(a);
  if (tb || (!few && kb != ScalarKind::F32))
    at.packB = hoist(bv);
  // AVX-512 (32 registers): 8 x 2 accumulators; AVX2 (16 registers): 6 x 2.
  // With few rows a is not re-read per block: all M rows, and up to 24 (12)
  // accumulators split evenly over the column blocks.
  int64_t rows = L >= 16 ? 8 : 6, vecs = 2;
  if (few) {
    int64_t most = std::max<int64_t>(1, (L >= 16 ? 24 : 12) / M);
    int64_t total = (N + L - 1) / L, blocks = (total + most - 1) / most;
    rows = M;
    vecs = (total + blocks - 1) / blocks;
  }
  if (at.dpbf16 && vecs % 2)
    ++vecs; // whole 32-column blocks (N is a multiple of 32)
  at.blockRows = rows;
  at.blockCols = vecs;
}

} // namespace

int64_t mmaFewRows(const codegen::TargetInfo &target) {
  return target.f32Lanes() >= 16 ? 8 : 4;
}

/// Whether the accumulators of `op` (its form chosen) start from a splat in
/// registers: acc is a `splat` no other op reads, and the form keeps its
/// accumulators in registers over K (broadcast without dpbf16, bf16pairs)
/// with K > 0. The splat's tile is then never written: a product from zero
/// (S = Q Kᵀ of the attention backward) saves a pass that fills the tile
/// and one that reads it back.
bool accumulatesFromSplat(const Op &op, const Uses &uses) {
  const OpAttrs &at = op.attrs();
  const Value *acc = op.operand(2), *a = op.operand(0);
  const int64_t K = at.transA ? a->type().shape()[0] : a->type().shape()[1];
  return ((at.mmaForm == MmaForm::Broadcast && !at.dpbf16) || at.mmaForm == MmaForm::Bf16Pairs) &&
         K > 0 && !acc->isBlockArgument() && acc->definingOp()->kind() == OpKind::Splat &&
         uses.count(acc) == 1;
}

bool selectMma(Kernel &kernel, const PassContext &ctx) {
  bool changed = false;
  const Uses uses(kernel);
  walk(kernel, [&](Op &op) {
    if (op.kind() != OpKind::Mma)
      return;
    OpAttrs before = op.attrs();
    select(op, ctx.target);
    op.attrs().accSplat = accumulatesFromSplat(op, uses);
    const OpAttrs &after = op.attrs();
    changed |= before.mmaForm != after.mmaForm || before.dpbf16 != after.dpbf16 ||
               before.blockRows != after.blockRows || before.blockCols != after.blockCols ||
               before.packA != after.packA || before.packB != after.packB ||
               before.accSplat != after.accSplat;
  });
  return changed;
}

} // namespace tilejit::passes
