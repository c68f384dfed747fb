//===- Verifier.cpp - What is legal Tile IR -------------------------------===//
#include "dsl/ir/Verifier.h"

#include <algorithm>
#include <set>

namespace tilejit::ir {

namespace {

class Verifier {
public:
  Verifier(const Kernel &k, DiagnosticEngine &d, const VerifyOptions &o)
      : kernel_(k), diags_(d), opts_(o) {}

  bool run() {
    checkKernelAttrs();
    for (unsigned i = 0; i < kernel_.params.size(); ++i)
      visible_.insert(kernel_.gridParamValue(i));
    checkBlock(kernel_.grid(), /*needsYield=*/true, "grid");
    if (const Op *y = kernel_.grid().terminator()) {
      if (y->numOperands() < 1 || y->numOperands() > 3)
        fail(*y, "the grid yields 1..3 extents");
      for (Value *v : y->operands())
        if (v->type() != Type::scalar(ScalarKind::I64))
          fail(*y, "grid extents must be i64");
    }
    visible_.clear();
    for (unsigned i = 0; i < kernel_.params.size(); ++i)
      visible_.insert(kernel_.paramValue(i));
    checkBlock(kernel_.body(), /*needsYield=*/false, "body");
    return ok_;
  }

private:
  void fail(const Op &op, const std::string &msg) {
    diags_.error(op.loc(), std::string("invalid '") + mnemonic(op.kind()) +
                               "': " + msg);
    ok_ = false;
  }

  void failKernel(const std::string &msg) {
    diags_.error(kernel_.loc, "invalid kernel '" + kernel_.name() + "': " + msg);
    ok_ = false;
  }

  /// `param.axis` names an axis of a tensor parameter (what a constraint
  /// refers to; the grid function reads that size).
  void checkTensorAxis(unsigned param, unsigned axis, const std::string &what) {
    if (param >= kernel_.params.size()) {
      failKernel(what + " refers to parameter " + std::to_string(param) +
                 " of " + std::to_string(kernel_.params.size()));
      return;
    }
    const Param &p = kernel_.params[param];
    if (!p.type.isTensor())
      failKernel(what + " refers to '" + p.name + "', which is not a tensor");
    else if (axis >= p.type.rank())
      failKernel(what + " refers to axis " + std::to_string(axis) + " of '" +
                 p.name + "', which has rank " + std::to_string(p.type.rank()));
  }

  /// Kernel-level attributes against what they refer to.
  void checkKernelAttrs() {
    for (size_t c = 0; c < kernel_.constraints.size(); ++c) {
      const ShapeConstraint &sc = kernel_.constraints[c];
      std::string what = "constraint " + std::to_string(c);
      checkTensorAxis(sc.param, sc.axis, what);
      if (sc.kind == ShapeConstraint::Kind::EqualsDim)
        checkTensorAxis(sc.otherParam, sc.otherAxis, what);
    }
    if (kernel_.localBudgetBytes < 0)
      failKernel("the local budget " + std::to_string(kernel_.localBudgetBytes) +
                 " is negative");
    if (kernel_.scratchBytes < 0)
      failKernel("the scratch size " + std::to_string(kernel_.scratchBytes) +
                 " is negative");
  }

  void checkBlock(const Block &b, bool needsYield, const char *what) {
    std::vector<const Value *> added;
    for (unsigned i = 0; i < b.numArguments(); ++i) {
      visible_.insert(b.argument(i));
      added.push_back(b.argument(i));
    }
    for (size_t i = 0; i < b.ops().size(); ++i) {
      const Op &op = *b.ops()[i];
      if (op.kind() == OpKind::Yield && i + 1 != b.ops().size())
        fail(op, "yield must be the last op of its block");
      checkOp(op);
      for (unsigned r = 0; r < op.numResults(); ++r) {
        visible_.insert(op.result(r));
        added.push_back(op.result(r));
      }
    }
    if (needsYield && !b.terminator()) {
      SourceLoc loc = b.parentOp() ? b.parentOp()->loc() : kernel_.loc;
      diags_.error(loc, std::string("invalid IR: the ") + what +
                            " block must end in 'yield'");
      ok_ = false;
    }
    for (const Value *v : added)
      visible_.erase(v);
  }

  /// Ops without results (stores, yield), control ops (any number) and
  /// the rest (exactly one).
  bool checkResultCount(const Op &op) {
    unsigned want;
    switch (op.kind()) {
    case OpKind::Store:
    case OpKind::Scatter:
    case OpKind::StoreScalar:
    case OpKind::Prefetch:
    case OpKind::CheckBounds:
    case OpKind::Yield:
      want = 0;
      break;
    case OpKind::For:
    case OpKind::If:
      return true;
    default:
      want = 1;
      break;
    }
    if (op.numResults() == want)
      return true;
    fail(op, "has " + std::to_string(op.numResults()) + " results, expected " +
                 std::to_string(want));
    return false;
  }

  /// A `copy`: two tensors of one element kind, each with its i64 offsets,
  /// and the tile moved; none of a load's or store's other marks.
  void checkCopy(const Op &op) {
    unsigned n = op.numOperands();
    if (n < 1 || !op.operand(0)->type().isTensor()) {
      fail(op, "needs a tensor as its first operand");
      return;
    }
    unsigned srank = op.operand(0)->type().rank();
    if (n < 2 + srank || !op.operand(1 + srank)->type().isTensor()) {
      fail(op, "needs the destination tensor after the source offsets");
      return;
    }
    unsigned drank = op.operand(1 + srank)->type().rank();
    if (n != 2 + srank + drank) {
      fail(op, "has " + std::to_string(n) + " operands, expected " +
                   std::to_string(2 + srank + drank));
      return;
    }
    for (unsigned i = 0; i < n; ++i)
      if (i != 0 && i != 1 + srank && op.operand(i)->type() != Type::scalar(ScalarKind::I64))
        fail(op, "offsets must be i64 scalars");
    ScalarKind elem = op.operand(0)->type().elem();
    if (op.operand(1 + srank)->type().elem() != elem)
      fail(op, "copies between tensors of one element kind");
    const Type &tile = op.result()->type();
    if (!tile.isTile() || tile.elem() != elem || tile.rank() > std::min(srank, drank))
      fail(op, "moves a tile of the tensors' element kind, of rank at most theirs");
    const OpAttrs &at = op.attrs();
    if (at.hasMask || at.forward || at.copy || at.forwarded || at.rowMask != RowMask::None)
      fail(op, "a copy is unmasked and carries no forward, copy, forwarded or row_mask");
  }

  /// Element kinds, ranks and masks of the Memory family (operand counts
  /// already checked).
  void checkMemory(const Op &op, unsigned rank) {
    ScalarKind elem = op.operand(0)->type().elem();
    const Type *data = nullptr; // the tile or scalar read or written
    switch (op.kind()) {
    case OpKind::Load:
    case OpKind::Gather:
    case OpKind::LoadScalar:
      data = &op.result()->type();
      break;
    default:
      data = &op.operand(1 + rank)->type();
      break;
    }
    bool scalarOp =
        op.kind() == OpKind::LoadScalar || op.kind() == OpKind::StoreScalar;
    bool indexed = op.kind() == OpKind::Gather || op.kind() == OpKind::Scatter;
    if (data->elem() != elem)
      fail(op, "element kind " + std::string(scalarName(data->elem())) +
                   " differs from the tensor's " + scalarName(elem));
    if (scalarOp) {
      if (!data->isScalar())
        fail(op, "reads or writes one scalar");
    } else if (!data->isTile() || (!indexed && data->rank() > rank)) {
      fail(op, "needs a tile of rank at most the tensor's");
    }
    for (unsigned i = 1; i <= rank; ++i) {
      const Type &t = op.operand(i)->type();
      if (indexed ? !(t.isTile() && t.shape() == data->shape()) : !t.isScalar())
        fail(op, indexed ? "indices must be tiles of the data's shape"
                         : "offsets must be scalars");
    }
    if (op.attrs().hasMask) {
      const Type &m = op.operand(op.numOperands() - 1)->type();
      if (!m.isTile() || m.elem() != ScalarKind::I1 || m.shape() != data->shape())
        fail(op, "mask must be an i1 tile of the data's shape");
    }
  }

  bool sameShape(const Type &a, const Type &b) {
    return a.kind() == b.kind() && a.shape() == b.shape();
  }

  void checkOp(const Op &op) {
    for (Value *v : op.operands())
      if (!v || !visible_.count(v)) {
        fail(op, "uses a value that is not defined before it");
        return;
      }
    auto n = op.numOperands();
    auto operands = [&](unsigned lo, unsigned hi) {
      if (n < lo || n > hi) {
        fail(op, "has " + std::to_string(n) + " operands, expected " +
                     std::to_string(lo) + (hi != lo ? ".." + std::to_string(hi) : ""));
        return false;
      }
      return true;
    };
    const Type rt = op.numResults() ? op.result()->type() : Type::none();
    if (!checkResultCount(op))
      return;
    if (op.attrs().canonicalNaN &&
        !((isFloatArithmetic(op.kind()) || op.kind() == OpKind::Reduce ||
           op.kind() == OpKind::Mma) &&
          isFloat(rt.elem()) && !rt.isTensor()))
      fail(op, "'nan = canonical' is for float arithmetic, float reductions and mma");
    switch (family(op.kind())) {
    case OpFamily::Unary:
    case OpFamily::Binary:
    case OpFamily::Ternary: {
      unsigned want = family(op.kind()) == OpFamily::Unary    ? 1
                      : family(op.kind()) == OpFamily::Binary ? 2
                                                              : 3;
      if (!operands(want, want) || op.numResults() != 1)
        return;
      for (Value *v : op.operands())
        if (!sameShape(v->type(), rt))
          fail(op, "operand " + v->type().str() + " does not have the "
                   "result's shape " + rt.str());
      if (rt.isTensor())
        fail(op, "elementwise ops do not apply to tensors");
      bool sameKind = op.kind() != OpKind::Cast && op.kind() != OpKind::Bitcast &&
                      op.kind() != OpKind::Cmp && op.kind() != OpKind::Select;
      if (sameKind)
        for (Value *v : op.operands())
          if (v->type().elem() != rt.elem())
            fail(op, "operand element kind differs from the result's");
      if (op.kind() == OpKind::Cmp) {
        if (rt.elem() != ScalarKind::I1 ||
            op.operand(0)->type().elem() != op.operand(1)->type().elem())
          fail(op, "compares two values of one kind into i1");
      }
      if (op.kind() == OpKind::Select &&
          (op.operand(0)->type().elem() != ScalarKind::I1 ||
           op.operand(1)->type().elem() != rt.elem() ||
           op.operand(2)->type().elem() != rt.elem()))
        fail(op, "select(i1, T, T) -> T");
      if (op.kind() == OpKind::Bitcast &&
          bitWidth(op.operand(0)->type().elem()) != bitWidth(rt.elem()))
        fail(op, "bitcast between kinds of different widths");
      ScalarKind k = rt.elem();
      bool storage = k == ScalarKind::F16 || k == ScalarKind::BF16;
      if (storage && op.kind() != OpKind::Cast && op.kind() != OpKind::Bitcast &&
          op.kind() != OpKind::Select)
        fail(op, "arithmetic on f16/bf16 (storage kinds)");
      else if (isFloatMath(op.kind()) && k != ScalarKind::F32)
        fail(op, "is defined on f32 only");
      return;
    }
    default:
      break;
    }
    switch (op.kind()) {
    case OpKind::Constant:
      if (operands(0, 0) && !rt.isScalar())
        fail(op, "produces a scalar");
      return;
    case OpKind::ConstParam:
      if (operands(0, 0) && rt != Type::scalar(ScalarKind::I64) &&
          rt != Type::scalar(ScalarKind::I1))
        fail(op, "produces an i64 or i1");
      return;
    case OpKind::ProgramId:
    case OpKind::NumPrograms:
      if (operands(0, 0) && rt != Type::scalar(ScalarKind::I64))
        fail(op, "produces an i64");
      if (op.attrs().axis < 0 || op.attrs().axis > 2)
        fail(op, "axis must be 0, 1 or 2");
      return;
    case OpKind::Dim:
    case OpKind::Stride:
      if (operands(1, 1) && (!op.operand(0)->type().isTensor() ||
                             op.attrs().axis < 0 ||
                             op.attrs().axis >= op.operand(0)->type().rank()))
        fail(op, "needs a tensor and an axis within its rank");
      return;
    case OpKind::Splat:
      if (operands(1, 1) && (!op.operand(0)->type().isScalar() || !rt.isTile() ||
                             op.operand(0)->type().elem() != rt.elem()))
        fail(op, "splat(scalar T) -> tile<T, ...>");
      return;
    case OpKind::Iota:
      if (fusedParent_) { // in a fused body: the element's index along axis
        const Type &ft = fusedParent_->result()->type();
        if (operands(0, 0) && (!rt.isScalar() || !isInteger(rt.elem())))
          fail(op, "in a fused body produces an integer scalar");
        else if (op.attrs().axis < 0 || op.attrs().axis >= ft.rank())
          fail(op, "axis is outside the fused tile's rank");
        return;
      }
      if (operands(0, 0) && (!rt.isTile() || !isInteger(rt.elem())))
        fail(op, "produces an integer tile");
      else if (op.attrs().axis < 0 || op.attrs().axis >= rt.rank())
        fail(op, "axis is outside the tile's rank");
      return;
    case OpKind::Broadcast: {
      if (!operands(1, 1))
        return;
      const Type &t = op.operand(0)->type();
      bool good = t.isTile() && rt.isTile() && t.rank() == rt.rank() &&
                  t.elem() == rt.elem();
      for (unsigned i = 0; good && i < t.rank(); ++i)
        good = t.shape()[i] == 1 || t.shape()[i] == rt.shape()[i];
      if (!good)
        fail(op, "cannot broadcast " + t.str() + " to " + rt.str());
      return;
    }
    case OpKind::Reshape:
      if (operands(1, 1) &&
          (!rt.isTile() || !op.operand(0)->type().isTile() ||
           op.operand(0)->type().elem() != rt.elem() ||
           op.operand(0)->type().numElements() != rt.numElements()))
        fail(op, "must keep the element kind and count");
      return;
    case OpKind::Transpose:
      if (operands(1, 1) &&
          (!rt.isTile() || !op.operand(0)->type().isTile() ||
           rt.rank() != 2 || op.operand(0)->type().rank() != 2 ||
           rt.elem() != op.operand(0)->type().elem() ||
           rt.shape()[0] != op.operand(0)->type().shape()[1] ||
           rt.shape()[1] != op.operand(0)->type().shape()[0]))
        fail(op, "transposes a rank-2 tile");
      return;
    case OpKind::Reduce: {
      if (!operands(1, 1))
        return;
      const Type &t = op.operand(0)->type();
      if (!t.isTile() || op.attrs().axis < 0 || op.attrs().axis >= t.rank() ||
          rt.elem() != t.elem()) {
        fail(op, "reduces a tile along one of its axes");
        return;
      }
      std::vector<int64_t> kept = t.shape();
      kept.erase(kept.begin() + op.attrs().axis);
      Type want = kept.empty() ? Type::scalar(t.elem()) : Type::tile(t.elem(), kept);
      if (rt != want)
        fail(op, "result must be " + want.str() + ", the operand without axis " +
                     std::to_string(op.attrs().axis));
      return;
    }
    case OpKind::Mma: {
      if (!operands(3, 3))
        return;
      const Type &a = op.operand(0)->type(), &b = op.operand(1)->type();
      if (a.rank() != 2 || b.rank() != 2 || rt.rank() != 2 ||
          op.operand(2)->type() != rt || rt.elem() != ScalarKind::F32) {
        fail(op, "mma(tile a, tile b, tile<f32, M, N> acc)");
        return;
      }
      int64_t m = op.attrs().transA ? a.shape()[1] : a.shape()[0];
      int64_t ka = op.attrs().transA ? a.shape()[0] : a.shape()[1];
      int64_t kb = op.attrs().transB ? b.shape()[1] : b.shape()[0];
      int64_t nn = op.attrs().transB ? b.shape()[0] : b.shape()[1];
      if (ka != kb || m != rt.shape()[0] || nn != rt.shape()[1])
        fail(op, "shapes do not form an M x K by K x N product");
      // select-mma's decisions: a packing is hoisted out of loops that are
      // there; a block has positive sides.
      const OpAttrs &at = op.attrs();
      int64_t loops = 0;
      for (const Block *blk = op.parentBlock(); blk && blk->parentOp();
           blk = blk->parentOp()->parentBlock())
        loops += blk->parentOp()->kind() == OpKind::For;
      for (int64_t pack : {at.packA, at.packB})
        if (pack < -1 || pack > loops)
          fail(op, "packing hoisted out of " + std::to_string(pack) + " loops, but " +
                       std::to_string(loops) + " enclose the mma");
      if (at.blockRows < 0 || at.blockCols < 0 || (at.blockRows == 0) != (at.blockCols == 0))
        fail(op, "block must be [rows, cols] with both positive");
      if (at.dpbf16 && (at.mmaForm != MmaForm::Dot && at.mmaForm != MmaForm::Broadcast))
        fail(op, "dpbf16 applies to the dot and broadcast forms only");
      if (at.accSplat &&
          (!((at.mmaForm == MmaForm::Broadcast && !at.dpbf16) || at.mmaForm == MmaForm::Bf16Pairs) ||
           ka == 0 ||
           op.operand(2)->isBlockArgument() || op.operand(2)->definingOp()->kind() != OpKind::Splat))
        fail(op, "acc_splat needs the broadcast form (without dpbf16) or bf16pairs, K > 0 and acc "
                 "a splat");
      // What each form's micro-kernel assumes of the operands.
      const bool bf16 = a.elem() == ScalarKind::BF16 && b.elem() == ScalarKind::BF16;
      switch (at.mmaForm) {
      case MmaForm::None:
        break;
      case MmaForm::Dot:
        if (!at.transB || at.blockRows != m || at.blockCols < 1 || at.blockCols > 8 ||
            (at.blockCols & (at.blockCols - 1)) != 0)
          fail(op, "the dot form needs transB and a block of [M, R], R a power of two <= 8");
        if (at.dpbf16 && (!bf16 || at.transA))
          fail(op, "dpbf16 needs bf16 operands, a not transposed");
        break;
      case MmaForm::Broadcast:
        if (at.blockRows < 1 || at.blockCols < 1)
          fail(op, "the broadcast form needs a register block");
        if (at.dpbf16 && (!bf16 || at.transA || at.transB || ka % 2 != 0 || nn % 32 != 0 ||
                          at.blockCols % 2 != 0))
          fail(op, "dpbf16 needs bf16 operands, neither transposed, K even, N a multiple of "
                   "32 and whole 32-column blocks");
        break;
      case MmaForm::Bf16Pairs:
      case MmaForm::Amx:
        if (!bf16 || ka % 2 != 0 || at.packB < 0 || (at.transA != (at.packA >= 0)))
          fail(op, "the bf16 pair forms need bf16 operands, K even, b packed and a packed "
                   "exactly when transposed");
        if (at.mmaForm == MmaForm::Amx && (m % 16 != 0 || nn % 16 != 0 || ka % 32 != 0))
          fail(op, "the amx form needs M and N multiples of 16 and K of 32");
        if (at.mmaForm == MmaForm::Bf16Pairs && (at.blockRows < 1 || at.blockCols < 1))
          fail(op, "the bf16pairs form needs a register block");
        break;
      }
      return;
    }
    case OpKind::Fused: {
      if (op.numBlocks() != 1 || op.block(0)->numArguments() != n) {
        fail(op, "needs one body block with one argument per input");
        return;
      }
      for (unsigned i = 0; i < n; ++i) {
        const Type &t = op.operand(i)->type();
        if (t.isTile()) {
          bool good = t.rank() == rt.rank();
          for (unsigned d = 0; good && d < t.rank(); ++d)
            good = t.shape()[d] == 1 || t.shape()[d] == rt.shape()[d];
          if (!good)
            fail(op, "input " + t.str() + " does not broadcast to " + rt.str());
        }
        if (op.block(0)->argument(i)->type() != Type::scalar(t.elem()))
          fail(op, "body argument kinds must be the inputs' element kinds");
      }
      for (const auto &inner : op.block(0)->ops())
        if (!isElementwise(inner->kind()) && inner->kind() != OpKind::Constant &&
            inner->kind() != OpKind::Iota && inner->kind() != OpKind::Yield)
          fail(*inner, "only elementwise ops, constants and iota may appear in a fused body");
      // The body sees only its own arguments; a swap (not a copy) keeps
      // this linear in the kernel's size.
      std::set<const Value *> saved;
      saved.swap(visible_);
      const Op *outerFused = fusedParent_;
      fusedParent_ = &op;
      checkBlock(*op.block(0), true, "fused");
      fusedParent_ = outerFused;
      visible_.swap(saved);
      if (const Op *y = op.block(0)->terminator())
        if (y->numOperands() != 1 ||
            y->operand(0)->type() != Type::scalar(rt.elem()))
          fail(op, "the body must yield one scalar of the result's kind");
      return;
    }
    case OpKind::Load:
    case OpKind::Gather:
    case OpKind::Store:
    case OpKind::Scatter:
    case OpKind::LoadScalar:
    case OpKind::StoreScalar: {
      if (n < 1 || !op.operand(0)->type().isTensor()) {
        fail(op, "needs a tensor as its first operand");
        return;
      }
      unsigned rank = op.operand(0)->type().rank();
      bool hasValue = op.kind() == OpKind::Store || op.kind() == OpKind::Scatter ||
                      op.kind() == OpKind::StoreScalar;
      unsigned want = 1 + rank + hasValue + op.attrs().hasMask;
      if (!operands(want, want))
        return;
      for (unsigned i = 1; i <= rank; ++i) {
        const Type &t = op.operand(i)->type();
        if (t.elem() != ScalarKind::I64)
          fail(op, "offsets and indices must be i64");
      }
      checkMemory(op, rank);
      // forward-tiles' marks: a load is read in place or copied, not both;
      // a forwarded store's value comes from a fused loop or a copying load.
      const OpAttrs &at = op.attrs();
      if ((at.forward || at.copy) && (op.kind() != OpKind::Load || at.hasMask))
        fail(op, "only an unmasked load is forwarded or copied");
      if (at.rowMask != RowMask::None &&
          (!at.hasMask || (op.kind() != OpKind::Load && op.kind() != OpKind::Store)))
        fail(op, "row_mask applies to a masked load or store");
      if (at.forward && at.copy)
        fail(op, "a load is read in place or copied, not both");
      if (at.forwarded) {
        const Op *def = op.kind() == OpKind::Store && !at.hasMask
                            ? op.operand(1 + rank)->definingOp()
                            : nullptr;
        if (!def || !(def->kind() == OpKind::Fused ||
                      (def->kind() == OpKind::Load && def->attrs().copy)))
          fail(op, "a forwarded store's value must come from a fused op or a load {copy}");
      }
      return;
    }
    case OpKind::Copy:
      checkCopy(op);
      return;
    case OpKind::CheckBounds: {
      if (n < 1 || !op.operand(0)->type().isTensor()) {
        fail(op, "needs a tensor as its first operand");
        return;
      }
      unsigned rank = op.operand(0)->type().rank();
      unsigned want = 1 + rank + op.attrs().hasMask;
      if (!operands(want, want))
        return;
      const Type &first = op.operand(1)->type();
      for (unsigned i = 1; i <= rank; ++i) {
        const Type &t = op.operand(i)->type();
        if (t.elem() != ScalarKind::I64 || t.kind() != first.kind() ||
            t.shape() != first.shape())
          fail(op, "indices must be i64 scalars, or i64 tiles of one shape");
      }
      const std::vector<int64_t> &ext = op.attrs().extent;
      if (first.isScalar()) {
        if (op.attrs().hasMask || ext.size() != rank)
          fail(op, "scalar indices take one extent per tensor axis and no mask");
        for (int64_t e : ext)
          if (e <= 0)
            fail(op, "extent dimensions must be positive");
      } else {
        if (!ext.empty())
          fail(op, "tile indices take no extent");
        if (op.attrs().hasMask) {
          const Type &m = op.operand(op.numOperands() - 1)->type();
          if (!m.isTile() || m.elem() != ScalarKind::I1 || m.shape() != first.shape())
            fail(op, "mask must be an i1 tile of the indices' shape");
        }
      }
      if (op.attrs().name.empty())
        fail(op, "needs the name of the access it checks");
      return;
    }
    case OpKind::Prefetch: {
      if (n < 1 || !op.operand(0)->type().isTensor()) {
        fail(op, "needs a tensor as its first operand");
        return;
      }
      unsigned rank = op.operand(0)->type().rank();
      if (!operands(1 + rank, 1 + rank))
        return;
      for (unsigned i = 1; i <= rank; ++i)
        if (op.operand(i)->type() != Type::scalar(ScalarKind::I64))
          fail(op, "offsets must be i64 scalars");
      const std::vector<int64_t> &ext = op.attrs().extent;
      if (ext.empty() || ext.size() > rank)
        fail(op, "extent must have 1 to " + std::to_string(rank) + " dimensions");
      for (int64_t e : ext)
        if (e <= 0)
          fail(op, "extent dimensions must be positive");
      // schedule-prefetch's pairing: a spread prefetch given to an op after
      // it, 1 to 8 lines an iteration.
      const OpAttrs &at = op.attrs();
      if (at.spreadBy < 0 || (at.spreadBy > 0 && !at.spread) ||
          (at.spreadBy > 0) != (at.spreadPer > 0) || at.spreadPer > 8)
        fail(op, "by = N and per = 1..8 go together, on a spread prefetch");
      return;
    }
    case OpKind::For: {
      if (!operands(3, 1000) || op.numBlocks() != 1)
        return;
      const Block &b = *op.block(0);
      if (b.numArguments() != n - 2 || op.numResults() != n - 3) {
        fail(op, "needs one block argument per iteration value plus the "
                 "induction variable");
        return;
      }
      for (unsigned i = 0; i < 3; ++i)
        if (op.operand(i)->type() != Type::scalar(ScalarKind::I64))
          fail(op, "bounds and step must be i64");
      if (b.argument(0)->type() != Type::scalar(ScalarKind::I64))
        fail(op, "the induction variable must be i64");
      for (unsigned i = 0; i < op.numResults(); ++i)
        if (op.operand(3 + i)->type() != op.result(i)->type() ||
            b.argument(1 + i)->type() != op.result(i)->type())
          fail(op, "iteration value types must match");
      checkBlock(b, true, "for");
      if (const Op *y = b.terminator()) {
        if (y->numOperands() != op.numResults())
          fail(*y, "yields " + std::to_string(y->numOperands()) +
                       " values for " + std::to_string(op.numResults()) +
                       " iteration values");
        for (unsigned i = 0; i < y->numOperands() && i < op.numResults(); ++i)
          if (y->operand(i)->type() != op.result(i)->type())
            fail(*y, "yields a value of the wrong type");
      }
      return;
    }
    case OpKind::If: {
      if (!operands(1, 1) || op.numBlocks() != 2 ||
          op.operand(0)->type() != Type::scalar(ScalarKind::I1)) {
        fail(op, "needs an i1 condition and two blocks");
        return;
      }
      for (unsigned bi = 0; bi < 2; ++bi) {
        checkBlock(*op.block(bi), op.numResults() > 0, "if");
        if (const Op *y = op.block(bi)->terminator()) {
          if (y->numOperands() != op.numResults())
            fail(*y, "yields the wrong number of values");
          else
            for (unsigned i = 0; i < y->numOperands(); ++i)
              if (y->operand(i)->type() != op.result(i)->type())
                fail(*y, "yields a value of the wrong type");
        }
      }
      return;
    }
    default:
      return;
    }
  }

  const Kernel &kernel_;
  DiagnosticEngine &diags_;
  VerifyOptions opts_;
  std::set<const Value *> visible_;
  /// The fused op whose body is being checked (iota there is the index of
  /// the element the body computes), or null.
  const Op *fusedParent_ = nullptr;
  bool ok_ = true;
};

/// A planned tile buffer is 64-byte aligned and lies inside the scratch area.
bool bufferFits(const Value &v, int64_t scratch) {
  int64_t bytes = v.type().numElements() * byteWidth(v.type().elem());
  return v.bufferOffset() % 64 == 0 && v.bufferOffset() + bytes <= scratch;
}

void checkPlanned(const Block &b, int64_t scratch, DiagnosticEngine &diags,
                  bool &ok) {
  for (const auto &op : b.ops()) {
    auto fail = [&](const std::string &msg) {
      diags.error(op->loc(),
                  std::string("invalid '") + mnemonic(op->kind()) + "': " + msg);
      ok = false;
    };
    for (unsigned i = 0; i < op->numResults(); ++i) {
      const Value &r = *op->result(i);
      if (!r.type().isTile())
        continue;
      if (r.bufferOffset() < 0)
        fail("tile result has no planned buffer");
      else if (!bufferFits(r, scratch))
        fail("buffer at " + std::to_string(r.bufferOffset()) +
             " is unaligned or outside the " + std::to_string(scratch) +
             "-byte scratch area");
    }
    if (op->kind() == OpKind::Fused)
      continue; // body values are scalars
    if (op->kind() == OpKind::For)
      for (unsigned a = 1; a < op->block(0)->numArguments(); ++a) {
        const Value &arg = *op->block(0)->argument(a);
        if (arg.type().isTile() &&
            (arg.bufferOffset() < 0 || !bufferFits(arg, scratch)))
          fail("tile iteration argument has no valid planned buffer");
      }
    for (unsigned bi = 0; bi < op->numBlocks(); ++bi)
      checkPlanned(*op->block(bi), scratch, diags, ok);
  }
}

} // namespace

bool verify(const Kernel &kernel, DiagnosticEngine &diags,
            const VerifyOptions &options) {
  Verifier v(kernel, diags, options);
  bool ok = v.run();
  if (ok && options.requirePlanned) {
    if (!kernel.buffersPlanned) {
      diags.error(kernel.loc, "invalid IR: buffers are not planned");
      return false;
    }
    checkPlanned(kernel.body(), kernel.scratchBytes, diags, ok);
  }
  return ok;
}

} // namespace tilejit::ir
