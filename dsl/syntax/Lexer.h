//===- Lexer.h - Tokens of the tile DSL --------------------------*- C++ -*-===//
///
/// \file
/// Splits one source buffer into tokens with source ranges. Lexical errors
/// (an unknown character, an unterminated comment, a malformed number) are
/// diagnostics; the lexer then produces an Error token.
///
//===----------------------------------------------------------------------===//
#ifndef TILEJIT_DSL_SYNTAX_LEXER_H
#define TILEJIT_DSL_SYNTAX_LEXER_H

#include "dsl/support/Diagnostics.h"

#include <string>

namespace tilejit::dsl {

enum class TokenKind { Eof, Error, Ident, Int, Float, Punct };

struct Token {
  TokenKind kind = TokenKind::Eof;
  std::string text; ///< identifier/punctuation spelling, number text
  SourceLoc loc;
  int64_t intValue = 0;
  double floatValue = 0; ///< a float literal: the f32 nearest its decimal (exact here)
  bool is(const char *punct) const {
    return kind == TokenKind::Punct && text == punct;
  }
  bool isIdent(const char *word) const {
    return kind == TokenKind::Ident && text == word;
  }
};

class Lexer {
public:
  Lexer(DiagnosticEngine &diags, uint32_t buffer);
  /// Returns the next token (Eof at the end, repeatedly).
  Token next();

private:
  void skipSpaceAndComments();
  /// Reads integer token `tok`'s value; an error token if outside int64.
  Token checkInt(Token &tok, int base);
  DiagnosticEngine &diags_;
  uint32_t buffer_;
  std::string_view text_;
  size_t pos_ = 0;
};

} // namespace tilejit::dsl

#endif
