//===- tilejit_lib.cpp - Anchor of the shared libtilejit --------------------===//
//
// libtilejit.so is the object files of every room; this file gives the
// target a source of its own, and the C name of the release.
//
//===----------------------------------------------------------------------===//
#include "tilejit/tilejit.h"

#include "llvm/Config/llvm-config.h"

#include <string>

/// "tilejit <release> (LLVM <version>)", the release and LLVM that
/// `tilejit --version` prints: a C caller (dlopen, ctypes) can tell which
/// library it loaded without the C++ API.
extern "C" __attribute__((visibility("default"))) const char *tilejit_version_string() {
  static const std::string text =
      "tilejit " + tilejit::version() + " (LLVM " LLVM_VERSION_STRING ")";
  return text.c_str();
}
