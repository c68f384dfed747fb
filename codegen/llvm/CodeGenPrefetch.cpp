//===- CodeGenPrefetch.cpp - `prefetch`: cache-line requests ahead of use -===//
///
/// \file
/// `prefetch(t, [offsets], [extent])` requests the cache lines of a tile
/// region. The region is taken as rows along its first axis, each row the
/// rest of the region (one row for a rank-1 region), which must be
/// contiguous in the tensor: `[8, BN, D]` at head h of a `[.., N, D]` cache
/// is 8 tokens' runs of BN * D elements. Line c of a row is requested at
/// `min(c * 64, rowBytes - 1)` bytes into it, which touches every line of
/// the row whatever its alignment (linesPerRow = rowBytes / 64 + 1); lines
/// 0 .. linesPerRow - 2 lie wholly inside the row and need no clamp. A region
/// not wholly inside the tensor, or whose rows are not contiguous, requests
/// nothing (its row count is 0 at run time). A region of half the target's
/// L1 data cache or more is requested into L2 and below only.
///
/// Without `spread` the lines are requested at once. With it they wait for
/// the `mma` or `fused` op of the same block that schedule-prefetch chose
/// (`by`; codegen/passes/SchedulePrefetch.h), whose inner loops request
/// `per` of its lines in each iteration (for a one-row region, its lines
/// wholly inside the row, unclamped, the last line after the op), so that the
/// requests overlap its arithmetic rather than queue behind
/// each other: decode attention requests the next step's rows while it
/// computes on this step's (docs/ops.md), where the hardware prefetchers,
/// which follow one head's strided rows poorly, would leave the memory idle
/// during the arithmetic. Lines left over after that op are requested then;
/// prefetches no op took, at the end of the block.
///
//===----------------------------------------------------------------------===//
#include "codegen/llvm/CodeGenImpl.h"

#include "llvm/IR/Intrinsics.h"

namespace tilejit::codegen {

void CodeGen::emitPrefetch(const ir::Op &op) {
  const TensorInfo &t = tensors_[op.operand(0)];
  const std::vector<int64_t> &ext = op.attrs().extent;
  unsigned rank = t.sizes.size(), lead = rank - ext.size();
  unsigned eb = ir::byteWidth(t.elem);
  std::vector<llvm::Value *> off;
  llvm::Value *lin = i64(0);
  for (unsigned d = 0; d < rank; ++d) {
    off.push_back(scalar(op.operand(1 + d)));
    lin = b_.CreateAdd(lin, b_.CreateMul(off.back(), t.strides[d]));
  }
  PendingPrefetch p;
  p.base = b_.CreateGEP(b_.getInt8Ty(), t.data, b_.CreateMul(lin, i64(eb)));
  // Rows along the region's first axis (when it has two or more), each the
  // rest of the region: contiguous when every axis after the row axis steps
  // over the whole extent of the next (the innermost stride being 1 is part
  // of tileInBounds).
  llvm::Value *ok = tileInBounds(t, off, ext);
  int64_t rowElems = 1;
  for (size_t d = ext.size() > 1 ? 1 : 0; d < ext.size(); ++d)
    rowElems *= ext[d];
  for (unsigned d = lead + 1; d + 1 < rank; ++d)
    ok = b_.CreateAnd(ok, b_.CreateICmpEQ(t.strides[d], b_.CreateMul(t.strides[d + 1],
                                                                     i64(ext[d + 1 - lead]))));
  p.rows = ext.size() > 1 ? ext[0] : 1;
  p.rowStride = ext.size() > 1 ? b_.CreateMul(t.strides[lead], i64(eb)) : i64(0);
  p.rowBytes = rowElems * eb;
  p.linesPerRow = p.rowBytes / 64 + 1;
  p.limit = b_.CreateSelect(ok, i64(p.rows), i64(0));
  // A region of half the L1 or more cannot sit in it beside the data the
  // code is working on: it is requested into L2 (prefetcht1), from where
  // the loads that come for it later are short. Decode attention's next-step
  // shares (16 KiB each) on a 32 KiB L1 (Zen 4): faster than requesting
  // them into L1, which evicted the tile being read; on a 48 KiB L1 (Zen 5)
  // they stay in L1, where they measured faster
  // (docs/notes/2026-11-tuning-history.md).
  if (target_.prefetchesIntoL2(p.rows * p.rowBytes))
    p.locality = 2;
  p.row = allocaEntry(b_.getInt64Ty(), 1);
  p.rowAt = allocaEntry(b_.getInt64Ty(), 1);
  p.col = allocaEntry(b_.getInt64Ty(), 1);
  for (llvm::Value *slot : {p.row, p.rowAt, p.col})
    b_.CreateStore(i64(0), slot);
  if (op.attrs().spread) {
    // schedule-prefetch chose the op that spreads it (by) and its lines per
    // iteration (per); one it left to no op is requested at the block's end.
    const ir::OpAttrs &at = op.attrs();
    if (at.spreadBy == 0) {
      prefetches_.wait(std::move(p));
      return;
    }
    p.per = at.spreadPer;
    if (const int64_t whole = p.linesPerRow - 1; p.rows == 1 && whole > 0)
      p.groupEnd = whole / p.per * p.per * 64;
    const auto &ops = op.parentBlock()->ops();
    size_t i = 0;
    while (ops[i].get() != &op)
      ++i;
    for (int64_t n = 0; ++i < ops.size();)
      if ((ops[i]->kind() == ir::OpKind::Mma || ops[i]->kind() == ir::OpKind::Fused) &&
          ++n == at.spreadBy) {
        prefetches_.schedule(ops[i].get(), std::move(p));
        return;
      }
    assert(false && "schedule-prefetch named an op that is not there");
    return;
  }
  prefetches_.start(std::move(p));
  flushPrefetch();
}

void CodeGen::requestLine(llvm::Value *at) {
  // Read, data; kept in every cache level or from L2 on (locality 3 or 2).
  b_.CreateIntrinsic(llvm::Intrinsic::prefetch, {b_.getPtrTy()},
                     {b_.CreateGEP(b_.getInt8Ty(), prefetches_.current()->base, at),
                      b_.getInt32(0), b_.getInt32(prefetches_.current()->locality),
                      b_.getInt32(1)});
}

void CodeGen::prefetchLine(llvm::Value *rowAt, llvm::Value *col) {
  const PendingPrefetch &p = *prefetches_.current();
  requestLine(b_.CreateAdd(
      rowAt, b_.CreateBinaryIntrinsic(llvm::Intrinsic::umin, col, i64(p.rowBytes - 1))));
}

void CodeGen::beginSpread(const ir::Op &op) { prefetches_.take(op); }

void CodeGen::spreadStep() {
  if (!prefetches_.current()) // no prefetch taken by the op being emitted
    return;
  const PendingPrefetch &p = *prefetches_.current();
  llvm::Type *i64t = b_.getInt64Ty();
  if (p.groupEnd >= 0) {
    llvm::Value *col = b_.CreateLoad(i64t, p.col);
    // limit is 1 for a region inside the tensor, 0 otherwise.
    llvm::Value *end = b_.CreateMul(p.limit, i64(p.groupEnd));
    auto *issue = llvm::BasicBlock::Create(ctx_, "prefetch", fn_);
    auto *done = llvm::BasicBlock::Create(ctx_, "prefetch.done", fn_);
    b_.CreateCondBr(b_.CreateICmpULT(col, end), issue, done);
    b_.SetInsertPoint(issue);
    for (int64_t i = 0; i < p.per; ++i)
      requestLine(b_.CreateAdd(col, i64(64 * i)));
    b_.CreateStore(b_.CreateAdd(col, i64(64 * p.per)), p.col);
    b_.CreateBr(done);
    b_.SetInsertPoint(done);
    return;
  }
  llvm::Value *row = b_.CreateLoad(i64t, p.row);
  auto *issue = llvm::BasicBlock::Create(ctx_, "prefetch", fn_);
  auto *done = llvm::BasicBlock::Create(ctx_, "prefetch.done", fn_);
  b_.CreateCondBr(b_.CreateICmpULT(row, p.limit), issue, done);
  b_.SetInsertPoint(issue);
  llvm::Value *rowAt = b_.CreateLoad(i64t, p.rowAt);
  llvm::Value *col = b_.CreateLoad(i64t, p.col);
  for (int64_t i = 0; i < p.per; ++i)
    prefetchLine(rowAt, b_.CreateAdd(col, i64(64 * i)));
  // On to the next row once this one is done.
  llvm::Value *next = b_.CreateAdd(col, i64(64 * p.per));
  llvm::Value *wrap = b_.CreateICmpUGE(next, i64(64 * p.linesPerRow));
  b_.CreateStore(b_.CreateSelect(wrap, i64(0), next), p.col);
  b_.CreateStore(b_.CreateSelect(wrap, b_.CreateAdd(rowAt, p.rowStride), rowAt), p.rowAt);
  b_.CreateStore(b_.CreateSelect(wrap, b_.CreateAdd(row, i64(1)), row), p.row);
  b_.CreateBr(done);
  b_.SetInsertPoint(done);
}

void CodeGen::flushPrefetch() {
  if (!prefetches_.current())
    return;
  const PendingPrefetch &p = *prefetches_.current();
  llvm::Type *i64t = b_.getInt64Ty();
  // The rest of the current row, then the remaining rows whole: the lines
  // wholly inside a row unclamped (4 instructions a line, not 8), then the
  // line of its last byte.
  llvm::Value *row = b_.CreateLoad(i64t, p.row);
  llvm::Value *rowAt = b_.CreateLoad(i64t, p.rowAt);
  llvm::Value *col = b_.CreateLoad(i64t, p.col);
  emitLoop(row, p.limit, 1, [&](llvm::Value *r) {
    llvm::Value *first = b_.CreateICmpEQ(r, row);
    llvm::Value *at = b_.CreateAdd(rowAt, b_.CreateMul(b_.CreateSub(r, row), p.rowStride));
    emitLoop(b_.CreateSelect(first, col, i64(0)), i64(64 * (p.linesPerRow - 1)), 64,
             [&](llvm::Value *c) { requestLine(b_.CreateAdd(at, c)); });
    requestLine(b_.CreateAdd(at, i64(p.rowBytes - 1)));
  });
  prefetches_.finish();
}

} // namespace tilejit::codegen
