//===- CodeGenMath.cpp - Vectorised exp and log polynomials ---------------===//
///
/// \file
/// exp and log on f32 (scalars or vectors) as straight-line polynomial code,
/// after Cephes' expf/logf: range reduction by ln 2 with a two-part constant
/// (Cody-Waite), then a degree-6 (exp) / degree-9 (log) minimax polynomial.
/// Measured over dense sweeps (tests/e2e/CodeGenMathTest.cpp) against double
/// precision: exp <= 2 ulp on [-87.3, 88.7] (normal results), log <= 2 ulp on
/// all positive normal and subnormal inputs. Special values: exp(-inf) = +0,
/// exp(x > 88.72) = +inf, exp(NaN) = NaN; log(0) = -inf, log(x < 0) = NaN,
/// log(+inf) = +inf, log(NaN) = NaN. exp results in the subnormal range are
/// scaled in two steps (correct to within 1 ulp of the subnormal spacing),
/// or on AVX-512 (16-lane vectors) in one `vscalefps`.
///
//===----------------------------------------------------------------------===//
#include "codegen/llvm/CodeGenImpl.h"

#include "llvm/IR/Intrinsics.h"
#include "llvm/IR/IntrinsicsX86.h"

#include <cmath>

namespace tilejit::codegen {

namespace {

/// Horner's rule with one fma per step; `coeffs` from the highest degree.
llvm::Value *poly(llvm::IRBuilder<> &b, llvm::Value *x,
                  llvm::ArrayRef<double> coeffs) {
  llvm::Type *t = x->getType();
  llvm::Value *acc = nullptr;
  for (double c : coeffs) {
    llvm::Value *cv = llvm::ConstantFP::get(t, c);
    acc = acc ? b.CreateIntrinsic(llvm::Intrinsic::fma, {t}, {acc, x, cv}) : cv;
  }
  return acc;
}

llvm::Value *fma(llvm::IRBuilder<> &b, llvm::Value *x, llvm::Value *y,
                 llvm::Value *z) {
  return b.CreateIntrinsic(llvm::Intrinsic::fma, {x->getType()}, {x, y, z});
}

/// The type with `t`'s lanes (a scalar or a fixed vector) of `elem`.
llvm::Type *withElement(llvm::Type *t, llvm::Type *elem) {
  if (auto *vt = llvm::dyn_cast<llvm::FixedVectorType>(t))
    return llvm::FixedVectorType::get(elem, vt->getNumElements());
  return elem;
}

/// x = 2^e (1 + f) with f in [sqrt(1/2) - 1, sqrt(2) - 1) (subnormal x
/// scaled by 2^23 first), z = f^2, and log(1 + f) = f - z/2 + cubic with
/// Cephes' logf polynomial.
struct LogReduction {
  llvm::Value *e, *f, *z, *cubic;
};

LogReduction reduceForLog(llvm::IRBuilder<> &b, llvm::Value *x) {
  llvm::Type *t = x->getType();
  llvm::Type *it = withElement(t, b.getInt32Ty());
  auto c = [&](double v) { return llvm::ConstantFP::get(t, v); };
  auto ci = [&](int v) { return llvm::ConstantInt::get(it, v, true); };
  llvm::Value *sub = b.CreateFCmpOLT(x, c(1.17549435e-38));
  llvm::Value *xs = b.CreateSelect(sub, b.CreateFMul(x, c(8388608.0)), x);
  llvm::Value *bits = b.CreateBitCast(xs, it);
  llvm::Value *e = b.CreateSub(b.CreateAnd(b.CreateLShr(bits, ci(23)), ci(0xff)), ci(126));
  e = b.CreateSub(e, b.CreateSelect(sub, ci(23), ci(0)));
  llvm::Value *m = b.CreateBitCast(
      b.CreateOr(b.CreateAnd(bits, ci(0x807fffff)), ci(0x3f000000)), t); // [0.5, 1)
  llvm::Value *ef = b.CreateSIToFP(e, t);
  llvm::Value *small = b.CreateFCmpOLT(m, c(0.707106781186547524));
  ef = b.CreateSelect(small, b.CreateFSub(ef, c(1.0)), ef);
  llvm::Value *f = b.CreateSelect(small, b.CreateFSub(b.CreateFAdd(m, m), c(1.0)),
                                  b.CreateFSub(m, c(1.0)));
  llvm::Value *z = b.CreateFMul(f, f);
  llvm::Value *p = poly(b, f, {7.0376836292E-2, -1.1514610310E-1, 1.1676998740E-1,
                               -1.2420140846E-1, 1.4249322787E-1, -1.6668057665E-1,
                               2.0000714765E-1, -2.4999993993E-1, 3.3333331174E-1});
  return {ef, f, z, b.CreateFMul(b.CreateFMul(p, f), z)};
}

/// log at 0, below 0, at +inf and NaN.
llvm::Value *logSpecials(llvm::IRBuilder<> &b, llvm::Value *x, llvm::Value *res) {
  llvm::Type *t = x->getType();
  auto c = [&](double v) { return llvm::ConstantFP::get(t, v); };
  res = b.CreateSelect(b.CreateFCmpOEQ(x, c(INFINITY)), c(INFINITY), res);
  res = b.CreateSelect(b.CreateFCmpOEQ(x, c(0.0)), c(-INFINITY), res);
  res = b.CreateSelect(b.CreateFCmpOLT(x, c(0.0)), c(NAN), res);
  return b.CreateSelect(b.CreateFCmpUNO(x, x), x, res);
}

} // namespace

//===----------------------------------------------------------------------===//
// exp
//===----------------------------------------------------------------------===//

bool CodeGen::scalesInOneStep(llvm::Type *t) const {
  auto *vt = llvm::dyn_cast<llvm::FixedVectorType>(t);
  return vt && target_.vectorBits == 512 && vt->getNumElements() == 16;
}

llvm::Value *CodeGen::scaleByPowerOfTwo(llvm::Value *y, llvm::Value *n) {
  auto &b = b_;
  llvm::Type *t = y->getType();
  if (scalesInOneStep(t)) {
    // AVX-512: vscalefps forms y * 2^n with one rounding, into the
    // subnormals and out to +inf or +0.
    return b.CreateIntrinsic(llvm::Intrinsic::x86_avx512_mask_scalef_ps_512, {},
                             {y, n, llvm::PoisonValue::get(t), b.getInt16(0xffff),
                              b.getInt32(4)}); // all lanes, the current rounding
  }
  // n split in two halves, each 2^half a normal number, so subnormal
  // results are reachable with one rounding (y * 2^n1 is exact).
  llvm::Type *it = withElement(t, b.getInt32Ty());
  auto ci = [&](int v) { return llvm::ConstantInt::get(it, v, true); };
  llvm::Value *ni = b.CreateFPToSI(n, it);
  llvm::Value *n1 = b.CreateAShr(ni, ci(1));
  llvm::Value *n2 = b.CreateSub(ni, n1);
  auto pow2 = [&](llvm::Value *e) {
    return b.CreateBitCast(b.CreateShl(b.CreateAdd(e, ci(127)), ci(23)), t);
  };
  return b.CreateFMul(b.CreateFMul(y, pow2(n1)), pow2(n2));
}

llvm::Value *CodeGen::emitExp(llvm::Value *x) {
  auto &b = b_;
  llvm::Type *t = x->getType();
  auto c = [&](double v) { return llvm::ConstantFP::get(t, v); };
  // Clamp so the reduction stays finite; specials are patched at the end.
  // Compare-and-select (one vmaxps/vminps each; maxnum/minnum would add
  // NaN fix-ups: a NaN x is patched at the end anyway).
  llvm::Value *xc = b.CreateSelect(b.CreateFCmpOLT(x, c(-104.0)), c(-104.0), x);
  xc = b.CreateSelect(b.CreateFCmpOGT(xc, c(89.0)), c(89.0), xc);
  llvm::Value *n = b.CreateUnaryIntrinsic(llvm::Intrinsic::roundeven,
                                          b.CreateFMul(xc, c(1.44269504088896341)));
  // r = x - n*ln2 in two steps (0.693359375 is exact in few bits).
  llvm::Value *r = fma(b, n, c(-0.693359375), xc);
  r = fma(b, n, c(2.12194440e-4), r);
  llvm::Value *p = poly(b, r, {1.9875691500E-4, 1.3981999507E-3, 8.3334519073E-3,
                               4.1665795894E-2, 1.6666665459E-1, 5.0000001201E-1});
  llvm::Value *r2 = b.CreateFMul(r, r);
  llvm::Value *y = fma(b, p, r2, r);
  y = b.CreateFAdd(y, c(1.0));
  y = scaleByPowerOfTwo(y, n);
  if (!scalesInOneStep(t)) {
    // vscalefps reaches +inf and +0 by itself (x clamped to [-104, 89]
    // gives n in [-150, 128]: y * 2^-150 < 2^-150 rounds to 0, y * 2^128
    // overflows); the two steps get the edges from these selects.
    y = b.CreateSelect(b.CreateFCmpOGT(x, c(88.72283905206835)), c(INFINITY), y);
    y = b.CreateSelect(b.CreateFCmpOLT(x, c(-103.97207708)), c(0.0), y);
  }
  return b.CreateSelect(b.CreateFCmpUNO(x, x), x, y);
}

//===----------------------------------------------------------------------===//
// log
//===----------------------------------------------------------------------===//

llvm::Value *CodeGen::emitLog(llvm::Value *x) {
  auto &b = b_;
  llvm::Type *t = x->getType();
  auto c = [&](double v) { return llvm::ConstantFP::get(t, v); };
  LogReduction lr = reduceForLog(b, x);
  llvm::Value *y = fma(b, lr.e, c(-2.12194440e-4), lr.cubic);
  y = fma(b, lr.z, c(-0.5), y);
  llvm::Value *res = b.CreateFAdd(lr.f, y);
  res = fma(b, lr.e, c(0.693359375), res);
  return logSpecials(b, x, res);
}

} // namespace tilejit::codegen
