//===- IRParser.cpp - Text to Tile IR -------------------------------------===//
//
// A hand-written lexer and recursive-descent parser for the textual Tile IR
// of dsl/ir/Printer.cpp. Grammar (newlines are insignificant; `//` starts a
// comment that runs to the end of the line):
//
//   module     ::= kernel*
//   kernel     ::= 'kernel' '@' name '(' (param (',' param)*)? ')' '{'
//                  header* 'grid' region 'body' region '}'
//   param      ::= '%' name ':' type
//   header     ::= 'spec' specItem (',' specItem)*
//                | 'budget' int | 'scratch' int
//                | 'constraint' '%' p '.' axis '==' (int | '%' q '.' axis) str
//   region     ::= '{' ('^' '(' blockArg (',' blockArg)* ')' ':')? op* '}'
//   blockArg   ::= '%' id ':' type buf?
//   op         ::= (result (',' result)* '=')? mnemonic (value (',' value)*)?
//                  attrs? (':' type (',' type)* buf*)? loc? region?
//                  ('else' region)?
//   buf        ::= 'buf' '(' (int ':')? int ')'
//   attrs      ::= '{' attr (',' attr)* '}'   (ops without regions only)
//
//===----------------------------------------------------------------------===//
#include "dsl/ir/IRParser.h"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <map>

namespace tilejit::ir {

namespace {

enum class Tok : uint8_t {
  Eof,
  Ident,   ///< bare word: kernel, tile, f32, axis, inf, ...
  Percent, ///< %name or %12 (text without the '%')
  At,      ///< @name (text without the '@')
  Int,     ///< -?[0-9]+
  Float,   ///< a number with '.', 'e', or the words inf/nan after '-'
  String,  ///< "..." (text unescaped, without quotes)
  Punct,   ///< one of ( ) { } [ ] < > , : = ^ . and '=='
  Error,
};

struct Token {
  Tok kind = Tok::Eof;
  std::string text;
  uint32_t begin = 0, end = 0;
};

class Lexer {
public:
  explicit Lexer(llvm::StringRef text) : text_(text) {}

  Token next() {
    skipSpaceAndComments();
    Token t;
    t.begin = static_cast<uint32_t>(pos_);
    if (pos_ >= text_.size()) {
      t.end = t.begin;
      return t;
    }
    char c = text_[pos_];
    auto isWord = [](char ch) {
      return std::isalnum(static_cast<unsigned char>(ch)) || ch == '_';
    };
    if (c == '%' || c == '@') {
      ++pos_;
      size_t start = pos_;
      while (pos_ < text_.size() && isWord(text_[pos_]))
        ++pos_;
      t.kind = c == '%' ? Tok::Percent : Tok::At;
      t.text = text_.substr(start, pos_ - start).str();
      if (t.text.empty())
        t.kind = Tok::Error;
    } else if (std::isdigit(static_cast<unsigned char>(c)) ||
               (c == '-' && pos_ + 1 < text_.size() &&
                (std::isdigit(static_cast<unsigned char>(text_[pos_ + 1])) ||
                 text_.substr(pos_ + 1).starts_with("inf") ||
                 text_.substr(pos_ + 1).starts_with("nan")))) {
      lexNumber(t);
    } else if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      size_t start = pos_;
      while (pos_ < text_.size() && isWord(text_[pos_]))
        ++pos_;
      t.kind = Tok::Ident;
      t.text = text_.substr(start, pos_ - start).str();
    } else if (c == '"') {
      ++pos_;
      t.kind = Tok::String;
      while (pos_ < text_.size() && text_[pos_] != '"' && text_[pos_] != '\n') {
        if (text_[pos_] == '\\' && pos_ + 1 < text_.size())
          ++pos_;
        t.text += text_[pos_++];
      }
      if (pos_ >= text_.size() || text_[pos_] != '"')
        t.kind = Tok::Error;
      else
        ++pos_;
    } else if (c == '=' && pos_ + 1 < text_.size() && text_[pos_ + 1] == '=') {
      pos_ += 2;
      t.kind = Tok::Punct;
      t.text = "==";
    } else if (llvm::StringRef("(){}[]<>,:=^.").contains(c)) {
      ++pos_;
      t.kind = Tok::Punct;
      t.text = std::string(1, c);
    } else {
      ++pos_;
      t.kind = Tok::Error;
      t.text = std::string(1, c);
    }
    t.end = static_cast<uint32_t>(pos_);
    return t;
  }

private:
  void skipSpaceAndComments() {
    while (pos_ < text_.size()) {
      char c = text_[pos_];
      if (std::isspace(static_cast<unsigned char>(c))) {
        ++pos_;
      } else if (c == '/' && pos_ + 1 < text_.size() && text_[pos_ + 1] == '/') {
        while (pos_ < text_.size() && text_[pos_] != '\n')
          ++pos_;
      } else {
        break;
      }
    }
  }

  void lexNumber(Token &t) {
    size_t start = pos_;
    if (text_[pos_] == '-')
      ++pos_;
    if (text_.substr(pos_).starts_with("inf") ||
        text_.substr(pos_).starts_with("nan")) {
      pos_ += 3;
      t.kind = Tok::Float;
      t.text = text_.substr(start, pos_ - start).str();
      return;
    }
    t.kind = Tok::Int;
    while (pos_ < text_.size() &&
           std::isdigit(static_cast<unsigned char>(text_[pos_])))
      ++pos_;
    // A fraction needs a digit after '.', so `%x.0` style references and
    // `1.` never swallow punctuation by accident.
    if (pos_ + 1 < text_.size() && text_[pos_] == '.' &&
        std::isdigit(static_cast<unsigned char>(text_[pos_ + 1]))) {
      t.kind = Tok::Float;
      ++pos_;
      while (pos_ < text_.size() &&
             std::isdigit(static_cast<unsigned char>(text_[pos_])))
        ++pos_;
    }
    if (pos_ < text_.size() && (text_[pos_] == 'e' || text_[pos_] == 'E')) {
      size_t save = pos_++;
      if (pos_ < text_.size() && (text_[pos_] == '+' || text_[pos_] == '-'))
        ++pos_;
      if (pos_ < text_.size() &&
          std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
        t.kind = Tok::Float;
        while (pos_ < text_.size() &&
               std::isdigit(static_cast<unsigned char>(text_[pos_])))
          ++pos_;
      } else {
        pos_ = save;
      }
    }
    t.text = text_.substr(start, pos_ - start).str();
  }

  llvm::StringRef text_;
  size_t pos_ = 0;
};

class Parser {
public:
  Parser(DiagnosticEngine &diags, uint32_t buffer)
      : diags_(diags), buffer_(buffer), lexer_(diags.bufferText(buffer)) {
    advance();
  }

  std::unique_ptr<Module> parseModule() {
    auto module = std::make_unique<Module>();
    while (tok_.kind != Tok::Eof) {
      auto k = parseKernel();
      if (!k)
        return nullptr;
      if (module->lookup(k->name())) {
        error(k->loc, "redefinition of kernel '@" + k->name() + "'");
        return nullptr;
      }
      module->kernels.push_back(std::move(k));
    }
    return module;
  }

private:
  //===--------------------------------------------------------------------===//
  // Token helpers
  //===--------------------------------------------------------------------===//

  void advance() { tok_ = lexer_.next(); }

  SourceLoc locOf(const Token &t) const {
    return diags_.makeLoc(buffer_, t.begin, t.end);
  }

  bool error(SourceLoc loc, std::string msg) {
    if (!failed_)
      diags_.error(loc, std::move(msg));
    failed_ = true;
    return false;
  }
  bool errorHere(const std::string &msg) {
    std::string full = msg;
    full += ", found ";
    if (tok_.kind == Tok::Eof) {
      full += "end of input";
    } else {
      full += '\'';
      full += tokenSpelling();
      full += '\'';
    }
    return error(locOf(tok_), std::move(full));
  }
  std::string tokenSpelling() const {
    switch (tok_.kind) {
    case Tok::Percent: return "%" + tok_.text;
    case Tok::At: return "@" + tok_.text;
    case Tok::String: return "\"" + tok_.text + "\"";
    default: return tok_.text;
    }
  }

  bool isPunct(const char *p) const {
    return tok_.kind == Tok::Punct && tok_.text == p;
  }
  bool isIdent(const char *w) const {
    return tok_.kind == Tok::Ident && tok_.text == w;
  }
  bool consumePunct(const char *p) {
    if (!isPunct(p))
      return false;
    advance();
    return true;
  }
  bool consumeIdent(const char *w) {
    if (!isIdent(w))
      return false;
    advance();
    return true;
  }
  bool expectPunct(const char *p) {
    if (consumePunct(p))
      return true;
    return errorHere(std::string("expected '") + p + "'");
  }
  bool expectIdent(const char *w) {
    if (consumeIdent(w))
      return true;
    return errorHere(std::string("expected '") + w + "'");
  }

  bool parseInt(int64_t &out) {
    if (tok_.kind != Tok::Int)
      return errorHere("expected an integer");
    errno = 0;
    char *end = nullptr;
    long long v = std::strtoll(tok_.text.c_str(), &end, 10);
    if (errno == ERANGE) {
      // Unsigned 64-bit constants print as their two's-complement value, but
      // accept the full u64 range too.
      errno = 0;
      unsigned long long u = std::strtoull(tok_.text.c_str(), &end, 10);
      if (errno == ERANGE || tok_.text[0] == '-')
        return errorHere("integer out of range");
      v = static_cast<long long>(u);
    }
    out = v;
    advance();
    return true;
  }

  bool parseFloat(double &out) {
    if (tok_.kind == Tok::Int || tok_.kind == Tok::Float) {
      const std::string &s = tok_.text;
      bool neg = !s.empty() && s[0] == '-';
      llvm::StringRef body = llvm::StringRef(s).drop_front(neg ? 1 : 0);
      if (body == "inf")
        out = std::numeric_limits<double>::infinity();
      else if (body == "nan")
        out = std::numeric_limits<double>::quiet_NaN();
      else
        out = std::strtod(body.str().c_str(), nullptr);
      if (neg)
        out = -out;
      advance();
      return true;
    }
    if (isIdent("inf") || isIdent("nan")) {
      out = tok_.text == "inf" ? std::numeric_limits<double>::infinity()
                               : std::numeric_limits<double>::quiet_NaN();
      advance();
      return true;
    }
    return errorHere("expected a number");
  }

  //===--------------------------------------------------------------------===//
  // Types
  //===--------------------------------------------------------------------===//

  bool parseType(Type &out) {
    if (tok_.kind != Tok::Ident)
      return errorHere("expected a type");
    std::string word = tok_.text;
    SourceLoc loc = locOf(tok_);
    advance();
    ScalarKind k;
    if (word == "tile" || word == "tensor") {
      if (!expectPunct("<"))
        return false;
      if (tok_.kind != Tok::Ident || !parseScalarKind(tok_.text, k))
        return errorHere("expected an element kind");
      advance();
      std::vector<int64_t> dims;
      while (consumePunct(",")) {
        int64_t d;
        if (!parseInt(d))
          return false;
        dims.push_back(d);
      }
      if (!expectPunct(">"))
        return false;
      if (word == "tile") {
        if (dims.empty() || dims.size() > 4)
          return error(loc, "a tile has rank 1..4");
        for (int64_t d : dims)
          if (d <= 0)
            return error(loc, "tile dimensions must be positive");
        out = Type::tile(k, dims);
      } else {
        if (dims.size() != 1 || dims[0] < 1 || dims[0] > 6)
          return error(loc, "expected 'tensor<kind, rank>' with rank 1..6");
        out = Type::tensor(k, static_cast<unsigned>(dims[0]));
      }
      return true;
    }
    if (word == "none") {
      out = Type::none();
      return true;
    }
    if (!parseScalarKind(word, k))
      return error(loc, "unknown type '" + word + "'");
    out = Type::scalar(k);
    return true;
  }

  //===--------------------------------------------------------------------===//
  // Values
  //===--------------------------------------------------------------------===//

  bool define(const Token &nameTok, Value *v) {
    if (!values_.emplace(nameTok.text, v).second)
      return error(locOf(nameTok), "redefinition of value '%" + nameTok.text + "'");
    return true;
  }

  Value *use() {
    if (tok_.kind != Tok::Percent) {
      errorHere("expected a value");
      return nullptr;
    }
    auto it = values_.find(tok_.text);
    if (it == values_.end()) {
      error(locOf(tok_), "use of undefined value '%" + tok_.text + "'");
      return nullptr;
    }
    advance();
    return it->second;
  }

  /// `buf(N)` or `buf(I:N)`; `index` is -1 without the `I:` prefix.
  bool parseBuf(int64_t &index, int64_t &offset) {
    if (!expectIdent("buf") || !expectPunct("("))
      return false;
    index = -1;
    int64_t first;
    if (!parseInt(first))
      return false;
    if (consumePunct(":")) {
      index = first;
      if (!parseInt(offset))
        return false;
    } else {
      offset = first;
    }
    return expectPunct(")");
  }

  //===--------------------------------------------------------------------===//
  // Kernels
  //===--------------------------------------------------------------------===//

  std::unique_ptr<Kernel> parseKernel() {
    SourceLoc kernelLoc = locOf(tok_);
    if (!expectIdent("kernel"))
      return nullptr;
    if (tok_.kind != Tok::At) {
      errorHere("expected '@name' after 'kernel'");
      return nullptr;
    }
    auto k = std::make_unique<Kernel>(tok_.text);
    k->loc = kernelLoc;
    advance();
    if (!expectPunct("("))
      return nullptr;
    if (!isPunct(")")) {
      do {
        if (tok_.kind != Tok::Percent) {
          errorHere("expected a parameter name");
          return nullptr;
        }
        Param p;
        p.name = tok_.text;
        p.loc = locOf(tok_);
        for (const Param &q : k->params)
          if (q.name == p.name) {
            error(p.loc, "duplicate parameter '%" + p.name + "'");
            return nullptr;
          }
        advance();
        if (!expectPunct(":") || !parseType(p.type))
          return nullptr;
        if (!p.type.isTensor() && !p.type.isScalar()) {
          error(p.loc, "a parameter is a tensor or a scalar");
          return nullptr;
        }
        k->addParam(std::move(p));
      } while (consumePunct(","));
    }
    if (!expectPunct(")") || !expectPunct("{"))
      return nullptr;
    if (!parseHeader(*k))
      return nullptr;

    if (!expectIdent("grid"))
      return nullptr;
    bindParams(*k, /*grid=*/true);
    if (!parseRegionBody(k->grid()))
      return nullptr;
    if (!expectIdent("body"))
      return nullptr;
    bindParams(*k, /*grid=*/false);
    if (!parseRegionBody(k->body()) || !expectPunct("}"))
      return nullptr;
    return k;
  }

  void bindParams(Kernel &k, bool grid) {
    values_.clear();
    for (unsigned i = 0; i < k.params.size(); ++i)
      values_[k.params[i].name] = grid ? k.gridParamValue(i) : k.paramValue(i);
  }

  int paramIndex(const Kernel &k, const Token &t) {
    for (unsigned i = 0; i < k.params.size(); ++i)
      if (k.params[i].name == t.text)
        return static_cast<int>(i);
    error(locOf(t), "unknown parameter '%" + t.text + "'");
    return -1;
  }

  bool parseHeader(Kernel &k) {
    for (;;) {
      if (consumeIdent("spec")) {
        do {
          SpecParam s;
          if (tok_.kind != Tok::Ident)
            return errorHere("expected a compile-time parameter name");
          s.name = tok_.text;
          advance();
          if (!expectPunct("="))
            return false;
          if (tok_.kind == Tok::Ident) {
            if (tok_.text == "true" || tok_.text == "false") {
              s.isBool = true;
              s.intValue = tok_.text == "true";
            } else if (parseScalarKind(tok_.text, s.typeValue)) {
              s.isType = true;
            } else {
              return errorHere("expected a kind, an integer or a boolean");
            }
            advance();
          } else if (!parseInt(s.intValue)) {
            return false;
          }
          k.specialization.push_back(std::move(s));
        } while (consumePunct(","));
      } else if (consumeIdent("budget")) {
        if (!parseInt(k.localBudgetBytes))
          return false;
      } else if (consumeIdent("scratch")) {
        if (!parseInt(k.scratchBytes))
          return false;
        k.buffersPlanned = true;
      } else if (consumeIdent("constraint")) {
        ShapeConstraint c;
        int64_t axis;
        if (tok_.kind != Tok::Percent)
          return errorHere("expected a parameter");
        int p = paramIndex(k, tok_);
        if (p < 0)
          return false;
        advance();
        if (!expectPunct(".") || !parseInt(axis) || !expectPunct("=="))
          return false;
        c.param = static_cast<unsigned>(p);
        c.axis = static_cast<unsigned>(axis);
        if (tok_.kind == Tok::Percent) {
          int q = paramIndex(k, tok_);
          if (q < 0)
            return false;
          advance();
          int64_t otherAxis;
          if (!expectPunct(".") || !parseInt(otherAxis))
            return false;
          c.kind = ShapeConstraint::Kind::EqualsDim;
          c.otherParam = static_cast<unsigned>(q);
          c.otherAxis = static_cast<unsigned>(otherAxis);
        } else {
          c.kind = ShapeConstraint::Kind::EqualsConstant;
          if (!parseInt(c.constant))
            return false;
        }
        if (tok_.kind != Tok::String)
          return errorHere("expected the constraint's message string");
        c.message = tok_.text;
        advance();
        k.constraints.push_back(std::move(c));
      } else {
        return true;
      }
    }
  }

  /// `{` [`^(` args `):`] ops `}` into `block`.
  bool parseRegionBody(Block &block) {
    if (regionDepth_ >= kMaxRegionDepth)
      return errorHere("regions nest deeper than the limit of " +
                       std::to_string(kMaxRegionDepth));
    ++regionDepth_;
    bool ok = parseRegionBodyAt(block);
    --regionDepth_;
    return ok;
  }
  bool parseRegionBodyAt(Block &block) {
    if (!expectPunct("{"))
      return false;
    if (consumePunct("^")) {
      if (!expectPunct("("))
        return false;
      if (!isPunct(")")) {
        do {
          if (tok_.kind != Tok::Percent)
            return errorHere("expected a block argument");
          Token nameTok = tok_;
          advance();
          Type t;
          if (!expectPunct(":") || !parseType(t))
            return false;
          Value *arg = block.addArgument(t);
          if (!define(nameTok, arg))
            return false;
          if (isIdent("buf")) {
            int64_t index, offset;
            if (!parseBuf(index, offset))
              return false;
            arg->setBufferOffset(offset);
          }
        } while (consumePunct(","));
      }
      if (!expectPunct(")") || !expectPunct(":"))
        return false;
    }
    while (!isPunct("}")) {
      if (tok_.kind == Tok::Eof)
        return errorHere("expected '}' at the end of a block");
      if (!parseOp(block))
        return false;
    }
    advance();
    return true;
  }

  bool parseAttrs(Op &op) {
    OpAttrs &a = op.attrs();
    if (!consumePunct("{"))
      return true;
    do {
      if (tok_.kind != Tok::Ident)
        return errorHere("expected an attribute name");
      std::string name = tok_.text;
      SourceLoc loc = locOf(tok_);
      advance();
      if (name == "mask") {
        a.hasMask = true;
        continue;
      }
      if (name == "stream") {
        a.stream = true;
        continue;
      }
      if (name == "cached") {
        a.cached = true;
        continue;
      }
      if (name == "spread") {
        a.spread = true;
        continue;
      }
      if (name == "forward" || name == "copy" || name == "forwarded") {
        (name == "forward" ? a.forward : name == "copy" ? a.copy : a.forwarded) = true;
        continue;
      }
      if (name == "dpbf16" || name == "acc_splat") {
        (name == "dpbf16" ? a.dpbf16 : a.accSplat) = true;
        continue;
      }
      if (name == "transA" || name == "transB") {
        (name == "transA" ? a.transA : a.transB) = true;
        continue;
      }
      if (!expectPunct("="))
        return false;
      if (name == "value") {
        // Integer or float: the result type (parsed later) decides.
        value_.present = true;
        if (tok_.kind == Tok::Int) {
          value_.asFloat = std::strtod(tok_.text.c_str(), nullptr);
          if (!parseInt(value_.asInt))
            return false;
        } else if (!parseFloat(value_.asFloat)) {
          return false;
        } else {
          value_.isFloat = true;
        }
      } else if (name == "other") {
        // An integer is kept exact too, for an integer tensor (intValue).
        if (tok_.kind == Tok::Int)
          a.intValue = std::strtoll(tok_.text.c_str(), nullptr, 10);
        if (!parseFloat(a.floatValue))
          return false;
      } else if (name == "axis") {
        if (!parseInt(a.axis))
          return false;
      } else if (name == "by" || name == "per") {
        if (!parseInt(name == "by" ? a.spreadBy : a.spreadPer))
          return false;
      } else if (name == "row_mask") {
        if (tok_.kind != Tok::Ident || !parseRowMask(tok_.text, a.rowMask))
          return errorHere("expected none, lanes or rows");
        advance();
      } else if (name == "form") {
        if (tok_.kind != Tok::Ident || !parseMmaForm(tok_.text, a.mmaForm))
          return errorHere("expected dot, broadcast, bf16pairs or amx");
        advance();
      } else if (name == "block") {
        if (!expectPunct("[") || !parseInt(a.blockRows) || !expectPunct(",") ||
            !parseInt(a.blockCols) || !expectPunct("]"))
          return false;
      } else if (name == "pack_a" || name == "pack_b") {
        if (!parseInt(name == "pack_a" ? a.packA : a.packB))
          return false;
      } else if (name == "overlap") {
        if (tok_.kind != Tok::Ident || !parseOverlap(tok_.text, a.overlap))
          return errorHere("expected disjoint, in_place, buffered or checked");
        advance();
      } else if (name == "nan") {
        if (tok_.kind != Tok::Ident || tok_.text != "canonical")
          return errorHere("expected canonical");
        a.canonicalNaN = true;
        advance();
      } else if (name == "extent") {
        if (!expectPunct("["))
          return false;
        do {
          int64_t e;
          if (!parseInt(e))
            return false;
          a.extent.push_back(e);
        } while (consumePunct(","));
        if (!expectPunct("]"))
          return false;
      } else if (name == "name") {
        if (tok_.kind != Tok::String)
          return errorHere("expected a string");
        a.name = tok_.text;
        advance();
      } else if (name == "kind") {
        if (tok_.kind != Tok::Ident)
          return errorHere("expected sum, max or min");
        bool found = false;
        for (ReduceKind r : {ReduceKind::Sum, ReduceKind::Max, ReduceKind::Min})
          if (tok_.text == reduceKindName(r)) {
            a.reduceKind = r;
            found = true;
          }
        if (!found)
          return errorHere("expected sum, max or min");
        advance();
      } else if (name == "predicate") {
        bool found = false;
        for (CmpPredicate p : {CmpPredicate::Eq, CmpPredicate::Ne,
                               CmpPredicate::Lt, CmpPredicate::Le,
                               CmpPredicate::Gt, CmpPredicate::Ge})
          if (tok_.kind == Tok::Ident && tok_.text == predicateName(p)) {
            a.predicate = p;
            found = true;
          }
        if (!found)
          return errorHere("expected eq, ne, lt, le, gt or ge");
        advance();
      } else {
        return error(loc, "unknown attribute '" + name + "'");
      }
    } while (consumePunct(","));
    return expectPunct("}");
  }

  bool parseOp(Block &block) {
    std::vector<Token> resultNames;
    if (tok_.kind == Tok::Percent) {
      do {
        if (tok_.kind != Tok::Percent)
          return errorHere("expected a result name");
        resultNames.push_back(tok_);
        advance();
      } while (consumePunct(","));
      if (!expectPunct("="))
        return false;
    }
    if (tok_.kind != Tok::Ident)
      return errorHere("expected an operation name");
    OpKind kind;
    if (!parseMnemonic(tok_.text, kind))
      return error(locOf(tok_), "unknown operation '" + tok_.text + "'");
    SourceLoc opLoc = locOf(tok_);
    if (!resultNames.empty())
      opLoc = SourceLoc::span(locOf(resultNames.front()), opLoc);
    advance();
    auto op = std::make_unique<Op>(kind, opLoc);
    if (tok_.kind == Tok::Percent) {
      do {
        Value *v = use();
        if (!v)
          return false;
        op->addOperand(v);
      } while (consumePunct(","));
    }
    bool hasRegions =
        kind == OpKind::For || kind == OpKind::If || kind == OpKind::Fused;
    value_ = {};
    if (!hasRegions && isPunct("{") && !parseAttrs(*op))
      return false;
    std::vector<Type> types;
    if (consumePunct(":")) {
      do {
        Type t;
        if (!parseType(t))
          return false;
        types.push_back(std::move(t));
      } while (consumePunct(","));
    }
    if (types.size() != resultNames.size())
      return error(opLoc, "'" + std::string(mnemonic(kind)) + "' has " +
                              std::to_string(resultNames.size()) +
                              " result names but " +
                              std::to_string(types.size()) + " result types");
    for (Type &t : types)
      op->addResult(t);
    if (value_.present) {
      bool floatConst = kind == OpKind::Constant && op->numResults() == 1 &&
                        isFloat(op->result()->type().elem());
      if (floatConst) {
        op->attrs().floatValue = value_.asFloat;
      } else if (value_.isFloat) {
        return error(opLoc, "'" + std::string(mnemonic(kind)) +
                                "' needs an integer value");
      } else {
        op->attrs().intValue = value_.asInt;
      }
    }
    while (isIdent("buf")) {
      SourceLoc bufLoc = locOf(tok_);
      int64_t index, offset;
      if (!parseBuf(index, offset))
        return false;
      if (index < 0)
        index = 0;
      if (index >= static_cast<int64_t>(op->numResults()))
        return error(bufLoc, "buffer of a result the op does not have");
      op->result(static_cast<unsigned>(index))->setBufferOffset(offset);
    }
    if (consumeIdent("loc")) {
      // Printed locations refer to the original source; keep the .tir one.
      int64_t line, col;
      if (!expectPunct("(") || !parseInt(line) || !expectPunct(":") ||
          !parseInt(col) || !expectPunct(")"))
        return false;
    }
    Op *placed = block.append(std::move(op));
    // Results are visible to the nested blocks' uses only through dominance
    // (the verifier's job); define them before parsing regions so that the
    // printer's numbering (results first) matches.
    for (unsigned i = 0; i < resultNames.size(); ++i)
      if (!define(resultNames[i], placed->result(i)))
        return false;
    if (hasRegions) {
      if (!isPunct("{"))
        return errorHere(std::string("expected the body of '") +
                         mnemonic(kind) + "'");
      if (!parseRegionBody(*placed->addBlock()))
        return false;
      if (kind == OpKind::If) {
        Block *elseBlock = placed->addBlock();
        if (consumeIdent("else") && !parseRegionBody(*elseBlock))
          return false;
      }
    }
    return true;
  }

  DiagnosticEngine &diags_;
  uint32_t buffer_;
  Lexer lexer_;
  Token tok_;
  bool failed_ = false;
  unsigned regionDepth_ = 0; ///< regions being parsed
  /// The `value` attribute of the op being parsed.
  struct {
    bool present = false, isFloat = false;
    int64_t asInt = 0;
    double asFloat = 0;
  } value_;
  std::map<std::string, Value *> values_;
};

} // namespace

std::unique_ptr<Module> parseModule(DiagnosticEngine &diags, uint32_t buffer) {
  Parser p(diags, buffer);
  return p.parseModule();
}

} // namespace tilejit::ir
