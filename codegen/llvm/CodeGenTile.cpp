//===- CodeGenTile.cpp - Tile ops: shape ops and reductions --------------===//
///
/// \file
/// `iota`, `broadcast`, `reshape`, `transpose` on tiles in the local buffer,
/// and `reduce` along an axis (a fixed association order).
///
//===----------------------------------------------------------------------===//
#include "codegen/llvm/CodeGenImpl.h"

#include <algorithm>
#include <cmath>

#include "llvm/IR/Intrinsics.h"
#include "llvm/IR/IntrinsicsX86.h"

namespace tilejit::codegen {

using ir::OpKind;
using ir::ScalarKind;

//===----------------------------------------------------------------------===//
// Tile shape ops and reductions
//===----------------------------------------------------------------------===//

void CodeGen::emitShapeOp(const ir::Op &op) {
  const ir::Value *res = op.result();
  ScalarKind k = res->type().elem();
  const std::vector<int64_t> &shape = res->type().shape();
  llvm::Value *dst = bufferOf(res);
  if (op.kind() == OpKind::Reshape) {
    copyBuffer(op.operand(0), res);
    return;
  }
  llvm::Value *src = op.kind() == OpKind::Iota ? nullptr : bufferOf(op.operand(0));
  const std::vector<int64_t> *srcShape =
      src ? &op.operand(0)->type().shape() : nullptr;
  if (op.kind() == OpKind::Broadcast) {
    if (shape.empty()) { // rank 0: the one element
      copyBuffer(op.operand(0), res);
      return;
    }
    // Row by row: a row of the source copied, or (broadcast along the last
    // axis) its one element splat over the row, a vector of lanes at a time.
    std::vector<int64_t> outer(shape.begin(), shape.end() - 1);
    int64_t n = shape.back();
    bool splatRow = srcShape->back() == 1 && n != 1;
    unsigned L = lanes_;
    emitNest(outer, [&](const std::vector<llvm::Value *> &idx) {
      llvm::Value *l = i64(0), *s = i64(0);
      int64_t stride = n, sstride = srcShape->back();
      for (size_t d = outer.size(); d-- > 0;) {
        l = b_.CreateAdd(l, b_.CreateMul(idx[d], i64(stride)));
        if ((*srcShape)[d] != 1)
          s = b_.CreateAdd(s, b_.CreateMul(idx[d], i64(sstride)));
        stride *= shape[d];
        sstride *= (*srcShape)[d];
      }
      if (!splatRow) {
        unsigned eb = ir::byteWidth(k);
        b_.CreateMemCpy(elemPtr(k, dst, l), llvm::MaybeAlign(eb), elemPtr(k, src, s),
                        llvm::MaybeAlign(eb), n * eb);
        return;
      }
      llvm::Value *v = b_.CreateVectorSplat(L, loadElems(k, elemPtr(k, src, s), 1, nullptr));
      int64_t nFull = n / L * L;
      if (nFull > 0)
        emitLoop(i64(0), i64(nFull), L, [&](llvm::Value *j) {
          storeElems(k, v, elemPtr(k, dst, b_.CreateAdd(l, j)), L, nullptr);
        });
      if (nFull < n)
        storeElems(k, v, elemPtr(k, dst, b_.CreateAdd(l, i64(nFull))), L,
                   prefixMask(static_cast<unsigned>(n - nFull), L));
    });
    return;
  }
  // Iota and transpose, element by element.
  emitNest(shape, [&](const std::vector<llvm::Value *> &idx) {
    llvm::Value *l = i64(0);
    int64_t stride = 1;
    for (size_t d = shape.size(); d-- > 0;) {
      l = b_.CreateAdd(l, b_.CreateMul(idx[d], i64(stride)));
      stride *= shape[d];
    }
    llvm::Value *v;
    if (op.kind() == OpKind::Iota) {
      v = b_.CreateIntCast(idx[op.attrs().axis], valueType(k), false);
    } else { // Transpose: res[i, j] = src[j, i]
      llvm::Value *s = b_.CreateAdd(b_.CreateMul(idx[1], i64((*srcShape)[1])), idx[0]);
      v = loadElems(k, elemPtr(k, src, s), 1, nullptr);
    }
    storeElems(k, v, elemPtr(k, dst, l), 1, nullptr);
  });
}

/// A scalar op that combines two partial results of a reduction.
static std::unique_ptr<ir::Op> makeReduceCombiner(ir::ReduceKind kind,
                                                  ir::ScalarKind k) {
  auto op = std::make_unique<ir::Op>(kind == ir::ReduceKind::Sum   ? OpKind::Add
                                     : kind == ir::ReduceKind::Max ? OpKind::Max
                                                                   : OpKind::Min,
                                     SourceLoc());
  op->addResult(ir::Type::scalar(k));
  return op;
}

void CodeGen::emitReduce(const ir::Op &op) {
  const ir::Value *in = op.operand(0);
  ScalarKind k = in->type().elem();
  const std::vector<int64_t> &shape = in->type().shape();
  int64_t axis = op.attrs().axis;
  int64_t outer = 1, inner = 1, n = shape[axis];
  for (int64_t d = 0; d < axis; ++d)
    outer *= shape[d];
  for (size_t d = axis + 1; d < shape.size(); ++d)
    inner *= shape[d];
  ir::ReduceKind rk = op.attrs().reduceKind;
  auto combinerOp = makeReduceCombiner(rk, k);
  const ir::Op &combiner = *combinerOp;
  double fid = rk == ir::ReduceKind::Sum   ? 0.0
               : rk == ir::ReduceKind::Max ? -INFINITY
                                           : INFINITY;
  int64_t iid = 0;
  if (rk != ir::ReduceKind::Sum) {
    unsigned bits = ir::bitWidth(k);
    bool sgn = ir::isSigned(k);
    if (rk == ir::ReduceKind::Max)
      iid = sgn ? (bits == 64 ? INT64_MIN : -(int64_t(1) << (bits - 1))) : 0;
    else
      iid = sgn ? (bits == 64 ? INT64_MAX : (int64_t(1) << (bits - 1)) - 1)
                : (bits == 64 ? -1 : (int64_t(1) << bits) - 1);
  }
  llvm::Value *src = bufferOf(in);
  bool scalarResult = op.result()->type().isScalar();
  llvm::Value *dst = scalarResult ? allocaEntry(memType(k), 1) : bufferOf(op.result());
  unsigned L = lanes_;
  // The combiner (unmarked) keeps NaN-ness, not bits: the final value is
  // made canonical once, where the op is marked `nan = canonical`.
  auto finish = [&](llvm::Value *v) {
    return op.attrs().canonicalNaN && k == ScalarKind::F32 ? canonicalizeNaN(b_, v) : v;
  };
  if (inner == 1) {
    // Along the innermost axis: up to kParts independent vector partial
    // results (chunk c goes to part c % parts, so the combine does not wait
    // on one long dependency chain), then the parts pairwise, then a
    // horizontal step: a fixed association order.
    constexpr int64_t kParts = 4;
    emitLoop(i64(0), i64(outer), 1, [&](llvm::Value *o) {
      llvm::Value *rowBase = b_.CreateMul(o, i64(n));
      llvm::Value *identity = constantOf(k, fid, iid, L);
      int64_t chunks = n / L, full = chunks * L;
      int64_t parts = std::min(kParts, std::max<int64_t>(chunks, 1));
      std::vector<llvm::Value *> acc(parts, identity);
      auto chunkAt = [&](llvm::Value *j) {
        return loadElems(k, elemPtr(k, src, b_.CreateAdd(rowBase, j)), L, nullptr);
      };
      int64_t rounds = chunks / parts, looped = rounds > 1 ? rounds * parts : 0; // chunks
      if (looped > 0) // whole rounds of `parts` chunks, the parts in registers
        acc = emitCarriedLoop("reduce", i64(0), i64(looped * L), parts * L, acc,
                              [&](llvm::Value *j, const std::vector<llvm::Value *> &cur) {
                                std::vector<llvm::Value *> next(cur.size());
                                for (int64_t p = 0; p < parts; ++p)
                                  next[p] = emitElementwise(
                                      combiner, {cur[p], chunkAt(b_.CreateAdd(j, i64(p * L)))}, L);
                                return next;
                              });
      for (int64_t c = looped; c < chunks; ++c)
        acc[c % parts] = emitElementwise(combiner, {acc[c % parts], chunkAt(i64(c * L))}, L);
      if (full < n) {
        llvm::Value *m = prefixMask(n - full, L);
        llvm::Value *v = loadElems(k, elemPtr(k, src, b_.CreateAdd(rowBase, i64(full))), L, m);
        v = b_.CreateSelect(m, v, identity);
        int64_t p = chunks % parts;
        acc[p] = emitElementwise(combiner, {acc[p], v}, L);
      }
      for (int64_t w = 1; w < parts; w *= 2)
        for (int64_t p = 0; p + w < parts; p += 2 * w)
          acc[p] = emitElementwise(combiner, {acc[p], acc[p + w]}, L);
      llvm::Value *total = acc[0];
      // Horizontal: halve repeatedly.
      for (unsigned w = L / 2; w >= 1; w /= 2) {
        std::vector<int> lo, hi;
        for (unsigned i = 0; i < w; ++i) {
          lo.push_back(i);
          hi.push_back(i + w);
        }
        llvm::Value *a = b_.CreateShuffleVector(total, lo);
        llvm::Value *b = b_.CreateShuffleVector(total, hi);
        total = emitElementwise(combiner, {a, b}, w);
        if (w == 1)
          break;
      }
      if (total->getType()->isVectorTy())
        total = b_.CreateExtractElement(total, uint64_t(0));
      storeElems(k, finish(total), elemPtr(k, dst, o), 1, nullptr);
    });
  } else {
    emitLoop(i64(0), i64(outer), 1, [&](llvm::Value *o) {
      for (int64_t j = 0; j < inner; j += L) {
        unsigned cnt = static_cast<unsigned>(std::min<int64_t>(L, inner - j));
        llvm::Value *m = cnt < L ? prefixMask(cnt, L) : nullptr;
        // The reduced axis as a loop, the partial result in a register.
        llvm::BasicBlock *pre = b_.GetInsertBlock();
        auto *loop = llvm::BasicBlock::Create(ctx_, "reduce.axis", fn_);
        auto *exit = llvm::BasicBlock::Create(ctx_, "reduce.axis.exit", fn_);
        b_.CreateBr(loop);
        b_.SetInsertPoint(loop);
        llvm::PHINode *q = b_.CreatePHI(b_.getInt64Ty(), 2);
        llvm::PHINode *part = b_.CreatePHI(vecType(k, L), 2);
        q->addIncoming(i64(0), pre);
        part->addIncoming(constantOf(k, fid, iid, L), pre);
        llvm::Value *idx = b_.CreateAdd(b_.CreateMul(o, i64(n * inner)),
                                        b_.CreateAdd(b_.CreateMul(q, i64(inner)), i64(j)));
        llvm::Value *v = loadElems(k, elemPtr(k, src, idx), L, m);
        llvm::Value *acc = emitElementwise(combiner, {part, v}, L);
        llvm::Value *q1 = b_.CreateAdd(q, i64(1));
        q->addIncoming(q1, b_.GetInsertBlock());
        part->addIncoming(acc, b_.GetInsertBlock());
        b_.CreateCondBr(b_.CreateICmpSLT(q1, i64(n)), loop, exit);
        b_.SetInsertPoint(exit);
        storeElems(k, finish(acc),
                   elemPtr(k, dst, b_.CreateAdd(b_.CreateMul(o, i64(inner)), i64(j))), L, m);
      }
    });
  }
  if (scalarResult)
    scalars_[op.result()] = loadElems(k, dst, 1, nullptr);
}

} // namespace tilejit::codegen
