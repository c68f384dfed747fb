//===- Pipeline.cpp - The Tile IR pass pipeline ---------------------------===//
#include "codegen/passes/Pipeline.h"

#include "codegen/passes/CanonicalizeNaN.h"
#include "codegen/passes/FoldConstants.h"
#include "codegen/passes/ForwardTiles.h"
#include "codegen/passes/FuseElementwise.h"
#include "codegen/passes/InsertBoundsChecks.h"
#include "codegen/passes/PlanBuffers.h"
#include "codegen/passes/ResolveOverlap.h"
#include "codegen/passes/SchedulePrefetch.h"
#include "codegen/passes/SelectMma.h"
#include "codegen/passes/SelectMoves.h"
#include "codegen/passes/Specialize.h"
#include "dsl/ir/Verifier.h"

namespace tilejit::passes {

namespace {

struct PassInfo {
  const char *name;
  bool (*run)(ir::Kernel &, const PassContext &);
};

const PassInfo kPasses[] = {
#define TILE_PASS(Name, Function) {Name, Function},
#include "codegen/passes/Passes.def"
};

} // namespace

std::vector<std::string> registeredPasses() {
  std::vector<std::string> names;
  for (const PassInfo &p : kPasses)
    names.push_back(p.name);
  return names;
}

bool runPasses(ir::Kernel &kernel, const std::vector<std::string> &names,
               DiagnosticEngine &diags, const PipelineOptions &options) {
  for (const std::string &name : names) {
    const PassInfo *pass = nullptr;
    for (const PassInfo &p : kPasses)
      if (name == p.name)
        pass = &p;
    if (!pass) {
      std::string known;
      for (const PassInfo &p : kPasses)
        known += std::string(known.empty() ? "" : ", ") + p.name;
      diags.error(kernel.loc, "unknown pass '" + name + "' (known: " + known + ")");
      return false;
    }
    unsigned errorsBefore = diags.numErrors();
    bool changed = pass->run(kernel, PassContext{options.target, diags});
    if (diags.numErrors() != errorsBefore)
      return false;
    if (options.afterPass)
      options.afterPass(name, kernel, changed);
#ifndef NDEBUG
    ir::VerifyOptions vo;
    vo.requirePlanned = name == "plan-buffers";
    if (!ir::verify(kernel, diags, vo))
      return false;
#endif
  }
  return true;
}

bool runDefaultPipeline(ir::Kernel &kernel, DiagnosticEngine &diags,
                        const PipelineOptions &options) {
  return runPasses(kernel, registeredPasses(), diags, options);
}

} // namespace tilejit::passes
