//===- CodeGenMath.cpp - Vectorised transcendental functions --------------===//
///
/// \file
/// The vector unit's math on f32 scalars or vectors as straight-line code,
/// never a call into libm: each function reduces its argument to a short
/// interval, evaluates a polynomial there with one fma per step, and patches
/// the special values with selects at the end.
///
/// - exp and log after Cephes' expf/logf: range reduction by ln 2 with a
///   two-part constant (Cody-Waite), then a degree-6 (exp) / degree-9 (log)
///   minimax polynomial. exp results in the subnormal range are scaled in two
///   steps, or on AVX-512 (16-lane vectors) in one `vscalefps`.
/// - exp2: x = n + r with |r| <= 1/2 (exact), Cephes' exp2f polynomial for
///   2^r, scaled by 2^n as in exp.
/// - log2: log's reduction and polynomial, the sum f + v (v the small part
///   of log(1 + f)), its product with log2(e) and the exponent added to it
///   each carried as a pair of f32 (an exact sum or product and its error),
///   rounded once at the end.
/// - tanh: Cephes' odd polynomial below 0.625, 1 - 2 / (exp(2|x|) + 1) above;
///   sigmoid: 1 / (1 + exp(-x)) for x >= 0 and exp(x) / (1 + exp(x)) below,
///   the quotient corrected for the roundings of 1 + e and of itself; erf:
///   Cephes' x P(x^2) below 1, 1 - erfc(|x|) above with erfc(x) = exp(-x^2)
///   / x * P(1 / x^2) (Cephes' erfcf), where exp(-x^2) gets the rounding
///   error of x^2 back through an fma.
///
/// The error bounds tests/e2e/CodeGenMathTest.cpp asserts against double
/// precision libm (dense sweeps, AVX2 and AVX-512, vector and scalar code;
/// docs/dsl.md section 6.1 lists them with the maxima measured):
///   exp   2 ulp on [-87.3, 88.7] (normal results)
///   log   2 ulp on all positive inputs, subnormals included
///   exp2  1 ulp where the result is normal
///   log2  1 ulp on all positive inputs, subnormals included
///   tanh, sigmoid, erf  2 ulp on every finite input (normal results)
/// Subnormal results of exp, exp2, sigmoid and erf are within 1 subnormal
/// step (2^-149).
///
/// Special values: NaN in, NaN out; exp(-inf) = exp2(-inf) = +0, overflow =
/// +inf; log and log2: log(0) = -inf, log(x < 0) = NaN, log(+inf) = +inf;
/// tanh(+-inf) = +-1 and tanh saturates to +-1 without NaN; sigmoid(-inf) =
/// 0, sigmoid(+inf) = 1; erf(+-inf) = +-1; tanh and erf keep the sign of 0.
///
//===----------------------------------------------------------------------===//
#include "codegen/llvm/CodeGenImpl.h"

#include "llvm/IR/Intrinsics.h"
#include "llvm/IR/IntrinsicsX86.h"

#include <cmath>
#include <iterator>
#include <numbers>

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
/// Cephes' logf polynomial: the reduction log and log2 share.
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

/// log and log2 at 0, below 0, at +inf and NaN.
llvm::Value *logSpecials(llvm::IRBuilder<> &b, llvm::Value *x, llvm::Value *res) {
  llvm::Type *t = x->getType();
  auto c = [&](double v) { return llvm::ConstantFP::get(t, v); };
  res = b.CreateSelect(b.CreateFCmpOEQ(x, c(INFINITY)), c(INFINITY), res);
  res = b.CreateSelect(b.CreateFCmpOEQ(x, c(0.0)), c(-INFINITY), res);
  res = b.CreateSelect(b.CreateFCmpOLT(x, c(0.0)), c(NAN), res);
  return b.CreateSelect(b.CreateFCmpUNO(x, x), x, res);
}

/// `magnitude` with the sign of `x` (both f32).
llvm::Value *withSignOf(llvm::IRBuilder<> &b, llvm::Value *magnitude, llvm::Value *x) {
  return b.CreateBinaryIntrinsic(llvm::Intrinsic::copysign, magnitude, x);
}

} // namespace

//===----------------------------------------------------------------------===//
// exp, exp2
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

llvm::Value *CodeGen::emitExp2(llvm::Value *x) {
  auto &b = b_;
  llvm::Type *t = x->getType();
  auto c = [&](double v) { return llvm::ConstantFP::get(t, v); };
  // Clamped to [-152, 129], where 2^n (with r = 0) is already 0 or +inf
  // after the one rounding of the scaling: +-inf need no select.
  llvm::Value *xc = b.CreateSelect(b.CreateFCmpOLT(x, c(-152.0)), c(-152.0), x);
  xc = b.CreateSelect(b.CreateFCmpOGT(xc, c(129.0)), c(129.0), xc);
  llvm::Value *n = b.CreateUnaryIntrinsic(llvm::Intrinsic::roundeven, xc);
  llvm::Value *r = b.CreateFSub(xc, n); // exact, |r| <= 1/2
  llvm::Value *p = poly(b, r, {1.535336188319500E-4, 1.339887440266574E-3,
                               9.618437357674640E-3, 5.550332471162809E-2,
                               2.402264791363012E-1, 6.931472028550421E-1});
  llvm::Value *y = fma(b, r, p, c(1.0));
  y = scaleByPowerOfTwo(y, n);
  return b.CreateSelect(b.CreateFCmpUNO(x, x), x, y);
}

//===----------------------------------------------------------------------===//
// log, log2
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

llvm::Value *CodeGen::emitLog2(llvm::Value *x) {
  auto &b = b_;
  llvm::Type *t = x->getType();
  auto c = [&](double v) { return llvm::ConstantFP::get(t, v); };
  auto neg = [&](llvm::Value *v) { return b.CreateFNeg(v); };
  LogReduction lr = reduceForLog(b, x);
  // log(1 + f) = f + v with v = cubic - f^2/2, f^2 taken exactly (z + zlo),
  // as the pair s + serr (Fast2Sum: |f| > |v|). Times log2(e) = lhi + llo
  // as ph + pl, and e + ph as r1 + err1: log2(x) = r1 + (err1 + pl) rounds
  // once at the end. Summing the parts in f32 (Cephes' log2f) reaches 1.3
  // ulp where the result is just below a power of two.
  llvm::Value *zlo = fma(b, lr.f, lr.f, neg(lr.z));
  llvm::Value *v = fma(b, lr.z, c(-0.5), lr.cubic);
  v = fma(b, zlo, c(-0.5), v);
  llvm::Value *s = b.CreateFAdd(lr.f, v);
  llvm::Value *serr = b.CreateFAdd(b.CreateFSub(lr.f, s), v);
  constexpr double log2e = std::numbers::log2e;
  constexpr double lhi = static_cast<float>(log2e);
  llvm::Value *ph = b.CreateFMul(s, c(lhi));
  llvm::Value *pl = fma(b, s, c(lhi), neg(ph));
  pl = fma(b, s, c(log2e - lhi), pl);
  pl = fma(b, serr, c(lhi), pl);
  llvm::Value *r1 = b.CreateFAdd(lr.e, ph); // |e| >= 1 > |ph|, or e = 0
  llvm::Value *err1 = b.CreateFAdd(b.CreateFSub(lr.e, r1), ph);
  llvm::Value *res = b.CreateFAdd(r1, b.CreateFAdd(err1, pl));
  return logSpecials(b, x, res);
}

//===----------------------------------------------------------------------===//
// tanh, sigmoid, erf
//===----------------------------------------------------------------------===//

llvm::Value *CodeGen::emitTanh(llvm::Value *x) {
  auto &b = b_;
  llvm::Type *t = x->getType();
  auto c = [&](double v) { return llvm::ConstantFP::get(t, v); };
  llvm::Value *a = b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x);
  // |x| < 0.625: x + x^3 P(x^2).
  llvm::Value *z = b.CreateFMul(x, x);
  llvm::Value *p = poly(b, z, {-5.70498872745E-3, 2.06390887954E-2, -5.37397155531E-2,
                               1.33314422036E-1, -3.33332819422E-1});
  llvm::Value *small = fma(b, b.CreateFMul(x, z), p, x);
  // Above: 1 - 2 / (exp(2|x|) + 1), which tends to 1 without a NaN: exp
  // overflows to +inf from |x| = 44.4 and 2 / inf = 0.
  llvm::Value *e = emitExp(b.CreateFAdd(a, a));
  llvm::Value *large = b.CreateFSub(c(1.0), b.CreateFDiv(c(2.0), b.CreateFAdd(e, c(1.0))));
  // The sign of x on both (the polynomial gives +0 for -0).
  llvm::Value *res =
      withSignOf(b, b.CreateSelect(b.CreateFCmpOLT(a, c(0.625)), small, large), x);
  return b.CreateSelect(b.CreateFCmpUNO(x, x), x, res);
}

llvm::Value *CodeGen::emitSigmoid(llvm::Value *x) {
  auto &b = b_;
  llvm::Type *t = x->getType();
  auto c = [&](double v) { return llvm::ConstantFP::get(t, v); };
  // e = exp(-|x|) never overflows; 1 / (1 + e) for x >= 0, e / (1 + e)
  // below (small results keep their precision, down to the subnormals
  // exp(x) reaches).
  llvm::Value *a = b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x);
  llvm::Value *e = emitExp(b.CreateFNeg(a));
  llvm::Value *num = b.CreateSelect(b.CreateFCmpOLT(x, c(0.0)), e, c(1.0));
  // 1 + e = s + err exactly (e <= 1); the quotient num / s is corrected for
  // err and for its own rounding by one remainder step. Rounding 1 + e
  // alone costs up to 1 ulp where e / (1 + e) is small.
  llvm::Value *s = b.CreateFAdd(c(1.0), e);
  llvm::Value *err = b.CreateFAdd(b.CreateFSub(c(1.0), s), e);
  llvm::Value *inv = b.CreateFDiv(c(1.0), s);
  llvm::Value *d = b.CreateFMul(num, inv);
  llvm::Value *rem = fma(b, b.CreateFNeg(d), s, num);
  rem = fma(b, b.CreateFNeg(d), err, rem);
  llvm::Value *res = fma(b, rem, inv, d);
  return b.CreateSelect(b.CreateFCmpUNO(x, x), x, res);
}

llvm::Value *CodeGen::emitErf(llvm::Value *x) {
  auto &b = b_;
  llvm::Type *t = x->getType();
  auto c = [&](double v) { return llvm::ConstantFP::get(t, v); };
  llvm::Value *a = b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x);
  // |x| < 1: x T(x^2) (odd), T's constant term (about 2/sqrt(pi)) in two
  // parts: x t0 + x (t0lo + x^2 T'(x^2)) rounds once at the end, where x
  // times t0 rounded to f32 would cost up to 2.3 ulp.
  constexpr double t0 = 1.128379165726710E0;
  constexpr double t0lo = t0 - static_cast<float>(t0);
  llvm::Value *z = b.CreateFMul(x, x);
  llvm::Value *tail = poly(b, z, {7.853861353153693E-5, -8.010193625184903E-4,
                                  5.188327685732524E-3, -2.685381193529856E-2,
                                  1.128358514861418E-1, -3.761262582423300E-1});
  tail = b.CreateFMul(x, fma(b, z, tail, c(t0lo)));
  llvm::Value *small = fma(b, x, c(t0), tail);
  // |x| >= 1: 1 - erfc(|x|), erfc(a) = exp(-a^2) / a * P(1 / a^2), P one of
  // two polynomials (a < 2, a >= 2) chosen per lane coefficient by
  // coefficient. From a = 4 on erf rounds to 1 (erfc(4) < 2^-26).
  llvm::Value *ac = b.CreateSelect(b.CreateFCmpOGT(a, c(4.0)), c(4.0), a);
  llvm::Value *q = b.CreateFDiv(c(1.0), ac);
  llvm::Value *w = b.CreateFMul(q, q);
  static const double near[] = {2.326819970068386E-2, -1.387039388740657E-1,
                                3.687424674597105E-1, -5.824733027278666E-1,
                                6.210004621745983E-1, -4.944515323274145E-1,
                                3.404879937665872E-1, -2.741127028184656E-1,
                                5.638259427386472E-1};
  static const double far[] = {0.0, -1.047766399936249E1, 1.297719955372516E1,
                               -7.495518717768503E0, 2.921019019210786E0,
                               -1.015265279202700E0, 4.218463358204948E-1,
                               -2.820767439740514E-1, 5.641895067754075E-1};
  llvm::Value *isNear = b.CreateFCmpOLT(ac, c(2.0));
  llvm::Value *p = nullptr;
  for (size_t i = 0; i < std::size(near); ++i) {
    llvm::Value *k = b.CreateSelect(isNear, c(near[i]), c(far[i]));
    p = p ? fma(b, p, w, k) : k;
  }
  // exp(-a^2) with a^2 = h + l exactly: exp(-h) (1 - l). Without l the
  // rounding of a^2 alone costs up to 2^-21 of erfc, 1.2 ulp of erf.
  llvm::Value *h = b.CreateFMul(ac, ac);
  llvm::Value *l = fma(b, ac, ac, b.CreateFNeg(h));
  llvm::Value *g = emitExp(b.CreateFNeg(h));
  g = fma(b, b.CreateFNeg(l), g, g);
  llvm::Value *erfc = b.CreateFMul(b.CreateFMul(g, q), p);
  llvm::Value *large = withSignOf(b, b.CreateFSub(c(1.0), erfc), x);
  llvm::Value *res = b.CreateSelect(b.CreateFCmpOLT(a, c(1.0)), small, large);
  return b.CreateSelect(b.CreateFCmpUNO(x, x), x, res);
}

} // namespace tilejit::codegen
