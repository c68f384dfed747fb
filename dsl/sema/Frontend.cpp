//===- Frontend.cpp - The front end's public entry points -----------------===//
#include "dsl/Frontend.h"

#include "dsl/syntax/AST.h"
#include "dsl/syntax/Parser.h"

#include <sstream>

namespace tilejit::dsl {

ParsedFile::ParsedFile(std::unique_ptr<ast::File> f) : file_(std::move(f)) {}
ParsedFile::~ParsedFile() = default;
ParsedFile::ParsedFile(ParsedFile &&) noexcept = default;
ParsedFile &ParsedFile::operator=(ParsedFile &&) noexcept = default;

std::vector<std::string> ParsedFile::kernelNames() const {
  std::vector<std::string> out;
  for (const auto &k : file_->kernels)
    out.push_back(k->name);
  return out;
}

std::vector<std::string>
ParsedFile::compileTimeParams(const std::string &kernel) const {
  std::vector<std::string> out;
  for (const auto &k : file_->kernels) {
    if (k->name != kernel)
      continue;
    for (const ast::CompileParam &p : k->cparams) {
      std::string s = p.name + ": ";
      switch (p.kind) {
      case ast::CompileParam::Kind::Dtype:
        if (p.choices.empty())
          s += "type";
        for (size_t i = 0; i < p.choices.size(); ++i)
          s += (i ? "|" : "") + p.choices[i];
        break;
      case ast::CompileParam::Kind::Int: s += "i64"; break;
      case ast::CompileParam::Kind::Bool: s += "bool"; break;
      case ast::CompileParam::Kind::Enum:
        s += "enum(";
        for (size_t i = 0; i < p.choices.size(); ++i)
          s += (i ? ", " : "") + p.choices[i];
        s += ")";
        break;
      }
      if (p.hasDefault)
        s += " = " + p.defaultValue;
      out.push_back(s);
    }
  }
  return out;
}

std::unique_ptr<ParsedFile> parse(DiagnosticEngine &diags, uint32_t buffer) {
  auto file = parseFile(diags, buffer);
  if (!file)
    return nullptr;
  return std::make_unique<ParsedFile>(std::move(file));
}

namespace {

class AstPrinter {
public:
  std::string str() { return os_.str(); }

  void line(int depth, const std::string &text, const SourceLoc &loc) {
    os_ << std::string(2 * depth, ' ') << text << " <" << loc.line << ":"
        << loc.column << ">\n";
  }

  void type(int depth, const std::string &label, const ast::TypeRef &t) {
    line(depth, label + " " + (t.isTile ? "tile<" + t.name + ">" : t.name),
         t.loc);
    for (const auto &d : t.dims)
      expr(depth + 1, *d);
  }

  void expr(int depth, const ast::Expr &e, const std::string &label = "") {
    std::string p = label.empty() ? "" : label + "=";
    switch (e.kind) {
    case ast::ExprKind::IntLit:
      line(depth, p + "Int " + std::to_string(e.intValue), e.loc);
      return;
    case ast::ExprKind::FloatLit: {
      std::ostringstream f;
      f << e.floatValue;
      line(depth, p + "Float " + f.str(), e.loc);
      return;
    }
    case ast::ExprKind::BoolLit:
      line(depth, p + std::string("Bool ") + (e.intValue ? "true" : "false"),
           e.loc);
      return;
    case ast::ExprKind::Name:
      line(depth, p + "Name " + e.name, e.loc);
      return;
    case ast::ExprKind::Unary:
      line(depth, p + "Unary " + e.op, e.loc);
      break;
    case ast::ExprKind::Binary:
      line(depth, p + "Binary " + e.op, e.loc);
      break;
    case ast::ExprKind::Call:
      line(depth, p + "Call " + e.name, e.loc);
      if (e.typeArg)
        type(depth + 1, "TypeArg", *e.typeArg);
      break;
    case ast::ExprKind::Index:
      line(depth, p + "Index " + e.name, e.loc);
      break;
    case ast::ExprKind::List:
      line(depth, p + "List", e.loc);
      break;
    }
    for (size_t i = 0; i < e.args.size(); ++i)
      expr(depth + 1, *e.args[i], i < e.argNames.size() ? e.argNames[i] : "");
  }

  void stmts(int depth, const std::vector<ast::StmtPtr> &ss) {
    for (const auto &s : ss)
      stmt(depth, *s);
  }

  void stmt(int depth, const ast::Stmt &s) {
    switch (s.kind) {
    case ast::StmtKind::Let:
    case ast::StmtKind::Var:
      line(depth, std::string(s.kind == ast::StmtKind::Let ? "Let " : "Var ") +
                      s.name, s.loc);
      if (s.type)
        type(depth + 1, "Type", *s.type);
      expr(depth + 1, *s.value);
      return;
    case ast::StmtKind::Assign:
      line(depth, "Assign " + s.op, s.loc);
      expr(depth + 1, *s.target);
      expr(depth + 1, *s.value);
      return;
    case ast::StmtKind::For:
      line(depth, "For " + s.name, s.loc);
      expr(depth + 1, *s.lower, "lower");
      expr(depth + 1, *s.upper, "upper");
      if (s.step)
        expr(depth + 1, *s.step, "step");
      stmts(depth + 1, s.body);
      return;
    case ast::StmtKind::If:
      line(depth, "If", s.loc);
      expr(depth + 1, *s.cond, "cond");
      stmts(depth + 1, s.body);
      if (s.hasElse) {
        line(depth, "Else", s.loc);
        stmts(depth + 1, s.elseBody);
      }
      return;
    case ast::StmtKind::Expr:
      line(depth, "ExprStmt", s.loc);
      expr(depth + 1, *s.value);
      return;
    }
  }

  void kernel(const ast::Kernel &k) {
    line(0, "Kernel " + k.name, k.loc);
    for (const auto &p : k.cparams) {
      std::string kind[] = {"dtype", "i64", "bool", "enum"};
      std::string text = "CompileParam " + p.name + " " +
                         kind[static_cast<int>(p.kind)];
      for (const auto &c : p.choices)
        text += " " + c;
      if (p.hasDefault)
        text += " = " + p.defaultValue;
      line(1, text, p.loc);
    }
    for (const auto &p : k.params) {
      std::string text = "Param " + p.name + (p.isTensor ? " gm<" : " ") +
                         p.elemType.name + (p.isTensor ? ">[" : "");
      for (size_t i = 0; i < p.dims.size(); ++i)
        text += (i ? ", " : "") + p.dims[i];
      line(1, text + (p.isTensor ? "]" : ""), p.loc);
      if (p.guard)
        expr(2, *p.guard, "if");
    }
    for (const auto &g : k.grid)
      expr(1, *g, "grid");
    if (k.budget)
      line(1, "Budget " + std::to_string(k.budget), k.loc);
    stmts(1, k.body);
  }

private:
  std::ostringstream os_;
};

} // namespace

std::string printAST(const ParsedFile &file) {
  AstPrinter p;
  for (const auto &k : file.ast().kernels)
    p.kernel(*k);
  return p.str();
}

} // namespace tilejit::dsl
