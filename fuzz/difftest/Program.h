//===- Program.h - The differential tester's program representation -*- C++ -*-===//
///
/// \file
/// What the generator builds and the minimiser shrinks: a kernel as a tree
/// of statements and expressions that prints as DSL text (docs/dsl.md), and
/// the launch that goes with it (tensor arguments with their shapes, strides
/// and storage, scalar arguments, the compile-time parameters, the seed of
/// the inputs). Tile sizes are references into one table of sizes, so that
/// shrinking a size changes every shape that uses it alike.
///
/// A program with its launch also prints as a regression file: the kernel
/// text after a header of `// difftest:` comment lines that record the
/// launch, so the file replays on its own (`tilejit-difftest --replay`).
///
//===----------------------------------------------------------------------===//
#ifndef TILEJIT_FUZZ_DIFFTEST_PROGRAM_H
#define TILEJIT_FUZZ_DIFFTEST_PROGRAM_H

#include "runtime/Runtime.h"

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace tilejit::difftest {

using rt::ElemType;

/// The generator's view of a value's type: an element kind and a shape as
/// indices into Program::sizes (empty: a scalar).
struct Ty {
  ElemType elem = ElemType::F32;
  std::vector<int> shape;
  bool isScalar() const { return shape.empty(); }
  bool operator==(const Ty &o) const { return elem == o.elem && shape == o.shape; }
};

/// An expression node. `Lit` prints `text` as written (a number, `true`,
/// `inf`, a name of a constant); `Size` prints size `size` of the table.
struct Expr {
  enum class Kind { Lit, Name, Size, Unary, Binary, Call, Index, List };
  Kind kind = Kind::Lit;
  std::string text;    ///< literal text, name, operator, builtin, tensor
  std::string typeArg; ///< cast<T>, full<T>, ...
  int size = -1;       ///< Kind::Size: index into Program::sizes
  std::vector<Expr> args;
  std::vector<std::string> argNames; ///< per arg; empty when positional
  /// The value's type where the generator knows it (for the minimiser's
  /// replacement by a constant); no type for statements-calls and lists.
  std::optional<Ty> ty;
  /// A literal whose type is not fixed (it adapts to the other operand).
  bool isBareLiteral = false;
};

struct Stmt {
  enum class Kind { Let, Var, Assign, For, If, Expr };
  Kind kind = Kind::Expr;
  std::string name, op; ///< Let/Var/For: the name; Assign: "=", "+=", ...
  Expr target, value, lower, upper, step, cond;
  bool hasStep = false, hasElse = false;
  std::vector<Stmt> body, elseBody;
};

/// One size of the table: a literal, or a compile-time i64 parameter.
struct Size {
  int64_t value = 1;
  std::string param; ///< non-empty: printed as this parameter's name
};

struct CompileParam {
  std::string name;
  std::string decl;  ///< the text after ':' ("f16|bf16|f32", "i64", "bool = false")
  std::string value; ///< the value passed (empty: the default is used)
};

/// A runtime argument of the launch.
struct ArgSpec {
  std::string name;
  bool isTensor = true;
  ElemType type = ElemType::F32;
  std::string typeName;              ///< as declared (a dtype parameter's name)
  std::vector<std::string> dimNames; ///< as declared: names, literals or "_"
  std::vector<int64_t> shape, strides;
  int64_t offset = 0, storage = 0; ///< in elements
  int64_t intValue = 0;            ///< i1 / i32 / i64 scalar
  uint32_t floatBits = 0;          ///< f32 scalar
  /// The generator knows every element the kernel writes here is the same
  /// bit for bit at every target and in debug mode (no float sum, mma or
  /// math builtin feeds it): compared even where the interpreter cannot run.
  bool exact = true;
  /// The seed of this tensor's contents (and of the bytes around it). Each
  /// argument keeps its own, so dropping another argument (the minimiser)
  /// leaves its data as it was.
  uint64_t dataSeed = 0;
  /// A conditional parameter (docs/dsl.md section 4): declared with
  /// `if guard`; absent (`present` false) where the guard is false, and then
  /// not passed at launch nor listed in a regression file's header.
  std::string guard;
  bool present = true;
};

/// The seed of argument `index`'s data when a file does not record one:
/// the argument's position (regression files written before each argument
/// carried its own seed).
uint64_t positionalDataSeed(uint64_t inputSeed, size_t index);

struct Program {
  std::string kernel = "k";
  std::vector<CompileParam> cparams;
  std::vector<ArgSpec> args;
  std::vector<Expr> grid;
  std::vector<Size> sizes;
  std::vector<Stmt> body;
  uint64_t seed = 0;      ///< the generator's seed (0 for a file)
  uint64_t inputSeed = 0; ///< the seed of the tensors' contents
  /// Features used (for the campaign's counts).
  std::set<std::string> features;
};

/// Prints the kernel as DSL text.
std::string printKernel(const Program &p);
/// The compile-time parameters passed (name, value), those with a value.
std::vector<std::pair<std::string, std::string>> specOf(const Program &p);
/// The regression file: header lines (class, seed, launch) and the kernel.
std::string printRegression(const Program &p, const std::string &failureClass,
                            const std::string &detail);
/// Reads a regression file: the launch from its header, the kernel text
/// verbatim (`text`); the program's body stays empty. An error message when
/// the header is malformed.
std::optional<std::string> parseRegression(const std::string &file, Program &p,
                                           std::string &text);

/// Names of element kinds as the DSL writes them.
const char *kindName(ElemType t);
bool isFloatKind(ElemType t);
bool isSignedKind(ElemType t);
unsigned kindBits(ElemType t);

} // namespace tilejit::difftest

#endif
