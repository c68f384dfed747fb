//===- Parser.cpp - Recursive-descent parser of the tile DSL --------------===//
#include "dsl/syntax/Parser.h"

#include "dsl/syntax/Lexer.h"

#include <algorithm>
#include <set>

namespace tilejit::dsl {

using namespace ast;

bool takesTypeArgument(const std::string &builtin) {
  return builtin == "cast" || builtin == "bitcast" || builtin == "full" ||
         builtin == "zeros" || builtin == "iota";
}

namespace {

class Parser {
public:
  Parser(DiagnosticEngine &diags, uint32_t buffer) : diags_(diags) {
    Lexer lexer(diags, buffer);
    for (;;) {
      tokens_.push_back(lexer.next());
      if (tokens_.back().kind == TokenKind::Eof ||
          tokens_.back().kind == TokenKind::Error)
        break;
    }
  }

  std::unique_ptr<File> parseFile(uint32_t buffer);

private:
  const Token &tok() const { return tokens_[pos_]; }
  const Token &peek(size_t n = 1) const {
    return tokens_[std::min(pos_ + n, tokens_.size() - 1)];
  }
  void advance() {
    if (pos_ + 1 < tokens_.size())
      ++pos_;
  }
  bool failed() const { return failed_; }
  bool fail(const std::string &msg) {
    if (!failed_ && tok().kind != TokenKind::Error)
      diags_.error(tok().loc, msg);
    failed_ = true;
    return false;
  }
  bool expect(const char *punct, const std::string &context) {
    if (tok().is(punct)) {
      advance();
      return true;
    }
    return fail(std::string("expected '") + punct + "' " + context);
  }
  bool accept(const char *punct) {
    if (!tok().is(punct))
      return false;
    advance();
    return true;
  }
  bool expectIdent(std::string &out, const std::string &what) {
    if (tok().kind != TokenKind::Ident || isKeyword(tok().text))
      return fail("expected " + what);
    out = tok().text;
    advance();
    return true;
  }
  static bool isKeyword(const std::string &s) {
    static const std::set<std::string> kw = {
        "kernel", "grid", "budget", "let", "var", "for", "in", "step",
        "if", "else", "gm", "true", "false"};
    return kw.count(s) != 0;
  }

  std::unique_ptr<Kernel> parseKernel();
  bool parseCompileParam(CompileParam &p);
  bool parseParam(Param &p);
  bool parseParamType(Param &p);
  bool parseTypeRef(TypeRef &t, const std::string &context);
  bool parseBlock(std::vector<StmtPtr> &out, const std::string &context);
  StmtPtr parseStmt();
  StmtPtr parseIf();
  ExprPtr parseExpr(int minPrec = 0);
  ExprPtr parseUnary();
  ExprPtr parsePrimary();
  bool parseArgs(Expr &call, const char *close, const std::string &context);

  /// Counts one level of recursion for as long as it lives.
  struct DepthGuard {
    unsigned &depth;
    explicit DepthGuard(unsigned &d) : depth(++d) {}
    ~DepthGuard() { --depth; }
    DepthGuard(const DepthGuard &) = delete;
    DepthGuard &operator=(const DepthGuard &) = delete;
  };
  bool exprTooDeep(unsigned depth) {
    if (depth <= kMaxNestingDepth)
      return false;
    fail("expression nests deeper than the limit of " +
         std::to_string(kMaxNestingDepth) +
         " (operators, calls, indices and parentheses)");
    return true;
  }
  bool stmtTooDeep() {
    if (stmtDepth_ <= kMaxNestingDepth)
      return false;
    fail("statement nests deeper than the limit of " +
         std::to_string(kMaxNestingDepth) +
         " (blocks and 'else if' branches)");
    return true;
  }
  /// Sets `e`'s depth from its operands (and type argument); false (with a
  /// diagnostic) past the limit.
  bool setDepth(Expr &e) {
    unsigned below = 0;
    for (const ExprPtr &a : e.args)
      below = std::max(below, a->depth);
    if (e.typeArg)
      for (const ExprPtr &d : e.typeArg->dims)
        below = std::max(below, d->depth);
    e.depth = below + 1;
    return !exprTooDeep(e.depth);
  }

  DiagnosticEngine &diags_;
  std::vector<Token> tokens_;
  size_t pos_ = 0;
  bool failed_ = false;
  unsigned exprDepth_ = 0, stmtDepth_ = 0; ///< active recursion
};

ExprPtr makeExpr(ExprKind kind, SourceLoc loc) {
  auto e = std::make_unique<Expr>();
  e->kind = kind;
  e->loc = loc;
  return e;
}

/// file ::= kernel*
std::unique_ptr<File> Parser::parseFile(uint32_t buffer) {
  auto file = std::make_unique<File>();
  file->buffer = buffer;
  while (tok().kind != TokenKind::Eof && !failed()) {
    if (tok().kind == TokenKind::Error)
      return nullptr;
    if (!tok().isIdent("kernel")) {
      fail("expected 'kernel' at top level");
      break;
    }
    auto k = parseKernel();
    if (!k)
      break;
    file->kernels.push_back(std::move(k));
  }
  if (failed() || tok().kind == TokenKind::Error || diags_.hasErrors())
    return nullptr;
  return file;
}

/// kernel ::= 'kernel' ident cparams? '(' params? ')' 'grid' '(' expr
///            (',' expr)* ')' ('budget' '(' int ')')? block
std::unique_ptr<Kernel> Parser::parseKernel() {
  auto k = std::make_unique<Kernel>();
  k->loc = tok().loc;
  advance();
  if (!expectIdent(k->name, "kernel name after 'kernel'"))
    return nullptr;
  if (accept("<")) {
    do {
      CompileParam p;
      if (!parseCompileParam(p))
        return nullptr;
      k->cparams.push_back(std::move(p));
    } while (accept(","));
    if (!expect(">", "after compile-time parameters"))
      return nullptr;
  }
  if (!expect("(", "before kernel parameters"))
    return nullptr;
  if (!tok().is(")")) {
    do {
      Param p;
      if (!parseParam(p))
        return nullptr;
      k->params.push_back(std::move(p));
    } while (accept(","));
  }
  if (!expect(")", "after kernel parameters"))
    return nullptr;
  if (!tok().isIdent("grid")) {
    fail("expected 'grid(...)' after kernel parameters");
    return nullptr;
  }
  advance();
  if (!expect("(", "after 'grid'"))
    return nullptr;
  do {
    auto e = parseExpr();
    if (!e)
      return nullptr;
    k->grid.push_back(std::move(e));
  } while (accept(","));
  if (!expect(")", "after grid extents"))
    return nullptr;
  if (k->grid.size() > 3) {
    diags_.error(k->grid[3]->loc, "a grid has at most 3 axes");
    failed_ = true;
    return nullptr;
  }
  if (tok().isIdent("budget")) {
    advance();
    if (!expect("(", "after 'budget'"))
      return nullptr;
    if (tok().kind != TokenKind::Int) {
      fail("expected a byte count in 'budget(...)'");
      return nullptr;
    }
    k->budget = tok().intValue;
    advance();
    if (!expect(")", "after the budget"))
      return nullptr;
  }
  if (!parseBlock(k->body, "kernel body"))
    return nullptr;
  return k;
}

/// cparam ::= ident ':' ctype ('=' default)?
/// ctype  ::= dtype ('|' dtype)+ | 'type' ('(' dtype ('|' dtype)* ')')?
///          | 'i64' | 'bool' | 'enum' '(' ident (',' ident)* ')'
bool Parser::parseCompileParam(CompileParam &p) {
  p.loc = tok().loc;
  if (!expectIdent(p.name, "compile-time parameter name"))
    return false;
  if (!expect(":", "after compile-time parameter name"))
    return false;
  if (tok().kind != TokenKind::Ident)
    return fail("expected a kind (a dtype list, 'type', 'i64', 'bool' or "
                "'enum(...)') for compile-time parameter '" + p.name + "'");
  std::string first = tok().text;
  advance();
  if (first == "enum") {
    p.kind = CompileParam::Kind::Enum;
    if (!expect("(", "after 'enum'"))
      return false;
    do {
      std::string e;
      if (!expectIdent(e, "enumerator name"))
        return false;
      p.choices.push_back(e);
    } while (accept(","));
    if (!expect(")", "after enumerators"))
      return false;
  } else if (first == "type") {
    p.kind = CompileParam::Kind::Dtype;
    if (accept("(")) {
      do {
        std::string e;
        if (!expectIdent(e, "dtype name"))
          return false;
        p.choices.push_back(e);
      } while (accept("|"));
      if (!expect(")", "after dtype list"))
        return false;
    }
  } else if (tok().is("|")) {
    p.kind = CompileParam::Kind::Dtype;
    p.choices.push_back(first);
    while (accept("|")) {
      std::string e;
      if (!expectIdent(e, "dtype name after '|'"))
        return false;
      p.choices.push_back(e);
    }
  } else if (first == "i64") {
    p.kind = CompileParam::Kind::Int;
  } else if (first == "bool") {
    p.kind = CompileParam::Kind::Bool;
  } else {
    p.kind = CompileParam::Kind::Dtype;
    p.choices.push_back(first);
  }
  if (accept("=")) {
    p.hasDefault = true;
    bool negative = accept("-");
    if (tok().kind != TokenKind::Ident && tok().kind != TokenKind::Int)
      return fail("expected a default value for '" + p.name + "'");
    p.defaultValue = (negative ? "-" : "") + tok().text;
    advance();
  }
  return true;
}

/// param ::= ident ':' paramtype ('if' expr)?
/// paramtype ::= 'gm' '<' typeref '>' '[' dim (',' dim)* ']' | scalartype
bool Parser::parseParam(Param &p) {
  if (!parseParamType(p))
    return false;
  if (tok().isIdent("if")) {
    advance();
    p.guard = parseExpr();
    if (!p.guard)
      return false;
  }
  return true;
}

bool Parser::parseParamType(Param &p) {
  p.loc = tok().loc;
  if (!expectIdent(p.name, "parameter name"))
    return false;
  if (!expect(":", "after parameter name"))
    return false;
  if (tok().isIdent("gm")) {
    advance();
    p.isTensor = true;
    if (!expect("<", "after 'gm'"))
      return false;
    if (!parseTypeRef(p.elemType, "tensor element type"))
      return false;
    if (!expect(">", "after tensor element type"))
      return false;
    if (!expect("[", "before tensor dimensions"))
      return false;
    do {
      if (tok().kind == TokenKind::Ident || tok().kind == TokenKind::Int) {
        p.dims.push_back(tok().text);
        p.dimLocs.push_back(tok().loc);
        advance();
      } else {
        return fail("expected a size name, an integer or '_' in tensor "
                    "dimensions");
      }
    } while (accept(","));
    if (!expect("]", "after tensor dimensions"))
      return false;
    if (p.dims.size() > 6) {
      diags_.error(p.loc, "tensor '" + p.name + "' has rank " +
                              std::to_string(p.dims.size()) +
                              "; at most 6 is supported");
      failed_ = true;
      return false;
    }
    return true;
  }
  return parseTypeRef(p.elemType, "parameter type");
}

/// typeref ::= ident | 'tile' '<' typeref (',' expr)+ '>'
bool Parser::parseTypeRef(TypeRef &t, const std::string &context) {
  t.loc = tok().loc;
  if (tok().kind != TokenKind::Ident)
    return fail("expected a type in " + context);
  if (tok().text == "tile") {
    advance();
    t.isTile = true;
    if (!expect("<", "after 'tile'"))
      return false;
    if (tok().kind != TokenKind::Ident)
      return fail("expected an element type in tile type");
    t.name = tok().text;
    advance();
    while (accept(",")) {
      auto e = parseExpr(/*minPrec=*/9); // stop before '>'
      if (!e)
        return false;
      t.dims.push_back(std::move(e));
    }
    if (t.dims.empty())
      return fail("expected ',' and dimensions in tile type");
    return expect(">", "after tile type");
  }
  t.name = tok().text;
  advance();
  return true;
}

/// block ::= '{' stmt* '}'
bool Parser::parseBlock(std::vector<StmtPtr> &out, const std::string &context) {
  if (!expect("{", "to open " + context))
    return false;
  while (!tok().is("}")) {
    if (tok().kind == TokenKind::Eof)
      return fail("expected '}' to close " + context);
    auto s = parseStmt();
    if (!s)
      return false;
    out.push_back(std::move(s));
  }
  advance();
  return true;
}

StmtPtr makeStmt(StmtKind kind, SourceLoc loc) {
  auto s = std::make_unique<Stmt>();
  s->kind = kind;
  s->loc = loc;
  return s;
}

/// stmt ::= ('let'|'var') ident (':' typeref)? '=' expr ';'
///        | lvalue ('='|'+='|'-='|'*='|'/=') expr ';'
///        | 'for' ident 'in' expr '..' expr ('step' expr)? block
///        | 'if' expr block ('else' (block | if))?
///        | expr ';'
StmtPtr Parser::parseStmt() {
  DepthGuard guard(stmtDepth_);
  if (stmtTooDeep())
    return nullptr;
  SourceLoc loc = tok().loc;
  if (tok().isIdent("let") || tok().isIdent("var")) {
    bool isLet = tok().text == "let";
    advance();
    auto s = makeStmt(isLet ? StmtKind::Let : StmtKind::Var, loc);
    if (!expectIdent(s->name, std::string("a name after '") +
                                  (isLet ? "let" : "var") + "'"))
      return nullptr;
    if (accept(":")) {
      s->type = std::make_unique<TypeRef>();
      if (!parseTypeRef(*s->type, "declaration"))
        return nullptr;
    }
    if (!expect("=", "in declaration of '" + s->name + "'"))
      return nullptr;
    s->value = parseExpr();
    if (!s->value || !expect(";", "after declaration"))
      return nullptr;
    return s;
  }
  if (tok().isIdent("for")) {
    advance();
    auto s = makeStmt(StmtKind::For, loc);
    if (!expectIdent(s->name, "a loop variable after 'for'"))
      return nullptr;
    if (!tok().isIdent("in")) {
      fail("expected 'in' after loop variable");
      return nullptr;
    }
    advance();
    s->lower = parseExpr();
    if (!s->lower || !expect("..", "in for range"))
      return nullptr;
    s->upper = parseExpr();
    if (!s->upper)
      return nullptr;
    if (tok().isIdent("step")) {
      advance();
      s->step = parseExpr();
      if (!s->step)
        return nullptr;
    }
    if (!parseBlock(s->body, "for body"))
      return nullptr;
    return s;
  }
  if (tok().isIdent("if"))
    return parseIf();
  auto e = parseExpr();
  if (!e)
    return nullptr;
  static const char *const assignOps[] = {"=", "+=", "-=", "*=", "/="};
  for (const char *op : assignOps) {
    if (!tok().is(op))
      continue;
    if (e->kind != ExprKind::Name && e->kind != ExprKind::Index) {
      fail("expected a variable or tensor element on the left of '" +
           std::string(op) + "'");
      return nullptr;
    }
    advance();
    auto s = makeStmt(StmtKind::Assign, loc);
    s->op = op;
    s->target = std::move(e);
    s->value = parseExpr();
    if (!s->value || !expect(";", "after assignment"))
      return nullptr;
    return s;
  }
  auto s = makeStmt(StmtKind::Expr, loc);
  s->value = std::move(e);
  if (!expect(";", "after expression statement"))
    return nullptr;
  return s;
}

StmtPtr Parser::parseIf() {
  auto s = makeStmt(StmtKind::If, tok().loc);
  advance();
  s->cond = parseExpr();
  if (!s->cond || !parseBlock(s->body, "if body"))
    return nullptr;
  if (tok().isIdent("else")) {
    advance();
    s->hasElse = true;
    if (tok().isIdent("if")) {
      // An `else if` is an `if` inside the previous one's else: one level
      // more.
      DepthGuard guard(stmtDepth_);
      if (stmtTooDeep())
        return nullptr;
      auto nested = parseIf();
      if (!nested)
        return nullptr;
      s->elseBody.push_back(std::move(nested));
    } else if (!parseBlock(s->elseBody, "else body")) {
      return nullptr;
    }
  }
  return s;
}

int precedence(const Token &t) {
  if (t.kind != TokenKind::Punct)
    return -1;
  static const std::pair<const char *, int> table[] = {
      {"||", 1}, {"&&", 2}, {"|", 3},  {"^", 4},  {"&", 5},  {"==", 6},
      {"!=", 6}, {"<", 7},  {"<=", 7}, {">", 7},  {">=", 7}, {"<<", 8},
      {">>", 8}, {"+", 9},  {"-", 9},  {"*", 10}, {"/", 10}, {"%", 10}};
  for (auto &[op, prec] : table)
    if (t.text == op)
      return prec;
  return -1;
}

/// expr ::= unary (binop unary)*   (precedence climbing, left-associative)
ExprPtr Parser::parseExpr(int minPrec) {
  auto lhs = parseUnary();
  if (!lhs)
    return nullptr;
  for (;;) {
    int prec = precedence(tok());
    if (prec < 0 || prec < minPrec)
      return lhs;
    std::string op = tok().text;
    advance();
    auto rhs = parseExpr(prec + 1);
    if (!rhs)
      return nullptr;
    auto bin = makeExpr(ExprKind::Binary, SourceLoc::span(lhs->loc, rhs->loc));
    bin->op = op;
    bin->args.push_back(std::move(lhs));
    bin->args.push_back(std::move(rhs));
    if (!setDepth(*bin))
      return nullptr;
    lhs = std::move(bin);
  }
}

/// unary ::= ('-' | '!' | '~') unary | primary
ExprPtr Parser::parseUnary() {
  // Every nested expression (an operand of a unary operator, a parenthesised
  // expression, an argument, an index) passes through here.
  DepthGuard guard(exprDepth_);
  if (exprTooDeep(exprDepth_))
    return nullptr;
  if (tok().is("-") || tok().is("!") || tok().is("~")) {
    SourceLoc loc = tok().loc;
    std::string op = tok().text;
    advance();
    auto operand = parseUnary();
    if (!operand)
      return nullptr;
    auto e = makeExpr(ExprKind::Unary, SourceLoc::span(loc, operand->loc));
    e->op = op;
    e->args.push_back(std::move(operand));
    if (!setDepth(*e))
      return nullptr;
    return e;
  }
  return parsePrimary();
}

/// args ::= arg (',' arg)* ; arg ::= expr | ident '=' expr
bool Parser::parseArgs(Expr &call, const char *close,
                       const std::string &context) {
  if (accept(close))
    return true;
  do {
    std::string argName;
    if (tok().kind == TokenKind::Ident && peek().is("=")) {
      argName = tok().text;
      advance();
      advance();
    }
    auto e = parseExpr();
    if (!e)
      return false;
    call.args.push_back(std::move(e));
    call.argNames.push_back(argName);
  } while (accept(","));
  return expect(close, "after " + context);
}

/// primary ::= int | float | 'true' | 'false' | '(' expr ')' | '[' args ']'
///           | ident ('<' typeref '>')? '(' args ')' | ident '[' args ']'
///           | ident
ExprPtr Parser::parsePrimary() {
  const Token &t = tok();
  SourceLoc loc = t.loc;
  switch (t.kind) {
  case TokenKind::Int: {
    auto e = makeExpr(ExprKind::IntLit, loc);
    e->intValue = t.intValue;
    advance();
    return e;
  }
  case TokenKind::Float: {
    auto e = makeExpr(ExprKind::FloatLit, loc);
    e->floatValue = t.floatValue;
    advance();
    return e;
  }
  case TokenKind::Ident: {
    if (t.text == "true" || t.text == "false") {
      auto e = makeExpr(ExprKind::BoolLit, loc);
      e->intValue = t.text == "true";
      advance();
      return e;
    }
    if (isKeyword(t.text)) {
      fail("expected an expression, found keyword '" + t.text + "'");
      return nullptr;
    }
    std::string name = t.text;
    advance();
    std::unique_ptr<TypeRef> typeArg;
    if (tok().is("<") && takesTypeArgument(name)) {
      advance();
      typeArg = std::make_unique<TypeRef>();
      if (!parseTypeRef(*typeArg, "type argument of '" + name + "'"))
        return nullptr;
      if (!expect(">", "after type argument of '" + name + "'"))
        return nullptr;
      if (!tok().is("(")) {
        fail("expected '(' after '" + name + "<...>'");
        return nullptr;
      }
    }
    if (tok().is("(")) {
      advance();
      auto e = makeExpr(ExprKind::Call, loc);
      e->name = name;
      e->typeArg = std::move(typeArg);
      if (!parseArgs(*e, ")", "arguments of '" + name + "'"))
        return nullptr;
      e->loc = SourceLoc::span(loc, tokens_[pos_ - 1].loc);
      if (!setDepth(*e))
        return nullptr;
      return e;
    }
    if (tok().is("[")) {
      advance();
      auto e = makeExpr(ExprKind::Index, loc);
      e->name = name;
      if (!parseArgs(*e, "]", "indices of '" + name + "'"))
        return nullptr;
      e->loc = SourceLoc::span(loc, tokens_[pos_ - 1].loc);
      if (!setDepth(*e))
        return nullptr;
      return e;
    }
    auto e = makeExpr(ExprKind::Name, loc);
    e->name = name;
    return e;
  }
  case TokenKind::Punct:
    if (t.is("(")) {
      advance();
      auto e = parseExpr();
      if (!e || !expect(")", "to close parenthesised expression"))
        return nullptr;
      return e;
    }
    if (t.is("[")) {
      advance();
      auto e = makeExpr(ExprKind::List, loc);
      if (!parseArgs(*e, "]", "list"))
        return nullptr;
      e->loc = SourceLoc::span(loc, tokens_[pos_ - 1].loc);
      if (!setDepth(*e))
        return nullptr;
      return e;
    }
    break;
  default:
    break;
  }
  if (t.kind == TokenKind::Eof)
    fail("expected an expression before end of file");
  else
    fail("expected an expression, found '" + t.text + "'");
  return nullptr;
}

} // namespace

std::unique_ptr<ast::File> parseFile(DiagnosticEngine &diags,
                                     uint32_t buffer) {
  Parser p(diags, buffer);
  return p.parseFile(buffer);
}

} // namespace tilejit::dsl
