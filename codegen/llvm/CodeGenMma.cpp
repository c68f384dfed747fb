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

  // A as f32 [M, K] (row m at m*K); packed when needed.
  llvm::Value *A = bufferOf(a);
  if (ka != ScalarKind::F32 || ta) {
    llvm::Value *packed = allocaEntry(f32, M * K);
    llvm::Value *src = A;
    emitNest({M, K}, [&](const std::vector<llvm::Value *> &i) {
      llvm::Value *s = ta ? b.CreateAdd(b.CreateMul(i[1], i64(M)), i[0])
                          : b.CreateAdd(b.CreateMul(i[0], i64(K)), i[1]);
      llvm::Value *v = emitCast(loadElems(ka, elemPtr(ka, src, s), 1, nullptr),
                                ka, ScalarKind::F32, 1);
      b.CreateStore(v, b.CreateGEP(f32, packed, b.CreateAdd(b.CreateMul(i[0], i64(K)), i[1])));
    });
    A = packed;
  }
  // B as f32 [K, N].
  llvm::Value *B = bufferOf(bv);
  if (kb != ScalarKind::F32 || tb) {
    llvm::Value *packed = allocaEntry(f32, K * N);
    llvm::Value *src = B;
    if (!tb) {
      // Convert row by row with vectors.
      emitLoop(i64(0), i64(K), 1, [&](llvm::Value *k) {
        for (int64_t j = 0; j < N; j += L) {
          unsigned cnt = static_cast<unsigned>(std::min<int64_t>(L, N - j));
          llvm::Value *m = cnt < L ? prefixMask(cnt, L) : nullptr;
          llvm::Value *idx = b.CreateAdd(b.CreateMul(k, i64(N)), i64(j));
          llvm::Value *v = emitCast(loadElems(kb, elemPtr(kb, src, idx), L, m), kb,
                                    ScalarKind::F32, L);
          storeElems(ScalarKind::F32, v, b.CreateGEP(f32, packed, idx), L, m);
        }
      });
    } else {
      // b is [N, K]: packed[k, n] = b[n, k].
      emitNest({N, K}, [&](const std::vector<llvm::Value *> &i) {
        llvm::Value *s = b.CreateAdd(b.CreateMul(i[0], i64(K)), i[1]);
        llvm::Value *v = emitCast(loadElems(kb, elemPtr(kb, src, s), 1, nullptr), kb,
                                  ScalarKind::F32, 1);
        b.CreateStore(v, b.CreateGEP(f32, packed, b.CreateAdd(b.CreateMul(i[1], i64(N)), i[0])));
      });
    }
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
