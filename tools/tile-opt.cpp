//===- tile-opt.cpp - DSL in, chosen stages and passes, text out ----------===//
//
// tile-opt FILE.tile --kernel NAME [--set K=V]... [--emit STAGE]
//          [--pass a,b] [--print-after-all] [--target avx2|avx512]
//          [--bf16-dot] [--bf16-dot-fast] [--amx]
// tile-opt FILE.tir [--pass a,b | --pipeline] [--emit tile|llvm]
//          [--verify-diagnostics]
// tile-opt --runtime-library [--target avx2|avx512]
//
// Stops after any stage of the pipeline and prints it, as Toy's `-emit`;
// `--pass` runs chosen Tile IR passes instead of the default pipeline. A
// `.tir` file is Tile IR text (dsl/ir/IRParser.h): it runs only the passes
// asked for, as mlir-opt does. `--verify-diagnostics` checks the diagnostics
// against `// expected-error {{...}}` comments (cases split by `// -----`).
// `--runtime-library` prints the LLVM IR of the runtime library (the row-move
// functions kernels declare and the JIT compiles once) for a fixed target.
//
//===----------------------------------------------------------------------===//
#include "codegen/llvm/CodeGen.h"
#include "codegen/passes/Pipeline.h"
#include "dsl/Frontend.h"
#include "dsl/ir/IRParser.h"
#include "dsl/ir/Printer.h"
#include "dsl/ir/Verifier.h"
#include "jit/Compiler.h"

#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/raw_os_ostream.h"
#include "llvm/Support/raw_ostream.h"

#include <CLI/CLI.hpp>

#include <fstream>
#include <iostream>
#include <regex>
#include <sstream>

using namespace tilejit;

namespace {

/// What one run of tile-opt was asked to do (shared by every input kind).
struct Request {
  std::string file, kernel, emit, target;
  std::vector<std::string> passes;
  bool pipeline = false, printAfterAll = false;
  dsl::SpecValues spec;
  bool debug = false; ///< debug mode (insert-bounds-checks guards accesses)
  /// Target features beyond the level (select-mma's bf16 and AMX forms).
  bool bf16Dot = false, bf16DotFast = false, amx = false;
};

bool endsWith(const std::string &s, const std::string &suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

/// A fixed target description, so that `--emit=llvm` on Tile IR text does not
/// depend on the host CPU.
codegen::TargetInfo fixedTarget(const Request &req) {
  const std::string &level = req.target;
  codegen::TargetInfo t;
  t.triple = "x86_64-unknown-linux-gnu";
  if (level == "avx2") {
    t.cpu = "haswell";
    t.features = "+avx,+avx2,+fma,+f16c,-avx512f,-avx512bw,-avx512vl,"
                 "-avx512dq,-avx512cd";
    t.vectorBits = 256;
  } else {
    t.cpu = "skylake-avx512";
    t.features = "+avx,+avx2,+fma,+f16c,+avx512f,+avx512bw,+avx512vl,"
                 "+avx512dq,+avx512cd";
    t.vectorBits = 512;
    // The AVX-512 features the passes decide with; the triple's CPU is kept
    // (the LLVM IR of a .tir input does not depend on them).
    t.hasBf16Dot = req.bf16Dot || req.bf16DotFast;
    t.bf16DotFast = req.bf16DotFast;
    t.hasAmxBf16 = req.amx;
  }
  return t;
}

/// Runs the requested passes on a parsed Tile IR kernel and appends the
/// requested output to `out`. False when a diagnostic error occurred.
bool processIRKernel(ir::Kernel &k, const Request &req, DiagnosticEngine &diags,
                     std::string &out) {
  if (!ir::verify(k, diags))
    return false;
  k.debug = req.debug;
  passes::PipelineOptions opts;
  opts.target = fixedTarget(req);
  if (req.printAfterAll)
    opts.afterPass = [&out](const std::string &name, const ir::Kernel &kk,
                            bool changed) {
      out += "// -----// IR after " + name + (changed ? "" : " (unchanged)") +
             " //----- //\n" + ir::print(kk);
    };
  bool ok = true;
  if (!req.passes.empty())
    ok = passes::runPasses(k, req.passes, diags, opts);
  else if (req.pipeline || req.emit == "tile-opt")
    ok = passes::runDefaultPipeline(k, diags, opts);
  if (!ok)
    return false;
  if (req.emit == "llvm") {
    passes::PipelineOptions plain;
    plain.target = opts.target;
    if (!k.buffersPlanned && !passes::runDefaultPipeline(k, diags, plain))
      return false;
    llvm::LLVMContext ctx;
    auto module = codegen::lowerToLLVM(k, ctx, opts.target,
                                       k.name(), diags);
    if (!module)
      return false;
    llvm::raw_string_ostream os(out);
    module->print(os, nullptr);
    return true;
  }
  if (!req.printAfterAll)
    out += ir::print(k);
  return true;
}

/// Processes one buffer of `diags` (a whole file, or one `// -----` case).
bool processBuffer(const Request &req, DiagnosticEngine &diags, uint32_t buffer,
                   std::string &out) {
  if (endsWith(req.file, ".tir")) {
    auto module = ir::parseModule(diags, buffer);
    if (!module)
      return false;
    bool ok = true, found = false;
    for (auto &k : module->kernels) {
      if (!req.kernel.empty() && k->name() != req.kernel)
        continue;
      found = true;
      ok &= processIRKernel(*k, req, diags, out);
    }
    if (!found && !req.kernel.empty()) {
      diags.error(SourceLoc(), "no kernel '@" + req.kernel + "' in the input");
      return false;
    }
    return ok;
  }
  auto parsed = dsl::parse(diags, buffer);
  if (!parsed)
    return false;
  if (req.emit == "ast") {
    out += dsl::printAST(*parsed);
    return true;
  }
  std::string name = req.kernel;
  if (name.empty() && !parsed->kernelNames().empty())
    name = parsed->kernelNames().front();
  auto k = dsl::lowerKernel(*parsed, name, req.spec, diags);
  if (!k)
    return false;
  if (req.emit == "tile" && req.passes.empty() && !req.pipeline) {
    out += ir::print(*k);
    return true;
  }
  return processIRKernel(*k, req, diags, out);
}

/// One expected diagnostic of a `--verify-diagnostics` case.
struct Expected {
  Severity severity;
  unsigned line;
  std::string message;
  bool matched = false;
};

const char *severityName(Severity s) {
  switch (s) {
  case Severity::Error: return "error";
  case Severity::Warning: return "warning";
  case Severity::Remark: return "remark";
  case Severity::Note: return "note";
  }
  return "error";
}

/// MLIR-style `-verify-diagnostics`: every diagnostic must be expected by a
/// `// expected-<severity> [@+N|@-N|@N] {{message}}` comment and vice versa.
/// Cases are separated by `// -----` lines; each is a fresh buffer padded so
/// that line numbers stay those of the whole file.
int verifyDiagnostics(const Request &req, const std::string &text) {
  std::vector<std::string> lines;
  {
    std::stringstream ss(text);
    std::string l;
    while (std::getline(ss, l))
      lines.push_back(l);
  }
  static const std::regex splitLine(R"(^\s*//\s*-----\s*$)");
  static const std::regex expectRe(
      R"(expected-(error|warning|remark|note)\s*(@([+-]?)([0-9]+))?\s*\{\{(.*)\}\})");
  int failures = 0;
  size_t caseStart = 0;
  while (caseStart <= lines.size()) {
    size_t caseEnd = caseStart;
    while (caseEnd < lines.size() && !std::regex_match(lines[caseEnd], splitLine))
      ++caseEnd;
    std::string chunk;
    for (size_t i = 0; i < caseStart; ++i)
      chunk += "\n";
    std::vector<Expected> expected;
    for (size_t i = caseStart; i < caseEnd; ++i) {
      chunk += lines[i] + "\n";
      std::smatch m;
      if (!std::regex_search(lines[i], m, expectRe))
        continue;
      Expected e;
      std::string sev = m[1];
      e.severity = sev == "error"     ? Severity::Error
                   : sev == "warning" ? Severity::Warning
                   : sev == "remark"  ? Severity::Remark
                                      : Severity::Note;
      long line = static_cast<long>(i) + 1;
      if (m[2].matched) {
        long n = std::stol(m[4]);
        if (m[3] == "+")
          line += n;
        else if (m[3] == "-")
          line -= n;
        else
          line = n;
      }
      e.line = static_cast<unsigned>(line);
      e.message = m[5];
      expected.push_back(e);
    }
    DiagnosticEngine diags;
    diags.setRemarksEnabled(true);
    uint32_t buffer = diags.addBuffer(req.file, chunk);
    std::string out;
    processBuffer(req, diags, buffer, out);
    for (const Diagnostic &d : diags.diagnostics()) {
      bool ok = false;
      for (Expected &e : expected)
        if (!e.matched && e.severity == d.severity && e.line == d.loc.line &&
            d.message.find(e.message) != std::string::npos) {
          e.matched = ok = true;
          break;
        }
      if (!ok) {
        std::cerr << req.file << ":" << d.loc.line << ":" << d.loc.column
                  << ": error: unexpected " << severityName(d.severity)
                  << ": " << d.message << "\n";
        ++failures;
      }
    }
    for (const Expected &e : expected)
      if (!e.matched) {
        std::cerr << req.file << ":" << e.line << ": error: expected "
                  << severityName(e.severity) << " \"" << e.message
                  << "\" was not produced\n";
        ++failures;
      }
    caseStart = caseEnd + 1;
  }
  return failures ? 1 : 0;
}

} // namespace

int main(int argc, char **argv) {
  CLI::App app{"tile-opt: run the tilejit pipeline up to a stage and print it"};
  std::string file, kernel, emit = "tile-opt", target;
  std::vector<std::string> sets, passes;
  bool printAfterAll = false, pipeline = false, verifyDiags = false, debug = false;
  bool bf16Dot = false, bf16DotFast = false, amx = false, runtimeLibrary = false;
  app.add_option("file", file, ".tile source or .tir Tile IR text (none with --runtime-library)");
  app.add_flag("--runtime-library", runtimeLibrary,
               "print the LLVM IR of the runtime library (the row-move functions) instead");
  app.add_flag("--pipeline", pipeline, "run the default Tile IR pipeline");
  app.add_flag("--verify-diagnostics", verifyDiags,
               "check diagnostics against expected-error comments");
  app.add_option("--kernel", kernel, "kernel name (default: the first)");
  app.add_option("--set", sets, "compile-time parameter, NAME=VALUE");
  app.add_option("--emit", emit, "ast|tile|tile-opt|llvm|llvm-opt|asm")
      ->check(CLI::IsMember({"ast", "tile", "tile-opt", "llvm", "llvm-opt", "asm"}));
  app.add_option("--pass", passes, "Tile IR passes to run, in order")->delimiter(',');
  app.add_flag("--print-after-all", printAfterAll, "print the IR after every pass");
  app.add_flag("--debug", debug, "debug mode: bounds checks on every access (TILEJIT_DEBUG)");
  app.add_option("--target", target, "avx2|avx512 (default: host)")
      ->check(CLI::IsMember({"avx2", "avx512"}));
  app.add_flag("--bf16-dot", bf16Dot,
               "Tile IR passes: the avx512 target has vdpbf16ps (AVX512-BF16)");
  app.add_flag("--bf16-dot-fast", bf16DotFast,
               "Tile IR passes: vdpbf16ps outruns the f32 FMAs (implies --bf16-dot)");
  app.add_flag("--amx", amx, "Tile IR passes: the avx512 target has AMX-BF16");
  CLI11_PARSE(app, argc, argv);

  if (runtimeLibrary) {
    Request req;
    req.target = target;
    DiagnosticEngine diags;
    llvm::LLVMContext ctx;
    auto module = codegen::lowerRuntimeLibrary(ctx, fixedTarget(req), diags);
    std::cerr << diags.renderAll();
    if (!module)
      return 1;
    llvm::raw_os_ostream os(std::cout);
    module->print(os, nullptr);
    return 0;
  }
  if (file.empty()) {
    std::cerr << "tile-opt: error: an input file is required (or --runtime-library)\n";
    return 1;
  }
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

  bool emitGiven = app.count("--emit") > 0;
  if (endsWith(file, ".tir") || verifyDiags) {
    Request req{file,  kernel, emit,    target,      passes, pipeline,
                printAfterAll, spec, debug, bf16Dot, bf16DotFast, amx};
    // Tile IR text runs only what was asked for; `--emit=tile` prints it.
    if (endsWith(file, ".tir") && !emitGiven)
      req.emit = "tile";
    if (req.emit != "tile" && req.emit != "tile-opt" && req.emit != "llvm" &&
        !(req.emit == "ast" && !endsWith(file, ".tir"))) {
      std::cerr << "tile-opt: error: --emit=" << req.emit
                << " is not available for this input\n";
      return 1;
    }
    if (verifyDiags)
      return verifyDiagnostics(req, text.str());
    DiagnosticEngine diags;
    std::string out;
    bool ok = processBuffer(req, diags, diags.addBuffer(file, text.str()), out);
    std::cerr << diags.renderAll();
    std::cout << out;
    return ok ? 0 : 1;
  }
  if (pipeline && passes.empty() && emit == "tile")
    emit = "tile-opt";

  if (emit == "llvm" || emit == "llvm-opt" || emit == "asm") {
    jit::TargetLevel level = target == "avx2"     ? jit::TargetLevel::Avx2
                             : target == "avx512" ? jit::TargetLevel::Avx512
                                                  : jit::TargetLevel::Host;
    auto compiler = jit::Compiler::forEmission(level);
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
  k->debug = debug;
  if (emit == "tile" && passes.empty()) {
    std::cout << ir::print(*k);
    return 0;
  }
  passes::PipelineOptions opts;
  Request req{file,  kernel, emit,    target,      passes, pipeline,
              printAfterAll, spec, debug, bf16Dot, bf16DotFast, amx};
  opts.target = fixedTarget(req);
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
