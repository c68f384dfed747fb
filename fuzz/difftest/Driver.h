//===- Driver.h - One program at every target, in debug mode and interpreted -*- C++ -*-===//
///
/// \file
/// Runs one program of the differential tester: compiles it at AVX-512
/// (where the host has it), at AVX2 and in debug mode (the host's level),
/// runs each on its own copy of the same inputs (one thread, programs in
/// order), runs the reference interpreter, and compares:
///
/// - the compiled runs with each other bit for bit wherever the interpreter
///   allows no error for the element (or, where it cannot run the program,
///   in the tensors the generator knows to be exact), a difference in a
///   NaN's payload alone being a class of its own;
/// - each compiled run with the interpreter within the element's tolerance
///   (0: bitwise, a NaN must be a NaN; +inf: not compared);
/// - the storage around every tensor (padding), which must be unchanged;
/// - debug mode's bounds report with the interpreter's first violation
///   (whether there is one, and its source location).
///
/// The result is a failure class ("" when the program passes) with details.
///
//===----------------------------------------------------------------------===//
#ifndef TILEJIT_FUZZ_DIFFTEST_DRIVER_H
#define TILEJIT_FUZZ_DIFFTEST_DRIVER_H

#include "Interpreter.h"
#include "Program.h"

#include <string>
#include <vector>

namespace tilejit::difftest {

struct Verdict {
  /// "" (passed), "rejected", "launch-error", "padding", "violation-missed",
  /// "violation-spurious", "violation-location", "mismatch-debug",
  /// "mismatch-levels", "mismatch-interp", "nan-payload".
  std::string failureClass;
  std::string detail;
  /// Why the interpreter could not run the program ("" when it did).
  std::string notInterpreted;
  /// Whether debug mode reported a bounds violation.
  bool violation = false;
};

/// The inputs of `p`'s launch, each tensor's from its ArgSpec::dataSeed: storage with
/// special values (+-0, subnormals, NaN, +-inf, each kind's extremes,
/// values near f16/bf16 rounding boundaries) among ordinary ones.
std::vector<Argument> makeInputs(const Program &p);

/// Compiles and runs `text` (the kernel p.kernel, launched as `p.args`
/// says, compile-time parameters p.cparams' values) in every mode and
/// compares the results.
Verdict checkProgram(const Program &p, const std::string &text);

/// Drops the compilers' in-memory caches (each program's kernels are new).
void clearCaches();

/// Sets up the process for checking: no disk cache.
void initDriver();

} // namespace tilejit::difftest

#endif
