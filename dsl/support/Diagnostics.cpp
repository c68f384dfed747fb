//===- Diagnostics.cpp - Collects and renders user-facing errors ----------===//
#include "dsl/support/Diagnostics.h"

#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>

namespace tilejit {

DiagnosticEngine::DiagnosticEngine() = default;

uint32_t DiagnosticEngine::addBuffer(std::string name, std::string text) {
  auto buf = llvm::MemoryBuffer::getMemBufferCopy(text, name);
  return srcMgr_.AddNewSourceBuffer(std::move(buf), llvm::SMLoc());
}

llvm::StringRef DiagnosticEngine::bufferText(uint32_t buffer) const {
  return srcMgr_.getMemoryBuffer(buffer)->getBuffer();
}

llvm::StringRef DiagnosticEngine::bufferName(uint32_t buffer) const {
  return srcMgr_.getMemoryBuffer(buffer)->getBufferIdentifier();
}

SourceLoc DiagnosticEngine::makeLoc(uint32_t buffer, uint32_t begin,
                                    uint32_t end) const {
  SourceLoc loc;
  loc.buffer = buffer;
  loc.offset = begin;
  loc.endOffset = end > begin ? end : begin + 1;
  auto [l, c] = lineAndColumn(buffer, begin);
  loc.line = l;
  loc.column = c;
  uint32_t last = loc.endOffset - 1;
  if (last >= bufferText(buffer).size())
    last = bufferText(buffer).empty() ? 0 : bufferText(buffer).size() - 1;
  auto [el, ec] = lineAndColumn(buffer, last);
  loc.endLine = el;
  loc.endColumn = ec;
  return loc;
}

std::pair<uint32_t, uint32_t>
DiagnosticEngine::lineAndColumn(uint32_t buffer, uint32_t offset) const {
  llvm::StringRef text = bufferText(buffer);
  if (offset > text.size())
    offset = static_cast<uint32_t>(text.size());
  if (buffer != cursor_.buffer || offset < cursor_.offset) {
    // Backwards (rare): SourceMgr scans back to the line's start.
    if (buffer == cursor_.buffer) {
      auto [l, c] = srcMgr_.getLineAndColumn(
          llvm::SMLoc::getFromPointer(text.data() + offset), buffer);
      return {l, c};
    }
    cursor_ = Cursor{buffer, 0, 1, 0};
  }
  for (uint32_t i = cursor_.offset; i < offset; ++i)
    if (text[i] == '\n') {
      ++cursor_.line;
      cursor_.lineStart = i + 1;
    }
  cursor_.offset = offset;
  return {cursor_.line, offset - cursor_.lineStart + 1};
}

void DiagnosticEngine::report(Severity severity, SourceLoc loc,
                              std::string message) {
  if (severity == Severity::Remark && !remarksEnabled_)
    return;
  if (severity == Severity::Error)
    ++numErrors_;
  diags_.push_back({severity, loc, std::move(message)});
}

static llvm::SourceMgr::DiagKind toKind(Severity s) {
  switch (s) {
  case Severity::Error: return llvm::SourceMgr::DK_Error;
  case Severity::Warning: return llvm::SourceMgr::DK_Warning;
  case Severity::Remark: return llvm::SourceMgr::DK_Remark;
  case Severity::Note: return llvm::SourceMgr::DK_Note;
  }
  return llvm::SourceMgr::DK_Error;
}

std::string DiagnosticEngine::render(const Diagnostic &d) const {
  std::string out;
  llvm::raw_string_ostream os(out);
  if (!d.loc.isKnown() || d.loc.buffer > srcMgr_.getNumBuffers()) {
    static const char *const names[] = {"error", "warning", "remark", "note"};
    os << "<unknown>: " << names[static_cast<int>(d.severity)] << ": "
       << d.message << "\n";
    return out;
  }
  const char *base = bufferText(d.loc.buffer).data();
  llvm::SMLoc start = llvm::SMLoc::getFromPointer(base + d.loc.offset);
  llvm::SmallVector<llvm::SMRange, 1> ranges;
  // Underline the range on the first line only (SourceMgr's convention).
  if (d.loc.endOffset > d.loc.offset + 1 && d.loc.endLine == d.loc.line)
    ranges.push_back(llvm::SMRange(
        start, llvm::SMLoc::getFromPointer(base + d.loc.endOffset)));
  llvm::SMDiagnostic diag =
      srcMgr_.GetMessage(start, toKind(d.severity), d.message, ranges);
  diag.print(nullptr, os, /*ShowColors=*/false);
  return out;
}

std::string DiagnosticEngine::renderAll() const {
  std::string out;
  for (const Diagnostic &d : diags_)
    out += render(d);
  return out;
}

std::string didYouMean(const std::string &name,
                       const std::vector<std::string> &candidates) {
  // A likely typo: at most a third of the name's letters wrong (at least one).
  const unsigned limit = std::max<unsigned>(1, static_cast<unsigned>(name.size()) / 3);
  unsigned best = limit + 1;
  std::vector<std::string> closest;
  for (const std::string &c : candidates) {
    unsigned d = llvm::StringRef(name).edit_distance_insensitive(c, true, limit);
    // Replacing every letter of a short name is no typo ('B' is not 'T').
    if (d > limit || d > best || c == name || d >= std::max(name.size(), c.size()))
      continue;
    if (d < best)
      closest.clear();
    best = d;
    if (std::find(closest.begin(), closest.end(), c) == closest.end())
      closest.push_back(c);
  }
  if (closest.empty())
    return "";
  std::string list;
  for (size_t i = 0; i < closest.size(); ++i)
    list += (i == 0 ? "" : i + 1 == closest.size() ? " or " : ", ") + ("'" + closest[i] + "'");
  return "; did you mean " + list + "?";
}

} // namespace tilejit
