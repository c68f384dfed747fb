//===- CodeGenElementwise.cpp - The vector unit: elementwise ops and fused loops ===//
///
/// \file
/// One emitter serves scalar ops (lanes = 1) and the bodies of `fused` ops,
/// which run as one loop nest over the result tile with explicit vectors of
/// the target's f32 lane count and a masked tail. Every op computes what
/// dsl/ir/ScalarSemantics.h computes for the constant folder, bit for bit:
/// `min`/`max` order -0 below +0 and give NaN when either operand is NaN
/// (LLVM's `minimum`/`maximum`, not `minnum`), a NaN arithmetic result is the
/// canonical quiet NaN where the op is marked `nan = canonical` (the
/// canonicalize-nan pass marks those whose NaN may be seen), and an integer
/// converts to f16/bf16 with one rounding.
///
//===----------------------------------------------------------------------===//
#include "codegen/llvm/CodeGenImpl.h"

#include "llvm/IR/Intrinsics.h"

namespace tilejit::codegen {

using ir::OpKind;
using ir::ScalarKind;

namespace {

/// i32 with as many lanes as `t`.
llvm::Type *int32Like(llvm::IRBuilder<> &b, llvm::Type *t) {
  if (auto *vt = llvm::dyn_cast<llvm::VectorType>(t))
    return llvm::VectorType::get(b.getInt32Ty(), vt->getElementCount());
  return b.getInt32Ty();
}

/// An integer (lanes of i32/u32/i64/u64, signedness `isSigned`) rounded
/// once, to nearest even, to `precision` significant bits, as an exact f32:
/// ScalarSemantics.h's roundMagnitude. Converting to f32 first and then to
/// f16/bf16 would round twice (16842753 -> 16842752 -> bf16 0x4b80, where the
/// nearest bf16 is 0x4b81).
llvm::Value *roundIntToPrecision(llvm::IRBuilder<> &b, llvm::Value *v, bool isSigned,
                                 unsigned precision, llvm::Type *f32) {
  llvm::Type *t = v->getType();
  unsigned width = t->getScalarSizeInBits();
  auto c = [&](uint64_t x) { return llvm::ConstantInt::get(t, x); };
  llvm::Value *zero = c(0);
  llvm::Value *negative = isSigned ? b.CreateICmpSLT(v, zero) : nullptr;
  // |INT_MIN| wraps to INT_MIN, whose unsigned reading is the magnitude.
  llvm::Value *m = isSigned ? b.CreateSelect(negative, b.CreateSub(zero, v), v) : v;
  llvm::Value *length = b.CreateSub(
      c(width), b.CreateBinaryIntrinsic(llvm::Intrinsic::ctlz, m, b.getFalse()));
  llvm::Value *inexact = b.CreateICmpUGT(length, c(precision));
  llvm::Value *shift = b.CreateSelect(inexact, b.CreateSub(length, c(precision)), zero);
  llvm::Value *q = b.CreateLShr(m, shift);
  llvm::Value *unit = b.CreateShl(c(1), shift);
  llvm::Value *rest = b.CreateAnd(m, b.CreateSub(unit, c(1)));
  llvm::Value *half = b.CreateLShr(unit, c(1));
  llvm::Value *odd = b.CreateICmpNE(b.CreateAnd(q, c(1)), zero);
  llvm::Value *up = b.CreateAnd(
      inexact, b.CreateOr(b.CreateICmpUGT(rest, half),
                          b.CreateAnd(b.CreateICmpEQ(rest, half), odd)));
  q = b.CreateAdd(q, b.CreateZExt(up, t));
  // q <= 2^precision and 2^shift <= 2^63: both exact in f32, and so is
  // their product.
  llvm::Value *f = b.CreateUIToFP(q, f32);
  llvm::Type *i32 = int32Like(b, f32);
  llvm::Value *e = b.CreateAdd(b.CreateTrunc(shift, i32), llvm::ConstantInt::get(i32, 127));
  llvm::Value *scale = b.CreateBitCast(b.CreateShl(e, llvm::ConstantInt::get(i32, 23)), f32);
  f = b.CreateFMul(f, scale);
  return isSigned ? b.CreateSelect(negative, b.CreateFNeg(f), f) : f;
}

} // namespace

/// Which NaN the hardware makes (x86: 0xffc00000 from non-NaN operands; the
/// first operand's of two) and which LLVM's folding makes (0x7fc00000)
/// differ, and instruction selection may swap commutative operands: only a
/// canonical result is the same in every build. The select is on the integer
/// bits, which no float simplification can see through.
llvm::Value *canonicalizeNaN(llvm::IRBuilder<> &b, llvm::Value *v) {
  llvm::Type *bitsType = int32Like(b, v->getType());
  llvm::Value *isNaN = b.CreateFCmpUNO(v, v);
  llvm::Value *bits = b.CreateBitCast(v, bitsType);
  llvm::Value *canonical = llvm::ConstantInt::get(bitsType, 0x7fc00000u);
  return b.CreateBitCast(b.CreateSelect(isNaN, canonical, bits), v->getType());
}

llvm::Value *CodeGen::emitCast(llvm::Value *v, ScalarKind from, ScalarKind to,
                               unsigned lanes) {
  if (from == to)
    return v;
  auto &b = b_;
  llvm::Type *f32 = vecType(ScalarKind::F32, lanes);
  llvm::Type *i32 = vecType(ScalarKind::I32, lanes);
  auto toF32 = [&](llvm::Value *x, ScalarKind k) -> llvm::Value * {
    switch (k) {
    case ScalarKind::F32: return x;
    case ScalarKind::F16: return b.CreateFPExt(x, f32);
    case ScalarKind::BF16:
      return b.CreateBitCast(b.CreateShl(b.CreateZExt(x, i32), 16), f32);
    case ScalarKind::I1: return b.CreateUIToFP(x, f32);
    default:
      return ir::isSigned(k) ? b.CreateSIToFP(x, f32) : b.CreateUIToFP(x, f32);
    }
  };
  if (to == ScalarKind::I1) {
    if (ir::isFloat(from))
      return b.CreateFCmpUNE(toF32(v, from), llvm::Constant::getNullValue(f32));
    return b.CreateICmpNE(v, llvm::Constant::getNullValue(v->getType()));
  }
  llvm::Type *dt = vecType(to, lanes);
  if (ir::isInteger(to) && (ir::isInteger(from) || from == ScalarKind::I1))
    return b.CreateIntCast(v, dt, ir::isSigned(from));
  if (ir::isInteger(to)) {
    llvm::Value *f = toF32(v, from);
    auto id = ir::isSigned(to) ? llvm::Intrinsic::fptosi_sat : llvm::Intrinsic::fptoui_sat;
    return b.CreateIntrinsic(id, {dt, f32}, {f});
  }
  llvm::Value *f;
  if ((to == ScalarKind::F16 || to == ScalarKind::BF16) && ir::isInteger(from) &&
      ir::bitWidth(from) > 16)
    f = roundIntToPrecision(b, v, ir::isSigned(from), to == ScalarKind::F16 ? 11 : 8, f32);
  else
    f = toF32(v, from);
  switch (to) {
  case ScalarKind::F32:
    return f;
  case ScalarKind::F16:
    return b.CreateFPTrunc(f, dt);
  case ScalarKind::BF16: {
    // Round to nearest even on the bits; NaN stays NaN (quiet bit set).
    llvm::Value *bits = b.CreateBitCast(f, i32);
    llvm::Value *lsb = b.CreateAnd(b.CreateLShr(bits, 16), llvm::ConstantInt::get(i32, 1));
    llvm::Value *rounded = b.CreateLShr(
        b.CreateAdd(b.CreateAdd(bits, llvm::ConstantInt::get(i32, 0x7fff)), lsb), 16);
    llvm::Value *nan = b.CreateOr(b.CreateLShr(bits, 16), llvm::ConstantInt::get(i32, 0x40));
    llvm::Value *isNan = b.CreateFCmpUNO(f, f);
    return b.CreateTrunc(b.CreateSelect(isNan, nan, rounded), dt);
  }
  default:
    break;
  }
  return nullptr;
}

llvm::Value *CodeGen::emitElementwise(const ir::Op &op,
                                      llvm::ArrayRef<llvm::Value *> x,
                                      unsigned lanes) {
  llvm::Value *r = [&]() -> llvm::Value * {
    auto &b = b_;
    ScalarKind k = op.result()->type().elem();
    ScalarKind ok = op.numOperands() ? op.operand(0)->type().elem() : k;
    // `cmp` and `select` look at their operands' kind.
    ScalarKind ak = op.kind() == OpKind::Select ? k : ok;
    bool isF = ir::isFloat(ak);
    bool sgn = ir::isSigned(ak);
    llvm::Type *ty = x.empty() ? vecType(k, lanes) : x.back()->getType();
    auto zero = [&](llvm::Type *t) { return llvm::Constant::getNullValue(t); };
    switch (op.kind()) {
    case OpKind::Add: return isF ? b.CreateFAdd(x[0], x[1]) : b.CreateAdd(x[0], x[1]);
    case OpKind::Sub: return isF ? b.CreateFSub(x[0], x[1]) : b.CreateSub(x[0], x[1]);
    case OpKind::Mul: return isF ? b.CreateFMul(x[0], x[1]) : b.CreateMul(x[0], x[1]);
    case OpKind::Div:
    case OpKind::Rem: {
      bool div = op.kind() == OpKind::Div;
      if (isF)
        return div ? b.CreateFDiv(x[0], x[1]) : b.CreateFRem(x[0], x[1]);
      // x / 0 = 0 and x % 0 = 0; INT_MIN / -1 wraps (never UB). The safe
      // divisor is frozen: where it is a select of a vector constant with a
      // zero lane (`iota / select(m, iota, 0)`), LLVM 19's InstCombine folds
      // the division into the select's arms and gets the guarded lanes
      // wrong (it gave `iota`, or zeros); a freeze stops that fold
      // (fuzz/difftest/regressions/mismatch-interp-179587802500473.tile).
      llvm::Value *isZero = b.CreateICmpEQ(x[1], zero(ty));
      llvm::Value *d = b.CreateOr(x[1], b.CreateZExt(isZero, ty)); // 0 -> 1
      if (!sgn) {
        d = b.CreateFreeze(d);
        llvm::Value *q = div ? b.CreateUDiv(x[0], d) : b.CreateURem(x[0], d);
        return b.CreateSelect(isZero, zero(ty), q);
      }
      llvm::Value *isMinus1 = b.CreateICmpEQ(x[1], llvm::Constant::getAllOnesValue(ty));
      d = b.CreateFreeze(b.CreateAdd(d, b.CreateShl(b.CreateZExt(isMinus1, ty), 1))); // -1 -> 1
      llvm::Value *q = div ? b.CreateSDiv(x[0], d) : b.CreateSRem(x[0], d);
      llvm::Value *m1 = div ? b.CreateSub(zero(ty), x[0]) : zero(ty);
      return b.CreateSelect(isZero, zero(ty), b.CreateSelect(isMinus1, m1, q));
    }
    case OpKind::Min:
    case OpKind::Max: {
      bool mn = op.kind() == OpKind::Min;
      if (isF)
        return b.CreateBinaryIntrinsic(mn ? llvm::Intrinsic::minimum : llvm::Intrinsic::maximum,
                                       x[0], x[1]);
      if (ak == ScalarKind::I1)
        return mn ? b.CreateAnd(x[0], x[1]) : b.CreateOr(x[0], x[1]);
      auto id = mn ? (sgn ? llvm::Intrinsic::smin : llvm::Intrinsic::umin)
                   : (sgn ? llvm::Intrinsic::smax : llvm::Intrinsic::umax);
      return b.CreateBinaryIntrinsic(id, x[0], x[1]);
    }
    case OpKind::And: return b.CreateAnd(x[0], x[1]);
    case OpKind::Or: return b.CreateOr(x[0], x[1]);
    case OpKind::Xor: return b.CreateXor(x[0], x[1]);
    case OpKind::Shl:
    case OpKind::Shr: {
      unsigned bits = ir::bitWidth(ak);
      llvm::Value *amt = b.CreateAnd(x[1], llvm::ConstantInt::get(ty, bits - 1));
      if (op.kind() == OpKind::Shl)
        return b.CreateShl(x[0], amt);
      return sgn ? b.CreateAShr(x[0], amt) : b.CreateLShr(x[0], amt);
    }
    case OpKind::Cmp: {
      using P = llvm::CmpInst::Predicate;
      static const P fp[] = {P::FCMP_OEQ, P::FCMP_UNE, P::FCMP_OLT,
                             P::FCMP_OLE, P::FCMP_OGT, P::FCMP_OGE};
      static const P sp[] = {P::ICMP_EQ, P::ICMP_NE, P::ICMP_SLT,
                             P::ICMP_SLE, P::ICMP_SGT, P::ICMP_SGE};
      static const P up[] = {P::ICMP_EQ, P::ICMP_NE, P::ICMP_ULT,
                             P::ICMP_ULE, P::ICMP_UGT, P::ICMP_UGE};
      unsigned pi = static_cast<unsigned>(op.attrs().predicate);
      if (ak == ScalarKind::F16 || ak == ScalarKind::BF16)
        return b.CreateFCmp(fp[pi], emitCast(x[0], ak, ScalarKind::F32, lanes),
                            emitCast(x[1], ak, ScalarKind::F32, lanes));
      if (isF)
        return b.CreateFCmp(fp[pi], x[0], x[1]);
      return b.CreateICmp(sgn ? sp[pi] : up[pi], x[0], x[1]);
    }
    case OpKind::Select: return b.CreateSelect(x[0], x[1], x[2]);
    case OpKind::Fma:
      return b.CreateIntrinsic(llvm::Intrinsic::fma, {ty}, {x[0], x[1], x[2]});
    case OpKind::Neg: return isF ? b.CreateFNeg(x[0]) : b.CreateSub(zero(ty), x[0]);
    case OpKind::Abs:
      if (isF)
        return b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x[0]);
      if (!sgn)
        return x[0];
      return b.CreateBinaryIntrinsic(llvm::Intrinsic::abs, x[0], b.getFalse());
    case OpKind::Exp: return emitExp(x[0]);
    case OpKind::Log: return emitLog(x[0]);
    case OpKind::Exp2: return emitExp2(x[0]);
    case OpKind::Log2: return emitLog2(x[0]);
    case OpKind::Tanh: return emitTanh(x[0]);
    case OpKind::Sigmoid: return emitSigmoid(x[0]);
    case OpKind::Erf: return emitErf(x[0]);
    case OpKind::Sin: return emitSinCos(x[0], false);
    case OpKind::Cos: return emitSinCos(x[0], true);
    case OpKind::Pow: return emitPow(x[0], x[1]);
    case OpKind::Sqrt: return b.CreateUnaryIntrinsic(llvm::Intrinsic::sqrt, x[0]);
    case OpKind::Rsqrt:
      return b.CreateFDiv(llvm::ConstantFP::get(ty, 1.0),
                          b.CreateUnaryIntrinsic(llvm::Intrinsic::sqrt, x[0]));
    case OpKind::Floor:
    case OpKind::Ceil:
    case OpKind::Round: {
      if (!isF)
        return x[0];
      auto id = op.kind() == OpKind::Floor  ? llvm::Intrinsic::floor
                : op.kind() == OpKind::Ceil ? llvm::Intrinsic::ceil
                                            : llvm::Intrinsic::roundeven;
      return b.CreateUnaryIntrinsic(id, x[0]);
    }
    case OpKind::Not: return b.CreateNot(x[0]);
    case OpKind::Cast: return emitCast(x[0], ok, k, lanes);
    case OpKind::Bitcast:
      return b.CreateBitCast(x[0], vecType(k, lanes));
    case OpKind::Constant:
      return constantOf(k, op.attrs().floatValue, op.attrs().intValue, lanes);
    default:
      break;
    }
    diags_.error(op.loc(), std::string("internal error: no vector form of '") +
                               ir::mnemonic(op.kind()) + "'");
    failed_ = true;
    return llvm::UndefValue::get(vecType(k, lanes));
  }();
  // Only where the canonicalize-nan pass found the NaN's bits may be seen:
  // elsewhere only whether the result is NaN matters, which its bits do not
  // change.
  if (op.attrs().canonicalNaN && ir::isFloat(op.result()->type().elem()) &&
      ir::isFloatArithmetic(op.kind()))
    return canonicalizeNaN(b_, r);
  return r;
}

void CodeGen::emitSplat(const ir::Op &op) {
  const ir::Value *res = op.result();
  // The accumulator of an mma marked acc_splat, its one reader: the mma
  // starts from the value itself.
  if (const ir::Op *user = uses_->singleUser(res); user && user->kind() == OpKind::Mma &&
                                                   user->attrs().accSplat &&
                                                   user->operand(2) == res)
    return;
  ScalarKind k = res->type().elem();
  int64_t n = res->type().numElements();
  llvm::Value *v = splat(scalar(op.operand(0)), lanes_);
  llvm::Value *dst = bufferOf(res);
  int64_t full = n / lanes_ * lanes_;
  if (full > 0)
    emitLoop(i64(0), i64(full), lanes_, [&](llvm::Value *i) {
      storeElems(k, v, elemPtr(k, dst, i), lanes_, nullptr);
    });
  if (full < n)
    storeElems(k, v, elemPtr(k, dst, i64(full)), lanes_,
               prefixMask(static_cast<unsigned>(n - full), lanes_));
}

void CodeGen::emitFused(const ir::Op &op) {
  const ir::Value *res = op.result();
  const ir::Block &body = *op.block(0);
  const std::vector<int64_t> &shape = res->type().shape();
  unsigned L = lanes_;
  ScalarKind rk = res->type().elem();

  // Where the result goes: straight into the tensor when the only consumer is
  // the next store and the tile is in bounds, else the result's buffer.
  Forwarded out;
  if (const ir::Op *st = forwardedStore(op)) {
    const TensorInfo &t = tensors_[st->operand(0)];
    unsigned rank = t.sizes.size(), lead = rank - shape.size();
    std::vector<llvm::Value *> off;
    llvm::Value *lin = i64(0);
    for (unsigned d = 0; d < rank; ++d) {
      off.push_back(scalar(st->operand(1 + d)));
      lin = b_.CreateAdd(lin, b_.CreateMul(off.back(), t.strides[d]));
    }
    llvm::Value *in = tileInBounds(t, off, shape);
    Forwarded buf = accessOf(res);
    out.base = b_.CreateSelect(in, elemPtr(rk, t.data, lin), buf.base);
    for (size_t d = 0; d < shape.size(); ++d)
      out.strides.push_back(b_.CreateSelect(in, t.strides[lead + d], buf.strides[d]));
    forwardedStores_[st] = in;
  } else {
    out = accessOf(res);
  }

  struct Input {
    const ir::Value *v;
    llvm::Value *splatValue = nullptr;
    Forwarded at;
    std::vector<bool> broadcast; ///< per axis: size 1 against a larger result
    bool perRow = true; ///< one value per row (a scalar, or one element wide)
  };
  std::vector<Input> inputs;
  for (const ir::Value *in : op.operands()) {
    Input i{in, nullptr, {}, {}};
    if (!in->type().isTile()) {
      i.splatValue = splat(scalar(in), L);
    } else {
      i.at = accessOf(in);
      for (size_t d = 0; d < shape.size(); ++d)
        i.broadcast.push_back(in->type().shape()[d] == 1 && shape[d] != 1);
      i.perRow = in->type().shape().back() == 1;
    }
    inputs.push_back(std::move(i));
  }
  unsigned r = shape.size();
  int64_t n = shape.back();
  // Per row of the result (the outer indices): where each input's row starts,
  // or its value when it is one element per row (splat once, outside the
  // vector loop), and where the result's row starts. The vector loop then
  // only adds `j` to loop-invariant row pointers: without this, every input
  // kept a base pointer and a row offset live (twice the registers, reloaded
  // from the stack in loops reading eight tiles).
  struct Row {
    std::vector<llvm::Value *> at; ///< per input: row pointer or splat value
    llvm::Value *out = nullptr;
  };
  auto rowOf = [&](const std::vector<llvm::Value *> &outer) {
    Row row;
    for (const Input &in : inputs) {
      if (in.splatValue) {
        row.at.push_back(in.splatValue);
        continue;
      }
      ScalarKind ek = in.v->type().elem();
      llvm::Value *base = i64(0);
      for (unsigned d = 0; d + 1 < r; ++d)
        if (!in.broadcast[d])
          base = b_.CreateAdd(base, b_.CreateMul(outer[d], in.at.strides[d]));
      llvm::Value *ptr = elemPtr(ek, in.at.base, base);
      if (in.perRow)
        row.at.push_back(splat(loadElems(ek, ptr, 1, nullptr), L));
      else
        row.at.push_back(ptr);
    }
    llvm::Value *idx = i64(0);
    for (unsigned d = 0; d + 1 < r; ++d)
      idx = b_.CreateAdd(idx, b_.CreateMul(outer[d], out.strides[d]));
    row.out = elemPtr(rk, out.base, idx);
    return row;
  };
  auto chunk = [&](const Row &row, const std::vector<llvm::Value *> &outer,
                   llvm::Value *j, unsigned cnt) {
    llvm::Value *mask = cnt < L ? prefixMask(cnt, L) : nullptr;
    llvm::DenseMap<const ir::Value *, llvm::Value *> vals;
    for (unsigned a = 0; a < inputs.size(); ++a) {
      const Input &in = inputs[a];
      if (in.perRow) {
        vals[body.argument(a)] = row.at[a];
        continue;
      }
      ScalarKind ek = in.v->type().elem();
      vals[body.argument(a)] = loadElems(ek, elemPtr(ek, row.at[a], j), L, mask);
    }
    for (const auto &inner : body.ops()) {
      if (inner->kind() == OpKind::Yield) {
        storeElems(rk, vals[inner->operand(0)], elemPtr(rk, row.out, j), L, mask);
        break;
      }
      if (inner->kind() == OpKind::Iota) {
        // The index of each lane's element along the axis.
        unsigned axis = static_cast<unsigned>(inner->attrs().axis);
        llvm::Value *idx;
        if (axis + 1 == r) {
          std::vector<llvm::Constant *> lanes;
          for (unsigned l = 0; l < L; ++l)
            lanes.push_back(b_.getInt64(l));
          idx = b_.CreateAdd(splat(j, L), llvm::ConstantVector::get(lanes));
        } else {
          idx = splat(outer[axis], L);
        }
        ScalarKind ek = inner->result()->type().elem();
        vals[inner->result()] = ek == ScalarKind::I64 ? idx : emitCast(idx, ScalarKind::I64, ek, L);
        continue;
      }
      std::vector<llvm::Value *> xs;
      for (const ir::Value *v : inner->operands())
        xs.push_back(vals[v]);
      vals[inner->result()] = emitElementwise(*inner, xs, L);
    }
  };
  std::vector<int64_t> outerShape(shape.begin(), shape.end() - 1);
  beginSpread(op);
  emitNest(outerShape, [&](const std::vector<llvm::Value *> &outer) {
    const Row row = rowOf(outer);
    int64_t full = n / L * L;
    if (full > 0)
      emitLoop(i64(0), i64(full), L, [&](llvm::Value *j) {
        spreadStep();
        chunk(row, outer, j, L);
      });
    if (full < n)
      chunk(row, outer, i64(full), static_cast<unsigned>(n - full));
  });
}

} // namespace tilejit::codegen
