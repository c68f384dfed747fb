//===- tile-opt.cpp - DSL in, chosen stages and passes, text out ----------===//
//
// tile-opt FILE.tile --kernel NAME [--set K=V]... [--emit STAGE]
//          [--pass a,b] [--print-after-all] [--target avx2|avx512]
//
// Stops after any stage of the pipeline and prints it, as Toy's `-emit`;
// `--pass` runs chosen Tile IR passes instead of the default pipeline.
//
//===----------------------------------------------------------------------===//
#include "codegen/passes/Pipeline.h"
#include "dsl/Frontend.h"
#include "dsl/ir/Printer.h"
#include "jit/Compiler.h"

#include <CLI/CLI.hpp>

#include <fstream>
#include <iostream>
#include <sstream>

using namespace tilejit;

int main(int argc, char **argv) {
  CLI::App app{"tile-opt: run the tilejit pipeline up to a stage and print it"};
  std::string file, kernel, emit = "tile-opt", target;
  std::vector<std::string> sets, passes;
  bool printAfterAll = false;
  app.add_option("file", file, ".tile source")->required();
  app.add_option("--kernel", kernel, "kernel name (default: the first)");
  app.add_option("--set", sets, "compile-time parameter, NAME=VALUE");
  app.add_option("--emit", emit, "ast|tile|tile-opt|llvm|llvm-opt|asm")
      ->check(CLI::IsMember({"ast", "tile", "tile-opt", "llvm", "llvm-opt", "asm"}));
  app.add_option("--pass", passes, "Tile IR passes to run, in order")->delimiter(',');
  app.add_flag("--print-after-all", printAfterAll, "print the IR after every pass");
  app.add_option("--target", target, "avx2|avx512 (default: host)")
      ->check(CLI::IsMember({"avx2", "avx512"}));
  CLI11_PARSE(app, argc, argv);

  std::ifstream in(file);
  if (!in) {
    std::cerr << "tile-opt: error: cannot read '" << file << "'\n";
    return 1;
  }
  std::stringstream text;
  text << in.rdbuf();
  dsl::SpecValues spec;
  for (const std::string &s : sets) {
    auto eq = s.find('=');
    if (eq == std::string::npos) {
      std::cerr << "tile-opt: error: --set expects NAME=VALUE, got '" << s << "'\n";
      return 1;
    }
    spec.emplace_back(s.substr(0, eq), s.substr(eq + 1));
  }

  if (emit == "llvm" || emit == "llvm-opt" || emit == "asm") {
    jit::TargetLevel level = target == "avx2"     ? jit::TargetLevel::Avx2
                             : target == "avx512" ? jit::TargetLevel::Avx512
                                                  : jit::TargetLevel::Host;
    auto compiler = jit::Compiler::instance(level);
    if (!compiler) {
      std::cerr << "tile-opt: error: " << llvm::toString(compiler.takeError()) << "\n";
      return 1;
    }
    jit::KernelSource source(file, text.str());
    if (kernel.empty()) {
      DiagnosticEngine diags;
      auto parsed = dsl::parse(diags, diags.addBuffer(file, text.str()));
      if (!parsed || parsed->kernelNames().empty()) {
        std::cerr << diags.renderAll();
        return 1;
      }
      kernel = parsed->kernelNames().front();
    }
    jit::DumpStage stage = emit == "llvm"       ? jit::DumpStage::Llvm
                           : emit == "llvm-opt" ? jit::DumpStage::LlvmOpt
                                                : jit::DumpStage::Asm;
    auto out = compiler->emit(source, kernel, spec, stage);
    if (!out) {
      std::cerr << llvm::toString(out.takeError());
      return 1;
    }
    std::cout << *out;
    return 0;
  }

  DiagnosticEngine diags;
  uint32_t buffer = diags.addBuffer(file, text.str());
  auto parsed = dsl::parse(diags, buffer);
  if (!parsed) {
    std::cerr << diags.renderAll();
    return 1;
  }
  if (emit == "ast") {
    std::cout << dsl::printAST(*parsed);
    return 0;
  }
  if (kernel.empty() && !parsed->kernelNames().empty())
    kernel = parsed->kernelNames().front();
  auto k = dsl::lowerKernel(*parsed, kernel, spec, diags);
  if (!k) {
    std::cerr << diags.renderAll();
    return 1;
  }
  if (emit == "tile" && passes.empty()) {
    std::cout << ir::print(*k);
    return 0;
  }
  passes::PipelineOptions opts;
  if (printAfterAll)
    opts.afterPass = [](const std::string &name, const ir::Kernel &kk, bool changed) {
      std::cout << "// -----// IR after " << name << (changed ? "" : " (unchanged)")
                << " //----- //\n"
                << ir::print(kk);
    };
  bool ok = passes.empty() ? passes::runDefaultPipeline(*k, diags, opts)
                           : passes::runPasses(*k, passes, diags, opts);
  std::cerr << diags.renderAll();
  if (!ok)
    return 1;
  if (!printAfterAll)
    std::cout << ir::print(*k);
  return 0;
}
