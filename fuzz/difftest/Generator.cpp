//===- Generator.cpp - Random valid kernels ---------------------------------===//
//
// Types are tracked as the DSL's sema tracks them (docs/dsl.md §5: literals
// adapt to the other operand, otherwise both operands have one kind; f16 and
// bf16 only move, convert and select; i1 only compares and combines), so
// every expression built here is well typed by construction. Shapes are
// indices into the program's size table, and broadcasting is decided on
// those indices, so shrinking a size keeps every shape consistent.
//
//===----------------------------------------------------------------------===//
#include "Generator.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <random>

namespace tilejit::difftest {
namespace {

constexpr ElemType kAllKinds[] = {
    ElemType::I1,  ElemType::I8,  ElemType::U8,  ElemType::I16,
    ElemType::U16, ElemType::I32, ElemType::U32, ElemType::I64,
    ElemType::F16, ElemType::BF16, ElemType::F32};
constexpr ElemType kIntKinds[] = {ElemType::I8,  ElemType::U8,  ElemType::I16,
                                  ElemType::U16, ElemType::I32, ElemType::U32,
                                  ElemType::I64};

bool isIntKind(ElemType t) { return !isFloatKind(t) && t != ElemType::I1; }
/// Kinds arithmetic is defined on (docs/dsl.md §5, §8.9).
bool isArithKind(ElemType t) {
  return t == ElemType::F32 || isIntKind(t);
}

Expr lit(std::string text, bool bare = true) {
  Expr e;
  e.kind = Expr::Kind::Lit;
  e.text = std::move(text);
  e.isBareLiteral = bare;
  return e;
}
Expr nameRef(const std::string &n, std::optional<Ty> ty = std::nullopt) {
  Expr e;
  e.kind = Expr::Kind::Name;
  e.text = n;
  e.ty = std::move(ty);
  return e;
}
Expr sizeRef(int id) {
  Expr e;
  e.kind = Expr::Kind::Size;
  e.size = id;
  return e;
}
Expr listOf(std::vector<Expr> items) {
  Expr e;
  e.kind = Expr::Kind::List;
  e.args = std::move(items);
  return e;
}
Expr call(const std::string &n, std::vector<Expr> args, std::optional<Ty> ty,
          std::string typeArg = "", std::vector<std::string> names = {}) {
  Expr e;
  e.kind = Expr::Kind::Call;
  e.text = n;
  e.args = std::move(args);
  e.typeArg = std::move(typeArg);
  e.argNames = std::move(names);
  e.ty = std::move(ty);
  return e;
}
Expr binary(const std::string &op, Expr a, Expr b, std::optional<Ty> ty) {
  Expr e;
  e.kind = Expr::Kind::Binary;
  e.text = op;
  e.args.push_back(std::move(a));
  e.args.push_back(std::move(b));
  e.ty = std::move(ty);
  return e;
}
Expr unary(const std::string &op, Expr a, std::optional<Ty> ty) {
  Expr e;
  e.kind = Expr::Kind::Unary;
  e.text = op;
  e.args.push_back(std::move(a));
  e.ty = std::move(ty);
  return e;
}

/// An integer literal as the DSL reads it: negative values through unary
/// minus, INT64_MIN as an expression.
Expr intLit(int64_t v) {
  if (v == std::numeric_limits<int64_t>::min())
    return binary("-", unary("-", lit("9223372036854775807"), std::nullopt), lit("1"),
                  std::nullopt);
  if (v < 0)
    return unary("-", lit(std::to_string(-v)), std::nullopt);
  return lit(std::to_string(v));
}

/// A float literal with the f32 value `f` exactly.
Expr floatLit(float f) {
  if (std::isnan(f))
    return lit("nan");
  if (std::isinf(f))
    return f > 0 ? lit("inf") : unary("-", lit("inf"), std::nullopt);
  bool neg = std::signbit(f);
  char buf[64];
  snprintf(buf, sizeof buf, "%.9g", static_cast<double>(std::fabs(f)));
  std::string s = buf;
  if (s.find_first_of(".e") == std::string::npos)
    s += ".0";
  else if (s.find('.') == std::string::npos) { // "1e-45" is a float literal too
  }
  Expr e = lit(s);
  return neg ? unary("-", e, std::nullopt) : e;
}

class Gen {
public:
  explicit Gen(uint64_t seed) : rng_(seed * 0x9E3779B97F4A7C15ull + 12345) {
    p_.seed = seed;
    p_.inputSeed = seed;
  }
  Program run();

private:
  struct Tensor {
    size_t arg;
    ElemType kind;
    std::vector<int64_t> shape;
    std::string name;
  };
  struct Var {
    std::string name;
    Ty ty;
    bool isMutable;
  };

  // Random helpers.
  uint64_t next() { return rng_(); }
  int64_t range(int64_t lo, int64_t hi) { // inclusive
    if (hi <= lo)
      return lo;
    return lo + static_cast<int64_t>(next() % static_cast<uint64_t>(hi - lo + 1));
  }
  bool chance(double p) { return std::uniform_real_distribution<double>(0, 1)(rng_) < p; }
  template <class T> const T &pick(const std::vector<T> &v) {
    return v[static_cast<size_t>(range(0, static_cast<int64_t>(v.size()) - 1))];
  }
  template <class T, size_t N> T pickOf(const T (&v)[N]) {
    return v[static_cast<size_t>(range(0, N - 1))];
  }
  std::string fresh(const char *prefix) { return prefix + std::to_string(counter_++); }
  void feature(const std::string &f) { p_.features.insert(f); }

  // Sizes and shapes.
  int newSize(int64_t v) {
    p_.sizes.push_back({v, ""});
    return static_cast<int>(p_.sizes.size() - 1);
  }
  int64_t sizeValue(int id) const { return p_.sizes[static_cast<size_t>(id)].value; }
  int randomSize();
  std::vector<int> randomShape(int rank);
  Expr shapeList(const std::vector<int> &shape) {
    std::vector<Expr> items;
    for (int d : shape)
      items.push_back(sizeRef(d));
    return listOf(std::move(items));
  }
  int64_t elements(const std::vector<int> &shape) const {
    int64_t n = 1;
    for (int d : shape)
      n *= sizeValue(d);
    return n;
  }

  // Launch.
  void makeTensor(ElemType kind, int rank, const std::string &typeName = "");
  size_t makeScalar(ElemType kind);
  std::string typeText(ElemType k) {
    auto it = dtypeParam_.find(k);
    if (it != dtypeParam_.end() && chance(0.5))
      return it->second;
    return kindName(k);
  }

  // Expressions.
  Expr gen(const Ty &t, int depth);
  Expr genLeaf(const Ty &t);
  Expr genScalarLeaf(ElemType k);
  Expr genFloat(const Ty &t, int depth);
  Expr genInt(const Ty &t, int depth);
  Expr genBool(const Ty &t, int depth);
  Expr genStorage(const Ty &t, int depth);
  Expr operandFor(const Ty &t, int depth); ///< broadcastable to t
  Expr literalOf(ElemType k);
  Expr typedConstant(ElemType k);
  Expr load(const Tensor &x, const std::vector<int> &shape, bool allowMask = true);
  Expr offsetsFor(const Tensor &x, const std::vector<int> &shape);
  Expr offsetInto(int64_t size, int64_t extent);
  Expr mmaExpr(const Ty &t, int depth);
  std::optional<size_t> tensorOf(ElemType k, size_t minRank);
  Ty reduce(const Ty &t) { // a shape broadcastable to t
    Ty r = t;
    if (r.shape.empty())
      return r;
    int mode = static_cast<int>(range(0, 3));
    if (mode == 1)
      r.shape.clear();
    else if (mode == 2 && r.shape.size() > 1)
      r.shape.erase(r.shape.begin());
    else if (mode == 3)
      r.shape[static_cast<size_t>(range(0, static_cast<int64_t>(r.shape.size()) - 1))] = 0;
    return r;
  }

  // Statements.
  void genStmts(std::vector<Stmt> &out, int count, int depth);
  void genStmt(std::vector<Stmt> &out, int depth);
  void snipStore(std::vector<Stmt> &out, const Tensor *into = nullptr);
  void snipGuarded(std::vector<Stmt> &out, int depth, size_t which);
  void makeGuarded();
  Expr compoundValue(const Ty &t, const std::string &op);
  void snipLet(std::vector<Stmt> &out);
  void snipScalarStore(std::vector<Stmt> &out);
  void snipLoop(std::vector<Stmt> &out, int depth);
  void snipIf(std::vector<Stmt> &out, int depth);
  void snipConstIf(std::vector<Stmt> &out, int depth);
  void snipMma(std::vector<Stmt> &out);
  void snipGatherScatter(std::vector<Stmt> &out);
  void snipPrefetch(std::vector<Stmt> &out);
  void snipInPlace(std::vector<Stmt> &out);
  void snipIntLiterals(std::vector<Stmt> &out);
  void snipSpecials(std::vector<Stmt> &out);
  void snipLoopOverflow(std::vector<Stmt> &out);
  Stmt storeStmt(const Tensor &x, Expr offsets, Expr value, bool hints = true);
  Stmt exprStmt(Expr e) {
    Stmt s;
    s.kind = Stmt::Kind::Expr;
    s.value = std::move(e);
    return s;
  }
  Stmt letStmt(const std::string &n, Expr v, bool isVar = false) {
    Stmt s;
    s.kind = isVar ? Stmt::Kind::Var : Stmt::Kind::Let;
    s.name = n;
    s.value = std::move(v);
    return s;
  }
  Stmt assign(Expr target, Expr v, const std::string &op = "=") {
    Stmt s;
    s.kind = Stmt::Kind::Assign;
    s.target = std::move(target);
    s.op = op;
    s.value = std::move(v);
    return s;
  }
  void declare(const std::string &n, const Ty &t, bool isMutable) {
    scopes_.back().push_back({n, t, isMutable});
  }
  std::vector<Var> visible(const std::function<bool(const Var &)> &f) const {
    std::vector<Var> out;
    for (const auto &s : scopes_)
      for (const Var &v : s)
        if (f(v))
          out.push_back(v);
    return out;
  }
  Expr scalarI64(int depth); ///< an i64 scalar expression (runtime or not)

  std::mt19937_64 rng_;
  Program p_;
  std::vector<Tensor> tensors_;
  std::vector<std::vector<Var>> scopes_;
  std::map<ElemType, std::string> dtypeParam_;
  std::vector<std::string> boolParams_, enumParams_;
  std::map<std::string, bool> boolValue_;  ///< the value each bool parameter has
  std::map<std::string, int> enumValue_;   ///< the enumerator each enum parameter has
  /// Conditional parameters: the tensor (not in tensors_ but inside an `if`
  /// on its guard), its guard, and whether it has been used.
  struct Guarded {
    Tensor tensor;
    std::string guard;
    bool used = false;
  };
  std::vector<Guarded> guarded_;
  std::vector<size_t> scalarArgs_;
  int counter_ = 0;
  int64_t gridSize_ = 1;
  int loopDepth_ = 0;
};

int Gen::randomSize() {
  static const int64_t values[] = {1, 2, 3, 4, 5, 7, 8, 9, 12, 13, 15, 16, 17, 19, 23, 24, 31, 33};
  // Reuse a size now and then, so that shapes agree and broadcast.
  if (p_.sizes.size() > 1 && chance(0.4))
    return static_cast<int>(range(1, static_cast<int64_t>(p_.sizes.size()) - 1));
  return newSize(pickOf(values));
}

std::vector<int> Gen::randomShape(int rank) {
  for (int attempt = 0;; ++attempt) {
    std::vector<int> s;
    for (int i = 0; i < rank; ++i)
      s.push_back(randomSize());
    if (elements(s) <= 1200 || attempt > 8) {
      while (elements(s) > 1200) { // the largest axis shrinks (rank 4: any may have to)
        auto big = std::max_element(s.begin(), s.end(),
                                    [&](int x, int y) { return sizeValue(x) < sizeValue(y); });
        *big = newSize(std::max<int64_t>(1, sizeValue(*big) / 4));
      }
      return s;
    }
  }
}

void Gen::makeTensor(ElemType kind, int rank, const std::string &typeName) {
  ArgSpec a;
  a.name = fresh("t");
  a.isTensor = true;
  a.type = kind;
  a.typeName = typeName;
  int64_t elems = 1;
  for (int i = 0; i < rank; ++i) {
    int64_t d = chance(0.15) ? range(1, 3) : range(1, rank == 1 ? 80 : rank == 2 ? 30 : rank == 3 ? 12 : 6);
    a.shape.push_back(d);
    elems *= d;
    a.dimNames.push_back(chance(0.2) ? "_" : a.name + "_" + std::to_string(i));
  }
  (void)elems;
  // Layout: contiguous, padded rows, transposed (permuted strides), a
  // strided innermost axis.
  int layout = static_cast<int>(range(0, 9));
  std::vector<int> order(static_cast<size_t>(rank));
  for (int i = 0; i < rank; ++i)
    order[static_cast<size_t>(i)] = rank - 1 - i; // innermost first
  if (layout >= 7 && rank >= 2) {
    std::swap(order[0], order[1]);
    feature("layout-transposed");
  }
  int64_t stride = layout == 9 ? range(2, 3) : 1;
  if (layout == 9)
    feature("layout-inner-strided");
  a.strides.assign(static_cast<size_t>(rank), 0);
  for (int i = 0; i < rank; ++i) {
    int axis = order[static_cast<size_t>(i)];
    a.strides[static_cast<size_t>(axis)] = stride;
    int64_t extent = a.shape[static_cast<size_t>(axis)] * stride;
    if (layout >= 4 && layout <= 6 && i + 1 < rank) {
      extent += range(1, 5);
      feature("layout-padded");
    }
    stride = extent;
  }
  a.offset = chance(0.3) ? range(1, 7) : 0;
  int64_t last = a.offset;
  for (int i = 0; i < rank; ++i)
    last += (a.shape[static_cast<size_t>(i)] - 1) * a.strides[static_cast<size_t>(i)];
  a.storage = last + 1 + (chance(0.5) ? range(1, 9) : 0);
  p_.args.push_back(a);
  tensors_.push_back({p_.args.size() - 1, kind, a.shape, a.name});
  feature(std::string("tensor-") + kindName(kind));
  feature("tensor-rank" + std::to_string(rank));
}

size_t Gen::makeScalar(ElemType kind) {
  ArgSpec a;
  a.name = fresh("s");
  a.isTensor = false;
  a.type = kind;
  if (kind == ElemType::F32) {
    static const float specials[] = {0.0f, -0.0f, 1.0f, -2.5f, 0.1f, 1e-40f, 3e38f,
                                     std::numeric_limits<float>::infinity(),
                                     std::numeric_limits<float>::quiet_NaN()};
    float f = chance(0.3) ? pickOf(specials)
                          : static_cast<float>(range(-1000, 1000)) / 64.0f;
    std::memcpy(&a.floatBits, &f, 4);
  } else if (kind == ElemType::I1) {
    a.intValue = range(0, 1);
  } else {
    a.intValue = chance(0.1) ? range(-3, 0) : range(0, 40);
  }
  p_.args.push_back(a);
  scalarArgs_.push_back(p_.args.size() - 1);
  return p_.args.size() - 1;
}

std::optional<size_t> Gen::tensorOf(ElemType k, size_t minRank) {
  std::vector<size_t> c;
  for (size_t i = 0; i < tensors_.size(); ++i)
    if (tensors_[i].kind == k && tensors_[i].shape.size() >= minRank)
      c.push_back(i);
  if (c.empty())
    return std::nullopt;
  return pick(c);
}

Expr Gen::offsetInto(int64_t size, int64_t extent) {
  // Mostly inside; partial tiles over either edge; rarely a region that
  // misses the tensor (a violation in debug mode).
  int64_t lo = -(extent - 1), hi = size - 1;
  int64_t o;
  if (chance(0.01)) {
    o = chance(0.5) ? size + range(0, 3) : -extent - range(0, 3);
    feature("out-of-bounds-access");
  } else if (chance(0.5)) {
    o = 0;
  } else {
    o = range(std::max<int64_t>(lo, -3), hi);
  }
  if (gridSize_ > 1 && chance(0.3) && o >= 0 && hi - o >= gridSize_ - 1) {
    int64_t step = range(0, (hi - o) / (gridSize_ - 1));
    return binary("+", binary("*", call("program_id", {lit("0")}, std::nullopt), intLit(step),
                              std::nullopt),
                  intLit(o), std::nullopt);
  }
  if (!scopes_.empty() && chance(0.05)) {
    auto loops = visible([](const Var &v) { return v.name[0] == 'i' && v.ty.isScalar(); });
    if (!loops.empty() && o <= 0)
      return binary("+", nameRef(pick(loops).name), intLit(o), std::nullopt);
  }
  return intLit(o);
}

Expr Gen::offsetsFor(const Tensor &x, const std::vector<int> &shape) {
  std::vector<Expr> offs;
  size_t lead = x.shape.size() - shape.size();
  for (size_t a = 0; a < x.shape.size(); ++a) {
    int64_t extent = a < lead ? 1 : sizeValue(shape[a - lead]);
    offs.push_back(offsetInto(x.shape[a], extent));
  }
  return listOf(std::move(offs));
}

Expr Gen::load(const Tensor &x, const std::vector<int> &shape, bool allowMask) {
  std::vector<Expr> args{nameRef(x.name), offsetsFor(x, shape), shapeList(shape)};
  std::vector<std::string> names{"", "", ""};
  if (allowMask && chance(0.15)) {
    Ty mt{ElemType::I1, shape};
    args.push_back(genBool(reduce(mt), 1));
    // A mask must have the tile's shape or broadcast to it.
    names.push_back("mask");
    feature("mask");
  }
  if (chance(0.2)) {
    if (x.kind == ElemType::I1)
      args.push_back(lit(chance(0.5) ? "1" : "0"));
    else if (isFloatKind(x.kind))
      args.push_back(floatLit(chance(0.5) ? -std::numeric_limits<float>::infinity() : 1.5f));
    else
      args.push_back(intLit(range(-3, 100)));
    names.push_back("other");
  }
  if (chance(0.1)) {
    args.push_back(lit("true"));
    names.push_back("cached");
  }
  feature("load");
  return call("load", std::move(args), Ty{x.kind, shape}, "", std::move(names));
}

Expr Gen::literalOf(ElemType k) {
  if (k == ElemType::I1)
    return lit(chance(0.5) ? "true" : "false");
  if (k == ElemType::F32 || k == ElemType::F16 || k == ElemType::BF16) {
    static const float values[] = {0.0f, -0.0f, 1.0f, 0.5f, -2.0f, 3.25f, 1e-45f, 1e-38f,
                                   65504.0f, 3.4e38f, 0.333333343f,
                                   std::numeric_limits<float>::infinity(),
                                   -std::numeric_limits<float>::infinity(),
                                   std::numeric_limits<float>::quiet_NaN()};
    if (chance(0.6))
      return floatLit(static_cast<float>(range(-64, 64)) / 8.0f);
    feature("special-float-constant");
    return floatLit(pickOf(values));
  }
  unsigned bits = kindBits(k);
  if (chance(0.7))
    return intLit(range(-3, 20));
  // Kind extremes and values past them (wrapping), magnitudes within 2^53 so
  // the literal still adapts to the other operand's kind.
  int64_t hi = bits >= 53 ? (int64_t(1) << 53) : (int64_t(1) << (bits - (isSignedKind(k) ? 1 : 0))) - 1;
  int64_t lo = isSignedKind(k) ? -hi - 1 : 0;
  feature("int-extreme-literal");
  switch (range(0, 3)) {
  case 0: return intLit(hi);
  case 1: return intLit(lo);
  case 2: return intLit(bits < 53 ? hi + range(1, 3) : hi); // wraps
  default: return intLit(bits < 53 ? -range(1, 200) : -1);
  }
}

Expr Gen::typedConstant(ElemType k) {
  return call("cast", {literalOf(k)}, Ty{k, {}}, typeText(k));
}

Expr Gen::scalarI64(int depth) {
  std::vector<Expr> c;
  c.push_back(intLit(range(0, 9)));
  c.push_back(call("program_id", {lit("0")}, Ty{ElemType::I64, {}}));
  if (!tensors_.empty()) {
    Tensor x = pick(tensors_);
    c.push_back(call("dim", {nameRef(x.name), lit(std::to_string(range(0, static_cast<int64_t>(x.shape.size()) - 1)))},
                     Ty{ElemType::I64, {}}));
  }
  for (size_t i : scalarArgs_)
    if (p_.args[i].type == ElemType::I64)
      c.push_back(nameRef(p_.args[i].name, Ty{ElemType::I64, {}}));
  Expr e = pick(c);
  if (depth > 0 && chance(0.3))
    e = binary(pick(std::vector<std::string>{"+", "-", "*", "/", "%"}), e, scalarI64(depth - 1),
               Ty{ElemType::I64, {}});
  return e;
}

Expr Gen::genScalarLeaf(ElemType k) {
  std::vector<std::function<Expr()>> c;
  c.push_back([&] { return typedConstant(k); });
  for (size_t i : scalarArgs_)
    if (p_.args[i].type == k) {
      std::string n = p_.args[i].name;
      c.push_back([n, k] { return nameRef(n, Ty{k, {}}); });
    }
  if (auto t = tensorOf(k, 1)) {
    c.push_back([&, t] {
      Tensor x = tensors_[*t];
      std::vector<Expr> idx;
      for (int64_t d : x.shape)
        idx.push_back(intLit(chance(0.02) ? d : range(0, d - 1)));
      feature("scalar-load");
      Expr e;
      e.kind = Expr::Kind::Index;
      e.text = x.name;
      e.args = std::move(idx);
      e.ty = Ty{k, {}};
      return e;
    });
  }
  if (k == ElemType::I64)
    c.push_back([&] { return scalarI64(1); });
  for (const Var &v : visible([&](const Var &v) { return v.ty == Ty{k, {}}; })) {
    std::string n = v.name;
    c.push_back([n, k] { return nameRef(n, Ty{k, {}}); });
  }
  return pick(c)();
}

Expr Gen::genLeaf(const Ty &t) {
  if (t.isScalar())
    return genScalarLeaf(t.elem);
  std::vector<std::function<Expr()>> c;
  // Variables of this type, or broadcastable to it.
  for (const Var &v : visible([&](const Var &v) { return v.ty.elem == t.elem && !v.ty.isScalar(); })) {
    if (v.ty.shape == t.shape) {
      std::string n = v.name;
      Ty ty = t;
      c.push_back([n, ty] { return nameRef(n, ty); });
      c.push_back([n, ty] { return nameRef(n, ty); });
    } else if (v.ty.shape.size() <= t.shape.size()) {
      bool ok = true;
      size_t off = t.shape.size() - v.ty.shape.size();
      for (size_t i = 0; i < v.ty.shape.size(); ++i)
        ok &= v.ty.shape[i] == t.shape[off + i] || v.ty.shape[i] == 0;
      if (ok) {
        std::string n = v.name;
        c.push_back([&, n] {
          feature("broadcast_to");
          return call("broadcast_to", {nameRef(n), shapeList(t.shape)}, t);
        });
      }
    }
  }
  if (auto x = tensorOf(t.elem, t.shape.size()))
    for (int i = 0; i < 3; ++i)
      c.push_back([&, x] { return load(tensors_[*x], t.shape); });
  if (t.elem != ElemType::I1 && t.elem != ElemType::F16 && t.elem != ElemType::BF16)
    c.push_back([&] {
      if (chance(0.3))
        return call("zeros", {shapeList(t.shape)}, t, typeText(t.elem));
      return call("full", {shapeList(t.shape), chance(0.8) ? literalOf(t.elem) : genScalarLeaf(t.elem)},
                  t, typeText(t.elem));
    });
  if (isIntKind(t.elem))
    c.push_back([&] {
      feature("iota");
      return call("iota", {shapeList(t.shape), lit(std::to_string(range(0, static_cast<int64_t>(t.shape.size()) - 1)))},
                  t, typeText(t.elem));
    });
  if (t.elem == ElemType::I1)
    c.push_back([&] {
      ElemType k = chance(0.5) ? ElemType::F32 : pickOf(kIntKinds);
      Ty o{k, t.shape};
      return binary(pick(std::vector<std::string>{"<", "<=", ">", ">=", "==", "!="}),
                    genLeaf(o), literalOf(k), t);
    });
  if (c.empty()) { // f16/bf16 with no tensor of that kind
    Ty f{ElemType::F32, t.shape};
    return call("cast", {genLeaf(f)}, t, typeText(t.elem));
  }
  return pick(c)();
}

Expr Gen::operandFor(const Ty &t, int depth) {
  Ty r = chance(0.3) ? reduce(t) : t;
  if (r.shape != t.shape)
    feature("broadcast");
  return gen(r, depth);
}

Expr Gen::gen(const Ty &t, int depth) {
  if (depth <= 0 || chance(0.25))
    return genLeaf(t);
  if (t.elem == ElemType::F32)
    return genFloat(t, depth);
  if (t.elem == ElemType::I1)
    return genBool(t, depth);
  if (t.elem == ElemType::F16 || t.elem == ElemType::BF16)
    return genStorage(t, depth);
  return genInt(t, depth);
}

Expr Gen::mmaExpr(const Ty &t, int depth) {
  // t is f32 [M, N].
  static const ElemType kinds[] = {ElemType::F32, ElemType::F16, ElemType::BF16, ElemType::I8};
  ElemType ka = pickOf(kinds);
  ElemType kb = chance(0.7) ? ka : pickOf(kinds);
  int k = randomSize();
  bool ta = chance(0.2), tb = chance(0.5);
  auto operand = [&](ElemType kind, int r, int c, bool trans) {
    Ty ot{kind, trans ? std::vector<int>{c, r} : std::vector<int>{r, c}};
    Expr e = chance(0.7) ? genLeaf(ot) : gen(ot, depth - 1);
    if (trans)
      return call("transpose", {std::move(e)}, Ty{kind, {r, c}});
    return e;
  };
  Expr a = operand(ka, t.shape[0], k, ta);
  Expr b = operand(kb, k, t.shape[1], tb);
  feature(std::string("mma-") + kindName(ka) + (ka != kb ? std::string("-") + kindName(kb) : ""));
  feature(sizeValue(t.shape[0]) <= 4 ? "mma-few-rows" : sizeValue(t.shape[0]) <= 8 ? "mma-8-rows" : "mma-many-rows");
  if (tb)
    feature("mma-transposed-b");
  if (chance(0.4))
    return call("dot", {std::move(a), std::move(b)}, t);
  return call("mma", {std::move(a), std::move(b), gen(t, depth - 1)}, t);
}

Expr Gen::genFloat(const Ty &t, int depth) {
  int choice = static_cast<int>(range(0, 13));
  switch (choice) {
  case 0: case 1: case 2: {
    static const char *ops[] = {"+", "-", "*", "/", "%"};
    std::string op = pickOf(ops);
    Expr a = gen(t, depth - 1);
    Expr b = chance(0.3) ? literalOf(ElemType::F32) : operandFor(t, depth - 1);
    if (chance(0.5))
      std::swap(a, b);
    if (a.isBareLiteral && b.isBareLiteral)
      b = gen(t, depth - 1);
    feature("op" + op);
    return binary(op, std::move(a), std::move(b), t);
  }
  case 3: {
    static const char *fns[] = {"exp", "log", "exp2", "log2", "tanh", "sigmoid", "erf", "sin",
                                "cos", "sqrt", "rsqrt", "floor", "ceil", "round", "abs"};
    std::string f = pickOf(fns);
    feature("math-" + f);
    return call(f, {gen(t, depth - 1)}, t);
  }
  case 4: {
    feature("math-pow");
    Expr a = gen(t, depth - 1), b = chance(0.4) ? literalOf(ElemType::F32) : operandFor(t, depth - 1);
    if (chance(0.3))
      std::swap(a, b);
    if (a.isBareLiteral && b.isBareLiteral)
      b = gen(t, depth - 1);
    return call("pow", {std::move(a), std::move(b)}, t);
  }
  case 5: {
    std::string f = chance(0.5) ? "min" : "max";
    feature("math-" + f);
    Expr a = gen(t, depth - 1), b = chance(0.3) ? literalOf(ElemType::F32) : operandFor(t, depth - 1);
    if (a.isBareLiteral && b.isBareLiteral)
      b = gen(t, depth - 1);
    return call(f, {std::move(a), std::move(b)}, t);
  }
  case 6:
    feature("math-fma");
    return call("fma", {gen(t, depth - 1), operandFor(t, depth - 1), operandFor(t, depth - 1)}, t);
  case 7:
    feature("select");
    return call("select", {operandFor(Ty{ElemType::I1, t.shape}, depth - 1), gen(t, depth - 1),
                           operandFor(t, depth - 1)},
                t);
  case 8: {
    ElemType from = pickOf(kAllKinds);
    feature(std::string("cast-") + kindName(from) + "-f32");
    return call("cast", {gen(Ty{from, t.shape}, depth - 1)}, t, "f32");
  }
  case 9: {
    ElemType from = chance(0.5) ? ElemType::I32 : ElemType::U32;
    feature("bitcast");
    return call("bitcast", {gen(Ty{from, t.shape}, depth - 1)}, t, typeText(ElemType::F32));
  }
  case 10: {
    if (t.shape.size() >= 4)
      return genLeaf(t);
    std::string f = pick(std::vector<std::string>{"sum", "sum", "max", "min"});
    Ty in = t;
    size_t axis = static_cast<size_t>(range(0, static_cast<int64_t>(t.shape.size())));
    in.shape.insert(in.shape.begin() + static_cast<long>(axis), randomSize());
    if (elements(in.shape) > 4000)
      return genLeaf(t);
    feature("reduce-" + f);
    if (in.shape.size() == 1 && chance(0.5))
      return call(f, {gen(in, depth - 1)}, t);
    return call(f, {gen(in, depth - 1), lit(std::to_string(axis))}, t, "", {"", "axis"});
  }
  case 11:
    if (t.shape.size() == 2 && elements(t.shape) <= 600)
      return mmaExpr(t, depth);
    return genLeaf(t);
  case 12:
    if (t.shape.size() == 2) {
      feature("transpose");
      return call("transpose", {gen(Ty{t.elem, {t.shape[1], t.shape[0]}}, depth - 1)}, t);
    }
    if (!t.isScalar() && t.shape.size() <= 2) {
      feature("reshape");
      Ty in{t.elem, t.shape};
      in.shape.insert(in.shape.begin(), 0);
      if (chance(0.5))
        return call("reshape", {gen(in, depth - 1), shapeList(t.shape)}, t);
      // expand_dims of a lower-rank tile
      Ty lower{t.elem, t.shape};
      size_t ax = static_cast<size_t>(range(0, static_cast<int64_t>(t.shape.size()) - 1));
      if (t.shape[ax] != 0)
        return genLeaf(t);
      lower.shape.erase(lower.shape.begin() + static_cast<long>(ax));
      if (lower.shape.empty())
        return genLeaf(t);
      feature("expand_dims");
      return call("expand_dims", {gen(lower, depth - 1), lit(std::to_string(ax))}, t);
    }
    return genLeaf(t);
  default: {
    feature("neg");
    return unary("-", gen(t, depth - 1), t);
  }
  }
}

Expr Gen::genInt(const Ty &t, int depth) {
  unsigned bits = kindBits(t.elem);
  int choice = static_cast<int>(range(0, 10));
  switch (choice) {
  case 0: case 1: case 2: {
    static const char *ops[] = {"+", "-", "*", "/", "%", "&", "|", "^"};
    std::string op = pickOf(ops);
    Expr a = gen(t, depth - 1);
    Expr b = chance(0.3) ? literalOf(t.elem) : operandFor(t, depth - 1);
    if (chance(0.5))
      std::swap(a, b);
    if (a.isBareLiteral && b.isBareLiteral)
      b = gen(t, depth - 1);
    feature("op" + op);
    return binary(op, std::move(a), std::move(b), t);
  }
  case 3: {
    std::string op = chance(0.5) ? "<<" : ">>";
    feature("op" + op);
    if (chance(0.5)) {
      // By a runtime amount of the same kind: any value, taken modulo the
      // width (docs/dsl.md section 5), negative and past the width included.
      feature(std::string("shift-runtime-") + kindName(t.elem));
      return binary(op, gen(t, depth - 1), operandFor(t, depth - 1), t);
    }
    return binary(op, gen(t, depth - 1), intLit(range(0, bits - 1)), t);
  }
  case 4:
    return unary(chance(0.5) ? "-" : "~", gen(t, depth - 1), t);
  case 5: {
    std::string f = pick(std::vector<std::string>{"min", "max", "abs"});
    feature("math-" + f + "-int");
    if (f == "abs")
      return call(f, {gen(t, depth - 1)}, t);
    Expr a = gen(t, depth - 1), b = chance(0.3) ? literalOf(t.elem) : operandFor(t, depth - 1);
    if (a.isBareLiteral && b.isBareLiteral)
      b = gen(t, depth - 1);
    return call(f, {std::move(a), std::move(b)}, t);
  }
  case 6: {
    ElemType from = pickOf(kAllKinds);
    feature(std::string("cast-") + kindName(from) + "-" + kindName(t.elem));
    Expr x = gen(Ty{from, t.shape}, depth - 1);
    if (from == ElemType::F32 && chance(0.5))
      x = call("round", {std::move(x)}, Ty{from, t.shape});
    return call("cast", {std::move(x)}, t, typeText(t.elem));
  }
  case 7: {
    std::vector<ElemType> same;
    for (ElemType k : kAllKinds)
      if (k != t.elem && k != ElemType::I1 && kindBits(k) == bits)
        same.push_back(k);
    if (same.empty())
      return genLeaf(t);
    feature("bitcast");
    return call("bitcast", {gen(Ty{pick(same), t.shape}, depth - 1)}, t, typeText(t.elem));
  }
  case 8:
    feature("select");
    return call("select", {operandFor(Ty{ElemType::I1, t.shape}, depth - 1), gen(t, depth - 1),
                           operandFor(t, depth - 1)},
                t);
  case 9: {
    if (t.shape.size() >= 4)
      return genLeaf(t);
    std::string f = pick(std::vector<std::string>{"sum", "max", "min"});
    Ty in = t;
    size_t axis = static_cast<size_t>(range(0, static_cast<int64_t>(t.shape.size())));
    in.shape.insert(in.shape.begin() + static_cast<long>(axis), randomSize());
    if (elements(in.shape) > 4000)
      return genLeaf(t);
    feature("reduce-" + f + "-int");
    return call(f, {gen(in, depth - 1), lit(std::to_string(axis))}, t, "", {"", "axis"});
  }
  default:
    return genLeaf(t);
  }
}

Expr Gen::genBool(const Ty &t, int depth) {
  int choice = static_cast<int>(range(0, 4));
  if (choice <= 1) {
    ElemType k = chance(0.5) ? ElemType::F32 : pickOf(kIntKinds);
    Ty o{k, t.shape};
    Expr a = gen(o, depth - 1);
    Expr b = chance(0.4) ? literalOf(k) : operandFor(o, depth - 1);
    feature("compare");
    return binary(pick(std::vector<std::string>{"<", "<=", ">", ">=", "==", "!="}), std::move(a),
                  std::move(b), t);
  }
  if (choice == 2)
    return binary(pick(std::vector<std::string>{"&&", "||", "^", "&", "|"}), gen(t, depth - 1),
                  operandFor(t, depth - 1), t);
  if (choice == 3)
    return unary("!", gen(t, depth - 1), t);
  return genLeaf(t);
}

Expr Gen::genStorage(const Ty &t, int depth) {
  int choice = static_cast<int>(range(0, 3));
  if (choice == 0) {
    ElemType from = chance(0.7) ? ElemType::F32 : pickOf(kAllKinds);
    feature(std::string("cast-") + kindName(from) + "-" + kindName(t.elem));
    return call("cast", {gen(Ty{from, t.shape}, depth - 1)}, t, typeText(t.elem));
  }
  if (choice == 1) {
    feature("bitcast");
    return call("bitcast", {gen(Ty{chance(0.5) ? ElemType::I16 : ElemType::U16, t.shape}, depth - 1)},
                t, typeText(t.elem));
  }
  if (choice == 2) {
    feature("select-storage");
    return call("select", {operandFor(Ty{ElemType::I1, t.shape}, depth - 1), gen(t, depth - 1),
                           gen(t, depth - 1)},
                t);
  }
  return genLeaf(t);
}

//===----------------------------------------------------------------------===//
// Statements
//===----------------------------------------------------------------------===//

Stmt Gen::storeStmt(const Tensor &x, Expr offsets, Expr value, bool hints) {
  std::vector<Expr> args{nameRef(x.name), std::move(offsets), std::move(value)};
  std::vector<std::string> names{"", "", ""};
  const Ty &vt = *args[2].ty;
  if (hints && chance(0.15)) {
    Ty mt{ElemType::I1, vt.shape};
    args.push_back(gen(reduce(mt), 1));
    names.push_back("mask");
    feature("mask-store");
  }
  if (hints && chance(0.15)) {
    args.push_back(lit("true"));
    names.push_back("stream");
    feature("stream-store");
  }
  feature("store");
  return exprStmt(call("store", std::move(args), std::nullopt, "", std::move(names)));
}

void Gen::snipStore(std::vector<Stmt> &out, const Tensor *into) {
  Tensor x = into ? *into : pick(tensors_);
  int rank = static_cast<int>(range(1, static_cast<int64_t>(x.shape.size())));
  if (x.shape.size() == 4 && chance(0.5))
    rank = 4;
  Ty t{x.kind, randomShape(rank)};
  feature("tile-rank" + std::to_string(rank));
  feature(sizeValue(t.shape.back()) % 8 ? "tile-inner-not-vector-multiple" : "tile-inner-vector-multiple");
  Expr v = gen(t, static_cast<int>(range(1, 4)));
  out.push_back(storeStmt(x, offsetsFor(x, t.shape), std::move(v)));
}

void Gen::snipLet(std::vector<Stmt> &out) {
  ElemType k = chance(0.5) ? ElemType::F32 : pickOf(kAllKinds);
  int rank = static_cast<int>(range(0, 3));
  Ty t{k, rank ? randomShape(rank) : std::vector<int>{}};
  std::string n = fresh("v");
  bool isVar = chance(0.3);
  out.push_back(letStmt(n, gen(t, static_cast<int>(range(1, 3))), isVar));
  declare(n, t, isVar);
  if (isVar && isArithKind(k) && chance(0.6)) {
    static const char *ops[] = {"+=", "-=", "*=", "/="};
    std::string op = pickOf(ops);
    out.push_back(assign(nameRef(n, t), compoundValue(t, op), op));
  }
  // Use it right away, so it is not dead.
  auto xs = tensors_;
  std::vector<size_t> fits;
  for (size_t i = 0; i < tensors_.size(); ++i)
    if (tensors_[i].kind == k && tensors_[i].shape.size() >= t.shape.size())
      fits.push_back(i);
  if (fits.empty())
    return;
  Tensor x = tensors_[pick(fits)];
  if (t.isScalar()) {
    std::vector<Expr> idx;
    for (int64_t d : x.shape)
      idx.push_back(intLit(range(0, d - 1)));
    Expr target;
    target.kind = Expr::Kind::Index;
    target.text = x.name;
    target.args = std::move(idx);
    out.push_back(assign(std::move(target), nameRef(n, t)));
    feature("scalar-store");
    return;
  }
  out.push_back(storeStmt(x, offsetsFor(x, t.shape), nameRef(n, t)));
}

void Gen::snipScalarStore(std::vector<Stmt> &out) {
  Tensor x = pick(tensors_);
  std::vector<Expr> idx;
  for (int64_t d : x.shape)
    idx.push_back(intLit(chance(0.01) ? d : range(0, d - 1)));
  Expr target;
  target.kind = Expr::Kind::Index;
  target.text = x.name;
  target.args = std::move(idx);
  feature("scalar-store");
  if (isArithKind(x.kind) && chance(0.25)) {
    // `x[i] op= v` on an element (docs/dsl.md 2): `x[i] = x[i] op v`.
    static const char *ops[] = {"+=", "-=", "*=", "/="};
    std::string op = pickOf(ops);
    feature("compound-element");
    out.push_back(assign(std::move(target), compoundValue(Ty{x.kind, {}}, op), op));
    return;
  }
  out.push_back(assign(std::move(target), gen(Ty{x.kind, {}}, static_cast<int>(range(1, 3)))));
}

void Gen::snipLoop(std::vector<Stmt> &out, int depth) {
  // for c in lo .. hi step st { ... } with runtime bounds; loop-carried tiles.
  Tensor x = pick(tensors_);
  std::string c = fresh("i");
  int64_t extent = range(1, 9);
  int sz = newSize(extent);
  int64_t n = x.shape.back();
  // Bounds from scalar parameters (runtime), dim(), or literals.
  size_t lo = makeScalar(ElemType::I64), hi = makeScalar(ElemType::I64);
  p_.args[lo].intValue = chance(0.8) ? 0 : range(-2, 3);
  p_.args[hi].intValue = chance(0.1) ? range(-2, 0) : range(0, n + 2);
  Stmt f;
  f.kind = Stmt::Kind::For;
  f.name = c;
  f.lower = nameRef(p_.args[lo].name);
  f.upper = chance(0.3) ? call("dim", {nameRef(x.name), lit(std::to_string(x.shape.size() - 1))}, std::nullopt)
                        : nameRef(p_.args[hi].name);
  if (chance(0.7)) {
    f.hasStep = true;
    f.step = chance(0.5) ? intLit(extent) : sizeRef(sz);
  }
  feature("loop-runtime-bounds");
  std::vector<Expr> offs;
  for (size_t a = 0; a + 1 < x.shape.size(); ++a)
    offs.push_back(intLit(range(0, x.shape[a] - 1)));
  offs.push_back(nameRef(c));
  Ty tt{x.kind, {sz}};
  auto loadAt = [&](bool inside = true) {
    std::vector<Expr> o = offs;
    if (!inside)
      o.back() = intLit(range(0, 2));
    return call("load", {nameRef(x.name), listOf(std::move(o)), shapeList({sz})}, tt);
  };
  scopes_.emplace_back();
  int pattern = static_cast<int>(range(0, 3));
  std::vector<Stmt> after;
  if (pattern == 0) {
    // Double buffering: let old = cur; cur = load(...); prev = old;
    std::string cur = fresh("cur"), prev = fresh("prev"), old = fresh("old");
    out.push_back(letStmt(cur, call("zeros", {shapeList({sz})}, tt, typeText(x.kind)), true));
    out.push_back(letStmt(prev, call("full", {shapeList({sz}), literalOf(x.kind)}, tt, typeText(x.kind)), true));
    if (x.kind == ElemType::I1 || (isFloatKind(x.kind) && x.kind != ElemType::F32)) {
      out.pop_back();
      out.pop_back();
      out.push_back(letStmt(cur, loadAt(false), true));
      out.push_back(letStmt(prev, loadAt(false), true));
    }
    f.body.push_back(letStmt(old, nameRef(cur)));
    f.body.push_back(assign(nameRef(cur), loadAt()));
    f.body.push_back(assign(nameRef(prev), nameRef(old)));
    feature("loop-double-buffer");
    Tensor y = pick(tensors_);
    if (y.kind == x.kind) {
      std::vector<Expr> o2;
      for (size_t a = 0; a + 1 < y.shape.size(); ++a)
        o2.push_back(intLit(range(0, y.shape[a] - 1)));
      o2.push_back(intLit(0));
      after.push_back(storeStmt(y, listOf(o2), nameRef(prev, tt), false));
      std::vector<Expr> o3;
      for (size_t a = 0; a + 1 < y.shape.size(); ++a)
        o3.push_back(intLit(range(0, y.shape[a] - 1)));
      o3.push_back(intLit(range(0, y.shape.back())));
      after.push_back(storeStmt(y, listOf(o3), nameRef(cur, tt), false));
    }
  } else if (pattern == 1 && isArithKind(x.kind)) {
    // Swap of two carried tiles, and an accumulation.
    std::string a = fresh("a"), b = fresh("b"), tmp = fresh("tmp");
    out.push_back(letStmt(a, loadAt(false), true));
    out.push_back(letStmt(b, call("full", {shapeList({sz}), literalOf(x.kind)}, tt, typeText(x.kind)), true));
    f.body.push_back(letStmt(tmp, nameRef(a)));
    f.body.push_back(assign(nameRef(a), nameRef(b)));
    f.body.push_back(assign(nameRef(b), binary("+", nameRef(tmp), loadAt(), tt)));
    feature("loop-swap");
    for (const std::string &v : {a, b}) {
      Tensor y = pick(tensors_);
      if (y.kind != x.kind)
        continue;
      std::vector<Expr> o2;
      for (size_t ax = 0; ax + 1 < y.shape.size(); ++ax)
        o2.push_back(intLit(range(0, y.shape[ax] - 1)));
      o2.push_back(intLit(range(0, y.shape.back() - 1)));
      after.push_back(storeStmt(y, listOf(o2), nameRef(v, tt), false));
    }
  } else {
    // An accumulator (loop-carried) plus random statements in the body.
    ElemType k = isArithKind(x.kind) ? x.kind : ElemType::F32;
    Ty kt{k, {sz}};
    std::string acc = fresh("acc");
    out.push_back(letStmt(acc, call("zeros", {shapeList({sz})}, kt, typeText(k)), true));
    Expr ld = loadAt();
    if (k != x.kind)
      ld = call("cast", {std::move(ld)}, kt, "f32");
    declare(c, Ty{ElemType::I64, {}}, false);
    Expr rhs = chance(0.5) ? std::move(ld) : gen(kt, 2);
    std::string op = chance(0.5) ? "+" : "-";
    if (chance(0.4)) {
      f.body.push_back(assign(nameRef(acc, kt), std::move(rhs), op + "="));
      feature("compound-assign");
      feature("compound" + op + "=");
    } else {
      f.body.push_back(assign(nameRef(acc), binary(op, nameRef(acc), std::move(rhs), kt), "="));
    }
    if (depth < 2) {
      ++loopDepth_;
      genStmts(f.body, static_cast<int>(range(0, 2)), depth + 1);
      --loopDepth_;
    }
    feature("loop-accumulate");
    Tensor y = pick(tensors_);
    if (y.kind == k) {
      std::vector<Expr> o2;
      for (size_t ax = 0; ax + 1 < y.shape.size(); ++ax)
        o2.push_back(intLit(range(0, y.shape[ax] - 1)));
      o2.push_back(intLit(range(0, y.shape.back() - 1)));
      after.push_back(storeStmt(y, listOf(o2), nameRef(acc, kt), false));
    }
  }
  scopes_.pop_back();
  out.push_back(std::move(f));
  for (Stmt &s : after)
    out.push_back(std::move(s));
}

void Gen::snipIf(std::vector<Stmt> &out, int depth) {
  Stmt s;
  s.kind = Stmt::Kind::If;
  s.cond = genBool(Ty{ElemType::I1, {}}, 2);
  feature("if-runtime");
  // A var assigned in a branch flows out.
  std::optional<std::pair<std::string, Ty>> carried;
  if (chance(0.5)) {
    ElemType k = chance(0.6) ? ElemType::F32 : pickOf(kIntKinds);
    Ty t{k, chance(0.3) ? std::vector<int>{} : randomShape(static_cast<int>(range(1, 2)))};
    std::string n = fresh("m");
    out.push_back(letStmt(n, gen(t, 1), true));
    declare(n, t, true);
    carried = {n, t};
  }
  scopes_.emplace_back();
  genStmts(s.body, static_cast<int>(range(1, 2)), depth + 1);
  if (carried) {
    if (isArithKind(carried->second.elem) && chance(0.4)) {
      static const char *ops[] = {"+=", "-=", "*=", "/="};
      std::string op = pickOf(ops);
      s.body.push_back(assign(nameRef(carried->first, carried->second),
                              compoundValue(carried->second, op), op));
    } else {
      s.body.push_back(assign(nameRef(carried->first), gen(carried->second, 2)));
    }
  }
  scopes_.pop_back();
  if (chance(0.5)) {
    s.hasElse = true;
    scopes_.emplace_back();
    genStmts(s.elseBody, static_cast<int>(range(0, 2)), depth + 1);
    if (carried && chance(0.5))
      s.elseBody.push_back(assign(nameRef(carried->first), gen(carried->second, 2)));
    scopes_.pop_back();
  }
  out.push_back(std::move(s));
  if (carried) {
    std::vector<size_t> fits;
    for (size_t i = 0; i < tensors_.size(); ++i)
      if (tensors_[i].kind == carried->second.elem &&
          tensors_[i].shape.size() >= carried->second.shape.size())
        fits.push_back(i);
    if (fits.empty())
      return;
    Tensor x = tensors_[pick(fits)];
    if (carried->second.isScalar()) {
      std::vector<Expr> idx;
      for (int64_t d : x.shape)
        idx.push_back(intLit(range(0, d - 1)));
      Expr target;
      target.kind = Expr::Kind::Index;
      target.text = x.name;
      target.args = std::move(idx);
      out.push_back(assign(std::move(target), nameRef(carried->first)));
    } else {
      out.push_back(storeStmt(x, offsetsFor(x, carried->second.shape), nameRef(carried->first, carried->second)));
    }
  }
}

void Gen::snipConstIf(std::vector<Stmt> &out, int depth) {
  Stmt s;
  s.kind = Stmt::Kind::If;
  std::vector<Expr> conds;
  for (const std::string &b : boolParams_)
    conds.push_back(chance(0.5) ? nameRef(b) : unary("!", nameRef(b), std::nullopt));
  for (const std::string &e : enumParams_)
    conds.push_back(binary(chance(0.7) ? "==" : "!=", nameRef(e),
                           nameRef(std::string("E") + static_cast<char>('A' + range(0, 2))),
                           std::nullopt));
  for (const auto &[k, n] : dtypeParam_)
    conds.push_back(binary("==", nameRef(n), lit(kindName(pickOf(kAllKinds))), std::nullopt));
  conds.push_back(binary(chance(0.5) ? "<" : ">=", intLit(range(0, 5)), intLit(range(0, 5)), std::nullopt));
  s.cond = pick(conds);
  feature("if-compile-time");
  scopes_.emplace_back();
  genStmts(s.body, static_cast<int>(range(1, 2)), depth + 1);
  scopes_.pop_back();
  if (chance(0.5)) {
    s.hasElse = true;
    scopes_.emplace_back();
    genStmts(s.elseBody, static_cast<int>(range(1, 2)), depth + 1);
    scopes_.pop_back();
  }
  out.push_back(std::move(s));
}

void Gen::snipMma(std::vector<Stmt> &out) {
  // acc = mma(load(a, [m0, k], [M, BK]), transpose(load(b, [n0, k], [N, BK])), acc)
  // over a runtime K loop, or one dot; every operand kind, few and many rows.
  static const ElemType kinds[] = {ElemType::F32, ElemType::F16, ElemType::BF16, ElemType::I8};
  ElemType ka = pickOf(kinds);
  ElemType kb = chance(0.8) ? ka : pickOf(kinds);
  static const int64_t rows[] = {1, 2, 3, 4, 5, 7, 8, 9, 13, 16, 24};
  int m = newSize(pickOf(rows)), nn = randomSize(), bk = randomSize();
  if (elements({m, nn}) > 600)
    nn = newSize(7);
  bool tb = chance(0.6);
  // Tensors made for it: a [Ma, Ka], b [Nb, Kb] or [Kb, Nb], c f32.
  makeTensor(ka, 2);
  Tensor a = tensors_.back();
  makeTensor(kb, 2);
  Tensor b = tensors_.back();
  auto c = tensorOf(ElemType::F32, 2);
  if (!c) {
    makeTensor(ElemType::F32, 2);
    c = tensors_.size() - 1;
  }
  Tensor ct = tensors_[*c];
  Ty accTy{ElemType::F32, {m, nn}};
  std::string acc = fresh("acc"), k = fresh("i");
  feature(std::string("mma-") + kindName(ka) + (ka != kb ? std::string("-") + kindName(kb) : ""));
  feature(sizeValue(m) <= 4 ? "mma-few-rows" : sizeValue(m) <= 8 ? "mma-8-rows" : "mma-many-rows");
  if (tb)
    feature("mma-transposed-b");
  auto opA = [&](Expr kOff) {
    return call("load", {nameRef(a.name), listOf({intLit(range(0, a.shape[0] - 1)), std::move(kOff)}),
                         shapeList({m, bk})},
                Ty{ka, {m, bk}});
  };
  auto opB = [&](Expr kOff) {
    if (tb)
      return call("transpose",
                  {call("load", {nameRef(b.name), listOf({intLit(range(0, b.shape[0] - 1)), std::move(kOff)}),
                                 shapeList({nn, bk})},
                        Ty{kb, {nn, bk}}, "", {"", "", "", "cached"})},
                  Ty{kb, {bk, nn}});
    return call("load", {nameRef(b.name), listOf({std::move(kOff), intLit(range(0, b.shape[1] - 1))}),
                         shapeList({bk, nn})},
                Ty{kb, {bk, nn}});
  };
  // Drop the "cached" name placeholder where it was not used.
  auto fix = [](Expr e) {
    std::function<void(Expr &)> walk = [&](Expr &x) {
      if (x.argNames.size() > x.args.size())
        x.argNames.resize(x.args.size());
      for (Expr &y : x.args)
        walk(y);
    };
    walk(e);
    return e;
  };
  if (chance(0.6)) {
    out.push_back(letStmt(acc, chance(0.5) ? call("zeros", {shapeList({m, nn})}, accTy, "f32")
                                           : load(ct, {m, nn}, false),
                          true));
    size_t kmax = makeScalar(ElemType::I64);
    p_.args[kmax].intValue = range(0, std::min(a.shape[1], tb ? b.shape[1] : b.shape[0]) + 3);
    if (chance(0.4)) {
      const Tensor &pf = pick(tensors_);
      std::vector<Expr> offs;
      for (int64_t d : pf.shape)
        offs.push_back(intLit(chance(0.1) ? -1 : range(0, d - 1)));
      int ps = newSize(range(1, 64));
      std::vector<Expr> pargs{nameRef(pf.name), listOf(std::move(offs)), shapeList({ps})};
      std::vector<std::string> pn{"", "", ""};
      if (chance(0.6)) {
        pargs.push_back(lit("true"));
        pn.push_back("spread");
        feature("prefetch-spread");
      }
      out.push_back(exprStmt(call("prefetch", std::move(pargs), std::nullopt, "", std::move(pn))));
      feature("prefetch");
    }
    Stmt f;
    f.kind = Stmt::Kind::For;
    f.name = k;
    f.lower = intLit(0);
    f.upper = nameRef(p_.args[kmax].name);
    f.hasStep = true;
    f.step = sizeRef(bk);
    f.body.push_back(assign(nameRef(acc), fix(call("mma", {opA(nameRef(k)), opB(nameRef(k)), nameRef(acc)}, accTy))));
    out.push_back(std::move(f));
    feature("mma-loop");
  } else {
    Expr e = chance(0.5) ? call("dot", {opA(intLit(0)), opB(intLit(0))}, accTy)
                         : call("mma", {opA(intLit(0)), opB(intLit(0)), gen(accTy, 1)}, accTy);
    out.push_back(letStmt(acc, fix(std::move(e))));
  }
  declare(acc, accTy, false);
  out.push_back(storeStmt(ct, offsetsFor(ct, {m, nn}), nameRef(acc, accTy)));
}

void Gen::snipGatherScatter(std::vector<Stmt> &out) {
  Tensor x = pick(tensors_);
  int rank = static_cast<int>(range(1, 2));
  std::vector<int> shape = randomShape(rank);
  std::vector<Expr> idx;
  for (size_t a = 0; a < x.shape.size(); ++a) {
    // (iota * k + c) % dim: inside the tensor; rarely unreduced (outside).
    Ty it{ElemType::I64, shape};
    Expr e = call("iota", {shapeList(shape), lit(std::to_string(range(0, rank - 1)))}, it, "i64");
    e = binary("+", binary("*", std::move(e), intLit(range(1, 5)), it), intLit(range(0, 7)), it);
    if (!chance(0.03))
      e = binary("%", std::move(e), call("dim", {nameRef(x.name), lit(std::to_string(a))}, std::nullopt), it);
    else
      feature("out-of-bounds-access");
    idx.push_back(std::move(e));
  }
  Ty vt{x.kind, shape};
  std::vector<Expr> args{nameRef(x.name), listOf(idx)};
  std::vector<std::string> names{"", ""};
  bool masked = chance(0.3);
  Expr mask;
  if (masked)
    mask = gen(Ty{ElemType::I1, shape}, 1);
  if (chance(0.5)) {
    if (masked) {
      args.push_back(mask);
      names.push_back("mask");
    }
    feature("gather");
    std::string n = fresh("g");
    out.push_back(letStmt(n, call("gather", std::move(args), vt, "", std::move(names))));
    declare(n, vt, false);
    std::vector<size_t> fits;
    for (size_t i = 0; i < tensors_.size(); ++i)
      if (tensors_[i].kind == x.kind && tensors_[i].shape.size() >= shape.size())
        fits.push_back(i);
    if (fits.empty())
      return;
    Tensor y = tensors_[pick(fits)];
    out.push_back(storeStmt(y, offsetsFor(y, shape), nameRef(n, vt)));
    return;
  }
  feature("scatter");
  args.push_back(gen(vt, 2));
  names.push_back("");
  if (masked) {
    args.push_back(mask);
    names.push_back("mask");
  }
  out.push_back(exprStmt(call("scatter", std::move(args), std::nullopt, "", std::move(names))));
}

void Gen::snipPrefetch(std::vector<Stmt> &out) {
  Tensor x = pick(tensors_);
  int rank = static_cast<int>(range(1, static_cast<int64_t>(x.shape.size())));
  std::vector<int> shape = randomShape(rank);
  std::vector<Expr> args{nameRef(x.name), offsetsFor(x, shape), shapeList(shape)};
  std::vector<std::string> names{"", "", ""};
  if (chance(0.5)) {
    args.push_back(lit(chance(0.8) ? "true" : "false"));
    names.push_back("spread");
    feature("prefetch-spread");
  }
  feature("prefetch");
  out.push_back(exprStmt(call("prefetch", std::move(args), std::nullopt, "", std::move(names))));
  snipStore(out);
}

void Gen::snipInPlace(std::vector<Stmt> &out) {
  // store(x, [shifted], f(load(x, [o], [s]))): the source overlaps the
  // destination, shifted either way, or exactly (a copy onto itself).
  Tensor x = pick(tensors_);
  int rank = static_cast<int>(range(1, static_cast<int64_t>(x.shape.size())));
  std::vector<int> shape;
  size_t lead = x.shape.size() - static_cast<size_t>(rank);
  for (int i = 0; i < rank; ++i)
    shape.push_back(newSize(std::max<int64_t>(1, x.shape[lead + static_cast<size_t>(i)] - range(0, 2))));
  std::vector<Expr> src, dst;
  for (size_t a = 0; a < x.shape.size(); ++a) {
    int64_t o = range(0, 1), shift = chance(0.4) ? 0 : range(-2, 2);
    if (a < lead) {
      o = range(0, x.shape[a] - 1);
      shift = 0;
    }
    src.push_back(intLit(o));
    dst.push_back(intLit(std::max<int64_t>(0, o + shift)));
  }
  Ty t{x.kind, shape};
  Expr v = call("load", {nameRef(x.name), listOf(src), shapeList(shape)}, t);
  if (chance(0.6)) {
    Expr other = gen(t, 1);
    if (x.kind == ElemType::F32 || isIntKind(x.kind))
      v = binary(chance(0.5) ? "*" : "+", std::move(v), chance(0.5) ? literalOf(x.kind) : std::move(other), t);
    feature("in-place-update");
  } else {
    feature("in-place-copy");
  }
  out.push_back(storeStmt(x, listOf(dst), std::move(v), false));
}

void Gen::snipIntLiterals(std::vector<Stmt> &out) {
  // Literal arithmetic near the int64 limits and narrow kinds' wrapping,
  // folded at compile time.
  auto t64 = tensorOf(ElemType::I64, 1);
  if (!t64) {
    makeTensor(ElemType::I64, 1);
    t64 = tensors_.size() - 1;
  }
  Tensor x = tensors_[*t64];
  static const int64_t bigs[] = {9007199254740991, 9007199254740993, 4503599627370497,
                                 9223372036854775807, 4611686018427387904, 3037000499};
  int64_t a = pickOf(bigs), b = range(-3, 3);
  static const char *ops[] = {"+", "-", "*", "/"};
  std::string op = pickOf(ops);
  std::vector<Expr> idx;
  for (int64_t d : x.shape)
    idx.push_back(intLit(range(0, d - 1)));
  Expr target;
  target.kind = Expr::Kind::Index;
  target.text = x.name;
  target.args = std::move(idx);
  feature("int-literal-arithmetic");
  Expr value = binary(op, intLit(a), intLit(b), Ty{ElemType::I64, {}});
  if (chance(0.5)) {
    // A narrow kind: a constant past its range, then arithmetic on it.
    ElemType k = pickOf(kIntKinds);
    int64_t big = chance(0.5) ? 3000000000 : (chance(0.5) ? -1 : 70000);
    Expr c1 = call("cast", {intLit(big)}, Ty{k, {}}, kindName(k));
    Expr c2 = call("cast", {intLit(range(-2, 3))}, Ty{k, {}}, kindName(k));
    Expr r = chance(0.5) ? binary(pick(std::vector<std::string>{"/", "%", "+", "*", "-"}), c1, c2, Ty{k, {}})
                         : call("select", {binary("<", c1, c2, Ty{ElemType::I1, {}}), intLit(1), intLit(2)},
                                Ty{ElemType::I64, {}});
    if (r.ty->elem != ElemType::I64)
      r = call("cast", {std::move(r)}, Ty{ElemType::I64, {}}, "i64");
    value = std::move(r);
    feature("narrow-wrap");
  }
  out.push_back(assign(std::move(target), std::move(value)));
}

void Gen::snipSpecials(std::vector<Stmt> &out) {
  // Constant folding of min/max over +-0 and NaN, division by signed zeros.
  auto f = tensorOf(ElemType::F32, 1);
  if (!f) {
    makeTensor(ElemType::F32, 1);
    f = tensors_.size() - 1;
  }
  Tensor x = tensors_[*f];
  std::vector<Expr> idx;
  for (int64_t d : x.shape)
    idx.push_back(intLit(range(0, d - 1)));
  Expr target;
  target.kind = Expr::Kind::Index;
  target.text = x.name;
  target.args = std::move(idx);
  Ty s{ElemType::F32, {}};
  auto c = [&](float v) {
    return chance(0.5) ? call("cast", {floatLit(v)}, s, "f32") : floatLit(v);
  };
  static const float vals[] = {0.0f, -0.0f, std::numeric_limits<float>::quiet_NaN(), 1.0f,
                               -std::numeric_limits<float>::infinity(), 1e-45f};
  Expr a = c(pickOf(vals)), b = c(pickOf(vals));
  if (a.isBareLiteral && b.isBareLiteral)
    a = call("cast", {std::move(a)}, s, "f32");
  Expr m = call(chance(0.5) ? "min" : "max", {std::move(a), std::move(b)}, s);
  if (chance(0.5))
    m = binary("/", floatLit(1.0f), std::move(m), s);
  feature("special-fold");
  out.push_back(assign(std::move(target), std::move(m)));
}

void Gen::snipLoopOverflow(std::vector<Stmt> &out) {
  // A loop whose bounds lie near INT64_MAX: its trip count must not overflow.
  auto t = tensorOf(ElemType::I64, 1);
  if (!t) {
    makeTensor(ElemType::I64, 1);
    t = tensors_.size() - 1;
  }
  Tensor x = tensors_[*t];
  size_t lo = makeScalar(ElemType::I64), hi = makeScalar(ElemType::I64), st = makeScalar(ElemType::I64);
  int64_t max = std::numeric_limits<int64_t>::max();
  p_.args[lo].intValue = max - range(1, 8);
  p_.args[hi].intValue = max - range(0, 1);
  p_.args[st].intValue = chance(0.5) ? (int64_t(1) << 62) : range(1, 4);
  Stmt f;
  f.kind = Stmt::Kind::For;
  f.name = fresh("i");
  f.lower = nameRef(p_.args[lo].name);
  f.upper = nameRef(p_.args[hi].name);
  f.hasStep = true;
  f.step = nameRef(p_.args[st].name);
  std::vector<Expr> idx;
  for (int64_t d : x.shape)
    idx.push_back(intLit(range(0, d - 1)));
  Expr target;
  target.kind = Expr::Kind::Index;
  target.text = x.name;
  target.args = idx;
  Expr src = target;
  f.body.push_back(assign(std::move(target), binary("+", std::move(src), intLit(1), Ty{ElemType::I64, {}})));
  feature("loop-near-int64-max");
  out.push_back(std::move(f));
}

Expr Gen::compoundValue(const Ty &t, const std::string &op) {
  // `v op= x`: x is v's type or broadcasts to it (a scalar onto a tile).
  feature("compound-assign");
  feature("compound" + op);
  if (chance(0.3))
    return literalOf(t.elem);
  return operandFor(t, 2);
}

void Gen::makeGuarded() {
  // A parameter present only where a compile-time condition holds
  // (docs/dsl.md section 4): `x: gm<T>[...] if COND`, used only inside
  // `if COND { ... }` (section 8.4: the branch a specialisation does not
  // take may name it). The condition is over a bool and/or an enum
  // parameter, made here if the kernel has none.
  if (boolParams_.empty() && enumParams_.empty()) {
    bool v = chance(0.5);
    bool useDefault = chance(0.3);
    p_.cparams.push_back({"G", useDefault ? std::string("bool = ") + (v ? "true" : "false") : "bool",
                          useDefault ? "" : (v ? "true" : "false")});
    boolParams_.push_back("G");
    boolValue_["G"] = v;
  }
  int count = chance(0.3) ? 2 : 1;
  for (int c = 0; c < count; ++c) {
    std::vector<std::pair<std::string, bool>> conds;
    for (const std::string &b : boolParams_) {
      conds.push_back({b, boolValue_[b]});
      conds.push_back({"!" + b, !boolValue_[b]});
    }
    for (const std::string &e : enumParams_) {
      int which = static_cast<int>(range(0, 2));
      std::string en = std::string("E") + static_cast<char>('A' + which);
      conds.push_back({e + " == " + en, enumValue_[e] == which});
      conds.push_back({e + " != " + en, enumValue_[e] != which});
    }
    auto cond = pick(conds);
    if (conds.size() > 2 && chance(0.3)) {
      auto other = pick(conds);
      bool both = chance(0.5);
      cond = {cond.first + (both ? " && " : " || ") + other.first,
              both ? cond.second && other.second : cond.second || other.second};
    }
    ElemType k = chance(0.5) ? ElemType::F32 : pickOf(kAllKinds);
    makeTensor(k, static_cast<int>(range(1, 3)));
    Tensor t = tensors_.back();
    tensors_.pop_back();
    ArgSpec &a = p_.args[t.arg];
    a.guard = cond.first;
    a.present = cond.second;
    guarded_.push_back({t, cond.first, false});
    feature("param-conditional");
    feature(cond.second ? "param-conditional-present" : "param-conditional-absent");
  }
}

void Gen::snipGuarded(std::vector<Stmt> &out, int depth, size_t which) {
  // if COND { statements that may use the conditional tensor, one that
  // does } [else { statements that do not }]
  Guarded &g = guarded_[which];
  g.used = true;
  Stmt s;
  s.kind = Stmt::Kind::If;
  s.cond = lit(g.guard, false);
  feature("if-compile-time");
  feature("param-conditional-use");
  Tensor t = g.tensor;
  tensors_.push_back(t);
  scopes_.emplace_back();
  if (chance(0.5))
    snipStore(s.body, &t);
  genStmts(s.body, static_cast<int>(range(0, 1)), depth + 1);
  if (s.body.empty() || chance(0.5)) {
    // Read it into another tensor (or itself).
    std::vector<Tensor> same;
    for (const Tensor &x : tensors_)
      if (x.kind == t.kind)
        same.push_back(x);
    Tensor y = pick(same); // t itself at least
    int rank = static_cast<int>(range(1, static_cast<int64_t>(std::min(t.shape.size(), y.shape.size()))));
    Ty ty{t.kind, randomShape(rank)};
    s.body.push_back(storeStmt(y, offsetsFor(y, ty.shape), load(t, ty.shape)));
  }
  scopes_.pop_back();
  // Out of scope again (the one pushed here: a nested `if` on the same
  // guard pushes and pops its own).
  for (size_t i = tensors_.size(); i-- > 0;)
    if (tensors_[i].name == t.name) {
      tensors_.erase(tensors_.begin() + static_cast<long>(i));
      break;
    }
  if (chance(0.4)) {
    s.hasElse = true;
    scopes_.emplace_back();
    genStmts(s.elseBody, 1, depth + 1);
    scopes_.pop_back();
  }
  out.push_back(std::move(s));
}

void Gen::genStmt(std::vector<Stmt> &out, int depth) {
  if (!guarded_.empty() && depth < 2 && chance(0.08))
    return snipGuarded(out, depth, static_cast<size_t>(range(0, static_cast<int64_t>(guarded_.size()) - 1)));
  int r = static_cast<int>(range(0, 99));
  if (r < 30) return snipStore(out);
  if (r < 42) return snipLet(out);
  if (r < 48) return snipScalarStore(out);
  if (r < 56 && depth < 2) return snipLoop(out, depth);
  if (r < 63 && depth < 2) return snipIf(out, depth);
  if (r < 67 && depth < 2) return snipConstIf(out, depth);
  if (r < 73 && loopDepth_ == 0) return snipMma(out);
  if (r < 79) return snipGatherScatter(out);
  if (r < 82) return snipPrefetch(out);
  if (r < 89) return snipInPlace(out);
  if (r < 93) return snipIntLiterals(out);
  if (r < 97) return snipSpecials(out);
  if (r < 98 && depth == 0 && loopDepth_ == 0 && chance(0.2)) return snipLoopOverflow(out);
  snipStore(out);
}

void Gen::genStmts(std::vector<Stmt> &out, int count, int depth) {
  for (int i = 0; i < count; ++i)
    genStmt(out, depth);
}

Program Gen::run() {
  p_.sizes.push_back({1, ""}); // size 0: the constant 1 of broadcasts
  // Compile-time parameters.
  if (chance(0.3)) {
    static const ElemType choices[] = {ElemType::F16, ElemType::BF16, ElemType::F32, ElemType::I32};
    ElemType k = pickOf(choices);
    std::string decl = chance(0.5) ? "f16|bf16|f32|i32" : "type";
    bool useDefault = chance(0.3) && decl != "type";
    if (useDefault) {
      decl += " = " + std::string(kindName(k));
    }
    p_.cparams.push_back({"T", decl, useDefault ? "" : kindName(k)});
    dtypeParam_[k] = "T";
    feature("cparam-dtype");
  }
  if (chance(0.3)) {
    static const int64_t dvals[] = {3, 5, 8, 12, 17};
    int64_t v = pickOf(dvals);
    bool useDefault = chance(0.3);
    p_.cparams.push_back({"D", useDefault ? "i64 = " + std::to_string(v) : "i64",
                          useDefault ? "" : std::to_string(v)});
    p_.sizes.push_back({v, "D"});
    feature("cparam-i64");
  }
  if (chance(0.3)) {
    bool v = chance(0.5);
    bool useDefault = chance(0.3);
    p_.cparams.push_back({"F", useDefault ? std::string("bool = ") + (v ? "true" : "false") : "bool",
                          useDefault ? "" : (v ? "true" : "false")});
    boolParams_.push_back("F");
    boolValue_["F"] = v;
    feature("cparam-bool");
  }
  if (chance(0.2)) {
    int e = static_cast<int>(range(0, 2));
    p_.cparams.push_back({"E", "enum(EA, EB, EC)", std::string("E") + static_cast<char>('A' + e)});
    enumParams_.push_back("E");
    enumValue_["E"] = e;
    feature("cparam-enum");
  }
  // Tensors and scalars.
  int nt = static_cast<int>(range(2, 4));
  for (int i = 0; i < nt; ++i) {
    ElemType k = chance(0.4) ? ElemType::F32 : pickOf(kAllKinds);
    std::string typeName;
    if (dtypeParam_.count(k) && chance(0.7))
      typeName = dtypeParam_[k];
    makeTensor(k, chance(0.1) ? 4 : static_cast<int>(range(1, 3)), typeName);
  }
  if (chance(0.25))
    makeGuarded();
  int ns = static_cast<int>(range(0, 3));
  static const ElemType scalarKinds[] = {ElemType::I64, ElemType::F32, ElemType::I32, ElemType::I1};
  for (int i = 0; i < ns; ++i)
    makeScalar(pickOf(scalarKinds));
  // The grid: mostly one program, sometimes a few along one or two axes.
  gridSize_ = chance(0.7) ? 1 : range(2, 3);
  p_.grid.push_back(intLit(gridSize_));
  if (gridSize_ > 1 && chance(0.2)) {
    p_.grid.push_back(intLit(2));
    feature("grid-2d");
  }
  if (gridSize_ > 1)
    feature("grid-multi");
  scopes_.emplace_back();
  genStmts(p_.body, static_cast<int>(range(2, 6)), 0);
  for (size_t g = 0; g < guarded_.size(); ++g)
    if (!guarded_[g].used)
      snipGuarded(p_.body, 0, g);
  // Each argument's data has its own seed, so that dropping one keeps the
  // others' (the minimiser); by position, as regression files without one.
  for (size_t i = 0; i < p_.args.size(); ++i)
    p_.args[i].dataSeed = positionalDataSeed(p_.inputSeed, i);
  // Tensors made by snippets are declared after the first ones: fine.
  Program out = std::move(p_);
  markExactness(out);
  return out;
}

//===----------------------------------------------------------------------===//
// Exactness
//===----------------------------------------------------------------------===//

struct Taint {
  std::set<std::string> names; ///< variables and tensors
  bool changed = false;
  void add(const std::string &n) {
    if (names.insert(n).second)
      changed = true;
  }
};

bool inexact(const Expr &e, const Taint &t) {
  static const std::set<std::string> approx = {"exp",  "log", "exp2", "log2", "tanh", "sigmoid",
                                               "erf",  "sin", "cos",  "pow",  "rsqrt", "mma",
                                               "dot"};
  if ((e.kind == Expr::Kind::Name || e.kind == Expr::Kind::Index) && t.names.count(e.text))
    return true;
  if (e.kind == Expr::Kind::Call) {
    if (approx.count(e.text))
      return true;
    if (e.text == "sum" && !e.args.empty() && e.args[0].ty && e.args[0].ty->elem == ElemType::F32)
      return true;
    if (e.text == "sum" && (!e.args.empty() && !e.args[0].ty))
      return true;
    if ((e.text == "load" || e.text == "gather") && !e.args.empty() && t.names.count(e.args[0].text))
      return true;
  }
  for (const Expr &a : e.args)
    if (inexact(a, t))
      return true;
  return false;
}

void taintBlock(const std::vector<Stmt> &body, bool ctl, Taint &t) {
  for (const Stmt &s : body) {
    switch (s.kind) {
    case Stmt::Kind::Let:
    case Stmt::Kind::Var:
      if (ctl || inexact(s.value, t))
        t.add(s.name);
      break;
    case Stmt::Kind::Assign:
      if (ctl || inexact(s.value, t) || inexact(s.target, t))
        t.add(s.target.text);
      break;
    case Stmt::Kind::Expr:
      if (s.value.kind == Expr::Kind::Call &&
          (s.value.text == "store" || s.value.text == "scatter") && !s.value.args.empty()) {
        Expr rest = s.value;
        rest.args.erase(rest.args.begin());
        if (ctl || inexact(rest, t))
          t.add(s.value.args[0].text);
      }
      break;
    case Stmt::Kind::For: {
      bool c = ctl || inexact(s.lower, t) || inexact(s.upper, t) || (s.hasStep && inexact(s.step, t));
      if (c)
        t.add(s.name);
      // Twice: values carried around the loop.
      taintBlock(s.body, c, t);
      taintBlock(s.body, c, t);
      break;
    }
    case Stmt::Kind::If: {
      bool c = ctl || inexact(s.cond, t);
      taintBlock(s.body, c, t);
      taintBlock(s.elseBody, c, t);
      break;
    }
    }
  }
}

} // namespace

void markExactness(Program &p) {
  Taint t;
  do {
    t.changed = false;
    taintBlock(p.body, false, t);
  } while (t.changed);
  for (ArgSpec &a : p.args)
    if (a.isTensor)
      a.exact = !t.names.count(a.name);
}

Program generateProgram(uint64_t seed) { return Gen(seed).run(); }

bool FeatureGroup::covers(const std::set<std::string> &features) const {
  for (const std::string &f : any) {
    if (!f.empty() && f.back() == '*') {
      std::string prefix = f.substr(0, f.size() - 1);
      auto it = features.lower_bound(prefix);
      if (it != features.end() && it->compare(0, prefix.size(), prefix) == 0)
        return true;
    } else if (features.count(f)) {
      return true;
    }
  }
  return false;
}

const std::vector<FeatureGroup> &featureGroups() {
  static const std::vector<FeatureGroup> groups = [] {
    std::vector<FeatureGroup> g = {
        {"tile-rank-1", {"tile-rank1"}},
        {"tile-rank-2", {"tile-rank2"}},
        {"tile-rank-3", {"tile-rank3"}},
        {"tile-rank-4", {"tile-rank4"}},
        {"tile-size-not-vector-multiple", {"tile-inner-not-vector-multiple"}},
        {"mask", {"mask", "mask-store"}},
        {"tensor-padded", {"layout-padded"}},
        {"tensor-transposed", {"layout-transposed"}},
        {"tensor-inner-strided", {"layout-inner-strided"}},
    };
    for (ElemType k : kAllKinds)
      g.push_back({std::string("kind-") + kindName(k), {std::string("tensor-") + kindName(k)}});
    g.push_back({"cast", {"cast-*"}});
    g.push_back({"bitcast", {"bitcast"}});
    for (const char *f : {"exp", "log", "exp2", "log2", "tanh", "sigmoid", "erf", "sin", "cos",
                          "sqrt", "rsqrt", "floor", "ceil", "round", "abs", "pow", "fma", "min",
                          "max"})
      g.push_back({std::string("builtin-") + f,
                   {std::string("math-") + f, std::string("math-") + f + "-int"}});
    g.push_back({"reduction", {"reduce-*"}});
    for (const char *k : {"f32", "f16", "bf16", "i8"})
      g.push_back({std::string("mma-") + k, {std::string("mma-") + k + "*"}});
    g.push_back({"gather", {"gather"}});
    g.push_back({"scatter", {"scatter"}});
    g.push_back({"scalar-access", {"scalar-load", "scalar-store"}});
    g.push_back({"if-runtime", {"if-runtime"}});
    g.push_back({"if-compile-time", {"if-compile-time"}});
    g.push_back({"loop-runtime-bounds", {"loop-runtime-bounds"}});
    g.push_back({"loop-carried-tile", {"loop-double-buffer", "loop-swap", "loop-accumulate", "mma-loop"}});
    g.push_back({"prefetch", {"prefetch"}});
    g.push_back({"stream-store", {"stream-store"}});
    g.push_back({"in-place-update", {"in-place-update", "in-place-copy"}});
    g.push_back({"compound-element", {"compound-element"}});
    g.push_back({"param-conditional-present", {"param-conditional-present"}});
    g.push_back({"param-conditional-absent", {"param-conditional-absent"}});
    for (const char *op : {"+=", "-=", "*=", "/="})
      g.push_back({std::string("compound") + op, {std::string("compound") + op}});
    for (ElemType k : kIntKinds)
      g.push_back({std::string("shift-runtime-") + kindName(k),
                   {std::string("shift-runtime-") + kindName(k)}});
    return g;
  }();
  return groups;
}

} // namespace tilejit::difftest
