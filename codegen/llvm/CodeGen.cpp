//===- CodeGen.cpp - Tile IR to an llvm::Module ---------------------------===//
///
/// \file
/// Functions, control flow, scalar ops, data movement and tile shape ops.
/// Every materialised tile lives in the program's scratch area at the offset
/// plan-buffers gave it, row-major; elementwise work happens in fused vector
/// loops (CodeGenElementwise.cpp).
///
//===----------------------------------------------------------------------===//
#include "codegen/llvm/CodeGenImpl.h"

#include <algorithm>
#include <cmath>

#include "llvm/IR/Intrinsics.h"
#include "llvm/IR/IntrinsicsX86.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Support/raw_ostream.h"

namespace tilejit::codegen {

using ir::OpKind;
using ir::ScalarKind;

//===----------------------------------------------------------------------===//
// Types and constants
//===----------------------------------------------------------------------===//

llvm::Type *CodeGen::valueType(ScalarKind k) {
  switch (k) {
  case ScalarKind::I1: return b_.getInt1Ty();
  case ScalarKind::I8: case ScalarKind::U8: return b_.getInt8Ty();
  case ScalarKind::I16: case ScalarKind::U16: case ScalarKind::BF16:
    return b_.getInt16Ty();
  case ScalarKind::F16: return b_.getHalfTy();
  case ScalarKind::I32: case ScalarKind::U32: return b_.getInt32Ty();
  case ScalarKind::I64: return b_.getInt64Ty();
  case ScalarKind::F32: return b_.getFloatTy();
  }
  return nullptr;
}

llvm::Type *CodeGen::memType(ScalarKind k) {
  return k == ScalarKind::I1 ? b_.getInt8Ty() : valueType(k);
}

llvm::Value *CodeGen::constantOf(ScalarKind k, double fv, int64_t iv,
                                 unsigned lanes) {
  llvm::Constant *c;
  switch (k) {
  case ScalarKind::F32:
    c = llvm::ConstantFP::get(b_.getFloatTy(), fv);
    break;
  case ScalarKind::F16: {
    llvm::APFloat f(static_cast<float>(fv));
    bool lost;
    f.convert(llvm::APFloat::IEEEhalf(), llvm::APFloat::rmNearestTiesToEven, &lost);
    c = llvm::ConstantFP::get(ctx_, f);
    break;
  }
  case ScalarKind::BF16: {
    llvm::APFloat f(static_cast<float>(fv));
    bool lost;
    f.convert(llvm::APFloat::BFloat(), llvm::APFloat::rmNearestTiesToEven, &lost);
    c = b_.getInt16(static_cast<uint16_t>(f.bitcastToAPInt().getZExtValue()));
    break;
  }
  default:
    c = llvm::ConstantInt::get(valueType(k), static_cast<uint64_t>(iv), true);
    break;
  }
  return lanes == 1 ? static_cast<llvm::Value *>(c)
                    : llvm::ConstantVector::getSplat(
                          llvm::ElementCount::getFixed(lanes), c);
}

llvm::Value *CodeGen::otherValue(ScalarKind k, const ir::OpAttrs &a) {
  // An integer tensor's `other` is exact in intValue (a double would round
  // an i64 past 2^53).
  if (ir::isFloat(k))
    return constantOf(k, a.floatValue, 0, 1);
  return constantOf(k, 0, a.intValue, 1);
}

llvm::Value *CodeGen::prefixMask(unsigned n, unsigned lanes) {
  std::vector<llvm::Constant *> bits;
  for (unsigned i = 0; i < lanes; ++i)
    bits.push_back(b_.getInt1(i < n));
  return llvm::ConstantVector::get(bits);
}

llvm::Value *CodeGen::allocaEntry(llvm::Type *t, uint64_t count) {
  llvm::IRBuilder<> eb(&fn_->getEntryBlock(), fn_->getEntryBlock().begin());
  auto *a = eb.CreateAlloca(t, eb.getInt64(count));
  a->setAlignment(llvm::Align(64));
  return a;
}

//===----------------------------------------------------------------------===//
// Memory helpers
//===----------------------------------------------------------------------===//

llvm::Value *CodeGen::bufferOf(const ir::Value *v) {
  assert(v->bufferOffset() >= 0 && "tile without a planned buffer");
  return b_.CreateGEP(b_.getInt8Ty(), scratch_, i64(v->bufferOffset()));
}

llvm::Value *CodeGen::loadElems(ScalarKind k, llvm::Value *ptr, unsigned lanes,
                                llvm::Value *mask) {
  llvm::Type *mt = memType(k);
  llvm::Align align(ir::byteWidth(k));
  llvm::Value *v;
  if (lanes == 1) {
    v = b_.CreateLoad(mt, ptr);
  } else {
    auto *vt = llvm::FixedVectorType::get(mt, lanes);
    if (mask)
      v = b_.CreateMaskedLoad(vt, ptr, align, mask,
                              llvm::Constant::getNullValue(vt));
    else
      v = b_.CreateAlignedLoad(vt, ptr, align);
  }
  if (k == ScalarKind::I1)
    v = b_.CreateICmpNE(v, llvm::Constant::getNullValue(v->getType()));
  return v;
}

void CodeGen::storeElems(ScalarKind k, llvm::Value *val, llvm::Value *ptr,
                         unsigned lanes, llvm::Value *mask) {
  // A conversion to f16 stored right away would become VCVTPS2PH with a
  // memory operand, which AMD cores (Zen 4/5) run several times slower than
  // the register form and a store; the fence keeps the two apart.
  if (k == ScalarKind::F16 && lanes > 1 && llvm::isa<llvm::FPTruncInst>(val))
    val = b_.CreateArithmeticFence(val, val->getType());
  if (k == ScalarKind::I1)
    val = b_.CreateZExt(val, lanes == 1 ? memType(k)
                                        : llvm::FixedVectorType::get(memType(k), lanes));
  llvm::Align align(ir::byteWidth(k));
  if (lanes > 1 && mask)
    b_.CreateMaskedStore(val, ptr, align, mask);
  else
    b_.CreateAlignedStore(val, ptr, align);
}

void CodeGen::copyBuffer(const ir::Value *from, const ir::Value *to) {
  if (from->bufferOffset() == to->bufferOffset())
    return;
  int64_t bytes = from->type().numElements() * ir::byteWidth(from->type().elem());
  emitInlineCopy(bufferOf(to), bufferOf(from), bytes);
}

void CodeGen::copyBuffersInParallel(
    const std::vector<std::pair<const ir::Value *, const ir::Value *>> &moves) {
  // A move reads a buffer (its byte range, or a stack temporary) into one.
  struct Move {
    int64_t from, to, bytes;
    llvm::Value *src; ///< where it reads: its buffer, or a temporary
    bool fromTemp;
  };
  std::vector<Move> pending;
  for (const auto &[from, to] : moves) {
    if (from->bufferOffset() == to->bufferOffset())
      continue;
    int64_t bytes = from->type().numElements() * ir::byteWidth(from->type().elem());
    pending.push_back({from->bufferOffset(), to->bufferOffset(), bytes, nullptr, false});
  }
  auto clobbers = [](const Move &w, const Move &r) { // w writes what r still reads
    return !r.fromTemp && w.to < r.from + r.bytes && r.from < w.to + w.bytes;
  };
  while (!pending.empty()) {
    size_t pick = pending.size();
    for (size_t i = 0; i < pending.size() && pick == pending.size(); ++i) {
      bool free = true;
      for (size_t j = 0; j < pending.size(); ++j)
        free = free && (j == i || !clobbers(pending[i], pending[j]));
      if (free)
        pick = i;
    }
    if (pick == pending.size()) {
      // A cycle (a swap): the first move's source goes to a temporary, and
      // every move reading it reads the temporary.
      Move &m = pending.front();
      llvm::Value *tmp = allocaEntry(b_.getInt8Ty(), static_cast<uint64_t>(m.bytes));
      emitInlineCopy(tmp, b_.CreateGEP(b_.getInt8Ty(), scratch_, i64(m.from)), m.bytes);
      int64_t from = m.from;
      for (Move &o : pending)
        if (!o.fromTemp && o.from == from) {
          o.src = tmp;
          o.fromTemp = true;
        }
      continue;
    }
    const Move &m = pending[pick];
    llvm::Value *src = m.fromTemp ? m.src : b_.CreateGEP(b_.getInt8Ty(), scratch_, i64(m.from));
    emitInlineCopy(b_.CreateGEP(b_.getInt8Ty(), scratch_, i64(m.to)), src, m.bytes);
    pending.erase(pending.begin() + static_cast<std::ptrdiff_t>(pick));
  }
}

void CodeGen::emitInlineCopy(llvm::Value *dst, llvm::Value *src, int64_t bytes) {
  // Vector moves, no library call: a call costs more than a short copy,
  // and in a kernel with AMX tiles it also reloads the tile configuration.
  llvm::Type *i8 = b_.getInt8Ty();
  const int64_t wide = static_cast<int64_t>(lanes_) * 4;
  auto move = [&](llvm::Value *o, int64_t size) {
    llvm::Type *t = size >= 8 ? static_cast<llvm::Type *>(llvm::FixedVectorType::get(
                                    b_.getInt64Ty(), static_cast<unsigned>(size / 8)))
                              : b_.getIntNTy(static_cast<unsigned>(size * 8));
    llvm::Value *v = b_.CreateAlignedLoad(t, b_.CreateGEP(i8, src, o), llvm::Align(1));
    b_.CreateAlignedStore(v, b_.CreateGEP(i8, dst, o), llvm::Align(1));
  };
  int64_t done = 0;
  if (bytes > 32 * wide) {
    const int64_t step = 4 * wide;
    done = bytes / step * step;
    emitLoop(i64(0), i64(done), step, [&](llvm::Value *o) {
      for (int64_t k = 0; k < step; k += wide)
        move(b_.CreateAdd(o, i64(k)), wide);
    });
  }
  for (int64_t size = wide; size >= 1; size /= 2)
    for (; bytes - done >= size; done += size)
      move(i64(done), size);
}

void CodeGen::emitLoop(llvm::Value *lb, llvm::Value *ub, int64_t step,
                       const std::function<void(llvm::Value *)> &body) {
  llvm::BasicBlock *pre = b_.GetInsertBlock();
  auto *header = llvm::BasicBlock::Create(ctx_, "loop", fn_);
  auto *bodyBB = llvm::BasicBlock::Create(ctx_, "loop.body", fn_);
  auto *exit = llvm::BasicBlock::Create(ctx_, "loop.exit", fn_);
  b_.CreateBr(header);
  b_.SetInsertPoint(header);
  llvm::PHINode *iv = b_.CreatePHI(b_.getInt64Ty(), 2, "i");
  iv->addIncoming(lb, pre);
  b_.CreateCondBr(b_.CreateICmpSLT(iv, ub), bodyBB, exit);
  b_.SetInsertPoint(bodyBB);
  body(iv);
  llvm::Value *next = b_.CreateAdd(iv, i64(step), "", true, true);
  iv->addIncoming(next, b_.GetInsertBlock());
  b_.CreateBr(header);
  b_.SetInsertPoint(exit);
}

std::vector<llvm::Value *> CodeGen::emitCarriedLoop(const char *name, llvm::Value *lb,
                                                     llvm::Value *ub, int64_t step,
                                                     const std::vector<llvm::Value *> &init,
                                                     const CarriedBody &body) {
  llvm::BasicBlock *pre = b_.GetInsertBlock();
  auto *loop = llvm::BasicBlock::Create(ctx_, name, fn_);
  auto *exit = llvm::BasicBlock::Create(ctx_, std::string(name) + ".exit", fn_);
  b_.CreateBr(loop);
  b_.SetInsertPoint(loop);
  llvm::PHINode *iv = b_.CreatePHI(b_.getInt64Ty(), 2, "i");
  iv->addIncoming(lb, pre);
  std::vector<llvm::PHINode *> phis;
  std::vector<llvm::Value *> cur;
  for (llvm::Value *v : init) {
    phis.push_back(b_.CreatePHI(v->getType(), 2));
    phis.back()->addIncoming(v, pre);
    cur.push_back(phis.back());
  }
  std::vector<llvm::Value *> next = body(iv, cur);
  llvm::Value *iv1 = b_.CreateAdd(iv, i64(step), "", true, true);
  iv->addIncoming(iv1, b_.GetInsertBlock());
  for (size_t i = 0; i < phis.size(); ++i)
    phis[i]->addIncoming(next[i], b_.GetInsertBlock());
  b_.CreateCondBr(b_.CreateICmpSLT(iv1, ub), loop, exit);
  b_.SetInsertPoint(exit);
  return next;
}

void CodeGen::emitNest(
    const std::vector<int64_t> &shape,
    const std::function<void(const std::vector<llvm::Value *> &)> &body) {
  std::vector<llvm::Value *> idx;
  std::function<void(size_t)> rec = [&](size_t d) {
    if (d == shape.size()) {
      body(idx);
      return;
    }
    if (shape[d] == 1) {
      idx.push_back(i64(0));
      rec(d + 1);
      idx.pop_back();
      return;
    }
    emitLoop(i64(0), i64(shape[d]), 1, [&](llvm::Value *iv) {
      idx.push_back(iv);
      rec(d + 1);
      idx.pop_back();
    });
  };
  rec(0);
}

//===----------------------------------------------------------------------===//
// Functions
//===----------------------------------------------------------------------===//

void CodeGen::loadTensors(llvm::Value *args, bool inGrid) {
  tensors_.clear();
  for (unsigned i = 0; i < kernel_.params.size(); ++i) {
    const ir::Param &p = kernel_.params[i];
    const ir::Value *v = inGrid ? kernel_.gridParamValue(i) : kernel_.paramValue(i);
    llvm::Value *slot = b_.CreateLoad(
        b_.getPtrTy(), b_.CreateGEP(b_.getPtrTy(), args, i64(i)), p.name + ".ptr");
    if (!p.type.isTensor()) {
      scalars_[v] = b_.CreateLoad(memType(p.type.elem()), slot, p.name);
      if (p.type.elem() == ScalarKind::I1)
        scalars_[v] = b_.CreateICmpNE(scalars_[v], b_.getInt8(0));
      continue;
    }
    TensorInfo t;
    t.elem = p.type.elem();
    t.desc = slot;
    t.data = b_.CreateLoad(b_.getPtrTy(), slot, p.name + ".data");
    for (unsigned d = 0; d < p.type.rank(); ++d) {
      t.sizes.push_back(b_.CreateLoad(
          b_.getInt64Ty(),
          b_.CreateGEP(b_.getInt8Ty(), slot, i64(offsetof(rt::TensorDesc, sizes) + 8 * d)),
          p.name + ".size" + std::to_string(d)));
      t.strides.push_back(b_.CreateLoad(
          b_.getInt64Ty(),
          b_.CreateGEP(b_.getInt8Ty(), slot, i64(offsetof(rt::TensorDesc, strides) + 8 * d)),
          p.name + ".stride" + std::to_string(d)));
    }
    tensors_[v] = t;
  }
}

void CodeGen::emitProgram(const std::string &name) {
  auto *ptr = b_.getPtrTy();
  auto *ft = llvm::FunctionType::get(b_.getVoidTy(), {ptr, ptr, ptr, ptr}, false);
  fn_ = llvm::Function::Create(ft, llvm::Function::ExternalLinkage, name, module_);
  fn_->addFnAttr(llvm::Attribute::NoUnwind);
  fn_->addFnAttr("target-cpu", target_.cpu);
  fn_->addFnAttr("target-features", target_.features);
  for (unsigned i = 0; i < 4; ++i)
    fn_->addParamAttr(i, llvm::Attribute::NoAlias);
  fn_->addParamAttr(3, llvm::Attribute::getWithAlignment(ctx_, llvm::Align(64)));
  auto *entry = llvm::BasicBlock::Create(ctx_, "entry", fn_);
  b_.SetInsertPoint(entry);
  attachSubprogram(name);
  offsetSlot_ = nullptr;
  pid_ = fn_->getArg(1);
  nprog_ = fn_->getArg(2);
  scratch_ = fn_->getArg(3);
  scalars_.clear();
  uses_.emplace(kernel_);
  loadTensors(fn_->getArg(0), false);
  emitBlock(kernel_.body());
  if (streamed_)
    b_.CreateIntrinsic(llvm::Intrinsic::x86_sse_sfence, {}, {});
  b_.CreateRetVoid();
}

void CodeGen::emitRowCopy(llvm::Value *dst, llvm::Value *src, int64_t bytes, unsigned align,
                          bool stream, bool mayOverlap) {
  if (!stream) {
    if (mayOverlap)
      b_.CreateMemMove(dst, llvm::MaybeAlign(align), src, llvm::MaybeAlign(align), bytes);
    else if (bytes <= 32 * static_cast<int64_t>(lanes_) * 4)
      emitInlineCopy(dst, src, bytes);
    else
      b_.CreateMemCpy(dst, llvm::MaybeAlign(align), src, llvm::MaybeAlign(align), bytes);
    return;
  }
  streamed_ = true;
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
    for (int64_t o = 0; o < bytes; o += kChunk)
      narrow(i64(o));
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
  // Every row starts 16-byte aligned: the first does, and the row strides
  // keep it so.
  llvm::Value *ok = b_.CreateICmpEQ(
      b_.CreateAnd(b_.CreatePtrToInt(dst, b_.getInt64Ty()), i64(15)), i64(0));
  for (size_t q = 0; q + 1 < shape.size(); ++q)
    if (shape[q] > 1)
      ok = b_.CreateAnd(ok, b_.CreateICmpEQ(b_.CreateAnd(b_.CreateMul(d.strides[dlead + q],
                                                                      i64(eb)),
                                                         i64(15)),
                                            i64(0)));
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

void CodeGen::emitGrid(const std::string &name) {
  auto *ptr = b_.getPtrTy();
  auto *ft = llvm::FunctionType::get(b_.getInt64Ty(), {ptr, ptr}, false);
  fn_ = llvm::Function::Create(ft, llvm::Function::ExternalLinkage, name, module_);
  fn_->addFnAttr(llvm::Attribute::NoUnwind);
  fn_->addFnAttr("target-cpu", target_.cpu);
  fn_->addFnAttr("target-features", target_.features);
  auto *entry = llvm::BasicBlock::Create(ctx_, "entry", fn_);
  b_.SetInsertPoint(entry);
  attachSubprogram(name);
  scalars_.clear();
  scratch_ = llvm::ConstantPointerNull::get(b_.getPtrTy());
  loadTensors(fn_->getArg(0), true);
  const ir::Block &g = kernel_.grid();
  for (const auto &op : g.ops())
    if (op->kind() != OpKind::Yield)
      emitOp(*op);
  const ir::Op *y = g.terminator();
  for (unsigned a = 0; a < 3; ++a) {
    llvm::Value *ext = a < y->numOperands() ? scalar(y->operand(a)) : i64(1);
    b_.CreateStore(ext, b_.CreateGEP(b_.getInt64Ty(), fn_->getArg(1), i64(a)));
  }
  // Shape constraints, in order: return k+1 for the first violated one.
  for (size_t c = 0; c < kernel_.constraints.size(); ++c) {
    const ir::ShapeConstraint &sc = kernel_.constraints[c];
    const TensorInfo &t = tensors_[kernel_.gridParamValue(sc.param)];
    llvm::Value *want =
        sc.kind == ir::ShapeConstraint::Kind::EqualsConstant
            ? i64(sc.constant)
            : tensors_[kernel_.gridParamValue(sc.otherParam)].sizes[sc.otherAxis];
    auto *bad = llvm::BasicBlock::Create(ctx_, "violated", fn_);
    auto *next = llvm::BasicBlock::Create(ctx_, "ok", fn_);
    b_.CreateCondBr(b_.CreateICmpNE(t.sizes[sc.axis], want), bad, next);
    b_.SetInsertPoint(bad);
    b_.CreateRet(i64(static_cast<int64_t>(c) + 1));
    b_.SetInsertPoint(next);
  }
  b_.CreateRet(i64(0));
}

void CodeGen::beginDebugInfo() {
  dib_ = std::make_unique<llvm::DIBuilder>(module_);
  const SourceLoc &loc = kernel_.loc;
  std::string file = loc.isKnown() ? diags_.bufferName(loc.buffer).str() : kernel_.name();
  diFile_ = dib_->createFile(file, ".");
  dib_->createCompileUnit(llvm::dwarf::DW_LANG_C, diFile_, "tilejit", /*isOptimized=*/true,
                          "", 0, "", llvm::DICompileUnit::LineTablesOnly);
  module_.addModuleFlag(llvm::Module::Warning, "Debug Info Version",
                        llvm::DEBUG_METADATA_VERSION);
  module_.addModuleFlag(llvm::Module::Warning, "Dwarf Version", 5);
}

void CodeGen::attachSubprogram(const std::string &name) {
  const unsigned line = kernel_.loc.line;
  sp_ = dib_->createFunction(diFile_, name, name, diFile_, line,
                             dib_->createSubroutineType(dib_->getOrCreateTypeArray({})), line,
                             llvm::DINode::FlagZero,
                             llvm::DISubprogram::SPFlagDefinition |
                                 llvm::DISubprogram::SPFlagOptimized);
  fn_->setSubprogram(sp_);
  b_.SetCurrentDebugLocation(llvm::DILocation::get(ctx_, line, kernel_.loc.column, sp_));
}

void CodeGen::setLocation(const SourceLoc &loc) {
  if (sp_ && loc.isKnown())
    b_.SetCurrentDebugLocation(llvm::DILocation::get(ctx_, loc.line, loc.column, sp_));
}

bool CodeGen::emitModule(const std::string &stem) {
  beginDebugInfo();
  emitGrid(stem + "_grid");
  emitProgram(stem + "_program");
  new llvm::GlobalVariable(module_, b_.getInt64Ty(), true,
                           llvm::GlobalValue::ExternalLinkage,
                           b_.getInt64(kernel_.scratchBytes), stem + "_scratch");
  dib_->finalize();
  std::string err;
  llvm::raw_string_ostream os(err);
  if (llvm::verifyModule(module_, &os)) {
    diags_.error(kernel_.loc, "internal error: generated LLVM IR is invalid: " + os.str());
    return false;
  }
  return !failed_;
}

//===----------------------------------------------------------------------===//
// Ops
//===----------------------------------------------------------------------===//

llvm::Value *CodeGen::scalar(const ir::Value *v) {
  auto it = scalars_.find(v);
  assert(it != scalars_.end() && "scalar used before its definition");
  return it->second;
}

void CodeGen::emitBlock(const ir::Block &block) {
  // A spread prefetch waits for an op of its own block; what no op took is
  // requested at the block's end.
  std::deque<PendingPrefetch> outer = std::move(waiting_);
  waiting_.clear();
  for (const auto &op : block.ops())
    if (op->kind() != OpKind::Yield)
      emitOp(*op);
  for (; !waiting_.empty(); waiting_.pop_front()) {
    prefetch_ = std::move(waiting_.front());
    flushPrefetch();
  }
  waiting_ = std::move(outer);
}

void CodeGen::emitOp(const ir::Op &op) {
  setLocation(op.loc());
  if (ir::isElementwise(op.kind())) {
    // Scalar ops (tile ones were fused by the pass pipeline).
    if (op.result()->type().isTile()) {
      diags_.error(op.loc(), "internal error: unfused elementwise tile op reached codegen");
      failed_ = true;
      return;
    }
    std::vector<llvm::Value *> x;
    for (const ir::Value *v : op.operands())
      x.push_back(scalar(v));
    scalars_[op.result()] = emitElementwise(op, x, 1);
    return;
  }
  switch (op.kind()) {
  case OpKind::Constant:
  case OpKind::ConstParam: {
    ScalarKind k = op.result()->type().elem();
    scalars_[op.result()] = constantOf(k, op.attrs().floatValue,
                                       op.kind() == OpKind::ConstParam || !ir::isFloat(k)
                                           ? op.attrs().intValue
                                           : 0,
                                       1);
    return;
  }
  case OpKind::ProgramId:
  case OpKind::NumPrograms:
    scalars_[op.result()] = b_.CreateLoad(
        b_.getInt64Ty(),
        b_.CreateGEP(b_.getInt64Ty(), op.kind() == OpKind::ProgramId ? pid_ : nprog_,
                     i64(op.attrs().axis)));
    return;
  case OpKind::Dim:
  case OpKind::Stride: {
    const TensorInfo &t = tensors_[op.operand(0)];
    scalars_[op.result()] = op.kind() == OpKind::Dim ? t.sizes[op.attrs().axis]
                                                    : t.strides[op.attrs().axis];
    return;
  }
  case OpKind::Fused:
    emitFused(op);
    flushPrefetch();
    return;
  case OpKind::Splat:
    emitSplat(op);
    return;
  case OpKind::Iota:
  case OpKind::Broadcast:
  case OpKind::Reshape:
  case OpKind::Transpose:
    emitShapeOp(op);
    return;
  case OpKind::Reduce:
    emitReduce(op);
    return;
  case OpKind::Mma:
    emitMma(op);
    flushPrefetch();
    return;
  case OpKind::Prefetch:
    emitPrefetch(op);
    return;
  case OpKind::Load:
  case OpKind::Store:
    emitLoadStore(op);
    return;
  case OpKind::Gather:
  case OpKind::Scatter:
    emitGatherScatter(op);
    return;
  case OpKind::CheckBounds:
    emitCheckBounds(op);
    break;
  case OpKind::LoadScalar:
  case OpKind::StoreScalar:
    emitScalarMemory(op);
    return;
  case OpKind::For:
    emitFor(op);
    return;
  case OpKind::If:
    emitIf(op);
    return;
  default:
    diags_.error(op.loc(), std::string("internal error: codegen does not handle '") +
                               ir::mnemonic(op.kind()) + "'");
    failed_ = true;
  }
}

//===----------------------------------------------------------------------===//
// Control flow
//===----------------------------------------------------------------------===//

void CodeGen::emitFor(const ir::Op &op) {
  const ir::Block &body = *op.block(0);
  unsigned n = op.numResults();
  // Tile iteration values start in their block arguments' buffers.
  std::vector<std::pair<const ir::Value *, const ir::Value *>> moves;
  for (unsigned i = 0; i < n; ++i)
    if (op.result(i)->type().isTile())
      moves.push_back({op.operand(3 + i), body.argument(1 + i)});
  copyBuffersInParallel(moves);
  llvm::Value *lb = scalar(op.operand(0)), *ub = scalar(op.operand(1)),
              *step = scalar(op.operand(2));
  // The trip count, without overflow: ub > lb and step > 0 ?
  // (ub - lb - 1) / step + 1 : 0, in unsigned arithmetic (the difference of
  // two i64 values fits in u64). The loop counts iterations, so that iv
  // never has to step past ub (near INT64_MAX it would wrap).
  llvm::Value *runs = b_.CreateAnd(b_.CreateICmpSGT(ub, lb), b_.CreateICmpSGT(step, i64(0)));
  llvm::Value *safeStep = b_.CreateSelect(b_.CreateICmpSGT(step, i64(0)), step, i64(1));
  llvm::Value *trips = b_.CreateSelect(
      runs,
      b_.CreateAdd(b_.CreateUDiv(b_.CreateSub(b_.CreateSub(ub, lb), i64(1)), safeStep), i64(1)),
      i64(0), "trips");
  // The preheader: a block of its own, so that work hoisted out of the
  // loop (atPreheader) can be appended to it later.
  auto *pre = llvm::BasicBlock::Create(ctx_, "for.pre", fn_);
  b_.CreateBr(pre);
  b_.SetInsertPoint(pre);
  auto *header = llvm::BasicBlock::Create(ctx_, "for", fn_);
  auto *bodyBB = llvm::BasicBlock::Create(ctx_, "for.body", fn_);
  auto *exit = llvm::BasicBlock::Create(ctx_, "for.exit", fn_);
  b_.CreateBr(header);
  b_.SetInsertPoint(header);
  llvm::PHINode *iv = b_.CreatePHI(b_.getInt64Ty(), 2, "iv");
  iv->addIncoming(lb, pre);
  llvm::PHINode *k = b_.CreatePHI(b_.getInt64Ty(), 2, "k");
  k->addIncoming(i64(0), pre);
  std::vector<llvm::PHINode *> phis(n, nullptr);
  for (unsigned i = 0; i < n; ++i)
    if (!op.result(i)->type().isTile()) {
      phis[i] = b_.CreatePHI(valueType(op.result(i)->type().elem()), 2);
      phis[i]->addIncoming(scalar(op.operand(3 + i)), pre);
      scalars_[body.argument(1 + i)] = phis[i];
    }
  b_.CreateCondBr(b_.CreateICmpULT(k, trips), bodyBB, exit);
  b_.SetInsertPoint(bodyBB);
  scalars_[body.argument(0)] = iv;
  loops_.push_back({&op, pre, header});
  emitBlock(body);
  loops_.pop_back();
  // The yield assigns every iteration value at once (`yield %b, %a` swaps).
  const ir::Op *y = body.terminator();
  moves.clear();
  for (unsigned i = 0; i < n; ++i) {
    if (op.result(i)->type().isTile())
      moves.push_back({y->operand(i), body.argument(1 + i)});
    else
      phis[i]->addIncoming(scalar(y->operand(i)), b_.GetInsertBlock());
  }
  copyBuffersInParallel(moves);
  // iv + step wraps only after the last iteration, where it is not used.
  iv->addIncoming(b_.CreateAdd(iv, step), b_.GetInsertBlock());
  k->addIncoming(b_.CreateAdd(k, i64(1), "", /*HasNUW=*/true), b_.GetInsertBlock());
  b_.CreateBr(header);
  b_.SetInsertPoint(exit);
  for (unsigned i = 0; i < n; ++i) {
    if (op.result(i)->type().isTile())
      copyBuffer(body.argument(1 + i), op.result(i));
    else
      scalars_[op.result(i)] = phis[i];
  }
}

void CodeGen::atPreheader(int li, const std::function<void()> &body) {
  LoopRecord &loop = loops_[static_cast<size_t>(li)];
  llvm::IRBuilderBase::InsertPointGuard guard(b_);
  loop.tail->getTerminator()->eraseFromParent();
  b_.SetInsertPoint(loop.tail);
  body();
  llvm::BasicBlock *end = b_.GetInsertBlock();
  b_.CreateBr(loop.header);
  if (end != loop.tail) {
    loop.header->replacePhiUsesWith(loop.tail, end);
    loop.tail = end;
  }
}

void CodeGen::emitIf(const ir::Op &op) {
  auto *thenBB = llvm::BasicBlock::Create(ctx_, "then", fn_);
  auto *elseBB = llvm::BasicBlock::Create(ctx_, "else", fn_);
  auto *join = llvm::BasicBlock::Create(ctx_, "endif", fn_);
  b_.CreateCondBr(scalar(op.operand(0)), thenBB, elseBB);
  std::vector<std::pair<llvm::Value *, llvm::BasicBlock *>> incoming[2];
  for (unsigned bi = 0; bi < 2; ++bi) {
    b_.SetInsertPoint(bi == 0 ? thenBB : elseBB);
    const ir::Block &blk = *op.block(bi);
    emitBlock(blk);
    if (const ir::Op *y = blk.terminator()) {
      std::vector<std::pair<const ir::Value *, const ir::Value *>> moves;
      for (unsigned i = 0; i < op.numResults(); ++i) {
        if (op.result(i)->type().isTile())
          moves.push_back({y->operand(i), op.result(i)});
        else
          incoming[bi].push_back({scalar(y->operand(i)), b_.GetInsertBlock()});
      }
      copyBuffersInParallel(moves);
    }
    b_.CreateBr(join);
  }
  b_.SetInsertPoint(join);
  unsigned s = 0;
  for (unsigned i = 0; i < op.numResults(); ++i) {
    if (op.result(i)->type().isTile())
      continue;
    llvm::PHINode *phi = b_.CreatePHI(valueType(op.result(i)->type().elem()), 2);
    phi->addIncoming(incoming[0][s].first, incoming[0][s].second);
    phi->addIncoming(incoming[1][s].first, incoming[1][s].second);
    scalars_[op.result(i)] = phi;
    ++s;
  }
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
  const ir::Op *d = v->definingOp();
  if (!d || d->numBlocks() || d->numResults() != 1 || !v->type().isScalar())
    return false;
  switch (d->kind()) {
  case OpKind::Constant:
  case OpKind::ConstParam:
  case OpKind::ProgramId:
  case OpKind::NumPrograms:
  case OpKind::Dim:
  case OpKind::Stride:
    break;
  default:
    if (!ir::isElementwise(d->kind()))
      return false; // memory (load_scalar) or control: not here
  }
  for (const ir::Value *o : d->operands())
    if (!o->type().isTensor() && !emitScalarEarly(o))
      return false;
  emitOp(*d);
  return true;
}

llvm::Value *CodeGen::regionsApart(const ir::Op &load, const ir::Op &store) {
  unsigned rank = load.operand(0)->type().rank();
  for (unsigned d = 0; d < rank; ++d)
    if (!emitScalarEarly(store.operand(1 + d)))
      return nullptr;
  const ir::Type &lt = load.result()->type(), &st = store.operand(1 + rank)->type();
  std::vector<int64_t> le = ir::regionExtents(rank, lt), se = ir::regionExtents(rank, st);
  // Used only where both tiles lie inside the tensor (the fast paths), so
  // no sum below wraps.
  llvm::Value *apart = b_.getFalse(), *same = b_.getInt1(lt.shape() == st.shape());
  for (unsigned d = 0; d < rank; ++d) {
    llvm::Value *l = scalar(load.operand(1 + d)), *s = scalar(store.operand(1 + d));
    apart = b_.CreateOr(apart, b_.CreateICmpSLE(b_.CreateAdd(l, i64(le[d])), s));
    apart = b_.CreateOr(apart, b_.CreateICmpSLE(b_.CreateAdd(s, i64(se[d])), l));
    same = b_.CreateAnd(same, b_.CreateICmpEQ(l, s));
  }
  return b_.CreateOr(apart, same, "regions.apart");
}

llvm::Function *CodeGen::rowMoveFunction(ScalarKind kind, bool isLoad, RowMask how) {
  // Pure data movement: elements move as integers of their width (f16, bf16,
  // i16 and u16 share one function, and no half-precision lanes need
  // legalising).
  unsigned eb = ir::byteWidth(kind);
  ScalarKind k = eb == 1 ? ScalarKind::U8 : eb == 2 ? ScalarKind::U16
               : eb == 4 ? ScalarKind::U32 : ScalarKind::I64;
  llvm::Function *&fn = rowMoves_[{static_cast<int>(eb), isLoad, static_cast<int>(how)}];
  if (fn)
    return fn;
  bool masked = how == RowMask::Lanes, rowMasked = how == RowMask::Rows;
  // void (ptr buf, ptr data, i64 rowStride, i64 rows, i64 row0, i64 rowSize,
  //       i64 first, i64 size, i64 n, i1 ok[, other][, ptr mask])
  // moves a [rows, n] tile: tile element (t, j) is tensor element (row0 + t,
  // first + j) of the 2-D slice at `data` (element (0, 0) of the slice, rows
  // rowStride apart, rowSize rows of size columns). Elements outside the
  // slice, or every element when !ok, read `other` (loads) or are not written
  // (stores); so do elements whose byte of `mask` ([rows, n]) is 0 (Lanes),
  // and whole rows whose first byte is 0 (Rows).
  auto *ptr = b_.getPtrTy();
  auto *i64t = b_.getInt64Ty();
  std::vector<llvm::Type *> params = {ptr, ptr, i64t, i64t, i64t, i64t,
                                      i64t, i64t, i64t, b_.getInt1Ty()};
  if (isLoad)
    params.push_back(memType(k));
  if (how != RowMask::None)
    params.push_back(ptr);
  auto *ft = llvm::FunctionType::get(b_.getVoidTy(), params, false);
  fn = llvm::Function::Create(ft, llvm::Function::InternalLinkage,
                              std::string(isLoad ? "tile.rows.load" : "tile.rows.store") +
                                  (masked      ? ".masked.b"
                                   : rowMasked ? ".rowmasked.b"
                                               : ".b") +
                                  std::to_string(8 * eb),
                              module_);
  fn->addFnAttr(llvm::Attribute::NoUnwind);
  fn->addFnAttr("target-cpu", target_.cpu);
  fn->addFnAttr("target-features", target_.features);

  llvm::Function *savedFn = fn_;
  llvm::DISubprogram *savedSp = sp_;
  llvm::IRBuilderBase::InsertPointGuard guard(b_);
  fn_ = fn;
  // A helper shared by every access has no source location of its own.
  sp_ = nullptr;
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
  fn_ = savedFn;
  sp_ = savedSp;
  return fn;
}

void CodeGen::emitPartialRows(bool isLoad, const TensorInfo &t,
                              const std::vector<llvm::Value *> &off,
                              const std::vector<int64_t> &shape, llvm::Value *buf,
                              llvm::Value *other, llvm::Value *mask, RowMask how) {
  ScalarKind k = t.elem;
  unsigned rank = t.sizes.size(), r = shape.size(), lead = rank - r;
  llvm::Function *rowFn = rowMoveFunction(k, isLoad, mask ? how : RowMask::None);
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
  if (!offsetSlot_)
    offsetSlot_ = allocaEntry(i64t, rt::kMaxRank);
  for (unsigned d = 0; d < rank; ++d)
    b_.CreateStore(off[d], b_.CreateGEP(i64t, offsetSlot_, i64(d)));
  llvm::GlobalVariable *&shapeGV = tileShapes_[shape];
  if (!shapeGV) {
    std::vector<llvm::Constant *> dims;
    for (int64_t e : shape)
      dims.push_back(b_.getInt64(e));
    auto *shapeTy = llvm::ArrayType::get(i64t, dims.size());
    shapeGV = new llvm::GlobalVariable(module_, shapeTy, true, llvm::GlobalValue::PrivateLinkage,
                                       llvm::ConstantArray::get(shapeTy, dims), "tile.shape");
    shapeGV->setUnnamedAddr(llvm::GlobalValue::UnnamedAddr::Global);
  }
  llvm::Value *maskArg = mask ? mask : llvm::ConstantPointerNull::get(ptr);
  std::vector<llvm::Value *> args = {buf, t.desc, i64(rank), offsetSlot_, shapeGV,
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

void CodeGen::emitCopyRows(const ir::Op &copyTo, const TensorInfo &t, unsigned lead,
                           llvm::Value *globalBase, const TensorInfo *copyDst,
                           llvm::Value *copyBase, const std::vector<int64_t> &shape) {
  const ScalarKind k = t.elem;
  const unsigned r = shape.size(), eb = ir::byteWidth(k);
  std::vector<int64_t> outer(shape.begin(), shape.end() - 1);
  unsigned dlead = copyDst->sizes.size() - r;
  // One run-time test per tile decides between streamed and plain rows.
  llvm::Value *streamOk =
      streamable(copyTo, copyBase, *copyDst, dlead, globalBase, &t, lead, shape, eb);
  emitEitherWay(streamOk, [&](bool stream) {
    // memmove: a kernel may copy a tensor onto itself, shifted.
    auto copyRow = [&](llvm::Value *dst, llvm::Value *src) {
      emitRowCopy(dst, src, shape.back() * eb, eb, stream, /*mayOverlap=*/true);
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

void CodeGen::emitSlowMove(const ir::Op &op, const TensorInfo &t,
                           const std::vector<llvm::Value *> &off,
                           const std::vector<int64_t> &shape, llvm::Value *buf,
                           const ir::Value *mask) {
  const bool isLoad = op.kind() == OpKind::Load;
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

void CodeGen::emitLoadStore(const ir::Op &op) {
  bool isLoad = op.kind() == OpKind::Load;
  const TensorInfo &t = tensors_[op.operand(0)];
  unsigned rank = t.sizes.size();
  const ir::Value *tile = isLoad ? op.result() : op.operand(1 + rank);
  const ir::Value *mask = op.attrs().hasMask ? op.operand(op.numOperands() - 1) : nullptr;
  const std::vector<int64_t> &shape = tile->type().shape();
  unsigned r = shape.size(), lead = rank - r;
  ScalarKind k = t.elem;
  std::vector<llvm::Value *> off;
  for (unsigned d = 0; d < rank; ++d)
    off.push_back(scalar(op.operand(1 + d)));
  llvm::Value *buf = bufferOf(tile);
  llvm::Value *lin = i64(0);
  for (unsigned d = 0; d < rank; ++d)
    lin = b_.CreateAdd(lin, b_.CreateMul(off[d], t.strides[d]));

  // A load read in place by its one user (a fused loop or an mma), or a
  // store whose producer already wrote the in-bounds case, skips the copy
  // through the buffer (forward-tiles decided).
  const ir::Op *user = isLoad ? uses_->singleUser(tile) : nullptr;
  bool forwardLoad = isLoad && op.attrs().forward;
  llvm::Value *storeDone = nullptr;
  if (!isLoad) {
    auto it = forwardedStores_.find(&op);
    if (it != forwardedStores_.end())
      storeDone = it->second;
  }

  // A load stored once, unchanged, right away (a tile copy): when both
  // tiles are whole and contiguous, rows go from tensor to tensor and the
  // store is done; otherwise both take their own paths through the buffer.
  const ir::Op *copyTo = isLoad && op.attrs().copy ? forwardedStore(op) : nullptr;

  // A store of the same tensor that this load feeds (as its value, or
  // through the fused loop reading it in place) with offsets not known at
  // compile time (overlap = checked): the fast path reads in place only when
  // the two regions are apart or the same; otherwise the load goes through
  // its buffer, whole, before anything is written.
  llvm::Value *apart = nullptr;
  const ir::Op *checkedStore = copyTo;
  if (forwardLoad && user->kind() == OpKind::Fused)
    checkedStore = uses_->singleUser(user->result());
  if (checkedStore && checkedStore->kind() == OpKind::Store &&
      checkedStore->operand(0) == op.operand(0) &&
      checkedStore->attrs().overlap == ir::Overlap::Checked) {
    apart = regionsApart(op, *checkedStore);
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
  const TensorInfo *copyDst = nullptr;
  if (copyTo) {
    copyDst = &tensors_[copyTo->operand(0)];
    unsigned drank = copyDst->sizes.size();
    std::vector<llvm::Value *> doff;
    llvm::Value *dlin = i64(0);
    for (unsigned d = 0; d < drank; ++d) {
      doff.push_back(scalar(copyTo->operand(1 + d)));
      dlin = b_.CreateAdd(dlin, b_.CreateMul(doff[d], copyDst->strides[d]));
    }
    inBounds = b_.CreateAnd(inBounds, tileInBounds(*copyDst, doff, shape));
    copyBase = elemPtr(k, copyDst->data, dlin);
    forwardedStores_[copyTo] = inBounds;
  }
  auto *fast = llvm::BasicBlock::Create(ctx_, isLoad ? "load.fast" : "store.fast", fn_);
  auto *slow = llvm::BasicBlock::Create(ctx_, isLoad ? "load.slow" : "store.slow", fn_);
  auto *done = llvm::BasicBlock::Create(ctx_, isLoad ? "load.done" : "store.done", fn_);
  b_.CreateCondBr(storeDone ? storeDone : inBounds, fast, slow);

  unsigned eb = ir::byteWidth(k);
  b_.SetInsertPoint(fast);
  llvm::Value *globalBase = elemPtr(k, t.data, lin);
  if (copyTo) {
    emitCopyRows(*copyTo, t, lead, globalBase, copyDst, copyBase, shape);
  } else if (!forwardLoad && !storeDone) {
    std::vector<int64_t> outer(shape.begin(), shape.end() - 1);
    int64_t rowBytes = shape.back() * eb;
    llvm::Value *streamOk =
        isLoad ? nullptr : streamable(op, globalBase, t, lead, nullptr, nullptr, 0, shape, eb);
    emitEitherWay(streamOk, [&](bool stream) {
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
          emitRowCopy(gp, lp, rowBytes, eb, stream, /*mayOverlap=*/false);
      });
    });
  }
  llvm::BasicBlock *fastEnd = b_.GetInsertBlock();
  b_.CreateBr(done);

  b_.SetInsertPoint(slow);
  emitSlowMove(op, t, off, shape, buf, mask);
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

//===----------------------------------------------------------------------===//
// Entry points
//===----------------------------------------------------------------------===//

std::unique_ptr<llvm::Module> lowerToLLVM(const ir::Kernel &kernel,
                                          llvm::LLVMContext &ctx,
                                          const TargetInfo &target,
                                          const std::string &symbolStem,
                                          DiagnosticEngine &diags) {
  if (!kernel.buffersPlanned) {
    diags.error(kernel.loc, "internal error: codegen needs planned buffers "
                            "(run the default pass pipeline)");
    return nullptr;
  }
  auto module = std::make_unique<llvm::Module>(kernel.name(), ctx);
  module->setTargetTriple(target.triple);
  CodeGen cg(kernel, ctx, *module, target, diags);
  if (!cg.emitModule(symbolStem))
    return nullptr;
  return module;
}

} // namespace tilejit::codegen
