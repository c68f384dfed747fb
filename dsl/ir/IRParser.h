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

/// Parses buffer `buffer` of `diags`; null (with diagnostics) on error.
std::unique_ptr<Module> parseModule(DiagnosticEngine &diags, uint32_t buffer);

} // namespace tilejit::ir

#endif
