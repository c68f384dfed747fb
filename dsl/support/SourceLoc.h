//===- SourceLoc.h - Source ranges carried by AST and Tile IR ----*- C++ -*-===//
///
/// \file
/// A `SourceLoc` is a range (first and last line/column, 1-based, inclusive)
/// inside one buffer of the `llvm::SourceMgr` owned by a `DiagnosticEngine`.
/// Every AST node and every Tile IR op carries one; nodes created by a pass
/// inherit the location of the node they replace. A default-constructed
/// location is "unknown" (buffer 0).
///
//===----------------------------------------------------------------------===//
#ifndef TILEJIT_DSL_SUPPORT_SOURCELOC_H
#define TILEJIT_DSL_SUPPORT_SOURCELOC_H

#include <cstdint>

namespace tilejit {

struct SourceLoc {
  /// 1-based buffer id in the SourceMgr; 0 means unknown.
  uint32_t buffer = 0;
  uint32_t line = 0, column = 0;
  uint32_t endLine = 0, endColumn = 0;
  /// Byte offset of the first character in the buffer (for carets).
  uint32_t offset = 0, endOffset = 0;

  bool isKnown() const { return buffer != 0; }

  /// The range from the start of `first` to the end of `last`.
  static SourceLoc span(const SourceLoc &first, const SourceLoc &last) {
    SourceLoc loc = first;
    loc.endLine = last.endLine;
    loc.endColumn = last.endColumn;
    loc.endOffset = last.endOffset;
    return loc;
  }
};

} // namespace tilejit

#endif
