//===- PlanBuffers.cpp - Local-buffer (Unified Buffer) planning -----------===//
#include "codegen/passes/PlanBuffers.h"

#include <algorithm>
#include <map>

namespace tilejit::passes {

using namespace ir;

namespace {

struct Interval {
  Value *value;
  int64_t start, end, bytes;
  int64_t seq; ///< definition order, to break ties deterministically
  std::vector<Value *> sharers; ///< values placed at the same offset
};

class Planner {
public:
  Planner(Kernel &k, DiagnosticEngine &d) : kernel_(k), diags_(d) {}

  bool run() {
    countUsers(kernel_.body());
    number(kernel_.body());
    // Live ranges: definition to last use, stretched over enclosing loops.
    collectUses(kernel_.body());
    std::vector<Interval> intervals;
    for (auto &[v, def] : defs_) {
      if (shared_.count(v))
        continue; // placed with its owner
      Interval iv{v, def, std::max(def, lastUse(v)), bytes(v), seq_[v], {}};
      for (Value *s : sharersOf_[v]) {
        iv.end = std::max(iv.end, lastUse(s));
        iv.sharers.push_back(s);
      }
      intervals.push_back(iv);
    }
    std::sort(intervals.begin(), intervals.end(),
              [](const Interval &a, const Interval &b) {
                if (a.start != b.start)
                  return a.start < b.start;
                if (a.bytes != b.bytes)
                  return a.bytes > b.bytes;
                return a.seq < b.seq;
              });
    struct Placed {
      int64_t offset, bytes, end;
    };
    std::vector<Placed> active;
    int64_t total = 0;
    for (Interval &iv : intervals) {
      active.erase(std::remove_if(active.begin(), active.end(),
                                  [&](const Placed &p) { return p.end < iv.start; }),
                   active.end());
      std::sort(active.begin(), active.end(),
                [](const Placed &a, const Placed &b) { return a.offset < b.offset; });
      int64_t offset = 0;
      for (const Placed &p : active) {
        if (offset + iv.bytes <= p.offset)
          break;
        offset = std::max(offset, p.offset + p.bytes);
      }
      active.push_back({offset, iv.bytes, iv.end});
      iv.value->setBufferOffset(offset);
      for (Value *s : iv.sharers)
        s->setBufferOffset(offset);
      total = std::max(total, offset + iv.bytes);
    }
    kernel_.scratchBytes = total;
    kernel_.buffersPlanned = true;
    int64_t budget =
        kernel_.localBudgetBytes ? kernel_.localBudgetBytes : kDefaultLocalBudget;
    if (total > budget) {
      diags_.error(kernel_.loc,
                   "kernel '" + kernel_.name() + "' needs " +
                       std::to_string(total) +
                       " bytes of local buffers, over its budget of " +
                       std::to_string(budget) + " bytes (declare budget(...) or "
                       "use smaller tiles)");
      std::stable_sort(intervals.begin(), intervals.end(),
                       [](const Interval &a, const Interval &b) {
                         return a.bytes > b.bytes;
                       });
      for (size_t i = 0; i < intervals.size() && i < 3; ++i) {
        Value *v = intervals[i].value;
        SourceLoc loc = v->definingOp() ? v->definingOp()->loc() : kernel_.loc;
        diags_.note(loc, v->type().str() + " takes " +
                             std::to_string(intervals[i].bytes) + " bytes");
      }
      return false;
    }
    return true;
  }

private:
  static int64_t bytes(const Value *v) {
    int64_t b = v->type().numElements() * byteWidth(v->type().elem());
    return (b + 63) / 64 * 64;
  }

  /// Numbers ops in pre-order; records each op's [start, end] position range
  /// and the definition point of every tile value.
  void number(Block &b) {
    for (auto &opPtr : b.ops()) {
      Op &op = *opPtr;
      int64_t start = counter_++;
      range_[&op] = {start, start};
      if (op.kind() != OpKind::Fused)
        for (unsigned bi = 0; bi < op.numBlocks(); ++bi) {
          Block &inner = *op.block(bi);
          for (unsigned a = 0; a < inner.numArguments(); ++a)
            if (inner.argument(a)->type().isTile())
              define(inner.argument(a), start);
          number(inner);
        }
      range_[&op].second = counter_++;
      for (unsigned r = 0; r < op.numResults(); ++r)
        if (op.result(r)->type().isTile()) {
          define(op.result(r), start);
          if (op.kind() == OpKind::For) {
            Value *arg = op.block(0)->argument(1 + r);
            shared_[op.result(r)] = arg;
            sharersOf_[arg].push_back(op.result(r));
          }
        }
      // A reshape is the same bytes in the same order: its result shares its
      // operand's buffer (the code generator's copy between equal offsets is
      // then nothing). Not a loop-carried value's buffer, which the loop
      // rewrites while a reshape of it may still be read (a yield of both).
      // (Only for results and reshapes share a buffer, so an operand that
      // is neither a block argument nor a for result owns its buffer or is
      // a reshape sharing its root's.)
      if (op.kind() == OpKind::Reshape && op.operand(0)->type().isTile()) {
        Value *src = op.operand(0);
        const Op *def = src->definingOp();
        if (def && def->kind() != OpKind::For) {
          auto it = shared_.find(src);
          Value *root = it == shared_.end() ? src : it->second;
          shared_[op.result()] = root;
          sharersOf_[root].push_back(op.result());
        }
      }
      if (op.kind() == OpKind::Mma)
        accumulateInPlace(op);
      if (op.kind() == OpKind::For)
        for (unsigned r = 0; r < op.numResults(); ++r)
          if (op.result(r)->type().isTile())
            uses_[op.block(0)->argument(1 + r)].push_back(range_[&op].second);
    }
  }

  /// An mma whose accumulator dies with it (its only use, in the same
  /// block) writes its result over the accumulator: the code generator's
  /// copy of acc into the result is then nothing, and so is a loop's copy
  /// of the result back into its iteration value (`acc = mma(a, b, acc)`
  /// in a loop body). The accumulator must be an op result other than a
  /// for's (whose buffer its loop owns), or the iteration value of the for
  /// whose body holds the mma; and share no buffer with a or b.
  void accumulateInPlace(Op &mma) {
    Value *acc = mma.operand(2);
    if (!acc->type().isTile() || users_[acc] != 1)
      return;
    const Block *home = acc->isBlockArgument() ? acc->ownerBlock()
                                               : acc->definingOp()->parentBlock();
    if (home != mma.parentBlock())
      return;
    if (acc->isBlockArgument()) {
      const Op *loop = acc->ownerBlock()->parentOp();
      if (!loop || loop->kind() != OpKind::For || acc->index() == 0)
        return;
    } else if (acc->definingOp()->kind() == OpKind::For) {
      return;
    }
    auto rootOf = [&](Value *v) {
      auto it = shared_.find(v);
      return it == shared_.end() ? v : it->second;
    };
    Value *root = rootOf(acc);
    if (root == rootOf(mma.operand(0)) || root == rootOf(mma.operand(1)))
      return;
    shared_[mma.result()] = root;
    sharersOf_[root].push_back(mma.result());
  }

  /// Counts the uses of every value (operands of ops at any depth, yields
  /// included).
  void countUsers(Block &b) {
    for (auto &opPtr : b.ops()) {
      for (unsigned i = 0; i < opPtr->numOperands(); ++i)
        ++users_[opPtr->operand(i)];
      for (unsigned bi = 0; bi < opPtr->numBlocks(); ++bi)
        countUsers(*opPtr->block(bi));
    }
  }

  void collectUses(Block &b) {
    for (auto &opPtr : b.ops()) {
      Op &op = *opPtr;
      for (unsigned i = 0; i < op.numOperands(); ++i) {
        Value *v = op.operand(i);
        if (!v->type().isTile())
          continue;
        // A for's initial values are copied in before the first iteration.
        if (op.kind() == OpKind::For && i >= 3)
          uses_[v].push_back(std::max(range_[&op].first, useEnd(v, op) == range_[&op].second
                                                             ? range_[&op].first
                                                             : useEnd(v, op)));
        else
          uses_[v].push_back(useEnd(v, op));
      }
      if (op.kind() != OpKind::Fused)
        for (unsigned bi = 0; bi < op.numBlocks(); ++bi)
          collectUses(*op.block(bi));
    }
  }

  /// The position until which a use of `v` by `user` keeps `v` alive: the use
  /// itself, or the end of the outermost loop between the use and the
  /// definition of `v`.
  int64_t useEnd(const Value *v, Op &user) {
    int64_t end = range_[&user].second;
    const Block *defBlock = v->definingOp() ? v->definingOp()->parentBlock()
                                            : v->ownerBlock();
    for (Op *p = user.parentBlock() ? user.parentBlock()->parentOp() : nullptr;
         p; p = p->parentBlock() ? p->parentBlock()->parentOp() : nullptr) {
      bool definedInside = false;
      for (unsigned bi = 0; bi < p->numBlocks(); ++bi)
        definedInside |= contains(*p->block(bi), defBlock);
      if (definedInside)
        break;
      if (p->kind() == OpKind::For)
        end = std::max(end, range_[p].second);
    }
    return end;
  }

  static bool contains(const Block &b, const Block *target) {
    if (&b == target)
      return true;
    for (const auto &op : b.ops())
      for (unsigned bi = 0; bi < op->numBlocks(); ++bi)
        if (contains(*op->block(bi), target))
          return true;
    return false;
  }

  void define(Value *v, int64_t at) {
    defs_[v] = at;
    seq_[v] = static_cast<int64_t>(seq_.size());
  }

  int64_t lastUse(const Value *v) {
    int64_t m = -1;
    for (int64_t u : uses_[v])
      m = std::max(m, u);
    return m;
  }

  Kernel &kernel_;
  DiagnosticEngine &diags_;
  int64_t counter_ = 0;
  std::map<const Op *, std::pair<int64_t, int64_t>> range_;
  std::map<Value *, int64_t> defs_;
  std::map<const Value *, int64_t> seq_;
  std::map<const Value *, std::vector<int64_t>> uses_;
  std::map<Value *, Value *> shared_;
  std::map<Value *, std::vector<Value *>> sharersOf_;
  std::map<const Value *, int64_t> users_;
};

} // namespace

bool planBuffers(Kernel &kernel, const PassContext &ctx) {
  Planner(kernel, ctx.diags).run();
  return true;
}

} // namespace tilejit::passes
