//===- Diagnostics.h - Collects and renders user-facing errors ---*- C++ -*-===//
///
/// \file
/// One `DiagnosticEngine` per compilation owns the `llvm::SourceMgr` holding
/// every source buffer, collects diagnostics (error, warning, remark, note)
/// with their `SourceLoc` ranges, and renders them as
/// `file:line:col: error: expected ']' after tile shape` followed by the
/// source line and a caret/tilde line, as LLVM tools do. Tools print them;
/// tests capture them.
///
//===----------------------------------------------------------------------===//
#ifndef TILEJIT_DSL_SUPPORT_DIAGNOSTICS_H
#define TILEJIT_DSL_SUPPORT_DIAGNOSTICS_H

#include "dsl/support/SourceLoc.h"

#include "llvm/Support/SourceMgr.h"

#include <string>
#include <utility>
#include <vector>

namespace tilejit {

enum class Severity { Error, Warning, Remark, Note };

struct Diagnostic {
  Severity severity;
  SourceLoc loc;
  std::string message;
};

class DiagnosticEngine {
public:
  DiagnosticEngine();

  /// Adds a source buffer and returns its buffer id (for SourceLoc::buffer).
  uint32_t addBuffer(std::string name, std::string text);
  /// The text of a buffer (valid while the engine lives).
  llvm::StringRef bufferText(uint32_t buffer) const;
  llvm::StringRef bufferName(uint32_t buffer) const;
  /// Builds a SourceLoc for byte range [begin, end) of a buffer.
  SourceLoc makeLoc(uint32_t buffer, uint32_t begin, uint32_t end) const;

  void error(SourceLoc loc, std::string message) {
    report(Severity::Error, loc, std::move(message));
  }
  void warning(SourceLoc loc, std::string message) {
    report(Severity::Warning, loc, std::move(message));
  }
  /// Performance remarks (a tile that falls back to scalar code or gathers).
  void remark(SourceLoc loc, std::string message) {
    report(Severity::Remark, loc, std::move(message));
  }
  void note(SourceLoc loc, std::string message) {
    report(Severity::Note, loc, std::move(message));
  }
  void report(Severity severity, SourceLoc loc, std::string message);

  bool hasErrors() const { return numErrors_ > 0; }
  unsigned numErrors() const { return numErrors_; }
  const std::vector<Diagnostic> &diagnostics() const { return diags_; }
  /// Whether remarks are recorded (off by default).
  void setRemarksEnabled(bool on) { remarksEnabled_ = on; }

  /// Renders one diagnostic: `name:line:col: error: msg`, the source line, and
  /// a caret line marking the range.
  std::string render(const Diagnostic &d) const;
  /// Renders every diagnostic, in order.
  std::string renderAll() const;

  llvm::SourceMgr &sourceMgr() { return srcMgr_; }

private:
  /// Line and 1-based column of byte `offset`. Queries come in order (the
  /// lexers'), so a cursor walks forward from the last one: linear in the
  /// buffer, where SourceMgr's scan back to the line's start made a long
  /// line quadratic.
  std::pair<uint32_t, uint32_t> lineAndColumn(uint32_t buffer,
                                              uint32_t offset) const;
  struct Cursor {
    uint32_t buffer = 0, offset = 0, line = 1, lineStart = 0;
  };
  mutable Cursor cursor_;

  llvm::SourceMgr srcMgr_;
  std::vector<Diagnostic> diags_;
  unsigned numErrors_ = 0;
  bool remarksEnabled_ = false;
};

/// "; did you mean 'x'?" (or "'x' or 'y'") naming the candidates closest to
/// `name` by edit distance, where one is close enough to be a likely typo;
/// else the empty string. For messages about an unknown name.
std::string didYouMean(const std::string &name,
                       const std::vector<std::string> &candidates);

} // namespace tilejit

#endif
