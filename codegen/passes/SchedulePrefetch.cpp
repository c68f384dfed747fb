//===- SchedulePrefetch.cpp - Which op spreads which prefetch -------------===//
#include "codegen/passes/SchedulePrefetch.h"

#include <algorithm>
#include <deque>

namespace tilejit::passes {

using namespace ir;

namespace {

/// Inner-loop iterations of an mma or fused op as codegen emits it; -1 for
/// an op that spreads no prefetch.
int64_t iterationsOf(const Op &op, int64_t L) {
  const std::vector<int64_t> &shape = op.result()->type().shape();
  if (op.kind() == OpKind::Fused) {
    int64_t rows = 1;
    for (size_t d = 0; d + 1 < shape.size(); ++d)
      rows *= shape[d];
    return rows * (shape.back() / L);
  }
  const OpAttrs &at = op.attrs();
  const Type &a = op.operand(0)->type();
  const int64_t M = shape[0], N = shape[1];
  const int64_t K = at.transA ? a.shape()[0] : a.shape()[1];
  if (K == 0 || at.mmaForm == MmaForm::Amx || at.mmaForm == MmaForm::None)
    return -1;
  if (at.mmaForm == MmaForm::Dot) {
    const int64_t R = at.blockCols, kStep = at.dpbf16 ? 2 * L : L;
    const int64_t kFull = K / kStep * kStep, nFull = N / L * L, nTail = N - nFull;
    return ((nFull / L) * (L / R) + nTail / R + nTail % R) * (kFull / kStep);
  }
  // Broadcast and bf16pairs: blocks of blockRows x blockCols vectors.
  const int64_t NR = at.blockCols * L, mr = at.blockRows;
  const int64_t nFull = N / NR * NR, mFull = M / mr * mr;
  const int64_t ks = at.mmaForm == MmaForm::Bf16Pairs || at.dpbf16 ? K / 2 : K;
  return (nFull / NR + (nFull < N)) * (mFull / mr + (M > mFull)) * ks;
}

struct Waiting {
  Op *prefetch;
  int64_t rows, linesPerRow;
  size_t at; ///< position in the block
};

/// Lines per iteration if an op of `iterations` takes `p`, else 0.
int64_t perFor(const Waiting &p, int64_t iterations) {
  constexpr int64_t kMaxPerIteration = 8;
  if (const int64_t whole = p.linesPerRow - 1; p.rows == 1 && whole > 0) {
    for (int64_t per = 1; per <= std::min(kMaxPerIteration, whole); ++per)
      if (whole / per <= iterations)
        return per;
    return 0;
  }
  for (int64_t per = 1; per <= std::min(kMaxPerIteration, p.linesPerRow); ++per)
    if (p.rows * ((p.linesPerRow + per - 1) / per) <= iterations)
      return per;
  return 0;
}

void schedule(Block &block, int64_t L, bool &changed) {
  std::deque<Waiting> waiting;
  // Per position: how many mma/fused ops precede it in the block.
  std::vector<int64_t> takersBefore(block.ops().size() + 1, 0);
  std::vector<std::pair<Op *, int64_t>> decided; // prefetch, (by, per) below
  std::vector<std::pair<int64_t, int64_t>> byPer;
  int64_t takers = 0;
  for (size_t i = 0; i < block.ops().size(); ++i) {
    Op &op = *block.ops()[i];
    takersBefore[i] = takers;
    for (unsigned b = 0; b < op.numBlocks(); ++b)
      if (op.kind() != OpKind::Fused)
        schedule(*op.block(b), L, changed);
    if (op.kind() == OpKind::Prefetch && op.attrs().spread) {
      const std::vector<int64_t> &ext = op.attrs().extent;
      int64_t rowElems = 1;
      for (size_t d = ext.size() > 1 ? 1 : 0; d < ext.size(); ++d)
        rowElems *= ext[d];
      int64_t rowBytes = rowElems * byteWidth(op.operand(0)->type().elem());
      waiting.push_back({&op, ext.size() > 1 ? ext[0] : 1, rowBytes / 64 + 1, i});
      decided.push_back({&op, 0});
      byPer.push_back({0, 0});
      continue;
    }
    if (op.kind() != OpKind::Mma && op.kind() != OpKind::Fused)
      continue;
    ++takers;
    int64_t iterations = iterationsOf(op, L);
    if (iterations < 0 || waiting.empty())
      continue;
    if (int64_t per = perFor(waiting.front(), iterations)) {
      const Waiting &w = waiting.front();
      for (size_t j = 0; j < decided.size(); ++j)
        if (decided[j].first == w.prefetch)
          byPer[j] = {takers - takersBefore[w.at], per};
      waiting.pop_front();
    }
  }
  for (size_t j = 0; j < decided.size(); ++j) {
    OpAttrs &at = decided[j].first->attrs();
    changed |= at.spreadBy != byPer[j].first || at.spreadPer != byPer[j].second;
    at.spreadBy = byPer[j].first;
    at.spreadPer = byPer[j].second;
  }
}

} // namespace

bool schedulePrefetch(Kernel &kernel, const PassContext &ctx) {
  bool changed = false;
  schedule(kernel.body(), ctx.target.f32Lanes(), changed);
  return changed;
}

} // namespace tilejit::passes
