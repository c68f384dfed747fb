//===- FoldConstants.cpp - Folds constants, dead branches and dead code ---===//
#include "codegen/passes/FoldConstants.h"

#include "dsl/ir/ScalarSemantics.h"
#include "dsl/ir/Walk.h"

#include <bit>
#include <cassert>
#include <cmath>
#include <limits>
#include <optional>

namespace tilejit::passes {

using namespace ir;

namespace {

/// The value of an integer or i1 constant, wrapped to its kind (IR text may
/// spell a narrow constant out of range; codegen truncates it).
std::optional<int64_t> intConstant(const Value *v) {
  const Op *d = v->definingOp();
  if (!d || d->kind() != OpKind::Constant || !v->type().isScalar() ||
      isFloat(v->type().elem()))
    return std::nullopt;
  return scalar::wrapInt(d->attrs().intValue, v->type().elem());
}

/// The value of a float constant of any float kind, as codegen materialises
/// it: f32 rounded from the attribute once, f16 and bf16 through f32.
std::optional<float> floatConstant(const Value *v) {
  const Op *d = v->definingOp();
  if (!d || d->kind() != OpKind::Constant || !v->type().isScalar() ||
      !isFloat(v->type().elem()))
    return std::nullopt;
  float f = static_cast<float>(d->attrs().floatValue);
  switch (v->type().elem()) {
  case ScalarKind::F16: return scalar::halfBitsToFloat(scalar::floatToHalfBits(f));
  case ScalarKind::BF16: return scalar::bfloatBitsToFloat(scalar::floatToBfloatBits(f));
  default: return f;
  }
}

/// A folded constant's value: an integer in the int64_t form of
/// ScalarSemantics.h, or a float.
struct Folded {
  bool isFloat = false;
  int64_t intValue = 0;
  double floatValue = 0;
  static Folded ofInt(int64_t v) { return {false, v, 0}; }
  static Folded ofFloat(float f) { return {true, 0, static_cast<double>(f)}; }
};

/// `cast` of a constant between any two kinds (IR.h; ScalarSemantics.h).
/// A cast to f16 or bf16 is folded only where the result is not NaN, whose
/// payload the printed IR could not carry.
std::optional<Folded> foldCast(const Op &op) {
  ScalarKind to = op.result()->type().elem();
  ScalarKind from = op.operand(0)->type().elem();
  bool toNarrow = to == ScalarKind::F16 || to == ScalarKind::BF16;
  if (auto c = intConstant(op.operand(0))) {
    if (!isFloat(to))
      return Folded::ofInt(scalar::intToInt(*c, from, to));
    if (to == ScalarKind::F32)
      return Folded::ofFloat(scalar::intToFloat(*c, from));
    uint16_t bits = scalar::intToNarrowFloatBits(*c, from, to);
    return Folded::ofFloat(to == ScalarKind::F16 ? scalar::halfBitsToFloat(bits)
                                                 : scalar::bfloatBitsToFloat(bits));
  }
  auto f = floatConstant(op.operand(0));
  if (!f)
    return std::nullopt;
  if (!isFloat(to))
    return Folded::ofInt(scalar::floatToInt(*f, to));
  if (to == ScalarKind::F32)
    return Folded::ofFloat(*f);
  if (std::isnan(*f))
    return std::nullopt;
  assert(toNarrow && "a float kind");
  (void)toNarrow;
  return Folded::ofFloat(
      to == ScalarKind::F16 ? scalar::halfBitsToFloat(scalar::floatToHalfBits(*f))
                            : scalar::bfloatBitsToFloat(scalar::floatToBfloatBits(*f)));
}

/// `bitcast` of a constant between i32, u32 and f32 (a NaN result is left to
/// codegen: the printed IR could not carry its payload), or between integer
/// kinds of one width.
std::optional<Folded> foldBitcast(const Op &op) {
  ScalarKind to = op.result()->type().elem();
  ScalarKind from = op.operand(0)->type().elem();
  if (auto c = intConstant(op.operand(0))) {
    if (isInteger(to))
      return Folded::ofInt(scalar::wrapInt(*c, to));
    if (to != ScalarKind::F32)
      return std::nullopt;
    float f = std::bit_cast<float>(static_cast<uint32_t>(*c));
    if (std::isnan(f))
      return std::nullopt;
    return Folded::ofFloat(f);
  }
  auto f = floatConstant(op.operand(0));
  if (!f || from != ScalarKind::F32 || !isInteger(to))
    return std::nullopt;
  return Folded::ofInt(scalar::wrapInt(std::bit_cast<uint32_t>(*f), to));
}

std::optional<Folded> foldCmp(const Op &op) {
  ScalarKind k = op.operand(0)->type().elem();
  auto a = intConstant(op.operand(0)), b = intConstant(op.operand(1));
  if (a && b)
    return Folded::ofInt(scalar::intCompare(op.attrs().predicate, k, *a, *b));
  auto fa = floatConstant(op.operand(0)), fb = floatConstant(op.operand(1));
  if (fa && fb)
    return Folded::ofInt(scalar::floatCompare(op.attrs().predicate, *fa, *fb));
  return std::nullopt;
}

/// Elementwise ops on integer or f32 constants (the math builtins and
/// `rsqrt` excepted: codegen approximates them).
std::optional<Folded> foldArithmetic(const Op &op, ScalarKind k) {
  unsigned n = op.numOperands();
  if (k == ScalarKind::F32) {
    float x[3] = {0, 0, 0};
    for (unsigned i = 0; i < n && i < 3; ++i) {
      auto c = floatConstant(op.operand(i));
      if (!c || op.operand(i)->type().elem() != ScalarKind::F32)
        return std::nullopt;
      x[i] = *c;
    }
    switch (op.kind()) {
    case OpKind::Add: case OpKind::Sub: case OpKind::Mul: case OpKind::Div:
    case OpKind::Rem: case OpKind::Min: case OpKind::Max:
      return Folded::ofFloat(scalar::floatBinary(op.kind(), x[0], x[1]));
    case OpKind::Neg: case OpKind::Abs: case OpKind::Floor: case OpKind::Ceil:
    case OpKind::Round: case OpKind::Sqrt:
      return Folded::ofFloat(scalar::floatUnary(op.kind(), x[0]));
    case OpKind::Fma:
      return Folded::ofFloat(scalar::floatFma(x[0], x[1], x[2]));
    default:
      return std::nullopt;
    }
  }
  if (isFloat(k))
    return std::nullopt;
  int64_t x[2] = {0, 0};
  for (unsigned i = 0; i < n && i < 2; ++i) {
    auto c = intConstant(op.operand(i));
    if (!c)
      return std::nullopt;
    x[i] = *c;
  }
  switch (op.kind()) {
  case OpKind::Add: case OpKind::Sub: case OpKind::Mul: case OpKind::Div:
  case OpKind::Rem: case OpKind::Min: case OpKind::Max: case OpKind::And:
  case OpKind::Or: case OpKind::Xor: case OpKind::Shl: case OpKind::Shr:
    return Folded::ofInt(scalar::intBinary(op.kind(), k, x[0], x[1]));
  case OpKind::Neg: case OpKind::Not: case OpKind::Abs:
    return Folded::ofInt(scalar::intUnary(op.kind(), k, x[0]));
  case OpKind::Round: case OpKind::Floor: case OpKind::Ceil: // integral already
    return Folded::ofInt(x[0]);
  default:
    return std::nullopt;
  }
}

class Folder {
public:
  explicit Folder(Kernel &k) : kernel_(k) {}

  bool run() {
    bool any = false;
    for (bool again = true; again;) {
      again = foldBlock(kernel_.grid());
      again |= foldBlock(kernel_.body());
      replacer_.apply(kernel_);
      again |= removeDead();
      any |= again;
    }
    return any;
  }

private:
  std::unique_ptr<Op> makeConstant(const Op &like, bool isFloatValue,
                                   int64_t iv, double fv) {
    auto c = std::make_unique<Op>(OpKind::Constant, like.loc());
    c->addResult(like.result()->type());
    if (isFloatValue)
      c->attrs().floatValue = fv;
    else
      c->attrs().intValue = iv;
    return c;
  }

  bool foldBlock(Block &b) {
    bool changed = false;
    for (size_t i = 0; i < b.ops().size(); ++i) {
      Op &op = *b.ops()[i];
      // Values replaced earlier in this round: an op comes after the ops
      // that define its operands, so rewriting it on its visit sees them all.
      replacer_.rewrite(op);
      for (unsigned bi = 0; bi < op.numBlocks(); ++bi)
        changed |= foldBlock(*op.block(bi));
      if (op.kind() == OpKind::If) {
        if (auto c = intConstant(op.operand(0))) {
          inlineBlock(b, i, *op.block(*c ? 0 : 1));
          changed = true;
          --i;
        }
        continue;
      }
      if (op.kind() == OpKind::For) {
        auto lb = intConstant(op.operand(0)), ub = intConstant(op.operand(1));
        auto st = intConstant(op.operand(2));
        if (lb && ub && st && (*lb >= *ub || *st <= 0)) {
          for (unsigned r = 0; r < op.numResults(); ++r)
            replacer_.replace(op.result(r), op.operand(3 + r));
          replacer_.retire(std::move(b.ops()[i]));
          b.ops().erase(b.ops().begin() + i);
          changed = true;
          --i;
        }
        continue;
      }
      if (op.numResults() != 1 || !op.result()->type().isScalar() ||
          op.kind() == OpKind::Constant)
        continue;
      ScalarKind k = op.result()->type().elem();
      std::unique_ptr<Op> folded;
      if (op.kind() == OpKind::Select) {
        // A constant condition picks an operand, constant or not.
        if (auto c = intConstant(op.operand(0))) {
          replacer_.replace(op.result(), op.operand(*c ? 1 : 2));
          replacer_.retire(std::move(b.ops()[i]));
          b.ops().erase(b.ops().begin() + i);
          changed = true;
          --i;
        }
        continue;
      }
      std::optional<Folded> v;
      if (op.kind() == OpKind::Cast)
        v = foldCast(op);
      else if (op.kind() == OpKind::Bitcast)
        v = foldBitcast(op);
      else if (op.kind() == OpKind::Cmp)
        v = foldCmp(op);
      else if (isElementwise(op.kind()) && op.kind() != OpKind::Bitcast)
        v = foldArithmetic(op, k);
      if (v)
        folded = makeConstant(op, v->isFloat, v->intValue, v->floatValue);
      if (!folded)
        continue;
      folded->setParentBlock(&b);
      replacer_.replace(op.result(), folded->result());
      replacer_.retire(std::move(b.ops()[i]));
      b.ops()[i] = std::move(folded);
      changed = true;
    }
    return changed;
  }

  /// Replaces op `pos` of `parent` (an `if`) by the ops of `taken`.
  void inlineBlock(Block &parent, size_t pos, Block &taken) {
    Op &ifOp = *parent.ops()[pos];
    Op *yield = taken.terminator();
    for (unsigned r = 0; r < ifOp.numResults(); ++r)
      replacer_.replace(ifOp.result(r), yield->operand(r));
    std::vector<std::unique_ptr<Op>> moved;
    for (auto &inner : taken.ops())
      if (inner.get() != yield)
        moved.push_back(std::move(inner));
    replacer_.retire(std::move(parent.ops()[pos]));
    parent.ops().erase(parent.ops().begin() + pos);
    for (size_t j = 0; j < moved.size(); ++j)
      parent.insert(pos + j, std::move(moved[j]));
  }

  /// Removes ops without side effects whose results are unused. Ops are
  /// swept last to first and each removal gives back its operands' uses, so
  /// a dead chain goes in one sweep; the block is compacted once.
  bool removeDead() {
    bool changed = false;
    for (bool again = true; again;) {
      again = false;
      auto uses = countUses(kernel_);
      std::function<void(Block &)> sweep = [&](Block &b) {
        bool erased = false;
        for (size_t i = b.ops().size(); i-- > 0;) {
          Op &op = *b.ops()[i];
          for (unsigned bi = 0; bi < op.numBlocks(); ++bi)
            sweep(*op.block(bi));
          if (op.kind() == OpKind::Yield || hasSideEffects(op) ||
              op.numResults() == 0)
            continue;
          bool used = false;
          for (unsigned r = 0; r < op.numResults(); ++r)
            used |= uses[op.result(r)] != 0;
          if (used)
            continue;
          dropUses(op, uses);
          b.ops()[i].reset();
          erased = again = changed = true;
        }
        if (erased)
          std::erase(b.ops(), nullptr);
      };
      sweep(kernel_.body());
      sweep(kernel_.grid());
    }
    return changed;
  }

  /// Gives back the uses of `op`'s operands and of its nested ops'.
  static void dropUses(Op &op, std::map<const Value *, unsigned> &uses) {
    for (const Value *v : op.operands())
      --uses[v];
    for (unsigned bi = 0; bi < op.numBlocks(); ++bi)
      for (auto &inner : op.block(bi)->ops())
        dropUses(*inner, uses);
  }

  Kernel &kernel_;
  UseReplacer replacer_;
};

} // namespace

bool foldConstants(Kernel &kernel, const PassContext &) {
  return Folder(kernel).run();
}

} // namespace tilejit::passes
