//===- CanonicalizeNaN.cpp - Which arithmetic NaNs may be seen ------------===//
#include "codegen/passes/CanonicalizeNaN.h"

#include "dsl/ir/Walk.h"

#include <unordered_map>
#include <unordered_set>

namespace tilejit::passes {

using namespace ir;

namespace {

/// The values whose bits may be seen: those used where bits are kept,
/// closed over the values that carry others' bits on.
class SeenValues {
public:
  explicit SeenValues(Kernel &kernel) {
    walk(kernel, [&](Op &op) { addUses(op); });
    while (!work_.empty()) {
      const Value *v = work_.back();
      work_.pop_back();
      auto it = carriers_.find(v);
      if (it != carriers_.end())
        for (const Value *from : it->second)
          see(from);
    }
  }

  bool seen(const Value *v) const { return seen_.count(v) != 0; }

private:
  void see(const Value *v) {
    if (seen_.insert(v).second)
      work_.push_back(v);
  }
  /// `to` holds `from`'s bits: `from` is seen where `to` is.
  void carry(const Value *to, const Value *from) { carriers_[to].push_back(from); }
  void seeAll(const Op &op) {
    for (const Value *v : op.operands())
      see(v);
  }

  void addUses(const Op &op) {
    switch (op.kind()) {
    case OpKind::Cmp:
    case OpKind::Reduce:
    case OpKind::Mma:
    case OpKind::Yield: // its parent op says where the values go
      return;
    case OpKind::Neg:
    case OpKind::Abs:
    case OpKind::Floor:
    case OpKind::Ceil:
    case OpKind::Round:
    case OpKind::Splat:
    case OpKind::Broadcast:
    case OpKind::Reshape:
    case OpKind::Transpose:
      carry(op.result(), op.operand(0));
      return;
    case OpKind::Cast:
      // To an integer kind or i1, a NaN is 0 or true whatever its bits.
      if (isFloat(op.result()->type().elem()))
        carry(op.result(), op.operand(0));
      return;
    case OpKind::Select:
      carry(op.result(), op.operand(1));
      carry(op.result(), op.operand(2));
      return;
    case OpKind::Fused: {
      const Block &body = *op.block(0);
      const Op *yield = body.terminator();
      if (!yield || body.numArguments() != op.numOperands())
        return seeAll(op);
      for (unsigned i = 0; i < op.numOperands(); ++i)
        carry(body.argument(i), op.operand(i));
      for (const Value *v : yield->operands())
        carry(op.result(), v);
      return;
    }
    case OpKind::For: {
      const Block &body = *op.block(0);
      const Op *yield = body.terminator();
      const unsigned n = op.numResults();
      if (!yield || yield->numOperands() != n || body.numArguments() != n + 1 ||
          op.numOperands() != n + 3)
        return seeAll(op);
      // Zero iterations give the inits; the last one's yield is the result.
      for (unsigned i = 0; i < n; ++i)
        for (const Value *to : {body.argument(1 + i), op.result(i)}) {
          carry(to, op.operand(3 + i));
          carry(to, yield->operand(i));
        }
      return;
    }
    case OpKind::If:
      for (unsigned b = 0; b < op.numBlocks(); ++b) {
        const Op *yield = op.block(b)->terminator();
        if (!op.numResults())
          continue;
        if (!yield || yield->numOperands() != op.numResults())
          return seeAll(op);
        for (unsigned i = 0; i < op.numResults(); ++i)
          carry(op.result(i), yield->operand(i));
      }
      return;
    default:
      // Arithmetic gives its own NaN; stores, bitcasts and the rest keep
      // the bits (a conservative default for an op not named here).
      if (!isFloatArithmetic(op.kind()))
        seeAll(op);
      return;
    }
  }

  std::unordered_map<const Value *, std::vector<const Value *>> carriers_;
  std::unordered_set<const Value *> seen_;
  std::vector<const Value *> work_;
};

} // namespace

bool canonicalizeNaN(Kernel &kernel, const PassContext &) {
  SeenValues seen(kernel);
  bool changed = false;
  walk(kernel, [&](Op &op) {
    bool want = op.numResults() == 1 && isFloat(op.result()->type().elem()) &&
                (isFloatArithmetic(op.kind()) || op.kind() == OpKind::Reduce ||
                 op.kind() == OpKind::Mma) &&
                seen.seen(op.result());
    if (op.attrs().canonicalNaN != want) {
      op.attrs().canonicalNaN = want;
      changed = true;
    }
  });
  return changed;
}

} // namespace tilejit::passes
