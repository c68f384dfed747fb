//===- CodeGenMath.cpp - Vectorised transcendental functions --------------===//
///
/// \file
/// The vector unit's math on f32 scalars or vectors as straight-line code,
/// never a call into libm: each function reduces its argument to a short
/// interval, evaluates a polynomial there with one fma per step, and patches
/// the special values with selects at the end.
///
/// In f32 lanes:
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
/// In f64 lanes (the conversions from f32 are exact, the one back rounds
/// once):
/// - sin and cos: the reduction x - n pi/2 must keep 24 significant bits of
///   a remainder that can be 2^-29 small, which f32 cannot hold. |x| < 2^28
///   reduces with pi/2 in two doubles and fma; lanes beyond take a branch to
///   Payne-Hanek's reduction (glibc's sinf: x's 24-bit significand times 96
///   bits of 2/pi chosen by its exponent, in 64-bit integers). Taylor
///   polynomials of degree 13 (sin) and 14 (cos) on |r| <= pi/4 + 2^-8.
/// - pow: 2^(y log2|x|) with log2 from 2 atanh((m-1)/(m+1)) (degree 17) and
///   2^f from its Taylor series (degree 10): near overflow y log2|x| is
///   about 128 and must be right to 2^-30 absolute, 7 bits more than f32.
///
/// The error bounds tests/e2e/CodeGenMathTest.cpp asserts against double
/// precision libm (dense sweeps, AVX2 and AVX-512, vector and scalar code;
/// docs/dsl.md section 6.1 lists them with the maxima measured):
///   exp   2 ulp on [-87.3, 88.7] (normal results)
///   log   2 ulp on all positive inputs, subnormals included
///   exp2  1 ulp where the result is normal
///   log2  1 ulp on all positive inputs, subnormals included
///   tanh, sigmoid, erf  2 ulp on every finite input (normal results)
///   sin, cos  0.51 ulp on every finite input
///   pow   0.51 ulp, subnormal results included (by the analysis above
///         0.5 + 2^-12; tested on a grid of base and exponent pairs)
/// Subnormal results of exp, exp2, sigmoid and erf are within 1 subnormal
/// step (2^-149).
///
/// Special values: NaN in, NaN out (except pow(x, 0) = pow(1, y) = 1);
/// exp(-inf) = exp2(-inf) = +0, overflow = +inf; log and log2: log(0) = -inf,
/// log(x < 0) = NaN, log(+inf) = +inf; tanh(+-inf) = +-1 and tanh saturates
/// to +-1 without NaN; sigmoid(-inf) = 0, sigmoid(+inf) = 1; erf(+-inf) =
/// +-1; sin and cos of +-inf are NaN; tanh, erf and sin keep the sign of 0.
/// pow follows C99's pow (Annex F) in every case: pow(x, +-0) = 1,
/// pow(1, y) = 1, pow(-1, +-inf) = 1, a finite x < 0 with a finite
/// non-integer y gives NaN, odd integer exponents keep the sign of x
/// (pow(-0, -3) = -inf, pow(-inf, 3) = -inf), |x| < 1 or > 1 to +-inf
/// gives 0 or +inf.
///
//===----------------------------------------------------------------------===//
#include "codegen/llvm/CodeGenImpl.h"

#include "llvm/IR/Intrinsics.h"
#include "llvm/IR/IntrinsicsX86.h"
#include "llvm/IR/MDBuilder.h"

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

/// Taylor coefficients in r^2, highest first: (-1)^k / (2k + odd)! for
/// k < count (cos with odd = 0, sin(r) / r with odd = 1).
std::vector<double> trigSeries(unsigned count, unsigned odd) {
  std::vector<double> c(count);
  double term = 1;
  for (unsigned k = 0; k < count; ++k) {
    if (k)
      term /= -double((2 * k + odd - 1) * (2 * k + odd));
    c[count - 1 - k] = term;
  }
  return c;
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

/// 2/pi in 32-bit windows 8 bits apart: entry i = floor(2/pi * 2^(8i + 8))
/// mod 2^32 (glibc's __inv_pio4). Entries k, k + 4 and k + 8 are 96
/// consecutive bits; an f32 of biased exponent E >= 128 needs those from
/// k = (E - 128) / 8 on.
constexpr uint32_t kTwoOverPiBits[24] = {
    0xa2,       0xa2f9,     0xa2f983,   0xa2f9836e, 0xf9836e4e, 0x836e4e44,
    0x6e4e4415, 0x4e441529, 0x441529fc, 0x1529fc27, 0x29fc2757, 0xfc2757d1,
    0x2757d1f5, 0x57d1f534, 0xd1f534dd, 0xf534ddc0, 0x34ddc0db, 0xddc0db62,
    0xc0db6295, 0xdb629599, 0x6295993c, 0x95993c43, 0x993c4390, 0x3c439041};

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

//===----------------------------------------------------------------------===//
// sin, cos
//===----------------------------------------------------------------------===//

std::pair<llvm::Value *, llvm::Value *>
CodeGen::reduceLargeAngles(llvm::Value *a, llvm::Value *large, llvm::Value *r,
                           llvm::Value *q) {
  auto &b = b_;
  llvm::Type *t = a->getType();
  llvm::Type *i32 = withElement(t, b.getInt32Ty());
  llvm::Type *i64 = withElement(t, b.getInt64Ty());
  llvm::Type *dt = r->getType();
  auto c32 = [&](uint32_t v) { return llvm::ConstantInt::get(i32, v); };
  auto c64 = [&](uint64_t v) { return llvm::ConstantInt::get(i64, v); };

  llvm::Value *any = t->isVectorTy() ? b.CreateOrReduce(large) : large;
  llvm::BasicBlock *from = b.GetInsertBlock();
  auto *slowBB = llvm::BasicBlock::Create(ctx_, "trig.large", fn_);
  auto *doneBB = llvm::BasicBlock::Create(ctx_, "trig.reduced", fn_);
  b.CreateCondBr(any, slowBB, doneBB,
                 llvm::MDBuilder(ctx_).createBranchWeights(1, 1 << 20));
  b.SetInsertPoint(slowBB);

  llvm::GlobalVariable *table = module_.getNamedGlobal("tj.two_over_pi");
  if (!table) {
    auto *tableTy = llvm::ArrayType::get(b.getInt32Ty(), std::size(kTwoOverPiBits));
    std::vector<llvm::Constant *> words;
    for (uint32_t w : kTwoOverPiBits)
      words.push_back(b.getInt32(w));
    table = new llvm::GlobalVariable(module_, tableTy, true,
                                     llvm::GlobalValue::PrivateLinkage,
                                     llvm::ConstantArray::get(tableTy, words),
                                     "tj.two_over_pi");
    table->setUnnamedAddr(llvm::GlobalValue::UnnamedAddr::Global);
  }
  // The significand m (24 bits, shifted by the exponent's low 3 bits) times
  // the 96 bits of 2/pi from its exponent's entry on gives a * 2/pi modulo
  // 4 in 2.62 fixed point (the bits above drop out modulo 4, those below
  // change it by less than 2^-62). Its nearest integer n is the quadrant,
  // the rest times pi/2 the remainder: at least 2^-29 for any f32, so 33 of
  // its 62 bits are significant.
  llvm::Value *xi = b.CreateBitCast(a, i32);
  llvm::Value *idx = b.CreateAnd(b.CreateLShr(xi, c32(26)), c32(15));
  llvm::Value *shift = b.CreateAnd(b.CreateLShr(xi, c32(23)), c32(7));
  llvm::Value *m =
      b.CreateShl(b.CreateOr(b.CreateAnd(xi, c32(0xffffff)), c32(0x800000)), shift);
  auto word = [&](uint32_t offset) -> llvm::Value * {
    llvm::Value *at = b.CreateGEP(b.getInt32Ty(), table, b.CreateAdd(idx, c32(offset)));
    if (t->isVectorTy())
      return b.CreateMaskedGather(i32, at, llvm::Align(4));
    return b.CreateLoad(b.getInt32Ty(), at);
  };
  llvm::Value *mz = b.CreateZExt(m, i64);
  llvm::Value *res0 = b.CreateShl(b.CreateZExt(b.CreateMul(m, word(0)), i64), c64(32));
  llvm::Value *res1 = b.CreateMul(mz, b.CreateZExt(word(4), i64));
  llvm::Value *res2 = b.CreateMul(mz, b.CreateZExt(word(8), i64));
  res0 = b.CreateAdd(b.CreateOr(b.CreateLShr(res2, c64(32)), res0), res1);
  llvm::Value *n = b.CreateLShr(b.CreateAdd(res0, c64(uint64_t(1) << 61)), c64(62));
  res0 = b.CreateSub(res0, b.CreateShl(n, c64(62))); // in [-2^61, 2^61)
  // To double through two exact 32-bit halves (AVX2 converts no i64).
  llvm::Value *hi = b.CreateSIToFP(b.CreateTrunc(b.CreateAShr(res0, c64(32)), i32), dt);
  llvm::Value *lo = b.CreateUIToFP(b.CreateTrunc(res0, i32), dt);
  llvm::Value *frac = fma(b, hi, llvm::ConstantFP::get(dt, 0x1p32), lo);
  llvm::Value *rs = b.CreateFMul(frac, llvm::ConstantFP::get(dt, 0x1.921fb54442d18p-62));
  llvm::Value *qs = b.CreateAnd(n, c64(3));
  llvm::Value *r2 = b.CreateSelect(large, rs, r);
  llvm::Value *q2 = b.CreateSelect(large, qs, q);
  llvm::BasicBlock *slowEnd = b.GetInsertBlock();
  b.CreateBr(doneBB);

  b.SetInsertPoint(doneBB);
  llvm::PHINode *rp = b.CreatePHI(dt, 2);
  rp->addIncoming(r, from);
  rp->addIncoming(r2, slowEnd);
  llvm::PHINode *qp = b.CreatePHI(i64, 2);
  qp->addIncoming(q, from);
  qp->addIncoming(q2, slowEnd);
  return {rp, qp};
}

llvm::Value *CodeGen::emitSinCos(llvm::Value *x, bool isCos) {
  auto &b = b_;
  llvm::Type *t = x->getType();
  llvm::Type *dt = withElement(t, b.getDoubleTy());
  llvm::Type *i64 = withElement(t, b.getInt64Ty());
  auto c = [&](double v) { return llvm::ConstantFP::get(t, v); };
  auto cd = [&](double v) { return llvm::ConstantFP::get(dt, v); };
  auto ci = [&](int64_t v) { return llvm::ConstantInt::get(i64, v, true); };
  // On |x| (sin is odd, cos even): no sign of zero to lose in the reduction.
  llvm::Value *a = b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x);
  llvm::Value *ad = b.CreateFPExt(a, dt);
  // n = round(a 2/pi) by the 1.5 * 2^52 shifter, whose low bits then hold n
  // (its quadrant in the last two); r = a - n pi/2 with pi/2 in two parts.
  // For a < 2^28 the error is below 2^-52 |r| + 2^-79, against |r| >= 2^-29.
  llvm::Value *k = fma(b, ad, cd(0x1.45f306dc9c883p-1), cd(0x1.8p52));
  llvm::Value *n = b.CreateFSub(k, cd(0x1.8p52));
  llvm::Value *r = fma(b, n, cd(-0x1.921fb54442d18p0), ad);
  r = fma(b, n, cd(-0x1.1a62633145c07p-54), r);
  llvm::Value *q = b.CreateAnd(b.CreateBitCast(k, i64), ci(3));
  llvm::Value *large =
      b.CreateAnd(b.CreateFCmpOGE(a, c(0x1p28)), b.CreateFCmpOLT(a, c(INFINITY)));
  std::tie(r, q) = reduceLargeAngles(a, large, r, q);

  // sin(r) and cos(r) on |r| <= pi/4 + 2^-8 (a rounded n): truncation
  // error below 2^-44 of the result.
  llvm::Value *z = b.CreateFMul(r, r);
  llvm::Value *s = b.CreateFMul(r, poly(b, z, trigSeries(7, 1)));
  llvm::Value *co = poly(b, z, trigSeries(8, 0));
  if (isCos)
    q = b.CreateAdd(q, ci(1)); // cos(a) = sin(a + pi/2)
  llvm::Value *swap = b.CreateICmpNE(b.CreateAnd(q, ci(1)), ci(0));
  llvm::Value *negate = b.CreateICmpNE(b.CreateAnd(q, ci(2)), ci(0));
  llvm::Value *res = b.CreateFPTrunc(b.CreateSelect(swap, co, s), t);
  if (!isCos) {
    llvm::Type *i32 = withElement(t, b.getInt32Ty());
    llvm::Value *signBit = b.CreateICmpSLT(b.CreateBitCast(x, i32),
                                           llvm::Constant::getNullValue(i32));
    negate = b.CreateXor(negate, signBit);
  }
  res = b.CreateSelect(negate, b.CreateFNeg(res), res);
  res = b.CreateSelect(b.CreateFCmpOEQ(a, c(INFINITY)), c(NAN), res);
  return b.CreateSelect(b.CreateFCmpUNO(x, x), x, res);
}

//===----------------------------------------------------------------------===//
// pow
//===----------------------------------------------------------------------===//

llvm::Value *CodeGen::emitPow(llvm::Value *x, llvm::Value *y) {
  auto &b = b_;
  llvm::Type *t = x->getType();
  llvm::Type *dt = withElement(t, b.getDoubleTy());
  llvm::Type *i32 = withElement(t, b.getInt32Ty());
  llvm::Type *i64 = withElement(t, b.getInt64Ty());
  auto c = [&](double v) { return llvm::ConstantFP::get(t, v); };
  auto cd = [&](double v) { return llvm::ConstantFP::get(dt, v); };
  auto ci = [&](int v) { return llvm::ConstantInt::get(i32, v, true); };

  // |x| = 2^e m with m in [sqrt(1/2), sqrt(2)), taken apart in f32 (the
  // subnormals scaled by 2^23 first).
  llvm::Value *a = b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x);
  llvm::Value *sub = b.CreateFCmpOLT(a, c(0x1p-126));
  llvm::Value *bits = b.CreateBitCast(b.CreateSelect(sub, b.CreateFMul(a, c(0x1p23)), a), i32);
  llvm::Value *e = b.CreateSub(b.CreateLShr(bits, ci(23)), b.CreateSelect(sub, ci(150), ci(127)));
  llvm::Value *m =
      b.CreateBitCast(b.CreateOr(b.CreateAnd(bits, ci(0x7fffff)), ci(0x3f800000)), t);
  llvm::Value *high = b.CreateFCmpOGT(m, c(std::numbers::sqrt2));
  m = b.CreateSelect(high, b.CreateFMul(m, c(0.5)), m);
  e = b.CreateSelect(high, b.CreateAdd(e, ci(1)), e);
  // log(m) = 2 atanh(s), s = (m - 1) / (m + 1), |s| <= 0.172: the series
  // to s^17 is within 2^-44 of it.
  llvm::Value *md = b.CreateFPExt(m, dt);
  llvm::Value *s = b.CreateFDiv(b.CreateFSub(md, cd(1.0)), b.CreateFAdd(md, cd(1.0)));
  llvm::Value *s2 = b.CreateFAdd(s, s);
  std::vector<double> atanhSeries;
  for (int k = 8; k >= 0; --k)
    atanhSeries.push_back(1.0 / (2 * k + 1));
  llvm::Value *lnm = b.CreateFMul(s2, poly(b, b.CreateFMul(s, s), atanhSeries));
  llvm::Value *lg = fma(b, lnm, cd(std::numbers::log2e), b.CreateSIToFP(e, dt));
  lg = b.CreateSelect(b.CreateFCmpOEQ(a, c(0.0)), cd(-INFINITY), lg);
  lg = b.CreateSelect(b.CreateFCmpOEQ(a, c(INFINITY)), cd(INFINITY), lg);

  // 2^w, w = y log2|x| clamped to [-160, 130] (beyond, the f32 result is 0
  // or +inf), as 2^n times the Taylor series of 2^f = e^(f ln 2), |f| <=
  // 1/2, to degree 10 (within 2^-42).
  llvm::Value *w = b.CreateFMul(b.CreateFPExt(y, dt), lg);
  w = b.CreateSelect(b.CreateFCmpOLT(w, cd(-160.0)), cd(-160.0), w);
  w = b.CreateSelect(b.CreateFCmpOGT(w, cd(130.0)), cd(130.0), w);
  llvm::Value *n = b.CreateUnaryIntrinsic(llvm::Intrinsic::roundeven, w);
  llvm::Value *f = b.CreateFSub(w, n);
  std::vector<double> expSeries(11);
  expSeries[10] = 1;
  for (int k = 1; k <= 10; ++k)
    expSeries[10 - k] = expSeries[11 - k] * std::numbers::ln2 / k;
  llvm::Value *pw = poly(b, f, expSeries);
  // 2^n, a normal double for n in [-160, 130]; via i32 (AVX2 converts no
  // double to i64).
  llvm::Value *ni = b.CreateSExt(b.CreateFPToSI(n, i32), i64);
  llvm::Value *scale = b.CreateBitCast(
      b.CreateShl(b.CreateAdd(ni, llvm::ConstantInt::get(i64, 1023)),
                  llvm::ConstantInt::get(i64, 52)),
      dt);
  llvm::Value *res = b.CreateFPTrunc(b.CreateFMul(pw, scale), t);

  // The sign and C's special cases.
  llvm::Value *yFloor = b.CreateUnaryIntrinsic(llvm::Intrinsic::floor, y);
  llvm::Value *yInteger = b.CreateFCmpOEQ(yFloor, y); // +-inf are even integers
  llvm::Value *yHalf = b.CreateFMul(y, c(0.5));
  llvm::Value *yOdd = b.CreateAnd(
      yInteger,
      b.CreateFCmpUNE(b.CreateUnaryIntrinsic(llvm::Intrinsic::floor, yHalf), yHalf));
  llvm::Value *xNegative = b.CreateICmpSLT(b.CreateBitCast(x, i32),
                                           llvm::Constant::getNullValue(i32));
  res = b.CreateSelect(b.CreateAnd(xNegative, yOdd), b.CreateFNeg(res), res);
  llvm::Value *finiteBelowZero =
      b.CreateAnd(b.CreateFCmpOLT(x, c(0.0)), b.CreateFCmpOGT(x, c(-INFINITY)));
  res = b.CreateSelect(b.CreateAnd(finiteBelowZero, b.CreateNot(yInteger)), c(NAN), res);
  res = b.CreateSelect(b.CreateFCmpUNO(x, y), b.CreateFAdd(x, y), res);
  llvm::Value *one = b.CreateOr(b.CreateFCmpOEQ(x, c(1.0)), b.CreateFCmpOEQ(y, c(0.0)));
  llvm::Value *minusOneToInf =
      b.CreateAnd(b.CreateFCmpOEQ(x, c(-1.0)),
                  b.CreateFCmpOEQ(b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, y),
                                  c(INFINITY)));
  return b.CreateSelect(b.CreateOr(one, minusOneToInf), c(1.0), res);
}

} // namespace tilejit::codegen
