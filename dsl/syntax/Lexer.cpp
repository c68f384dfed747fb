//===- Lexer.cpp - Tokens of the tile DSL ---------------------------------===//
#include "dsl/syntax/Lexer.h"

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <limits>

namespace tilejit::dsl {

Lexer::Lexer(DiagnosticEngine &diags, uint32_t buffer)
    : diags_(diags), buffer_(buffer) {
  llvm::StringRef t = diags.bufferText(buffer);
  text_ = std::string_view(t.data(), t.size());
}

void Lexer::skipSpaceAndComments() {
  while (pos_ < text_.size()) {
    char c = text_[pos_];
    if (std::isspace(static_cast<unsigned char>(c))) {
      ++pos_;
    } else if (text_.compare(pos_, 2, "//") == 0) {
      while (pos_ < text_.size() && text_[pos_] != '\n')
        ++pos_;
    } else if (text_.compare(pos_, 2, "/*") == 0) {
      size_t end = text_.find("*/", pos_ + 2);
      if (end == std::string_view::npos) {
        diags_.error(diags_.makeLoc(buffer_, pos_, pos_ + 2),
                     "unterminated block comment");
        pos_ = text_.size();
        return;
      }
      pos_ = end + 2;
    } else {
      return;
    }
  }
}

/// Sets the value of integer token `tok` (digits in `base`, after any `0x`);
/// a value outside int64 is an error, never a wrapped or saturated number.
Token Lexer::checkInt(Token &tok, int base) {
  const char *digits = tok.text.c_str() + (base == 16 ? 2 : 0);
  errno = 0;
  unsigned long long v = std::strtoull(digits, nullptr, base);
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  if (errno == ERANGE || v > static_cast<unsigned long long>(kMax)) {
    diags_.error(tok.loc, "integer literal '" + tok.text +
                              "' is out of range (at most " +
                              std::to_string(kMax) + ", the largest i64)");
    tok.kind = TokenKind::Error;
    return tok;
  }
  tok.intValue = static_cast<int64_t>(v);
  return tok;
}

Token Lexer::next() {
  skipSpaceAndComments();
  Token tok;
  size_t start = pos_;
  if (pos_ >= text_.size()) {
    tok.kind = TokenKind::Eof;
    tok.loc = diags_.makeLoc(buffer_, text_.empty() ? 0 : text_.size() - 1,
                             text_.empty() ? 0 : text_.size());
    return tok;
  }
  char c = text_[pos_];
  auto finish = [&](TokenKind kind) {
    tok.kind = kind;
    tok.text = std::string(text_.substr(start, pos_ - start));
    tok.loc = diags_.makeLoc(buffer_, start, pos_);
    return tok;
  };
  if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
    while (pos_ < text_.size() &&
           (std::isalnum(static_cast<unsigned char>(text_[pos_])) ||
            text_[pos_] == '_'))
      ++pos_;
    return finish(TokenKind::Ident);
  }
  bool startsNumber =
      std::isdigit(static_cast<unsigned char>(c)) ||
      (c == '.' && pos_ + 1 < text_.size() &&
       std::isdigit(static_cast<unsigned char>(text_[pos_ + 1])));
  if (startsNumber) {
    if (text_.compare(pos_, 2, "0x") == 0 || text_.compare(pos_, 2, "0X") == 0) {
      pos_ += 2;
      while (pos_ < text_.size() &&
             std::isxdigit(static_cast<unsigned char>(text_[pos_])))
        ++pos_;
      finish(TokenKind::Int);
      if (tok.text.size() == 2) {
        diags_.error(tok.loc, "expected hex digits after '0x'");
        tok.kind = TokenKind::Error;
        return tok;
      }
      return checkInt(tok, 16);
    }
    bool isFloat = false;
    while (pos_ < text_.size() &&
           std::isdigit(static_cast<unsigned char>(text_[pos_])))
      ++pos_;
    // `0 .. N` is a range, not the float `0.`.
    if (pos_ < text_.size() && text_[pos_] == '.' &&
        text_.compare(pos_, 2, "..") != 0) {
      isFloat = true;
      ++pos_;
      while (pos_ < text_.size() &&
             std::isdigit(static_cast<unsigned char>(text_[pos_])))
        ++pos_;
    }
    if (pos_ < text_.size() && (text_[pos_] == 'e' || text_[pos_] == 'E')) {
      size_t save = pos_;
      ++pos_;
      if (pos_ < text_.size() && (text_[pos_] == '+' || text_[pos_] == '-'))
        ++pos_;
      if (pos_ < text_.size() &&
          std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
        isFloat = true;
        while (pos_ < text_.size() &&
               std::isdigit(static_cast<unsigned char>(text_[pos_])))
          ++pos_;
      } else {
        pos_ = save;
      }
    }
    if (pos_ < text_.size() &&
        (std::isalpha(static_cast<unsigned char>(text_[pos_])) ||
         text_[pos_] == '_')) {
      while (pos_ < text_.size() &&
             std::isalnum(static_cast<unsigned char>(text_[pos_])))
        ++pos_;
      finish(TokenKind::Error);
      diags_.error(tok.loc, "malformed number '" + tok.text + "'");
      return tok;
    }
    finish(isFloat ? TokenKind::Float : TokenKind::Int);
    if (isFloat)
      tok.floatValue = std::strtof(tok.text.c_str(), nullptr); // one rounding, to f32
    else
      return checkInt(tok, 10);
    return tok;
  }
  static const char *const twoChar[] = {"..", "==", "!=", "<=", ">=", "&&",
                                        "||", "<<", ">>", "+=", "-=", "*=",
                                        "/=", "->"};
  for (const char *p : twoChar)
    if (text_.compare(pos_, 2, p) == 0) {
      pos_ += 2;
      return finish(TokenKind::Punct);
    }
  static const std::string_view oneChar = "+-*/%<>=!~&|^()[]{},;:.";
  if (oneChar.find(c) != std::string_view::npos) {
    ++pos_;
    return finish(TokenKind::Punct);
  }
  ++pos_;
  finish(TokenKind::Error);
  diags_.error(tok.loc, std::string("unexpected character '") + c + "'");
  return tok;
}

} // namespace tilejit::dsl
