//===- FuseElementwise.cpp - Chains of vector ops become one loop ---------===//
#include "codegen/passes/FuseElementwise.h"

#include "dsl/ir/Builder.h"
#include "dsl/ir/Walk.h"

#include <algorithm>
#include <map>
#include <set>

namespace tilejit::passes {

using namespace ir;

namespace {

bool isTileElementwise(const Op &op) {
  return isElementwise(op.kind()) && op.numResults() == 1 &&
         op.result()->type().isTile();
}

class Fuser {
public:
  explicit Fuser(Kernel &k) : kernel_(k) {}

  bool run() {
    uses_ = countUses(kernel_);
    bool changed = fuseBlock(kernel_.body());
    replacer_.apply(kernel_);
    return changed;
  }

private:
  /// Grows the group rooted at `root` to a fixpoint: a producer in the same
  /// block (an elementwise tile op, a `splat`, a `broadcast` or an `iota` of
  /// the group's shape) joins when every use of its result is by an op of
  /// the group, so diamonds and repeated operands (`x * x`) fuse too. Splats
  /// and broadcasts are leaves: their operands become inputs.
  ///
  /// A group streams at most kMaxStreamed tiles (inputs that vary along the
  /// innermost axis): the fused loop walks them in lockstep, and many rows a
  /// power of two apart (the tokens of a cache window, loaded tiles read
  /// straight from the tensor) share L1 sets and defeat the prefetchers; a
  /// 32-token weighted sum ran at a third of the speed of the same sum in
  /// smaller passes. Inputs of one element per row (a [BN, 1] weight column
  /// broadcast along the row) are read once per row and do not count
  /// towards it: the NSA window sum's eight tokens and their eight weight
  /// columns in one loop ran faster than two loops of four. All inputs
  /// together stay within kMaxInputs (each is a live pointer in the loop).
  /// A larger group is partitioned bottom-up (partition()); the root keeps
  /// its part, the other parts become groups of their own when their tops
  /// come up as roots.
  static constexpr size_t kMaxStreamed = 8, kMaxInputs = 24;

  /// The tiles a group reads from outside itself.
  static std::set<const Value *> inputsOf(const std::set<Op *> &group) {
    std::set<const Value *> inputs;
    for (const Op *op : group)
      for (const Value *v : op->operands())
        if (v->type().isTile() && !(v->definingOp() && group.count(v->definingOp())))
          inputs.insert(v);
    return inputs;
  }

  static size_t tileInputs(const std::set<Op *> &group) { return inputsOf(group).size(); }

  static bool tooWide(const std::set<Op *> &group) {
    std::set<const Value *> inputs = inputsOf(group);
    size_t streamed = 0;
    for (const Value *v : inputs)
      streamed += !v->type().shape().empty() && v->type().shape().back() > 1;
    return streamed > kMaxStreamed || inputs.size() > kMaxInputs;
  }

  void collect(Block &b, Op &root, std::set<Op *> &group) {
    group.insert(&root);
    for (bool grew = true; grew;) {
      grew = false;
      std::vector<Op *> members(group.begin(), group.end());
      for (Op *member : members) {
        if (member->kind() == OpKind::Splat ||
            member->kind() == OpKind::Broadcast)
          continue;
        for (Value *v : member->operands()) {
          Op *d = v->definingOp();
          if (!d || d->parentBlock() != &b || group.count(d))
            continue;
          // An iota joins as the index it is: no tile is made.
          if (!isTileElementwise(*d) && d->kind() != OpKind::Splat &&
              d->kind() != OpKind::Broadcast &&
              !(d->kind() == OpKind::Iota &&
                d->result()->type().shape() == root.result()->type().shape()))
            continue;
          if (usesWithin(v, group) != uses_[v])
            continue;
          group.insert(d);
          grew = true;
        }
      }
    }
    if (tooWide(group))
      partition(b, root, group);
  }

  /// Splits an over-wide group: members in block order (producers first)
  /// each start a part and absorb the parts topped by their operands'
  /// producers, those with the fewest inputs first, while the union reads at
  /// most kMaxStreamed streamed tiles (and kMaxInputs in all) and holds
  /// every use of the absorbed result. A tree of pairwise sums over loaded
  /// tiles thus becomes passes over eight streamed inputs each, joined by
  /// small sums of their results. Leaves `group` as the root's part.
  void partition(Block &b, Op &root, std::set<Op *> &group) {
    std::vector<Op *> order;
    for (auto &op : b.ops())
      if (group.count(op.get()))
        order.push_back(op.get());
    std::map<Op *, std::set<Op *>> parts; // by top op
    for (Op *x : order) {
      std::set<Op *> part{x};
      std::vector<Op *> kids;
      for (Value *v : x->operands()) {
        Op *d = v->definingOp();
        if (d && parts.count(d) && std::find(kids.begin(), kids.end(), d) == kids.end())
          kids.push_back(d);
      }
      std::stable_sort(kids.begin(), kids.end(), [&](Op *p, Op *q) {
        return tileInputs(parts[p]) < tileInputs(parts[q]);
      });
      for (Op *k : kids) {
        std::set<Op *> merged = part;
        merged.insert(parts[k].begin(), parts[k].end());
        if (usesWithin(k->result(), merged) != uses_[k->result()] || tooWide(merged))
          continue;
        part = std::move(merged);
        parts.erase(k);
      }
      parts[x] = std::move(part);
    }
    group = parts[&root];
  }

  /// Operand slots of the group's ops that refer to `v`.
  static unsigned usesWithin(const Value *v, const std::set<Op *> &group) {
    unsigned n = 0;
    for (const Op *op : group)
      for (const Value *operand : op->operands())
        n += operand == v;
    return n;
  }

  bool fuseBlock(Block &b) {
    bool changed = false;
    for (auto &op : b.ops())
      for (unsigned bi = 0; bi < op->numBlocks(); ++bi)
        changed |= fuseBlock(*op->block(bi));
    // Roots are processed last-to-first so that each group takes its
    // single-use producers before they are considered as roots.
    for (size_t i = b.ops().size(); i-- > 0;) {
      Op &root = *b.ops()[i];
      if (!isTileElementwise(root))
        continue;
      std::set<Op *> group;
      collect(b, root, group);
      i = buildFused(b, i, root, group);
      changed = true;
    }
    return changed;
  }

  /// Replaces the group by one `fused` op; returns the new op's position.
  size_t buildFused(Block &b, size_t rootPos, Op &root, std::set<Op *> &group) {
    auto fused = std::make_unique<Op>(OpKind::Fused, root.loc());
    Value *result = fused->addResult(root.result()->type());
    Block *body = fused->addBlock();
    std::map<const Value *, Value *> mapped; // outer value -> body value
    std::vector<Value *> inputs;
    auto input = [&](Value *outer) {
      auto it = mapped.find(outer);
      if (it != mapped.end())
        return it->second;
      inputs.push_back(outer);
      Value *arg = body->addArgument(Type::scalar(outer->type().elem()));
      mapped[outer] = arg;
      return arg;
    };
    Builder bb(body);
    // Emit group ops in their block order (a topological order).
    std::vector<Op *> ordered;
    for (auto &op : b.ops())
      if (group.count(op.get()))
        ordered.push_back(op.get());
    for (Op *op : ordered) {
      if (op->kind() == OpKind::Splat || op->kind() == OpKind::Broadcast) {
        mapped[op->result()] = input(op->operand(0));
        continue;
      }
      if (op->kind() == OpKind::Iota) {
        mapped[op->result()] =
            bb.createValue(OpKind::Iota, op->loc(), {},
                           Type::scalar(op->result()->type().elem()), op->attrs());
        continue;
      }
      std::vector<Value *> operands;
      for (Value *v : op->operands()) {
        auto it = mapped.find(v);
        operands.push_back(it != mapped.end() ? it->second : input(v));
      }
      mapped[op->result()] =
          bb.createValue(op->kind(), op->loc(), operands,
                         Type::scalar(op->result()->type().elem()),
                         op->attrs());
    }
    bb.yield(root.loc(), {mapped[root.result()]});
    // The use counts follow the rewrite: the group's operand slots go, the
    // fused op's inputs come, the root's uses become the fused result's.
    for (const Op *op : group)
      for (const Value *v : op->operands())
        --uses_[v];
    for (const Value *v : inputs)
      ++uses_[v];
    for (const Op *op : group)
      if (op != &root)
        uses_.erase(op->result()); // erased below
    fused->setOperands(inputs);
    // Replace the root (its users are later in the block or nested in later
    // ops, all visited already: the replacer rewrites them at the end);
    // erase the absorbed producers.
    Value *oldResult = root.result();
    uses_[result] = uses_[oldResult];
    fused->setParentBlock(&b);
    replacer_.replace(oldResult, result);
    replacer_.retire(std::move(b.ops()[rootPos]));
    b.ops()[rootPos] = std::move(fused);
    size_t erasedBefore = 0;
    for (size_t j = rootPos; j-- > 0;)
      if (group.count(b.ops()[j].get())) {
        b.ops().erase(b.ops().begin() + j);
        ++erasedBefore;
      }
    return rootPos - erasedBefore;
  }

  Kernel &kernel_;
  std::map<const Value *, unsigned> uses_;
  UseReplacer replacer_;
};

} // namespace

bool fuseElementwise(Kernel &kernel, const PassContext &) {
  return Fuser(kernel).run();
}

} // namespace tilejit::passes
