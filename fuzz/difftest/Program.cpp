//===- Program.cpp - Printing programs and regression files -----------------===//
#include "Program.h"

#include <sstream>

namespace tilejit::difftest {

const char *kindName(ElemType t) { return rt::elemTypeName(t); }

bool isFloatKind(ElemType t) {
  return t == ElemType::F16 || t == ElemType::BF16 || t == ElemType::F32;
}

bool isSignedKind(ElemType t) {
  return t == ElemType::I8 || t == ElemType::I16 || t == ElemType::I32 ||
         t == ElemType::I64;
}

unsigned kindBits(ElemType t) {
  switch (t) {
  case ElemType::I1: return 1;
  case ElemType::I8: case ElemType::U8: return 8;
  case ElemType::I16: case ElemType::U16: case ElemType::F16: case ElemType::BF16: return 16;
  case ElemType::I32: case ElemType::U32: case ElemType::F32: return 32;
  case ElemType::I64: return 64;
  }
  return 0;
}

uint64_t positionalDataSeed(uint64_t inputSeed, size_t index) {
  return inputSeed * 1000003u + index * 7919u + 17;
}

namespace {

void printExpr(const Program &p, const Expr &e, std::ostream &os) {
  switch (e.kind) {
  case Expr::Kind::Lit:
  case Expr::Kind::Name:
    os << e.text;
    return;
  case Expr::Kind::Size: {
    const Size &s = p.sizes[static_cast<size_t>(e.size)];
    if (s.param.empty())
      os << s.value;
    else
      os << s.param;
    return;
  }
  case Expr::Kind::Unary:
    os << '(' << e.text;
    printExpr(p, e.args[0], os);
    os << ')';
    return;
  case Expr::Kind::Binary:
    os << '(';
    printExpr(p, e.args[0], os);
    os << ' ' << e.text << ' ';
    printExpr(p, e.args[1], os);
    os << ')';
    return;
  case Expr::Kind::Call:
  case Expr::Kind::Index:
  case Expr::Kind::List: {
    if (e.kind == Expr::Kind::Call) {
      os << e.text;
      if (!e.typeArg.empty())
        os << '<' << e.typeArg << '>';
      os << '(';
    } else if (e.kind == Expr::Kind::Index) {
      os << e.text << '[';
    } else {
      os << '[';
    }
    for (size_t i = 0; i < e.args.size(); ++i) {
      if (i)
        os << ", ";
      if (i < e.argNames.size() && !e.argNames[i].empty())
        os << e.argNames[i] << " = ";
      printExpr(p, e.args[i], os);
    }
    os << (e.kind == Expr::Kind::Call ? ')' : ']');
    return;
  }
  }
}

void printBlock(const Program &p, const std::vector<Stmt> &body, int indent,
                std::ostream &os);

void printStmt(const Program &p, const Stmt &s, int indent, std::ostream &os) {
  std::string pad(static_cast<size_t>(indent) * 2, ' ');
  os << pad;
  switch (s.kind) {
  case Stmt::Kind::Let:
  case Stmt::Kind::Var:
    os << (s.kind == Stmt::Kind::Let ? "let " : "var ") << s.name << " = ";
    printExpr(p, s.value, os);
    os << ";\n";
    return;
  case Stmt::Kind::Assign:
    printExpr(p, s.target, os);
    os << ' ' << s.op << ' ';
    printExpr(p, s.value, os);
    os << ";\n";
    return;
  case Stmt::Kind::Expr:
    printExpr(p, s.value, os);
    os << ";\n";
    return;
  case Stmt::Kind::For:
    os << "for " << s.name << " in ";
    printExpr(p, s.lower, os);
    os << " .. ";
    printExpr(p, s.upper, os);
    if (s.hasStep) {
      os << " step ";
      printExpr(p, s.step, os);
    }
    os << " {\n";
    printBlock(p, s.body, indent + 1, os);
    os << pad << "}\n";
    return;
  case Stmt::Kind::If:
    os << "if ";
    printExpr(p, s.cond, os);
    os << " {\n";
    printBlock(p, s.body, indent + 1, os);
    os << pad << "}";
    if (s.hasElse) {
      os << " else {\n";
      printBlock(p, s.elseBody, indent + 1, os);
      os << pad << "}";
    }
    os << "\n";
    return;
  }
}

void printBlock(const Program &p, const std::vector<Stmt> &body, int indent,
                std::ostream &os) {
  for (const Stmt &s : body)
    printStmt(p, s, indent, os);
}

std::string join(const std::vector<int64_t> &v) {
  std::ostringstream os;
  for (size_t i = 0; i < v.size(); ++i)
    os << (i ? "," : "") << v[i];
  return os.str();
}

std::vector<int64_t> splitInts(const std::string &s) {
  std::vector<int64_t> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ','))
    if (!item.empty())
      out.push_back(std::stoll(item));
  return out;
}

} // namespace

std::string printKernel(const Program &p) {
  std::ostringstream os;
  os << "kernel " << p.kernel;
  if (!p.cparams.empty()) {
    os << '<';
    for (size_t i = 0; i < p.cparams.size(); ++i)
      os << (i ? ", " : "") << p.cparams[i].name << ": " << p.cparams[i].decl;
    os << '>';
  }
  os << '(';
  for (size_t i = 0; i < p.args.size(); ++i) {
    const ArgSpec &a = p.args[i];
    os << (i ? ", " : "") << a.name << ": ";
    std::string type = a.typeName.empty() ? kindName(a.type) : a.typeName;
    if (!a.isTensor) {
      os << type;
    } else {
      os << "gm<" << type << ">[";
      for (size_t d = 0; d < a.dimNames.size(); ++d)
        os << (d ? ", " : "") << a.dimNames[d];
      os << ']';
    }
    if (!a.guard.empty())
      os << " if " << a.guard;
  }
  os << ") grid(";
  for (size_t i = 0; i < p.grid.size(); ++i) {
    if (i)
      os << ", ";
    printExpr(p, p.grid[i], os);
  }
  os << ") {\n";
  printBlock(p, p.body, 1, os);
  os << "}\n";
  return os.str();
}

std::vector<std::pair<std::string, std::string>> specOf(const Program &p) {
  std::vector<std::pair<std::string, std::string>> spec;
  for (const CompileParam &c : p.cparams)
    if (!c.value.empty())
      spec.emplace_back(c.name, c.value);
  return spec;
}

// The header, one `// difftest:` line per item:
//   // difftest: class mismatch-levels seed 123 inputs 456 kernel k
//   // difftest: set T=f16
//   // difftest: tensor x f32 shape 5,7 strides 9,1 offset 2 storage 48 exact 1 data 99
// (`data`: the seed of the tensor's contents; without it, the one of its
// position, positionalDataSeed). An absent conditional parameter has no line.
//   // difftest: scalar n i64 17
//   // difftest: scalar a f32 0x3f800000
std::string printRegression(const Program &p, const std::string &failureClass,
                            const std::string &detail) {
  std::ostringstream os;
  os << "// difftest: class " << failureClass << " seed " << p.seed << " inputs "
     << p.inputSeed << " kernel " << p.kernel << "\n";
  for (const auto &[name, value] : specOf(p))
    os << "// difftest: set " << name << "=" << value << "\n";
  for (const ArgSpec &a : p.args) {
    if (!a.present)
      continue;
    if (a.isTensor) {
      os << "// difftest: tensor " << a.name << " " << kindName(a.type) << " shape "
         << join(a.shape) << " strides " << join(a.strides) << " offset " << a.offset
         << " storage " << a.storage << " exact " << (a.exact ? 1 : 0) << " data "
         << a.dataSeed << "\n";
    } else if (a.type == ElemType::F32) {
      char buf[16];
      snprintf(buf, sizeof buf, "0x%08x", a.floatBits);
      os << "// difftest: scalar " << a.name << " f32 " << buf << "\n";
    } else {
      os << "// difftest: scalar " << a.name << " " << kindName(a.type) << " "
         << a.intValue << "\n";
    }
  }
  std::istringstream lines(detail);
  std::string line;
  while (std::getline(lines, line))
    os << "// " << line << "\n";
  os << printKernel(p);
  return os.str();
}

std::optional<std::string> parseRegression(const std::string &file, Program &p,
                                           std::string &text) {
  std::istringstream in(file);
  std::string line;
  const std::string tag = "// difftest: ";
  bool sawClass = false;
  while (std::getline(in, line)) {
    if (line.rfind(tag, 0) != 0)
      continue;
    std::istringstream ws(line.substr(tag.size()));
    std::string what;
    ws >> what;
    if (what == "class") {
      std::string cls, k;
      while (ws >> k) {
        if (k == "seed")
          ws >> p.seed;
        else if (k == "inputs")
          ws >> p.inputSeed;
        else if (k == "kernel")
          ws >> p.kernel;
        else if (cls.empty())
          cls = k;
      }
      sawClass = true;
    } else if (what == "set") {
      std::string kv;
      ws >> kv;
      size_t eq = kv.find('=');
      if (eq == std::string::npos)
        return "malformed 'set' line: " + line;
      p.cparams.push_back({kv.substr(0, eq), "", kv.substr(eq + 1)});
    } else if (what == "tensor" || what == "scalar") {
      ArgSpec a;
      std::string kind;
      ws >> a.name >> kind;
      if (!rt::parseElemType(kind, a.type))
        return "unknown element kind in: " + line;
      a.isTensor = what == "tensor";
      a.dataSeed = positionalDataSeed(p.inputSeed, p.args.size());
      if (a.isTensor) {
        std::string k, v;
        while (ws >> k >> v) {
          if (k == "shape")
            a.shape = splitInts(v);
          else if (k == "strides")
            a.strides = splitInts(v);
          else if (k == "offset")
            a.offset = std::stoll(v);
          else if (k == "storage")
            a.storage = std::stoll(v);
          else if (k == "exact")
            a.exact = v == "1";
          else if (k == "data")
            a.dataSeed = std::stoull(v);
        }
        if (a.shape.size() != a.strides.size() || a.shape.empty())
          return "shape and strides disagree in: " + line;
      } else {
        std::string v;
        ws >> v;
        if (a.type == ElemType::F32)
          a.floatBits = static_cast<uint32_t>(std::stoul(v, nullptr, 0));
        else
          a.intValue = std::stoll(v);
      }
      p.args.push_back(a);
    }
  }
  if (!sawClass)
    return std::string("no '// difftest: class' header line");
  text = file;
  return std::nullopt;
}

} // namespace tilejit::difftest
