//===- Api.cpp - The public C++ API over the compiler ---------------------===//
///
/// \file
/// include/tilejit/tilejit.h: thin value types over jit::Compiler, every
/// llvm::Error turned into a message at this boundary.
///
//===----------------------------------------------------------------------===//
#include "tilejit/tilejit.h"

#include "jit/CompilePool.h"
#include "jit/Compiler.h"
#include "jit/Errors.h"

#include "dsl/Frontend.h"
#include "dsl/syntax/AST.h"

#ifndef TILEJIT_VERSION
#define TILEJIT_VERSION "0"
#endif

namespace tilejit {

struct Access {
  static const jit::KernelSource &source(const Source &s) { return *s.impl_; }
  static Source makeSource(jit::KernelSource s) {
    return Source(std::make_shared<const jit::KernelSource>(std::move(s)));
  }
  static Kernel makeKernel(const jit::KernelRef &r) { return Kernel(r.kernel, r.compiled); }
  static const jit::CompiledKernel &kernel(const Kernel &k) { return *k.impl_; }
};

namespace {

/// The process-wide compiler for the host (or TILEJIT_TARGET), as an error
/// rather than an abort when it cannot be made.
llvm::Expected<jit::Compiler &> compiler() {
  return jit::Compiler::instance(jit::TargetLevel::Host);
}

jit::DumpStage dumpStage(Stage s) {
  switch (s) {
  case Stage::Ast: return jit::DumpStage::Ast;
  case Stage::Tile: return jit::DumpStage::Tile;
  case Stage::TileOpt: return jit::DumpStage::TileOpt;
  case Stage::Llvm: return jit::DumpStage::Llvm;
  case Stage::LlvmOpt: return jit::DumpStage::LlvmOpt;
  case Stage::Asm: return jit::DumpStage::Asm;
  }
  llvm_unreachable("every stage is handled");
}

Status failure(llvm::Error err) {
  auto [kind, message] = jit::takeKindedMessage(std::move(err));
  switch (kind) {
  case jit::ErrorKind::Compile: return Status::error(std::move(message), ErrorKind::Compile);
  case jit::ErrorKind::Type: return Status::error(std::move(message), ErrorKind::Type);
  case jit::ErrorKind::Value: return Status::error(std::move(message), ErrorKind::Value);
  case jit::ErrorKind::Other: break;
  }
  return Status::error(std::move(message), ErrorKind::Other);
}

/// The public specialisation as the compiler's value (element types are
/// the DSL's scalar kinds, in their order).
jit::Specialization toJit(const Specialization &spec) {
  static_assert(static_cast<int>(ElemType::F32) == static_cast<int>(ir::ScalarKind::F32) &&
                    static_cast<int>(ElemType::BF16) == static_cast<int>(ir::ScalarKind::BF16),
                "ElemType lists the DSL's scalar kinds in their order");
  jit::Specialization out;
  for (const auto &[name, v] : spec) {
    switch (v.kind()) {
    case SpecValue::Kind::Text: out.emplace_back(name, v.text()); break;
    case SpecValue::Kind::Dtype:
      out.emplace_back(name, static_cast<ir::ScalarKind>(v.dtype()));
      break;
    case SpecValue::Kind::Int: out.emplace_back(name, v.integer()); break;
    case SpecValue::Kind::Bool: out.emplace_back(name, v.boolean()); break;
    case SpecValue::Kind::Enum: out.emplace_back(name, jit::SpecValue::enumerator(v.text())); break;
    }
  }
  return out;
}

Specialization fromJit(const jit::Specialization &spec) {
  Specialization out;
  for (const auto &[name, v] : spec) {
    switch (v.kind()) {
    case jit::SpecValue::Kind::Text: out.emplace_back(name, v.text()); break;
    case jit::SpecValue::Kind::Dtype: out.emplace_back(name, static_cast<ElemType>(v.dtype())); break;
    case jit::SpecValue::Kind::Int: out.emplace_back(name, v.integer()); break;
    case jit::SpecValue::Kind::Bool: out.emplace_back(name, v.boolean()); break;
    case jit::SpecValue::Kind::Enum: out.emplace_back(name, SpecValue::enumerator(v.text())); break;
    }
  }
  return out;
}

} // namespace

Source Source::fromText(std::string name, std::string text) {
  return Access::makeSource(jit::KernelSource(std::move(name), std::move(text)));
}

Result<Source> Source::fromFile(const std::string &path) {
  auto s = jit::KernelSource::fromFile(path);
  if (!s)
    return failure(s.takeError());
  return Access::makeSource(std::move(*s));
}

const std::string &Source::name() const { return impl_->name(); }
const std::string &Source::text() const { return impl_->text(); }

const std::string &Kernel::key() const { return impl_->key().str(); }

StageTimes Kernel::times() const {
  const jit::StageTimes &t = impl_->times();
  return {t.parse, t.sema, t.tilePasses, t.codegen, t.llvmOpt, t.machineCode, t.total};
}

const std::vector<ParamSig> &Kernel::signature() const { return impl_->signature(); }
int64_t Kernel::scratchBytes() const { return impl_->scratchBytes(); }

Status Kernel::launch(const Args &args, int threads) const {
  if (llvm::Error err = impl_->launch(args, threads))
    return failure(std::move(err));
  return Status();
}

Result<Kernel> compile(const Source &source, const std::string &kernel,
                       const Specialization &spec) {
  auto c = compiler();
  if (!c)
    return failure(c.takeError());
  auto k = c->get(Access::source(source), kernel, toJit(spec));
  if (!k)
    return failure(k.takeError());
  return Access::makeKernel(*k);
}

std::future<Result<Kernel>> compileAsync(const Source &source, const std::string &kernel,
                                         const Specialization &spec) {
  // The task holds its own copies: the caller may drop its source at once.
  auto task = std::make_shared<std::packaged_task<Result<Kernel>()>>(
      [source, kernel, spec] { return compile(source, kernel, spec); });
  std::future<Result<Kernel>> result = task->get_future();
  jit::CompilePool::process().submit([task] { (*task)(); });
  return result;
}

Result<Specialization> specialize(const Source &source, const std::string &kernel,
                                  const Specialization &spec) {
  auto c = compiler();
  if (!c)
    return failure(c.takeError());
  auto bound = c->specialize(Access::source(source), kernel, toJit(spec));
  if (!bound)
    return failure(bound.takeError());
  return fromJit(*bound);
}

Result<std::string> emit(const Source &source, const std::string &kernel,
                         const Specialization &spec, Stage stage) {
  auto c = compiler();
  if (!c)
    return failure(c.takeError());
  auto text = c->emit(Access::source(source), kernel, toJit(spec), dumpStage(stage));
  if (!text)
    return failure(text.takeError());
  return std::move(*text);
}

Result<Declaration> declaration(const Source &source, const std::string &kernel) {
  // The one parse of this source the compiler shares (KernelSource::parsed).
  auto file = Access::source(source).parsed();
  if (!file)
    return failure(file.takeError());
  const dsl::ParsedFile *parsed = file->get();
  for (const auto &k : parsed->ast().kernels) {
    if (k->name != kernel)
      continue;
    Declaration d;
    d.kernel = k->name;
    for (const dsl::ast::CompileParam &c : k->cparams) {
      CompileParamDecl &out = d.compileParams.emplace_back();
      out.name = c.name;
      switch (c.kind) {
      case dsl::ast::CompileParam::Kind::Dtype: out.kind = CompileParamDecl::Kind::Dtype; break;
      case dsl::ast::CompileParam::Kind::Int: out.kind = CompileParamDecl::Kind::Int; break;
      case dsl::ast::CompileParam::Kind::Bool: out.kind = CompileParamDecl::Kind::Bool; break;
      case dsl::ast::CompileParam::Kind::Enum: out.kind = CompileParamDecl::Kind::Enum; break;
      }
      out.choices = c.choices;
      out.hasDefault = c.hasDefault;
      out.defaultValue = c.defaultValue;
    }
    for (const dsl::ast::Param &p : k->params)
      d.params.push_back({p.name, p.isTensor, p.elemType.name, p.dims, p.guard != nullptr});
    return d;
  }
  std::string message = source.name() + ": no kernel '" + kernel + "' (the file declares";
  const char *sep = " ";
  for (const auto &k : parsed->ast().kernels) {
    message.append(sep).append(k->name);
    sep = ", ";
  }
  message.append(parsed->ast().kernels.empty() ? " none)" : ")");
  return Status::error(std::move(message), ErrorKind::Compile);
}

CacheStats cacheStats() {
  auto c = compiler();
  if (!c) {
    llvm::consumeError(c.takeError());
    return {};
  }
  jit::CacheStats s = c->stats();
  return {s.entries,     s.memoryHits,     s.diskHits,  s.compiles,
          s.memoryBytes, s.memoryMaxBytes, s.evictions, s.mappedBytes};
}

void clearMemoryCache() {
  if (auto c = compiler())
    c->clearMemoryCache();
  else
    llvm::consumeError(c.takeError());
}

std::string version() { return TILEJIT_VERSION; }

} // namespace tilejit
