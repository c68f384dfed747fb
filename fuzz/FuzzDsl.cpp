//===- FuzzDsl.cpp - Fuzz target: DSL source to diagnostics ---------------===//
#include "FuzzTargets.h"

#include "codegen/llvm/CodeGen.h"
#include "codegen/passes/Pipeline.h"
#include "dsl/Frontend.h"
#include "dsl/ir/Verifier.h"
#include "dsl/ir/Walk.h"
#include "dsl/syntax/AST.h"

#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

#include <cassert>
#include <string>

namespace tilejit::fuzz {

namespace {

/// Inputs above this are skipped: the limits under test are depth and
/// literal size, which a few kilobytes reach, and small inputs run fast.
constexpr size_t kMaxSource = 64 * 1024;
/// LLVM lowering only for kernels of at most this many Tile IR ops.
constexpr size_t kMaxOpsForCodegen = 2000;

/// A value for every compile-time parameter without a default.
dsl::SpecValues defaults(const dsl::ast::Kernel &k) {
  dsl::SpecValues spec;
  for (const dsl::ast::CompileParam &p : k.cparams) {
    if (p.hasDefault)
      continue;
    switch (p.kind) {
    case dsl::ast::CompileParam::Kind::Dtype:
    case dsl::ast::CompileParam::Kind::Enum:
      spec.push_back({p.name, p.choices.empty() ? "f32" : p.choices.front()});
      break;
    case dsl::ast::CompileParam::Kind::Int:
      spec.push_back({p.name, "16"});
      break;
    case dsl::ast::CompileParam::Kind::Bool:
      spec.push_back({p.name, "false"});
      break;
    }
  }
  return spec;
}

} // namespace

int dslFrontEnd(const uint8_t *data, size_t size) {
  if (size > kMaxSource)
    return 0;
  DiagnosticEngine diags;
  uint32_t buf = diags.addBuffer(
      "fuzz.tile", std::string(reinterpret_cast<const char *>(data), size));
  auto file = dsl::parse(diags, buf);
  if (!file) {
    assert(diags.hasErrors() && "a parse failure names its reason");
    return 0;
  }
  unsigned lowered = 0;
  for (const auto &k : file->ast().kernels) {
    if (++lowered > 4)
      break;
    auto kernel = dsl::lowerKernel(*file, k->name, defaults(*k), diags);
    if (!kernel) {
      assert(diags.hasErrors() && "a lowering failure names its reason");
      continue;
    }
    if (!passes::runDefaultPipeline(*kernel, diags))
      continue;
    if (!ir::verify(*kernel, diags))
      continue;
    size_t ops = 0;
    ir::walk(*kernel, [&](ir::Op &) { ++ops; });
    if (ops > kMaxOpsForCodegen)
      continue;
    llvm::LLVMContext ctx;
    codegen::TargetInfo target;
    target.triple = "x86_64-unknown-linux-gnu";
    (void)codegen::lowerToLLVM(*kernel, ctx, target, "fuzz", diags);
  }
  return 0;
}

} // namespace tilejit::fuzz
