//===- Optimize.cpp - LLVM's optimisation pipeline for generated modules --===//
#include "codegen/llvm/CodeGen.h"

#include "llvm/IR/Module.h"
#include "llvm/IR/PassTimingInfo.h"
#include "llvm/Transforms/InstCombine/InstCombine.h"
#include "llvm/Transforms/Scalar/ADCE.h"
#include "llvm/Transforms/Scalar/DeadStoreElimination.h"
#include "llvm/Transforms/Scalar/EarlyCSE.h"
#include "llvm/Transforms/Scalar/GVN.h"
#include "llvm/Transforms/Scalar/LICM.h"
#include "llvm/Transforms/Scalar/LoopPassManager.h"
#include "llvm/Transforms/Scalar/LoopRotation.h"
#include "llvm/Transforms/Scalar/SROA.h"
#include "llvm/Transforms/Scalar/SimplifyCFG.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Target/TargetMachine.h"

#include <optional>

namespace tilejit::codegen {

void optimizeModule(llvm::Module &module, llvm::TargetMachine &tm,
                    unsigned optLevel, llvm::raw_ostream *passTimes) {
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PassInstrumentationCallbacks callbacks;
  std::optional<llvm::TimePassesHandler> timer;
  if (passTimes) {
    timer.emplace(/*Enabled=*/true);
    timer->setOutStream(*passTimes);
    timer->registerCallbacks(callbacks);
  }
  llvm::PassBuilder pb(&tm, llvm::PipelineTuningOptions(), std::nullopt,
                       passTimes ? &callbacks : nullptr);
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  llvm::ModulePassManager mpm;
  if (optLevel == 0) {
    mpm = pb.buildO0DefaultPipeline(llvm::OptimizationLevel::O0);
  } else {
    // The generated code is explicitly vectorised, register-blocked and has
    // no calls to inline: of LLVM's default pipeline it needs the scalar
    // clean-up (SROA, CSE, InstCombine, CFG simplification), loop rotation
    // and invariant hoisting, redundant-load and dead-store elimination
    // through the tile buffers. Vectorisers, unrollers, the inliner and the
    // interprocedural passes would only cost compile time (a third of a
    // kernel's, measured on the flash-attention sample).
    llvm::FunctionPassManager fpm;
    fpm.addPass(llvm::SROAPass(llvm::SROAOptions::ModifyCFG));
    fpm.addPass(llvm::EarlyCSEPass(/*UseMemorySSA=*/true));
    fpm.addPass(llvm::InstCombinePass());
    fpm.addPass(llvm::SimplifyCFGPass());
    llvm::LoopPassManager lpm;
    lpm.addPass(llvm::LoopRotatePass());
    lpm.addPass(llvm::LICMPass(llvm::LICMOptions()));
    fpm.addPass(llvm::createFunctionToLoopPassAdaptor(std::move(lpm), /*UseMemorySSA=*/true));
    fpm.addPass(llvm::GVNPass());
    fpm.addPass(llvm::InstCombinePass());
    fpm.addPass(llvm::SimplifyCFGPass());
    fpm.addPass(llvm::DSEPass());
    fpm.addPass(llvm::ADCEPass());
    mpm.addPass(llvm::createModuleToFunctionPassAdaptor(std::move(fpm)));
  }
  mpm.run(module, mam);
  if (timer)
    timer->print();
}

} // namespace tilejit::codegen
