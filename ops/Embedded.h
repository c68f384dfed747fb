//===- Embedded.h - .tile sources compiled into the library ------*- C++ -*-===//
///
/// \file
/// Every `ops/**/*.tile` file is embedded at build time (cmake/EmbedTile.cmake),
/// so installed binaries need no source tree.
///
//===----------------------------------------------------------------------===//
#ifndef TILEJIT_OPS_EMBEDDED_H
#define TILEJIT_OPS_EMBEDDED_H

#include "jit/Compiler.h"

#include <string>
#include <string_view>

namespace tilejit::ops {

/// The raw text of an embedded file by its path relative to the source root
/// ("ops/samples/softmax.tile"); empty if there is none.
std::string_view embeddedSource(std::string_view path);

/// The embedded file as a KernelSource (hashed once). Asserts that it exists.
const jit::KernelSource &embeddedKernel(const std::string &path);

} // namespace tilejit::ops

#endif
