//===- IRParser.h - Text to Tile IR ------------------------------*- C++ -*-===//
///
/// \file
/// Reads the textual Tile IR that Printer.h writes (the `.tir` files of the
/// golden tests and of `tile-opt`). Errors are diagnostics with locations in
/// the text.
///
//===----------------------------------------------------------------------===//
#ifndef TILEJIT_DSL_IR_IRPARSER_H
#define TILEJIT_DSL_IR_IRPARSER_H

#include "dsl/ir/IR.h"
#include "dsl/support/Diagnostics.h"

#include <memory>

namespace tilejit::ir {

/// How deep regions (the blocks of `for`, `if`, `fused`) may nest in the
/// text: every later stage recurses over them, so the bound keeps a hostile
/// file from overflowing the stack. The DSL front end's own limit on nested
/// statements (the same number) keeps what it produces well inside.
constexpr unsigned kMaxRegionDepth = 256;

/// Parses buffer `buffer` of `diags`; null (with diagnostics) on error.
std::unique_ptr<Module> parseModule(DiagnosticEngine &diags, uint32_t buffer);

} // namespace tilejit::ir

#endif
