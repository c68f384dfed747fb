//===- Interpreter.cpp - The DSL's reference semantics --------------------===//
///
/// \file
/// A tree-walking interpreter of the parser's AST, written from docs/dsl.md.
/// Values are whole tiles (or scalars) of elements with a per-element error
/// bound (InterpNumeric.h), so a `store` whose source reads the same tensor,
/// a `let` of a later reassigned variable and loop-carried tiles have value
/// semantics by construction. Evaluation follows the source in the order the
/// front end emits its ops (operands left to right; a store's value before
/// its offsets), which is the order debug mode reports the first violation
/// in.
///
/// Points where the manual is silent and this file follows C, IEEE 754 or
/// NumPy are marked "silent:" below.
///
//===----------------------------------------------------------------------===//
#include "Interpreter.h"

#include "InterpNumeric.h"

#include <algorithm>
#include <bit>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <functional>
#include <set>

namespace tilejit::difftest {

unsigned elemBytes(rt::ElemType t) {
  switch (t) {
  case rt::ElemType::I1: case rt::ElemType::I8: case rt::ElemType::U8: return 1;
  case rt::ElemType::I16: case rt::ElemType::U16: case rt::ElemType::F16:
  case rt::ElemType::BF16: return 2;
  case rt::ElemType::I32: case rt::ElemType::U32: case rt::ElemType::F32: return 4;
  case rt::ElemType::I64: return 8;
  }
  return 0;
}

namespace {

using dsl::ast::Expr;
using dsl::ast::ExprKind;
using dsl::ast::Stmt;
using dsl::ast::StmtKind;
using dsl::ast::TypeRef;
using num::Elem;
using num::Kind;
using num::kInf;
using Shape = std::vector<int64_t>;

/// A scalar (empty shape) or a tile, with each element's error bound.
struct Val {
  Kind kind = Kind::I64;
  Shape shape;
  std::vector<Elem> e;
  std::vector<double> t;
  bool isTile() const { return !shape.empty(); }
  size_t size() const { return e.size(); }
};

int64_t count(const Shape &s) {
  int64_t n = 1;
  for (int64_t d : s)
    n *= d;
  return n;
}

Val makeVal(Kind k, const Shape &s) {
  Val v;
  v.kind = k;
  v.shape = s;
  v.e.resize(static_cast<size_t>(count(s)));
  v.t.assign(v.e.size(), 0.0);
  return v;
}

Val scalarOf(Kind k, Elem x, double tol = 0) {
  Val v = makeVal(k, {});
  v.e[0] = x;
  v.t[0] = tol;
  return v;
}

std::string shapeStr(const Shape &s) {
  std::string r = "[";
  for (size_t i = 0; i < s.size(); ++i)
    r += (i ? ", " : "") + std::to_string(s[i]);
  return r + "]";
}

std::string typeStr(const Val &v) {
  if (!v.isTile())
    return num::name(v.kind);
  std::string r = std::string("tile<") + num::name(v.kind);
  for (int64_t d : v.shape)
    r += ", " + std::to_string(d);
  return r + ">";
}

/// NumPy broadcasting of two shapes (nullopt: incompatible).
std::optional<Shape> broadcastShape(const Shape &a, const Shape &b) {
  size_t n = std::max(a.size(), b.size());
  Shape out(n);
  for (size_t i = 0; i < n; ++i) {
    int64_t da = i < n - a.size() ? 1 : a[i - (n - a.size())];
    int64_t db = i < n - b.size() ? 1 : b[i - (n - b.size())];
    if (da != db && da != 1 && db != 1)
      return std::nullopt;
    out[i] = std::max(da, db);
  }
  return out;
}

/// `v` stretched to `shape` (which broadcasting allows).
Val broadcast(const Val &v, const Shape &shape) {
  if (v.shape == shape)
    return v;
  Val out = makeVal(v.kind, shape);
  size_t r = shape.size(), vr = v.shape.size();
  std::vector<int64_t> idx(r, 0);
  for (size_t lin = 0; lin < out.size(); ++lin) {
    size_t src = 0;
    for (size_t d = 0; d < vr; ++d) {
      int64_t dim = v.shape[d];
      int64_t i = dim == 1 ? 0 : idx[r - vr + d];
      src = src * static_cast<size_t>(dim) + static_cast<size_t>(i);
    }
    out.e[lin] = v.e[src];
    out.t[lin] = v.t[src];
    for (size_t d = r; d-- > 0;) {
      if (++idx[d] < shape[d])
        break;
      idx[d] = 0;
    }
  }
  return out;
}

/// Row-major multi-index of linear index `lin` in `shape`.
void unravel(int64_t lin, const Shape &shape, std::vector<int64_t> &idx) {
  idx.resize(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    idx[d] = lin % shape[d];
    lin /= shape[d];
  }
}

//===----------------------------------------------------------------------===//
// Error bounds of f32 operations
//===----------------------------------------------------------------------===//

/// The bound of an f32 result `r` computed from inputs with bounds whose
/// first-order effect is `t` (plus one rounding of the result, since the
/// compiled code rounds a perturbed exact result once): 0 when every input
/// is exact; +inf when the result is not finite or may overflow.
double finish(float r, double t, bool inexact, double rounding = 1) {
  if (!inexact)
    return 0;
  if (!(t < kInf) || !std::isfinite(r))
    return kInf;
  t += rounding * num::ulpAt(std::fabs(r) + t);
  if (std::fabs(r) + t >= FLT_MAX)
    return kInf;
  return t;
}

/// An input error bound that may be used as a value: +inf for inexact
/// non-finite values.
bool inexactIn(double a, double ta) { return ta > 0 && (!(ta < kInf) || !std::isfinite(a)); }

/// Largest deviation of a monotone function `f` over [x - t, x + t] from
/// f(x) (all in double).
double monotoneSpread(const std::function<double(double)> &f, double x, double t) {
  double fx = f(x), lo = f(x - t), hi = f(x + t);
  double d = std::max(std::fabs(lo - fx), std::fabs(hi - fx));
  if (!std::isfinite(d))
    return kInf;
  return d * (1 + 1e-12) + 1e-300;
}

//===----------------------------------------------------------------------===//
// The interpreter
//===----------------------------------------------------------------------===//

/// A name in scope.
struct Binding {
  enum class K { Value, Var, Size, CInt, CBool, Enumerator, CType, Tensor, Absent };
  K kind = K::Value;
  Val v;              ///< Value, Var (the current value), Size
  int64_t iv = 0;     ///< CInt, CBool, Enumerator
  Kind type = Kind::F32; ///< CType
  int tensor = -1;    ///< Tensor
};

/// A literal not yet given a kind (docs/dsl.md 5: literals adapt to the
/// other operand), or a typed value. `hasValue` is false for store & co.
struct RV {
  bool literal = false, litFloat = false;
  int64_t li = 0;
  double lf = 0;
  double ltol = 0; ///< a float literal's uncertainty (see binaryLiterals)
  bool hasValue = true;
  Val v;
  SourceLoc loc;
  double litAsDouble() const { return litFloat ? lf : static_cast<double>(li); }
};

/// A tensor argument under way.
struct TensorState {
  std::string name;
  Tensor *arg = nullptr;
  Kind kind = Kind::F32;
  Shape shape, strides;
  std::vector<double> *tol = nullptr;
  bool aliased = false; ///< two elements share storage (a zero stride)
};

class Interp {
public:
  Interp(const dsl::ast::Kernel &k, const Limits &limits) : k_(k), limits_(limits) {}

  std::variant<Outcome, std::string> run(const std::map<std::string, std::string> &spec,
                                         std::vector<Argument> args);

private:
  const dsl::ast::Kernel &k_;
  Limits limits_;
  int64_t steps_ = 0;
  std::string err_;
  std::vector<std::map<std::string, Binding>> scopes_;
  std::vector<TensorState> tensors_;
  int64_t pid_[3] = {0, 0, 0}, grid_[3] = {1, 1, 1};
  int64_t program_ = 0;
  bool inGrid_ = false;
  Outcome out_;

  template <class T = bool> std::optional<T> fail(SourceLoc loc, const std::string &msg) {
    if (err_.empty())
      err_ = std::to_string(loc.line) + ":" + std::to_string(loc.column) + ": " + msg;
    return std::nullopt;
  }
  bool step(int64_t n) {
    steps_ += std::max<int64_t>(n, 1);
    if (steps_ > limits_.maxSteps) {
      if (err_.empty())
        err_ = "the program takes more than " + std::to_string(limits_.maxSteps) +
               " element operations (Limits::maxSteps)";
      return false;
    }
    return true;
  }

  // Scopes.
  Binding *lookup(const std::string &n) {
    for (size_t i = scopes_.size(); i-- > 0;) {
      auto it = scopes_[i].find(n);
      if (it != scopes_[i].end())
        return &it->second;
    }
    return nullptr;
  }
  void declare(const std::string &n, Binding b) { scopes_.back()[n] = std::move(b); }

  // Violations (docs/dsl.md 10).
  void violation(SourceLoc loc, const std::string &access, int64_t axis, int64_t index,
                 int64_t extent, int64_t size) {
    if (out_.violation)
      return;
    Violation v;
    v.program = program_;
    v.line = loc.line;
    v.column = loc.column;
    v.message = std::to_string(loc.line) + ":" + std::to_string(loc.column) + ": " + access +
                ": " +
                (extent == 1 ? "index " + std::to_string(index)
                             : "region [" + std::to_string(index) + ", " +
                                   std::to_string(index) + " + " + std::to_string(extent) + ")") +
                " on axis " + std::to_string(axis) + " is outside [0, " + std::to_string(size) +
                ")";
    out_.violation = v;
  }
  void unsure() { out_.violationUnsure = true; }

  // Compile-time evaluation (shapes, axes, hints, `if` on parameters).
  std::optional<int64_t> constEval(const Expr &e);
  std::optional<int64_t> constInt(const Expr &e, const std::string &what);
  std::optional<Shape> constShape(const Expr &e, const std::string &what);
  std::optional<Kind> resolveScalar(const TypeRef &t);

  // Values.
  std::optional<Val> materialize(const RV &r, Kind k);
  std::optional<Val> materializeDefault(const RV &r) {
    if (!r.literal)
      return r.v;
    return materialize(r, r.litFloat ? Kind::F32 : Kind::I64);
  }
  std::optional<std::vector<Val>> unify(std::vector<RV *> vals, SourceLoc loc,
                                        const std::string &op);
  bool requireArithmetic(const Val &v, SourceLoc loc, const std::string &op, bool allowInt,
                         bool allowBool);
  std::optional<Val> toIndex(const RV &r, const std::string &what);
  std::optional<Val> convertForVar(const RV &r, Kind k, const Shape &s, SourceLoc loc,
                                   const std::string &name);

  // Expressions.
  std::optional<RV> eval(const Expr &e);
  std::optional<Val> evalValue(const Expr &e) {
    auto r = eval(e);
    if (!r)
      return std::nullopt;
    if (!r->hasValue)
      return fail<Val>(e.loc, "expression has no value");
    return materializeDefault(*r);
  }
  std::optional<RV> evalUnary(const Expr &e);
  std::optional<RV> binaryLiterals(const std::string &op, const RV &a, const RV &b,
                                   SourceLoc loc);
  std::optional<RV> binaryOp(const std::string &op, RV a, RV b, SourceLoc loc);
  std::optional<RV> evalBinary(const Expr &e);
  std::optional<RV> evalCall(const Expr &e);
  std::optional<RV> evalMath(const Expr &e, const std::string &n, Val v);
  std::optional<RV> evalReduce(const Expr &e, const std::string &n, Val v, int64_t axis);
  std::optional<RV> evalMma(const Expr &e);
  std::optional<RV> evalMemory(const Expr &e);
  std::optional<RV> evalScalarLoad(const Expr &e);
  const TensorState *tensorArg(const Expr &e, const std::string &builtin);

  // Tensor elements.
  int64_t storageIndex(const TensorState &t, const std::vector<int64_t> &idx) const {
    int64_t s = t.arg->offset;
    for (size_t d = 0; d < idx.size(); ++d)
      s += idx[d] * t.strides[d];
    return s;
  }
  Elem readElem(const TensorState &t, int64_t s) const;
  void writeElem(TensorState &t, int64_t s, const Elem &x);
  bool inBounds(const TensorState &t, const std::vector<int64_t> &idx) const {
    for (size_t d = 0; d < idx.size(); ++d)
      if (idx[d] < 0 || idx[d] >= t.shape[d])
        return false;
    return true;
  }
  void poisonTensor(TensorState &t);

  // Statements.
  bool execBlock(const std::vector<dsl::ast::StmtPtr> &stmts);
  bool exec(const Stmt &s);
  bool execAssign(const Stmt &s);
  bool execFor(const Stmt &s);
  bool execIf(const Stmt &s);

  // Setup.
  bool bindCompileParams(const std::map<std::string, std::string> &spec);
  bool bindParams(std::vector<Argument> &args);
};

//===----------------------------------------------------------------------===//
// Compile-time evaluation
//===----------------------------------------------------------------------===//

std::optional<int64_t> Interp::constEval(const Expr &e) {
  switch (e.kind) {
  case ExprKind::IntLit:
  case ExprKind::BoolLit:
    return e.intValue;
  case ExprKind::Name: {
    Binding *b = lookup(e.name);
    if (b && (b->kind == Binding::K::CInt || b->kind == Binding::K::CBool ||
              b->kind == Binding::K::Enumerator))
      return b->iv;
    return std::nullopt;
  }
  case ExprKind::Unary: {
    auto v = constEval(*e.args[0]);
    if (!v)
      return std::nullopt;
    if (e.op == "-") {
      if (*v == INT64_MIN)
        return fail<int64_t>(e.loc, "compile-time arithmetic overflows int64");
      return -*v;
    }
    if (e.op == "!")
      return *v == 0;
    return ~*v;
  }
  case ExprKind::Binary: {
    auto a = constEval(*e.args[0]);
    if (!a)
      return std::nullopt;
    auto b = constEval(*e.args[1]);
    if (!b)
      return std::nullopt;
    const std::string &op = e.op;
    int64_t r;
    auto ovf = [&] { return fail<int64_t>(e.loc, "compile-time arithmetic overflows int64"); };
    if (op == "+") return __builtin_add_overflow(*a, *b, &r) ? ovf() : r;
    if (op == "-") return __builtin_sub_overflow(*a, *b, &r) ? ovf() : r;
    if (op == "*") return __builtin_mul_overflow(*a, *b, &r) ? ovf() : r;
    if ((op == "/" || op == "%") && *a == INT64_MIN && *b == -1)
      return ovf();
    if (op == "/") return *b == 0 ? 0 : *a / *b;
    if (op == "%") return *b == 0 ? 0 : *a % *b;
    if (op == "<<") return static_cast<int64_t>(static_cast<uint64_t>(*a) << (*b & 63));
    if (op == ">>") return *a >> (*b & 63);
    if (op == "==") return *a == *b;
    if (op == "!=") return *a != *b;
    if (op == "<") return *a < *b;
    if (op == "<=") return *a <= *b;
    if (op == ">") return *a > *b;
    if (op == ">=") return *a >= *b;
    if (op == "&&") return *a && *b;
    if (op == "||") return *a || *b;
    return std::nullopt;
  }
  case ExprKind::Call:
    if ((e.name == "min" || e.name == "max" || e.name == "cdiv") && e.args.size() == 2 &&
        e.argNames[1].empty()) {
      auto a = constEval(*e.args[0]);
      if (!a)
        return std::nullopt;
      auto b = constEval(*e.args[1]);
      if (!b)
        return std::nullopt;
      if (e.name == "min")
        return std::min(*a, *b);
      if (e.name == "max")
        return std::max(*a, *b);
      if (*b == 0)
        return 0;
      if (*a >= 0 && *b > 0)
        return *a / *b + (*a % *b != 0);
      int64_t t;
      if (__builtin_sub_overflow(*b, 1, &t) || __builtin_add_overflow(*a, t, &t))
        return fail<int64_t>(e.loc, "compile-time arithmetic overflows int64");
      return t / *b;
    }
    return std::nullopt;
  default:
    return std::nullopt;
  }
}

std::optional<int64_t> Interp::constInt(const Expr &e, const std::string &what) {
  auto v = constEval(e);
  if (!v && err_.empty())
    return fail<int64_t>(e.loc, what + " must be a compile-time constant");
  return v;
}

std::optional<Shape> Interp::constShape(const Expr &e, const std::string &what) {
  if (e.kind != ExprKind::List)
    return fail<Shape>(e.loc, "expected a shape list '[d0, ...]' for " + what);
  Shape s;
  for (const auto &d : e.args) {
    auto v = constInt(*d, "tile shape (in " + what + ")");
    if (!v)
      return std::nullopt;
    if (*v <= 0)
      return fail<Shape>(d->loc, "tile dimension must be positive");
    s.push_back(*v);
  }
  if (s.empty() || s.size() > 4)
    return fail<Shape>(e.loc, "tile rank must be 1..4 (in " + what + ")");
  int64_t n = 1;
  for (int64_t d : s)
    if (__builtin_mul_overflow(n, d, &n) || n > (int64_t(1) << 40))
      return fail<Shape>(e.loc, "tile shape has more than 2^40 elements");
  return s;
}

std::optional<Kind> Interp::resolveScalar(const TypeRef &t) {
  if (Binding *b = lookup(t.name); b && b->kind == Binding::K::CType)
    return b->type;
  Kind k;
  if (rt::parseElemType(t.name == "bool" ? "i1" : t.name, k))
    return k;
  return fail<Kind>(t.loc, "unknown type '" + t.name + "'");
}

//===----------------------------------------------------------------------===//
// Values
//===----------------------------------------------------------------------===//

std::optional<Val> Interp::materialize(const RV &r, Kind k) {
  if (!r.literal)
    return r.v;
  if (r.litFloat && !num::isFloat(k))
    return fail<Val>(r.loc, std::string("float literal where ") + num::name(k) +
                                " is expected");
  if (k == Kind::I1 && r.li != 0 && r.li != 1)
    return fail<Val>(r.loc, "integer literal where i1 is expected");
  Elem x;
  double tol = 0;
  if (!num::isFloat(k)) {
    // Integer literals are exact integers and wrap into the kind.
    x.i = num::wrap(static_cast<uint64_t>(r.li), k);
  } else if (!r.litFloat) {
    x = num::intToFloat(r.li, false, k); // rounded once
  } else {
    // silent: a float literal takes an f16/bf16 kind through f32 (the
    // compiler's constants do: double -> f32 -> f16/bf16).
    x = num::floatConstant(r.lf, k);
    tol = r.ltol;
    if (tol > 0 && k != Kind::F32)
      tol = kInf;
  }
  return scalarOf(k, x, tol);
}

std::optional<std::vector<Val>> Interp::unify(std::vector<RV *> vals, SourceLoc loc,
                                              const std::string &op) {
  std::optional<Kind> kind;
  for (RV *r : vals)
    if (!r->literal) {
      if (!kind)
        kind = r->v.kind;
      else if (r->v.kind != *kind)
        return fail<std::vector<Val>>(loc, std::string("mismatched element types ") +
                                               num::name(*kind) + " and " +
                                               num::name(r->v.kind) + " in '" + op + "'");
    }
  if (!kind) {
    bool anyFloat = false;
    for (RV *r : vals)
      anyFloat |= r->litFloat;
    kind = anyFloat ? Kind::F32 : Kind::I64;
  }
  Shape shape;
  bool isTile = false;
  for (RV *r : vals) {
    if (r->literal || !r->v.isTile())
      continue;
    if (!isTile) {
      shape = r->v.shape;
      isTile = true;
      continue;
    }
    auto s = broadcastShape(shape, r->v.shape);
    if (!s)
      return fail<std::vector<Val>>(loc, "incompatible tile shapes " + shapeStr(shape) +
                                             " and " + shapeStr(r->v.shape) + " in '" + op +
                                             "'");
    shape = *s;
  }
  std::vector<Val> out;
  for (RV *r : vals) {
    auto v = materialize(*r, *kind);
    if (!v)
      return std::nullopt;
    out.push_back(isTile ? broadcast(*v, shape) : *v);
  }
  if (isTile && !step(count(shape)))
    return std::nullopt;
  return out;
}

bool Interp::requireArithmetic(const Val &v, SourceLoc loc, const std::string &op,
                               bool allowInt, bool allowBool) {
  Kind k = v.kind;
  if (k == Kind::F16 || k == Kind::BF16)
    return fail(loc, "arithmetic '" + op + "' on " + num::name(k) +
                         " is not supported; f16 and bf16 are storage types")
        .value_or(false);
  if (k == Kind::I1 && !allowBool)
    return fail(loc, "'" + op + "' is not defined on i1 values").value_or(false);
  if (num::isInteger(k) && !allowInt)
    return fail(loc, "'" + op + "' needs a float operand, got " + num::name(k))
        .value_or(false);
  return true;
}

std::optional<Val> Interp::toIndex(const RV &r, const std::string &what) {
  if (!r.hasValue)
    return fail<Val>(r.loc, what + " has no value");
  if (r.literal) {
    if (r.litFloat)
      return fail<Val>(r.loc, what + " must be an integer");
    Elem x;
    x.i = r.li;
    return scalarOf(Kind::I64, x);
  }
  if (r.v.isTile() || !num::isInteger(r.v.kind))
    return fail<Val>(r.loc, what + " must be an integer scalar, got " + typeStr(r.v));
  Val v = r.v;
  v.kind = Kind::I64; // canonical values: sign- or zero-extended already
  if (v.t[0] > 0)
    v.t[0] = kInf;
  return v;
}

std::optional<Val> Interp::convertForVar(const RV &r, Kind k, const Shape &s, SourceLoc loc,
                                         const std::string &name) {
  if (!r.hasValue)
    return fail<Val>(loc, "expression has no value");
  auto v = r.literal ? materialize(r, k) : std::optional<Val>(r.v);
  if (!v)
    return std::nullopt;
  if (v->kind == k && v->shape == s)
    return v;
  if (v->kind == k && !s.empty()) {
    auto b = broadcastShape(v->shape, s);
    if (b && *b == s) {
      if (!step(count(s)))
        return std::nullopt;
      return broadcast(*v, s);
    }
  }
  Val target = makeVal(k, {});
  target.shape = s;
  return fail<Val>(loc, "cannot assign a value of type " + typeStr(*v) + " to '" + name +
                            "' of type " + typeStr(target));
}

//===----------------------------------------------------------------------===//
// Elementwise arithmetic
//===----------------------------------------------------------------------===//

/// docs/dsl.md 5, "NaN bits": an arithmetic result that is a NaN is the
/// canonical quiet NaN 0x7fc00000, whatever NaNs the operands carry (this
/// host's own arithmetic would give its default NaN or an operand's).
float canonNaN(float x) {
  if (!std::isnan(x))
    return x;
  uint32_t bits = 0x7fc00000u;
  float out;
  std::memcpy(&out, &bits, sizeof out);
  return out;
}

float fminmax(bool isMin, float a, float b) {
  // docs/dsl.md 8.6: NaN from either side propagates; -0 is below +0.
  if (std::isnan(a))
    return a;
  if (std::isnan(b))
    return b;
  if (a == b)
    return (std::signbit(a) == isMin) ? a : b;
  return (a < b) == isMin ? a : b;
}

/// One element of an integer operation of kind `k` (values wrapped).
int64_t intOp(const std::string &op, Kind k, int64_t a, int64_t b) {
  auto ua = static_cast<uint64_t>(a), ub = static_cast<uint64_t>(b);
  bool sgn = num::isSigned(k);
  if (op == "+") return num::wrap(ua + ub, k);
  if (op == "-") return num::wrap(ua - ub, k);
  if (op == "*") return num::wrap(ua * ub, k);
  if (op == "/" || op == "%") {
    // x / 0 = 0 and x % 0 = 0; INT_MIN / -1 wraps (the manual's integer
    // arithmetic wraps in its kind; never undefined).
    if (b == 0)
      return 0;
    if (sgn && b == -1)
      return op == "/" ? num::wrap(0 - ua, k) : 0;
    return op == "/" ? num::wrap(static_cast<uint64_t>(a / b), k)
                     : num::wrap(static_cast<uint64_t>(a % b), k);
  }
  if (op == "&" || op == "&&") return num::wrap(ua & ub, k);
  if (op == "|" || op == "||") return num::wrap(ua | ub, k);
  if (op == "^") return num::wrap(ua ^ ub, k);
  if (op == "<<" || op == ">>") {
    // silent: the shift amount is taken modulo the kind's width (x86's and
    // LLVM-without-poison's behaviour), so no shift is undefined.
    unsigned amt = static_cast<unsigned>(ub & (num::bitWidth(k) - 1));
    if (op == "<<")
      return num::wrap(ua << amt, k);
    return sgn ? num::wrap(static_cast<uint64_t>(a >> amt), k) : num::wrap(ua >> amt, k);
  }
  if (op == "min") return sgn ? std::min(a, b) : static_cast<int64_t>(std::min(ua, ub));
  if (op == "max") return sgn ? std::max(a, b) : static_cast<int64_t>(std::max(ua, ub));
  return 0;
}

bool intCompare(const std::string &op, int64_t a, int64_t b) {
  if (op == "==") return a == b;
  if (op == "!=") return a != b;
  if (op == "<") return a < b;
  if (op == "<=") return a <= b;
  if (op == ">") return a > b;
  return a >= b;
}

/// The bound of a zero whose sign the order of a sum decides: values are
/// compared, not bits (an ulp far below any f32 step).
constexpr double kZeroSign = std::numeric_limits<double>::denorm_min();

/// Whether every pair of values within `ta` of `a` and `tb` of `b` compares
/// alike: the intervals are apart (or touch only where the order of the
/// comparison cannot change). Infinite or NaN inexact values never are.
bool certainCompare(double a, double ta, double b, double tb) {
  if (ta == kZeroSign && a == 0)
    ta = 0; // comparisons do not see the sign of zero
  if (tb == kZeroSign && b == 0)
    tb = 0;
  if (ta == 0 && tb == 0)
    return true;
  if (!(ta < kInf) || !(tb < kInf))
    return false;
  if ((ta > 0 && !std::isfinite(a)) || (tb > 0 && !std::isfinite(b)))
    return false;
  if (std::isnan(a) || std::isnan(b))
    return false;
  // Strictly apart: <, <=, >, >=, == and != all have one answer.
  return a + ta < b - tb || b + tb < a - ta;
}

bool compare(const std::string &op, double a, double b) {
  // C's comparisons: ordered, except != (true for a NaN).
  if (op == "==") return a == b;
  if (op == "!=") return !(a == b);
  if (op == "<") return a < b;
  if (op == "<=") return a <= b;
  if (op == ">") return a > b;
  return a >= b;
}

/// One f32 element of a binary operation with its error bound.
std::pair<float, double> floatOp(const std::string &op, float a, float b, double ta,
                                 double tb) {
  float r;
  if (op == "+") r = a + b;
  else if (op == "-") r = a - b;
  else if (op == "*") r = a * b;
  else if (op == "/") r = a / b;
  else if (op == "%") r = std::fmod(a, b); // exact, as C's fmod
  else r = fminmax(op == "min", a, b);
  r = canonNaN(r);
  bool inexact = ta > 0 || tb > 0;
  if (!inexact)
    return {r, 0};
  if (inexactIn(a, ta) || inexactIn(b, tb) || std::isnan(a) || std::isnan(b))
    return {r, kInf};
  // An exact infinity against a finite inexact operand: the result does not
  // move unless the other operand's sign may (-inf - x stays -inf).
  bool aInf = std::isinf(a), bInf = std::isinf(b);
  if (aInf != bInf) {
    double other = aInf ? b : a, to = aInf ? tb : ta;
    bool signSure = std::fabs(other) > to;
    if (op == "+" || op == "-")
      return {r, 0};
    if (op == "*" || (op == "/" && aInf))
      return {r, signSure ? 0 : kInf};
    if (op == "/")
      return {r, signSure ? 0 : kZeroSign}; // x / inf = +-0
    if (op == "min" || op == "max")
      return {r, std::isinf(r) ? 0 : to};
    return {r, kInf};
  }
  double A = std::fabs(a), B = std::fabs(b);
  if (op == "+" || op == "-")
    return {r, finish(r, ta + tb, true)};
  if (op == "*")
    return {r, finish(r, A * tb + B * ta + ta * tb, true)};
  if (op == "/") {
    if (B <= tb)
      return {r, kInf};
    return {r, finish(r, (A * tb + B * ta) / (B * (B - tb)), true)};
  }
  if (op == "%")
    return {r, kInf};
  return {r, finish(r, std::max(ta, tb), true, 0)}; // min, max: no rounding
}

//===----------------------------------------------------------------------===//
// Expressions
//===----------------------------------------------------------------------===//

std::optional<RV> Interp::eval(const Expr &e) {
  RV r;
  r.loc = e.loc;
  switch (e.kind) {
  case ExprKind::IntLit:
    r.literal = true;
    r.li = e.intValue;
    return r;
  case ExprKind::FloatLit:
    r.literal = r.litFloat = true;
    r.lf = e.floatValue;
    return r;
  case ExprKind::BoolLit: {
    Elem x;
    x.i = e.intValue ? 1 : 0;
    r.v = scalarOf(Kind::I1, x);
    return r;
  }
  case ExprKind::Name: {
    Binding *b = lookup(e.name);
    if (!b) {
      if (e.name == "inf" || e.name == "nan") {
        r.literal = r.litFloat = true;
        r.lf = e.name == "inf" ? kInf : std::numeric_limits<double>::quiet_NaN();
        return r;
      }
      return fail<RV>(e.loc, "use of undeclared name '" + e.name + "'");
    }
    Elem x;
    switch (b->kind) {
    case Binding::K::Value:
    case Binding::K::Var:
    case Binding::K::Size:
      r.v = b->v;
      return r;
    case Binding::K::CInt:
    case Binding::K::Enumerator:
      x.i = b->iv;
      r.v = scalarOf(Kind::I64, x);
      return r;
    case Binding::K::CBool:
      x.i = b->iv ? 1 : 0;
      r.v = scalarOf(Kind::I1, x);
      return r;
    case Binding::K::CType:
      return fail<RV>(e.loc, "'" + e.name + "' is a type, not a value");
    case Binding::K::Tensor:
      return fail<RV>(e.loc, "tensor '" + e.name + "' used as a value");
    case Binding::K::Absent:
      return fail<RV>(e.loc, "parameter '" + e.name + "' is absent from this specialisation");
    }
    return std::nullopt;
  }
  case ExprKind::Unary:
    return evalUnary(e);
  case ExprKind::Binary:
    return evalBinary(e);
  case ExprKind::Call:
    return evalCall(e);
  case ExprKind::Index:
    return evalScalarLoad(e);
  case ExprKind::List:
    return fail<RV>(e.loc, "a list '[...]' is only allowed as an argument of a builtin");
  }
  return std::nullopt;
}

std::optional<RV> Interp::evalUnary(const Expr &e) {
  auto a = eval(*e.args[0]);
  if (!a)
    return std::nullopt;
  if (!a->hasValue)
    return fail<RV>(e.loc, "'" + e.op + "' needs an operand with a value");
  if (a->literal && e.op == "-") {
    a->li = static_cast<int64_t>(0 - static_cast<uint64_t>(a->li));
    a->lf = -a->lf;
    a->loc = e.loc;
    return a;
  }
  auto v = materializeDefault(*a);
  if (!v)
    return std::nullopt;
  RV r;
  r.loc = e.loc;
  if (e.op == "-") {
    if (!requireArithmetic(*v, e.loc, "-", true, false))
      return std::nullopt;
    for (size_t i = 0; i < v->size(); ++i) {
      if (v->kind == Kind::F32)
        v->e[i].f = -v->e[i].f;
      else {
        v->e[i].i = num::wrap(0 - static_cast<uint64_t>(v->e[i].i), v->kind);
        if (v->t[i] > 0)
          v->t[i] = kInf;
      }
    }
    if (!step(static_cast<int64_t>(v->size())))
      return std::nullopt;
    r.v = std::move(*v);
    return r;
  }
  if (e.op == "!" && v->kind != Kind::I1)
    return fail<RV>(e.loc, "'!' needs an i1 (boolean) operand, got " + typeStr(*v));
  if (num::isFloat(v->kind))
    return fail<RV>(e.loc, "'" + e.op + "' needs an integer or boolean operand");
  for (size_t i = 0; i < v->size(); ++i) {
    v->e[i].i = num::wrap(~static_cast<uint64_t>(v->e[i].i), v->kind);
    if (v->t[i] > 0)
      v->t[i] = kInf;
  }
  if (!step(static_cast<int64_t>(v->size())))
    return std::nullopt;
  r.v = std::move(*v);
  return r;
}

/// `+ - * /` and min/max of two literals stay literals (docs/dsl.md 5). Integer
/// literals are exact integers: their arithmetic wraps in i64 (the kind an
/// integer literal takes by default) and x / 0 = 0.
/// silent: float literal arithmetic. The value is computed in double (a
/// literal is a number, not an f32); where f32 arithmetic on the literals
/// rounded to f32 gives another f32 value, the difference becomes the
/// literal's uncertainty (`ltol`), so both readings are accepted.
std::optional<RV> Interp::binaryLiterals(const std::string &op, const RV &a, const RV &b,
                                         SourceLoc loc) {
  RV r;
  r.literal = true;
  r.loc = loc;
  r.litFloat = a.litFloat || b.litFloat;
  if (!r.litFloat) {
    auto ua = static_cast<uint64_t>(a.li), ub = static_cast<uint64_t>(b.li);
    if (op == "+") r.li = static_cast<int64_t>(ua + ub);
    else if (op == "-") r.li = static_cast<int64_t>(ua - ub);
    else if (op == "*") r.li = static_cast<int64_t>(ua * ub);
    else if (op == "/") r.li = intOp("/", Kind::I64, a.li, b.li);
    else if (op == "min") r.li = std::min(a.li, b.li);
    else r.li = std::max(a.li, b.li);
    return r;
  }
  double x = a.litAsDouble(), y = b.litAsDouble();
  float fx = static_cast<float>(x), fy = static_cast<float>(y);
  double d;
  float f;
  if (op == "+") { d = x + y; f = fx + fy; }
  else if (op == "-") { d = x - y; f = fx - fy; }
  else if (op == "*") { d = x * y; f = fx * fy; }
  else if (op == "/") { d = x / y; f = fx / fy; }
  else {
    bool mn = op == "min";
    d = std::isnan(x) ? x : std::isnan(y) ? y : (x == y ? ((std::signbit(x) == mn) ? x : y)
                                                        : ((x < y) == mn ? x : y));
    f = fminmax(mn, fx, fy);
  }
  r.lf = d;
  double t = 0;
  float fd = static_cast<float>(d);
  if (!(std::isnan(fd) && std::isnan(f)) &&
      std::bit_cast<uint32_t>(fd) != std::bit_cast<uint32_t>(f))
    t = std::isfinite(fd) && std::isfinite(f) ? std::fabs(static_cast<double>(fd) - f) +
                                                    num::ulpAt(std::fabs(fd))
                                              : kInf;
  double ta = a.ltol, tb = b.ltol;
  if (ta > 0 || tb > 0) {
    if (op == "+" || op == "-") t += ta + tb;
    else if (op == "*") t += std::fabs(x) * tb + std::fabs(y) * ta + ta * tb + num::ulpAt(std::fabs(d));
    else if (op == "/") t = kInf;
    else t += std::max(ta, tb);
  }
  if (t == 0 && std::fabs(d) == 0 && op != "min" && op != "max" &&
      std::signbit(fd) != std::signbit(f))
    t = kZeroSign;
  r.ltol = t;
  return r;
}

std::optional<RV> Interp::binaryOp(const std::string &op, RV a, RV b, SourceLoc loc) {
  if (a.literal && b.literal && (op == "+" || op == "-" || op == "*" || op == "/"))
    return binaryLiterals(op, a, b, loc);
  static const std::set<std::string> cmps = {"==", "!=", "<", "<=", ">", ">="};
  static const std::set<std::string> arith = {"+", "-", "*", "/", "%", "&", "|",
                                              "^", "<<", ">>", "&&", "||"};
  auto ops = unify({&a, &b}, loc, op);
  if (!ops)
    return std::nullopt;
  Val &x = (*ops)[0], &y = (*ops)[1];
  Kind k = x.kind;
  RV r;
  r.loc = loc;
  if (cmps.count(op)) {
    Val out = makeVal(Kind::I1, x.shape);
    for (size_t i = 0; i < x.size(); ++i) {
      // Integers compare as the values of their kind (unsigned kinds hold
      // non-negative values); f16/bf16 compare as f32, exactly.
      bool c = num::isFloat(k) ? compare(op, num::toDouble(x.e[i], k), num::toDouble(y.e[i], k))
                               : intCompare(op, x.e[i].i, y.e[i].i);
      out.e[i].i = c;
      out.t[i] = x.t[i] > 0 || y.t[i] > 0 ? kInf : 0;
      if (out.t[i] > 0 && num::isFloat(k) &&
          certainCompare(num::toDouble(x.e[i], k), x.t[i], num::toDouble(y.e[i], k), y.t[i]))
        out.t[i] = 0;
    }
    if (!step(static_cast<int64_t>(x.size())))
      return std::nullopt;
    r.v = std::move(out);
    return r;
  }
  if (!arith.count(op))
    return fail<RV>(loc, "unknown operator '" + op + "'");
  bool logical = op == "&&" || op == "||";
  bool bitwise = op == "&" || op == "|" || op == "^" || op == "<<" || op == ">>" || op == "%";
  if (logical && k != Kind::I1)
    return fail<RV>(loc, "'" + op + "' needs i1 (boolean) operands, got " + typeStr(x));
  if (bitwise && num::isFloat(k) && op != "%")
    return fail<RV>(loc, "'" + op + "' needs integer operands, got " + typeStr(x));
  bool boolOk = logical || op == "&" || op == "|" || op == "^";
  if (!requireArithmetic(x, loc, op, true, boolOk))
    return std::nullopt;
  Val out = makeVal(k, x.shape);
  for (size_t i = 0; i < x.size(); ++i) {
    if (k == Kind::F32) {
      auto [v, t] = floatOp(op, x.e[i].f, y.e[i].f, x.t[i], y.t[i]);
      out.e[i].f = v;
      out.t[i] = t;
    } else {
      // silent: `&&` and `||` evaluate both operands (they are the
      // elementwise and/or of i1 values; no short circuit).
      out.e[i].i = intOp(op, k, x.e[i].i, y.e[i].i);
      out.t[i] = x.t[i] > 0 || y.t[i] > 0 ? kInf : 0;
    }
  }
  if (!step(static_cast<int64_t>(x.size())))
    return std::nullopt;
  r.v = std::move(out);
  return r;
}

std::optional<RV> Interp::evalBinary(const Expr &e) {
  // `T == f32`: comparing dtypes is a compile-time boolean.
  auto asType = [&](const Expr &x) -> std::optional<Kind> {
    if (x.kind != ExprKind::Name)
      return std::nullopt;
    if (Binding *b = lookup(x.name))
      return b->kind == Binding::K::CType ? std::optional(b->type) : std::nullopt;
    Kind k;
    if (rt::parseElemType(x.name == "bool" ? "i1" : x.name, k))
      return k;
    return std::nullopt;
  };
  auto ta = asType(*e.args[0]), tb = asType(*e.args[1]);
  if (ta || tb) {
    if (!ta || !tb || (e.op != "==" && e.op != "!="))
      return fail<RV>(e.loc, "a dtype can only be compared with another dtype");
    RV r;
    r.loc = e.loc;
    Elem x;
    x.i = (*ta == *tb) == (e.op == "==");
    r.v = scalarOf(Kind::I1, x);
    return r;
  }
  auto a = eval(*e.args[0]);
  if (!a)
    return std::nullopt;
  auto b = eval(*e.args[1]);
  if (!b)
    return std::nullopt;
  if (!a->hasValue || !b->hasValue)
    return fail<RV>(e.loc, "'" + e.op + "' needs operands with a value");
  return binaryOp(e.op, *a, *b, e.loc);
}

const TensorState *Interp::tensorArg(const Expr &e, const std::string &builtin) {
  if (e.kind == ExprKind::Name) {
    Binding *b = lookup(e.name);
    if (b && b->kind == Binding::K::Tensor)
      return &tensors_[static_cast<size_t>(b->tensor)];
    if (b && b->kind == Binding::K::Absent) {
      fail(e.loc, "parameter '" + e.name + "' is absent from this specialisation");
      return nullptr;
    }
  }
  fail(e.loc, "expected a tensor parameter as the first argument of '" + builtin + "'");
  return nullptr;
}

/// Positional and named arguments of a call.
struct CallArgs {
  std::vector<const Expr *> pos;
  std::map<std::string, const Expr *> named;
};

std::optional<RV> Interp::evalCall(const Expr &e) {
  const std::string &n = e.name;
  CallArgs ca;
  for (size_t i = 0; i < e.args.size(); ++i) {
    if (e.argNames[i].empty()) {
      if (!ca.named.empty())
        return fail<RV>(e.args[i]->loc, "positional argument after a named argument");
      ca.pos.push_back(e.args[i].get());
    } else {
      ca.named[e.argNames[i]] = e.args[i].get();
    }
  }
  auto want = [&](size_t lo, size_t hi, std::set<std::string> allowed = {}) {
    for (auto &[name, x] : ca.named)
      if (!allowed.count(name))
        return fail(x->loc, "unknown argument '" + name + "' of '" + n + "'").value_or(false);
    if (ca.pos.size() < lo || ca.pos.size() > hi)
      return fail(e.loc, "'" + n + "' takes " + std::to_string(lo) + ".." +
                             std::to_string(hi) + " positional arguments")
          .value_or(false);
    return true;
  };
  RV r;
  r.loc = e.loc;

  if (n == "program_id" || n == "num_programs") {
    if (!want(1, 1))
      return std::nullopt;
    auto axis = constInt(*ca.pos[0], "the axis of '" + n + "'");
    if (!axis)
      return std::nullopt;
    if (*axis < 0 || *axis > 2)
      return fail<RV>(e.loc, "axis of '" + n + "' must be 0, 1 or 2");
    if (inGrid_)
      return fail<RV>(e.loc, "'" + n + "' cannot be used in the grid expression");
    Elem x;
    x.i = n == "program_id" ? pid_[*axis] : grid_[*axis];
    r.v = scalarOf(Kind::I64, x);
    return r;
  }
  if (n == "dim" || n == "stride") {
    if (!want(2, 2))
      return std::nullopt;
    const TensorState *t = tensorArg(*ca.pos[0], n);
    if (!t)
      return std::nullopt;
    auto axis = constInt(*ca.pos[1], "the axis of '" + n + "'");
    if (!axis)
      return std::nullopt;
    if (*axis < 0 || *axis >= static_cast<int64_t>(t->shape.size()))
      return fail<RV>(e.loc, "axis out of range");
    Elem x;
    x.i = n == "dim" ? t->shape[*axis] : t->strides[*axis];
    r.v = scalarOf(Kind::I64, x);
    return r;
  }
  if (n == "cdiv") {
    // silent: cdiv(a, b) = (a + b - 1) / b in the operands' kind (wrapping,
    // truncating division, x / 0 = 0); the manual defines it for
    // non-negative operands only.
    if (!want(2, 2))
      return std::nullopt;
    auto a = eval(*ca.pos[0]);
    if (!a)
      return std::nullopt;
    auto b = eval(*ca.pos[1]);
    if (!b)
      return std::nullopt;
    auto sum = binaryOp("+", *a, *b, e.loc);
    if (!sum)
      return std::nullopt;
    RV one;
    one.literal = true;
    one.li = 1;
    one.loc = e.loc;
    auto sub = binaryOp("-", *sum, one, e.loc);
    if (!sub)
      return std::nullopt;
    return binaryOp("/", *sub, *b, e.loc);
  }
  if (n == "sum" || ((n == "max" || n == "min") &&
                     (e.args.size() == 1 || (e.args.size() == 2 && e.argNames[1] == "axis")))) {
    if (!want(1, 1, {"axis"}))
      return std::nullopt;
    auto v = evalValue(*ca.pos[0]);
    if (!v)
      return std::nullopt;
    if (!v->isTile())
      return fail<RV>(e.loc, "'" + n + "' reduces a tile, got " + typeStr(*v));
    if (!requireArithmetic(*v, e.loc, n, true, false))
      return std::nullopt;
    auto rank = static_cast<int64_t>(v->shape.size());
    int64_t axis = rank - 1;
    if (ca.named.count("axis")) {
      auto a = constInt(*ca.named["axis"], "the reduction axis");
      if (!a)
        return std::nullopt;
      axis = *a < 0 ? *a + rank : *a;
    } else if (rank != 1) {
      return fail<RV>(e.loc, "'" + n + "' of a rank-" + std::to_string(rank) +
                                 " tile needs 'axis = ...'");
    }
    if (axis < 0 || axis >= rank)
      return fail<RV>(e.loc, "reduction axis out of range");
    return evalReduce(e, n, std::move(*v), axis);
  }
  if (n == "min" || n == "max") {
    if (!want(2, 2))
      return std::nullopt;
    auto a = eval(*ca.pos[0]);
    if (!a)
      return std::nullopt;
    auto b = eval(*ca.pos[1]);
    if (!b)
      return std::nullopt;
    if (a->literal && b->literal)
      return binaryLiterals(n, *a, *b, e.loc);
    auto ops = unify({&*a, &*b}, e.loc, n);
    if (!ops || !requireArithmetic((*ops)[0], e.loc, n, true, false))
      return std::nullopt;
    Val &x = (*ops)[0], &y = (*ops)[1];
    Val out = makeVal(x.kind, x.shape);
    for (size_t i = 0; i < x.size(); ++i) {
      if (x.kind == Kind::F32) {
        auto [v, t] = floatOp(n, x.e[i].f, y.e[i].f, x.t[i], y.t[i]);
        out.e[i].f = v;
        out.t[i] = t;
      } else {
        out.e[i].i = intOp(n, x.kind, x.e[i].i, y.e[i].i);
        out.t[i] = x.t[i] > 0 || y.t[i] > 0 ? kInf : 0;
      }
    }
    r.v = std::move(out);
    return r;
  }
  if (n == "pow") {
    if (!want(2, 2))
      return std::nullopt;
    auto a = eval(*ca.pos[0]);
    if (!a)
      return std::nullopt;
    auto b = eval(*ca.pos[1]);
    if (!b)
      return std::nullopt;
    if (a->literal && b->literal) { // pow is f32 only: two literals are f32
      a->lf = a->litAsDouble();
      a->litFloat = true;
    }
    auto ops = unify({&*a, &*b}, e.loc, n);
    if (!ops || !requireArithmetic((*ops)[0], e.loc, n, false, false))
      return std::nullopt;
    Val &x = (*ops)[0], &y = (*ops)[1];
    Val out = makeVal(Kind::F32, x.shape);
    for (size_t i = 0; i < x.size(); ++i) {
      float xf = x.e[i].f, yf = y.e[i].f;
      num::MathResult m = num::mathPow(xf, yf);
      out.e[i].f = canonNaN(m.value);
      double t = m.tol;
      double tx = x.t[i], ty = y.t[i];
      if (tx > 0 || ty > 0) {
        // Monotone in each operand for x > 0: the corners bound the spread.
        if (!(xf > 0) || inexactIn(xf, tx) || inexactIn(yf, ty) || xf - tx <= 0) {
          t = kInf;
        } else {
          double d = std::pow(double(xf), double(yf)), spread = 0;
          for (double cx : {xf - tx, xf + tx})
            for (double cy : {yf - ty, yf + ty})
              spread = std::max(spread, std::fabs(std::pow(cx, cy) - d));
          t = finish(m.value, spread * (1 + 1e-12) + t, true);
        }
      }
      out.t[i] = t;
    }
    if (!step(static_cast<int64_t>(x.size())))
      return std::nullopt;
    r.v = std::move(out);
    return r;
  }
  static const std::map<std::string, bool> unary = {
      {"abs", true},   {"exp", false},  {"log", false},  {"sqrt", false},
      {"rsqrt", false}, {"floor", false}, {"ceil", false}, {"round", true},
      {"exp2", false}, {"log2", false}, {"tanh", false}, {"sigmoid", false},
      {"erf", false},  {"sin", false},  {"cos", false}};
  if (auto u = unary.find(n); u != unary.end()) {
    if (!want(1, 1))
      return std::nullopt;
    auto a = eval(*ca.pos[0]);
    if (!a)
      return std::nullopt;
    if (!a->hasValue)
      return fail<RV>(e.loc, "'" + n + "' needs an operand with a value");
    auto v = a->literal ? materialize(*a, u->second && !a->litFloat ? Kind::I64 : Kind::F32)
                        : std::optional<Val>(a->v);
    if (!v || !requireArithmetic(*v, e.loc, n, u->second, false))
      return std::nullopt;
    return evalMath(e, n, std::move(*v));
  }
  if (n == "fma" || n == "select") {
    if (!want(3, 3))
      return std::nullopt;
    std::vector<RV> vs;
    for (const Expr *x : ca.pos) {
      auto v = eval(*x);
      if (!v)
        return std::nullopt;
      if (!v->hasValue)
        return fail<RV>(x->loc, "argument has no value");
      vs.push_back(*v);
    }
    if (n == "fma") {
      auto ops = unify({&vs[0], &vs[1], &vs[2]}, e.loc, n);
      if (!ops || !requireArithmetic((*ops)[0], e.loc, n, false, false))
        return std::nullopt;
      Val &a = (*ops)[0], &b = (*ops)[1], &c = (*ops)[2];
      Val out = makeVal(Kind::F32, a.shape);
      for (size_t i = 0; i < a.size(); ++i) {
        float x = a.e[i].f, y = b.e[i].f, z = c.e[i].f;
        float res = canonNaN(std::fma(x, y, z)); // one rounding (docs/dsl.md 6: fused)
        out.e[i].f = res;
        double tx = a.t[i], ty = b.t[i], tz = c.t[i];
        bool inexact = tx > 0 || ty > 0 || tz > 0;
        if (inexact && (inexactIn(x, tx) || inexactIn(y, ty) || inexactIn(z, tz)))
          out.t[i] = kInf;
        else
          out.t[i] = finish(res, std::fabs(x) * ty + std::fabs(y) * tx + tx * ty + tz, inexact);
      }
      if (!step(static_cast<int64_t>(a.size())))
        return std::nullopt;
      r.v = std::move(out);
      return r;
    }
    auto c = materializeDefault(vs[0]);
    if (!c)
      return std::nullopt;
    if (c->kind != Kind::I1)
      return fail<RV>(ca.pos[0]->loc, "the condition of 'select' must be i1, got " +
                                          typeStr(*c));
    auto ops = unify({&vs[1], &vs[2]}, e.loc, n);
    if (!ops)
      return std::nullopt;
    Shape shape;
    bool tile = false;
    for (const Val *v : {&*c, &(*ops)[0]})
      if (v->isTile()) {
        if (!tile) {
          shape = v->shape;
          tile = true;
        } else {
          auto s = broadcastShape(shape, v->shape);
          if (!s)
            return fail<RV>(e.loc, "incompatible tile shapes in 'select'");
          shape = *s;
        }
      }
    Val cc = tile ? broadcast(*c, shape) : *c;
    Val a = tile ? broadcast((*ops)[0], shape) : (*ops)[0];
    Val b = tile ? broadcast((*ops)[1], shape) : (*ops)[1];
    Val out = makeVal(a.kind, a.shape);
    for (size_t i = 0; i < a.size(); ++i) {
      bool take = cc.e[i].i != 0;
      out.e[i] = take ? a.e[i] : b.e[i];
      out.t[i] = cc.t[i] > 0 ? kInf : take ? a.t[i] : b.t[i];
    }
    if (!step(static_cast<int64_t>(a.size())))
      return std::nullopt;
    r.v = std::move(out);
    return r;
  }
  if (n == "cast" || n == "bitcast") {
    if (!e.typeArg)
      return fail<RV>(e.loc, "'" + n + "' needs a type argument");
    if (!want(1, 1))
      return std::nullopt;
    auto to = resolveScalar(*e.typeArg);
    if (!to)
      return std::nullopt;
    if (e.typeArg->isTile)
      return fail<RV>(e.loc, "the type argument of '" + n + "' is an element type");
    auto a = eval(*ca.pos[0]);
    if (!a)
      return std::nullopt;
    if (!a->hasValue)
      return fail<RV>(e.loc, "'" + n + "' needs an operand with a value");
    // A literal whose floatness matches the target takes the target's kind
    // directly (cast<i32>(3000000000) wraps like any i32 constant).
    auto v = a->literal ? (n == "cast" && num::isFloat(*to) == a->litFloat
                               ? materialize(*a, *to)
                               : materializeDefault(*a))
                        : std::optional<Val>(a->v);
    if (!v)
      return std::nullopt;
    if (n == "bitcast" && num::bitWidth(*to) != num::bitWidth(v->kind))
      return fail<RV>(e.loc, "bitcast between kinds of different widths");
    if (v->kind == *to) {
      r.v = std::move(*v);
      return r;
    }
    Val out = makeVal(*to, v->shape);
    for (size_t i = 0; i < v->size(); ++i) {
      double t = v->t[i];
      if (n == "bitcast") {
        out.e[i] = num::bitcast(v->e[i], v->kind, *to);
        out.t[i] = t > 0 ? kInf : 0;
        continue;
      }
      out.e[i] = num::cast(v->e[i], v->kind, *to);
      if (t == 0) {
        out.t[i] = 0;
      } else if (!num::isFloat(*to) || !num::isFloat(v->kind)) {
        out.t[i] = kInf; // a discontinuous conversion (to or from an integer)
      } else {
        double x = num::toDouble(v->e[i], v->kind), y = num::toDouble(out.e[i], *to);
        if (inexactIn(x, t) || !std::isfinite(y) || std::fabs(x) + t >= num::maxFinite(*to))
          out.t[i] = kInf;
        else
          out.t[i] = t + num::ulpAt(std::fabs(x) + t, *to);
      }
    }
    if (!step(static_cast<int64_t>(v->size())))
      return std::nullopt;
    r.v = std::move(out);
    return r;
  }
  if (n == "full" || n == "zeros" || n == "iota") {
    if (!e.typeArg)
      return fail<RV>(e.loc, "'" + n + "' needs an element type");
    if (!want(n == "zeros" ? 1 : 2, n == "zeros" ? 1 : 2))
      return std::nullopt;
    auto elem = resolveScalar(*e.typeArg);
    if (!elem)
      return std::nullopt;
    auto shape = constShape(*ca.pos[0], "'" + n + "'");
    if (!shape)
      return std::nullopt;
    if (!step(count(*shape)))
      return std::nullopt;
    if (n == "iota") {
      if (!num::isInteger(*elem))
        return fail<RV>(e.loc, "'iota' needs an integer element type");
      auto axis = constInt(*ca.pos[1], "the axis of 'iota'");
      if (!axis)
        return std::nullopt;
      if (*axis < 0 || *axis >= static_cast<int64_t>(shape->size()))
        return fail<RV>(e.loc, "iota axis out of range");
      Val out = makeVal(*elem, *shape);
      std::vector<int64_t> idx;
      for (size_t i = 0; i < out.size(); ++i) {
        unravel(static_cast<int64_t>(i), *shape, idx);
        // silent: an index past the kind's range wraps.
        out.e[i].i = num::wrap(static_cast<uint64_t>(idx[*axis]), *elem);
      }
      r.v = std::move(out);
      return r;
    }
    RV fill;
    fill.literal = true;
    fill.loc = e.loc;
    if (n == "full") {
      auto f = eval(*ca.pos[1]);
      if (!f)
        return std::nullopt;
      if (!f->hasValue)
        return fail<RV>(e.loc, "fill value has no value");
      fill = *f;
    }
    auto s = fill.literal ? materialize(fill, *elem) : std::optional<Val>(fill.v);
    if (!s)
      return std::nullopt;
    if (s->isTile() || s->kind != *elem)
      return fail<RV>(e.loc, "fill value of type " + typeStr(*s) +
                                 " does not match element type " + num::name(*elem));
    r.v = broadcast(*s, *shape);
    return r;
  }
  if (n == "expand_dims" || n == "broadcast_to" || n == "reshape" || n == "transpose") {
    if (!want(n == "transpose" ? 1 : 2, n == "transpose" ? 1 : 2))
      return std::nullopt;
    auto v = evalValue(*ca.pos[0]);
    if (!v)
      return std::nullopt;
    if (!v->isTile())
      return fail<RV>(e.loc, "'" + n + "' needs a tile, got " + typeStr(*v));
    if (!step(static_cast<int64_t>(v->size())))
      return std::nullopt;
    if (n == "transpose") {
      if (v->shape.size() != 2)
        return fail<RV>(e.loc, "'transpose' needs a rank-2 tile");
      int64_t R = v->shape[0], C = v->shape[1];
      Val out = makeVal(v->kind, {C, R});
      for (int64_t i = 0; i < R; ++i)
        for (int64_t j = 0; j < C; ++j) {
          out.e[j * R + i] = v->e[i * C + j];
          out.t[j * R + i] = v->t[i * C + j];
        }
      r.v = std::move(out);
      return r;
    }
    if (n == "expand_dims") {
      auto axis = constInt(*ca.pos[1], "the axis of 'expand_dims'");
      if (!axis)
        return std::nullopt;
      auto rank = static_cast<int64_t>(v->shape.size());
      if (*axis < 0 || *axis > rank || rank >= 4)
        return fail<RV>(e.loc, "expand_dims axis out of range");
      v->shape.insert(v->shape.begin() + *axis, 1);
      r.v = std::move(*v);
      return r;
    }
    auto shape = constShape(*ca.pos[1], "'" + n + "'");
    if (!shape)
      return std::nullopt;
    if (n == "reshape") {
      if (count(*shape) != static_cast<int64_t>(v->size()))
        return fail<RV>(e.loc, "reshape to another element count");
      v->shape = *shape; // row-major: the elements keep their order
      r.v = std::move(*v);
      return r;
    }
    auto s = broadcastShape(v->shape, *shape);
    if (!s || *s != *shape)
      return fail<RV>(e.loc, "cannot broadcast " + typeStr(*v) + " to " + shapeStr(*shape));
    if (!step(count(*shape)))
      return std::nullopt;
    r.v = broadcast(*v, *shape);
    return r;
  }
  if (n == "mma" || n == "dot")
    return evalMma(e);
  if (n == "load" || n == "store" || n == "gather" || n == "scatter" || n == "prefetch")
    return evalMemory(e);
  return fail<RV>(e.loc, "unknown builtin '" + n + "'");
}

std::optional<RV> Interp::evalMath(const Expr &e, const std::string &n, Val v) {
  RV r;
  r.loc = e.loc;
  if (!step(static_cast<int64_t>(v.size())))
    return std::nullopt;
  if (v.kind != Kind::F32) { // integers: abs and round
    for (size_t i = 0; i < v.size(); ++i) {
      if (n == "abs" && num::isSigned(v.kind) && v.e[i].i < 0)
        v.e[i].i = num::wrap(0 - static_cast<uint64_t>(v.e[i].i), v.kind); // INT_MIN stays
      if (v.t[i] > 0)
        v.t[i] = kInf;
    }
    r.v = std::move(v);
    return r;
  }
  for (size_t i = 0; i < v.size(); ++i) {
    float x = v.e[i].f;
    double t = v.t[i];
    float res;
    double tol = 0;
    if (n == "abs" || n == "floor" || n == "ceil" || n == "round") {
      res = n == "abs"     ? std::fabs(x)
            : n == "floor" ? std::floor(x)
            : n == "ceil"  ? std::ceil(x)
                           : std::nearbyint(x); // half to even (default rounding mode)
      if (t > 0)
        tol = n == "abs" && !inexactIn(x, t) ? t : kInf; // floor & co. jump
    } else {
      num::MathResult m = num::math(n, x);
      res = canonNaN(m.value);
      tol = m.tol;
      if (t > 0) {
        double spread;
        if (inexactIn(x, t) || std::isnan(res)) {
          spread = kInf;
        } else if (n == "sin" || n == "cos") {
          spread = std::min(t, 2.0); // 1-Lipschitz
        } else if ((n == "log" || n == "log2" || n == "sqrt" || n == "rsqrt") && x - t <= 0) {
          spread = kInf; // may reach zero or a negative input
        } else {
          spread = monotoneSpread([&](double y) { return num::mathExact(n, y); }, x, t);
        }
        // The compiled result at the perturbed input errs by the function's
        // bound there: at most the bound at |result| + spread.
        double own = n == "sqrt" || n == "rsqrt" ? 2 * num::ulpAt(std::fabs(res) + spread)
                                                 : tol + 2.5 * num::ulpAt(std::fabs(res) + spread);
        tol = finish(res, spread + own, true, 0);
      }
    }
    v.e[i].f = res;
    v.t[i] = tol;
  }
  r.v = std::move(v);
  return r;
}

std::optional<RV> Interp::evalReduce(const Expr &e, const std::string &n, Val v,
                                     int64_t axis) {
  Shape outShape = v.shape;
  outShape.erase(outShape.begin() + axis);
  int64_t len = v.shape[axis], inner = 1;
  for (size_t d = static_cast<size_t>(axis) + 1; d < v.shape.size(); ++d)
    inner *= v.shape[d];
  int64_t outer = static_cast<int64_t>(v.size()) / (len * inner);
  Val out = makeVal(v.kind, outShape);
  if (!step(static_cast<int64_t>(v.size())))
    return std::nullopt;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t in = 0; in < inner; ++in) {
      size_t dst = static_cast<size_t>(o * inner + in);
      auto at = [&](int64_t k) { return static_cast<size_t>((o * len + k) * inner + in); };
      bool inexact = false;
      double tsum = 0, tmax = 0;
      for (int64_t k = 0; k < len; ++k) {
        inexact |= v.t[at(k)] > 0;
        tsum += v.t[at(k)];
        tmax = std::max(tmax, v.t[at(k)]);
      }
      if (v.kind != Kind::F32) {
        int64_t acc = n == "sum" ? 0 : v.e[at(0)].i;
        for (int64_t k = n == "sum" ? 0 : 1; k < len; ++k)
          acc = intOp(n == "sum" ? "+" : n, v.kind, acc, v.e[at(k)].i);
        out.e[dst].i = acc;
        out.t[dst] = inexact ? kInf : 0;
        continue;
      }
      if (n != "sum") {
        // Exact: max/min do not round, and with NaN propagating and -0
        // below +0 their order does not matter.
        float acc = v.e[at(0)].f;
        for (int64_t k = 1; k < len; ++k)
          acc = fminmax(n == "min", acc, v.e[at(k)].f);
        acc = canonNaN(acc);
        out.e[dst].f = acc;
        out.t[dst] = !inexact ? 0 : std::isfinite(acc) ? tmax : kInf;
        continue;
      }
      // docs/dsl.md 8.6: a fixed reassociation. The reference is the exact
      // sum (double holds it to far below f32's precision) rounded once; any
      // order of f32 additions lies within (h + 1) u sum|x| of the exact sum
      // for a tree of height h <= len + 2.
      double exact = 0, mag = 0;
      bool special = false;
      for (int64_t k = 0; k < len; ++k) {
        float x = v.e[at(k)].f;
        exact += x;
        if (std::isfinite(x))
          mag += std::fabs(x);
        else
          special = true;
      }
      float res = canonNaN(static_cast<float>(exact));
      out.e[dst].f = res;
      double t;
      if (special) {
        // A NaN or an infinity decides the result whatever the order, unless
        // finite partial sums may overflow on the way.
        t = mag >= FLT_MAX / 2 ? kInf : 0;
      } else if (mag >= FLT_MAX / 2) {
        t = kInf;
      } else {
        double h = static_cast<double>(len) + 8;
        t = h * std::ldexp(1.0, -24) * mag * 1.001 + h * std::ldexp(1.0, -149) +
            num::ulpAt(std::fabs(res));
        if (mag == 0)
          t = kZeroSign; // -0 or +0
      }
      if (inexact)
        t = special ? kInf : finish(res, t + tsum, true);
      out.t[dst] = t;
    }
  RV r;
  r.loc = e.loc;
  r.v = std::move(out);
  return r;
}

std::optional<RV> Interp::evalMma(const Expr &e) {
  const std::string &n = e.name;
  size_t want = n == "mma" ? 3 : 2;
  if (e.args.size() != want)
    return fail<RV>(e.loc, "'" + n + "' takes " + std::to_string(want) + " arguments");
  for (size_t i = 0; i < e.args.size(); ++i)
    if (!e.argNames[i].empty())
      return fail<RV>(e.loc, "unknown argument '" + e.argNames[i] + "' of '" + n + "'");
  Val ops[2];
  for (int i = 0; i < 2; ++i) {
    auto v = evalValue(*e.args[i]);
    if (!v)
      return std::nullopt;
    if (!v->isTile() || v->shape.size() != 2)
      return fail<RV>(e.args[i]->loc, "operand of '" + n + "' must be a rank-2 tile");
    if (v->kind != Kind::F32 && v->kind != Kind::F16 && v->kind != Kind::BF16 &&
        v->kind != Kind::I8)
      return fail<RV>(e.args[i]->loc, "operand of '" + n + "' must be f32, f16, bf16 or i8");
    ops[i] = std::move(*v);
  }
  int64_t M = ops[0].shape[0], K = ops[0].shape[1], N = ops[1].shape[1];
  if (ops[1].shape[0] != K)
    return fail<RV>(e.loc, "inner dimensions of '" + n + "' do not match");
  Val acc = makeVal(Kind::F32, {M, N});
  if (n == "mma") {
    auto a = eval(*e.args[2]);
    if (!a)
      return std::nullopt;
    if (!a->hasValue)
      return fail<RV>(e.loc, "accumulator has no value");
    auto v = a->literal ? materialize(*a, Kind::F32) : std::optional<Val>(a->v);
    if (!v)
      return std::nullopt;
    if (!v->isTile() && v->kind == Kind::F32)
      *v = broadcast(*v, {M, N});
    if (v->kind != Kind::F32 || v->shape != Shape{M, N})
      return fail<RV>(e.loc, "accumulator of 'mma' must be tile<f32, " + std::to_string(M) +
                                 ", " + std::to_string(N) + ">");
    acc = std::move(*v);
  }
  if (!step(M * N * K))
    return std::nullopt;
  // docs/dsl.md 8.7: products accumulated in f32 in an order that varies by
  // form; bf16 pair forms read bf16 subnormals as zero (and flush their
  // subnormal sums). The reference is the exact sum rounded once.
  bool pairs = ops[0].kind == Kind::BF16 && ops[1].kind == Kind::BF16;
  auto isSub = [](const Val &v, size_t i) {
    return v.kind == Kind::BF16 && (v.e[i].i & 0x7f80) == 0 && (v.e[i].i & 0x7f) != 0;
  };
  Val out = makeVal(Kind::F32, {M, N});
  double u = std::ldexp(1.0, -24), h = static_cast<double>(K) + 8;
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      size_t o = static_cast<size_t>(i * N + j);
      double c = acc.e[o].f;
      double exact = c, mag = std::isfinite(c) ? std::fabs(c) : 0, dropped = 0, prop = acc.t[o];
      bool special = !std::isfinite(c), inexact = acc.t[o] > 0, subMeetsSpecial = false;
      for (int64_t k = 0; k < K; ++k) {
        size_t ia = static_cast<size_t>(i * K + k), ib = static_cast<size_t>(k * N + j);
        double x = num::toDouble(ops[0].e[ia], ops[0].kind);
        double y = num::toDouble(ops[1].e[ib], ops[1].kind);
        double p = x * y; // exact: two f32 significands fit in a double's
        exact += p;
        if (std::isfinite(p))
          mag += std::fabs(p);
        else
          special = true;
        double ta = ops[0].t[ia], tb = ops[1].t[ib];
        if (ta > 0 || tb > 0) {
          inexact = true;
          prop += (inexactIn(x, ta) || inexactIn(y, tb))
                      ? kInf
                      : std::fabs(x) * tb + std::fabs(y) * ta + ta * tb;
        }
        if (pairs && (isSub(ops[0], ia) || isSub(ops[1], ib))) {
          dropped += std::isfinite(p) ? std::fabs(p) : 0;
          subMeetsSpecial |= !std::isfinite(x) || !std::isfinite(y);
        }
      }
      float res = canonNaN(static_cast<float>(exact));
      out.e[o].f = res;
      double t;
      if (special)
        t = mag >= FLT_MAX / 2 || subMeetsSpecial ? kInf : 0;
      else if (mag >= FLT_MAX / 2)
        t = kInf;
      else {
        t = h * u * mag * 1.001 + h * std::ldexp(1.0, pairs ? -126 : -149) + dropped +
            num::ulpAt(std::fabs(res));
        if (mag == 0 && dropped == 0)
          t = kZeroSign; // -0 or +0
      }
      if (inexact)
        t = special ? kInf : finish(res, t + prop, true);
      out.t[o] = t;
    }
  RV r;
  r.loc = e.loc;
  r.v = std::move(out);
  return r;
}

//===----------------------------------------------------------------------===//
// Memory
//===----------------------------------------------------------------------===//

Elem Interp::readElem(const TensorState &t, int64_t s) const {
  const uint8_t *p = t.arg->storage.data() + s * elemBytes(t.kind);
  Elem x;
  switch (t.kind) {
  case Kind::I1: x.i = *p != 0; break; // silent: any non-zero byte is true
  case Kind::I8: x.i = static_cast<int8_t>(*p); break;
  case Kind::U8: x.i = *p; break;
  case Kind::I16: { int16_t v; std::memcpy(&v, p, 2); x.i = v; break; }
  case Kind::U16: case Kind::F16: case Kind::BF16: {
    uint16_t v; std::memcpy(&v, p, 2); x.i = v; break;
  }
  case Kind::I32: { int32_t v; std::memcpy(&v, p, 4); x.i = v; break; }
  case Kind::U32: { uint32_t v; std::memcpy(&v, p, 4); x.i = v; break; }
  case Kind::I64: std::memcpy(&x.i, p, 8); break;
  case Kind::F32: std::memcpy(&x.f, p, 4); break;
  }
  return x;
}

void Interp::writeElem(TensorState &t, int64_t s, const Elem &x) {
  uint8_t *p = t.arg->storage.data() + s * elemBytes(t.kind);
  switch (t.kind) {
  case Kind::F32: std::memcpy(p, &x.f, 4); break;
  default: {
    auto v = static_cast<uint64_t>(x.i);
    std::memcpy(p, &v, elemBytes(t.kind)); // little-endian: the low bytes
  }
  }
}

void Interp::poisonTensor(TensorState &t) {
  std::vector<int64_t> idx;
  int64_t n = count(t.shape);
  for (int64_t i = 0; i < n; ++i) {
    unravel(i, t.shape, idx);
    (*t.tol)[static_cast<size_t>(storageIndex(t, idx))] = kInf;
  }
  unsure();
}

std::optional<RV> Interp::evalScalarLoad(const Expr &e) {
  Binding *b = lookup(e.name);
  if (!b || b->kind != Binding::K::Tensor)
    return fail<RV>(e.loc, "'" + e.name + "' is not a tensor and cannot be indexed");
  TensorState &t = tensors_[static_cast<size_t>(b->tensor)];
  if (e.args.size() != t.shape.size())
    return fail<RV>(e.loc, "tensor '" + e.name + "' indexed with the wrong rank");
  std::vector<int64_t> idx;
  bool uncertain = false;
  for (size_t i = 0; i < e.args.size(); ++i) {
    if (!e.argNames[i].empty())
      return fail<RV>(e.loc, "unexpected named argument in tensor index");
    auto r = eval(*e.args[i]);
    if (!r)
      return std::nullopt;
    auto v = toIndex(*r, "tensor index");
    if (!v)
      return std::nullopt;
    idx.push_back(v->e[0].i);
    uncertain |= v->t[0] > 0;
  }
  if (!step(1))
    return std::nullopt;
  RV r;
  r.loc = e.loc;
  r.v = makeVal(t.kind, {});
  if (uncertain) {
    r.v.t[0] = kInf;
    unsure();
    return r;
  }
  for (size_t d = 0; d < idx.size(); ++d)
    if (idx[d] < 0 || idx[d] >= t.shape[d]) {
      violation(e.loc, "load_scalar of " + t.name, static_cast<int64_t>(d), idx[d], 1,
                t.shape[d]);
      return r; // out of bounds reads 0
    }
  int64_t s = storageIndex(t, idx);
  r.v.e[0] = readElem(t, s);
  r.v.t[0] = (*t.tol)[static_cast<size_t>(s)];
  return r;
}

std::optional<RV> Interp::evalMemory(const Expr &e) {
  const std::string &n = e.name;
  CallArgs ca;
  for (size_t i = 0; i < e.args.size(); ++i) {
    if (e.argNames[i].empty())
      ca.pos.push_back(e.args[i].get());
    else
      ca.named[e.argNames[i]] = e.args[i].get();
  }
  bool isLoad = n == "load" || n == "gather";
  bool indexed = n == "gather" || n == "scatter";
  std::set<std::string> allowed = {"mask"};
  if (isLoad)
    allowed.insert("other");
  if (n == "store")
    allowed.insert("stream");
  if (n == "load")
    allowed.insert("cached");
  if (n == "prefetch")
    allowed = {"spread"};
  for (auto &[name, x] : ca.named)
    if (!allowed.count(name))
      return fail<RV>(x->loc, "unknown argument '" + name + "' of '" + n + "'");
  size_t npos = n == "gather" ? 2 : 3;
  if (ca.pos.size() != npos)
    return fail<RV>(e.loc, "'" + n + "' takes " + std::to_string(npos) + " positional arguments");
  const TensorState *tc = tensorArg(*ca.pos[0], n);
  if (!tc)
    return std::nullopt;
  TensorState &t = tensors_[static_cast<size_t>(tc - tensors_.data())];
  const size_t rank = t.shape.size();
  const Expr *list = ca.pos[1];
  if (list->kind != ExprKind::List || list->args.size() != rank)
    return fail<RV>(list->loc, "'" + n + "' on tensor '" + t.name + "' needs " +
                                   std::to_string(rank) + " offsets or index tiles");
  Shape shape;
  std::optional<Val> value;
  if (n == "load" || n == "prefetch") {
    auto s = constShape(*ca.pos[2], "'" + n + "'");
    if (!s)
      return std::nullopt;
    shape = *s;
    if (shape.size() > rank)
      return fail<RV>(e.loc, n + " of a tile of higher rank than its tensor");
  }
  if (n == "store" || n == "scatter") {
    value = evalValue(*ca.pos[2]);
    if (!value)
      return std::nullopt;
    if (!value->isTile())
      return fail<RV>(e.loc, "'" + n + "' needs a tile value, got " + typeStr(*value));
    if (value->kind != t.kind)
      return fail<RV>(e.loc, "'" + n + "' of a " + typeStr(*value) + " into tensor '" + t.name +
                                 "' of " + num::name(t.kind));
    shape = value->shape;
    if (n == "store" && shape.size() > rank)
      return fail<RV>(e.loc, "store of a tile of higher rank than its tensor");
  }
  std::vector<int64_t> offsets;
  std::vector<Val> idx;
  bool uncertain = false;
  if (!indexed) {
    for (const auto &o : list->args) {
      auto r = eval(*o);
      if (!r)
        return std::nullopt;
      auto v = toIndex(*r, "offset of '" + n + "'");
      if (!v)
        return std::nullopt;
      offsets.push_back(v->e[0].i);
      uncertain |= v->t[0] > 0;
    }
  } else {
    for (const auto &o : list->args) {
      auto v = evalValue(*o);
      if (!v)
        return std::nullopt;
      if (!num::isInteger(v->kind))
        return fail<RV>(o->loc, "index of '" + n + "' must be integer, got " + typeStr(*v));
      if (v->isTile()) {
        auto s = shape.empty() ? std::optional(v->shape) : broadcastShape(shape, v->shape);
        if (!s)
          return fail<RV>(o->loc, "incompatible index tile shapes in '" + n + "'");
        shape = *s;
      }
      v->kind = Kind::I64;
      idx.push_back(std::move(*v));
    }
    if (shape.empty())
      return fail<RV>(list->loc, "'" + n + "' needs at least one index tile");
    if (value && value->shape != shape)
      return fail<RV>(e.loc, "value shape does not match the index tiles in '" + n + "'");
    for (Val &v : idx)
      v = broadcast(v, shape);
  }
  Elem other;
  if (ca.named.count("other")) {
    auto o = eval(*ca.named["other"]);
    if (!o)
      return std::nullopt;
    if (!o->literal)
      return fail<RV>(e.loc, "'other' must be a constant number");
    if (num::isFloat(t.kind)) {
      // silent: `other` takes the tensor's kind through f32, as constants do.
      other = num::floatConstant(o->litAsDouble(), t.kind);
      if (o->ltol > 0)
        return fail<RV>(e.loc, "'other' of an ambiguous value (float literal arithmetic)");
    } else if (o->litFloat) {
      if (std::isfinite(o->lf))
        return fail<RV>(e.loc, "'other' of an integer tensor must be an integer");
      other.i = 0; // silent: inf or nan as `other` of an integer tensor reads 0
    } else {
      other.i = num::wrap(static_cast<uint64_t>(o->li), t.kind);
    }
  }
  std::optional<Val> mask;
  if (ca.named.count("mask")) {
    mask = evalValue(*ca.named["mask"]);
    if (!mask)
      return std::nullopt;
    if (mask->kind != Kind::I1)
      return fail<RV>(e.loc, "mask must be i1 (boolean), got " + typeStr(*mask));
    if (mask->isTile()) {
      auto s = broadcastShape(shape, mask->shape);
      if (!s || *s != shape)
        return fail<RV>(e.loc, "mask shape does not fit the tile");
    }
    mask = broadcast(*mask, shape);
  }
  for (auto hint : {"stream", "cached", "spread"})
    if (ca.named.count(hint) && !constEval(*ca.named[hint]))
      return fail<RV>(e.loc, std::string("'") + hint + "' must be a compile-time boolean");
  RV r;
  r.loc = e.loc;
  r.hasValue = isLoad;
  if (n == "prefetch") { // changes no result and is never a violation
    r.hasValue = false;
    return r;
  }
  const int64_t elems = count(shape);
  if (!step(elems))
    return std::nullopt;
  const std::string access = n + " of " + t.name;
  std::vector<int64_t> tidx, at(rank);
  const size_t lead = rank - shape.size();

  if (!indexed) {
    if (uncertain) {
      // An offset that may differ: any element may be read or written.
      if (isLoad) {
        r.v = makeVal(t.kind, shape);
        std::fill(r.v.t.begin(), r.v.t.end(), kInf);
      } else {
        poisonTensor(t);
      }
      unsure();
      return r;
    }
    // docs/dsl.md 10: a tile access is a violation when its region misses
    // the tensor along some axis.
    for (size_t d = 0; d < rank; ++d) {
      int64_t ext = d < lead ? 1 : shape[d - lead];
      int64_t o = offsets[d];
      bool miss = d < lead ? (o < 0 || o >= t.shape[d])
                           : (o >= t.shape[d] || o + ext <= 0 || t.shape[d] == 0);
      if (miss) {
        violation(e.loc, access, static_cast<int64_t>(d), o, ext, t.shape[d]);
        break;
      }
    }
    if (isLoad)
      r.v = makeVal(t.kind, shape);
    std::map<int64_t, Elem> written; // aliased storage within this store
    for (int64_t lin = 0; lin < elems; ++lin) {
      unravel(lin, shape, tidx);
      for (size_t d = 0; d < rank; ++d)
        at[d] = offsets[d] + (d < lead ? 0 : tidx[d - lead]);
      bool on = !mask || mask->e[static_cast<size_t>(lin)].i;
      bool maskUnsure = mask && mask->t[static_cast<size_t>(lin)] > 0;
      bool in = inBounds(t, at);
      auto li = static_cast<size_t>(lin);
      if (isLoad) {
        if (in && on) {
          int64_t s = storageIndex(t, at);
          r.v.e[li] = readElem(t, s);
          r.v.t[li] = (*t.tol)[static_cast<size_t>(s)];
        } else {
          r.v.e[li] = other;
        }
        if (maskUnsure && in)
          r.v.t[li] = kInf;
        continue;
      }
      if (!in)
        continue;
      int64_t s = storageIndex(t, at);
      if (maskUnsure) {
        (*t.tol)[static_cast<size_t>(s)] = kInf;
        continue;
      }
      if (!on)
        continue;
      const Elem &x = value->e[li];
      writeElem(t, s, x);
      (*t.tol)[static_cast<size_t>(s)] = value->t[li];
      if (t.aliased) {
        // silent: two elements of one store on one storage element (a zero
        // stride): which lands last is not specified unless they agree.
        auto [it, fresh] = written.emplace(s, x);
        if (!fresh && (it->second.i != x.i ||
                       std::bit_cast<uint32_t>(it->second.f) != std::bit_cast<uint32_t>(x.f)))
          (*t.tol)[static_cast<size_t>(s)] = kInf;
      }
    }
    return r;
  }

  // gather / scatter: element by element in row-major order (later
  // scattered elements win).
  if (isLoad)
    r.v = makeVal(t.kind, shape);
  for (int64_t lin = 0; lin < elems; ++lin) {
    auto li = static_cast<size_t>(lin);
    bool on = !mask || mask->e[li].i;
    bool maskUnsure = mask && mask->t[li] > 0;
    bool idxUnsure = false;
    for (size_t d = 0; d < rank; ++d) {
      at[d] = idx[d].e[li].i;
      idxUnsure |= idx[d].t[li] > 0;
    }
    if (idxUnsure || maskUnsure) {
      unsure();
      if (isLoad) {
        r.v.e[li] = other;
        r.v.t[li] = kInf;
      } else if (idxUnsure) {
        poisonTensor(t);
      } else if (inBounds(t, at)) {
        (*t.tol)[static_cast<size_t>(storageIndex(t, at))] = kInf;
      }
      continue;
    }
    if (!on) {
      if (isLoad)
        r.v.e[li] = other;
      continue;
    }
    bool in = true;
    for (size_t d = 0; d < rank && in; ++d)
      if (at[d] < 0 || at[d] >= t.shape[d]) {
        violation(e.loc, access, static_cast<int64_t>(d), at[d], 1, t.shape[d]);
        in = false;
      }
    if (isLoad) {
      if (in) {
        int64_t s = storageIndex(t, at);
        r.v.e[li] = readElem(t, s);
        r.v.t[li] = (*t.tol)[static_cast<size_t>(s)];
      } else {
        r.v.e[li] = other;
      }
    } else if (in) {
      int64_t s = storageIndex(t, at);
      writeElem(t, s, value->e[li]);
      (*t.tol)[static_cast<size_t>(s)] = value->t[li];
    }
  }
  return r;
}

//===----------------------------------------------------------------------===//
// Statements
//===----------------------------------------------------------------------===//

bool Interp::execBlock(const std::vector<dsl::ast::StmtPtr> &stmts) {
  scopes_.emplace_back();
  for (const auto &s : stmts)
    if (!exec(*s)) {
      scopes_.pop_back();
      return false;
    }
  scopes_.pop_back();
  return true;
}

bool Interp::exec(const Stmt &s) {
  switch (s.kind) {
  case StmtKind::Let:
  case StmtKind::Var: {
    auto r = eval(*s.value);
    if (!r)
      return false;
    std::optional<Val> v;
    if (s.type) {
      auto k = resolveScalar(*s.type);
      if (!k)
        return false;
      Shape shape;
      if (s.type->isTile) {
        for (const auto &d : s.type->dims) {
          auto x = constInt(*d, "tile shape (in tile type)");
          if (!x)
            return false;
          if (*x <= 0)
            return fail(d->loc, "tile dimension must be positive").value_or(false);
          shape.push_back(*x);
        }
        if (shape.size() > 4)
          return fail(s.loc, "tile rank is at most 4").value_or(false);
      }
      v = convertForVar(*r, *k, shape, s.loc, s.name);
    } else {
      if (!r->hasValue)
        return fail(s.loc, "expression has no value").value_or(false);
      v = materializeDefault(*r);
    }
    if (!v)
      return false;
    Binding b;
    b.kind = s.kind == StmtKind::Let ? Binding::K::Value : Binding::K::Var;
    b.v = std::move(*v);
    declare(s.name, std::move(b));
    return true;
  }
  case StmtKind::Assign:
    return execAssign(s);
  case StmtKind::For:
    return execFor(s);
  case StmtKind::If:
    return execIf(s);
  case StmtKind::Expr:
    return eval(*s.value).has_value();
  }
  return false;
}

bool Interp::execAssign(const Stmt &s) {
  const Expr &target = *s.target;
  auto r = eval(*s.value);
  if (!r)
    return false;
  if (target.kind == ExprKind::Index) {
    Binding *b = lookup(target.name);
    if (!b || b->kind != Binding::K::Tensor)
      return fail(target.loc, "'" + target.name + "' is not a tensor").value_or(false);
    // `x[i] op= v` is `x[i] = x[i] op v` (docs/dsl.md 2).
    RV value = *r;
    if (s.op != "=") {
      auto cur = evalScalarLoad(target);
      if (!cur)
        return false;
      auto c = binaryOp(s.op.substr(0, 1), *cur, value, s.loc);
      if (!c)
        return false;
      value = *c;
      b = lookup(target.name);
    }
    TensorState &t = tensors_[static_cast<size_t>(b->tensor)];
    if (target.args.size() != t.shape.size())
      return fail(target.loc, "tensor '" + target.name + "' indexed with the wrong rank")
          .value_or(false);
    std::vector<int64_t> idx;
    bool uncertain = false;
    for (const auto &i : target.args) {
      auto iv = eval(*i);
      if (!iv)
        return false;
      auto v = toIndex(*iv, "tensor index");
      if (!v)
        return false;
      idx.push_back(v->e[0].i);
      uncertain |= v->t[0] > 0;
    }
    auto v = convertForVar(value, t.kind, {}, s.value->loc, target.name + "[...]");
    if (!v)
      return false;
    if (!step(1))
      return false;
    if (uncertain) {
      poisonTensor(t);
      return true;
    }
    for (size_t d = 0; d < idx.size(); ++d)
      if (idx[d] < 0 || idx[d] >= t.shape[d]) {
        violation(s.loc, "store_scalar of " + t.name, static_cast<int64_t>(d), idx[d], 1,
                  t.shape[d]);
        return true; // skipped
      }
    int64_t st = storageIndex(t, idx);
    writeElem(t, st, v->e[0]);
    (*t.tol)[static_cast<size_t>(st)] = v->t[0];
    return true;
  }
  Binding *b = lookup(target.name);
  if (!b)
    return fail(target.loc, "use of undeclared name '" + target.name + "'").value_or(false);
  if (b->kind != Binding::K::Var)
    return fail(target.loc, "cannot assign to '" + target.name +
                                "': only 'var' declarations are mutable")
        .value_or(false);
  RV value = *r;
  if (s.op != "=") {
    RV cur;
    cur.v = b->v;
    cur.loc = target.loc;
    auto c = binaryOp(s.op.substr(0, 1), cur, value, s.loc);
    if (!c)
      return false;
    value = *c;
  }
  Kind k = b->v.kind;
  Shape shape = b->v.shape;
  auto v = convertForVar(value, k, shape, s.loc, target.name);
  if (!v)
    return false;
  b = lookup(target.name); // binaryOp may not move scopes, but stay safe
  b->v = std::move(*v);
  return true;
}

bool Interp::execFor(const Stmt &s) {
  int64_t bounds[3] = {0, 0, 1};
  const Expr *exprs[3] = {s.lower.get(), s.upper.get(), s.step.get()};
  for (int i = 0; i < 3; ++i) {
    if (!exprs[i])
      continue;
    auto r = eval(*exprs[i]);
    if (!r)
      return false;
    auto v = toIndex(*r, "loop bound");
    if (!v)
      return false;
    if (v->t[0] > 0)
      return fail(s.loc, "a loop bound depends on an inexact value (not interpreted)")
          .value_or(false);
    bounds[i] = v->e[0].i;
  }
  int64_t lo = bounds[0], hi = bounds[1], st = bounds[2];
  // docs/dsl.md 8.3: a step <= 0 runs no iteration; the trip count is
  // computed without overflow.
  uint64_t trips = 0;
  if (st > 0 && lo < hi) {
    uint64_t span = static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo);
    trips = span / static_cast<uint64_t>(st) + (span % static_cast<uint64_t>(st) != 0);
  }
  for (uint64_t k = 0; k < trips; ++k) {
    if (!step(1))
      return false;
    int64_t iv = static_cast<int64_t>(static_cast<uint64_t>(lo) + k * static_cast<uint64_t>(st));
    scopes_.emplace_back();
    Binding b;
    b.kind = Binding::K::Value;
    Elem x;
    x.i = iv;
    b.v = scalarOf(Kind::I64, x);
    declare(s.name, std::move(b));
    bool ok = execBlock(s.body);
    scopes_.pop_back();
    if (!ok)
      return false;
  }
  return true;
}

bool Interp::execIf(const Stmt &s) {
  // A condition of compile-time parameters selects its branch in the front
  // end (docs/dsl.md 8.4); a runtime one is evaluated. Either way only the
  // taken branch runs.
  if (auto known = constEval(*s.cond))
    return execBlock(*known ? s.body : s.elseBody);
  if (!err_.empty())
    return false;
  auto c = evalValue(*s.cond);
  if (!c)
    return false;
  if (c->isTile() || c->kind != Kind::I1)
    return fail(s.cond->loc, "condition of 'if' must be a scalar i1, got " + typeStr(*c))
        .value_or(false);
  if (c->t[0] > 0)
    return fail(s.cond->loc, "an 'if' condition depends on an inexact value (not interpreted)")
        .value_or(false);
  return execBlock(c->e[0].i ? s.body : s.elseBody);
}

//===----------------------------------------------------------------------===//
// Setup and the grid
//===----------------------------------------------------------------------===//

bool parseIntText(std::string s, int64_t &out) {
  if (s.empty())
    return false;
  bool neg = false;
  if (s[0] == '+' || s[0] == '-') {
    neg = s[0] == '-';
    s = s.substr(1);
  }
  int base = 10;
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
    base = 16;
    s = s.substr(2);
  }
  if (s.empty())
    return false;
  unsigned __int128 v = 0;
  for (char c : s) {
    int d = std::isdigit(static_cast<unsigned char>(c)) ? c - '0'
            : base == 16 && std::isxdigit(static_cast<unsigned char>(c))
                ? std::tolower(static_cast<unsigned char>(c)) - 'a' + 10
                : -1;
    if (d < 0)
      return false;
    v = v * base + static_cast<unsigned>(d);
    if (v > (static_cast<unsigned __int128>(1) << 63))
      return false;
  }
  if (!neg && v > static_cast<unsigned __int128>(INT64_MAX))
    return false;
  out = neg ? static_cast<int64_t>(0 - static_cast<uint64_t>(v)) : static_cast<int64_t>(v);
  return true;
}

bool Interp::bindCompileParams(const std::map<std::string, std::string> &spec) {
  scopes_.emplace_back();
  std::set<std::string> known;
  for (const auto &p : k_.cparams) {
    known.insert(p.name);
    auto it = spec.find(p.name);
    std::string text;
    if (it != spec.end())
      text = it->second;
    else if (p.hasDefault)
      text = p.defaultValue;
    else
      return fail(p.loc, "compile-time parameter '" + p.name + "' has no value")
          .value_or(false);
    Binding b;
    using CK = dsl::ast::CompileParam::Kind;
    switch (p.kind) {
    case CK::Dtype: {
      Kind k;
      if (!rt::parseElemType(text == "bool" ? "i1" : text, k))
        return fail(p.loc, "'" + text + "' is not a dtype").value_or(false);
      if (!p.choices.empty() &&
          std::none_of(p.choices.begin(), p.choices.end(), [&](const std::string &c) {
            return c == text || (c == "bool" && text == "i1") || (c == "i1" && text == "bool");
          }))
        return fail(p.loc, "dtype '" + text + "' is not one of the parameter's choices")
            .value_or(false);
      b.kind = Binding::K::CType;
      b.type = k;
      break;
    }
    case CK::Int:
      b.kind = Binding::K::CInt;
      if (!parseIntText(text, b.iv))
        return fail(p.loc, "'" + text + "' is not an i64").value_or(false);
      break;
    case CK::Bool:
      b.kind = Binding::K::CBool;
      if (text == "true" || text == "1")
        b.iv = 1;
      else if (text == "false" || text == "0")
        b.iv = 0;
      else
        return fail(p.loc, "'" + text + "' is not a boolean").value_or(false);
      break;
    case CK::Enum: {
      auto at = std::find(p.choices.begin(), p.choices.end(), text);
      if (at == p.choices.end())
        return fail(p.loc, "'" + text + "' is not an enumerator of '" + p.name + "'")
            .value_or(false);
      b.kind = Binding::K::CInt;
      b.iv = at - p.choices.begin();
      for (size_t i = 0; i < p.choices.size(); ++i) {
        Binding en;
        en.kind = Binding::K::Enumerator;
        en.iv = static_cast<int64_t>(i);
        declare(p.choices[i], en);
      }
      break;
    }
    }
    declare(p.name, b);
  }
  for (const auto &[name, value] : spec)
    if (!known.count(name))
      return fail(k_.loc, "unknown compile-time parameter '" + name + "'").value_or(false);
  return true;
}

bool Interp::bindParams(std::vector<Argument> &args) {
  scopes_.emplace_back();
  // Which parameters this specialisation has.
  std::vector<bool> present;
  for (const auto &p : k_.params) {
    bool here = true;
    if (p.guard) {
      auto v = constEval(*p.guard);
      if (!v)
        return fail(p.guard->loc, "the condition of parameter '" + p.name +
                                      "' must be a compile-time constant")
            .value_or(false);
      here = *v != 0;
    }
    present.push_back(here);
  }
  size_t npresent = static_cast<size_t>(std::count(present.begin(), present.end(), true));
  bool all = args.size() == k_.params.size() && args.size() != npresent;
  if (args.size() != npresent && !all)
    return fail(k_.loc, "the kernel takes " + std::to_string(npresent) + " arguments, " +
                            std::to_string(args.size()) + " given")
        .value_or(false);
  out_.tolerance.assign(args.size(), {});
  tensors_.reserve(args.size());
  std::map<std::string, std::pair<std::string, int64_t>> sizes;
  size_t ai = 0;
  for (size_t pi = 0; pi < k_.params.size(); ++pi) {
    const auto &p = k_.params[pi];
    if (!present[pi]) {
      Binding b;
      b.kind = Binding::K::Absent;
      declare(p.name, b);
      if (all)
        ++ai;
      continue;
    }
    const size_t argIndex = ai++;
    Argument &arg = args[argIndex];
    auto elem = resolveScalar(p.elemType);
    if (!elem)
      return false;
    if (!p.isTensor) {
      auto *s = std::get_if<Scalar>(&arg);
      if (!s || s->type != *elem)
        return fail(p.loc, "argument '" + p.name + "' must be a " + num::name(*elem) +
                               " scalar")
            .value_or(false);
      Elem x;
      if (*elem == Kind::F32)
        x.f = s->f;
      else
        x.i = num::wrap(static_cast<uint64_t>(s->i), *elem);
      Binding b;
      b.kind = Binding::K::Value;
      b.v = scalarOf(*elem, x);
      declare(p.name, b);
      continue;
    }
    auto *t = std::get_if<Tensor>(&arg);
    if (!t || t->type != *elem || t->shape.size() != p.dims.size() ||
        t->strides.size() != p.dims.size())
      return fail(p.loc, "argument '" + p.name + "' must be a " + num::name(*elem) +
                             " tensor of rank " + std::to_string(p.dims.size()))
          .value_or(false);
    // Storage must hold every element.
    int64_t last = t->offset;
    bool empty = false;
    for (size_t d = 0; d < t->shape.size(); ++d) {
      if (t->shape[d] < 0 || t->strides[d] < 0)
        return fail(p.loc, "argument '" + p.name + "' has a negative size or stride")
            .value_or(false);
      empty |= t->shape[d] == 0;
      last += (t->shape[d] - 1) * t->strides[d];
    }
    int64_t held = static_cast<int64_t>(t->storage.size() / elemBytes(t->type));
    if (t->offset < 0 || (!empty && last >= held))
      return fail(p.loc, "argument '" + p.name + "': storage too small").value_or(false);
    TensorState ts;
    ts.name = p.name;
    ts.arg = t;
    ts.kind = *elem;
    ts.shape = t->shape;
    ts.strides = t->strides;
    out_.tolerance[argIndex].assign(static_cast<size_t>(held), 0.0);
    ts.tol = &out_.tolerance[argIndex];
    {
      std::set<int64_t> seen;
      std::vector<int64_t> idx;
      int64_t n = count(ts.shape);
      for (int64_t i = 0; i < n && !ts.aliased; ++i) {
        unravel(i, ts.shape, idx);
        ts.aliased = !seen.insert(storageIndex(ts, idx)).second;
      }
    }
    // Sizes: names bind, literals and integer parameters are checked (the
    // launch fails otherwise), a name used twice must agree.
    for (size_t a = 0; a < p.dims.size(); ++a) {
      const std::string &d = p.dims[a];
      if (d == "_")
        continue;
      int64_t want;
      Binding *cb = lookup(d);
      bool isConst = parseIntText(d, want) ||
                     (cb && cb->kind == Binding::K::CInt && (want = cb->iv, true));
      if (isConst) {
        if (t->shape[a] != want)
          return fail(p.loc, p.name + ": size of axis " + std::to_string(a) + " must equal " +
                                 d + " (the launch fails)")
              .value_or(false);
        continue;
      }
      auto it = sizes.find(d);
      if (it != sizes.end()) {
        if (it->second.second != t->shape[a])
          return fail(p.loc, p.name + ": size of axis " + std::to_string(a) +
                                 " must equal " + d + " (the launch fails)")
              .value_or(false);
        continue;
      }
      sizes[d] = {p.name, t->shape[a]};
      Binding b;
      b.kind = Binding::K::Size;
      Elem x;
      x.i = t->shape[a];
      b.v = scalarOf(Kind::I64, x);
      declare(d, b);
    }
    Binding b;
    b.kind = Binding::K::Tensor;
    b.tensor = static_cast<int>(tensors_.size());
    tensors_.push_back(std::move(ts));
    declare(p.name, b);
  }
  return true;
}

std::variant<Outcome, std::string> Interp::run(const std::map<std::string, std::string> &spec,
                                               std::vector<Argument> args) {
  out_.args = std::move(args);
  if (!bindCompileParams(spec) || !bindParams(out_.args))
    return err_;
  // The grid: up to three extents, negative ones launch nothing.
  if (k_.grid.empty() || k_.grid.size() > 3)
    return std::string("a grid has 1 to 3 extents");
  inGrid_ = true;
  for (size_t a = 0; a < k_.grid.size(); ++a) {
    auto r = eval(*k_.grid[a]);
    if (!r)
      return err_;
    auto v = toIndex(*r, "grid extent");
    if (!v)
      return err_;
    if (v->t[0] > 0)
      return std::string("a grid extent depends on an inexact value");
    grid_[a] = std::max<int64_t>(v->e[0].i, 0);
  }
  inGrid_ = false;
  int64_t total;
  if (__builtin_mul_overflow(grid_[0], grid_[1], &total) ||
      __builtin_mul_overflow(total, grid_[2], &total))
    return std::string("the grid has more than int64 programs");
  // Programs run in linear order, axis 0 fastest (jit/Launch.cpp numbers
  // them so; debug mode reports the lowest-numbered program's violation).
  for (int64_t i = 0; i < total; ++i) {
    if (!step(1))
      return err_;
    program_ = i;
    pid_[0] = i % grid_[0];
    pid_[1] = (i / grid_[0]) % grid_[1];
    pid_[2] = i / (grid_[0] * grid_[1]);
    if (!execBlock(k_.body))
      return err_.empty() ? std::string("the program failed") : err_;
  }
  return std::move(out_);
}

} // namespace

std::variant<Outcome, std::string>
interpret(const dsl::ast::File &file, const std::string &kernel,
          const std::map<std::string, std::string> &spec, std::vector<Argument> args,
          const Limits &limits) {
  for (const auto &k : file.kernels)
    if (k->name == kernel) {
      Interp in(*k, limits);
      return in.run(spec, std::move(args));
    }
  return std::string("no kernel '" + kernel + "' in the file");
}

} // namespace tilejit::difftest
