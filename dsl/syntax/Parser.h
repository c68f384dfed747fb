//===- Parser.h - Recursive-descent parser of the tile DSL -------*- C++ -*-===//
///
/// \file
/// Builds an ast::File from one buffer. Errors read "expected X in Y"; the
/// parser stops at the first error (no recovery), so each diagnostic is real.
///
//===----------------------------------------------------------------------===//
#ifndef TILEJIT_DSL_SYNTAX_PARSER_H
#define TILEJIT_DSL_SYNTAX_PARSER_H

#include "dsl/support/Diagnostics.h"
#include "dsl/syntax/AST.h"

#include <memory>

namespace tilejit::dsl {

/// How deep expressions and statements may nest (like clang's
/// -fbracket-depth). Every later stage (sema, the passes, the printers, code
/// generation) recurses over the tree, so the bound is what keeps a hostile
/// source from overflowing the stack; an expression counts every operator,
/// call, index and parenthesis on its path (a left-associative `a + b + c`
/// chain as deep as it is long), a statement every enclosing block and every
/// `else if` of a chain (each is an `if` inside the previous one's else).
constexpr unsigned kMaxNestingDepth = 256;

/// Parses buffer `buffer`; null (with diagnostics) on a syntax error.
std::unique_ptr<ast::File> parseFile(DiagnosticEngine &diags, uint32_t buffer);

/// Builtins that take a type argument in angle brackets: `cast<f32>(x)`.
bool takesTypeArgument(const std::string &builtin);

} // namespace tilejit::dsl

#endif
