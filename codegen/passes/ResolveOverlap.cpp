//===- ResolveOverlap.cpp - A store against the loads that feed it --------===//
#include "codegen/passes/ResolveOverlap.h"

#include "dsl/ir/Walk.h"

#include <optional>

namespace tilejit::passes {

using namespace ir;

namespace {

/// An i64 offset as `base + c` (base null: the constant c).
struct Affine {
  const Value *base = nullptr;
  int64_t c = 0;
};

std::optional<int64_t> constantOf(const Value *v) {
  const Op *d = v->definingOp();
  if (d && d->kind() == OpKind::Constant && !isFloat(v->type().elem()))
    return d->attrs().intValue;
  return std::nullopt;
}

/// Adds wrapping, as the i64 arithmetic it mirrors.
int64_t wrapAdd(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}

Affine affineOf(const Value *v) {
  if (auto c = constantOf(v))
    return {nullptr, *c};
  const Op *d = v->definingOp();
  if (d && v->type().isScalar() && v->type().elem() == ScalarKind::I64 &&
      (d->kind() == OpKind::Add || d->kind() == OpKind::Sub)) {
    bool sub = d->kind() == OpKind::Sub;
    if (auto c = constantOf(d->operand(1))) {
      Affine a = affineOf(d->operand(0));
      a.c = wrapAdd(a.c, sub ? static_cast<int64_t>(0 - static_cast<uint64_t>(*c)) : *c);
      return a;
    }
    if (auto c = constantOf(d->operand(0)); c && !sub) {
      Affine a = affineOf(d->operand(1));
      a.c = wrapAdd(a.c, *c);
      return a;
    }
  }
  return {v, 0};
}

enum class Relation { Disjoint, Same, Overlap, Unknown };

/// How the region `load` reads relates to the region `store` writes (one
/// tensor). Offsets whose difference is a known constant are compared
/// exactly (the difference of two in-range offsets is what the wrapping
/// arithmetic gives); others are unknown along that axis.
Relation relate(const Op &load, const Op &store) {
  const unsigned rank = store.operand(0)->type().rank();
  const Type &lt = load.result()->type();
  const Type &st = store.operand(1 + rank)->type();
  std::vector<int64_t> le = regionExtents(rank, lt), se = regionExtents(rank, st);
  bool allKnown = true, allZero = true;
  for (unsigned d = 0; d < rank; ++d) {
    Affine a = affineOf(load.operand(1 + d)), b = affineOf(store.operand(1 + d));
    if (a.base != b.base) {
      allKnown = allZero = false;
      continue;
    }
    // Store region [b, b + se) against load region [a, a + le), relative
    // to a: [delta, delta + se) against [0, le).
    int64_t delta = static_cast<int64_t>(static_cast<uint64_t>(b.c) - static_cast<uint64_t>(a.c));
    if (delta >= le[d] || (delta < 0 && -delta >= se[d] && delta != INT64_MIN))
      return Relation::Disjoint;
    allZero = allZero && delta == 0;
  }
  if (!allKnown)
    return Relation::Unknown;
  return allZero && lt.shape() == st.shape() ? Relation::Same : Relation::Overlap;
}

} // namespace

bool resolveOverlap(Kernel &kernel, const PassContext &) {
  bool changed = false;
  walk(kernel, [&](Op &op) {
    if (op.kind() != OpKind::Store)
      return;
    const Value *tensor = op.operand(0);
    const unsigned rank = tensor->type().rank();
    const Op *def = op.operand(1 + rank)->definingOp();
    std::vector<const Op *> sources;
    auto consider = [&](const Value *v) {
      const Op *l = v->definingOp();
      if (l && l->kind() == OpKind::Load && l->operand(0) == tensor)
        sources.push_back(l);
    };
    if (def && def->kind() == OpKind::Fused)
      for (const Value *in : def->operands())
        consider(in);
    else
      consider(op.operand(1 + rank));
    Overlap decision = Overlap::None;
    bool unknown = false, overlap = false, same = false;
    for (const Op *l : sources) {
      Relation r = relate(*l, op);
      unknown |= r == Relation::Unknown;
      overlap |= r == Relation::Overlap;
      same |= r == Relation::Same;
    }
    if (!sources.empty())
      decision = overlap   ? Overlap::Buffered
                 : unknown ? Overlap::Checked
                 : same    ? Overlap::InPlace
                           : Overlap::Disjoint;
    if (op.attrs().overlap != decision) {
      op.attrs().overlap = decision;
      changed = true;
    }
  });
  return changed;
}

} // namespace tilejit::passes
