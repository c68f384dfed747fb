//===- Errors.h - Errors that say what kind of mistake they are -*- C++ -*-===//
///
/// \file
/// An llvm::Error with a kind: a front-end diagnostic, an argument of the
/// wrong kind or type, an argument of the right type whose shape or value is
/// refused. The public API (tilejit::ErrorKind) hands the kind on, so that a
/// binding raises the matching exception (Python: CompileError, TypeError,
/// ValueError) without reading the message. An error made another way
/// (llvm::createStringError) has no kind: `ErrorKind::Other`.
///
//===----------------------------------------------------------------------===//
#ifndef TILEJIT_JIT_ERRORS_H
#define TILEJIT_JIT_ERRORS_H

#include "llvm/Support/Error.h"

#include <string>

namespace tilejit::jit {

enum class ErrorKind {
  Other,   ///< anything else: a fault of the machine, a bounds violation
  Compile, ///< a diagnostic of the DSL source or of its specialisation
  Type,    ///< an argument list of the wrong length, kinds or element types
  Value,   ///< an argument of the right type with a refused shape or value
};

class KindedError : public llvm::ErrorInfo<KindedError> {
public:
  static char ID;
  KindedError(ErrorKind kind, std::string message)
      : kind_(kind), message_(std::move(message)) {}
  ErrorKind kind() const { return kind_; }
  const std::string &text() const { return message_; }
  void log(llvm::raw_ostream &os) const override { os << message_; }
  std::error_code convertToErrorCode() const override { return llvm::inconvertibleErrorCode(); }

private:
  ErrorKind kind_;
  std::string message_;
};

inline llvm::Error makeError(ErrorKind kind, std::string message) {
  return llvm::make_error<KindedError>(kind, std::move(message));
}

/// The message and kind of `err` (consumed); Other for an error without one.
inline std::pair<ErrorKind, std::string> takeKindedMessage(llvm::Error err) {
  ErrorKind kind = ErrorKind::Other;
  std::string message;
  auto add = [&](const std::string &text) {
    if (!message.empty())
      message.push_back('\n');
    message.append(text);
  };
  llvm::handleAllErrors(
      std::move(err),
      [&](const KindedError &e) {
        kind = e.kind();
        add(e.text());
      },
      [&](const llvm::ErrorInfoBase &e) { add(e.message()); });
  return {kind, std::move(message)};
}

} // namespace tilejit::jit

#endif
