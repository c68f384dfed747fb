//===- PipelineTestSupport.cpp - Shared helper of the unit tests ----------===//
#include "codegen/passes/Pipeline.h"

bool runPipelineForTest(tilejit::ir::Kernel &kernel, tilejit::DiagnosticEngine &diags) {
  return tilejit::passes::runDefaultPipeline(kernel, diags);
}
