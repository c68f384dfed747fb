//===- FuzzTargets.h - Entry functions of the fuzzers -----------*- C++ -*-===//
///
/// \file
/// One function per fuzz target, taking the fuzz bytes. libFuzzer calls them
/// through LibFuzzerMain.cpp (a clang build with TILE_FUZZ=ON); the normal
/// build replays every saved input through ReplayMain.cpp, so each crash a
/// fuzzer ever found stays a regression test under every compiler and
/// sanitizer. They return 0 whatever the input: a user error is a
/// diagnostic, and anything else (a crash, a sanitizer report, an assert) is
/// the bug being looked for.
///
//===----------------------------------------------------------------------===//
#ifndef TILEJIT_FUZZ_FUZZTARGETS_H
#define TILEJIT_FUZZ_FUZZTARGETS_H

#include <cstddef>
#include <cstdint>

namespace tilejit::fuzz {

/// DSL source -> parse, sema and lowering of every kernel (compile-time
/// parameters without a default get the first allowed value), the default
/// Tile IR pipeline, the verifier, and LLVM IR for small accepted kernels.
int dslFrontEnd(const uint8_t *data, size_t size);

/// Tile IR text -> parser, verifier, and for verified kernels the default
/// pipeline and the verifier again.
int tileIR(const uint8_t *data, size_t size);

/// The five aclnn operators through the public C API: the first byte picks
/// the operator, the next 16 a small problem and how phase 2 is called, the
/// rest edits it (index contents, lying descriptors, attributes); layout in
/// FuzzAclnn.cpp. Every storage ends at a PROT_NONE page, so an access
/// outside it faults even in JIT-compiled code; a call that returns an
/// error must leave every buffer as it was (else it aborts).
int aclnnOperators(const uint8_t *data, size_t size);

} // namespace tilejit::fuzz

#endif
