//===- Interpreter.h - The DSL's reference semantics, for differential tests -*- C++ -*-===//
///
/// \file
/// An interpreter of the tile DSL written from docs/dsl.md for the
/// differential tester (tilejit-difftest): it walks the parser's AST
/// (dsl/syntax) and gives each construct the meaning the manual states,
/// sharing nothing with the compiler past the parser (no sema, no Tile IR,
/// no constant folder). Programs run one after another in program order over
/// the whole grid.
///
/// Besides the result, the interpreter states how far a compiled kernel may
/// lie from it, element by element: zero where the manual fixes the result
/// bit for bit, a bound where it allows another summation order (sums,
/// mma) or an error in ulps (math builtins), carried through the operations
/// that follow; infinity where such an error can change the result
/// discontinuously (a comparison, a cast to an integer), so the element is
/// not compared.
///
//===----------------------------------------------------------------------===//
#ifndef TILEJIT_FUZZ_DIFFTEST_INTERPRETER_H
#define TILEJIT_FUZZ_DIFFTEST_INTERPRETER_H

#include "dsl/syntax/AST.h"
#include "runtime/Runtime.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace tilejit::difftest {

/// A tensor argument with its own storage: `shape` and `strides` (in
/// elements, any non-negative values: padded rows, transposed axes) locate
/// element [i0, i1, ...] at storage element `offset + sum(ik * strides[k])`.
/// Storage holds `storage.size() / elemBytes(type)` elements; the elements
/// outside the tensor (padding) must come out of a run unchanged.
struct Tensor {
  rt::ElemType type = rt::ElemType::F32;
  std::vector<int64_t> shape, strides;
  int64_t offset = 0;
  std::vector<uint8_t> storage;
};

/// A runtime scalar argument: i1, i32 and i64 in `i`, f32 in `f`.
struct Scalar {
  rt::ElemType type = rt::ElemType::I64;
  int64_t i = 0;
  float f = 0;
};

using Argument = std::variant<Tensor, Scalar>;

/// The first bounds violation in program order (docs/dsl.md §10): what
/// debug mode must report.
struct Violation {
  int64_t program = 0;          ///< linear program index (axis 0 fastest)
  unsigned line = 0, column = 0; ///< the access's source location
  std::string message;          ///< for humans: access, index, bound
};

struct Outcome {
  /// The arguments after the run (scalars unchanged).
  std::vector<Argument> args;
  /// Per argument (empty for scalars): per storage element, the largest
  /// |compiled - reference| allowed; 0 means bitwise equal (a NaN must be a
  /// NaN), +inf means not compared.
  std::vector<std::vector<double>> tolerance;
  /// Set when some access misses its tensor. The run goes on (the access
  /// reads `other` or writes nothing, as in the ordinary build), so `args`
  /// is still what the ordinary build must produce.
  std::optional<Violation> violation;
  /// Set when an index, offset or mask of some access carries an error
  /// bound (it was computed from a sum, an mma or a math builtin), so the
  /// compiled kernel may access other elements: `violation` (present or
  /// absent) is then not a reliable verdict, and the tensors such an access
  /// may write are marked not compared.
  bool violationUnsure = false;
};

/// Runs kernel `kernel` of `file` for the compile-time parameters `spec`
/// (name -> value as `tilejit compile --set` takes them; defaults applied)
/// on `args` (in declaration order: one per parameter present in the
/// specialisation, as a launch takes them; one per declared parameter is
/// accepted too, the absent ones' entries ignored). An error (as a message)
/// for a program
/// the interpreter cannot run: a construct it does not implement, an
/// ill-typed program, a grid or loop past the step budget it was given.
struct Limits {
  int64_t maxSteps = 50'000'000; ///< element operations, all programs together
};
std::variant<Outcome, std::string>
interpret(const dsl::ast::File &file, const std::string &kernel,
          const std::map<std::string, std::string> &spec,
          std::vector<Argument> args, const Limits &limits = {});

/// Bytes of one element of `t` (i1 takes a byte).
unsigned elemBytes(rt::ElemType t);

} // namespace tilejit::difftest

#endif
