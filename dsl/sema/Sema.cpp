//===- Sema.cpp - Type-checks a kernel and lowers it to Tile IR -----------===//
///
/// \file
/// Resolves names and the specialisation, checks types and shapes, inserts
/// the implicit conversions of the DSL (literal adaptation, NumPy
/// broadcasting, i32 -> i64 indices), turns `var`s assigned inside `for`/`if`
/// into loop-carried values and if results, and emits Tile IR with
/// ir::Builder. Every user error is a diagnostic at the offending range; the
/// first error stops lowering of the kernel.
///
//===----------------------------------------------------------------------===//
#include "dsl/Frontend.h"
#include "dsl/ir/Builder.h"
#include "dsl/ir/ScalarSemantics.h"
#include "dsl/ir/Verifier.h"
#include "dsl/syntax/AST.h"
#include "dsl/syntax/Parser.h"

#include "llvm/Support/Error.h"
#include "llvm/Support/ErrorHandling.h"

#include <algorithm>
#include <cassert>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <map>
#include <optional>
#include <set>

namespace tilejit::dsl {

using namespace ast;
using ir::ScalarKind;
using ir::Type;
using ir::OpKind;

const std::vector<std::string> &builtinNames() {
  // Every name lowerCall lowers, sorted. A call to a name not here is
  // reported before lowering, so a builtin missing from the list fails its
  // own tests instead of missing only from the suggestions.
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v = {
        "abs",     "bitcast",      "broadcast_to", "cast",      "cdiv",
        "ceil",    "cos",          "dim",          "dot",       "erf",
        "exp",     "exp2",         "expand_dims",  "floor",     "fma",
        "full",    "gather",       "iota",         "load",      "log",
        "log2",    "max",          "min",          "mma",       "num_programs",
        "pow",     "prefetch",     "program_id",   "reshape",   "round",
        "rsqrt",   "scatter",      "select",       "sigmoid",   "sin",
        "sqrt",    "store",        "stride",       "sum",       "tanh",
        "transpose", "zeros"};
    assert(std::is_sorted(v.begin(), v.end()) && "binary-searched");
    return v;
  }();
  return names;
}

namespace {

/// A lowered expression: an IR value, or a literal whose type is decided by
/// the operand it meets (docs/dsl.md, section 5). An integer literal, and
/// arithmetic on integer literals only, is an exact i64 (wrapping as i64 does
/// at run time); a float literal is an f32, and arithmetic on literals of
/// which one is a float is f32 arithmetic (ir/ScalarSemantics.h).
struct RValue {
  ir::Value *value = nullptr;
  bool isLiteral = false;
  bool literalIsFloat = false;
  int64_t intLiteral = 0;  ///< an integer literal's value
  float floatLiteral = 0;  ///< a float literal's value
  /// The literal as an f32 (an integer converts as cast<f32> of an i64 does).
  float asFloat() const {
    return literalIsFloat ? floatLiteral
                          : ir::scalar::intToFloat(intLiteral, ScalarKind::I64);
  }
  /// Makes the literal a float literal of the same value, rounded to f32.
  void makeFloat() {
    floatLiteral = asFloat();
    literalIsFloat = true;
  }
  SourceLoc loc;
  const Type &type() const { return value->type(); }
};

struct Binding {
  enum class Kind { Value, Var, Tensor, Size, CInt, CBool, CType, Enumerator,
                    ScalarParam, Absent } kind;
  ir::Value *value = nullptr; ///< Value/Var: current value
  Type declType;              ///< Var: the fixed type
  unsigned param = 0, axis = 0;
  int64_t intValue = 0;
  ScalarKind type = ScalarKind::F32;
  std::string cparam; ///< CInt/CBool: the parameter's name
};

/// Thrown-free error propagation: every lowering function returns
/// std::optional / bool and stops at the first diagnostic.
class Sema {
public:
  Sema(const ast::Kernel &k, const Specialization &spec, DiagnosticEngine &diags)
      : k_(k), spec_(spec), diags_(diags), b_(nullptr) {}

  std::unique_ptr<ir::Kernel> run();

private:
  // Diagnostics.
  bool error(SourceLoc loc, std::string msg) {
    diags_.error(loc, std::move(msg));
    return false;
  }

  // Scopes.
  void push() { scopes_.emplace_back(); }
  void pop() { scopes_.pop_back(); }
  /// If `bnd` is a parameter absent from this specialisation, says so at
  /// `loc` and returns true.
  bool reportAbsent(const Binding *bnd, const std::string &name, SourceLoc loc) {
    if (!bnd || bnd->kind != Binding::Kind::Absent)
      return false;
    const SourceLoc &g = k_.params[bnd->param].guard->loc;
    error(loc, "parameter '" + name + "' is absent from this specialisation: the "
               "condition of its declaration (line " + std::to_string(g.line) +
               ") is false; use it only under an 'if' on that condition");
    return true;
  }
  Binding *lookup(const std::string &name) {
    for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it) {
      auto f = it->find(name);
      if (f != it->end())
        return &f->second;
    }
    return nullptr;
  }
  bool declare(const std::string &name, Binding bnd, SourceLoc loc) {
    if (scopes_.back().count(name))
      return error(loc, "redefinition of '" + name + "' in the same scope");
    scopes_.back().emplace(name, std::move(bnd));
    return true;
  }

  // Specialisation and types.
  bool bindCompileParams();
  bool bindParams();
  std::optional<ScalarKind> resolveScalar(const TypeRef &t);
  std::optional<Type> resolveType(const TypeRef &t);
  std::optional<int64_t> constEval(const Expr &e);
  /// The diagnostic for compile-time arithmetic outside int64.
  std::optional<int64_t> overflow(const Expr &e) {
    error(e.loc, "integer overflow in compile-time arithmetic (outside int64)");
    return std::nullopt;
  }
  /// Elements a tile may have: far above any budget, low enough that no
  /// size or offset computed from it overflows.
  static constexpr int64_t kMaxTileElements = int64_t(1) << 40;
  std::optional<std::vector<int64_t>> constShape(const Expr &e,
                                                 const std::string &what);
  /// One dimension of a tile shape: a positive compile-time constant.
  std::optional<int64_t> constDim(const Expr &d, const std::string &what);

  // Values.
  ir::Value *paramValue(unsigned i) {
    return inGrid_ ? kernel_->gridParamValue(i) : kernel_->paramValue(i);
  }
  /// A constant of `kind` holding the integer `v` converted as `cast` would.
  ir::Value *constantInt(SourceLoc loc, ScalarKind kind, int64_t v);
  /// A constant of float `kind` holding the f32 `v` converted as `cast` would.
  ir::Value *constantFloat(SourceLoc loc, ScalarKind kind, float v);
  ir::Value *materialize(const RValue &r, ScalarKind kind);
  ir::Value *materializeDefault(const RValue &r);
  ir::Value *splatTo(ir::Value *v, const std::vector<int64_t> &shape,
                     SourceLoc loc);
  std::optional<std::vector<int64_t>>
  broadcastShape(const std::vector<int64_t> &a, const std::vector<int64_t> &b,
                 SourceLoc loc, const std::string &op);
  ir::Value *broadcastTo(ir::Value *v, const std::vector<int64_t> &shape,
                         SourceLoc loc);
  bool unify(std::vector<RValue *> vals, SourceLoc loc, const std::string &op,
             std::vector<ir::Value *> &out);
  ir::Value *toIndex(const RValue &r, const std::string &what);
  ir::Value *emit(OpKind kind, SourceLoc loc, std::vector<ir::Value *> ops,
                  Type t, ir::OpAttrs attrs = {}) {
    return b_.createValue(kind, loc, std::move(ops), std::move(t),
                          std::move(attrs));
  }
  bool requireArithmetic(ir::Value *v, SourceLoc loc, const std::string &op,
                         bool allowInt, bool allowBool);

  // Expressions.
  std::optional<RValue> lower(const Expr &e);
  std::optional<RValue> lowerBinary(const Expr &e);
  std::optional<RValue> lowerUnary(const Expr &e);
  std::optional<RValue> lowerCall(const Expr &e);
  std::optional<RValue> lowerMemory(const Expr &e);
  std::optional<RValue> lowerMma(const Expr &e);
  ir::Value *lowerValue(const Expr &e) {
    auto r = lower(e);
    return r ? materializeDefault(*r) : nullptr;
  }
  std::optional<RValue> binaryOp(const std::string &op, RValue a, RValue b,
                                 SourceLoc loc);
  const Binding *tensorArg(const Expr &e, const std::string &builtin);
  ir::Value *tensorValue(const Binding &t) { return paramValue(t.param); }

  // Statements.
  bool lowerBlock(const std::vector<StmtPtr> &stmts);
  bool lowerStmt(const Stmt &s);
  bool lowerAssign(const Stmt &s);
  bool lowerFor(const Stmt &s);
  bool lowerIf(const Stmt &s);
  ir::Value *convertForVar(const RValue &r, const Type &t, SourceLoc loc,
                           const std::string &name);
  std::vector<std::string> carriedVars(const std::vector<StmtPtr> &a,
                                       const std::vector<StmtPtr> *b);
  /// Ends the current region with the current values of `carried`.
  void yieldCarried(const std::vector<std::string> &carried, SourceLoc loc);
  /// After a for/if: the carried variables now name its results.
  void bindResults(ir::Op &op, const std::vector<std::string> &carried);

  const ast::Kernel &k_;
  const Specialization &spec_;
  DiagnosticEngine &diags_;
  ir::Builder b_;
  std::unique_ptr<ir::Kernel> kernel_;
  std::vector<std::map<std::string, Binding>> scopes_;
  std::map<std::string, Binding> cparams_;
  bool inGrid_ = false;
};

std::string typeName(const Type &t) { return t.str(); }

//===----------------------------------------------------------------------===//
// Specialisation
//===----------------------------------------------------------------------===//

/// A literal size in a tensor declaration (`gm<f32>[4, N]`).
bool parseInt(const std::string &s, int64_t &out) {
  if (s.empty() || !std::isdigit(static_cast<unsigned char>(s[0])))
    return false;
  char *end = nullptr;
  errno = 0;
  long long v = std::strtoll(s.c_str(), &end, 10);
  if (*end != '\0' || errno == ERANGE)
    return false;
  out = v;
  return true;
}

/// The typed value of compile-time parameter `p` that `given` denotes: text
/// is parsed by the parameter's kind (`true`/`false` or 0/1, a decimal or 0x
/// integer, a dtype or enumerator name); a typed value must be of the
/// parameter's kind. An error (its message the sentence the user sees) says
/// why it is not one.
llvm::Expected<SpecValue> canonicalValue(const CompileParam &p, const SpecValue &given) {
  auto invalid = [](const std::string &why) -> llvm::Expected<SpecValue> {
    return llvm::createStringError(llvm::inconvertibleErrorCode(), why);
  };
  auto choices = [&] {
    std::string list;
    for (size_t i = 0; i < p.choices.size(); ++i)
      list += (i ? "|" : "") + p.choices[i];
    return list;
  };
  const bool isText = given.kind() == SpecValue::Kind::Text;
  const std::string text = given.str();
  auto wrongKind = [&](const char *expected) -> llvm::Expected<SpecValue> {
    static const char *kinds[] = {"text", "a dtype", "an integer", "a boolean",
                                  "an enumerator"};
    return invalid("'" + text + "' is " + kinds[static_cast<int>(given.kind())] + ", but '" +
                   p.name + "' takes " + expected);
  };
  switch (p.kind) {
  case CompileParam::Kind::Dtype: {
    ScalarKind k;
    if (given.kind() == SpecValue::Kind::Dtype) {
      k = given.dtype();
    } else if (!isText && given.kind() != SpecValue::Kind::Enum) {
      return wrongKind("a dtype");
    } else if (!ir::parseScalarKind(text == "bool" ? "i1" : text, k)) {
      return invalid("'" + text + "' is not a dtype (for '" + p.name +
                     "'); expected one of i1 i8 u8 i16 u16 i32 u32 i64 f16 bf16 f32");
    }
    std::string name = ir::scalarName(k);
    if (!p.choices.empty() &&
        std::find(p.choices.begin(), p.choices.end(), name) == p.choices.end() &&
        std::find(p.choices.begin(), p.choices.end(), text) == p.choices.end()) {
      return invalid("dtype " + text + " is not allowed for '" + p.name + "' (expected " +
                     choices() + ")");
    }
    return SpecValue(k);
  }
  case CompileParam::Kind::Int:
  case CompileParam::Kind::Bool: {
    if (p.kind == CompileParam::Kind::Int && given.kind() == SpecValue::Kind::Int)
      return given;
    if (p.kind == CompileParam::Kind::Bool && given.kind() == SpecValue::Kind::Bool)
      return given;
    if (!isText)
      return wrongKind(p.kind == CompileParam::Kind::Int ? "an integer" : "a boolean");
    if (p.kind == CompileParam::Kind::Bool && (text == "true" || text == "false"))
      return SpecValue(text == "true");
    // Decimal, or hexadecimal after 0x; never octal (a leading zero is
    // decimal), never partial, never saturated.
    std::string digits = text;
    bool negative = !digits.empty() && (digits[0] == '-' || digits[0] == '+');
    negative = negative && digits[0] == '-';
    if (!digits.empty() && (digits[0] == '-' || digits[0] == '+'))
      digits.erase(0, 1);
    int base = 10;
    if (digits.size() > 2 && digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X')) {
      base = 16;
      digits.erase(0, 2);
    }
    bool wellFormed = !digits.empty() && std::isalnum(static_cast<unsigned char>(digits[0]));
    const std::string number = negative ? "-" + digits : digits;
    char *end = nullptr;
    errno = 0;
    long long v = wellFormed ? std::strtoll(number.c_str(), &end, base) : 0;
    wellFormed = wellFormed && *end == '\0';
    if (p.kind == CompileParam::Kind::Bool) {
      if (!wellFormed || errno == ERANGE || (v != 0 && v != 1)) {
        return invalid("'" + text + "' is not a boolean (for '" + p.name +
                       "'); expected true or false");
      }
      return SpecValue(v != 0);
    }
    if (!wellFormed) {
      return invalid("'" + text + "' is not an integer (for '" + p.name + "')");
    }
    if (errno == ERANGE) {
      return invalid("'" + text + "' is out of range for '" + p.name +
                     "' (a 64-bit signed integer)");
    }
    return SpecValue(static_cast<int64_t>(v));
  }
  case CompileParam::Kind::Enum:
    if (!isText && given.kind() != SpecValue::Kind::Enum)
      return wrongKind("an enumerator");
    if (std::find(p.choices.begin(), p.choices.end(), text) == p.choices.end()) {
      return invalid("'" + text + "' is not an enumerator of '" + p.name + "' (expected " +
                     choices() + ")");
    }
    return SpecValue::enumerator(text);
  }
  llvm_unreachable("every compile-time parameter kind is handled");
}

/// Whether `v` is a value binding makes for `p` (its kind, and a choice of
/// its choices): a bound specialisation is used as it is when every value
/// is.
bool isBoundValueOf(const CompileParam &p, const SpecValue &v) {
  switch (p.kind) {
  case CompileParam::Kind::Dtype:
    return v.kind() == SpecValue::Kind::Dtype &&
           (p.choices.empty() || std::find(p.choices.begin(), p.choices.end(), v.str()) !=
                                     p.choices.end());
  case CompileParam::Kind::Int:
    return v.kind() == SpecValue::Kind::Int;
  case CompileParam::Kind::Bool:
    return v.kind() == SpecValue::Kind::Bool;
  case CompileParam::Kind::Enum:
    return v.kind() == SpecValue::Kind::Enum &&
           std::find(p.choices.begin(), p.choices.end(), v.text()) != p.choices.end();
  }
  return false;
}

/// "name: kind [= default]" of a compile-time parameter.
std::string describe(const CompileParam &p) {
  std::string kind;
  switch (p.kind) {
  case CompileParam::Kind::Dtype:
    for (size_t i = 0; i < p.choices.size(); ++i)
      kind += (i ? "|" : "") + p.choices[i];
    if (kind.empty())
      kind = "type";
    break;
  case CompileParam::Kind::Enum:
    for (size_t i = 0; i < p.choices.size(); ++i)
      kind += (i ? ", " : "enum(") + p.choices[i];
    kind += ")";
    break;
  case CompileParam::Kind::Int: kind = "i64"; break;
  case CompileParam::Kind::Bool: kind = "bool"; break;
  }
  return p.name + ": " + kind + (p.hasDefault ? " = " + p.defaultValue : "");
}

/// Every compile-time parameter of `k` with its typed value, sorted by
/// name; section "Specialisation" of docs/dsl.md.
std::optional<Specialization> bindValues(const ast::Kernel &k, const Specialization &spec,
                                         DiagnosticEngine &diags) {
  auto fail = [&](SourceLoc loc, std::string msg) -> std::optional<Specialization> {
    diags.error(loc, std::move(msg));
    return std::nullopt;
  };
  std::vector<std::string> names;
  std::string listing;
  for (const CompileParam &p : k.cparams) {
    names.push_back(p.name);
    listing += (listing.empty() ? "" : ", ") + describe(p);
  }
  // Entries are sorted by name, a repeated name after its first.
  for (size_t i = 0; i < spec.size(); ++i) {
    const auto &[name, value] = spec[i];
    if (i > 0 && spec[i - 1].first == name)
      return fail(k.loc, "compile-time parameter '" + name + "' of kernel '" + k.name +
                             "' is given twice ('" + spec[i - 1].second.str() + "' and '" +
                             value.str() + "')");
    if (std::find(names.begin(), names.end(), name) == names.end())
      return fail(k.loc, "unknown compile-time parameter '" + name + "' for kernel '" +
                             k.name + "'" + didYouMean(name, names) +
                             (listing.empty() ? " (it has none)"
                                              : " (its parameters: " + listing + ")"));
  }
  std::vector<Specialization::value_type> bound;
  for (const CompileParam &p : k.cparams) {
    const SpecValue *given = spec.find(p.name);
    if (!given && !p.hasDefault) {
      std::string kind = describe(p).substr(p.name.size() + 2);
      return fail(p.loc, "missing value for compile-time parameter '" + p.name + "' (" + kind + ")");
    }
    llvm::Expected<SpecValue> value =
        canonicalValue(p, given ? *given : SpecValue(p.defaultValue));
    if (!value)
      return fail(p.loc, llvm::toString(value.takeError()));
    bound.emplace_back(p.name, std::move(*value));
  }
  return Specialization::makeBound(std::move(bound));
}

/// Whether `spec` is bound for `k`: every declared parameter, nothing else,
/// each value of its parameter's kind.
bool isBoundFor(const ast::Kernel &k, const Specialization &spec) {
  if (!spec.bound() || spec.size() != k.cparams.size())
    return false;
  for (const CompileParam &p : k.cparams) {
    const SpecValue *v = spec.find(p.name);
    if (!v || !isBoundValueOf(p, *v))
      return false;
  }
  return true;
}

bool Sema::bindCompileParams() {
  // A specialisation the compiler bound is used as it is; any other (text
  // from a test or a tool) is bound here.
  std::optional<Specialization> rebound;
  if (!isBoundFor(k_, spec_)) {
    rebound = bindValues(k_, spec_, diags_);
    if (!rebound)
      return false;
  }
  const Specialization &bound = rebound ? *rebound : spec_;
  for (size_t i = 0; i < k_.cparams.size(); ++i) {
    const CompileParam &p = k_.cparams[i];
    const SpecValue &value = *bound.find(p.name);
    Binding bnd;
    ir::SpecParam sp;
    sp.name = p.name;
    switch (p.kind) {
    case CompileParam::Kind::Dtype: {
      ScalarKind k = value.dtype();
      bnd.kind = Binding::Kind::CType;
      bnd.type = k;
      sp.isType = true;
      sp.typeValue = k;
      break;
    }
    case CompileParam::Kind::Int:
      bnd.kind = Binding::Kind::CInt;
      bnd.intValue = value.integer();
      sp.intValue = bnd.intValue;
      break;
    case CompileParam::Kind::Bool:
      bnd.kind = Binding::Kind::CBool;
      bnd.intValue = value.boolean();
      sp.intValue = bnd.intValue;
      sp.isBool = true;
      break;
    case CompileParam::Kind::Enum: {
      auto idx = std::find(p.choices.begin(), p.choices.end(), value.text()) - p.choices.begin();
      bnd.kind = Binding::Kind::CInt;
      bnd.intValue = idx;
      sp.intValue = idx;
      for (size_t e = 0; e < p.choices.size(); ++e) {
        Binding en;
        en.kind = Binding::Kind::Enumerator;
        en.intValue = static_cast<int64_t>(e);
        cparams_[p.choices[e]] = en;
      }
      break;
    }
    }
    bnd.cparam = p.name;
    cparams_[p.name] = bnd;
    kernel_->specialization.push_back(sp);
  }
  scopes_.push_back(cparams_);
  return true;
}

std::optional<ScalarKind> Sema::resolveScalar(const TypeRef &t) {
  if (Binding *bnd = lookup(t.name); bnd && bnd->kind == Binding::Kind::CType)
    return bnd->type;
  ScalarKind k;
  if (ir::parseScalarKind(t.name == "bool" ? "i1" : t.name, k))
    return k;
  error(t.loc, "unknown type '" + t.name + "'");
  return std::nullopt;
}

std::optional<Type> Sema::resolveType(const TypeRef &t) {
  auto elem = resolveScalar(t);
  if (!elem)
    return std::nullopt;
  if (!t.isTile)
    return Type::scalar(*elem);
  std::vector<int64_t> shape;
  for (const ExprPtr &d : t.dims) {
    auto v = constDim(*d, "tile type");
    if (!v)
      return std::nullopt;
    shape.push_back(*v);
  }
  if (shape.size() > 4) {
    error(t.loc, "tile rank is at most 4");
    return std::nullopt;
  }
  return Type::tile(*elem, shape);
}

std::optional<int64_t> Sema::constEval(const Expr &e) {
  switch (e.kind) {
  case ExprKind::IntLit:
  case ExprKind::BoolLit:
    return e.intValue;
  case ExprKind::Name: {
    Binding *bnd = lookup(e.name);
    if (bnd && (bnd->kind == Binding::Kind::CInt ||
                bnd->kind == Binding::Kind::CBool ||
                bnd->kind == Binding::Kind::Enumerator))
      return bnd->intValue;
    return std::nullopt;
  }
  case ExprKind::Unary: {
    auto v = constEval(*e.args[0]);
    if (!v)
      return std::nullopt;
    if (e.op == "-") {
      if (*v == std::numeric_limits<int64_t>::min())
        return overflow(e);
      return -*v;
    }
    if (e.op == "!")
      return *v == 0;
    return ~*v;
  }
  case ExprKind::Binary: {
    auto a = constEval(*e.args[0]);
    auto b = constEval(*e.args[1]);
    if (!a || !b)
      return std::nullopt;
    const std::string &op = e.op;
    int64_t r;
    if (op == "+") return __builtin_add_overflow(*a, *b, &r) ? overflow(e) : r;
    if (op == "-") return __builtin_sub_overflow(*a, *b, &r) ? overflow(e) : r;
    if (op == "*") return __builtin_mul_overflow(*a, *b, &r) ? overflow(e) : r;
    if ((op == "/" || op == "%") && *a == std::numeric_limits<int64_t>::min() && *b == -1)
      return overflow(e);
    if (op == "/") return *b == 0 ? 0 : *a / *b;
    if (op == "%") return *b == 0 ? 0 : *a % *b;
    if (op == "<<")
      return static_cast<int64_t>(static_cast<uint64_t>(*a) << (*b & 63));
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
    if ((e.name == "min" || e.name == "max" || e.name == "cdiv") &&
        e.args.size() == 2 && e.argNames[1].empty()) {
      auto a = constEval(*e.args[0]);
      auto b = constEval(*e.args[1]);
      if (!a || !b)
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
        return overflow(e);
      return t / *b;
    }
    return std::nullopt;
  default:
    return std::nullopt;
  }
}

std::optional<int64_t> Sema::constDim(const Expr &d, const std::string &what) {
  auto v = constEval(d);
  if (!v) {
    error(d.loc, "tile shape must be a compile-time constant (in " + what + ")");
    return std::nullopt;
  }
  if (*v <= 0) {
    error(d.loc, "tile dimension must be positive, got " + std::to_string(*v));
    return std::nullopt;
  }
  return v;
}

std::optional<std::vector<int64_t>> Sema::constShape(const Expr &e,
                                                     const std::string &what) {
  if (e.kind != ExprKind::List) {
    error(e.loc, "expected a shape list '[d0, ...]' for " + what);
    return std::nullopt;
  }
  std::vector<int64_t> shape;
  for (const ExprPtr &d : e.args) {
    auto v = constDim(*d, what);
    if (!v)
      return std::nullopt;
    shape.push_back(*v);
  }
  if (shape.empty() || shape.size() > 4) {
    error(e.loc, "tile rank must be 1..4 (in " + what + ")");
    return std::nullopt;
  }
  int64_t elements = 1;
  for (int64_t d : shape)
    if (__builtin_mul_overflow(elements, d, &elements) || elements > kMaxTileElements) {
      error(e.loc, "tile shape of " + what + " has more than 2^40 elements");
      return std::nullopt;
    }
  return shape;
}

//===----------------------------------------------------------------------===//
// Parameters
//===----------------------------------------------------------------------===//

bool Sema::bindParams() {
  push();
  std::map<std::string, std::pair<unsigned, unsigned>> sizes;
  for (unsigned ai = 0; ai < k_.params.size(); ++ai) {
    const ast::Param &p = k_.params[ai];
    auto elem = resolveScalar(p.elemType);
    if (!elem)
      return false;
    if (p.elemType.isTile)
      return error(p.elemType.loc, "a parameter cannot be a tile; use gm<T>[...]");
    if (p.guard) {
      auto present = constEval(*p.guard);
      if (!present)
        return error(p.guard->loc, "the condition of parameter '" + p.name +
                                       "' must be a compile-time constant (made of "
                                       "compile-time parameters and literals)");
      if (!*present) {
        // Not part of this specialisation: no runtime argument, no sizes.
        Binding a;
        a.kind = Binding::Kind::Absent;
        a.param = ai;
        if (!declare(p.name, a, p.loc))
          return false;
        continue;
      }
    }
    // The parameter's position in the kernel (absent ones take none).
    const auto i = static_cast<unsigned>(kernel_->params.size());
    if (!p.isTensor) {
      if (*elem != ScalarKind::I1 && *elem != ScalarKind::I32 &&
          *elem != ScalarKind::I64 && *elem != ScalarKind::F32)
        return error(p.elemType.loc, "scalar parameter '" + p.name +
                                         "' must be bool, i32, i64 or f32, "
                                         "not " + ir::scalarName(*elem));
      kernel_->addParam({p.name, Type::scalar(*elem), p.loc});
      Binding bnd;
      bnd.kind = Binding::Kind::ScalarParam;
      bnd.param = i;
      if (!declare(p.name, bnd, p.loc))
        return false;
      continue;
    }
    kernel_->addParam({p.name, Type::tensor(*elem, p.dims.size()), p.loc});
    Binding t;
    t.kind = Binding::Kind::Tensor;
    t.param = i;
    if (!declare(p.name, t, p.loc))
      return false;
    for (unsigned a = 0; a < p.dims.size(); ++a) {
      const std::string &d = p.dims[a];
      if (d == "_")
        continue;
      ir::ShapeConstraint c;
      c.param = i;
      c.axis = a;
      int64_t lit;
      if (std::isdigit(static_cast<unsigned char>(d[0])) && !parseInt(d, lit))
        return error(p.dimLocs[a], "size " + d + " is out of range (a 64-bit signed integer)");
      if (parseInt(d, lit) || (cparams_.count(d) &&
                               cparams_[d].kind == Binding::Kind::CInt)) {
        c.kind = ir::ShapeConstraint::Kind::EqualsConstant;
        c.constant = parseInt(d, lit) ? lit : cparams_[d].intValue;
        c.message = p.name + ": size of axis " + std::to_string(a) +
                    " must equal " + d +
                    (d == std::to_string(c.constant)
                         ? std::string()
                         : " (" + std::to_string(c.constant) + ")");
        kernel_->constraints.push_back(c);
        continue;
      }
      if (cparams_.count(d))
        return error(p.dimLocs[a], "'" + d + "' is not an integer compile-time "
                                             "parameter and cannot name a size");
      auto it = sizes.find(d);
      if (it != sizes.end()) {
        c.kind = ir::ShapeConstraint::Kind::EqualsDim;
        c.otherParam = it->second.first;
        c.otherAxis = it->second.second;
        c.message = p.name + ": size of axis " + std::to_string(a) +
                    " must equal " + d + " (size of " +
                    kernel_->params[c.otherParam].name + " axis " +
                    std::to_string(c.otherAxis) + ")";
        kernel_->constraints.push_back(c);
        continue;
      }
      sizes[d] = {i, a};
      Binding s;
      s.kind = Binding::Kind::Size;
      s.param = i;
      s.axis = a;
      if (!declare(d, s, p.dimLocs[a]))
        return false;
    }
  }
  return true;
}

//===----------------------------------------------------------------------===//
// Conversions and broadcasting
//===----------------------------------------------------------------------===//

ir::Value *Sema::constantInt(SourceLoc loc, ScalarKind kind, int64_t v) {
  ir::OpAttrs a;
  if (kind == ScalarKind::F16 || kind == ScalarKind::BF16) {
    // Rounded once, by the cast (an f32 constant first would round twice).
    a.intValue = v;
    ir::Value *i = emit(OpKind::Constant, loc, {}, Type::scalar(ScalarKind::I64), a);
    return emit(OpKind::Cast, loc, {i}, Type::scalar(kind));
  }
  if (kind == ScalarKind::F32)
    return constantFloat(loc, kind, ir::scalar::intToFloat(v, ScalarKind::I64));
  a.intValue = ir::scalar::intToInt(v, ScalarKind::I64, kind);
  return emit(OpKind::Constant, loc, {}, Type::scalar(kind), a);
}

ir::Value *Sema::constantFloat(SourceLoc loc, ScalarKind kind, float v) {
  assert(ir::isFloat(kind) && "a float kind");
  ir::OpAttrs a;
  a.floatValue = v;
  ir::Value *f = emit(OpKind::Constant, loc, {}, Type::scalar(ScalarKind::F32), a);
  if (kind == ScalarKind::F32)
    return f;
  // Storage kinds get their constants through a cast from f32.
  return emit(OpKind::Cast, loc, {f}, Type::scalar(kind));
}

ir::Value *Sema::materialize(const RValue &r, ScalarKind kind) {
  if (!r.isLiteral)
    return r.value;
  if (r.literalIsFloat && !ir::isFloat(kind)) {
    error(r.loc, std::string("float literal where ") + ir::scalarName(kind) +
                     " is expected");
    return nullptr;
  }
  if (kind == ScalarKind::I1 && r.intLiteral != 0 && r.intLiteral != 1) {
    error(r.loc, "integer literal where i1 is expected");
    return nullptr;
  }
  if (r.literalIsFloat)
    return constantFloat(r.loc, kind, r.floatLiteral);
  return constantInt(r.loc, kind, r.intLiteral);
}

ir::Value *Sema::materializeDefault(const RValue &r) {
  if (!r.isLiteral)
    return r.value;
  return materialize(r, r.literalIsFloat ? ScalarKind::F32 : ScalarKind::I64);
}

ir::Value *Sema::splatTo(ir::Value *v, const std::vector<int64_t> &shape,
                         SourceLoc loc) {
  return emit(OpKind::Splat, loc, {v}, Type::tile(v->type().elem(), shape));
}

std::optional<std::vector<int64_t>>
Sema::broadcastShape(const std::vector<int64_t> &a,
                     const std::vector<int64_t> &b, SourceLoc loc,
                     const std::string &op) {
  size_t n = std::max(a.size(), b.size());
  std::vector<int64_t> out(n);
  for (size_t i = 0; i < n; ++i) {
    int64_t da = i < n - a.size() ? 1 : a[i - (n - a.size())];
    int64_t db = i < n - b.size() ? 1 : b[i - (n - b.size())];
    if (da != db && da != 1 && db != 1) {
      auto str = [](const std::vector<int64_t> &s) {
        std::string r = "[";
        for (size_t j = 0; j < s.size(); ++j)
          r += (j ? ", " : "") + std::to_string(s[j]);
        return r + "]";
      };
      error(loc, "incompatible tile shapes " + str(a) + " and " + str(b) +
                     " in '" + op + "'");
      return std::nullopt;
    }
    out[i] = std::max(da, db);
  }
  return out;
}

ir::Value *Sema::broadcastTo(ir::Value *v, const std::vector<int64_t> &shape,
                             SourceLoc loc) {
  const Type &t = v->type();
  if (t.isScalar())
    return splatTo(v, shape, loc);
  if (t.shape() == shape)
    return v;
  if (t.rank() < shape.size()) {
    std::vector<int64_t> padded(shape.size() - t.rank(), 1);
    padded.insert(padded.end(), t.shape().begin(), t.shape().end());
    v = emit(OpKind::Reshape, loc, {v}, Type::tile(t.elem(), padded));
    if (padded == shape)
      return v;
  }
  return emit(OpKind::Broadcast, loc, {v}, Type::tile(t.elem(), shape));
}

bool Sema::unify(std::vector<RValue *> vals, SourceLoc loc,
                 const std::string &op, std::vector<ir::Value *> &out) {
  // The element kind: from the first typed operand; literals adapt.
  std::optional<ScalarKind> kind;
  const RValue *first = nullptr;
  for (RValue *r : vals)
    if (!r->isLiteral) {
      if (!kind) {
        kind = r->type().elem();
        first = r;
      } else if (r->type().elem() != *kind) {
        return error(loc, std::string("mismatched element types ") +
                              ir::scalarName(*kind) + " and " +
                              ir::scalarName(r->type().elem()) + " in '" + op +
                              "'; use cast<...>() to convert");
      }
    }
  (void)first;
  if (!kind) {
    bool anyFloat = false;
    for (RValue *r : vals)
      anyFloat |= r->literalIsFloat;
    kind = anyFloat ? ScalarKind::F32 : ScalarKind::I64;
  }
  std::vector<int64_t> shape;
  bool isTile = false;
  for (RValue *r : vals) {
    if (r->isLiteral || !r->type().isTile())
      continue;
    if (!isTile) {
      shape = r->type().shape();
      isTile = true;
      continue;
    }
    auto s = broadcastShape(shape, r->type().shape(), loc, op);
    if (!s)
      return false;
    shape = *s;
  }
  out.clear();
  for (RValue *r : vals) {
    ir::Value *v = materialize(*r, *kind);
    if (!v)
      return false;
    if (isTile)
      v = broadcastTo(v, shape, r->loc);
    out.push_back(v);
  }
  return true;
}

bool Sema::requireArithmetic(ir::Value *v, SourceLoc loc, const std::string &op,
                             bool allowInt, bool allowBool) {
  ScalarKind k = v->type().elem();
  if (k == ScalarKind::F16 || k == ScalarKind::BF16)
    return error(loc, std::string("arithmetic '") + op + "' on " +
                          ir::scalarName(k) +
                          " is not supported; f16 and bf16 are storage types, "
                          "use cast<f32>(...)");
  if (k == ScalarKind::I1 && !allowBool)
    return error(loc, "'" + op + "' is not defined on i1 values");
  if (ir::isInteger(k) && !allowInt)
    return error(loc, std::string("'") + op + "' needs a float operand, got " +
                          ir::scalarName(k));
  return true;
}

ir::Value *Sema::toIndex(const RValue &r, const std::string &what) {
  if (r.isLiteral) {
    if (r.literalIsFloat) {
      error(r.loc, what + " must be an integer");
      return nullptr;
    }
    return constantInt(r.loc, ScalarKind::I64, r.intLiteral);
  }
  const Type &t = r.type();
  if (!t.isScalar() || !ir::isInteger(t.elem())) {
    error(r.loc, what + " must be an integer scalar, got " + typeName(t));
    return nullptr;
  }
  if (t.elem() == ScalarKind::I64)
    return r.value;
  return emit(OpKind::Cast, r.loc, {r.value}, Type::scalar(ScalarKind::I64));
}

//===----------------------------------------------------------------------===//
// Expressions
//===----------------------------------------------------------------------===//

std::optional<RValue> Sema::lower(const Expr &e) {
  RValue r;
  r.loc = e.loc;
  switch (e.kind) {
  case ExprKind::IntLit:
    r.isLiteral = true;
    r.intLiteral = e.intValue;
    return r;
  case ExprKind::FloatLit:
    r.isLiteral = true;
    r.literalIsFloat = true;
    r.floatLiteral = static_cast<float>(e.floatValue);
    return r;
  case ExprKind::BoolLit:
    r.value = constantInt(e.loc, ScalarKind::I1, e.intValue);
    return r;
  case ExprKind::Name: {
    Binding *bnd = lookup(e.name);
    if (!bnd) {
      if (e.name == "inf" || e.name == "nan") {
        r.isLiteral = true;
        r.literalIsFloat = true;
        r.floatLiteral = e.name == "inf" ? std::numeric_limits<float>::infinity()
                                         : ir::scalar::canonicalNaN();
        return r;
      }
      error(e.loc, "use of undeclared name '" + e.name + "'");
      return std::nullopt;
    }
    switch (bnd->kind) {
    case Binding::Kind::Value:
    case Binding::Kind::Var:
      r.value = bnd->value;
      return r;
    case Binding::Kind::ScalarParam:
      r.value = paramValue(bnd->param);
      return r;
    case Binding::Kind::Size: {
      ir::OpAttrs a;
      a.axis = bnd->axis;
      r.value = emit(OpKind::Dim, e.loc, {paramValue(bnd->param)},
                     Type::scalar(ScalarKind::I64), a);
      return r;
    }
    case Binding::Kind::CInt:
    case Binding::Kind::CBool: {
      ir::OpAttrs a;
      a.name = bnd->cparam;
      a.intValue = bnd->intValue;
      r.value = emit(OpKind::ConstParam, e.loc, {},
                     Type::scalar(bnd->kind == Binding::Kind::CBool
                                      ? ScalarKind::I1
                                      : ScalarKind::I64),
                     a);
      return r;
    }
    case Binding::Kind::Enumerator:
      r.value = constantInt(e.loc, ScalarKind::I64, bnd->intValue);
      return r;
    case Binding::Kind::CType:
      error(e.loc, "'" + e.name + "' is a type, not a value");
      return std::nullopt;
    case Binding::Kind::Tensor:
      error(e.loc, "tensor '" + e.name +
                       "' used as a value; index it or pass it to load");
      return std::nullopt;
    case Binding::Kind::Absent:
      reportAbsent(bnd, e.name, e.loc);
      return std::nullopt;
    }
    return std::nullopt;
  }
  case ExprKind::Unary:
    return lowerUnary(e);
  case ExprKind::Binary:
    return lowerBinary(e);
  case ExprKind::Call:
    return lowerCall(e);
  case ExprKind::Index: {
    Binding *bnd = lookup(e.name);
    if (!bnd || bnd->kind != Binding::Kind::Tensor) {
      if (!reportAbsent(bnd, e.name, e.loc))
        error(e.loc, "'" + e.name + "' is not a tensor and cannot be indexed");
      return std::nullopt;
    }
    const Type &tt = kernel_->params[bnd->param].type;
    if (e.args.size() != tt.rank()) {
      error(e.loc, "tensor '" + e.name + "' has rank " +
                       std::to_string(tt.rank()) + " but " +
                       std::to_string(e.args.size()) + " indices were given");
      return std::nullopt;
    }
    std::vector<ir::Value *> ops{tensorValue(*bnd)};
    for (size_t i = 0; i < e.args.size(); ++i) {
      if (!e.argNames[i].empty()) {
        error(e.args[i]->loc, "unexpected named argument in tensor index");
        return std::nullopt;
      }
      auto idx = lower(*e.args[i]);
      if (!idx)
        return std::nullopt;
      ir::Value *v = toIndex(*idx, "tensor index");
      if (!v)
        return std::nullopt;
      ops.push_back(v);
    }
    r.value = emit(OpKind::LoadScalar, e.loc, ops, Type::scalar(tt.elem()));
    return r;
  }
  case ExprKind::List:
    error(e.loc, "a list '[...]' is only allowed as an argument of a builtin");
    return std::nullopt;
  }
  return std::nullopt;
}

std::optional<RValue> Sema::lowerUnary(const Expr &e) {
  auto a = lower(*e.args[0]);
  if (!a)
    return std::nullopt;
  if (a->isLiteral) {
    if (e.op == "-") {
      if (a->literalIsFloat)
        a->floatLiteral = -a->floatLiteral;
      else
        a->intLiteral = ir::scalar::intUnary(OpKind::Neg, ScalarKind::I64, a->intLiteral);
      a->loc = e.loc;
      return a;
    }
    ir::Value *v = materializeDefault(*a);
    a->isLiteral = false;
    a->value = v;
  }
  RValue r;
  r.loc = e.loc;
  ir::Value *v = a->value;
  if (!v) { // a call without a result (store, scatter, prefetch)
    error(e.loc, "'" + e.op + "' needs an operand with a value");
    return std::nullopt;
  }
  if (e.op == "-") {
    if (!requireArithmetic(v, e.loc, "-", true, false))
      return std::nullopt;
    r.value = emit(OpKind::Neg, e.loc, {v}, v->type());
    return r;
  }
  if (e.op == "!" && v->type().elem() != ScalarKind::I1) {
    error(e.loc, "'!' needs an i1 (boolean) operand, got " + typeName(v->type()));
    return std::nullopt;
  }
  if (ir::isFloat(v->type().elem())) {
    error(e.loc, "'" + e.op + "' needs an integer or boolean operand");
    return std::nullopt;
  }
  r.value = emit(OpKind::Not, e.loc, {v}, v->type());
  return r;
}

std::optional<RValue> Sema::binaryOp(const std::string &op, RValue a, RValue b,
                                     SourceLoc loc) {
  if (a.isLiteral && b.isLiteral) {
    static const std::map<std::string, OpKind> folded = {
        {"+", OpKind::Add}, {"-", OpKind::Sub}, {"*", OpKind::Mul}, {"/", OpKind::Div}};
    if (auto f = folded.find(op); f != folded.end()) {
      RValue r = a;
      r.loc = loc;
      if (a.literalIsFloat || b.literalIsFloat) {
        r.makeFloat();
        r.floatLiteral = ir::scalar::floatBinary(f->second, a.asFloat(), b.asFloat());
      } else {
        r.intLiteral =
            ir::scalar::intBinary(f->second, ScalarKind::I64, a.intLiteral, b.intLiteral);
      }
      return r;
    }
    // Other operators on two literals: materialise with default kinds.
  }
  static const std::map<std::string, OpKind> arith = {
      {"+", OpKind::Add}, {"-", OpKind::Sub}, {"*", OpKind::Mul},
      {"/", OpKind::Div}, {"%", OpKind::Rem}, {"&", OpKind::And},
      {"|", OpKind::Or},  {"^", OpKind::Xor}, {"<<", OpKind::Shl},
      {">>", OpKind::Shr}, {"&&", OpKind::And}, {"||", OpKind::Or}};
  static const std::map<std::string, ir::CmpPredicate> cmps = {
      {"==", ir::CmpPredicate::Eq}, {"!=", ir::CmpPredicate::Ne},
      {"<", ir::CmpPredicate::Lt},  {"<=", ir::CmpPredicate::Le},
      {">", ir::CmpPredicate::Gt},  {">=", ir::CmpPredicate::Ge}};
  std::vector<ir::Value *> ops;
  if (!unify({&a, &b}, loc, op, ops))
    return std::nullopt;
  RValue r;
  r.loc = loc;
  const Type &t = ops[0]->type();
  if (auto c = cmps.find(op); c != cmps.end()) {
    ir::OpAttrs attrs;
    attrs.predicate = c->second;
    r.value = emit(OpKind::Cmp, loc, ops, t.withElem(ScalarKind::I1), attrs);
    return r;
  }
  auto it = arith.find(op);
  if (it == arith.end()) {
    error(loc, "unknown operator '" + op + "'");
    return std::nullopt;
  }
  bool logical = op == "&&" || op == "||";
  bool bitwise = op == "&" || op == "|" || op == "^" || op == "<<" ||
                 op == ">>" || op == "%";
  if (logical && t.elem() != ScalarKind::I1) {
    error(loc, "'" + op + "' needs i1 (boolean) operands, got " + typeName(t));
    return std::nullopt;
  }
  if (bitwise && ir::isFloat(t.elem()) && op != "%") {
    error(loc, "'" + op + "' needs integer operands, got " + typeName(t));
    return std::nullopt;
  }
  bool boolOk = logical || op == "&" || op == "|" || op == "^";
  if (!requireArithmetic(ops[0], loc, op, true, boolOk))
    return std::nullopt;
  r.value = emit(it->second, loc, ops, t);
  return r;
}

std::optional<RValue> Sema::lowerBinary(const Expr &e) {
  // `T == f32`: comparing dtypes is a compile-time boolean.
  auto asType = [&](const Expr &x) -> std::optional<ScalarKind> {
    if (x.kind != ExprKind::Name)
      return std::nullopt;
    Binding *bnd = lookup(x.name);
    if (bnd)
      return bnd->kind == Binding::Kind::CType ? std::optional(bnd->type)
                                               : std::nullopt;
    ScalarKind k;
    if (ir::parseScalarKind(x.name == "bool" ? "i1" : x.name, k))
      return k;
    return std::nullopt;
  };
  auto ta = asType(*e.args[0]), tb = asType(*e.args[1]);
  if (ta || tb) {
    if (!ta || !tb || (e.op != "==" && e.op != "!=")) {
      error(e.loc, "a dtype can only be compared with another dtype, by '==' or '!='");
      return std::nullopt;
    }
    RValue r;
    r.loc = e.loc;
    r.value = constantInt(e.loc, ScalarKind::I1, (*ta == *tb) == (e.op == "=="));
    return r;
  }
  auto a = lower(*e.args[0]);
  if (!a)
    return std::nullopt;
  auto b = lower(*e.args[1]);
  if (!b)
    return std::nullopt;
  for (const RValue *x : {&*a, &*b})
    if (!x->isLiteral && !x->value) { // a call without a result (store, ...)
      error(x->loc, "'" + e.op + "' needs operands with a value");
      return std::nullopt;
    }
  return binaryOp(e.op, *a, *b, e.loc);
}

const Binding *Sema::tensorArg(const Expr &e, const std::string &builtin) {
  if (e.kind == ExprKind::Name) {
    Binding *bnd = lookup(e.name);
    if (bnd && bnd->kind == Binding::Kind::Tensor)
      return bnd;
    if (reportAbsent(bnd, e.name, e.loc))
      return nullptr;
  }
  error(e.loc, "expected a tensor parameter as the first argument of '" +
                   builtin + "'");
  return nullptr;
}

/// Checks a call's arguments: `positional` names in order, then the allowed
/// named arguments. Fills `args` (null where absent).
bool checkArgs(Sema *, const Expr &e, DiagnosticEngine &diags, size_t minPos,
               size_t maxPos, const std::set<std::string> &named,
               std::vector<const Expr *> &pos,
               std::map<std::string, const Expr *> &nam) {
  for (size_t i = 0; i < e.args.size(); ++i) {
    if (e.argNames[i].empty()) {
      if (!nam.empty()) {
        diags.error(e.args[i]->loc,
                    "positional argument after a named argument in '" + e.name +
                        "'");
        return false;
      }
      pos.push_back(e.args[i].get());
    } else {
      if (!named.count(e.argNames[i])) {
        diags.error(e.args[i]->loc, "unknown argument '" + e.argNames[i] +
                                        "' of '" + e.name + "'");
        return false;
      }
      nam[e.argNames[i]] = e.args[i].get();
    }
  }
  if (pos.size() < minPos || pos.size() > maxPos) {
    std::string want = minPos == maxPos ? std::to_string(minPos)
                                        : std::to_string(minPos) + ".." +
                                              std::to_string(maxPos);
    diags.error(e.loc, "'" + e.name + "' takes " + want +
                           " positional arguments, " +
                           std::to_string(pos.size()) + " given");
    return false;
  }
  return true;
}

std::optional<RValue> Sema::lowerCall(const Expr &e) {
  const std::string &n = e.name;
  std::vector<const Expr *> pos;
  std::map<std::string, const Expr *> nam;
  RValue r;
  r.loc = e.loc;
  auto args = [&](size_t lo, size_t hi, std::set<std::string> named = {}) {
    return checkArgs(this, e, diags_, lo, hi, named, pos, nam);
  };
  auto constInt = [&](const Expr *x, const std::string &what)
      -> std::optional<int64_t> {
    auto v = constEval(*x);
    if (!v)
      error(x->loc, what + " must be a compile-time constant");
    return v;
  };
  const std::vector<std::string> &names = builtinNames();
  if (!std::binary_search(names.begin(), names.end(), n)) {
    std::string hint = didYouMean(n, names);
    if (hint.empty()) {
      error(e.loc, "unknown builtin '" + n +
                       "'; the builtins are listed in docs/dsl.md, section 6");
      std::string all;
      for (const std::string &b : names)
        all += (all.empty() ? "" : ", ") + b;
      diags_.note(e.loc, "the builtins: " + all);
      return std::nullopt;
    }
    error(e.loc, "unknown builtin '" + n + "'" + hint);
    return std::nullopt;
  }
  if (e.typeArg && !takesTypeArgument(n)) {
    error(e.loc, "'" + n + "' takes no type argument");
    return std::nullopt;
  }

  if (n == "program_id" || n == "num_programs") {
    if (!args(1, 1))
      return std::nullopt;
    auto axis = constInt(pos[0], "the axis of '" + n + "'");
    if (!axis)
      return std::nullopt;
    if (*axis < 0 || *axis > 2) {
      error(pos[0]->loc, "axis of '" + n + "' must be 0, 1 or 2");
      return std::nullopt;
    }
    if (inGrid_) {
      error(e.loc, "'" + n + "' cannot be used in the grid expression");
      return std::nullopt;
    }
    ir::OpAttrs a;
    a.axis = *axis;
    r.value = emit(n == "program_id" ? OpKind::ProgramId : OpKind::NumPrograms,
                   e.loc, {}, Type::scalar(ScalarKind::I64), a);
    return r;
  }
  if (n == "dim" || n == "stride") {
    if (!args(2, 2))
      return std::nullopt;
    const Binding *t = tensorArg(*pos[0], n);
    if (!t)
      return std::nullopt;
    auto axis = constInt(pos[1], "the axis of '" + n + "'");
    if (!axis)
      return std::nullopt;
    unsigned rank = kernel_->params[t->param].type.rank();
    if (*axis < 0 || *axis >= rank) {
      error(pos[1]->loc, "axis " + std::to_string(*axis) +
                             " is out of range for a tensor of rank " +
                             std::to_string(rank));
      return std::nullopt;
    }
    ir::OpAttrs a;
    a.axis = *axis;
    r.value = emit(n == "dim" ? OpKind::Dim : OpKind::Stride, e.loc,
                   {tensorValue(*t)}, Type::scalar(ScalarKind::I64), a);
    return r;
  }
  if (n == "cdiv") {
    if (!args(2, 2))
      return std::nullopt;
    auto a = lower(*pos[0]);
    auto b = a ? lower(*pos[1]) : std::nullopt;
    if (!b)
      return std::nullopt;
    auto sum = binaryOp("+", *a, *b, e.loc);
    if (!sum)
      return std::nullopt;
    RValue one;
    one.isLiteral = true;
    one.intLiteral = 1;
    one.loc = e.loc;
    auto sub = binaryOp("-", *sum, one, e.loc);
    if (!sub)
      return std::nullopt;
    return binaryOp("/", *sub, *b, e.loc);
  }
  if (n == "sum" || ((n == "max" || n == "min") &&
                     (e.args.size() == 1 ||
                      (e.args.size() == 2 && e.argNames[1] == "axis")))) {
    if (!args(1, 1, {"axis"}))
      return std::nullopt;
    auto t = lower(*pos[0]);
    if (!t)
      return std::nullopt;
    ir::Value *v = materializeDefault(*t);
    if (!v)
      return std::nullopt;
    if (!v->type().isTile()) {
      error(pos[0]->loc, "'" + n + "' reduces a tile, got " + typeName(v->type()));
      return std::nullopt;
    }
    if (!requireArithmetic(v, e.loc, n, true, false))
      return std::nullopt;
    int64_t axis = static_cast<int64_t>(v->type().rank()) - 1;
    if (nam.count("axis")) {
      auto a = constInt(nam["axis"], "the reduction axis");
      if (!a)
        return std::nullopt;
      axis = *a < 0 ? *a + v->type().rank() : *a;
    } else if (v->type().rank() != 1) {
      error(e.loc, "'" + n + "' of a rank-" + std::to_string(v->type().rank()) +
                       " tile needs 'axis = ...'");
      return std::nullopt;
    }
    if (axis < 0 || axis >= static_cast<int64_t>(v->type().rank())) {
      error(nam.count("axis") ? nam["axis"]->loc : e.loc,
            "reduction axis out of range for " + typeName(v->type()));
      return std::nullopt;
    }
    std::vector<int64_t> shape = v->type().shape();
    shape.erase(shape.begin() + axis);
    ir::OpAttrs a;
    a.axis = axis;
    a.reduceKind = n == "sum" ? ir::ReduceKind::Sum
                   : n == "max" ? ir::ReduceKind::Max
                                : ir::ReduceKind::Min;
    Type rt = shape.empty() ? Type::scalar(v->type().elem())
                            : Type::tile(v->type().elem(), shape);
    r.value = emit(OpKind::Reduce, e.loc, {v}, rt, a);
    return r;
  }
  if (n == "min" || n == "max") {
    if (!args(2, 2))
      return std::nullopt;
    auto a = lower(*pos[0]);
    auto b = a ? lower(*pos[1]) : std::nullopt;
    if (!b)
      return std::nullopt;
    if (a->isLiteral && b->isLiteral) {
      RValue out = *a;
      OpKind k = n == "min" ? OpKind::Min : OpKind::Max;
      if (a->literalIsFloat || b->literalIsFloat) {
        out.makeFloat();
        out.floatLiteral = ir::scalar::floatBinary(k, a->asFloat(), b->asFloat());
      } else {
        out.intLiteral = ir::scalar::intBinary(k, ScalarKind::I64, a->intLiteral,
                                               b->intLiteral);
      }
      return out;
    }
    std::vector<ir::Value *> ops;
    if (!unify({&*a, &*b}, e.loc, n, ops) ||
        !requireArithmetic(ops[0], e.loc, n, true, false))
      return std::nullopt;
    r.value = emit(n == "min" ? OpKind::Min : OpKind::Max, e.loc, ops,
                   ops[0]->type());
    return r;
  }
  if (n == "pow") {
    if (!args(2, 2))
      return std::nullopt;
    auto a = lower(*pos[0]);
    auto b = a ? lower(*pos[1]) : std::nullopt;
    if (!b)
      return std::nullopt;
    // pow is defined on f32 only: two literals are f32, as in exp(1).
    if (a->isLiteral && b->isLiteral)
      a->makeFloat();
    std::vector<ir::Value *> ops;
    if (!unify({&*a, &*b}, e.loc, n, ops) ||
        !requireArithmetic(ops[0], e.loc, n, false, false))
      return std::nullopt;
    r.value = emit(OpKind::Pow, e.loc, ops, ops[0]->type());
    return r;
  }
  // name -> (op, defined on integers too)
  static const std::map<std::string, std::pair<OpKind, bool>> unary = {
      {"abs", {OpKind::Abs, true}},     {"exp", {OpKind::Exp, false}},
      {"log", {OpKind::Log, false}},    {"sqrt", {OpKind::Sqrt, false}},
      {"rsqrt", {OpKind::Rsqrt, false}}, {"floor", {OpKind::Floor, false}},
      {"ceil", {OpKind::Ceil, false}},  {"round", {OpKind::Round, true}},
      {"exp2", {OpKind::Exp2, false}},  {"log2", {OpKind::Log2, false}},
      {"tanh", {OpKind::Tanh, false}},  {"sigmoid", {OpKind::Sigmoid, false}},
      {"erf", {OpKind::Erf, false}},    {"sin", {OpKind::Sin, false}},
      {"cos", {OpKind::Cos, false}}};
  if (auto u = unary.find(n); u != unary.end()) {
    if (!args(1, 1))
      return std::nullopt;
    auto a = lower(*pos[0]);
    if (!a)
      return std::nullopt;
    ir::Value *v = a->isLiteral ? materialize(*a, u->second.second && !a->literalIsFloat
                                                      ? ScalarKind::I64
                                                      : ScalarKind::F32)
                                : a->value;
    if (!v || !requireArithmetic(v, e.loc, n, u->second.second, false))
      return std::nullopt;
    r.value = emit(u->second.first, e.loc, {v}, v->type());
    return r;
  }
  if (n == "fma" || n == "select") {
    if (!args(3, 3))
      return std::nullopt;
    std::vector<RValue> vs;
    for (const Expr *x : pos) {
      auto v = lower(*x);
      if (!v)
        return std::nullopt;
      vs.push_back(*v);
    }
    if (n == "fma") {
      std::vector<ir::Value *> ops;
      if (!unify({&vs[0], &vs[1], &vs[2]}, e.loc, n, ops) ||
          !requireArithmetic(ops[0], e.loc, n, false, false))
        return std::nullopt;
      r.value = emit(OpKind::Fma, e.loc, ops, ops[0]->type());
      return r;
    }
    ir::Value *c = materializeDefault(vs[0]);
    if (!c)
      return std::nullopt;
    if (c->type().elem() != ScalarKind::I1) {
      error(pos[0]->loc, "the condition of 'select' must be i1 (boolean), got " +
                             typeName(c->type()));
      return std::nullopt;
    }
    std::vector<ir::Value *> ops;
    if (!unify({&vs[1], &vs[2]}, e.loc, n, ops))
      return std::nullopt;
    // Broadcast condition and values to one shape.
    std::vector<int64_t> shape;
    bool tile = false;
    for (ir::Value *v : {c, ops[0]})
      if (v->type().isTile()) {
        if (!tile) {
          shape = v->type().shape();
          tile = true;
        } else {
          auto s = broadcastShape(shape, v->type().shape(), e.loc, n);
          if (!s)
            return std::nullopt;
          shape = *s;
        }
      }
    if (tile) {
      c = broadcastTo(c, shape, e.loc);
      ops[0] = broadcastTo(ops[0], shape, e.loc);
      ops[1] = broadcastTo(ops[1], shape, e.loc);
    }
    r.value = emit(OpKind::Select, e.loc, {c, ops[0], ops[1]}, ops[0]->type());
    return r;
  }
  if (n == "cast" || n == "bitcast") {
    if (!e.typeArg) {
      error(e.loc, "'" + n + "' needs a type argument: " + n + "<f32>(x)");
      return std::nullopt;
    }
    if (!args(1, 1))
      return std::nullopt;
    auto to = resolveScalar(*e.typeArg);
    if (!to)
      return std::nullopt;
    if (e.typeArg->isTile) {
      error(e.typeArg->loc, "the type argument of '" + n +
                                "' is an element type, not a tile");
      return std::nullopt;
    }
    auto a = lower(*pos[0]);
    if (!a)
      return std::nullopt;
    ir::Value *v = a->isLiteral ? (n == "cast" && ir::isFloat(*to) == a->literalIsFloat
                                       ? materialize(*a, *to)
                                       : materializeDefault(*a))
                                : a->value;
    if (!v)
      return std::nullopt;
    if (n == "bitcast" && ir::bitWidth(*to) != ir::bitWidth(v->type().elem())) {
      error(e.loc, std::string("bitcast between kinds of different widths (") +
                       ir::scalarName(v->type().elem()) + " to " +
                       ir::scalarName(*to) + ")");
      return std::nullopt;
    }
    if (v->type().elem() == *to) {
      r.value = v;
      return r;
    }
    r.value = emit(n == "cast" ? OpKind::Cast : OpKind::Bitcast, e.loc, {v},
                   v->type().withElem(*to));
    return r;
  }
  if (n == "full" || n == "zeros" || n == "iota") {
    if (!e.typeArg) {
      error(e.loc, "'" + n + "' needs an element type: " + n + "<f32>(...)");
      return std::nullopt;
    }
    if (!args(n == "zeros" ? 1 : 2, n == "zeros" ? 1 : 2))
      return std::nullopt;
    auto elem = resolveScalar(*e.typeArg);
    if (!elem)
      return std::nullopt;
    auto shape = constShape(*pos[0], "'" + n + "'");
    if (!shape)
      return std::nullopt;
    if (n == "iota") {
      if (!ir::isInteger(*elem)) {
        error(e.typeArg->loc, "'iota' needs an integer element type");
        return std::nullopt;
      }
      auto axis = constInt(pos[1], "the axis of 'iota'");
      if (!axis)
        return std::nullopt;
      if (*axis < 0 || *axis >= static_cast<int64_t>(shape->size())) {
        error(pos[1]->loc, "iota axis out of range");
        return std::nullopt;
      }
      ir::OpAttrs a;
      a.axis = *axis;
      r.value = emit(OpKind::Iota, e.loc, {}, Type::tile(*elem, *shape), a);
      return r;
    }
    RValue fill;
    fill.isLiteral = true;
    fill.loc = e.loc;
    if (n == "full") {
      auto f = lower(*pos[1]);
      if (!f)
        return std::nullopt;
      fill = *f;
    }
    ir::Value *s = fill.isLiteral ? materialize(fill, *elem) : fill.value;
    if (!s)
      return std::nullopt;
    if (!s->type().isScalar() || s->type().elem() != *elem) {
      error(pos.back()->loc, "fill value of type " + typeName(s->type()) +
                                 " does not match element type " +
                                 ir::scalarName(*elem));
      return std::nullopt;
    }
    r.value = splatTo(s, *shape, e.loc);
    return r;
  }
  if (n == "expand_dims" || n == "broadcast_to" || n == "reshape" ||
      n == "transpose") {
    if (!args(n == "transpose" ? 1 : 2, n == "transpose" ? 1 : 2))
      return std::nullopt;
    ir::Value *v = lowerValue(*pos[0]);
    if (!v)
      return std::nullopt;
    if (!v->type().isTile()) {
      error(pos[0]->loc, "'" + n + "' needs a tile, got " + typeName(v->type()));
      return std::nullopt;
    }
    const Type &t = v->type();
    if (n == "transpose") {
      if (t.rank() != 2) {
        error(e.loc, "'transpose' needs a rank-2 tile, got " + typeName(t));
        return std::nullopt;
      }
      r.value = emit(OpKind::Transpose, e.loc, {v},
                     Type::tile(t.elem(), {t.shape()[1], t.shape()[0]}));
      return r;
    }
    if (n == "expand_dims") {
      auto axis = constInt(pos[1], "the axis of 'expand_dims'");
      if (!axis)
        return std::nullopt;
      if (*axis < 0 || *axis > static_cast<int64_t>(t.rank()) || t.rank() >= 4) {
        error(pos[1]->loc, "expand_dims axis out of range for " + typeName(t));
        return std::nullopt;
      }
      std::vector<int64_t> shape = t.shape();
      shape.insert(shape.begin() + *axis, 1);
      r.value = emit(OpKind::Reshape, e.loc, {v}, Type::tile(t.elem(), shape));
      return r;
    }
    auto shape = constShape(*pos[1], "'" + n + "'");
    if (!shape)
      return std::nullopt;
    if (n == "reshape") {
      int64_t count = 1;
      for (int64_t d : *shape)
        count *= d;
      if (count != t.numElements()) {
        error(e.loc, "reshape of " + typeName(t) + " (" +
                         std::to_string(t.numElements()) + " elements) to " +
                         std::to_string(count) + " elements");
        return std::nullopt;
      }
      r.value = emit(OpKind::Reshape, e.loc, {v}, Type::tile(t.elem(), *shape));
      return r;
    }
    auto s = broadcastShape(t.shape(), *shape, e.loc, n);
    if (!s)
      return std::nullopt;
    if (*s != *shape) {
      error(e.loc, "cannot broadcast " + typeName(t) + " to the requested shape");
      return std::nullopt;
    }
    r.value = broadcastTo(v, *shape, e.loc);
    return r;
  }
  if (n == "mma" || n == "dot")
    return lowerMma(e);
  if (n == "load" || n == "store" || n == "gather" || n == "scatter" || n == "prefetch")
    return lowerMemory(e);
  llvm_unreachable("every name of builtinNames() is lowered above");
}

std::optional<RValue> Sema::lowerMma(const Expr &e) {
  const std::string &n = e.name;
  std::vector<const Expr *> pos;
  std::map<std::string, const Expr *> nam;
  size_t count = n == "mma" ? 3 : 2;
  if (!checkArgs(this, e, diags_, count, count, {}, pos, nam))
    return std::nullopt;
  ir::Value *ops[2];
  bool trans[2] = {false, false};
  for (int i = 0; i < 2; ++i) {
    const Expr *x = pos[i];
    if (x->kind == ExprKind::Call && x->name == "transpose" &&
        x->args.size() == 1) {
      trans[i] = true;
      x = x->args[0].get();
    }
    ops[i] = lowerValue(*x);
    if (!ops[i])
      return std::nullopt;
    const Type &t = ops[i]->type();
    if (!t.isTile() || t.rank() != 2) {
      error(x->loc, std::string("operand ") + (i ? "b" : "a") + " of '" + n +
                        "' must be a rank-2 tile, got " + typeName(t));
      return std::nullopt;
    }
    ScalarKind k = t.elem();
    if (k != ScalarKind::F32 && k != ScalarKind::F16 && k != ScalarKind::BF16 &&
        k != ScalarKind::I8) {
      error(x->loc, std::string("operand of '") + n +
                        "' must be f32, f16, bf16 or i8, got " + ir::scalarName(k));
      return std::nullopt;
    }
  }
  const auto &as = ops[0]->type().shape();
  const auto &bs = ops[1]->type().shape();
  int64_t m = trans[0] ? as[1] : as[0], ka = trans[0] ? as[0] : as[1];
  int64_t kb = trans[1] ? bs[1] : bs[0], nn = trans[1] ? bs[0] : bs[1];
  if (ka != kb) {
    error(e.loc, "inner dimensions of '" + n + "' do not match: a is " +
                     typeName(ops[0]->type()) + (trans[0] ? " (transposed)" : "") +
                     ", b is " + typeName(ops[1]->type()) +
                     (trans[1] ? " (transposed)" : "") + " (" +
                     std::to_string(ka) + " vs " + std::to_string(kb) + ")");
    return std::nullopt;
  }
  Type rt = Type::tile(ScalarKind::F32, {m, nn});
  ir::Value *acc;
  if (n == "mma") {
    auto a = lower(*pos[2]);
    if (!a)
      return std::nullopt;
    acc = a->isLiteral ? materialize(*a, ScalarKind::F32) : a->value;
    if (!acc)
      return std::nullopt;
    if (acc->type().isScalar() && acc->type().elem() == ScalarKind::F32)
      acc = splatTo(acc, rt.shape(), pos[2]->loc);
    if (acc->type() != rt) {
      error(pos[2]->loc, "accumulator of 'mma' must be " + typeName(rt) +
                             ", got " + typeName(acc->type()));
      return std::nullopt;
    }
  } else {
    acc = splatTo(constantFloat(e.loc, ScalarKind::F32, 0.0f), rt.shape(), e.loc);
  }
  ir::OpAttrs attrs;
  attrs.transA = trans[0];
  attrs.transB = trans[1];
  RValue r;
  r.loc = e.loc;
  r.value = emit(OpKind::Mma, e.loc, {ops[0], ops[1], acc}, rt, attrs);
  return r;
}

std::optional<RValue> Sema::lowerMemory(const Expr &e) {
  const std::string &n = e.name;
  std::vector<const Expr *> pos;
  std::map<std::string, const Expr *> nam;
  bool isLoad = n == "load" || n == "gather";
  bool indexed = n == "gather" || n == "scatter";
  std::set<std::string> named = {"mask"};
  if (isLoad)
    named.insert("other");
  if (n == "store")
    named.insert("stream");
  if (n == "load")
    named.insert("cached");
  if (n == "prefetch")
    named = {"spread"};
  size_t npos = n == "gather" ? 2 : 3;
  if (!checkArgs(this, e, diags_, npos, npos, named, pos, nam))
    return std::nullopt;
  const Binding *t = tensorArg(*pos[0], n);
  if (!t)
    return std::nullopt;
  const Type &tt = kernel_->params[t->param].type;
  const Expr *list = pos[1];
  if (list->kind != ExprKind::List) {
    error(list->loc, std::string("expected a list of ") +
                         (indexed ? "index tiles" : "offsets") +
                         " '[...]' as the second argument of '" + n + "'");
    return std::nullopt;
  }
  if (list->args.size() != tt.rank()) {
    error(list->loc, "'" + n + "' on tensor '" + pos[0]->name + "' of rank " +
                         std::to_string(tt.rank()) + " needs " +
                         std::to_string(tt.rank()) + (indexed ? " index tiles" : " offsets") +
                         ", got " + std::to_string(list->args.size()));
    return std::nullopt;
  }
  std::vector<ir::Value *> ops{tensorValue(*t)};
  std::vector<int64_t> shape;
  ir::Value *valueTile = nullptr;
  if (n == "load" || n == "prefetch") {
    auto s = constShape(*pos[2], "'" + n + "'");
    if (!s)
      return std::nullopt;
    shape = *s;
    if (shape.size() > tt.rank()) {
      error(pos[2]->loc, n + " of a rank-" + std::to_string(shape.size()) +
                             " tile from a rank-" + std::to_string(tt.rank()) +
                             " tensor");
      return std::nullopt;
    }
  }
  if (n == "store" || n == "scatter") {
    valueTile = lowerValue(*pos[2]);
    if (!valueTile)
      return std::nullopt;
    if (!valueTile->type().isTile()) {
      error(pos[2]->loc, "'" + n + "' needs a tile value, got " +
                             typeName(valueTile->type()));
      return std::nullopt;
    }
    if (valueTile->type().elem() != tt.elem()) {
      error(pos[2]->loc, std::string("'") + n + "' of a " +
                             typeName(valueTile->type()) + " into tensor '" +
                             pos[0]->name + "' of " + ir::scalarName(tt.elem()) +
                             "; use cast<" + ir::scalarName(tt.elem()) + ">(...)");
      return std::nullopt;
    }
    shape = valueTile->type().shape();
    if (n == "store" && shape.size() > tt.rank()) {
      error(pos[2]->loc, "store of a rank-" + std::to_string(shape.size()) +
                             " tile into a rank-" + std::to_string(tt.rank()) +
                             " tensor");
      return std::nullopt;
    }
  }
  if (!indexed) {
    for (const ExprPtr &o : list->args) {
      auto v = lower(*o);
      if (!v)
        return std::nullopt;
      ir::Value *idx = toIndex(*v, "offset of '" + n + "'");
      if (!idx)
        return std::nullopt;
      ops.push_back(idx);
    }
  } else {
    std::vector<ir::Value *> idx;
    for (const ExprPtr &o : list->args) {
      ir::Value *v = lowerValue(*o);
      if (!v)
        return std::nullopt;
      if (!ir::isInteger(v->type().elem())) {
        error(o->loc, "index of '" + n + "' must be integer, got " +
                          typeName(v->type()));
        return std::nullopt;
      }
      if (v->type().isTile()) {
        auto s = shape.empty() ? std::optional(v->type().shape())
                               : broadcastShape(shape, v->type().shape(), o->loc, n);
        if (!s)
          return std::nullopt;
        shape = *s;
      }
      idx.push_back(v);
    }
    if (shape.empty()) {
      error(list->loc, "'" + n + "' needs at least one index tile");
      return std::nullopt;
    }
    if (valueTile && valueTile->type().shape() != shape) {
      error(pos[2]->loc, "value shape does not match the index tiles in '" + n + "'");
      return std::nullopt;
    }
    for (ir::Value *v : idx) {
      if (v->type().elem() != ScalarKind::I64)
        v = emit(OpKind::Cast, e.loc, {v}, v->type().withElem(ScalarKind::I64));
      ops.push_back(broadcastTo(v, shape, e.loc));
    }
  }
  if (valueTile)
    ops.push_back(valueTile);
  ir::OpAttrs attrs;
  if (nam.count("other")) {
    auto o = lower(*nam["other"]);
    if (!o)
      return std::nullopt;
    if (!o->isLiteral) {
      error(nam["other"]->loc, "'other' must be a constant number");
      return std::nullopt;
    }
    if (o->literalIsFloat && !ir::isFloat(tt.elem()) && std::isfinite(o->floatLiteral)) {
      error(nam["other"]->loc, "'other' of an integer tensor must be an integer");
      return std::nullopt;
    }
    attrs.floatValue = o->asFloat(); // an integer rounded once to f32
    // Exact for an integer tensor (inf and nan read as 0, docs/dsl.md 6).
    attrs.intValue = o->literalIsFloat ? 0 : o->intLiteral;
  }
  if (nam.count("mask")) {
    ir::Value *m = lowerValue(*nam["mask"]);
    if (!m)
      return std::nullopt;
    if (m->type().elem() != ScalarKind::I1) {
      error(nam["mask"]->loc, "mask must be i1 (boolean), got " + typeName(m->type()));
      return std::nullopt;
    }
    if (m->type().isTile()) {
      auto s = broadcastShape(shape, m->type().shape(), nam["mask"]->loc, "mask");
      if (!s)
        return std::nullopt;
      if (*s != shape) {
        error(nam["mask"]->loc, "mask shape does not fit the tile");
        return std::nullopt;
      }
    }
    ops.push_back(broadcastTo(m, shape, nam["mask"]->loc));
    attrs.hasMask = true;
  }
  // The compile-time boolean hints: stream (store), cached (load), spread
  // (prefetch).
  for (auto [hint, flag] : {std::pair{"stream", &attrs.stream},
                            {"cached", &attrs.cached},
                            {"spread", &attrs.spread}}) {
    if (!nam.count(hint))
      continue;
    auto v = constEval(*nam[hint]);
    if (!v) {
      error(nam[hint]->loc, std::string("'") + hint +
                                "' must be a compile-time boolean (true, false or a bool "
                                "parameter)");
      return std::nullopt;
    }
    *flag = *v != 0;
  }
  RValue r;
  r.loc = e.loc;
  OpKind kind = n == "load"       ? OpKind::Load
                : n == "store"    ? OpKind::Store
                : n == "gather"   ? OpKind::Gather
                : n == "prefetch" ? OpKind::Prefetch
                                  : OpKind::Scatter;
  if (kind == OpKind::Prefetch) {
    attrs.extent = shape;
    b_.create(kind, e.loc, ops, {}, attrs);
    r.value = nullptr;
  } else if (isLoad) {
    r.value = emit(kind, e.loc, ops, Type::tile(tt.elem(), shape), attrs);
  } else {
    b_.create(kind, e.loc, ops, {}, attrs);
    r.value = nullptr;
  }
  return r;
}

//===----------------------------------------------------------------------===//
// Statements
//===----------------------------------------------------------------------===//

ir::Value *Sema::convertForVar(const RValue &r, const Type &t, SourceLoc loc,
                               const std::string &name) {
  ir::Value *v = r.isLiteral ? materialize(r, t.elem()) : r.value;
  if (!v)
    return nullptr;
  if (v->type() == t)
    return v;
  if (v->type().elem() == t.elem() && t.isTile()) {
    if (v->type().isScalar())
      return splatTo(v, t.shape(), loc);
    auto s = broadcastShape(v->type().shape(), t.shape(), loc, "=");
    if (s && *s == t.shape())
      return broadcastTo(v, t.shape(), loc);
  }
  error(loc, "cannot assign a value of type " + typeName(v->type()) + " to '" +
                 name + "' of type " + typeName(t));
  return nullptr;
}

void collectAssigned(const std::vector<StmtPtr> &stmts,
                     std::set<std::string> &assigned,
                     std::set<std::string> &declared) {
  for (const StmtPtr &s : stmts) {
    switch (s->kind) {
    case StmtKind::Let:
    case StmtKind::Var:
      declared.insert(s->name);
      break;
    case StmtKind::Assign:
      if (s->target->kind == ExprKind::Name && !declared.count(s->target->name))
        assigned.insert(s->target->name);
      break;
    case StmtKind::For: {
      std::set<std::string> inner = declared;
      inner.insert(s->name);
      collectAssigned(s->body, assigned, inner);
      break;
    }
    case StmtKind::If: {
      std::set<std::string> a = declared, b = declared;
      collectAssigned(s->body, assigned, a);
      collectAssigned(s->elseBody, assigned, b);
      break;
    }
    case StmtKind::Expr:
      break;
    }
  }
}

std::vector<std::string> Sema::carriedVars(const std::vector<StmtPtr> &a,
                                           const std::vector<StmtPtr> *b) {
  std::set<std::string> assigned, declared;
  collectAssigned(a, assigned, declared);
  if (b) {
    std::set<std::string> declared2;
    collectAssigned(*b, assigned, declared2);
  }
  std::vector<std::string> out;
  for (const std::string &n : assigned) {
    Binding *bnd = lookup(n);
    if (bnd && bnd->kind == Binding::Kind::Var)
      out.push_back(n);
  }
  return out;
}

bool Sema::lowerBlock(const std::vector<StmtPtr> &stmts) {
  push();
  for (const StmtPtr &s : stmts)
    if (!lowerStmt(*s)) {
      pop();
      return false;
    }
  pop();
  return true;
}

bool Sema::lowerStmt(const Stmt &s) {
  switch (s.kind) {
  case StmtKind::Let:
  case StmtKind::Var: {
    auto r = lower(*s.value);
    if (!r)
      return false;
    ir::Value *v;
    if (s.type) {
      auto t = resolveType(*s.type);
      if (!t)
        return false;
      v = convertForVar(*r, *t, s.loc, s.name);
    } else {
      v = materializeDefault(*r);
    }
    if (!v) {
      if (!diags_.hasErrors())
        error(s.value->loc, "expression has no value");
      return false;
    }
    if (v->nameHint().empty())
      v->setNameHint(s.name);
    Binding bnd;
    bnd.kind = s.kind == StmtKind::Let ? Binding::Kind::Value : Binding::Kind::Var;
    bnd.value = v;
    bnd.declType = v->type();
    if (lookup(s.name) && cparams_.count(s.name))
      return error(s.loc, "'" + s.name + "' shadows a compile-time parameter");
    return declare(s.name, bnd, s.loc);
  }
  case StmtKind::Assign:
    return lowerAssign(s);
  case StmtKind::For:
    return lowerFor(s);
  case StmtKind::If:
    return lowerIf(s);
  case StmtKind::Expr: {
    auto r = lower(*s.value);
    return r.has_value();
  }
  }
  return false;
}

bool Sema::lowerAssign(const Stmt &s) {
  const Expr &target = *s.target;
  auto r = lower(*s.value);
  if (!r)
    return false;
  if (target.kind == ExprKind::Index) {
    Binding *bnd = lookup(target.name);
    if (!bnd || bnd->kind != Binding::Kind::Tensor)
      return reportAbsent(bnd, target.name, target.loc)
                 ? false
                 : error(target.loc, "'" + target.name + "' is not a tensor");
    const Type &tt = kernel_->params[bnd->param].type;
    if (target.args.size() != tt.rank())
      return error(target.loc, "tensor '" + target.name + "' has rank " +
                                   std::to_string(tt.rank()) + " but " +
                                   std::to_string(target.args.size()) +
                                   " indices were given");
    std::vector<ir::Value *> ops{tensorValue(*bnd)};
    for (const ExprPtr &i : target.args) {
      auto iv = lower(*i);
      if (!iv)
        return false;
      ir::Value *v = toIndex(*iv, "tensor index");
      if (!v)
        return false;
      ops.push_back(v);
    }
    // `x[i] op= v` is `x[i] = x[i] op v`, the indices evaluated once.
    RValue value = *r;
    if (s.op != "=") {
      RValue cur;
      cur.value = emit(OpKind::LoadScalar, target.loc, ops, Type::scalar(tt.elem()));
      cur.loc = target.loc;
      auto c = binaryOp(s.op.substr(0, 1), cur, value, s.loc);
      if (!c)
        return false;
      value = *c;
    }
    ir::Value *v = convertForVar(value, Type::scalar(tt.elem()), s.value->loc,
                                 target.name + "[...]");
    if (!v)
      return false;
    ops.push_back(v);
    b_.create(OpKind::StoreScalar, s.loc, ops, {});
    return true;
  }
  Binding *bnd = lookup(target.name);
  if (!bnd)
    return error(target.loc, "use of undeclared name '" + target.name + "'");
  if (bnd->kind != Binding::Kind::Var)
    return error(target.loc, "cannot assign to '" + target.name +
                                 "': only 'var' declarations are mutable");
  RValue value = *r;
  if (s.op != "=") {
    RValue cur;
    cur.value = bnd->value;
    cur.loc = target.loc;
    auto c = binaryOp(s.op.substr(0, 1), cur, value, s.loc);
    if (!c)
      return false;
    value = *c;
  }
  ir::Value *v = convertForVar(value, bnd->declType, s.loc, target.name);
  if (!v)
    return false;
  bnd->value = v;
  return true;
}

void Sema::yieldCarried(const std::vector<std::string> &carried, SourceLoc loc) {
  std::vector<ir::Value *> yields;
  for (const std::string &n : carried)
    yields.push_back(lookup(n)->value);
  b_.yield(loc, yields);
}

void Sema::bindResults(ir::Op &op, const std::vector<std::string> &carried) {
  for (size_t i = 0; i < carried.size(); ++i) {
    op.result(i)->setNameHint(carried[i]);
    lookup(carried[i])->value = op.result(i);
  }
}

bool Sema::lowerFor(const Stmt &s) {
  ir::Value *bounds[3];
  const Expr *exprs[3] = {s.lower.get(), s.upper.get(), s.step.get()};
  for (int i = 0; i < 3; ++i) {
    if (!exprs[i]) {
      bounds[i] = constantInt(s.loc, ScalarKind::I64, 1);
      continue;
    }
    auto r = lower(*exprs[i]);
    if (!r)
      return false;
    bounds[i] = toIndex(*r, "loop bound");
    if (!bounds[i])
      return false;
  }
  std::vector<std::string> carried = carriedVars(s.body, nullptr);
  std::vector<ir::Value *> operands(bounds, bounds + 3);
  std::vector<Type> types;
  for (const std::string &n : carried) {
    Binding *bnd = lookup(n);
    operands.push_back(bnd->value);
    types.push_back(bnd->declType);
  }
  ir::Op *op = b_.create(OpKind::For, s.loc, operands, types);
  ir::Block *body = op->addBlock();
  ir::Value *iv = body->addArgument(Type::scalar(ScalarKind::I64));
  iv->setNameHint(s.name);
  for (size_t i = 0; i < carried.size(); ++i) {
    ir::Value *arg = body->addArgument(types[i]);
    arg->setNameHint(carried[i]);
    lookup(carried[i])->value = arg;
  }
  ir::Block *parent = b_.block();
  b_.setInsertionPointToEnd(body);
  push();
  Binding ivb;
  ivb.kind = Binding::Kind::Value;
  ivb.value = iv;
  declare(s.name, ivb, s.loc);
  bool ok = lowerBlock(s.body);
  pop();
  if (!ok)
    return false;
  yieldCarried(carried, s.loc);
  b_.setInsertionPointToEnd(parent);
  bindResults(*op, carried);
  return true;
}

bool Sema::lowerIf(const Stmt &s) {
  // A condition made of compile-time parameters selects its branch here, as
  // C++'s `if constexpr` does: the other branch is not lowered, so it may
  // use parameters absent from this specialisation.
  if (auto known = constEval(*s.cond))
    return lowerBlock(*known ? s.body : s.elseBody);
  auto c = lower(*s.cond);
  if (!c)
    return false;
  ir::Value *cond = materializeDefault(*c);
  if (!cond)
    return false;
  if (cond->type() != Type::scalar(ScalarKind::I1))
    return error(s.cond->loc, "condition of 'if' must be a scalar i1 "
                              "(boolean), got " + typeName(cond->type()));
  std::vector<std::string> carried = carriedVars(s.body, &s.elseBody);
  std::vector<Type> types;
  std::vector<ir::Value *> before;
  for (const std::string &n : carried) {
    types.push_back(lookup(n)->declType);
    before.push_back(lookup(n)->value);
  }
  ir::Op *op = b_.create(OpKind::If, s.loc, {cond}, types);
  ir::Block *parent = b_.block();
  for (int branch = 0; branch < 2; ++branch) {
    ir::Block *blk = op->addBlock();
    b_.setInsertionPointToEnd(blk);
    for (size_t i = 0; i < carried.size(); ++i)
      lookup(carried[i])->value = before[i];
    if (!lowerBlock(branch == 0 ? s.body : s.elseBody))
      return false;
    yieldCarried(carried, s.loc);
  }
  b_.setInsertionPointToEnd(parent);
  bindResults(*op, carried);
  return true;
}

//===----------------------------------------------------------------------===//
// Kernel
//===----------------------------------------------------------------------===//

std::unique_ptr<ir::Kernel> Sema::run() {
  kernel_ = std::make_unique<ir::Kernel>(k_.name);
  kernel_->loc = k_.loc;
  kernel_->localBudgetBytes = k_.budget;
  if (!bindCompileParams() || !bindParams())
    return nullptr;
  // Grid.
  inGrid_ = true;
  b_.setInsertionPointToEnd(&kernel_->grid());
  std::vector<ir::Value *> extents;
  for (const ExprPtr &g : k_.grid) {
    auto r = lower(*g);
    if (!r)
      return nullptr;
    ir::Value *v = toIndex(*r, "grid extent");
    if (!v)
      return nullptr;
    extents.push_back(v);
  }
  b_.yield(k_.loc, extents);
  inGrid_ = false;
  // Body.
  b_.setInsertionPointToEnd(&kernel_->body());
  if (!lowerBlock(k_.body))
    return nullptr;
  if (diags_.hasErrors())
    return nullptr;
  if (!ir::verify(*kernel_, diags_))
    return nullptr;
  return std::move(kernel_);
}

} // namespace

namespace {

/// Kernel `name` of `file`, or a diagnostic listing the file's kernels.
const ast::Kernel *findKernel(const ParsedFile &file, const std::string &name,
                              DiagnosticEngine &diags) {
  std::vector<std::string> names;
  for (const auto &k : file.ast().kernels) {
    if (k->name == name)
      return k.get();
    names.push_back(k->name);
  }
  std::string list;
  for (const std::string &n : names)
    list += (list.empty() ? "" : ", ") + n;
  diags.error(SourceLoc(), "no kernel named '" + name + "'" + didYouMean(name, names) +
                               (list.empty() ? "" : " (the file has: " + list + ")"));
  return nullptr;
}

} // namespace

std::optional<Specialization> bindSpecialization(const ParsedFile &file,
                                                 const std::string &kernel,
                                                 const Specialization &spec,
                                                 DiagnosticEngine &diags) {
  const ast::Kernel *k = findKernel(file, kernel, diags);
  return k ? bindValues(*k, spec, diags) : std::nullopt;
}

std::unique_ptr<ir::Kernel> lowerKernel(const ParsedFile &file,
                                        const std::string &kernel,
                                        const Specialization &spec,
                                        DiagnosticEngine &diags) {
  const ast::Kernel *k = findKernel(file, kernel, diags);
  if (!k)
    return nullptr;
  Sema sema(*k, spec, diags);
  return sema.run();
}

} // namespace tilejit::dsl
