//===- CodeGenMma.cpp - The cube unit: a register-blocked FMA micro-kernel ===//
///
/// \file
/// `mma(a, b, acc)` lowers to: copy acc into the result buffer; pack a into an
/// f32 [M, K] panel when it is not already one, and b into an f32 [K, N] panel
/// (converting f16/bf16, transposing when transB); then, for each MR x NR
/// block of the result, keep MR x (NR / lanes) accumulator vectors in
/// registers over a K loop of broadcast(a[m, k]) * b[k, n:n+lanes] FMAs, one
/// fma per k in ascending k (the order Tile IR promises). Edges use smaller
/// row blocks and masked vectors.
///
//===----------------------------------------------------------------------===//
#include "codegen/llvm/CodeGenImpl.h"

#include "llvm/IR/Intrinsics.h"

namespace tilejit::codegen {

using ir::ScalarKind;

namespace {

/// Row block and vector count per block for a target width.
struct Blocking {
  unsigned mr, nVecs;
};

Blocking blockingFor(unsigned lanes) {
  // AVX-512 (32 registers): 8 x 2 accumulators; AVX2 (16 registers): 6 x 2.
  return lanes >= 16 ? Blocking{8, 2} : Blocking{6, 2};
}

} // namespace

void CodeGen::emitMma(const ir::Op &op) {
  auto &b = b_;
  const ir::Value *a = op.operand(0), *bv = op.operand(1), *acc = op.operand(2);
  const ir::Value *res = op.result();
  bool ta = op.attrs().transA, tb = op.attrs().transB;
  int64_t M = res->type().shape()[0], N = res->type().shape()[1];
  int64_t K = ta ? a->type().shape()[0] : a->type().shape()[1];
  ScalarKind ka = a->type().elem(), kb = bv->type().elem();
  unsigned L = lanes_;
  llvm::Type *f32 = b.getFloatTy();
  llvm::Type *vf = llvm::FixedVectorType::get(f32, L);

  copyBuffer(acc, res);
  llvm::Value *C = bufferOf(res);

  // Converts a row-major [rows, cols] tile of `kind` at `src` into f32 at
  // `dst` (same layout), a vector of lanes at a time.
  auto convertRows = [&](ScalarKind kind, llvm::Value *src, llvm::Value *dst,
                         int64_t rows, int64_t cols) {
    emitLoop(i64(0), i64(rows), 1, [&](llvm::Value *row) {
      for (int64_t j = 0; j < cols; j += L) {
        unsigned cnt = static_cast<unsigned>(std::min<int64_t>(L, cols - j));
        llvm::Value *m = cnt < L ? prefixMask(cnt, L) : nullptr;
        llvm::Value *idx = b.CreateAdd(b.CreateMul(row, i64(cols)), i64(j));
        llvm::Value *v = emitCast(loadElems(kind, elemPtr(kind, src, idx), L, m), kind,
                                  ScalarKind::F32, L);
        storeElems(ScalarKind::F32, v, b.CreateGEP(f32, dst, idx), L, m);
      }
    });
  };
  // Transposes a row-major [rows, cols] tile of `kind` at `src` into f32
  // [cols, rows] at `dst`: lanes x lanes blocks go through registers (a
  // butterfly of shuffles: at width w, rows i and i|w swap their off-diagonal
  // w x w sub-blocks), the ragged edges element by element.
  auto transposeInto = [&](ScalarKind kind, llvm::Value *src, llvm::Value *dst,
                           int64_t rows, int64_t cols) {
    int64_t rFull = rows / L * L, cFull = cols / L * L;
    if (rFull > 0 && cFull > 0)
      emitLoop(i64(0), i64(rFull), L, [&](llvm::Value *r0) {
        emitLoop(i64(0), i64(cFull), L, [&](llvm::Value *c0) {
          std::vector<llvm::Value *> v(L);
          for (unsigned i = 0; i < L; ++i) {
            llvm::Value *idx = b.CreateAdd(b.CreateMul(b.CreateAdd(r0, i64(i)), i64(cols)), c0);
            v[i] = emitCast(loadElems(kind, elemPtr(kind, src, idx), L, nullptr), kind,
                            ScalarKind::F32, L);
          }
          for (unsigned w = L / 2; w >= 1; w /= 2) {
            std::vector<int> lo(L), hi(L);
            for (unsigned c = 0; c < L; ++c) {
              lo[c] = (c & w) ? static_cast<int>(L + c - w) : static_cast<int>(c);
              hi[c] = (c & w) ? static_cast<int>(L + c) : static_cast<int>(c + w);
            }
            for (unsigned i = 0; i < L; ++i) {
              if (i & w)
                continue;
              llvm::Value *a2 = b.CreateShuffleVector(v[i], v[i | w], lo);
              llvm::Value *b2 = b.CreateShuffleVector(v[i], v[i | w], hi);
              v[i] = a2;
              v[i | w] = b2;
            }
            if (w == 1)
              break;
          }
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
              loadElems(kind, elemPtr(kind, src, b.CreateAdd(b.CreateMul(r, i64(cols)), c)), 1,
                        nullptr),
              kind, ScalarKind::F32, 1);
          b.CreateStore(x, b.CreateGEP(f32, dst, b.CreateAdd(b.CreateMul(c, i64(rows)), r)));
        });
      });
    };
    scalarPart(0, rFull, cFull, cols); // right edge of the blocked rows
    scalarPart(rFull, rows, 0, cols);  // bottom rows
  };

  // A as f32 [M, K] (row m at m*K); packed when needed.
  llvm::Value *A = bufferOf(a);
  if (ka != ScalarKind::F32 || ta) {
    llvm::Value *packed = allocaEntry(f32, M * K);
    if (ta)
      transposeInto(ka, A, packed, K, M); // a is [K, M]
    else
      convertRows(ka, A, packed, M, K);
    A = packed;
  }
  // B as f32 [K, N].
  llvm::Value *B = bufferOf(bv);
  if (kb != ScalarKind::F32 || tb) {
    llvm::Value *packed = allocaEntry(f32, K * N);
    if (tb)
      transposeInto(kb, B, packed, N, K); // b is [N, K]
    else
      convertRows(kb, B, packed, K, N);
    B = packed;
  }

  Blocking blk = blockingFor(L);
  int64_t NR = blk.nVecs * L;
  // One micro-kernel instance: rows [m0, m0+mr), columns [n0, n0+cols).
  auto micro = [&](llvm::Value *m0, unsigned mr, llvm::Value *n0, int64_t cols) {
    unsigned nv = static_cast<unsigned>((cols + L - 1) / L);
    std::vector<llvm::Value *> masks(nv, nullptr);
    if (cols % L)
      masks[nv - 1] = prefixMask(static_cast<unsigned>(cols % L), L);
    std::vector<llvm::Value *> cptr(mr * nv), init(mr * nv);
    for (unsigned m = 0; m < mr; ++m)
      for (unsigned v = 0; v < nv; ++v) {
        llvm::Value *idx = b.CreateAdd(b.CreateMul(b.CreateAdd(m0, i64(m)), i64(N)),
                                       b.CreateAdd(n0, i64(v * L)));
        cptr[m * nv + v] = b.CreateGEP(f32, C, idx);
        init[m * nv + v] = loadElems(ScalarKind::F32, cptr[m * nv + v], L, masks[v]);
      }
    // K loop with the accumulators as loop-carried SSA values (registers).
    llvm::BasicBlock *pre = b.GetInsertBlock();
    auto *loop = llvm::BasicBlock::Create(ctx_, "mma.k", fn_);
    auto *exit = llvm::BasicBlock::Create(ctx_, "mma.k.exit", fn_);
    b.CreateBr(loop);
    b.SetInsertPoint(loop);
    llvm::PHINode *k = b.CreatePHI(b.getInt64Ty(), 2, "k");
    k->addIncoming(i64(0), pre);
    std::vector<llvm::PHINode *> accs;
    for (llvm::Value *v : init) {
      accs.push_back(b.CreatePHI(vf, 2));
      accs.back()->addIncoming(v, pre);
    }
    std::vector<llvm::Value *> bvec(nv);
    llvm::Value *brow = b.CreateMul(k, i64(N));
    for (unsigned v = 0; v < nv; ++v)
      bvec[v] = loadElems(ScalarKind::F32,
                          b.CreateGEP(f32, B, b.CreateAdd(brow, b.CreateAdd(n0, i64(v * L)))),
                          L, masks[v]);
    std::vector<llvm::Value *> next(mr * nv);
    for (unsigned m = 0; m < mr; ++m) {
      llvm::Value *aidx = b.CreateAdd(b.CreateMul(b.CreateAdd(m0, i64(m)), i64(K)), k);
      llvm::Value *as = b.CreateVectorSplat(L, b.CreateLoad(f32, b.CreateGEP(f32, A, aidx)));
      for (unsigned v = 0; v < nv; ++v)
        next[m * nv + v] = b.CreateIntrinsic(llvm::Intrinsic::fma, {vf},
                                             {as, bvec[v], accs[m * nv + v]});
    }
    llvm::Value *k1 = b.CreateAdd(k, i64(1), "", true, true);
    k->addIncoming(k1, b.GetInsertBlock());
    for (unsigned i = 0; i < accs.size(); ++i)
      accs[i]->addIncoming(next[i], b.GetInsertBlock());
    b.CreateCondBr(b.CreateICmpSLT(k1, i64(K)), loop, exit);
    b.SetInsertPoint(exit);
    for (unsigned i = 0; i < accs.size(); ++i)
      storeElems(ScalarKind::F32, next[i], cptr[i], L, masks[i % nv]);
  };
  if (K == 0)
    return;
  int64_t nFull = N / NR * NR, mFull = M / blk.mr * blk.mr;
  unsigned mTail = static_cast<unsigned>(M - mFull);
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

} // namespace tilejit::codegen
