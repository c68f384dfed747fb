//===- Frontend.h - .tile source -> checked AST -> Tile IR -------*- C++ -*-===//
///
/// \file
/// The front end's public surface: parse a buffer of the DiagnosticEngine
/// into an AST, print the AST (the `ast` dump stage), and lower one kernel of
/// it, specialised, to a verified Tile IR `Kernel`. Nothing here knows LLVM
/// IR. Every user error is a diagnostic; no ill-typed kernel is returned.
///
//===----------------------------------------------------------------------===//
#ifndef TILEJIT_DSL_FRONTEND_H
#define TILEJIT_DSL_FRONTEND_H

#include "dsl/sema/Specialization.h"
#include "dsl/ir/IR.h"
#include "dsl/support/Diagnostics.h"

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tilejit::dsl {

namespace ast {
struct File; // dsl/syntax/AST.h
}

/// Owns a parsed file (the AST is opaque outside dsl/).
class ParsedFile {
public:
  ~ParsedFile();
  ParsedFile(ParsedFile &&) noexcept;
  ParsedFile &operator=(ParsedFile &&) noexcept;
  const ast::File &ast() const { return *file_; }
  /// Names of the kernels in the file, in order.
  std::vector<std::string> kernelNames() const;
  /// "name: kind [= default]" per compile-time parameter of a kernel, e.g.
  /// "T: f16|bf16|f32", "D: i64", "CAUSAL: bool = false" (empty if unknown).
  std::vector<std::string> compileTimeParams(const std::string &kernel) const;

  explicit ParsedFile(std::unique_ptr<ast::File> f);

private:
  std::unique_ptr<ast::File> file_;
};

/// Parses buffer `buffer` of `diags`. Returns null (with diagnostics) on a
/// syntax error.
std::unique_ptr<ParsedFile> parse(DiagnosticEngine &diags, uint32_t buffer);

/// The AST dump: one node per line, indented, with `line:col` locations.
std::string printAST(const ParsedFile &file);

/// The names of the builtin functions, sorted (docs/dsl.md, section 6 lists
/// them with their meaning).
const std::vector<std::string> &builtinNames();

/// A specialisation before binding may hold its values as text
/// ({"T","f16"}, {"D","128"}); see dsl/sema/Specialization.h.
using SpecValues = Specialization;

/// Binds `spec` to kernel `kernel`'s compile-time parameters, as the compiler
/// does before it forms a tiling key: every declared parameter with its typed
/// value (the given one, text parsed by the parameter's kind: `true`/`false`
/// or 0/1, decimal or 0x integers, dtype and enumerator names; or its
/// default), sorted by name and hashed, so that two specialisations that mean
/// one kernel are equal. An unknown kernel or parameter name (with the close
/// matches), a name given twice, a missing value, a value of the wrong kind
/// and an integer outside int64 are diagnostics naming the parameter and the
/// rule; returns nullopt then. A value already bound is checked again (it
/// may have been bound to another kernel), which parses nothing.
std::optional<Specialization> bindSpecialization(const ParsedFile &file,
                                                 const std::string &kernel,
                                                 const Specialization &spec,
                                                 DiagnosticEngine &diags);

/// Type-checks kernel `kernel` under `spec` and lowers it to Tile IR. A bound
/// `spec` (from bindSpecialization for this kernel) is used as it is; any
/// other is bound first. Missing, unknown or ill-typed specialisation values,
/// and every type/shape error of the body, are diagnostics; returns null then. The returned kernel passes
/// `ir::verify`, still holds `const_param` ops (the specialize pass folds
/// them) and has no buffers planned.
std::unique_ptr<ir::Kernel> lowerKernel(const ParsedFile &file,
                                        const std::string &kernel,
                                        const Specialization &spec,
                                        DiagnosticEngine &diags);

} // namespace tilejit::dsl

#endif
