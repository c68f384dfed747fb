//===- CodeGenImpl.h - Shared state of the Tile IR -> LLVM lowering -*- C++ -*-===//
///
/// \file
/// Internal to codegen/llvm: the `CodeGen` class whose methods are spread over
/// one file per op family: CodeGen.cpp (functions, op dispatch, scalars,
/// control flow), CodeGenMemory.cpp (data movement), CodeGenTile.cpp (shape
/// ops, reductions), CodeGenElementwise.cpp (the elementwise op emitter and
/// fused loops), CodeGenMath.cpp (exp, log and the other transcendental
/// functions), CodeGenMma.cpp (the cube unit's micro-kernels) and
/// CodeGenPrefetch.cpp (prefetch emission). Every kernel decision was made
/// by the Tile IR passes (codegen/passes) and is read from op attributes.
///
//===----------------------------------------------------------------------===//
#ifndef TILEJIT_CODEGEN_LLVM_CODEGENIMPL_H
#define TILEJIT_CODEGEN_LLVM_CODEGENIMPL_H

#include "codegen/llvm/CodeGen.h"
#include "dsl/ir/Uses.h"
#include "runtime/Runtime.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/IR/DIBuilder.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Module.h"

#include <cassert>
#include <deque>
#include <functional>
#include <memory>
#include <map>
#include <optional>

namespace tilejit::codegen {

/// A global tensor parameter's runtime description, loaded at function entry.
struct TensorInfo {
  llvm::Value *desc = nullptr; ///< the rt::TensorDesc the kernel was given
  llvm::Value *data = nullptr;
  std::vector<llvm::Value *> sizes, strides;
  ir::ScalarKind elem;
};

/// One tile move between a tensor and a buffer: a `load` (into the buffer),
/// a `store` (out of it), or one side of a `copy` (its read, then its write,
/// both through the copy's tile).
struct TileMove {
  bool isLoad = false;
  const ir::Op *op = nullptr; ///< the load, store or copy (its attributes)
  const ir::Value *tensor = nullptr;
  std::vector<const ir::Value *> offsets;
  const ir::Value *tile = nullptr; ///< the tile moved (its buffer)
  const ir::Value *mask = nullptr;
};

/// `v` (f32 lanes) with every NaN replaced by the canonical quiet NaN
/// 0x7fc00000 (CodeGenElementwise.cpp): what an op marked `nan = canonical`
/// and every `mma` result go through.
llvm::Value *canonicalizeNaN(llvm::IRBuilder<> &b, llvm::Value *v);

/// The name of the row-move function of the partial-tile slow paths for
/// elements of `width` bytes, direction `isLoad` and mask reading `how`:
/// `tilejit.rows.<load|store>[.masked|.rowmasked].b<bits>`.
std::string rowMoveName(unsigned width, bool isLoad, ir::RowMask how);
/// That function, declared in `m` (external) at its first use. Kernels only
/// declare it; the runtime library (lowerRuntimeLibrary) defines it.
llvm::Function *declareRowMove(llvm::Module &m, unsigned width, bool isLoad, ir::RowMask how);

/// What the functions of one module share: the constant tile shapes passed
/// to the runtime's tile moves, one per shape.
class ModuleHelpers {
public:
  explicit ModuleHelpers(llvm::Module &module) : module_(module) {}
  /// The private constant i64 array holding `shape`.
  llvm::GlobalVariable *shapeConstant(const std::vector<int64_t> &shape);

private:
  llvm::Module &module_;
  std::map<std::vector<int64_t>, llvm::GlobalVariable *> tileShapes_;
};

/// Where the function being emitted keeps its local data: the scratch
/// block holding the planned tile buffers (a null pointer in the grid
/// function), and the stack array of tile offsets passed to the runtime's
/// tile moves, allocated at its first use.
struct FunctionFrame {
  llvm::Value *scratch = nullptr;
  llvm::Value *offsetSlot = nullptr;
  /// The program function's id and count arrays (its arguments).
  llvm::Value *pid = nullptr, *nprog = nullptr;
  /// Set once a non-temporal store was emitted: the program ends with an
  /// sfence, so its writes are ordered before the launch returns.
  bool streamed = false;
};

/// Source locations (!dbg): the module's debug info and the subprogram of
/// the function being emitted (null while a helper is).
struct DebugInfo {
  std::unique_ptr<llvm::DIBuilder> builder;
  llvm::DIFile *file = nullptr;
  llvm::DISubprogram *subprogram = nullptr;
};

/// A `prefetch` whose lines are not all requested yet: `rows` rows of
/// `rowBytes` contiguous bytes, `rowStride` bytes apart, from `base`;
/// `limit` is `rows`, or 0 when nothing may be requested. The cursor (row
/// number, byte offset of the row, byte offset within it) says where the
/// requests stand.
struct PendingPrefetch {
  llvm::Value *base = nullptr, *rowStride = nullptr, *limit = nullptr;
  llvm::Value *row = nullptr, *rowAt = nullptr, *col = nullptr; ///< i64 slots
  int64_t rows = 1, rowBytes = 0, linesPerRow = 0;
  int64_t per = 0; ///< lines per iteration while an op spreads them
  int locality = 3; ///< llvm.prefetch locality: 3 every level, 2 L2 on
  /// A one-row region spread in whole groups: the loop requests lines
  /// below `groupEnd` bytes (all inside the row, so not clamped) and the
  /// rest, clamped, after the op.
  int64_t groupEnd = -1;
};

/// The spread prefetches on their way (CodeGenPrefetch.cpp): those of the
/// block being emitted that no op takes (requested at its end; each block
/// has its own), those schedule-prefetch gave to a later op, and the one
/// being requested now (by an op's loop, or at once).
class PrefetchEmitter {
public:
  /// Entering a block: it gets a list of its own; returns the outer one.
  std::deque<PendingPrefetch> enterBlock() {
    std::deque<PendingPrefetch> outer = std::move(waiting_);
    waiting_.clear();
    return outer;
  }
  /// At a block's end: the next prefetch it left to no op becomes the
  /// current one; false when none is left.
  bool takeWaiting() {
    if (waiting_.empty())
      return false;
    current_ = std::move(waiting_.front());
    waiting_.pop_front();
    return true;
  }
  /// Leaving a block: the outer block's list again.
  void leaveBlock(std::deque<PendingPrefetch> outer) { waiting_ = std::move(outer); }
  /// A prefetch requested at the block's end.
  void wait(PendingPrefetch p) { waiting_.push_back(std::move(p)); }
  /// A prefetch that `op` spreads over its loop.
  void schedule(const ir::Op *op, PendingPrefetch p) { scheduled_.emplace(op, std::move(p)); }
  /// `op` starts: the prefetch scheduled on it, if any, becomes current.
  void take(const ir::Op &op) {
    auto it = scheduled_.find(&op);
    if (it == scheduled_.end())
      return;
    current_ = std::move(it->second);
    scheduled_.erase(it);
  }
  /// A prefetch requested now, whole.
  void start(PendingPrefetch p) {
    assert(!current_ && "prefetch op inside an op that spreads another");
    current_ = std::move(p);
  }
  /// The prefetch being requested, or null.
  const PendingPrefetch *current() const { return current_ ? &*current_ : nullptr; }
  /// Its last lines are requested.
  void finish() { current_.reset(); }

private:
  std::deque<PendingPrefetch> waiting_;
  std::optional<PendingPrefetch> current_;
  std::map<const ir::Op *, PendingPrefetch> scheduled_;
};

class CodeGen {
public:
  CodeGen(const ir::Kernel &k, llvm::LLVMContext &ctx, llvm::Module &m,
          const TargetInfo &t, DiagnosticEngine &d)
      : kernel_(k), ctx_(ctx), module_(m), b_(ctx), target_(t), diags_(d),
        lanes_(t.f32Lanes()), helpers_(m) {}

  bool emitModule(const std::string &stem);
  /// Defines the row-move functions (each element width, direction and
  /// RowMask; only the one named `only` where it is not empty) in the
  /// module: the runtime library. Reads nothing of the kernel.
  bool emitRuntimeLibrary(const std::string &only);

  //===--------------------------------------------------------------------===//
  // Types and constants
  //===--------------------------------------------------------------------===//
  /// The register type of one element (i1, i8, ..., half; bf16 as i16).
  llvm::Type *valueType(ir::ScalarKind k);
  /// The in-memory type of one element (i1 as i8).
  llvm::Type *memType(ir::ScalarKind k);
  llvm::Type *vecType(ir::ScalarKind k, unsigned lanes) {
    return lanes == 1 ? valueType(k)
                      : llvm::FixedVectorType::get(valueType(k), lanes);
  }
  llvm::Value *i64(int64_t v) { return b_.getInt64(v); }
  /// A constant of kind `k` (float value for float kinds) splatted to `lanes`.
  llvm::Value *constantOf(ir::ScalarKind k, double fv, int64_t iv,
                          unsigned lanes);
  llvm::Value *splat(llvm::Value *v, unsigned lanes) {
    return lanes == 1 ? v : b_.CreateVectorSplat(lanes, v);
  }

  //===--------------------------------------------------------------------===//
  // Memory helpers
  //===--------------------------------------------------------------------===//
  llvm::Value *bufferOf(const ir::Value *v);
  /// Loads `lanes` elements of kind `k` at `ptr` (element pointer), with an
  /// optional lane mask; converts i1 bytes to i1.
  llvm::Value *loadElems(ir::ScalarKind k, llvm::Value *ptr, unsigned lanes,
                         llvm::Value *mask);
  void storeElems(ir::ScalarKind k, llvm::Value *val, llvm::Value *ptr,
                  unsigned lanes, llvm::Value *mask);
  llvm::Value *elemPtr(ir::ScalarKind k, llvm::Value *base, llvm::Value *idx) {
    return b_.CreateGEP(memType(k), base, idx);
  }
  void copyBuffer(const ir::Value *from, const ir::Value *to);
  /// Copies each (from, to) pair's buffer as one parallel assignment: every
  /// source is read before any destination that overlaps it is written (a
  /// cycle, such as a swap, goes through a stack temporary).
  void copyBuffersInParallel(
      const std::vector<std::pair<const ir::Value *, const ir::Value *>> &moves);
  /// A lane mask with the first `n` of `lanes` lanes set.
  llvm::Value *prefixMask(unsigned n, unsigned lanes);

  /// Emits `for (iv = lb; iv < ub; iv += step) body(iv)` with i64 bounds.
  void emitLoop(llvm::Value *lb, llvm::Value *ub, int64_t step,
                const std::function<void(llvm::Value *)> &body);
  /// Nested loops over `shape` (all dimensions), innermost last.
  void emitNest(const std::vector<int64_t> &shape,
                const std::function<void(const std::vector<llvm::Value *> &)> &body);
  /// Values carried from iteration to iteration (accumulators in registers,
  /// row pointers): `body(iv, cur)` returns the next values; the result is
  /// their values after the loop. The body runs at least once (iv = lb, then
  /// while iv + step < ub); blocks `name` and `name.exit`.
  using CarriedBody = std::function<std::vector<llvm::Value *>(
      llvm::Value *, const std::vector<llvm::Value *> &)>;
  std::vector<llvm::Value *> emitCarriedLoop(const char *name, llvm::Value *lb, llvm::Value *ub,
                                             int64_t step,
                                             const std::vector<llvm::Value *> &init,
                                             const CarriedBody &body);

  //===--------------------------------------------------------------------===//
  // Elementwise (CodeGenElementwise.cpp)
  //===--------------------------------------------------------------------===//
  /// Applies elementwise op `op` to operands (scalars or vectors of `lanes`).
  llvm::Value *emitElementwise(const ir::Op &op, llvm::ArrayRef<llvm::Value *> x,
                               unsigned lanes);
  llvm::Value *emitCast(llvm::Value *v, ir::ScalarKind from, ir::ScalarKind to,
                        unsigned lanes);
  void emitFused(const ir::Op &op);
  void emitSplat(const ir::Op &op);

  //===--------------------------------------------------------------------===//
  // Math (CodeGenMath.cpp): f32 scalars or vectors in, the same out; the
  // error bounds and special values are listed at the top of that file.
  //===--------------------------------------------------------------------===//
  llvm::Value *emitExp(llvm::Value *x);
  llvm::Value *emitExp2(llvm::Value *x);
  llvm::Value *emitLog(llvm::Value *x);
  llvm::Value *emitLog2(llvm::Value *x);
  llvm::Value *emitTanh(llvm::Value *x);
  llvm::Value *emitSigmoid(llvm::Value *x);
  llvm::Value *emitErf(llvm::Value *x);
  /// sin(x), or cos(x) with `isCos`.
  llvm::Value *emitSinCos(llvm::Value *x, bool isCos);
  /// x^y as C's powf.
  llvm::Value *emitPow(llvm::Value *x, llvm::Value *y);

  //===--------------------------------------------------------------------===//
  // Cube unit (CodeGenMma.cpp)
  //===--------------------------------------------------------------------===//
  void emitMma(const ir::Op &op);

  //===--------------------------------------------------------------------===//
  // Prefetch (CodeGenPrefetch.cpp)
  //===--------------------------------------------------------------------===//
  void emitPrefetch(const ir::Op &op);
  /// Requests the line `at` bytes past the base of the prefetch being
  /// emitted.
  void requestLine(llvm::Value *at);
  /// Requests the line `col` bytes into the row at byte `rowAt` (clamped to
  /// the row's last byte).
  void prefetchLine(llvm::Value *rowAt, llvm::Value *col);
  /// The mma or fused op `op` is about to be emitted: it takes the prefetch
  /// schedule-prefetch gave it, if any, and each `spreadStep` in its loops
  /// requests a share of the lines.
  void beginSpread(const ir::Op &op);
  void spreadStep();
  /// Requests the lines of the prefetch being spread not yet requested;
  /// none is being spread after.
  void flushPrefetch();

  llvm::IRBuilder<> &builder() { return b_; }
  unsigned lanes() const { return lanes_; }

private:
  void emitProgram(const std::string &name);
  void emitGrid(const std::string &name);
  void emitBlock(const ir::Block &block);
  void emitOp(const ir::Op &op);
  void emitFor(const ir::Op &op);
  void emitIf(const ir::Op &op);
  /// Emits `body` at the end of loop `li`'s preheader (run once before the
  /// loop, whether or not it iterates), then restores the insertion point.
  void atPreheader(int li, const std::function<void()> &body);
  /// Whether f32 values of type `t` are scaled by 2^n in one `vscalefps`
  /// (16-lane vectors on AVX-512).
  bool scalesInOneStep(llvm::Type *t) const;
  /// y * 2^n for f32 y in [0.5, 2) and integral n (f32) in [-152, 129],
  /// rounded once: into the subnormals, to +0 below them, +inf above.
  llvm::Value *scaleByPowerOfTwo(llvm::Value *y, llvm::Value *n);
  /// The Payne-Hanek reduction of f32 angles `a` (>= 0) in the lanes of
  /// `large` (a >= 2^28, finite), behind a branch taken when any lane is:
  /// returns `r` (f64) and `q` (quadrant, i64) with those lanes replaced.
  std::pair<llvm::Value *, llvm::Value *>
  reduceLargeAngles(llvm::Value *a, llvm::Value *large, llvm::Value *r, llvm::Value *q);
  void emitLoadStore(const ir::Op &op);
  /// A `copy`: its read, then its write, as the load and the store it
  /// replaces.
  void emitCopy(const ir::Op &op);
  /// One tile move; `copyDst`: the write side of a copy, which a load's
  /// fast path does tensor to tensor.
  void emitTileMove(const TileMove &m, const TileMove *copyDst);
  /// The move a load or store does.
  static TileMove tileMoveOf(const ir::Op &op);
  /// A `load {copy}`'s fast path: the tile's rows from tensor `t` (at
  /// globalBase) to its store's tensor (at copyBase), streamed where the store
  /// streams and the run-time tests allow.
  void emitCopyRows(const TileMove &copyTo, const TensorInfo &t, unsigned lead,
                    llvm::Value *globalBase, const TensorInfo *copyDst, llvm::Value *copyBase,
                    const std::vector<int64_t> &shape);
  /// A load's or store's slow path (a partial, masked or strided tile): row by
  /// row inline, or through the runtime.
  void emitSlowMove(const TileMove &m, const TensorInfo &t, const std::vector<llvm::Value *> &off,
                    const std::vector<int64_t> &shape, llvm::Value *buf, const ir::Value *mask);
  void emitGatherScatter(const ir::Op &op);
  void emitScalarMemory(const ir::Op &op);
  void emitCheckBounds(const ir::Op &op);
  void emitReduce(const ir::Op &op);
  void emitShapeOp(const ir::Op &op);
  void loadTensors(llvm::Value *args, bool inGrid);
  llvm::Value *scalar(const ir::Value *v);
  llvm::Value *otherValue(ir::ScalarKind k, const ir::OpAttrs &a);
  llvm::Value *allocaEntry(llvm::Type *t, uint64_t count);

  /// The for loops being emitted, outermost first: the op, the last block
  /// of its preheader (ends in a branch to the header) and the header.
  struct LoopRecord {
    const ir::Op *op;
    llvm::BasicBlock *tail, *header;
  };
  std::vector<LoopRecord> loops_;

  const ir::Kernel &kernel_;
  llvm::LLVMContext &ctx_;
  llvm::Module &module_;
  llvm::IRBuilder<> b_;
  TargetInfo target_;
  DiagnosticEngine &diags_;
  unsigned lanes_;
  llvm::Function *fn_ = nullptr;
  /// Source locations (!dbg), and how each op sets its location.
  DebugInfo debug_;
  void beginDebugInfo();
  /// Gives `fn_` a subprogram of its own and its entry the kernel's location.
  void attachSubprogram(const std::string &name);
  void setLocation(const SourceLoc &loc);
  /// Shape constants, shared by the module's functions.
  ModuleHelpers helpers_;
  /// The scratch block, offset array and arguments of the function being
  /// emitted.
  FunctionFrame frame_;
  llvm::DenseMap<const ir::Value *, llvm::Value *> scalars_;

  /// Load/store forwarding (forward-tiles decided which: `load {forward}`,
  /// `store {forwarded}`): the tile is read (written) by its one consumer
  /// (producer) straight from (to) global memory when the whole tile is in
  /// bounds, and through its buffer otherwise. `base` points at element 0 of
  /// the tile either way; `strides` are the element strides of the tile's
  /// axes (innermost 1).
  struct Forwarded {
    llvm::Value *base = nullptr;
    std::vector<llvm::Value *> strides;
  };
  llvm::DenseMap<const ir::Value *, Forwarded> forwardedLoads_;
  /// v: n = lanes / blk vectors of n blocks of blk lanes, transposed as an
  /// n x n matrix of blocks (v[j] then holds block j of every input, in
  /// order) by a butterfly of shuffles: at width w, vectors i and i|w swap
  /// their off-diagonal w x w sub-matrices.
  void transposeVectorBlocks(std::vector<llvm::Value *> &v, unsigned blk);
  /// The accumulators of an mr x cols block at (m0, n0) of an f32 tile C
  /// [.., N]: their addresses, the mask of a partial last vector per row,
  /// their values.
  struct AccBlock {
    unsigned nv = 0; ///< vectors per row
    std::vector<llvm::Value *> ptr, init, masks;
  };
  /// With `start` (acc_splat: a vector of the splat's value) the
  /// accumulators start there and nothing is loaded.
  AccBlock loadAccumulators(llvm::Value *C, int64_t N, llvm::Value *m0, unsigned mr,
                            llvm::Value *n0, int64_t cols, llvm::Value *start = nullptr);
  /// The vector an mma marked acc_splat starts its accumulators from, else
  /// null.
  llvm::Value *accStart(const ir::Op &mma);
  /// Stores an mma's final accumulators `out` where `acc` was loaded from;
  /// with `canonical` (the mma is marked `nan = canonical`) each NaN the
  /// canonical one.
  void storeAccumulators(const AccBlock &acc, const std::vector<llvm::Value *> &out,
                         bool canonical);
  /// Packs an mma operand (`emit` gets where it is): before the `hoist`
  /// innermost loops around the mma (select-mma's pack_a / pack_b), or here.
  void packOperand(const ir::Value *v, int64_t hoist,
                   const std::function<void(const Forwarded &)> &emit);
  /// Interleaves rows 2p and 2p + 1 of a [2 KH, X] bf16 tile (rows `ld`
  /// apart) into dst [KH, X] 32-bit pairs; with `panel` (a multiple of the
  /// lanes) as panels of that many columns, each [KH, panel] and contiguous,
  /// the last padded (pairsIndex).
  void interleavePairs(llvm::Value *src, llvm::Value *ld, llvm::Value *dst, int64_t X,
                       int64_t KH, int64_t panel = 0);
  /// Transposes the 32-bit pairs of a [X, 2 W] bf16 tile (rows `ld` apart)
  /// into dst [W, X], in panels as interleavePairs.
  void transposePairs(llvm::Value *src, llvm::Value *ld, llvm::Value *dst, int64_t X,
                      int64_t W, int64_t panel = 0);
  /// Where pair (p, x) of a [KH, X] pairs panel lives: p * X + x, or with
  /// `panel` > 0 columns a panel (x in whole runs of lanes within one panel)
  /// floor(x / panel) * KH * panel + p * panel + x mod panel.
  llvm::Value *pairsIndex(llvm::Value *p, llvm::Value *x, int64_t X, int64_t KH, int64_t panel);
  /// An mma's operands as its form reads them: a as [M, K] rows lda apart,
  /// b as [K, N] (broadcast) or [N, K] (dot) rows ldb apart, of kind kb; C
  /// the result's buffer (holding acc).
  struct MmaOperands {
    llvm::Value *A, *lda, *B, *ldb, *C;
    ir::ScalarKind kb;
    int64_t M, N, K;
  };
  void emitMmaDot(const ir::Op &op, const MmaOperands &o);
  void emitMmaBroadcast(const ir::Op &op, const MmaOperands &o);
  /// `lanes` elements of `kind` at base[idx] (masked), as f32.
  llvm::Value *loadAsF32(ir::ScalarKind kind, llvm::Value *base, llvm::Value *idx,
                         llvm::Value *mask);
  /// A [rows, cols] tile of `kind` at `src` (rows `ld` apart) as contiguous
  /// f32 at `dst`; transposeToF32 writes it transposed, [cols, rows].
  void convertRowsToF32(ir::ScalarKind kind, llvm::Value *src, llvm::Value *ld, llvm::Value *dst,
                        int64_t rows, int64_t cols);
  void transposeToF32(ir::ScalarKind kind, llvm::Value *src, llvm::Value *ld, llvm::Value *dst,
                      int64_t rows, int64_t cols);
  /// An mma's K loop: emitCarriedLoop taking a share of a spread prefetch
  /// each iteration.
  std::vector<llvm::Value *> mmaKLoop(llvm::Value *lb, llvm::Value *ub, int64_t step,
                                      const std::vector<llvm::Value *> &init,
                                      const CarriedBody &body);
  /// Each of lanes vectors summed across its lanes by a halving tree: lane i
  /// of the result holds v[i]'s sum.
  llvm::Value *sumLanes(std::vector<llvm::Value *> v);
  /// The bf16 mma on AMX tiles (CodeGenMma.cpp); `canonical` as for
  /// storeAccumulators.
  void emitMmaAmx(llvm::Value *A, llvm::Value *ldaBytes, llvm::Value *PB, llvm::Value *C,
                  int64_t M, int64_t N, int64_t K, bool canonical);
  /// The bf16 pairs form of an mma with many rows (CodeGenMma.cpp).
  void emitMmaBf16Pairs(const ir::Op &op, const Forwarded &fa, llvm::Value *C, int64_t M,
                        int64_t N, int64_t K, bool amx);
  /// Stores whose fast path the producing fused loop already did: the
  /// in-bounds flag, so the store emits only the slow path.
  llvm::DenseMap<const ir::Op *, llvm::Value *> forwardedStores_;
  /// Copies `bytes` from `src` to `dst` (not overlapping) with vector
  /// moves, a loop for long copies: no library call.
  void emitInlineCopy(llvm::Value *dst, llvm::Value *src, int64_t bytes);
  /// Copies one tile row of `bytes` from `src` to `dst`: with `stream`, in
  /// non-temporal stores of `chunk` bytes (16, or for a short row 32 or 64
  /// where the caller checked that alignment), whole vectors in the middle
  /// of a long row (the caller checked alignment and overlap); otherwise
  /// memmove if `mayOverlap`, else memcpy.
  void emitRowCopy(llvm::Value *dst, llvm::Value *src, int64_t bytes, unsigned align,
                   bool stream, bool mayOverlap, int64_t chunk = 16);
  /// The widest non-temporal store (32 or 64 bytes, at most a vector
  /// register) that divides a short streamed row of `rowBytes` (128 or
  /// fewer; longer rows use whole vectors in their middle anyway), or 16.
  int64_t streamChunk(int64_t rowBytes) const;
  /// The run-time test that every destination row of the tile at `dst`
  /// starts `align`-byte aligned: the first does and the row strides keep
  /// it so.
  llvm::Value *rowsAligned(llvm::Value *dst, const TensorInfo &d, unsigned dlead,
                           const std::vector<int64_t> &shape, unsigned eb, int64_t align);
  /// emitEitherWay for a streamed move: `emit(false, 16)` without
  /// `streamOk`; otherwise behind it `emit(true, wide)` where `wideOk` (the
  /// rows aligned to `wide` bytes) holds, `emit(true, 16)` where not.
  void emitStreamChoice(llvm::Value *streamOk, llvm::Value *dst, const TensorInfo &d,
                        unsigned dlead, const std::vector<int64_t> &shape, unsigned eb,
                        const std::function<void(bool, int64_t)> &emit);
  /// For a `store {stream}` of a tile with rows of 32 bytes or more (a
  /// multiple of 16), the run-time test that every destination row starts
  /// 16-byte aligned and, given a source tensor tile, that the two tiles do
  /// not overlap; null when the store does not stream.
  llvm::Value *streamable(const ir::Op &store, llvm::Value *dst, const TensorInfo &d,
                          unsigned dlead, llvm::Value *src, const TensorInfo *s,
                          unsigned slead, const std::vector<int64_t> &shape, unsigned eb);
  /// Emits `emit(true)` and `emit(false)` behind the test `cond` (only
  /// `emit(false)` when `cond` is null).
  void emitEitherWay(llvm::Value *cond, const std::function<void(bool)> &emit);
  /// The spread prefetches waiting, scheduled and being requested.
  PrefetchEmitter prefetches_;
  /// Use counts and single users of the body (an analysis of dsl/ir).
  std::optional<ir::Uses> uses_;

public:
  /// How a row move reads the tile's mask: none; lane by lane; or one byte
  /// per row (a mask broadcast along the rows: each row moves whole or not
  /// at all, and its byte is the row's first). select-moves decides.
  using RowMask = ir::RowMask;
  /// Moves a partial or masked tile over a contiguous innermost axis: its
  /// last two axes through the row-move function of that element width,
  /// direction and RowMask (declareRowMove; defined by the runtime library),
  /// leading axes here. `mask`: the tile mask's buffer (bytes, the tile's
  /// shape) or null.
  void emitPartialRows(bool isLoad, const TensorInfo &t, const std::vector<llvm::Value *> &off,
                       const std::vector<int64_t> &shape, llvm::Value *buf, llvm::Value *other,
                       llvm::Value *mask = nullptr, RowMask how = RowMask::None);
  /// Emits the body of `fn`, the row-move function declareRowMove gave for
  /// (`width`, `isLoad`, `how`).
  void defineRowMove(llvm::Function *fn, unsigned width, bool isLoad, RowMask how);
  /// Calls the runtime to move a partial, masked or strided tile between
  /// tensor `t` at `off` and the local buffer `buf` (`other`: the value a
  /// load reads outside the tensor; `mask`: the tile mask's buffer or null).
  void emitTileMoveCall(bool isLoad, const TensorInfo &t, const std::vector<llvm::Value *> &off,
                        const std::vector<int64_t> &shape, llvm::Value *buf, llvm::Value *mask,
                        llvm::Value *other);
  /// The fast-path test of a tile access: every offset in range, the tile
  /// inside the tensor, the innermost axis contiguous.
  llvm::Value *tileInBounds(const TensorInfo &t, const std::vector<llvm::Value *> &off,
                            const std::vector<int64_t> &shape);
  /// Where a fused loop reads input `v` / writes result `v`.
  Forwarded accessOf(const ir::Value *v);
  /// Emits the pure scalar ops that compute `v` now, if they are not yet
  /// (they are emitted again where they stand; LLVM folds the duplicates);
  /// false when `v` needs anything else (a load_scalar, a loop's value).
  bool emitScalarEarly(const ir::Value *v);
  /// For a store with `overlap = checked` fed by `load` (same tensor): the
  /// run-time test that the two regions are apart along some axis or are the
  /// same region of the same shape; null when the store's offsets cannot be
  /// computed at the load.
  llvm::Value *regionsApart(const TileMove &load, const TileMove &store);
  /// The `store {forwarded}` that `producer` (a fused loop, or a `load
  /// {copy}`) writes into, or null; emits the pure scalar ops between the
  /// two now if the store's offsets need them.
  const ir::Op *forwardedStore(const ir::Op &producer);
  llvm::DenseMap<const ir::Value *, TensorInfo> tensors_;
  bool failed_ = false;
};

} // namespace tilejit::codegen

#endif
