//===- AST.h - The tile DSL's abstract syntax tree ---------------*- C++ -*-===//
///
/// \file
/// What the parser produces and sema consumes. Expressions and statements are
/// tagged structs (kind enums, no RTTI); every node carries its SourceLoc.
/// Types written in the source stay unresolved (`TypeRef`) until sema knows the
/// specialisation.
///
//===----------------------------------------------------------------------===//
#ifndef TILEJIT_DSL_SYNTAX_AST_H
#define TILEJIT_DSL_SYNTAX_AST_H

#include "dsl/support/SourceLoc.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace tilejit::dsl::ast {

struct Expr;
using ExprPtr = std::unique_ptr<Expr>;

/// A type as written: a scalar/dtype-parameter name, or `tile<T, d0, ...>`.
struct TypeRef {
  SourceLoc loc;
  std::string name;           ///< scalar name or dtype parameter ("f32", "T")
  bool isTile = false;
  std::vector<ExprPtr> dims;  ///< tile dimensions (compile-time expressions)
};

enum class ExprKind {
  IntLit,   ///< intValue
  FloatLit, ///< floatValue
  BoolLit,  ///< intValue (0/1)
  Name,     ///< name
  Unary,    ///< op ("-", "!", "~"), args[0]
  Binary,   ///< op, args[0], args[1]
  Call,     ///< name, optional typeArg, args (argNames[i] empty if positional)
  Index,    ///< name[args...]: scalar element of a tensor
  List,     ///< [args...]
};

struct Expr {
  ExprKind kind;
  SourceLoc loc;
  std::string name;
  std::string op;
  int64_t intValue = 0;
  double floatValue = 0; ///< FloatLit: the f32 nearest the decimal, held exactly
  std::unique_ptr<TypeRef> typeArg;
  std::vector<ExprPtr> args;
  std::vector<std::string> argNames;
  unsigned depth = 1; ///< nodes on the longest path down from here (parser)
};

enum class StmtKind {
  Let,    ///< name, optional type, value
  Var,    ///< name, optional type, value
  Assign, ///< target (Name or Index), op ("=", "+=", ...), value
  For,    ///< name, lower, upper, optional step, body
  If,     ///< cond, body, elseBody (may hold one nested If)
  Expr,   ///< value
};

struct Stmt;
using StmtPtr = std::unique_ptr<Stmt>;

struct Stmt {
  StmtKind kind;
  SourceLoc loc;
  std::string name;
  std::string op;
  std::unique_ptr<TypeRef> type;
  ExprPtr target, value, lower, upper, step, cond;
  std::vector<StmtPtr> body, elseBody;
  bool hasElse = false;
};

/// `T: f16|bf16`, `D: i64`, `CAUSAL: bool = false`, `L: enum(A, B)`.
struct CompileParam {
  enum class Kind { Dtype, Int, Bool, Enum } kind = Kind::Int;
  SourceLoc loc;
  std::string name;
  std::vector<std::string> choices; ///< dtype names (empty: any) or enumerators
  bool hasDefault = false;
  std::string defaultValue; ///< as text
};

/// `x: gm<T>[M, N]` or `scale: f32`.
struct Param {
  SourceLoc loc;
  std::string name;
  bool isTensor = false;
  TypeRef elemType;                 ///< element type (tensor) or scalar type
  std::vector<std::string> dims;    ///< size names, literals as text, or "_"
  std::vector<SourceLoc> dimLocs;
  /// `... if COND`: the parameter exists only in specialisations where the
  /// compile-time condition holds (null: always).
  ExprPtr guard;
};

struct Kernel {
  SourceLoc loc;
  std::string name;
  std::vector<CompileParam> cparams;
  std::vector<Param> params;
  std::vector<ExprPtr> grid;
  int64_t budget = 0;
  std::vector<StmtPtr> body;
};

struct File {
  uint32_t buffer = 0;
  std::vector<std::unique_ptr<Kernel>> kernels;
};

} // namespace tilejit::dsl::ast

#endif
