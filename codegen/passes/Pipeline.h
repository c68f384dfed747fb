//===- Pipeline.h - The Tile IR pass pipeline --------------------*- C++ -*-===//
///
/// \file
/// The passes of codegen/passes/Passes.def run as one linear list of named
/// steps. Each pass returns whether it changed the kernel; the pipeline logs
/// "(unchanged)" otherwise and, in debug builds, verifies after every pass.
///
//===----------------------------------------------------------------------===//
#ifndef TILEJIT_CODEGEN_PASSES_PIPELINE_H
#define TILEJIT_CODEGEN_PASSES_PIPELINE_H

#include "codegen/passes/PassContext.h"

#include <functional>
#include <string>
#include <vector>

namespace tilejit::passes {

struct PipelineOptions {
  /// The target the passes decide for (select-mma, ...); lowerToLLVM must be
  /// given the same one. The default is a plain AVX2 description.
  codegen::TargetInfo target;
  /// Called after every pass with its kebab-case name and whether it changed
  /// anything (for --print-after-all and dumps).
  std::function<void(const std::string &pass, const ir::Kernel &, bool changed)>
      afterPass;
};

/// The default pipeline: every pass of Passes.def, in that order. Returns false with diagnostics on failure
/// (e.g. the local-buffer budget is exceeded).
bool runDefaultPipeline(ir::Kernel &kernel, DiagnosticEngine &diags,
                        const PipelineOptions &options = {});

/// Runs the named passes (kebab-case, as in Passes.def) in order. An unknown
/// name is an error.
bool runPasses(ir::Kernel &kernel, const std::vector<std::string> &names,
               DiagnosticEngine &diags, const PipelineOptions &options = {});

/// Every registered pass name, in Passes.def order.
std::vector<std::string> registeredPasses();

} // namespace tilejit::passes

#endif
