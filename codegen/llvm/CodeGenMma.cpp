//===- CodeGenMma.cpp - The cube unit: a register-blocked FMA micro-kernel ===//
///
/// \file
/// `mma(a, b, acc)` lowers to the micro-kernel of the form select-mma chose
/// (`form`, `dpbf16`, `block`, `pack_a`/`pack_b`; codegen/passes/SelectMma.h
/// says when each is chosen and in which order it sums), after copying acc
/// into the result buffer. Operands are read with their row stride, from the
/// tensor where forward-tiles marked their load `forward`, else from their
/// buffer. What follows describes the micro-kernels.
///
/// - Broadcast form (b is [K, N]): for each MR x NR block of the result, MR x
///   (NR / lanes) accumulator vectors stay in registers over a K loop of
///   broadcast(a[m, k]) * b[k, n:n+lanes] FMAs, one fma per k in ascending k.
///   With few rows (M <= 8 on AVX-512, 4 on AVX2: decode attention's query
///   group) a is not re-read per block, so b's f16/bf16 rows are converted as
///   they are loaded and the block is widened to M rows x up to 24 (12)
///   accumulators; otherwise b is first packed to f32 (and transposed when
///   transB), amortising the conversion over the row blocks.
/// - Dot form (transB with few rows): b's rows are contiguous along K, as is
///   a; each result element is a dot product. M x R rows of b are multiplied
///   a vector of K at a time into M x R accumulators (lane l holds the k = l
///   mod lanes products, in ascending k); lanes rows' accumulators are then
///   reduced across lanes together by a halving tree of two-source shuffles
///   (one vector of lanes results per row of a) and added to acc. No
///   transposition and no packing of b. Where M x R accumulators fill the
///   lanes (M = 2, 4, 8 on AVX-512; 2, 4 on AVX2) the tree runs on each
///   pass's accumulators in registers and a block transpose sorts the sums
///   into rows; otherwise they go through a buffer, lanes rows at a time.
/// - bf16 x bf16 with few rows on AVX512-BF16: both forms sum pairs of
///   products with `vdpbf16ps`, no conversion: the dot form two k per lane
///   and step, the broadcast form k and k + 1 at once, b's two rows
///   interleaved (vpunpck{l,h}wd) and its accumulators kept in that order.
///
/// An mma marked `nan = canonical` (its result's NaN bits may be seen; the
/// canonicalize-nan pass) makes each NaN of the result the canonical quiet
/// NaN as it writes its final accumulators into the result (docs/dsl.md 5):
/// which NaN an FMA passes on depends on its operand order, which differs
/// between the forms and the targets. One compare and select per result
/// vector; the scratch sums and packed operands are left as they are.
///
//===----------------------------------------------------------------------===//
#include "codegen/llvm/CodeGenImpl.h"

#include "llvm/IR/Intrinsics.h"
#include "llvm/IR/IntrinsicsX86.h"

namespace tilejit::codegen {

using ir::ScalarKind;

namespace {

/// Row block and vector count per block for a target width.
struct Blocking {
  unsigned mr, nVecs;
};


} // namespace

void CodeGen::packOperand(const ir::Value *v, int64_t hoist,
                          const std::function<void(const Forwarded &)> &emit) {
  // Where the operand is is asked at the point of packing: a buffer's
  // address is computed where it is used. select-mma chose how many of the
  // loops around the mma the packing leaves (pack_a / pack_b).
  assert(hoist >= 0 && static_cast<size_t>(hoist) <= loops_.size());
  if (hoist > 0)
    atPreheader(static_cast<int>(loops_.size()) - static_cast<int>(hoist),
                [&] { emit(accessOf(v)); });
  else
    emit(accessOf(v));
}

void CodeGen::transposeVectorBlocks(std::vector<llvm::Value *> &v, unsigned blk) {
  const unsigned L = lanes_, n = static_cast<unsigned>(v.size());
  for (unsigned w = n / 2; w >= 1; w /= 2) {
    std::vector<int> lo(L), hi(L);
    for (unsigned c = 0; c < L; ++c) {
      bool upper = ((c / blk) & w) != 0;
      lo[c] = static_cast<int>(upper ? L + c - w * blk : c);
      hi[c] = static_cast<int>(upper ? L + c : c + w * blk);
    }
    for (unsigned i = 0; i < n; ++i) {
      if (i & w)
        continue;
      llvm::Value *x0 = b_.CreateShuffleVector(v[i], v[i | w], lo);
      llvm::Value *x1 = b_.CreateShuffleVector(v[i], v[i | w], hi);
      v[i] = x0;
      v[i | w] = x1;
    }
  }
}

llvm::Value *CodeGen::accStart(const ir::Op &mma) {
  if (!mma.attrs().accSplat)
    return nullptr;
  return splat(scalar(mma.operand(2)->definingOp()->operand(0)), lanes_);
}

CodeGen::AccBlock CodeGen::loadAccumulators(llvm::Value *C, int64_t N, llvm::Value *m0,
                                            unsigned mr, llvm::Value *n0, int64_t cols,
                                            llvm::Value *start) {
  const unsigned L = lanes_;
  AccBlock a;
  a.nv = static_cast<unsigned>((cols + L - 1) / L);
  a.masks.assign(a.nv, nullptr);
  if (cols % L)
    a.masks[a.nv - 1] = prefixMask(static_cast<unsigned>(cols % L), L);
  for (unsigned m = 0; m < mr; ++m)
    for (unsigned v = 0; v < a.nv; ++v) {
      llvm::Value *idx = b_.CreateAdd(b_.CreateMul(b_.CreateAdd(m0, i64(m)), i64(N)),
                                      b_.CreateAdd(n0, i64(v * L)));
      a.ptr.push_back(b_.CreateGEP(b_.getFloatTy(), C, idx));
      a.init.push_back(start ? start : loadElems(ScalarKind::F32, a.ptr.back(), L, a.masks[v]));
    }
  return a;
}

void CodeGen::storeAccumulators(const AccBlock &acc, const std::vector<llvm::Value *> &out,
                                bool canonical) {
  for (size_t i = 0; i < out.size(); ++i)
    storeElems(ScalarKind::F32, canonical ? canonicalizeNaN(b_, out[i]) : out[i], acc.ptr[i],
               lanes_, acc.masks[i % acc.nv]);
}


llvm::Value *CodeGen::loadAsF32(ScalarKind kind, llvm::Value *base, llvm::Value *idx,
                               llvm::Value *mask) {
  llvm::Value *v = loadElems(kind, elemPtr(kind, base, idx), lanes_, mask);
  return kind == ScalarKind::F32 ? v : emitCast(v, kind, ScalarKind::F32, lanes_);
}

/// Converts a [rows, cols] tile of `kind` at `src` (rows `ld` apart) into
/// contiguous f32 at `dst`, a vector of lanes at a time.
void CodeGen::convertRowsToF32(ScalarKind kind, llvm::Value *src, llvm::Value *ld,
                                llvm::Value *dst, int64_t rows, int64_t cols) {
  auto &b = b_;
  const unsigned L = lanes_;
  llvm::Type *f32 = b.getFloatTy();
  auto loadF32 = [&](ScalarKind kind, llvm::Value *base, llvm::Value *idx, llvm::Value *mask) {
    return loadAsF32(kind, base, idx, mask);
  };
  emitLoop(i64(0), i64(rows), 1, [&](llvm::Value *row) {
    for (int64_t j = 0; j < cols; j += L) {
      unsigned cnt = static_cast<unsigned>(std::min<int64_t>(L, cols - j));
      llvm::Value *m = cnt < L ? prefixMask(cnt, L) : nullptr;
      llvm::Value *v = loadF32(kind, src, b.CreateAdd(b.CreateMul(row, ld), i64(j)), m);
      storeElems(ScalarKind::F32, v,
                 b.CreateGEP(f32, dst, b.CreateAdd(b.CreateMul(row, i64(cols)), i64(j))), L, m);
    }
  });
}

/// Transposes a [rows, cols] tile of `kind` at `src` (rows `ld` apart) into
/// contiguous f32 [cols, rows] at `dst`: lanes x lanes blocks go through
/// registers (transposeVectorBlocks with blocks of one lane), the ragged edges
/// element by element.
void CodeGen::transposeToF32(ScalarKind kind, llvm::Value *src, llvm::Value *ld,
                              llvm::Value *dst, int64_t rows, int64_t cols) {
  auto &b = b_;
  const unsigned L = lanes_;
  llvm::Type *f32 = b.getFloatTy();
  auto loadF32 = [&](ScalarKind kind, llvm::Value *base, llvm::Value *idx, llvm::Value *mask) {
    return loadAsF32(kind, base, idx, mask);
  };
  int64_t rFull = rows / L * L, cFull = cols / L * L;
  if (rFull > 0 && cFull > 0)
    emitLoop(i64(0), i64(rFull), L, [&](llvm::Value *r0) {
      emitLoop(i64(0), i64(cFull), L, [&](llvm::Value *c0) {
        std::vector<llvm::Value *> v(L);
        for (unsigned i = 0; i < L; ++i)
          v[i] = loadF32(kind, src, b.CreateAdd(b.CreateMul(b.CreateAdd(r0, i64(i)), ld), c0),
                         nullptr);
        transposeVectorBlocks(v, 1);
        for (unsigned i = 0; i < L; ++i) {
          llvm::Value *idx = b.CreateAdd(b.CreateMul(b.CreateAdd(c0, i64(i)), i64(rows)), r0);
          storeElems(ScalarKind::F32, v[i], b.CreateGEP(f32, dst, idx), L, nullptr);
        }
      });
    });
  auto scalarPart = [&](int64_t r0, int64_t r1, int64_t c0, int64_t c1) {
    if (r0 >= r1 || c0 >= c1)
      return;
    emitLoop(i64(r0), i64(r1), 1, [&](llvm::Value *r) {
      emitLoop(i64(c0), i64(c1), 1, [&](llvm::Value *c) {
        llvm::Value *x = emitCast(
            loadElems(kind, elemPtr(kind, src, b.CreateAdd(b.CreateMul(r, ld), c)), 1,
                      nullptr),
            kind, ScalarKind::F32, 1);
        b.CreateStore(x, b.CreateGEP(f32, dst, b.CreateAdd(b.CreateMul(c, i64(rows)), r)));
      });
    });
  };
  scalarPart(0, rFull, cFull, cols); // right edge of the blocked rows
  scalarPart(rFull, rows, 0, cols);  // bottom rows
}

std::vector<llvm::Value *> CodeGen::mmaKLoop(llvm::Value *lb, llvm::Value *ub, int64_t step,
                                             const std::vector<llvm::Value *> &init,
                                             const CarriedBody &body) {
  // Accumulators carried in registers, each iteration taking its share of a
  // spread prefetch (CodeGenPrefetch.cpp).
  return emitCarriedLoop("mma.k", lb, ub, step, init,
                         [&](llvm::Value *k, const std::vector<llvm::Value *> &cur) {
                           spreadStep();
                           return body(k, cur);
                         });
}

/// Sums each of L vectors across its lanes: lane i of the result holds
/// v[i]'s sum. Each level pairs vectors whose lanes form segments of s
/// lanes (one vector's partial sums per segment) and halves the segments;
/// every vector's lanes are added in the same order, wherever it stands.
llvm::Value *CodeGen::sumLanes(std::vector<llvm::Value *> v) {
  auto &b = b_;
  const unsigned L = lanes_;
  for (unsigned s = L; s > 1; s /= 2) {
    unsigned h = s / 2, segs = L / s;
    std::vector<int> lo(L), hi(L);
    for (unsigned o = 0; o < L; ++o) {
      unsigned seg = o / h, within = o % h;
      unsigned src = seg < segs ? seg * s + within : (seg - segs) * s + within + L;
      lo[o] = static_cast<int>(src);
      hi[o] = static_cast<int>(src + h);
    }
    std::vector<llvm::Value *> next;
    for (size_t i = 0; i + 1 < v.size(); i += 2)
      next.push_back(b.CreateFAdd(b.CreateShuffleVector(v[i], v[i + 1], lo),
                                  b.CreateShuffleVector(v[i], v[i + 1], hi)));
    v = next;
  }
  return v[0];
}

void CodeGen::emitMma(const ir::Op &op) {
  if (op.attrs().mmaForm == ir::MmaForm::None) {
    diags_.error(op.loc(), "internal error: mma without a form (run select-mma)");
    failed_ = true;
    return;
  }
  auto &b = b_;
  const ir::Value *a = op.operand(0), *bv = op.operand(1), *acc = op.operand(2);
  const ir::Value *res = op.result();
  bool ta = op.attrs().transA, tb = op.attrs().transB;
  int64_t M = res->type().shape()[0], N = res->type().shape()[1];
  int64_t K = ta ? a->type().shape()[0] : a->type().shape()[1];
  ScalarKind ka = a->type().elem(), kb = bv->type().elem();
  const unsigned L = lanes_;
  llvm::Type *f32 = b.getFloatTy();

  // Where the operands are (a forwarded load: in the tensor, else the
  // buffer); rows are contiguous either way.
  Forwarded fa = accessOf(a), fb = accessOf(bv);
  if (!op.attrs().accSplat) // else the splat wrote nothing: the form starts from its value
    copyBuffer(acc, res);
  llvm::Value *C = bufferOf(res);
  const bool canonical = op.attrs().canonicalNaN;
  if (K == 0) {
    if (!canonical)
      return;
    // The result is acc, its NaNs made canonical as any result.
    int64_t n = M * N, full = n / L * L;
    auto canonicalAt = [&](llvm::Value *i, llvm::Value *mask) {
      llvm::Value *p = elemPtr(ScalarKind::F32, C, i);
      storeElems(ScalarKind::F32,
                 canonicalizeNaN(b, loadElems(ScalarKind::F32, p, L, mask)), p, L, mask);
    };
    if (full > 0)
      emitLoop(i64(0), i64(full), L, [&](llvm::Value *i) { canonicalAt(i, nullptr); });
    if (full < n)
      canonicalAt(i64(full), prefixMask(static_cast<unsigned>(n - full), L));
    return;
  }

  // The form, the register block and the packing are select-mma's
  // (codegen/passes/SelectMma.h).
  const ir::OpAttrs &at = op.attrs();
  // Many rows, bf16 on both sides: pairs of k summed by `vdpbf16ps` or on
  // AMX tiles, over operands packed into pairs.
  if (at.mmaForm == ir::MmaForm::Bf16Pairs || at.mmaForm == ir::MmaForm::Amx) {
    emitMmaBf16Pairs(op, fa, C, M, N, K, at.mmaForm == ir::MmaForm::Amx);
    return;
  }
  // A as f32 [M, K], rows lda apart; packed when needed.
  llvm::Value *A = fa.base, *lda = fa.strides[0];
  if (at.packA >= 0) {
    llvm::Value *packed = allocaEntry(f32, M * K);
    packOperand(a, at.packA, [&](const Forwarded &f) {
      if (ta)
        transposeToF32(ka, f.base, f.strides[0], packed, K, M); // a is [K, M]
      else
        convertRowsToF32(ka, f.base, f.strides[0], packed, M, K);
    });
    A = packed;
    lda = i64(K);
  }

  llvm::Value *B = fb.base, *ldb = fb.strides[0];
  if (at.mmaForm == ir::MmaForm::Dot) {
    emitMmaDot(op, MmaOperands{A, lda, B, ldb, C, kb, M, N, K});
    return;
  }

  // Broadcast form. B as [K, N] rows ldb apart, of kind bk.
  ScalarKind bk = kb;
  if (at.packB >= 0) {
    llvm::Value *packed = allocaEntry(f32, K * N);
    packOperand(bv, at.packB, [&](const Forwarded &f) {
      if (tb)
        transposeToF32(kb, f.base, f.strides[0], packed, N, K); // b is [N, K]
      else
        convertRowsToF32(kb, f.base, f.strides[0], packed, K, N);
    });
    B = packed;
    ldb = i64(N);
    bk = ScalarKind::F32;
  }

  emitMmaBroadcast(op, MmaOperands{A, lda, B, ldb, C, bk, M, N, K});
}

/// The dot form (select-mma): b's rows contiguous along K, as a's.
void CodeGen::emitMmaDot(const ir::Op &op, const MmaOperands &o) {
  auto &b = b_;
  const unsigned L = lanes_;
  llvm::Type *f32 = b.getFloatTy();
  llvm::Type *vf = llvm::FixedVectorType::get(f32, L);
  // bf16 pairs as vectors of 2 * L bf16 (the intrinsic's operands).
  llvm::Type *vbf = llvm::FixedVectorType::get(b.getBFloatTy(), 2 * L);
  const ir::OpAttrs &at = op.attrs();
  const int64_t M = o.M, N = o.N, K = o.K;
  const ScalarKind kb = o.kb;
  llvm::Value *A = o.A, *lda = o.lda, *B = o.B, *ldb = o.ldb, *C = o.C;
  auto finish = [&](llvm::Value *v) { return at.canonicalNaN ? canonicalizeNaN(b, v) : v; };
  auto loadF32 = [&](ScalarKind kind, llvm::Value *base, llvm::Value *idx, llvm::Value *mask) {
    return loadAsF32(kind, base, idx, mask);
  };
  auto carriedLoop = [&](llvm::Value *lb, llvm::Value *ub, int64_t step,
                         const std::vector<llvm::Value *> &init, const CarriedBody &body) {
    return mmaKLoop(lb, ub, step, init, body);
  };
  // With bf16 on both sides on AVX512-BF16 (dpbf16): a and b stay bf16 and
  // `vdpbf16ps` sums pairs of products into each lane (exact products, f32
  // sums; bf16 subnormals read as zero), half the instructions of the f32
  // FMAs and no conversion.
  const bool bf16Dot = at.dpbf16;
  // Dot form. R rows of b per pass (the block's columns).
  const unsigned R = static_cast<unsigned>(at.blockCols);
  // K elements a step: a vector of them, or two per lane for bf16Dot.
  const unsigned kStep = bf16Dot ? 2 * L : L;
  int64_t kFull = K / kStep * kStep;
  llvm::Value *kMask =
      K % kStep ? prefixMask(static_cast<unsigned>(K % kStep), kStep) : nullptr;
  auto loadPairs = [&](llvm::Value *base, llvm::Value *idx, llvm::Value *mask) {
    return b.CreateBitCast(
        loadElems(ScalarKind::BF16, elemPtr(ScalarKind::BF16, base, idx), 2 * L, mask), vbf);
  };
  // Per-lane partial dot products of the group's rows: S[m][r][lane].
  llvm::Value *S = allocaEntry(f32, M * L * L);
  llvm::Value *zero = llvm::Constant::getNullValue(vf);
  // Rows [row, row + rr) of b: the M x rr accumulators, [m * rr + r].
  auto passAccs = [&](llvm::Value *row, unsigned rr) {
    std::vector<llvm::Value *> bptr(rr);
    for (unsigned r = 0; r < rr; ++r)
      bptr[r] = b.CreateMul(b.CreateAdd(row, i64(r)), ldb);
    auto step = [&](llvm::Value *k, const std::vector<llvm::Value *> &cur, llvm::Value *mask) {
      std::vector<llvm::Value *> bvec(rr), next(cur.size());
      if (bf16Dot) {
        for (unsigned r = 0; r < rr; ++r)
          bvec[r] = loadPairs(B, b.CreateAdd(bptr[r], k), mask);
        for (int64_t m = 0; m < M; ++m) {
          llvm::Value *av = loadPairs(A, b.CreateAdd(b.CreateMul(i64(m), lda), k), mask);
          for (unsigned r = 0; r < rr; ++r)
            next[m * rr + r] =
                b.CreateIntrinsic(llvm::Intrinsic::x86_avx512bf16_dpbf16ps_512, {},
                                  {cur[m * rr + r], av, bvec[r]});
        }
        return next;
      }
      for (unsigned r = 0; r < rr; ++r)
        bvec[r] = loadF32(kb, B, b.CreateAdd(bptr[r], k), mask);

      for (int64_t m = 0; m < M; ++m) {
        llvm::Value *av = loadF32(ScalarKind::F32, A, b.CreateAdd(b.CreateMul(i64(m), lda), k),
                                  mask);
        for (unsigned r = 0; r < rr; ++r)
          next[m * rr + r] = b.CreateIntrinsic(llvm::Intrinsic::fma, {vf},
                                               {av, bvec[r], cur[m * rr + r]});
      }
      return next;
    };
    std::vector<llvm::Value *> accs(M * rr, zero);
    if (kFull > 0)
      accs = carriedLoop(i64(0), i64(kFull), kStep, accs,
                         [&](llvm::Value *k, const std::vector<llvm::Value *> &cur) {
                           return step(k, cur, nullptr);
                         });
    if (kMask)
      accs = step(i64(kFull), accs, kMask);
    return accs;
  };
  // Rows [row, row + rr) of b (group row r0 onwards) into S.
  auto pass = [&](llvm::Value *row, llvm::Value *r0, unsigned rr) {
    std::vector<llvm::Value *> accs = passAccs(row, rr);
    for (int64_t m = 0; m < M; ++m)
      for (unsigned r = 0; r < rr; ++r) {
        llvm::Value *idx =
            b.CreateMul(b.CreateAdd(i64(m * L), b.CreateAdd(r0, i64(r))), i64(L));
        storeElems(ScalarKind::F32, accs[m * rr + r], b.CreateGEP(f32, S, idx), L, nullptr);
      }
  };
  // Reduces S across lanes for a group of `rows` rows starting at n0 and
  // adds the sums to C[m, n0 : n0 + rows].
  auto reduceGroup = [&](llvm::Value *n0, unsigned rows) {
    llvm::Value *cmask = rows < L ? prefixMask(rows, L) : nullptr;
    for (int64_t m = 0; m < M; ++m) {
      std::vector<llvm::Value *> v(L);
      for (unsigned r = 0; r < L; ++r)
        v[r] = r < rows ? loadElems(ScalarKind::F32,
                                    b.CreateGEP(f32, S, i64((m * L + r) * L)), L, nullptr)
                        : zero;
      llvm::Value *cp = b.CreateGEP(f32, C, b.CreateAdd(i64(m * N), n0));
      storeElems(ScalarKind::F32,
                 finish(b.CreateFAdd(loadElems(ScalarKind::F32, cp, L, cmask), sumLanes(v))),
                 cp, L, cmask);
    }
  };
  // When a pass's M x R accumulators fill a vector's lanes (G = 2, 4, 8 on
  // AVX-512), a group of L rows stays in registers: pass p's sums form
  // X[p], lane m * R + r holding (m, p * R + r); a butterfly over blocks of
  // R lanes transposes the M x M blocks so that X[m] holds row m's L sums.
  // The same sums as through S, without its 2 * M * L vector stores and
  // loads per group (a quarter of the dot's time on Zen 4, where a 512-bit
  // store takes two cycles).
  auto groupInRegisters = [&](llvm::Value *n0) {
    std::vector<llvm::Value *> X(static_cast<size_t>(M));
    for (int64_t p = 0; p < M; ++p)
      X[p] = sumLanes(passAccs(b.CreateAdd(n0, i64(p * R)), R));
    transposeVectorBlocks(X, R);
    for (int64_t m = 0; m < M; ++m) {
      llvm::Value *cp = b.CreateGEP(f32, C, b.CreateAdd(i64(m * N), n0));
      storeElems(ScalarKind::F32,
                 finish(b.CreateFAdd(loadElems(ScalarKind::F32, cp, L, nullptr), X[m])),
                 cp, L, nullptr);
    }
  };
  int64_t nFull = N / L * L;
  beginSpread(op);
  if (nFull > 0 && M * R == L)
    emitLoop(i64(0), i64(nFull), L, groupInRegisters);
  else if (nFull > 0)
    emitLoop(i64(0), i64(nFull), L, [&](llvm::Value *n0) {
      emitLoop(i64(0), i64(L), R, [&](llvm::Value *r0) { pass(b.CreateAdd(n0, r0), r0, R); });
      reduceGroup(n0, L);
    });
  if (unsigned tail = static_cast<unsigned>(N - nFull)) {
    unsigned r0 = 0;
    for (; r0 + R <= tail; r0 += R)
      pass(i64(nFull + r0), i64(r0), R);
    for (; r0 < tail; ++r0)
      pass(i64(nFull + r0), i64(r0), 1);
    reduceGroup(i64(nFull), tail);
  }
}

/// The broadcast form (select-mma): MR x NR blocks of accumulators over a
/// K loop of broadcast(a[m, k]) * b[k, n : n + lanes].
void CodeGen::emitMmaBroadcast(const ir::Op &op, const MmaOperands &o) {
  auto &b = b_;
  const unsigned L = lanes_;
  llvm::Type *f32 = b.getFloatTy();
  llvm::Type *vf = llvm::FixedVectorType::get(f32, L);
  // bf16 pairs as vectors of 2 * L bf16 (the intrinsic's operands).
  llvm::Type *vbf = llvm::FixedVectorType::get(b.getBFloatTy(), 2 * L);
  const ir::OpAttrs &at = op.attrs();
  const int64_t M = o.M, N = o.N, K = o.K;
  const ScalarKind bk = o.kb;
  llvm::Value *A = o.A, *lda = o.lda, *B = o.B, *ldb = o.ldb, *C = o.C;
  auto finish = [&](llvm::Value *v) { return at.canonicalNaN ? canonicalizeNaN(b, v) : v; };
  auto loadF32 = [&](ScalarKind kind, llvm::Value *base, llvm::Value *idx, llvm::Value *mask) {
    return loadAsF32(kind, base, idx, mask);
  };
  auto carriedLoop = [&](llvm::Value *lb, llvm::Value *ub, int64_t step,
                         const std::vector<llvm::Value *> &init, const CarriedBody &body) {
    return mmaKLoop(lb, ub, step, init, body);
  };
  // dpbf16 (P x V in decode attention): pairs of a's columns (k, k + 1)
  // times b's rows k and k + 1, interleaved in 32-bit lanes; the
  // accumulators hold each 32 columns in the interleave's order.
  const bool bf16Pairs = at.dpbf16;
  const bool canonical = at.canonicalNaN;
  const Blocking blk{static_cast<unsigned>(at.blockRows), static_cast<unsigned>(at.blockCols)};
  int64_t NR = blk.nVecs * L;
  // bf16Pairs (L = 16): columns [32j, 32j + 32) of a row pair as two
  // vectors of pairs, `lo` holding column 8c + i and `hi` column 8c + 4 + i
  // in lane 4c + i (vpunpcklwd / vpunpckhwd within each 128-bit lane); the
  // accumulators take that order on entry (toLo, toHi: from the two natural
  // vectors of the 32 columns) and leave it on exit (fromLo, fromHi: the
  // natural vectors from lo and hi).
  std::vector<int> toLo, toHi, fromLo, fromHi, unpLo, unpHi;
  if (bf16Pairs) {
    for (int c = 0; c < 4; ++c)
      for (int i = 0; i < 4; ++i) {
        toLo.push_back(8 * c + i);
        toHi.push_back(8 * c + 4 + i);
        unpLo.insert(unpLo.end(), {8 * c + i, 32 + 8 * c + i});
        unpHi.insert(unpHi.end(), {8 * c + 4 + i, 32 + 8 * c + 4 + i});
      }
    for (int o = 0; o < 32; ++o)
      (o < 16 ? fromLo : fromHi).push_back((o % 8 < 4 ? 0 : 16) + 4 * (o / 8) + o % 4);
  }
  auto microPairs = [&](llvm::Value *m0, unsigned mr, llvm::Value *n0, int64_t cols) {
    unsigned nv = static_cast<unsigned>(cols / L);
    std::vector<llvm::Value *> cptr(mr * nv), init(mr * nv);
    for (unsigned m = 0; m < mr; ++m)
      for (unsigned v = 0; v < nv; v += 2) {
        for (unsigned u = 0; u < 2; ++u) {
          llvm::Value *idx = b.CreateAdd(b.CreateMul(b.CreateAdd(m0, i64(m)), i64(N)),
                                         b.CreateAdd(n0, i64((v + u) * L)));
          cptr[m * nv + v + u] = b.CreateGEP(f32, C, idx);
        }
        llvm::Value *c0 = loadElems(ScalarKind::F32, cptr[m * nv + v], L, nullptr);
        llvm::Value *c1 = loadElems(ScalarKind::F32, cptr[m * nv + v + 1], L, nullptr);
        init[m * nv + v] = b.CreateShuffleVector(c0, c1, toLo);
        init[m * nv + v + 1] = b.CreateShuffleVector(c0, c1, toHi);
      }
    std::vector<llvm::Value *> out = carriedLoop(
        i64(0), i64(K), 2, init, [&](llvm::Value *k, const std::vector<llvm::Value *> &accs) {
          std::vector<llvm::Value *> pairs(nv);
          llvm::Value *r0 = b.CreateMul(k, ldb), *r1 = b.CreateAdd(r0, ldb);
          for (unsigned v = 0; v < nv; v += 2) {
            llvm::Value *col = b.CreateAdd(n0, i64(v * L));
            llvm::Value *x0 = loadElems(ScalarKind::BF16,
                                        elemPtr(ScalarKind::BF16, B, b.CreateAdd(r0, col)),
                                        2 * L, nullptr);
            llvm::Value *x1 = loadElems(ScalarKind::BF16,
                                        elemPtr(ScalarKind::BF16, B, b.CreateAdd(r1, col)),
                                        2 * L, nullptr);
            pairs[v] = b.CreateBitCast(b.CreateShuffleVector(x0, x1, unpLo), vbf);
            pairs[v + 1] = b.CreateBitCast(b.CreateShuffleVector(x0, x1, unpHi), vbf);
          }
          std::vector<llvm::Value *> next(mr * nv);
          for (unsigned m = 0; m < mr; ++m) {
            llvm::Value *aidx = b.CreateAdd(b.CreateMul(b.CreateAdd(m0, i64(m)), lda), k);
            // a[m, k] and a[m, k + 1]: two bf16, aligned as bf16.
            llvm::Value *ap = b.CreateAlignedLoad(
                b.getInt32Ty(), elemPtr(ScalarKind::BF16, A, aidx), llvm::Align(2));
            llvm::Value *as = b.CreateBitCast(b.CreateVectorSplat(L, ap), vbf);
            for (unsigned v = 0; v < nv; ++v)
              next[m * nv + v] = b.CreateIntrinsic(llvm::Intrinsic::x86_avx512bf16_dpbf16ps_512,
                                                   {}, {accs[m * nv + v], as, pairs[v]});
          }
          return next;
        });
    for (unsigned m = 0; m < mr; ++m)
      for (unsigned v = 0; v < nv; v += 2) {
        llvm::Value *lo = finish(out[m * nv + v]), *hi = finish(out[m * nv + v + 1]);
        storeElems(ScalarKind::F32, b.CreateShuffleVector(lo, hi, fromLo), cptr[m * nv + v], L,
                   nullptr);
        storeElems(ScalarKind::F32, b.CreateShuffleVector(lo, hi, fromHi),
                   cptr[m * nv + v + 1], L, nullptr);
      }
  };
  // One micro-kernel instance: rows [m0, m0+mr), columns [n0, n0+cols).
  auto micro = [&](llvm::Value *m0, unsigned mr, llvm::Value *n0, int64_t cols) {
    if (bf16Pairs)
      return microPairs(m0, mr, n0, cols);
    AccBlock acc = loadAccumulators(C, N, m0, mr, n0, cols, accStart(op));
    const unsigned nv = acc.nv;
    const std::vector<llvm::Value *> &masks = acc.masks, &init = acc.init;
    // K loop with the accumulators as loop-carried SSA values (registers).
    std::vector<llvm::Value *> out = carriedLoop(
        i64(0), i64(K), 1, init, [&](llvm::Value *k, const std::vector<llvm::Value *> &accs) {
          std::vector<llvm::Value *> bvec(nv);
          llvm::Value *brow = b.CreateMul(k, ldb);
          for (unsigned v = 0; v < nv; ++v)
            bvec[v] = loadF32(bk, B, b.CreateAdd(brow, b.CreateAdd(n0, i64(v * L))), masks[v]);

          std::vector<llvm::Value *> next(mr * nv);
          for (unsigned m = 0; m < mr; ++m) {
            llvm::Value *aidx = b.CreateAdd(b.CreateMul(b.CreateAdd(m0, i64(m)), lda), k);
            llvm::Value *as =
                b.CreateVectorSplat(L, b.CreateLoad(f32, b.CreateGEP(f32, A, aidx)));
            for (unsigned v = 0; v < nv; ++v)
              next[m * nv + v] =
                  b.CreateIntrinsic(llvm::Intrinsic::fma, {vf}, {as, bvec[v], accs[m * nv + v]});
          }
          return next;
        });
    storeAccumulators(acc, out, canonical);
  };
  int64_t nFull = N / NR * NR, mFull = M / blk.mr * blk.mr;
  unsigned mTail = static_cast<unsigned>(M - mFull);
  beginSpread(op);
  auto columnBlock = [&](llvm::Value *n0, int64_t cols) {
    if (mFull > 0)
      emitLoop(i64(0), i64(mFull), blk.mr,
               [&](llvm::Value *m0) { micro(m0, blk.mr, n0, cols); });
    if (mTail)
      micro(i64(mFull), mTail, n0, cols);
  };
  if (nFull > 0)
    emitLoop(i64(0), i64(nFull), NR, [&](llvm::Value *n0) { columnBlock(n0, NR); });
  if (nFull < N)
    columnBlock(i64(nFull), N - nFull);
}


llvm::Value *CodeGen::pairsIndex(llvm::Value *p, llvm::Value *x, int64_t X, int64_t KH,
                                 int64_t panel) {
  auto &b = b_;
  auto i64 = [&](int64_t v) { return b.getInt64(static_cast<uint64_t>(v)); };
  if (panel <= 0)
    return b.CreateAdd(b.CreateMul(p, i64(X)), x);
  if (panel >= X) // one panel, its rows `panel` apart
    return b.CreateAdd(b.CreateMul(p, i64(panel)), x);
  llvm::Value *which = b.CreateUDiv(x, i64(panel)), *in = b.CreateURem(x, i64(panel));
  return b.CreateAdd(b.CreateMul(which, i64(KH * panel)),
                     b.CreateAdd(b.CreateMul(p, i64(panel)), in));
}

/// Interleaves rows 2p and 2p + 1 of a [K, X] bf16 tile (rows ld apart)
/// into dst [K / 2, X] pairs: 16 columns at a time, a two-source shuffle.
void CodeGen::interleavePairs(llvm::Value *src, llvm::Value *ld, llvm::Value *dst, int64_t X,
                              int64_t KH, int64_t panel) {
  auto &b = b_;
  const unsigned L = lanes_;
  llvm::Type *i16 = b.getInt16Ty(), *i32 = b.getInt32Ty();
  llvm::Type *vi = llvm::FixedVectorType::get(i32, L);
  llvm::Type *vh = llvm::FixedVectorType::get(i16, L);
  auto i64 = [&](int64_t v) { return b.getInt64(static_cast<uint64_t>(v)); };
  auto at16 = [&](llvm::Value *base, llvm::Value *idx) { return b.CreateGEP(i16, base, idx); };
  auto at32 = [&](llvm::Value *base, llvm::Value *idx) { return b.CreateGEP(i32, base, idx); };
  std::vector<int> zip(2 * L);
  for (unsigned i = 0; i < L; ++i) {
    zip[2 * i] = static_cast<int>(i);
    zip[2 * i + 1] = static_cast<int>(L + i);
  }
  emitLoop(i64(0), i64(KH), 1, [&](llvm::Value *p) {
    llvm::Value *r0 = b.CreateMul(b.CreateMul(p, i64(2)), ld);
    llvm::Value *r1 = b.CreateAdd(r0, ld);
    for (int64_t c = 0; c < X; c += L) {
      unsigned cnt = static_cast<unsigned>(std::min<int64_t>(L, X - c));
      llvm::Value *m = cnt < L ? prefixMask(cnt, L) : nullptr;
      auto load = [&](llvm::Value *row) -> llvm::Value * {
        llvm::Value *ptr = at16(src, b.CreateAdd(row, i64(c)));
        if (m)
          return b.CreateMaskedLoad(vh, ptr, llvm::Align(2), m,
                                    llvm::Constant::getNullValue(vh));
        return b.CreateAlignedLoad(vh, ptr, llvm::Align(2));
      };
      llvm::Value *pairs = b.CreateBitCast(b.CreateShuffleVector(load(r0), load(r1), zip), vi);
      llvm::Value *out = at32(dst, pairsIndex(p, i64(c), X, KH, panel));
      if (m)
        b.CreateMaskedStore(pairs, out, llvm::Align(4), m);
      else
        b.CreateAlignedStore(pairs, out, llvm::Align(4));
    }
  });
}

/// Transposes the 32-bit pairs of a [X, K] bf16 tile (rows ld apart) into
/// dst [K / 2, X]: 16 x 16 blocks through registers, the edges one pair at
/// a time.
void CodeGen::transposePairs(llvm::Value *src, llvm::Value *ld, llvm::Value *dst, int64_t X,
                             int64_t W, int64_t panel) {
  auto &b = b_;
  const unsigned L = lanes_;
  llvm::Type *i16 = b.getInt16Ty(), *i32 = b.getInt32Ty();
  llvm::Type *vi = llvm::FixedVectorType::get(i32, L);
  auto i64 = [&](int64_t v) { return b.getInt64(static_cast<uint64_t>(v)); };
  auto at16 = [&](llvm::Value *base, llvm::Value *idx) { return b.CreateGEP(i16, base, idx); };
  auto at32 = [&](llvm::Value *base, llvm::Value *idx) { return b.CreateGEP(i32, base, idx); };
  const int64_t xFull = X / L * L, pFull = W / L * L;
  auto pairAt = [&](llvm::Value *x, llvm::Value *p) {
    return b.CreateAlignedLoad(i32, at16(src, b.CreateAdd(b.CreateMul(x, ld),
                                                          b.CreateMul(p, i64(2)))),
                               llvm::Align(2));
  };
  if (xFull > 0 && pFull > 0)
    emitLoop(i64(0), i64(xFull), L, [&](llvm::Value *x0) {
      emitLoop(i64(0), i64(pFull), L, [&](llvm::Value *p0) {
        std::vector<llvm::Value *> v(L);
        for (unsigned i = 0; i < L; ++i) {
          llvm::Value *row = b.CreateMul(b.CreateAdd(x0, i64(i)), ld);
          v[i] = b.CreateAlignedLoad(
              vi, at16(src, b.CreateAdd(row, b.CreateMul(p0, i64(2)))), llvm::Align(2));
        }
        transposeVectorBlocks(v, 1); // 16 x 16 words
        for (unsigned i = 0; i < L; ++i)
          b.CreateAlignedStore(v[i], at32(dst, pairsIndex(b.CreateAdd(p0, i64(i)), x0, X, W, panel)),
                               llvm::Align(4));
      });
    });
  auto edge = [&](int64_t x0, int64_t x1, int64_t p0, int64_t p1) {
    if (x0 >= x1 || p0 >= p1)
      return;
    emitLoop(i64(x0), i64(x1), 1, [&](llvm::Value *x) {
      emitLoop(i64(p0), i64(p1), 1, [&](llvm::Value *p) {
        b.CreateAlignedStore(pairAt(x, p), at32(dst, pairsIndex(p, x, X, W, panel)),
                             llvm::Align(4));
      });
    });
  };
  edge(0, xFull, pFull, W);
  edge(xFull, X, 0, W);
}

/// The bf16 x bf16 mma with many rows where bf16 products are fast: on AMX
/// tiles (emitMmaAmx), or with AMD's `vdpbf16ps`. B is packed into a
/// panel of pairs [K / 2, N] (32 bits each: b[k, n] and b[k + 1, n]),
/// whatever its layout: rows 2p and 2p + 1 interleaved when it is [K, N], a
/// 32-bit transpose when it is stored [N, K] (transB: its pairs are already
/// adjacent). A is read in place when it is [M, K] (a pair is one 32-bit
/// load), else packed like B into pairs [K / 2, M]. The micro-kernel keeps
/// MR x 2 vectors of accumulators (32 columns) over the pairs: a broadcast
/// pair of a times a vector of 16 pairs of b, one `vdpbf16ps`. Packing an
/// operand defined outside the loops around the mma is hoisted before the
/// outermost of them (a key block's transposed panel serves every query
/// block of the flash-attention backward).
void CodeGen::emitMmaBf16Pairs(const ir::Op &op, const Forwarded &fa, llvm::Value *C, int64_t M,
                               int64_t N, int64_t K, bool amx) {
  auto &b = b_;
  const unsigned L = lanes_;
  const bool ta = op.attrs().transA, tb = op.attrs().transB;
  const int64_t KH = K / 2;
  llvm::Type *i16 = b.getInt16Ty(), *i32 = b.getInt32Ty();
  llvm::Type *vi = llvm::FixedVectorType::get(i32, L);
  llvm::Type *vbf = llvm::FixedVectorType::get(b.getBFloatTy(), 2 * L);
  auto i64 = [&](int64_t v) { return b.getInt64(static_cast<uint64_t>(v)); };
  auto at16 = [&](llvm::Value *base, llvm::Value *idx) { return b.CreateGEP(i16, base, idx); };
  auto at32 = [&](llvm::Value *base, llvm::Value *idx) { return b.CreateGEP(i32, base, idx); };

  const ir::OpAttrs &at = op.attrs();
  // With vdpbf16ps, B in panels of one column block (NR columns, the last
  // padded), each contiguous: a block's K loop reads one run of memory,
  // not KH short rows a panel width apart that crowd a few L1 sets.
  const int64_t NR = amx ? N : at.blockCols * L;
  const int64_t panels = (N + NR - 1) / NR;
  llvm::Value *PB = allocaEntry(i32, static_cast<uint64_t>(KH * panels * NR));
  packOperand(op.operand(1), at.packB, [&](const Forwarded &f) {
    if (tb)
      transposePairs(f.base, f.strides[0], PB, N, KH, NR); // b is [N, K]
    else
      interleavePairs(f.base, f.strides[0], PB, N, KH, NR); // b is [K, N]
  });
  llvm::Value *PA = nullptr;
  if (ta) {
    PA = allocaEntry(i32, static_cast<uint64_t>(KH * M));
    packOperand(op.operand(0), at.packA, [&](const Forwarded &f) {
      interleavePairs(f.base, f.strides[0], PA, M, KH); // a is [K, M]
    });
  }
  if (amx) {
    // A as [M, K] bf16 rows: in place, or (transA) the pairs [K / 2, M]
    // transposed as words into [M, K / 2].
    llvm::Value *AR = fa.base, *ldaBytes = nullptr;
    if (ta) {
      llvm::Value *PAT = allocaEntry(i32, static_cast<uint64_t>(KH * M));
      packOperand(op.operand(0), at.packA, [&](const Forwarded &) {
        transposePairs(PA, i64(2 * M), PAT, KH, M);
      });
      AR = PAT;
      ldaBytes = i64(2 * K);
    } else {
      ldaBytes = b.CreateMul(fa.strides[0], i64(2));
    }
    emitMmaAmx(AR, ldaBytes, PB, C, M, N, K, op.attrs().canonicalNaN);
    return;
  }
  const unsigned MR = static_cast<unsigned>(at.blockRows);
  llvm::Value *start = accStart(op);
  auto micro = [&](llvm::Value *m0, unsigned mr, llvm::Value *n0, int64_t cols) {
    AccBlock acc = loadAccumulators(C, N, m0, mr, n0, cols, start);
    // The pair of a for row m at pair p, as a splat of 16 pairs: from the
    // packed pairs [K / 2, M], or (a read in place) from the row's start,
    // made here outside the K loop, so a step's pair is one load from a row
    // pointer with no address arithmetic per row.
    std::vector<llvm::Value *> rowOf(mr, nullptr);
    if (!PA)
      for (unsigned m = 0; m < mr; ++m)
        rowOf[m] = at16(fa.base, b.CreateMul(b.CreateAdd(m0, i64(m)), fa.strides[0]));
    auto aPair = [&](unsigned m, llvm::Value *p) {
      llvm::Value *w =
          PA ? b.CreateAlignedLoad(
                   i32, at32(PA, b.CreateAdd(b.CreateMul(p, i64(M)), b.CreateAdd(m0, i64(m)))),
                   llvm::Align(4))
             : b.CreateAlignedLoad(i32, at16(rowOf[m], b.CreateMul(p, i64(2))), llvm::Align(2));
      return b.CreateBitCast(b.CreateVectorSplat(L, w), vbf);
    };
    const unsigned nv = acc.nv;
    const std::vector<llvm::Value *> &masks = acc.masks, &init = acc.init;
    std::vector<llvm::Value *> out = emitCarriedLoop(
        "mma.k", i64(0), i64(KH), 1, init,
        [&](llvm::Value *p, const std::vector<llvm::Value *> &accs) {
          spreadStep();
          std::vector<llvm::Value *> bvec(nv);
          for (unsigned v = 0; v < nv; ++v) {
            llvm::Value *ptr = at32(PB, b.CreateAdd(b.CreateMul(n0, i64(KH)),
                                                    b.CreateAdd(b.CreateMul(p, i64(NR)), i64(v * L))));
            llvm::Value *x = masks[v] ? static_cast<llvm::Value *>(b.CreateMaskedLoad(
                                            vi, ptr, llvm::Align(4), masks[v],
                                            llvm::Constant::getNullValue(vi)))
                                      : b.CreateAlignedLoad(vi, ptr, llvm::Align(4));
            bvec[v] = b.CreateBitCast(x, vbf);
          }
          std::vector<llvm::Value *> next(mr * nv);
          for (unsigned m = 0; m < mr; ++m) {
            llvm::Value *as = aPair(m, p);
            for (unsigned v = 0; v < nv; ++v)
              next[m * nv + v] = b.CreateIntrinsic(llvm::Intrinsic::x86_avx512bf16_dpbf16ps_512,
                                                   {}, {accs[m * nv + v], as, bvec[v]});
          }
          return next;
        });
    storeAccumulators(acc, out, op.attrs().canonicalNaN);
  };
  const int64_t nFull = N / NR * NR, mFull = M / MR * MR;
  const unsigned mTail = static_cast<unsigned>(M - mFull);
  beginSpread(op);
  auto columnBlock = [&](llvm::Value *n0, int64_t cols) {
    if (mFull > 0)
      emitLoop(i64(0), i64(mFull), MR, [&](llvm::Value *m0) { micro(m0, MR, n0, cols); });
    if (mTail)
      micro(i64(mFull), mTail, n0, cols);
  };
  if (nFull > 0)
    emitLoop(i64(0), i64(nFull), NR, [&](llvm::Value *n0) { columnBlock(n0, NR); });
  if (nFull < N)
    columnBlock(i64(nFull), N - nFull);
}

/// The bf16 mma on AMX: C [M, N] f32 += A [M, K] bf16 (rows `ldaBytes`
/// apart) times B, packed as pairs [K / 2, N]; M and N are multiples of 16,
/// K of 32, so every tile has one shape. Blocks of 2 x 2 tiles of 16 x 16
/// f32 stay in tile registers over K, 32 k (16 pairs) a `tdpbf16ps`: two A
/// tiles of 16 rows x 32 k, two B tiles of 16 pairs x 16 columns (a last
/// row or column of single tiles where M or N is an odd number of 16s).
/// The K steps are unrolled, so no tile value crosses a block boundary
/// (LLVM configures the tiles).
void CodeGen::emitMmaAmx(llvm::Value *A, llvm::Value *ldaBytes, llvm::Value *PB,
                         llvm::Value *C, int64_t M, int64_t N, int64_t K, bool canonical) {
  auto &b = b_;
  auto i64 = [&](int64_t v) { return b.getInt64(static_cast<uint64_t>(v)); };
  auto i16 = [&](int64_t v) { return b.getInt16(static_cast<uint16_t>(v)); };
  llvm::Type *i8 = b.getInt8Ty();
  auto byteAt = [&](llvm::Value *base, llvm::Value *off) { return b.CreateGEP(i8, base, off); };
  llvm::Value *cStride = i64(N * 4), *bStride = i64(N * 4);
  // One block: rows [m0, m0 + r0 + r1), columns [n0, n0 + c0 + c1) (the
  // second tile of a side absent when its extent is 0).
  auto block = [&](llvm::Value *m0, int64_t r0, int64_t r1, llvm::Value *n0, int64_t c0,
                   int64_t c1) {
    const int64_t rows[2] = {r0, r1}, cols[2] = {c0, c1};
    llvm::Value *tc[2][2] = {{nullptr, nullptr}, {nullptr, nullptr}};
    auto cPtr = [&](int i, int j) {
      llvm::Value *row = b.CreateAdd(m0, i64(16 * i));
      llvm::Value *col = b.CreateAdd(n0, i64(16 * j));
      return byteAt(C, b.CreateMul(b.CreateAdd(b.CreateMul(row, i64(N)), col), i64(4)));
    };
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 2; ++j)
        if (rows[i] && cols[j])
          tc[i][j] = b.CreateIntrinsic(llvm::Intrinsic::x86_tileloadd64_internal, {},
                                       {i16(rows[i]), i16(cols[j] * 4), cPtr(i, j), cStride});
    assert(M % 16 == 0 && N % 16 == 0 && K % 32 == 0 && "whole AMX tiles only");
    constexpr int64_t kk = 32;
    for (int64_t kc = 0; kc < K; kc += kk) {
      // The B tiles first, then one A tile at a time: at most 4 + 2 + 1
      // tiles live of the 8 registers.
      llvm::Value *tbv[2] = {nullptr, nullptr};
      for (int j = 0; j < 2; ++j)
        if (cols[j]) {
          llvm::Value *col = b.CreateAdd(n0, i64(16 * j));
          llvm::Value *ptr =
              byteAt(PB, b.CreateMul(b.CreateAdd(i64(kc / 2 * N), col), i64(4)));
          tbv[j] = b.CreateIntrinsic(llvm::Intrinsic::x86_tileloadd64_internal, {},
                                     {i16(kk / 2), i16(cols[j] * 4), ptr, bStride});
        }
      for (int i = 0; i < 2; ++i) {
        if (!rows[i])
          continue;
        llvm::Value *row = b.CreateAdd(m0, i64(16 * i));
        llvm::Value *ptr = byteAt(A, b.CreateAdd(b.CreateMul(row, ldaBytes), i64(2 * kc)));
        llvm::Value *ta = b.CreateIntrinsic(llvm::Intrinsic::x86_tileloadd64_internal, {},
                                            {i16(rows[i]), i16(2 * kk), ptr, ldaBytes});
        for (int j = 0; j < 2; ++j)
          if (tc[i][j])
            tc[i][j] = b.CreateIntrinsic(
                llvm::Intrinsic::x86_tdpbf16ps_internal, {},
                {i16(rows[i]), i16(cols[j] * 4), i16(2 * kk), tc[i][j], ta, tbv[j]});
      }
    }
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 2; ++j)
        if (tc[i][j])
          b.CreateIntrinsic(llvm::Intrinsic::x86_tilestored64_internal, {},
                            {i16(rows[i]), i16(cols[j] * 4), cPtr(i, j), cStride, tc[i][j]});
    // The tiles' NaNs made canonical in place, a row of the block at a time
    // (the tile registers have no select).
    if (!canonical)
      return;
    llvm::Type *vf = llvm::FixedVectorType::get(b.getFloatTy(), 16);
    emitLoop(i64(0), i64(r0 + r1), 1, [&](llvm::Value *r) {
      for (int64_t c = 0; c < c0 + c1; c += 16) {
        llvm::Value *p = b.CreateGEP(
            b.getFloatTy(), C,
            b.CreateAdd(b.CreateMul(b.CreateAdd(m0, r), i64(N)), b.CreateAdd(n0, i64(c))));
        b.CreateAlignedStore(
            canonicalizeNaN(b, b.CreateAlignedLoad(vf, p, llvm::Align(4))), p, llvm::Align(4));
      }
    });
  };
  // A last row (column) of single tiles where M (N) is an odd number of 16s.
  const int64_t mFull = M / 32 * 32, nFull = N / 32 * 32;
  const int64_t mLast = M - mFull, nLast = N - nFull; // 0 or 16
  auto rowsOf = [&](llvm::Value *n0, int64_t c1) {
    if (mFull > 0)
      emitLoop(i64(0), i64(mFull), 32, [&](llvm::Value *m0) { block(m0, 16, 16, n0, 16, c1); });
    if (mLast)
      block(i64(mFull), 16, 0, n0, 16, c1);
  };
  if (nFull > 0)
    emitLoop(i64(0), i64(nFull), 32, [&](llvm::Value *n0) { rowsOf(n0, 16); });
  if (nLast)
    rowsOf(i64(nFull), 0);
}

} // namespace tilejit::codegen
