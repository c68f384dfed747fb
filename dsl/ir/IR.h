//===- IR.h - Tile IR: types, values, ops, blocks, kernels -------*- C++ -*-===//
///
/// \file
/// Tile IR is the typed, SSA-form IR between the DSL front end (dsl/sema) and
/// LLVM code generation (codegen/llvm). Passes (codegen/passes) rewrite it.
/// It knows nothing of the AST, of LLVM IR or of the JIT.
///
/// Structure: a `Module` holds `Kernel`s. A kernel has parameters (global
/// tensors and scalars), shape constraints, a *grid* block that yields the
/// number of programs along up to three axes, and a *body* block that one
/// program executes. A `Block` owns arguments and an ordered list of `Op`s;
/// an op owns its results and its nested blocks (regions). Values are owned by
/// the op or block that defines them and referenced by raw pointer.
///
/// ## Types
/// - scalar: `i1 i8 u8 i16 u16 i32 u32 i64 f16 bf16 f32` (`ScalarKind`).
/// - tile: an element kind and a static shape of rank 1..4, e.g.
///   `tile<f32, 16, 128>`. Row-major: the last dimension is contiguous.
/// - tensor: a global tensor parameter, `tensor<f16, 3>`: element kind and
///   rank (1..6); sizes and strides (in elements) are runtime values.
///
/// ## Semantics note (applies to every op)
/// - Evaluation is in program order; ops have no side effects except the
///   Memory family's stores/scatters and the control ops' nested blocks.
/// - Elementwise ops (families Unary/Binary/Ternary) apply lane-wise. All
///   operands have exactly the result's shape (the front end inserts `splat`
///   and `broadcast`); element kinds match except where stated.
/// - Integer arithmetic is two's complement and wraps. `div` truncates toward
///   zero (floor division for unsigned kinds), `rem` has the dividend's sign;
///   an integer division or remainder by zero yields 0 (never UB). `shl`/`shr`
///   take the shift amount modulo the bit width; `shr` is arithmetic for
///   signed kinds and logical for unsigned ones. `min`/`max` compare with the
///   kind's signedness.
/// - Float arithmetic is IEEE-754 binary32 with round-to-nearest-even,
///   subnormals kept, NaN propagating. No contraction: `a*b+c` is two
///   roundings; `fma` is one. `min`/`max` return NaN if either operand is NaN.
///   f16 and bf16 are storage kinds: only data movement, `cast`, `bitcast`,
///   `select`, `splat`, `broadcast`, `reshape`, `transpose` and `mma`
///   operands accept them; arithmetic happens in f32.
/// - `exp`/`log`/`sqrt`/`rsqrt` on f32: `sqrt` is correctly rounded; `exp`
///   and `log` are polynomial approximations whose maximum relative error is
///   documented and tested in codegen (target: <= 4 ulp on the normal range);
///   `rsqrt` is within 2 ulp. exp(-inf) = +0, exp overflow = +inf.
/// - `exp2`, `log2`, `tanh`, `sigmoid` (1 / (1 + exp(-x))), `erf`, `sin`,
///   `cos` and `pow` (x^y) on f32 are approximations too, with the bounds
///   documented and tested in codegen (codegen/llvm/CodeGenMath.cpp; within
///   2 ulp, sin, cos and pow within 0.51 ulp, sin and cos on every finite
///   input). A NaN operand gives NaN except where C's pow says otherwise
///   (pow(x, 0) = pow(1, y) = 1); log2(0) = -inf, log2(x < 0) = NaN; tanh
///   and sigmoid saturate (tanh(+-inf) = +-1, sigmoid(-inf) = 0); sin and
///   cos of +-inf are NaN; pow follows C's special cases, including NaN for
///   a finite negative base with a non-integer exponent.
/// - `cast` converts values: int->int truncates or extends by the source's
///   signedness; int->float rounds to nearest even; float->int rounds toward
///   zero and saturates to the destination range, NaN -> 0; f32->f16/bf16
///   rounds to nearest even (overflow -> inf, NaN stays NaN); i1 -> int gives
///   0/1, x -> i1 is `x != 0`. `round` is round-half-to-even on floats (an
///   identity on integers), so `cast<i8>(round(x))` quantises with
///   round-and-saturate. `bitcast` reinterprets bits between kinds of the same
///   width (byte-exact copies of any element).
/// - `cmp` yields i1; its operands may be any kind (same kind for both).
///   Float comparisons are ordered except `ne`, which is unordered.
/// - NaN bits (docs/dsl.md 5): a float arithmetic op (`isFloatArithmetic`),
///   a float `reduce` or an `mma` with the attribute `nan = canonical` gives
///   the canonical quiet NaN 0x7fc00000 where its result is NaN, whatever
///   NaNs its operands carry; without it, a NaN of unspecified sign and
///   payload. The canonicalize-nan pass sets the attribute exactly where a
///   NaN result's bits may be seen (stored, or carried on by data movement,
///   `select`, `neg`, `abs`, `floor`, `ceil`, `round`, a float `cast` or
///   `bitcast`); whether a result is NaN never depends on its operands' NaN
///   bits, so arithmetic, `cmp`, `reduce` and `mma` operands do not count as
///   seen.
///
/// ## Operation semantics (operands; attributes; result)
/// Misc:
/// - `const`        (); value; scalar. Integer value in `intValue`, float in
///                  `floatValue`.
/// - `const_param`  (); name, value; i64 or i1. A compile-time parameter's use,
///                  bound to its specialisation value; the `specialize` pass
///                  folds it into `const`.
/// - `program_id`   (); axis; i64. This program's index along axis 0..2.
/// - `num_programs` (); axis; i64. Grid extent along axis 0..2.
/// - `dim`          (tensor); axis; i64. Runtime size of that tensor axis.
/// - `stride`       (tensor); axis; i64. Runtime stride in elements.
/// Elementwise: as in the semantics note. `cast` and `bitcast` get the
///   destination kind from their result type. `cmp` has attribute `predicate`;
///   the float arithmetic ops may have `nan` (= canonical).
///   `select(c, a, b)`: c is i1. `fma(a, b, c)` = a*b+c with one rounding (f32).
/// Tile:
/// - `splat`     (scalar); ; tile. Every element is the scalar.
/// - `iota`      (); axis; tile of an integer kind. Element = its index along
///               `axis`.
/// - `broadcast` (tile); ; tile of same rank. Every operand dimension is 1 or
///               equals the result's; size-1 dimensions repeat.
/// - `reshape`   (tile); ; tile with the same element count (row-major).
/// - `transpose` (tile of rank 2); ; the transposed tile.
/// - `reduce`    (tile); kind (sum|max|min), axis, nan; the tile without that axis
///               (a scalar if the operand had rank 1). Float `sum` association
///               order is unspecified; `max`/`min` of floats propagate NaN.
///               Integer sums wrap.
/// - `mma`       (a, b, acc); transA, transB, nan; tile<f32, M, N>.
///               a is [M, K] (or [K, M] with transA), b is [K, N] (or [N, K]
///               with transB), element kinds f32|f16|bf16|i8, acc is
///               tile<f32, M, N>. result[m, n] = acc[m, n] + sum_k a[m,k]*b[k,n]
///               computed in f32; the order of the sum is the one of the
///               `form` that select-mma chose (its header,
///               codegen/passes/SelectMma.h, states each). nan: as for
///               arithmetic (NaN bits above). Set by select-mma: `form`
///               (dot|broadcast|bf16pairs|amx), `dpbf16` (the dot and
///               broadcast forms sum bf16 product pairs with vdpbf16ps),
///               `block = [rows, cols]` (the register block), and
///               `pack_a`/`pack_b = N` (the operand is packed into a panel
///               before the mma, hoisted out of the N innermost `for` loops
///               around it; no attribute: read where it is), and `acc_splat`
///               (acc is a splat read by this mma alone: the accumulators
///               start at its value, and the splat writes nothing).
/// - `fused`     (inputs...); ; one tile result. Produced by the
///               fuse-elementwise pass. Inputs are tiles (each of the result's
///               rank, dimensions 1 or the result's: broadcast) or scalars. The
///               body block has one argument per input, of the input's *element*
///               kind (scalars), holds only elementwise ops, `const`s and
///               `iota`s on scalars (an `iota {axis}` there is the index I
///               along axis), and ends in `yield` of one scalar. Result
///               element at index I = body evaluated on the inputs' elements
///               at I. (The pass makes none that streams more than eight input
///               tiles, or reads more than 24; the IR itself does not limit
///               them.) Its one user may be a `store {forwarded}`, which
///               the loop writes straight into where the tile is inside the
///               tensor.
/// Memory (global tensors are bounds-checked: an element whose index lies
///   outside [0, size) along any axis is never read or written):
/// - `load`      (tensor, offsets[rank] (i64 scalars), [mask tile]); other,
///               hasMask; tile of rank r <= tensor rank, element kind = the
///               tensor's. Tile dimensions map to the tensor's *trailing* r
///               axes; leading axes are indexed by their offset alone.
///               result[i] = tensor[off + i] when in bounds and mask[i], else
///               `other` (attribute, default 0). Set by forward-tiles
///               (codegen/passes/ForwardTiles.h): `forward` (its one user,
///               a fused op or an mma, reads it in place where the tile is
///               inside the tensor) or `copy` (its one user, a store of it,
///               copies rows tensor to tensor there). `row_mask =
///               lanes|rows` (select-moves, codegen/passes/SelectMoves.h):
///               how a masked one reads its mask on the slow path.
/// - `store`     (tensor, offsets[rank], value tile, [mask tile]); hasMask,
///               stream (write around the caches where the tile is whole;
///               select-moves keeps it only where the rows allow), row_mask,
///               overlap; no result. Writes the in-bounds, unmasked
///               elements. The value is the whole tile as its ops computed
///               it, even where they read the region being written (value
///               semantics). `overlap` (set by resolve-overlap) says how the
///               region relates to those of the same tensor read by the
///               loads that feed the value directly (the value itself, or an
///               input of the `fused` op that computes it), and so whether
///               the value may be read and written in place, in one pass:
///               `disjoint` (provably apart) and `in_place` (provably the
///               same region, read element by element before it is written)
///               may; `buffered` (provably overlapping, not the same
///               region: a shift, a broadcast row of it) goes through
///               the value's buffer, whole, before the store writes;
///               `checked` (offsets not known) compares the regions at run
///               time and takes the buffered way when they overlap unless
///               they are the same. No attribute: no such load.
///               `forwarded` (forward-tiles): the op producing the value
///               (a `fused` op or a `load {copy}`) does the in-bounds case;
///               the store does only the rest.
/// - `copy`      (source tensor, offsets[source rank], destination tensor,
///               offsets[destination rank]); other, stream, cached, overlap;
///               the tile moved (its buffer: the slow path's stage). Made by
///               forward-tiles from a `load {copy}` and the `store
///               {forwarded}` of it right after it (nothing between):
///               exactly that load followed by that store. Where both tiles
///               are whole and contiguous, rows go tensor to tensor
///               (streamed with `stream`); otherwise the tile is loaded into
///               its buffer (`other` outside the source) and stored from it.
///               The tile dimensions map to the trailing axes of both
///               tensors. `other`, `cached` are the load's; `stream`,
///               `overlap` the store's.
/// - `gather`    (tensor, indices[rank] (i32/i64 tiles of the result's
///               shape), [mask]); other, hasMask; tile.
///               result[i] = tensor[idx0[i], idx1[i], ...] if in bounds and
///               mask[i], else other.
/// - `scatter`   (tensor, indices[rank], value, [mask]); hasMask; no result.
///               Elements written in row-major order (later wins).
/// - `load_scalar`  (tensor, indices[rank] scalars); other; scalar. `other`
///               (default 0) if out of bounds.
/// - `store_scalar` (tensor, indices[rank], value); ; none. Skipped if out
///               of bounds.
/// - `prefetch`  (tensor, offsets[rank]); extent, spread; none. A hint with
///               no effect on results: the cache lines of the tile region
///               `extent` (rank r <= tensor rank, trailing axes as for `load`)
///               at the offsets are requested into the cache. The region is
///               rows along its first axis, each the rest of the region; a
///               region not wholly inside the tensor, or whose rows are not
///               contiguous, is not requested at all (never a line outside
///               the tensor). With `spread` the prefetches of a block wait,
///               in order, for its `mma` and `fused` ops whose loops are long
///               enough: each such op takes the oldest one and requests its
///               lines a few (at most 8) per inner-loop iteration, so that
///               they overlap its arithmetic instead of queueing as a burst
///               (what is left is requested after the op; what no op took,
///               at the block's end). The schedule-prefetch pass
///               (codegen/passes/SchedulePrefetch.h) writes which op takes
///               it and how many lines an iteration: `by = N` (the N-th
///               mma or fused op after it in the block), `per = P`.
/// - `check_bounds` (tensor, indices[rank], [mask]); extent, name, hasMask;
///               none. Debug mode (insert-bounds-checks): reports the access
///               `name` ("load of x", ...) at this op's location as a bounds
///               violation, which stops the launch, when it reaches no element
///               of the tensor. Scalar indices: the region [i, i + extent)
///               (`extent` one entry per tensor axis; 1 for an element)
///               misses [0, size) along some axis. Tile indices (i64 tiles of
///               one shape, `extent` empty): some element's index, where the
///               mask is set, lies outside [0, size). It changes no data.
/// Control:
/// - `for`   (lb, ub, step, inits...); ; results = final iteration values.
///           One block with arguments (iv: i64, iters...) ending in `yield`
///           of the next iteration values. Runs for iv = lb, lb+step, ...
///           while iv < ub (step > 0; a step <= 0 runs zero iterations):
///           ub > lb ? (ub - lb - 1) / step + 1 : 0 iterations, counted
///           without overflow (iv never steps past ub). The yield is a
///           parallel assignment: every next value is read before any
///           iteration value is replaced (`yield %b, %a` swaps a and b).
/// - `if`    (cond i1); ; results. Two blocks (then, else), no arguments, each
///           ending in `yield` of the results (an empty else block is legal
///           when there are no results). Its yield too assigns in parallel.
/// - `yield` (values...); terminates a block of for/if/fused and the grid.
///
//===----------------------------------------------------------------------===//
#ifndef TILEJIT_DSL_IR_IR_H
#define TILEJIT_DSL_IR_IR_H

#include "dsl/support/SourceLoc.h"

#include <cassert>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace tilejit::ir {

//===----------------------------------------------------------------------===//
// Types
//===----------------------------------------------------------------------===//

enum class ScalarKind : uint8_t {
  I1, I8, U8, I16, U16, I32, U32, I64, F16, BF16, F32
};

/// Bits of one element (i1 counts as 1; stored as a byte in memory).
unsigned bitWidth(ScalarKind k);
/// Bytes one element occupies in memory (i1: 1).
unsigned byteWidth(ScalarKind k);
bool isFloat(ScalarKind k);   ///< f16, bf16, f32
bool isInteger(ScalarKind k); ///< every integer kind except i1
bool isSigned(ScalarKind k);  ///< i8 i16 i32 i64
/// Printed name: "f16", "u8", ...
const char *scalarName(ScalarKind k);
/// Parses a printed name; returns false if unknown.
bool parseScalarKind(const std::string &name, ScalarKind &out);

class Type {
public:
  enum class Kind : uint8_t { None, Scalar, Tile, Tensor };

  Type() = default;
  static Type none() { return Type(); }
  static Type scalar(ScalarKind e) { return Type(Kind::Scalar, e, {}, 0); }
  static Type tile(ScalarKind e, std::vector<int64_t> shape) {
    assert(!shape.empty() && shape.size() <= 4 && "tile rank is 1..4");
    return Type(Kind::Tile, e, std::move(shape), 0);
  }
  static Type tensor(ScalarKind e, unsigned rank) {
    assert(rank >= 1 && rank <= 6 && "tensor rank is 1..6");
    return Type(Kind::Tensor, e, {}, rank);
  }

  Kind kind() const { return kind_; }
  bool isNone() const { return kind_ == Kind::None; }
  bool isScalar() const { return kind_ == Kind::Scalar; }
  bool isTile() const { return kind_ == Kind::Tile; }
  bool isTensor() const { return kind_ == Kind::Tensor; }
  ScalarKind elem() const { return elem_; }
  /// Tile shape (empty for scalars and tensors).
  const std::vector<int64_t> &shape() const { return shape_; }
  /// Tile rank, or tensor rank, or 0 for scalars.
  unsigned rank() const {
    return isTensor() ? tensorRank_ : static_cast<unsigned>(shape_.size());
  }
  /// Number of elements of a tile (1 for a scalar).
  int64_t numElements() const;
  /// The same shape with another element kind (scalars stay scalars).
  Type withElem(ScalarKind e) const;

  bool operator==(const Type &o) const {
    return kind_ == o.kind_ && elem_ == o.elem_ && shape_ == o.shape_ &&
           tensorRank_ == o.tensorRank_;
  }
  bool operator!=(const Type &o) const { return !(*this == o); }

  /// "f32", "tile<f16, 4, 128>", "tensor<bf16, 3>", "none".
  std::string str() const;

private:
  Type(Kind k, ScalarKind e, std::vector<int64_t> s, unsigned r)
      : kind_(k), elem_(e), shape_(std::move(s)), tensorRank_(r) {}
  Kind kind_ = Kind::None;
  ScalarKind elem_ = ScalarKind::I64;
  std::vector<int64_t> shape_;
  unsigned tensorRank_ = 0;
};

/// The extents along each axis of a tensor of rank `rank` of the region a
/// tile accesses (trailing axes: the tile's shape; leading ones: 1), as
/// for `load` and `store`.
std::vector<int64_t> regionExtents(unsigned rank, const Type &tile);

//===----------------------------------------------------------------------===//
// Ops, values, blocks
//===----------------------------------------------------------------------===//

enum class OpKind : uint8_t {
#define TILE_OP(Name, Mnemonic, Family) Name,
#include "dsl/ir/Nodes.def"
};

enum class OpFamily : uint8_t {
  Misc, Unary, Binary, Ternary, Tile, Memory, Control
};

const char *mnemonic(OpKind k);
OpFamily family(OpKind k);
/// Parses a mnemonic; returns false if unknown.
bool parseMnemonic(const std::string &name, OpKind &out);
/// True for the Unary/Binary/Ternary families (legal inside `fused`).
inline bool isElementwise(OpKind k) {
  OpFamily f = family(k);
  return f == OpFamily::Unary || f == OpFamily::Binary ||
         f == OpFamily::Ternary;
}
/// True for the elementwise ops defined on f32 only: exp, log, sqrt, rsqrt
/// and the other transcendental functions (exp2 ... pow).
inline bool isFloatMath(OpKind k) {
  switch (k) {
  case OpKind::Exp:
  case OpKind::Log:
  case OpKind::Sqrt:
  case OpKind::Rsqrt:
  case OpKind::Exp2:
  case OpKind::Log2:
  case OpKind::Tanh:
  case OpKind::Sigmoid:
  case OpKind::Erf:
  case OpKind::Sin:
  case OpKind::Cos:
  case OpKind::Pow:
    return true;
  default:
    return false;
  }
}

/// True for the ops that compute a new value from their operands' values on
/// floats (`add sub mul div rem fma min max` and the isFloatMath ops): a NaN
/// result is canonical with `nan = canonical` (see "NaN bits" above). Not
/// `neg`, `abs`, `floor`, `ceil`, `round`, `cast`, `bitcast` or `select`,
/// which keep a NaN operand's bits.
inline bool isFloatArithmetic(OpKind k) {
  switch (k) {
  case OpKind::Add: case OpKind::Sub: case OpKind::Mul: case OpKind::Div:
  case OpKind::Rem: case OpKind::Fma: case OpKind::Min: case OpKind::Max:
    return true;
  default:
    return isFloatMath(k);
  }
}

enum class CmpPredicate : uint8_t { Eq, Ne, Lt, Le, Gt, Ge };
/// A store's region against the same tensor's loads that feed its value
/// (see `store` above).
enum class Overlap : uint8_t { None, Disjoint, InPlace, Buffered, Checked };
/// Printed name: "disjoint", "in_place", "buffered", "checked" ("none").
const char *overlapName(Overlap o);
/// Parses a printed name; returns false if unknown.
bool parseOverlap(const std::string &name, Overlap &out);
/// How a masked load or store reads its mask on the slow path (select-moves):
/// no mask, lane by lane, or one byte per row.
enum class RowMask : uint8_t { None, Lanes, Rows };
/// Printed name: "none", "lanes", "rows".
const char *rowMaskName(RowMask m);
/// Parses a printed name; returns false if unknown.
bool parseRowMask(const std::string &name, RowMask &out);
/// How an `mma` is computed (select-mma; codegen/passes/SelectMma.h).
enum class MmaForm : uint8_t { None, Dot, Broadcast, Bf16Pairs, Amx };
/// Printed name: "dot", "broadcast", "bf16pairs", "amx" ("none").
const char *mmaFormName(MmaForm f);
/// Parses a printed name; returns false if unknown.
bool parseMmaForm(const std::string &name, MmaForm &out);
enum class ReduceKind : uint8_t { Sum, Max, Min };
const char *predicateName(CmpPredicate p);
const char *reduceKindName(ReduceKind k);

class Op;
class Block;

/// An SSA value: an op result or a block argument.
class Value {
public:
  Value(Type type, Op *def, Block *owner, unsigned index)
      : type_(std::move(type)), def_(def), owner_(owner), index_(index) {}

  const Type &type() const { return type_; }
  void setType(Type t) { type_ = std::move(t); }
  /// Defining op, or null for a block argument.
  Op *definingOp() const { return def_; }
  /// Block whose argument this is (null for op results).
  Block *ownerBlock() const { return owner_; }
  bool isBlockArgument() const { return def_ == nullptr; }
  /// Result number, or argument number.
  unsigned index() const { return index_; }
  /// Optional name hint from the source (printing uses counters anyway).
  const std::string &nameHint() const { return nameHint_; }
  void setNameHint(std::string n) { nameHint_ = std::move(n); }
  /// Byte offset of this tile value's local buffer inside the program's
  /// scratch area, assigned by the plan-buffers pass; -1 when the value is
  /// not materialised (scalars, values fused away, or not yet planned).
  int64_t bufferOffset() const { return bufferOffset_; }
  void setBufferOffset(int64_t o) { bufferOffset_ = o; }

private:
  Type type_;
  Op *def_;
  Block *owner_;
  unsigned index_;
  std::string nameHint_;
  int64_t bufferOffset_ = -1;
};

/// Attributes an op may carry; each op kind uses the fields its semantics
/// (above) name and leaves the others at their defaults.
struct OpAttrs {
  int64_t intValue = 0;       ///< const (integer/i1), const_param value
  double floatValue = 0.0;    ///< const (float), load/gather/copy `other`
  int64_t axis = 0;           ///< program_id, num_programs, dim, stride,
                              ///< iota, reduce
  CmpPredicate predicate = CmpPredicate::Eq; ///< cmp
  ReduceKind reduceKind = ReduceKind::Sum;   ///< reduce
  bool transA = false, transB = false;       ///< mma
  MmaForm mmaForm = MmaForm::None; ///< mma: the form (select-mma)
  bool dpbf16 = false;        ///< mma (dot, broadcast): bf16 pairs, vdpbf16ps
  /// mma: the register block (rows of a, and vectors of the result per row
  /// or, in the dot form, rows of b per pass); 0: none.
  int64_t blockRows = 0, blockCols = 0;
  /// mma: operand a / b packed before it, hoisted out of that many of the
  /// `for` loops around it (0: right before it); -1: not packed.
  int64_t packA = -1, packB = -1;
  /// mma: acc is a `splat` this mma alone reads: the accumulators start at
  /// its value in registers and its tile is never written (select-mma).
  bool accSplat = false;
  bool hasMask = false;       ///< load, store, gather, scatter, check_bounds
  bool stream = false;        ///< store, copy: non-temporal (streaming) hint
  bool cached = false;        ///< load: the data is in cache; consumers read
                              ///< it in place (no bulk copy into the buffer)
  bool forward = false;       ///< load: read in place by its one user
                              ///< (forward-tiles)
  bool copy = false;          ///< load: copied tensor to tensor by its one
                              ///< user, a store (forward-tiles)
  bool forwarded = false;     ///< store: its producer did the fast path
                              ///< (forward-tiles)
  RowMask rowMask = RowMask::None; ///< masked load, store (select-moves)
  bool spread = false;        ///< prefetch: over an mma's/fused op's loop
  /// prefetch {spread} (schedule-prefetch): spread by the spreadBy-th mma or
  /// fused op after it in its block, spreadPer lines an iteration; 0: at
  /// the block's end.
  int64_t spreadBy = 0, spreadPer = 0;
  Overlap overlap = Overlap::None; ///< store, copy: against the loads feeding it
  /// copy: where its write (the source's store) stands; the op's own
  /// location is its read's (the load's). Unknown: the op's.
  SourceLoc writeLoc;
  bool canonicalNaN = false;  ///< float arithmetic, reduce, mma: a NaN
                              ///< result is the canonical NaN (printed
                              ///< `nan = canonical`; canonicalize-nan)
  std::vector<int64_t> extent; ///< prefetch: the region's tile shape;
                               ///< check_bounds: the access's region
  std::string name;           ///< const_param; check_bounds: the access
};

class Op {
public:
  Op(OpKind kind, SourceLoc loc) : kind_(kind), loc_(loc) {}
  Op(const Op &) = delete;
  Op &operator=(const Op &) = delete;

  OpKind kind() const { return kind_; }
  const SourceLoc &loc() const { return loc_; }
  void setLoc(SourceLoc l) { loc_ = l; }

  const std::vector<Value *> &operands() const { return operands_; }
  Value *operand(unsigned i) const { return operands_.at(i); }
  unsigned numOperands() const { return operands_.size(); }
  void addOperand(Value *v) { operands_.push_back(v); }
  void setOperand(unsigned i, Value *v) { operands_.at(i) = v; }
  void setOperands(std::vector<Value *> vs) { operands_ = std::move(vs); }

  unsigned numResults() const { return results_.size(); }
  Value *result(unsigned i = 0) const { return results_.at(i).get(); }
  Value *addResult(Type t);

  OpAttrs &attrs() { return attrs_; }
  const OpAttrs &attrs() const { return attrs_; }

  unsigned numBlocks() const { return blocks_.size(); }
  Block *block(unsigned i) const { return blocks_.at(i).get(); }
  Block *addBlock();

  /// The block this op lives in (set when inserted).
  Block *parentBlock() const { return parent_; }
  void setParentBlock(Block *b) { parent_ = b; }

private:
  OpKind kind_;
  SourceLoc loc_;
  std::vector<Value *> operands_;
  std::vector<std::unique_ptr<Value>> results_;
  OpAttrs attrs_;
  std::vector<std::unique_ptr<Block>> blocks_;
  Block *parent_ = nullptr;
};

/// Whether `v` is a scalar whose defining op could be emitted again
/// anywhere its operands are available: a constant, a parameter, a
/// program id or count, a tensor's size or stride, or an elementwise op
/// (no memory, no control, one result). Operands are not looked at: the
/// caller decides where they must be available.
bool isRecomputableScalar(const Value &v);

class Block {
public:
  explicit Block(Op *parent) : parent_(parent) {}
  Block(const Block &) = delete;
  Block &operator=(const Block &) = delete;

  /// The op that owns this block (null for a kernel's grid and body).
  Op *parentOp() const { return parent_; }

  Value *addArgument(Type t);
  unsigned numArguments() const { return args_.size(); }
  Value *argument(unsigned i) const { return args_.at(i).get(); }

  using OpList = std::vector<std::unique_ptr<Op>>;
  OpList &ops() { return ops_; }
  const OpList &ops() const { return ops_; }
  /// Appends `op` and takes ownership.
  Op *append(std::unique_ptr<Op> op);
  /// Inserts `op` before position `pos` and takes ownership.
  Op *insert(size_t pos, std::unique_ptr<Op> op);
  /// The last op if it is a `yield`, else null.
  Op *terminator() const;

private:
  Op *parent_;
  std::vector<std::unique_ptr<Value>> args_;
  OpList ops_;
};

//===----------------------------------------------------------------------===//
// Kernels and modules
//===----------------------------------------------------------------------===//

/// A kernel parameter: a global tensor or a runtime scalar.
struct Param {
  std::string name;
  Type type;       ///< tensor<...> or a scalar kind (i32, i64, f32, i1)
  SourceLoc loc;
};

/// A runtime requirement on a tensor parameter's size, checked by the grid
/// function before any program runs; a violated constraint fails the launch
/// with `message`.
struct ShapeConstraint {
  unsigned param = 0, axis = 0;
  enum class Kind : uint8_t { EqualsConstant, EqualsDim } kind =
      Kind::EqualsConstant;
  int64_t constant = 0;               ///< EqualsConstant
  unsigned otherParam = 0, otherAxis = 0; ///< EqualsDim
  std::string message; ///< e.g. "q: size of axis 2 must equal D (128)"
};

/// A compile-time parameter with the value it was specialised to. Dtype
/// parameters have `isType` and `typeValue`; integers and booleans `intValue`.
struct SpecParam {
  std::string name;
  bool isType = false;
  ScalarKind typeValue = ScalarKind::F32;
  int64_t intValue = 0;
  bool isBool = false;
};

class Kernel {
public:
  explicit Kernel(std::string name);

  const std::string &name() const { return name_; }
  SourceLoc loc;

  std::vector<Param> params;
  std::vector<ShapeConstraint> constraints;
  std::vector<SpecParam> specialization;
  /// Local-buffer budget in bytes per program (the Unified Buffer stand-in);
  /// 0 means the default. Checked by the plan-buffers pass.
  int64_t localBudgetBytes = 0;
  /// Scratch bytes one program needs, set by the plan-buffers pass (the
  /// planned local buffers, 64-byte aligned); codegen exports it.
  int64_t scratchBytes = 0;
  /// True once plan-buffers has assigned every materialised tile a buffer.
  bool buffersPlanned = false;
  /// Debug mode (TILEJIT_DEBUG): insert-bounds-checks guards every access.
  bool debug = false;

  /// Grid block: no arguments except the kernel parameters (see `paramValue`),
  /// ends in `yield` of 1..3 i64 values.
  Block &grid() { return *grid_; }
  const Block &grid() const { return *grid_; }
  /// Body block: executed by every program.
  Block &body() { return *body_; }
  const Block &body() const { return *body_; }

  /// The SSA values of the parameters, as arguments of the body block. The
  /// grid block has the same arguments (in `gridParamValue`).
  Value *paramValue(unsigned i) const { return body_->argument(i); }
  Value *gridParamValue(unsigned i) const { return grid_->argument(i); }
  /// Appends a parameter and its block arguments to both blocks.
  void addParam(Param p);

private:
  std::string name_;
  std::unique_ptr<Block> grid_, body_;
};

class Module {
public:
  std::vector<std::unique_ptr<Kernel>> kernels;
  Kernel *lookup(const std::string &name) const;
};

} // namespace tilejit::ir

#endif
