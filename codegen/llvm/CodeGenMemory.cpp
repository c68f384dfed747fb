//===- CodeGenMemory.cpp - Data movement: loads, stores, copies, gathers ===//
///
/// \file
/// Tile loads and stores (a fast path of whole rows where the tile is inside
/// the tensor, a slow path of partial or masked rows through a row-move
/// function of the runtime library, or the runtime), tile copies and streaming
/// stores as forward-tiles and select-moves decided them, gathers, scatters,
/// scalar accesses and debug mode's bounds checks.
///
//===----------------------------------------------------------------------===//
#include "codegen/llvm/CodeGenImpl.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include "llvm/IR/Intrinsics.h"
#include "llvm/IR/IntrinsicsX86.h"

namespace tilejit::codegen {

using ir::OpKind;
using ir::ScalarKind;

void CodeGen::emitRowCopy(llvm::Value *dst, llvm::Value *src, int64_t bytes, unsigned align,
                          bool stream, bool mayOverlap, int64_t chunk) {
  if (!stream) {
    if (mayOverlap)
      b_.CreateMemMove(dst, llvm::MaybeAlign(align), src, llvm::MaybeAlign(align), bytes);
    else if (bytes <= 32 * static_cast<int64_t>(lanes_) * 4)
      emitInlineCopy(dst, src, bytes);
    else
      b_.CreateMemCpy(dst, llvm::MaybeAlign(align), src, llvm::MaybeAlign(align), bytes);
    return;
  }
  frame_.streamed = true;
  // The destination is 16-byte aligned (streamable()). Non-temporal stores
  // of a whole vector register (32 or 64 bytes) need that alignment: a long
  // row stores 16-byte chunks up to the first such boundary, whole vectors
  // after it, and 16-byte chunks for the rest.
  constexpr int64_t kChunk = 16;
  const int64_t wide = static_cast<int64_t>(lanes_) * 4;
  llvm::MDNode *hint = llvm::MDNode::get(ctx_, llvm::ConstantAsMetadata::get(b_.getInt32(1)));
  auto chunkOf = [&](int64_t size) {
    llvm::Type *vt = llvm::FixedVectorType::get(b_.getInt64Ty(), static_cast<unsigned>(size / 8));
    return [&, vt, size](llvm::Value *o) {
      llvm::Value *v =
          b_.CreateAlignedLoad(vt, b_.CreateGEP(b_.getInt8Ty(), src, o), llvm::Align(align));
      llvm::StoreInst *st = b_.CreateAlignedStore(v, b_.CreateGEP(b_.getInt8Ty(), dst, o),
                                                  llvm::Align(static_cast<uint64_t>(size)));
      st->setMetadata(llvm::LLVMContext::MD_nontemporal, hint);
    };
  };
  auto narrow = chunkOf(kChunk);
  if (bytes <= 8 * kChunk) {
    auto piece = chunkOf(chunk);
    for (int64_t o = 0; o < bytes; o += chunk)
      piece(i64(o));
    return;
  }
  if (wide <= kChunk || bytes < 4 * wide) {
    emitLoop(i64(0), i64(bytes), kChunk, narrow);
    return;
  }
  llvm::Value *head = b_.CreateAnd(b_.CreateSub(i64(0), b_.CreatePtrToInt(dst, b_.getInt64Ty())),
                                   i64(wide - 1));
  llvm::Value *end = b_.CreateAdd(head, b_.CreateAnd(b_.CreateSub(i64(bytes), head),
                                                     i64(~(wide - 1))));
  emitLoop(i64(0), head, kChunk, narrow);
  emitLoop(head, end, wide, chunkOf(wide));
  emitLoop(end, i64(bytes), kChunk, narrow);
}

llvm::Value *CodeGen::streamable(const ir::Op &store, llvm::Value *dst, const TensorInfo &d,
                                 unsigned dlead, llvm::Value *src, const TensorInfo *s,
                                 unsigned slead, const std::vector<int64_t> &shape,
                                 unsigned eb) {
  const int64_t rowBytes = shape.back() * eb;
  // select-moves kept `stream` only where the rows allow it.
  if (!store.attrs().stream)
    return nullptr;
  assert(rowBytes >= 32 && rowBytes % 16 == 0);
  llvm::Value *ok = rowsAligned(dst, d, dlead, shape, eb, 16);
  if (!s)
    return ok;
  // The source tile (a tensor) must not overlap the destination tile: their
  // byte spans [lo, hi) are disjoint.
  auto span = [&](llvm::Value *base, const TensorInfo &t, unsigned lead) {
    llvm::Value *lo = b_.CreatePtrToInt(base, b_.getInt64Ty()), *hi = lo;
    for (size_t q = 0; q + 1 < shape.size(); ++q) {
      llvm::Value *ext = b_.CreateMul(t.strides[lead + q], i64((shape[q] - 1) * eb));
      llvm::Value *neg = b_.CreateICmpSLT(ext, i64(0));
      lo = b_.CreateAdd(lo, b_.CreateSelect(neg, ext, i64(0)));
      hi = b_.CreateAdd(hi, b_.CreateSelect(neg, i64(0), ext));
    }
    return std::make_pair(lo, b_.CreateAdd(hi, i64(rowBytes)));
  };
  auto [dlo, dhi] = span(dst, d, dlead);
  auto [slo, shi] = span(src, *s, slead);
  return b_.CreateAnd(ok, b_.CreateOr(b_.CreateICmpULE(dhi, slo), b_.CreateICmpULE(shi, dlo)));
}

int64_t CodeGen::streamChunk(int64_t rowBytes) const {
  const int64_t vector = static_cast<int64_t>(lanes_) * 4;
  if (rowBytes > 128)
    return 16;
  for (int64_t w : {int64_t(64), int64_t(32)})
    if (w <= vector && rowBytes % w == 0)
      return w;
  return 16;
}

llvm::Value *CodeGen::rowsAligned(llvm::Value *dst, const TensorInfo &d, unsigned dlead,
                                  const std::vector<int64_t> &shape, unsigned eb,
                                  int64_t align) {
  llvm::Value *ok = b_.CreateICmpEQ(
      b_.CreateAnd(b_.CreatePtrToInt(dst, b_.getInt64Ty()), i64(align - 1)), i64(0));
  for (size_t q = 0; q + 1 < shape.size(); ++q)
    if (shape[q] > 1)
      ok = b_.CreateAnd(
          ok, b_.CreateICmpEQ(b_.CreateAnd(b_.CreateMul(d.strides[dlead + q], i64(eb)),
                                           i64(align - 1)),
                              i64(0)));
  return ok;
}

void CodeGen::emitStreamChoice(llvm::Value *streamOk, llvm::Value *dst, const TensorInfo &d,
                               unsigned dlead, const std::vector<int64_t> &shape, unsigned eb,
                               const std::function<void(bool, int64_t)> &emit) {
  const int64_t wide = streamChunk(shape.back() * eb);
  emitEitherWay(streamOk, [&](bool stream) {
    if (!stream || wide == 16) {
      emit(stream, 16);
      return;
    }
    // Rows of 32 or 64 bytes go out in whole 32- or 64-byte stores where
    // the rows are that aligned (an NZ strip, a line): half or a quarter
    // of the store instructions of 16-byte pieces.
    emitEitherWay(rowsAligned(dst, d, dlead, shape, eb, wide),
                  [&](bool aligned) { emit(true, aligned ? wide : 16); });
  });
}

void CodeGen::emitEitherWay(llvm::Value *cond, const std::function<void(bool)> &emit) {
  if (!cond) {
    emit(false);
    return;
  }
  auto *yes = llvm::BasicBlock::Create(ctx_, "copy.stream", fn_);
  auto *no = llvm::BasicBlock::Create(ctx_, "copy.plain", fn_);
  auto *done = llvm::BasicBlock::Create(ctx_, "copy.done", fn_);
  b_.CreateCondBr(cond, yes, no);
  b_.SetInsertPoint(yes);
  emit(true);
  b_.CreateBr(done);
  b_.SetInsertPoint(no);
  emit(false);
  b_.CreateBr(done);
  b_.SetInsertPoint(done);
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

llvm::Value *CodeGen::tileInBounds(const TensorInfo &t,
                                   const std::vector<llvm::Value *> &off,
                                   const std::vector<int64_t> &shape) {
  unsigned rank = t.sizes.size(), lead = rank - shape.size();
  llvm::Value *in = b_.getTrue();
  for (unsigned d = 0; d < rank; ++d) {
    int64_t ext = d < lead ? 1 : shape[d - lead];
    in = b_.CreateAnd(in, b_.CreateICmpSGE(off[d], i64(0)));
    // off + ext <= size, as off <= size - ext: no wrap for an offset near
    // INT64_MAX (a size is at least 0).
    in = b_.CreateAnd(in, b_.CreateICmpSLE(off[d], b_.CreateSub(t.sizes[d], i64(ext))));
  }
  return b_.CreateAnd(in, b_.CreateICmpEQ(t.strides[rank - 1], i64(1)));
}

CodeGen::Forwarded CodeGen::accessOf(const ir::Value *v) {
  auto it = forwardedLoads_.find(v);
  if (it != forwardedLoads_.end())
    return it->second;
  Forwarded f;
  f.base = bufferOf(v);
  const auto &shape = v->type().shape();
  f.strides.resize(shape.size());
  int64_t st = 1;
  for (size_t d = shape.size(); d-- > 0;) {
    f.strides[d] = i64(st);
    st *= shape[d];
  }
  return f;
}


const ir::Op *CodeGen::forwardedStore(const ir::Op &producer) {
  const ir::Op *user = uses_->singleUser(producer.result());
  if (!user || user->kind() != OpKind::Store || !user->attrs().forwarded)
    return nullptr;
  unsigned rank = user->operand(0)->type().rank();
  // forward-tiles left only pure scalar ops between the two.
  const auto &ops = producer.parentBlock()->ops();
  size_t first = 0;
  while (ops[first].get() != &producer)
    ++first;
  size_t last = ++first;
  while (ops[last].get() != user)
    ++last;
  // The store's offsets may be computed between the two (`store(c, [i, 0],
  // load(...))` makes its constant 0 after the load): those pure scalar ops
  // are emitted now, before the copy, and again where they stand (LLVM
  // folds the duplicates).
  bool ready = true;
  for (unsigned d = 0; d < rank; ++d)
    ready = ready && scalars_.count(user->operand(1 + d));
  if (!ready)
    for (size_t i = first; i < last; ++i)
      emitOp(*ops[i]);
  return user;
}

bool CodeGen::emitScalarEarly(const ir::Value *v) {
  if (scalars_.count(v))
    return true;
  if (!ir::isRecomputableScalar(*v))
    return false;
  const ir::Op *d = v->definingOp();
  for (const ir::Value *o : d->operands())
    if (!o->type().isTensor() && !emitScalarEarly(o))
      return false;
  emitOp(*d);
  return true;
}

llvm::Value *CodeGen::regionsApart(const TileMove &load, const TileMove &store) {
  unsigned rank = load.tensor->type().rank();
  for (unsigned d = 0; d < rank; ++d)
    if (!emitScalarEarly(store.offsets[d]))
      return nullptr;
  const ir::Type &lt = load.tile->type(), &st = store.tile->type();
  std::vector<int64_t> le = ir::regionExtents(rank, lt), se = ir::regionExtents(rank, st);
  // Used only where both tiles lie inside the tensor (the fast paths), so
  // no sum below wraps.
  llvm::Value *apart = b_.getFalse(), *same = b_.getInt1(lt.shape() == st.shape());
  for (unsigned d = 0; d < rank; ++d) {
    llvm::Value *l = scalar(load.offsets[d]), *s = scalar(store.offsets[d]);
    apart = b_.CreateOr(apart, b_.CreateICmpSLE(b_.CreateAdd(l, i64(le[d])), s));
    apart = b_.CreateOr(apart, b_.CreateICmpSLE(b_.CreateAdd(s, i64(se[d])), l));
    same = b_.CreateAnd(same, b_.CreateICmpEQ(l, s));
  }
  return b_.CreateOr(apart, same, "regions.apart");
}

llvm::GlobalVariable *ModuleHelpers::shapeConstant(const std::vector<int64_t> &shape) {
  llvm::GlobalVariable *&gv = tileShapes_[shape];
  if (gv)
    return gv;
  auto *i64t = llvm::Type::getInt64Ty(module_.getContext());
  std::vector<llvm::Constant *> dims;
  for (int64_t e : shape)
    dims.push_back(llvm::ConstantInt::get(i64t, e));
  auto *shapeTy = llvm::ArrayType::get(i64t, dims.size());
  gv = new llvm::GlobalVariable(module_, shapeTy, true, llvm::GlobalValue::PrivateLinkage,
                                llvm::ConstantArray::get(shapeTy, dims), "tile.shape");
  gv->setUnnamedAddr(llvm::GlobalValue::UnnamedAddr::Global);
  return gv;
}

std::string rowMoveName(unsigned width, bool isLoad, ir::RowMask how) {
  return std::string(isLoad ? "tilejit.rows.load" : "tilejit.rows.store") +
         (how == ir::RowMask::Lanes  ? ".masked.b"
          : how == ir::RowMask::Rows ? ".rowmasked.b"
                                     : ".b") +
         std::to_string(8 * width);
}

llvm::Function *declareRowMove(llvm::Module &m, unsigned width, bool isLoad, ir::RowMask how) {
  // Pure data movement: elements move as integers of their width (f16, bf16,
  // i16 and u16 share one function, and no half-precision lanes need
  // legalising).
  const std::string name = rowMoveName(width, isLoad, how);
  if (llvm::Function *fn = m.getFunction(name))
    return fn;
  // void (ptr buf, ptr data, i64 rowStride, i64 rows, i64 row0, i64 rowSize,
  //       i64 first, i64 size, i64 n, i1 ok[, iN other][, ptr mask])
  // moves a [rows, n] tile: tile element (t, j) is tensor element (row0 + t,
  // first + j) of the 2-D slice at `data` (element (0, 0) of the slice, rows
  // rowStride apart, rowSize rows of size columns). Elements outside the
  // slice, or every element when !ok, read `other` (loads) or are not written
  // (stores); so do elements whose byte of `mask` ([rows, n]) is 0 (Lanes),
  // and whole rows whose first byte is 0 (Rows).
  llvm::LLVMContext &ctx = m.getContext();
  auto *ptr = llvm::PointerType::getUnqual(ctx);
  auto *i64t = llvm::Type::getInt64Ty(ctx);
  std::vector<llvm::Type *> params = {ptr, ptr, i64t, i64t, i64t, i64t,
                                      i64t, i64t, i64t, llvm::Type::getInt1Ty(ctx)};
  if (isLoad)
    params.push_back(llvm::Type::getIntNTy(ctx, 8 * width));
  if (how != ir::RowMask::None)
    params.push_back(ptr);
  auto *ft = llvm::FunctionType::get(llvm::Type::getVoidTy(ctx), params, false);
  llvm::Function *fn = llvm::Function::Create(ft, llvm::Function::ExternalLinkage, name, m);
  fn->addFnAttr(llvm::Attribute::NoUnwind);
  return fn;
}

void CodeGen::defineRowMove(llvm::Function *fn, unsigned width, bool isLoad, RowMask how) {
  assert(fn->isDeclaration() && "row-move function defined twice");
  const ScalarKind k = width == 1 ? ScalarKind::U8 : width == 2 ? ScalarKind::U16
                     : width == 4 ? ScalarKind::U32 : ScalarKind::I64;
  bool masked = how == RowMask::Lanes, rowMasked = how == RowMask::Rows;
  fn->addFnAttr("target-cpu", target_.cpu);
  fn->addFnAttr("target-features", target_.features);

  fn_ = fn;
  // A helper shared by every kernel has no source location of its own.
  b_.SetCurrentDebugLocation(llvm::DebugLoc());
  b_.SetInsertPoint(llvm::BasicBlock::Create(ctx_, "entry", fn));
  llvm::Value *buf = fn->getArg(0), *data = fn->getArg(1), *rowStride = fn->getArg(2),
              *rows = fn->getArg(3), *row0 = fn->getArg(4), *rowSize = fn->getArg(5),
              *first0 = fn->getArg(6), *size = fn->getArg(7), *n = fn->getArg(8),
              *sliceOk = fn->getArg(9);
  unsigned L = lanes_;
  llvm::Type *vt = llvm::FixedVectorType::get(memType(k), L);
  llvm::Align al(ir::byteWidth(k));
  llvm::Value *otherV = isLoad ? splat(fn->getArg(10), L) : nullptr;
  llvm::Value *mask = how != RowMask::None ? fn->getArg(isLoad ? 11 : 10) : nullptr;
  llvm::Type *mt = llvm::FixedVectorType::get(b_.getInt8Ty(), L);
  // The tile columns inside the tensor row, [lo, hi) (empty when !ok), once
  // per row: chunks wholly inside move with plain vector accesses, only the
  // row's end chunks build lane masks.
  auto smin = [&](llvm::Value *a, llvm::Value *c) {
    return b_.CreateBinaryIntrinsic(llvm::Intrinsic::smin, a, c);
  };
  auto smax = [&](llvm::Value *a, llvm::Value *c) {
    return b_.CreateBinaryIntrinsic(llvm::Intrinsic::smax, a, c);
  };
  llvm::Value *lo = smax(i64(0), smin(n, b_.CreateNeg(first0)));
  llvm::Value *hiAll = smax(lo, smin(n, b_.CreateSub(size, first0)));
  auto *i32t = b_.getInt32Ty();
  std::vector<llvm::Constant *> laneIds;
  for (unsigned i = 0; i < L; ++i)
    laneIds.push_back(b_.getInt32(i));
  llvm::Value *iota = llvm::ConstantVector::get(laneIds);
  llvm::Value *lo32 = b_.CreateVectorSplat(L, b_.CreateTrunc(lo, i32t));
  llvm::Value *n32 = b_.CreateVectorSplat(L, b_.CreateTrunc(n, i32t));
  emitLoop(i64(0), rows, 1, [&](llvm::Value *t) {
    llvm::Value *pos = b_.CreateAdd(row0, t);
    llvm::Value *ok = b_.CreateAnd(sliceOk, b_.CreateAnd(b_.CreateICmpSGE(pos, i64(0)),
                                                         b_.CreateICmpSLT(pos, rowSize)));
    if (rowMasked) {
      llvm::Value *first = b_.CreateLoad(b_.getInt8Ty(),
                                         b_.CreateGEP(b_.getInt8Ty(), mask, b_.CreateMul(t, n)));
      ok = b_.CreateAnd(ok, b_.CreateICmpNE(first, b_.getInt8(0)));
    }
    llvm::Value *hi = b_.CreateSelect(ok, hiAll, lo);
    llvm::Value *hi32 = b_.CreateVectorSplat(L, b_.CreateTrunc(hi, i32t));
    llvm::Value *bufRow = elemPtr(k, buf, b_.CreateMul(t, n));
    llvm::Value *dataAt = elemPtr(k, data, b_.CreateAdd(b_.CreateMul(pos, rowStride), first0));
    llvm::Value *maskRow = masked ? b_.CreateGEP(b_.getInt8Ty(), mask, b_.CreateMul(t, n)) : nullptr;
    llvm::Value *zeroMask = llvm::Constant::getNullValue(mt);
    // The tile mask's lanes j .. j + L (those < n; `tail`, when given).
    auto userMask = [&](llvm::Value *j, llvm::Value *tail) {
      llvm::Value *mp = b_.CreateGEP(b_.getInt8Ty(), maskRow, j);
      llvm::Value *bytes =
          tail ? static_cast<llvm::Value *>(
                     b_.CreateMaskedLoad(mt, mp, llvm::Align(1), tail, zeroMask))
               : b_.CreateAlignedLoad(mt, mp, llvm::Align(1));
      return b_.CreateICmpNE(bytes, zeroMask);
    };
    emitLoop(i64(0), n, L, [&](llvm::Value *j) {
      llvm::Value *lp = elemPtr(k, bufRow, j);
      llvm::Value *gp = elemPtr(k, dataAt, j);
      llvm::Value *inside = b_.CreateAnd(b_.CreateICmpSGE(j, lo),
                                         b_.CreateICmpSLE(b_.CreateAdd(j, i64(L)), hi));
      auto *plainBB = llvm::BasicBlock::Create(ctx_, "row.whole", fn_);
      auto *maskedBB = llvm::BasicBlock::Create(ctx_, "row.masked", fn_);
      auto *joinBB = llvm::BasicBlock::Create(ctx_, "row.next", fn_);
      b_.CreateCondBr(inside, plainBB, maskedBB);
      b_.SetInsertPoint(plainBB);
      // A chunk wholly inside the tensor: a load reads all its lanes (each is
      // in bounds) and selects `other` where the mask is off; a store writes
      // only the mask's lanes.
      if (isLoad) {
        llvm::Value *v = b_.CreateAlignedLoad(vt, gp, al);
        if (masked)
          v = b_.CreateSelect(userMask(j, nullptr), v, otherV);
        b_.CreateAlignedStore(v, lp, al);
      } else if (masked) {
        b_.CreateMaskedStore(b_.CreateAlignedLoad(vt, lp, al), gp, al, userMask(j, nullptr));
      } else {
        b_.CreateAlignedStore(b_.CreateAlignedLoad(vt, lp, al), gp, al);
      }
      b_.CreateBr(joinBB);
      b_.SetInsertPoint(maskedBB);
      llvm::Value *lanes = b_.CreateAdd(b_.CreateVectorSplat(L, b_.CreateTrunc(j, i32t)), iota);
      llvm::Value *tail = b_.CreateICmpSLT(lanes, n32);
      llvm::Value *m = b_.CreateAnd(b_.CreateICmpSGE(lanes, lo32), b_.CreateICmpSLT(lanes, hi32));
      if (masked)
        m = b_.CreateAnd(m, userMask(j, tail));
      if (isLoad) {
        b_.CreateMaskedStore(b_.CreateMaskedLoad(vt, gp, al, m, otherV), lp, al, tail);
      } else {
        llvm::Value *stored =
            b_.CreateMaskedLoad(vt, lp, al, tail, llvm::Constant::getNullValue(vt));
        b_.CreateMaskedStore(stored, gp, al, m);
      }
      b_.CreateBr(joinBB);
      b_.SetInsertPoint(joinBB);
    });
  });
  b_.CreateRetVoid();
  fn_ = nullptr;
}

void CodeGen::emitPartialRows(bool isLoad, const TensorInfo &t,
                              const std::vector<llvm::Value *> &off,
                              const std::vector<int64_t> &shape, llvm::Value *buf,
                              llvm::Value *other, llvm::Value *mask, RowMask how) {
  ScalarKind k = t.elem;
  unsigned rank = t.sizes.size(), r = shape.size(), lead = rank - r;
  llvm::Function *rowFn =
      declareRowMove(module_, ir::byteWidth(k), isLoad, mask ? how : RowMask::None);
  llvm::Value *leadOk = b_.getTrue(), *leadBase = i64(0);
  for (unsigned d = 0; d < lead; ++d) {
    leadOk = b_.CreateAnd(leadOk, b_.CreateICmpSGE(off[d], i64(0)));
    leadOk = b_.CreateAnd(leadOk, b_.CreateICmpSLT(off[d], t.sizes[d]));
    leadBase = b_.CreateAdd(leadBase, b_.CreateMul(off[d], t.strides[d]));
  }
  // The innermost two tile axes go to the shared function as a 2-D slice
  // (a rank-1 tile is one row); axes before them loop here.
  int64_t n = shape.back(), rows = r >= 2 ? shape[r - 2] : 1;
  std::vector<int64_t> outer(shape.begin(), shape.end() - std::min<unsigned>(r, 2));
  emitNest(outer, [&](const std::vector<llvm::Value *> &idx) {
    llvm::Value *ok = leadOk, *g = leadBase, *l = i64(0);
    int64_t tileStride = n * rows;
    for (size_t q = idx.size(); q-- > 0;) {
      llvm::Value *pos = b_.CreateAdd(off[lead + q], idx[q]);
      ok = b_.CreateAnd(ok, b_.CreateICmpSGE(pos, i64(0)));
      ok = b_.CreateAnd(ok, b_.CreateICmpSLT(pos, t.sizes[lead + q]));
      g = b_.CreateAdd(g, b_.CreateMul(pos, t.strides[lead + q]));
      l = b_.CreateAdd(l, b_.CreateMul(idx[q], i64(tileStride)));
      tileStride *= shape[q];
    }
    std::vector<llvm::Value *> args = {elemPtr(k, buf, l), elemPtr(k, t.data, g)};
    if (r >= 2)
      args.insert(args.end(), {t.strides[rank - 2], i64(rows), off[rank - 2], t.sizes[rank - 2]});
    else
      args.insert(args.end(), {i64(0), i64(1), i64(0), i64(1)});
    args.insert(args.end(), {off[rank - 1], t.sizes[rank - 1], i64(n), ok});
    if (isLoad)
      args.push_back(b_.CreateBitCast(other, b_.getIntNTy(8 * ir::byteWidth(k))));
    if (mask)
      args.push_back(b_.CreateGEP(b_.getInt8Ty(), mask, l));
    b_.CreateCall(rowFn, args);
  });
}

void CodeGen::emitTileMoveCall(bool isLoad, const TensorInfo &t,
                               const std::vector<llvm::Value *> &off,
                               const std::vector<int64_t> &shape, llvm::Value *buf,
                               llvm::Value *mask, llvm::Value *other) {
  auto *ptr = b_.getPtrTy();
  auto *i64t = b_.getInt64Ty();
  unsigned rank = t.sizes.size();
  // Offsets in a per-function stack array; the shape is a constant.
  if (!frame_.offsetSlot)
    frame_.offsetSlot = allocaEntry(i64t, rt::kMaxRank);
  for (unsigned d = 0; d < rank; ++d)
    b_.CreateStore(off[d], b_.CreateGEP(i64t, frame_.offsetSlot, i64(d)));
  llvm::GlobalVariable *shapeGV = helpers_.shapeConstant(shape);
  llvm::Value *maskArg = mask ? mask : llvm::ConstantPointerNull::get(ptr);
  std::vector<llvm::Value *> args = {buf, t.desc, i64(rank), frame_.offsetSlot, shapeGV,
                                     i64(shape.size()), i64(ir::byteWidth(t.elem)), maskArg};
  std::vector<llvm::Type *> params = {ptr, ptr, i64t, ptr, ptr, i64t, i64t, ptr};
  const char *name = rt::kStoreTileSymbol;
  if (isLoad) {
    llvm::Value *slot = allocaEntry(memType(t.elem), 1);
    b_.CreateStore(other, slot);
    args.push_back(slot);
    args.push_back(i64(t.elem == ScalarKind::I1));
    params.push_back(ptr);
    params.push_back(i64t);
    name = rt::kLoadTileSymbol;
  }
  auto *ft = llvm::FunctionType::get(b_.getVoidTy(), params, false);
  llvm::FunctionCallee callee = module_.getOrInsertFunction(name, ft);
  if (auto *f = llvm::dyn_cast<llvm::Function>(callee.getCallee()))
    f->addFnAttr(llvm::Attribute::NoUnwind);
  b_.CreateCall(callee, args);
}

void CodeGen::emitCopyRows(const TileMove &copyTo, const TensorInfo &t, unsigned lead,
                           llvm::Value *globalBase, const TensorInfo *copyDst,
                           llvm::Value *copyBase, const std::vector<int64_t> &shape) {
  const ScalarKind k = t.elem;
  const unsigned r = shape.size(), eb = ir::byteWidth(k);
  std::vector<int64_t> outer(shape.begin(), shape.end() - 1);
  unsigned dlead = copyDst->sizes.size() - r;
  // One run-time test per tile decides between streamed and plain rows.
  llvm::Value *streamOk =
      streamable(*copyTo.op, copyBase, *copyDst, dlead, globalBase, &t, lead, shape, eb);
  emitStreamChoice(streamOk, copyBase, *copyDst, dlead, shape, eb, [&](bool stream,
                                                                      int64_t chunk) {
    // memmove: a kernel may copy a tensor onto itself, shifted.
    auto copyRow = [&](llvm::Value *dst, llvm::Value *src) {
      emitRowCopy(dst, src, shape.back() * eb, eb, stream, /*mayOverlap=*/true, chunk);
    };
    if (outer.empty()) {
      copyRow(copyBase, globalBase);
      return;
    }
    // The rows of the innermost outer axis: both pointers step by their
    // row strides (no multiply per row).
    std::vector<int64_t> most(outer.begin(), outer.end() - 1);
    size_t last = outer.size() - 1;
    emitNest(most, [&](const std::vector<llvm::Value *> &idx) {
      llvm::Value *g = i64(0), *dg = i64(0);
      for (size_t q = 0; q < idx.size(); ++q) {
        g = b_.CreateAdd(g, b_.CreateMul(idx[q], t.strides[lead + q]));
        dg = b_.CreateAdd(dg, b_.CreateMul(idx[q], copyDst->strides[dlead + q]));
      }
      llvm::Value *sstep = b_.CreateMul(t.strides[lead + last], i64(eb));
      llvm::Value *dstep = b_.CreateMul(copyDst->strides[dlead + last], i64(eb));
      emitCarriedLoop("rows", i64(0), i64(outer[last]), 1,
                      {elemPtr(k, globalBase, g), elemPtr(k, copyBase, dg)},
                      [&](llvm::Value *, const std::vector<llvm::Value *> &at) {
                        copyRow(at[1], at[0]);
                        return std::vector<llvm::Value *>{
                            b_.CreateGEP(b_.getInt8Ty(), at[0], sstep),
                            b_.CreateGEP(b_.getInt8Ty(), at[1], dstep)};
                      });
    });
  });
}

void CodeGen::emitSlowMove(const TileMove &m, const TensorInfo &t,
                           const std::vector<llvm::Value *> &off,
                           const std::vector<int64_t> &shape, llvm::Value *buf,
                           const ir::Value *mask) {
  const bool isLoad = m.isLoad;
  const ir::Op &op = *m.op;
  const ScalarKind k = t.elem;
  const unsigned rank = t.sizes.size();
  if (k != ScalarKind::I1) {
    // A partial or masked tile over a contiguous innermost axis (a tensor's
    // edge, a window's tail: the common cases) moves inline, row by row, a
    // vector of lanes at a time; strided ones go to the runtime.
    llvm::Value *maskBuf = mask ? bufferOf(mask) : nullptr;
    // How the mask is read (select-moves): lane by lane, or each row whole
    // or not at all.
    const RowMask how = op.attrs().rowMask;
    auto *rows = llvm::BasicBlock::Create(ctx_, isLoad ? "load.rows" : "store.rows", fn_);
    auto *call = llvm::BasicBlock::Create(ctx_, isLoad ? "load.call" : "store.call", fn_);
    auto *slowDone = llvm::BasicBlock::Create(ctx_, isLoad ? "load.slow.done" : "store.slow.done", fn_);
    b_.CreateCondBr(b_.CreateICmpEQ(t.strides[rank - 1], i64(1)), rows, call);
    b_.SetInsertPoint(rows);
    emitPartialRows(isLoad, t, off, shape, buf,
                    isLoad ? otherValue(k, op.attrs()) : nullptr, maskBuf, how);
    b_.CreateBr(slowDone);
    b_.SetInsertPoint(call);
    emitTileMoveCall(isLoad, t, off, shape, buf, maskBuf,
                     isLoad ? otherValue(k, op.attrs()) : nullptr);
    b_.CreateBr(slowDone);
    b_.SetInsertPoint(slowDone);
  } else {
    // Boolean tiles: out of line, in the runtime (see tilejit_rt_load_tile in
    // runtime/Runtime.h), one call per tile.
    emitTileMoveCall(isLoad, t, off, shape, buf, mask ? bufferOf(mask) : nullptr,
                     isLoad ? otherValue(k, op.attrs()) : nullptr);
  }
}

TileMove CodeGen::tileMoveOf(const ir::Op &op) {
  TileMove m;
  m.isLoad = op.kind() == OpKind::Load;
  m.op = &op;
  m.tensor = op.operand(0);
  unsigned rank = m.tensor->type().rank();
  for (unsigned d = 0; d < rank; ++d)
    m.offsets.push_back(op.operand(1 + d));
  m.tile = m.isLoad ? op.result() : op.operand(1 + rank);
  m.mask = op.attrs().hasMask ? op.operand(op.numOperands() - 1) : nullptr;
  return m;
}

void CodeGen::emitLoadStore(const ir::Op &op) { emitTileMove(tileMoveOf(op), nullptr); }

void CodeGen::emitCopy(const ir::Op &op) {
  // Exactly the load and the store it replaces (forward-tiles): the read
  // into the copy's tile (rows tensor to tensor where both tiles are whole),
  // then the write, at the store's source location.
  TileMove read, write;
  read.isLoad = true;
  read.op = write.op = &op;
  read.tensor = op.operand(0);
  unsigned srank = read.tensor->type().rank();
  for (unsigned d = 0; d < srank; ++d)
    read.offsets.push_back(op.operand(1 + d));
  write.tensor = op.operand(1 + srank);
  unsigned drank = write.tensor->type().rank();
  for (unsigned d = 0; d < drank; ++d)
    write.offsets.push_back(op.operand(2 + srank + d));
  read.tile = write.tile = op.result();
  emitTileMove(read, &write);
  if (failed_)
    return;
  setLocation(op.attrs().writeLoc.isKnown() ? op.attrs().writeLoc : op.loc());
  emitTileMove(write, nullptr);
}

void CodeGen::emitTileMove(const TileMove &m, const TileMove *copyDst) {
  const ir::Op &op = *m.op;
  bool isLoad = m.isLoad;
  const TensorInfo &t = tensors_[m.tensor];
  unsigned rank = t.sizes.size();
  const ir::Value *tile = m.tile;
  const ir::Value *mask = m.mask;
  const std::vector<int64_t> &shape = tile->type().shape();
  unsigned r = shape.size(), lead = rank - r;
  ScalarKind k = t.elem;
  std::vector<llvm::Value *> off;
  for (unsigned d = 0; d < rank; ++d)
    off.push_back(scalar(m.offsets[d]));
  llvm::Value *buf = bufferOf(tile);
  llvm::Value *lin = i64(0);
  for (unsigned d = 0; d < rank; ++d)
    lin = b_.CreateAdd(lin, b_.CreateMul(off[d], t.strides[d]));

  // A load read in place by its one user (a fused loop or an mma), or a
  // store whose producer already wrote the in-bounds case, skips the copy
  // through the buffer (forward-tiles decided).
  const ir::Op *user = isLoad ? uses_->singleUser(tile) : nullptr;
  bool forwardLoad = isLoad && op.kind() == OpKind::Load && op.attrs().forward;
  llvm::Value *storeDone = nullptr;
  if (!isLoad) {
    auto it = forwardedStores_.find(&op);
    if (it != forwardedStores_.end())
      storeDone = it->second;
  }

  // A load stored once, unchanged, right away (a tile copy): when both
  // tiles are whole and contiguous, rows go from tensor to tensor and the
  // store is done; otherwise both take their own paths through the buffer.
  // (A `copy` op names its write side; a `load {copy}` its store.)
  std::optional<TileMove> copyTo;
  if (copyDst)
    copyTo = *copyDst;
  else if (isLoad && op.attrs().copy)
    if (const ir::Op *st = forwardedStore(op))
      copyTo = tileMoveOf(*st);

  // A store of the same tensor that this load feeds (as its value, or
  // through the fused loop reading it in place) with offsets not known at
  // compile time (overlap = checked): the fast path reads in place only when
  // the two regions are apart or the same; otherwise the load goes through
  // its buffer, whole, before anything is written.
  llvm::Value *apart = nullptr;
  std::optional<TileMove> checkedStore = copyTo;
  if (forwardLoad && user && user->kind() == OpKind::Fused) {
    checkedStore.reset();
    const ir::Op *st = uses_->singleUser(user->result());
    if (st && st->kind() == OpKind::Store)
      checkedStore = tileMoveOf(*st);
  }
  if (checkedStore && checkedStore->tensor == m.tensor &&
      checkedStore->op->attrs().overlap == ir::Overlap::Checked) {
    apart = regionsApart(m, *checkedStore);
    setLocation(op.loc());
    if (!apart) { // forward-tiles made sure the store's offsets are computable here
      diags_.error(op.loc(), "internal error: a forwarded load's checked store has offsets "
                             "not computable at the load");
      failed_ = true;
      return;
    }
  }

  // Fast path: the whole tile is inside the tensor, the innermost axis is
  // contiguous and nothing is masked: one memcpy per tile row.
  llvm::Value *inBounds = mask ? b_.getFalse() : tileInBounds(t, off, shape);
  if (apart)
    inBounds = b_.CreateAnd(inBounds, apart);
  llvm::Value *copyBase = nullptr;
  const TensorInfo *dstInfo = nullptr;
  if (copyTo) {
    dstInfo = &tensors_[copyTo->tensor];
    unsigned drank = dstInfo->sizes.size();
    std::vector<llvm::Value *> doff;
    llvm::Value *dlin = i64(0);
    for (unsigned d = 0; d < drank; ++d) {
      doff.push_back(scalar(copyTo->offsets[d]));
      dlin = b_.CreateAdd(dlin, b_.CreateMul(doff[d], dstInfo->strides[d]));
    }
    inBounds = b_.CreateAnd(inBounds, tileInBounds(*dstInfo, doff, shape));
    copyBase = elemPtr(k, dstInfo->data, dlin);
    forwardedStores_[copyTo->op] = inBounds;
  }
  auto *fast = llvm::BasicBlock::Create(ctx_, isLoad ? "load.fast" : "store.fast", fn_);
  auto *slow = llvm::BasicBlock::Create(ctx_, isLoad ? "load.slow" : "store.slow", fn_);
  auto *done = llvm::BasicBlock::Create(ctx_, isLoad ? "load.done" : "store.done", fn_);
  b_.CreateCondBr(storeDone ? storeDone : inBounds, fast, slow);

  unsigned eb = ir::byteWidth(k);
  b_.SetInsertPoint(fast);
  llvm::Value *globalBase = elemPtr(k, t.data, lin);
  if (copyTo) {
    emitCopyRows(*copyTo, t, lead, globalBase, dstInfo, copyBase, shape);
  } else if (!forwardLoad && !storeDone) {
    std::vector<int64_t> outer(shape.begin(), shape.end() - 1);
    int64_t rowBytes = shape.back() * eb;
    llvm::Value *streamOk =
        isLoad ? nullptr : streamable(op, globalBase, t, lead, nullptr, nullptr, 0, shape, eb);
    emitStreamChoice(streamOk, globalBase, t, lead, shape, eb, [&](bool stream, int64_t chunk) {
      emitNest(outer, [&](const std::vector<llvm::Value *> &idx) {
        llvm::Value *g = i64(0), *l = i64(0);
        int64_t tileStride = shape.back();
        for (size_t q = idx.size(); q-- > 0;) {
          g = b_.CreateAdd(g, b_.CreateMul(idx[q], t.strides[lead + q]));
          l = b_.CreateAdd(l, b_.CreateMul(idx[q], i64(tileStride)));
          tileStride *= shape[q];
        }
        llvm::Value *gp = elemPtr(k, globalBase, g), *lp = elemPtr(k, buf, l);
        if (isLoad)
          emitRowCopy(lp, gp, rowBytes, eb, /*stream=*/false, /*mayOverlap=*/false);
        else
          emitRowCopy(gp, lp, rowBytes, eb, stream, /*mayOverlap=*/false, chunk);
      });
    });
  }
  llvm::BasicBlock *fastEnd = b_.GetInsertBlock();
  b_.CreateBr(done);

  b_.SetInsertPoint(slow);
  emitSlowMove(m, t, off, shape, buf, mask);
  llvm::BasicBlock *slowEnd = b_.GetInsertBlock();
  b_.CreateBr(done);
  b_.SetInsertPoint(done);
  if (forwardLoad) {
    Forwarded f;
    llvm::PHINode *base = b_.CreatePHI(b_.getPtrTy(), 2, "tile.base");
    base->addIncoming(globalBase, fastEnd);
    base->addIncoming(buf, slowEnd);
    f.base = base;
    int64_t tileStride = 1;
    f.strides.resize(r);
    for (unsigned d = r; d-- > 0;) {
      llvm::PHINode *st = b_.CreatePHI(b_.getInt64Ty(), 2);
      st->addIncoming(t.strides[lead + d], fastEnd);
      st->addIncoming(i64(tileStride), slowEnd);
      f.strides[d] = st;
      tileStride *= shape[d];
    }
    forwardedLoads_[tile] = f;
  }
}

void CodeGen::emitGatherScatter(const ir::Op &op) {
  bool isGather = op.kind() == OpKind::Gather;
  const TensorInfo &t = tensors_[op.operand(0)];
  unsigned rank = t.sizes.size();
  const ir::Value *tile = isGather ? op.result() : op.operand(1 + rank);
  const ir::Value *mask = op.attrs().hasMask ? op.operand(op.numOperands() - 1) : nullptr;
  ScalarKind k = t.elem;
  const std::vector<int64_t> &shape = tile->type().shape();
  llvm::Value *buf = bufferOf(tile);
  llvm::Value *other = isGather ? otherValue(k, op.attrs()) : nullptr;
  diags_.remark(op.loc(), std::string(isGather ? "gather" : "scatter") +
                              " lowers to a scalar element loop");
  // Elements in row-major order (scatter: later writes win).
  std::vector<llvm::Value *> idxBufs;
  for (unsigned d = 0; d < rank; ++d)
    idxBufs.push_back(bufferOf(op.operand(1 + d)));
  llvm::Value *maskBuf = mask ? bufferOf(mask) : nullptr;
  emitLoop(i64(0), i64(tile->type().numElements()), 1, [&](llvm::Value *e) {
    llvm::Value *ok = b_.getTrue(), *g = i64(0);
    for (unsigned d = 0; d < rank; ++d) {
      llvm::Value *pos = loadElems(ScalarKind::I64, elemPtr(ScalarKind::I64, idxBufs[d], e), 1, nullptr);
      ok = b_.CreateAnd(ok, b_.CreateICmpSGE(pos, i64(0)));
      ok = b_.CreateAnd(ok, b_.CreateICmpSLT(pos, t.sizes[d]));
      g = b_.CreateAdd(g, b_.CreateMul(pos, t.strides[d]));
    }
    if (maskBuf)
      ok = b_.CreateAnd(ok, loadElems(ScalarKind::I1, elemPtr(ScalarKind::I1, maskBuf, e), 1, nullptr));
    llvm::Value *lp = elemPtr(k, buf, e);
    auto *then = llvm::BasicBlock::Create(ctx_, "g.in", fn_);
    auto *join = llvm::BasicBlock::Create(ctx_, "g.next", fn_);
    if (isGather)
      storeElems(k, other, lp, 1, nullptr);
    b_.CreateCondBr(ok, then, join);
    b_.SetInsertPoint(then);
    llvm::Value *gp = elemPtr(k, t.data, g);
    if (isGather)
      storeElems(k, loadElems(k, gp, 1, nullptr), lp, 1, nullptr);
    else
      storeElems(k, loadElems(k, lp, 1, nullptr), gp, 1, nullptr);
    b_.CreateBr(join);
    b_.SetInsertPoint(join);
  });
  (void)shape;
}

void CodeGen::emitScalarMemory(const ir::Op &op) {
  bool isLoad = op.kind() == OpKind::LoadScalar;
  const TensorInfo &t = tensors_[op.operand(0)];
  unsigned rank = t.sizes.size();
  ScalarKind k = t.elem;
  llvm::Value *ok = b_.getTrue(), *g = i64(0);
  for (unsigned d = 0; d < rank; ++d) {
    llvm::Value *pos = scalar(op.operand(1 + d));
    ok = b_.CreateAnd(ok, b_.CreateICmpSGE(pos, i64(0)));
    ok = b_.CreateAnd(ok, b_.CreateICmpSLT(pos, t.sizes[d]));
    g = b_.CreateAdd(g, b_.CreateMul(pos, t.strides[d]));
  }
  llvm::BasicBlock *pre = b_.GetInsertBlock();
  auto *then = llvm::BasicBlock::Create(ctx_, isLoad ? "ld.in" : "st.in", fn_);
  auto *join = llvm::BasicBlock::Create(ctx_, isLoad ? "ld.next" : "st.next", fn_);
  b_.CreateCondBr(ok, then, join);
  b_.SetInsertPoint(then);
  llvm::Value *gp = elemPtr(k, t.data, g);
  llvm::Value *loaded = nullptr;
  if (isLoad)
    loaded = loadElems(k, gp, 1, nullptr);
  else
    storeElems(k, scalar(op.operand(1 + rank)), gp, 1, nullptr);
  llvm::BasicBlock *thenEnd = b_.GetInsertBlock();
  b_.CreateBr(join);
  b_.SetInsertPoint(join);
  if (isLoad) {
    llvm::PHINode *phi = b_.CreatePHI(valueType(k), 2);
    phi->addIncoming(loaded, thenEnd);
    phi->addIncoming(otherValue(k, op.attrs()), pre);
    scalars_[op.result()] = phi;
  }
}

void CodeGen::emitCheckBounds(const ir::Op &op) {
  const TensorInfo &t = tensors_[op.operand(0)];
  const unsigned rank = t.sizes.size();
  // "file:line:col: load of x", for the launch's error.
  const SourceLoc &loc = op.loc();
  std::string site = (loc.isKnown() ? diags_.bufferName(loc.buffer).str() : std::string("?")) +
                     ":" + std::to_string(loc.line) + ":" + std::to_string(loc.column) + ": " +
                     op.attrs().name;
  llvm::Value *siteText = b_.CreateGlobalString(site, "bounds.site", 0, &module_);
  llvm::Type *i64t = b_.getInt64Ty();
  auto *ft = llvm::FunctionType::get(
      b_.getVoidTy(), {llvm::PointerType::getUnqual(ctx_), i64t, i64t, i64t, i64t}, false);
  llvm::FunctionCallee report = module_.getOrInsertFunction(rt::kBoundsViolationSymbol, ft);
  if (auto *f = llvm::dyn_cast<llvm::Function>(report.getCallee())) {
    f->addFnAttr(llvm::Attribute::NoUnwind);
    f->addFnAttr(llvm::Attribute::Cold);
  }
  // Reports axis d when [index, index + extent) misses [0, size).
  auto checkAxis = [&](unsigned d, llvm::Value *index, int64_t extent) {
    llvm::Value *misses = b_.CreateOr(b_.CreateICmpSGE(index, t.sizes[d]),
                                      b_.CreateICmpSLE(index, i64(-extent)));
    auto *bad = llvm::BasicBlock::Create(ctx_, "bounds.bad", fn_);
    auto *next = llvm::BasicBlock::Create(ctx_, "bounds.ok", fn_);
    b_.CreateCondBr(misses, bad, next);
    b_.SetInsertPoint(bad);
    b_.CreateCall(report, {siteText, i64(d), index, i64(extent), t.sizes[d]});
    b_.CreateBr(next);
    b_.SetInsertPoint(next);
  };
  if (op.operand(1)->type().isScalar()) {
    for (unsigned d = 0; d < rank; ++d)
      checkAxis(d, scalar(op.operand(1 + d)), op.attrs().extent[d]);
    return;
  }
  // Tile indices: every element whose mask is set.
  std::vector<llvm::Value *> idxBufs;
  for (unsigned d = 0; d < rank; ++d)
    idxBufs.push_back(bufferOf(op.operand(1 + d)));
  llvm::Value *maskBuf = op.attrs().hasMask ? bufferOf(op.operand(1 + rank)) : nullptr;
  emitLoop(i64(0), i64(op.operand(1)->type().numElements()), 1, [&](llvm::Value *e) {
    if (maskBuf) {
      llvm::Value *on = loadElems(ScalarKind::I1, elemPtr(ScalarKind::I1, maskBuf, e), 1, nullptr);
      auto *check = llvm::BasicBlock::Create(ctx_, "bounds.masked", fn_);
      auto *skip = llvm::BasicBlock::Create(ctx_, "bounds.skip", fn_);
      b_.CreateCondBr(b_.CreateICmpNE(on, llvm::ConstantInt::get(on->getType(), 0)), check, skip);
      b_.SetInsertPoint(check);
      for (unsigned d = 0; d < rank; ++d)
        checkAxis(d, loadElems(ScalarKind::I64, elemPtr(ScalarKind::I64, idxBufs[d], e), 1, nullptr),
                  1);
      b_.CreateBr(skip);
      b_.SetInsertPoint(skip);
      return;
    }
    for (unsigned d = 0; d < rank; ++d)
      checkAxis(d, loadElems(ScalarKind::I64, elemPtr(ScalarKind::I64, idxBufs[d], e), 1, nullptr),
                1);
  });
}

} // namespace tilejit::codegen
