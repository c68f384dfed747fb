//===- FoldConstants.cpp - Folds constants, dead branches and dead code ---===//
#include "codegen/passes/FoldConstants.h"

#include "dsl/ir/Walk.h"

#include <cmath>
#include <limits>
#include <optional>

namespace tilejit::passes {

using namespace ir;

namespace {

std::optional<int64_t> intConstant(const Value *v) {
  const Op *d = v->definingOp();
  if (!d || d->kind() != OpKind::Constant || !v->type().isScalar() ||
      isFloat(v->type().elem()))
    return std::nullopt;
  return d->attrs().intValue;
}

std::optional<double> floatConstant(const Value *v) {
  const Op *d = v->definingOp();
  if (!d || d->kind() != OpKind::Constant ||
      v->type() != Type::scalar(ScalarKind::F32))
    return std::nullopt;
  return d->attrs().floatValue;
}

/// Wraps `v` to the width and signedness of `k`.
int64_t wrap(int64_t v, ScalarKind k) {
  unsigned bits = bitWidth(k);
  if (bits >= 64)
    return v;
  uint64_t mask = (uint64_t(1) << bits) - 1;
  uint64_t u = static_cast<uint64_t>(v) & mask;
  if (k == ScalarKind::I1)
    return static_cast<int64_t>(u);
  if (isSigned(k) && (u >> (bits - 1)))
    u |= ~mask;
  return static_cast<int64_t>(u);
}

std::optional<int64_t> foldInt(const Op &op, ScalarKind k) {
  std::vector<int64_t> x;
  for (Value *v : op.operands()) {
    auto c = intConstant(v);
    if (!c)
      return std::nullopt;
    x.push_back(*c);
  }
  bool u = !isSigned(k);
  auto ux = [&](int i) { return static_cast<uint64_t>(x[i]); };
  switch (op.kind()) {
  case OpKind::Add: return wrap(int64_t(ux(0) + ux(1)), k);
  case OpKind::Sub: return wrap(int64_t(ux(0) - ux(1)), k);
  case OpKind::Mul: return wrap(int64_t(ux(0) * ux(1)), k);
  case OpKind::Div:
    if (x[1] == 0) return 0;
    if (u) return wrap(int64_t(ux(0) / ux(1)), k);
    if (x[1] == -1) return wrap(int64_t(0 - ux(0)), k);
    return wrap(x[0] / x[1], k);
  case OpKind::Rem:
    if (x[1] == 0) return 0;
    if (u) return wrap(int64_t(ux(0) % ux(1)), k);
    if (x[1] == -1) return 0;
    return wrap(x[0] % x[1], k);
  case OpKind::Min: return u ? int64_t(std::min(ux(0), ux(1))) : std::min(x[0], x[1]);
  case OpKind::Max: return u ? int64_t(std::max(ux(0), ux(1))) : std::max(x[0], x[1]);
  case OpKind::And: return x[0] & x[1];
  case OpKind::Or: return x[0] | x[1];
  case OpKind::Xor: return wrap(x[0] ^ x[1], k);
  case OpKind::Not: return wrap(~x[0], k);
  case OpKind::Neg: return wrap(int64_t(0 - ux(0)), k);
  case OpKind::Abs: return wrap(x[0] < 0 ? int64_t(0 - ux(0)) : x[0], k);
  case OpKind::Select: return x[0] ? x[1] : x[2];
  case OpKind::Shl:
  case OpKind::Shr: {
    unsigned bits = bitWidth(k);
    unsigned amount = static_cast<unsigned>(ux(1) % bits);
    if (op.kind() == OpKind::Shl)
      return wrap(int64_t(ux(0) << amount), k);
    if (!u)
      return wrap(x[0] >> amount, k);
    uint64_t mask = bits >= 64 ? ~uint64_t(0) : (uint64_t(1) << bits) - 1;
    return wrap(int64_t((ux(0) & mask) >> amount), k);
  }
  default: return std::nullopt;
  }
}

/// `cast` between f32 and the integer kinds (IR.h: float->int rounds toward
/// zero and saturates, NaN -> 0; int->float rounds to nearest even).
std::optional<std::pair<int64_t, double>> foldFloatCast(const Op &op) {
  ScalarKind to = op.result()->type().elem();
  ScalarKind from = op.operand(0)->type().elem();
  if (from == ScalarKind::F32 && isInteger(to)) {
    auto c = floatConstant(op.operand(0));
    if (!c)
      return std::nullopt;
    float f = static_cast<float>(*c);
    unsigned bits = bitWidth(to);
    double lo = isSigned(to) ? -std::ldexp(1.0, bits - 1) : 0.0;
    double hi = isSigned(to) ? std::ldexp(1.0, bits - 1) - 1
                             : std::ldexp(1.0, bits) - 1;
    if (std::isnan(f))
      return std::make_pair(int64_t(0), 0.0);
    double t = std::trunc(static_cast<double>(f));
    if (t <= lo)
      return std::make_pair(wrap(static_cast<int64_t>(lo), to), 0.0);
    if (t >= hi)
      return std::make_pair(
          bits >= 64 ? INT64_MAX : wrap(static_cast<int64_t>(hi), to), 0.0);
    return std::make_pair(wrap(static_cast<int64_t>(t), to), 0.0);
  }
  if ((isInteger(from) || from == ScalarKind::I1) && to == ScalarKind::F32) {
    auto c = intConstant(op.operand(0));
    if (!c)
      return std::nullopt;
    int64_t v = wrap(*c, from);
    float f = isSigned(from) || from == ScalarKind::I1
                  ? static_cast<float>(v)
                  : static_cast<float>(static_cast<uint64_t>(v));
    return std::make_pair(int64_t(0), static_cast<double>(f));
  }
  if (from == ScalarKind::F32 && to == ScalarKind::F32) {
    if (auto c = floatConstant(op.operand(0)))
      return std::make_pair(int64_t(0), *c);
  }
  return std::nullopt;
}

std::optional<int64_t> foldCmp(const Op &op) {
  auto a = intConstant(op.operand(0)), b = intConstant(op.operand(1));
  if (a && b) {
    bool u = !isSigned(op.operand(0)->type().elem());
    uint64_t ua = *a, ub = *b;
    switch (op.attrs().predicate) {
    case CmpPredicate::Eq: return *a == *b;
    case CmpPredicate::Ne: return *a != *b;
    case CmpPredicate::Lt: return u ? ua < ub : *a < *b;
    case CmpPredicate::Le: return u ? ua <= ub : *a <= *b;
    case CmpPredicate::Gt: return u ? ua > ub : *a > *b;
    case CmpPredicate::Ge: return u ? ua >= ub : *a >= *b;
    }
  }
  auto fa = floatConstant(op.operand(0)), fb = floatConstant(op.operand(1));
  if (fa && fb) {
    float x = static_cast<float>(*fa), y = static_cast<float>(*fb);
    switch (op.attrs().predicate) {
    case CmpPredicate::Eq: return x == y;
    case CmpPredicate::Ne: return !(x == y);
    case CmpPredicate::Lt: return x < y;
    case CmpPredicate::Le: return x <= y;
    case CmpPredicate::Gt: return x > y;
    case CmpPredicate::Ge: return x >= y;
    }
  }
  return std::nullopt;
}

std::optional<double> foldFloat(const Op &op) {
  std::vector<float> x;
  for (Value *v : op.operands()) {
    auto c = floatConstant(v);
    if (!c)
      return std::nullopt;
    x.push_back(static_cast<float>(*c));
  }
  switch (op.kind()) {
  case OpKind::Add: return x[0] + x[1];
  case OpKind::Sub: return x[0] - x[1];
  case OpKind::Mul: return x[0] * x[1];
  case OpKind::Div: return x[0] / x[1];
  case OpKind::Neg: return -x[0];
  case OpKind::Abs: return std::fabs(x[0]);
  case OpKind::Min:
  case OpKind::Max:
    if (std::isnan(x[0]) || std::isnan(x[1]))
      return std::numeric_limits<float>::quiet_NaN();
    return op.kind() == OpKind::Min ? std::min(x[0], x[1])
                                    : std::max(x[0], x[1]);
  case OpKind::Floor: return std::floor(x[0]);
  case OpKind::Ceil: return std::ceil(x[0]);
  case OpKind::Round: return std::nearbyint(x[0]); // half to even
  case OpKind::Sqrt: return std::sqrt(x[0]);
  case OpKind::Fma: return std::fma(x[0], x[1], x[2]);
  default: return std::nullopt;
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
      if (op.kind() == OpKind::Cast && (isFloat(k) || isFloat(op.operand(0)->type().elem()))) {
        if (auto v = foldFloatCast(op))
          folded = makeConstant(op, isFloat(k), v->first, v->second);
      } else if (op.kind() == OpKind::Cmp) {
        if (auto v = foldCmp(op))
          folded = makeConstant(op, false, *v, 0);
      } else if (op.kind() == OpKind::Cast && isInteger(k) &&
                 op.operand(0)->type().isScalar() &&
                 !isFloat(op.operand(0)->type().elem())) {
        if (auto v = intConstant(op.operand(0))) {
          int64_t src = wrap(*v, op.operand(0)->type().elem());
          folded = makeConstant(op, false, wrap(src, k), 0);
        }
      } else if (isFloat(k)) {
        if (k == ScalarKind::F32)
          if (auto v = foldFloat(op))
            folded = makeConstant(op, true, 0, *v);
      } else if (isElementwise(op.kind())) {
        if (auto v = foldInt(op, k))
          folded = makeConstant(op, false, *v, 0);
      }
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

bool foldConstants(Kernel &kernel, DiagnosticEngine &) {
  return Folder(kernel).run();
}

} // namespace tilejit::passes
