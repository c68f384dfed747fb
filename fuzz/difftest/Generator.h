//===- Generator.h - Random valid kernels for the differential tester -*- C++ -*-===//
///
/// \file
/// Builds a random kernel and its launch from a seed, as Csmith and YARPGen
/// do for C: every program follows the grammar and the typing rules of
/// docs/dsl.md, so the compiler must accept it (a rejection is a failure of
/// class "rejected"). The same seed gives the same program on every host.
///
/// A program is a few snippets, each exercising a feature with random
/// operands: elementwise expressions over tiles of rank 1-4 (sizes mostly
/// not multiples of the vector width, broadcasting, masks), every element
/// kind, cast and bitcast, every math builtin, shifts by constant and
/// runtime amounts, reductions, mma/dot over every operand kind and shape
/// class, gather/scatter, scalar accesses, runtime and compile-time `if`,
/// loops with runtime bounds and loop-carried tiles (double buffering,
/// swaps), compound assignment to vars, prefetches, streaming stores,
/// in-place updates, compile-time parameters, conditional parameters
/// (present or absent, used under `if` on their guard), integer literals
/// near the int64 limits, narrow-kind wrapping and special float constants.
/// Tensors are contiguous, padded, transposed or strided, with padding
/// around them in storage.
///
//===----------------------------------------------------------------------===//
#ifndef TILEJIT_FUZZ_DIFFTEST_GENERATOR_H
#define TILEJIT_FUZZ_DIFFTEST_GENERATOR_H

#include "Program.h"

#include <cstdint>
#include <set>
#include <string>
#include <vector>

namespace tilejit::difftest {

/// The program of `seed` (its launch included; the inputs' seed is `seed`).
Program generateProgram(uint64_t seed);

/// Recomputes ArgSpec::exact from the program's statements: a tensor is
/// inexact when a value written into it depends on a float sum, an mma or
/// an approximate math builtin (or on an inexact tensor), directly or
/// through a condition, a loop bound or an index. Used after shrinking.
void markExactness(Program &p);

/// A feature of issue 32's list (and of the generator's later additions)
/// as a named group of the generator's feature names: a program covers it
/// when it has one of them (a name ending in '*' is a prefix). The
/// campaign's summary counts programs per group, the unit tests check that
/// every group is generated.
struct FeatureGroup {
  std::string name;
  std::vector<std::string> any;
  bool covers(const std::set<std::string> &features) const;
};
const std::vector<FeatureGroup> &featureGroups();

} // namespace tilejit::difftest

#endif
