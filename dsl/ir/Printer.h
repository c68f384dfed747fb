//===- Printer.h - Tile IR to text -------------------------------*- C++ -*-===//
///
/// \file
/// Prints Tile IR in the textual form that dsl/ir/IRParser.h reads back
/// (round trip: parse(print(k)) prints identically). Value names come from
/// counters in program order, never from pointers, so dumps are deterministic.
///
//===----------------------------------------------------------------------===//
#ifndef TILEJIT_DSL_IR_PRINTER_H
#define TILEJIT_DSL_IR_PRINTER_H

#include "dsl/ir/IR.h"

#include <string>

namespace tilejit::ir {

struct PrintOptions {
  /// Append `loc(line:col)` to every op.
  bool printLocations = false;
};

std::string print(const Kernel &kernel, const PrintOptions &options = {});
std::string print(const Module &module, const PrintOptions &options = {});

} // namespace tilejit::ir

#endif
