//===- CodeGen.cpp - Tile IR to an llvm::Module ---------------------------===//
///
/// \file
/// Types and constants, buffers and loops, the kernel's functions, the op
/// dispatch, scalar ops and control flow. Data movement is in
/// CodeGenMemory.cpp, shape ops and reductions in CodeGenTile.cpp.
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
  return b_.CreateGEP(b_.getInt8Ty(), frame_.scratch, i64(v->bufferOffset()));
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
      emitInlineCopy(tmp, b_.CreateGEP(b_.getInt8Ty(), frame_.scratch, i64(m.from)), m.bytes);
      int64_t from = m.from;
      for (Move &o : pending)
        if (!o.fromTemp && o.from == from) {
          o.src = tmp;
          o.fromTemp = true;
        }
      continue;
    }
    const Move &m = pending[pick];
    llvm::Value *src = m.fromTemp ? m.src : b_.CreateGEP(b_.getInt8Ty(), frame_.scratch, i64(m.from));
    emitInlineCopy(b_.CreateGEP(b_.getInt8Ty(), frame_.scratch, i64(m.to)), src, m.bytes);
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
  frame_.offsetSlot = nullptr;
  frame_.pid = fn_->getArg(1);
  frame_.nprog = fn_->getArg(2);
  frame_.scratch = fn_->getArg(3);
  scalars_.clear();
  uses_.emplace(kernel_);
  loadTensors(fn_->getArg(0), false);
  emitBlock(kernel_.body());
  if (frame_.streamed)
    b_.CreateIntrinsic(llvm::Intrinsic::x86_sse_sfence, {}, {});
  b_.CreateRetVoid();
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
  frame_.scratch = llvm::ConstantPointerNull::get(b_.getPtrTy());
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
  debug_.builder = std::make_unique<llvm::DIBuilder>(module_);
  const SourceLoc &loc = kernel_.loc;
  std::string file =
      loc.isKnown() ? diags_.bufferName(loc.buffer).str() : kernel_.name();
  debug_.file = debug_.builder->createFile(file, ".");
  debug_.builder->createCompileUnit(llvm::dwarf::DW_LANG_C, debug_.file,
                                    "tilejit", /*isOptimized=*/true, "", 0, "",
                                    llvm::DICompileUnit::LineTablesOnly);
  module_.addModuleFlag(llvm::Module::Warning, "Debug Info Version",
                        llvm::DEBUG_METADATA_VERSION);
  module_.addModuleFlag(llvm::Module::Warning, "Dwarf Version", 5);
}

void CodeGen::attachSubprogram(const std::string &name) {
  const unsigned line = kernel_.loc.line;
  debug_.subprogram = debug_.builder->createFunction(
      debug_.file, name, name, debug_.file, line,
      debug_.builder->createSubroutineType(
          debug_.builder->getOrCreateTypeArray({})),
      line, llvm::DINode::FlagZero,
      llvm::DISubprogram::SPFlagDefinition |
          llvm::DISubprogram::SPFlagOptimized);
  fn_->setSubprogram(debug_.subprogram);
  b_.SetCurrentDebugLocation(
      llvm::DILocation::get(ctx_, line, kernel_.loc.column, debug_.subprogram));
}

void CodeGen::setLocation(const SourceLoc &loc) {
  if (debug_.subprogram && loc.isKnown())
    b_.SetCurrentDebugLocation(
        llvm::DILocation::get(ctx_, loc.line, loc.column, debug_.subprogram));
}

bool CodeGen::emitModule(const std::string &stem) {
  beginDebugInfo();
  emitGrid(stem + "_grid");
  emitProgram(stem + "_program");
  new llvm::GlobalVariable(module_, b_.getInt64Ty(), true,
                           llvm::GlobalValue::ExternalLinkage,
                           b_.getInt64(kernel_.scratchBytes), stem + "_scratch");
  debug_.builder->finalize();
  std::string err;
  llvm::raw_string_ostream os(err);
  if (llvm::verifyModule(module_, &os)) {
    diags_.error(kernel_.loc, "internal error: generated LLVM IR is invalid: " + os.str());
    return false;
  }
  return !failed_;
}

namespace {

/// Calls `f(width, isLoad, how)` for every row-move function a kernel can
/// declare: loads and stores of each element width, under each RowMask
/// select-moves can choose.
void forEachRowMove(const std::function<void(unsigned, bool, ir::RowMask)> &f) {
  for (unsigned width : {1u, 2u, 4u, 8u})
    for (bool isLoad : {true, false})
      for (ir::RowMask how : {ir::RowMask::None, ir::RowMask::Lanes, ir::RowMask::Rows})
        f(width, isLoad, how);
}

} // namespace

bool CodeGen::emitRuntimeLibrary(const std::string &only) {
  bool found = false;
  forEachRowMove([&](unsigned width, bool isLoad, RowMask how) {
    if (!only.empty() && rowMoveName(width, isLoad, how) != only)
      return;
    found = true;
    defineRowMove(declareRowMove(module_, width, isLoad, how), width, isLoad, how);
  });
  if (!found) {
    diags_.error(SourceLoc(), "internal error: no runtime library function '" + only + "'");
    return false;
  }
  std::string err;
  llvm::raw_string_ostream os(err);
  if (llvm::verifyModule(module_, &os)) {
    diags_.error(SourceLoc(), "internal error: the runtime library's LLVM IR is invalid: " +
                                  os.str());
    return false;
  }
  return true;
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
  std::deque<PendingPrefetch> outer = prefetches_.enterBlock();
  for (const auto &op : block.ops())
    if (op->kind() != OpKind::Yield)
      emitOp(*op);
  while (prefetches_.takeWaiting())
    flushPrefetch();
  prefetches_.leaveBlock(std::move(outer));
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
        b_.CreateGEP(b_.getInt64Ty(),
                     op.kind() == OpKind::ProgramId ? frame_.pid : frame_.nprog,
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
  case OpKind::Copy:
    emitCopy(op);
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

std::vector<std::string> runtimeLibraryFunctions() {
  std::vector<std::string> names;
  forEachRowMove([&](unsigned width, bool isLoad, ir::RowMask how) {
    names.push_back(rowMoveName(width, isLoad, how));
  });
  return names;
}

std::unique_ptr<llvm::Module> lowerRuntimeLibrary(llvm::LLVMContext &ctx,
                                                  const TargetInfo &target,
                                                  DiagnosticEngine &diags,
                                                  const std::string &only) {
  auto module = std::make_unique<llvm::Module>(only.empty() ? "tilejit.runtime" : only, ctx);
  module->setTargetTriple(target.triple);
  // The helpers read nothing of a kernel: an empty one stands in for the
  // CodeGen's.
  ir::Kernel none("tilejit.runtime");
  CodeGen cg(none, ctx, *module, target, diags);
  if (!cg.emitRuntimeLibrary(only))
    return nullptr;
  return module;
}

} // namespace tilejit::codegen
