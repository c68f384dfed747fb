//===- FuzzTileIR.cpp - Fuzz target: Tile IR text to the verifier ---------===//
#include "FuzzTargets.h"

#include "codegen/passes/Pipeline.h"
#include "dsl/ir/IRParser.h"
#include "dsl/ir/Verifier.h"

#include <string>

namespace tilejit::fuzz {

int tileIR(const uint8_t *data, size_t size) {
  if (size > 64 * 1024)
    return 0;
  DiagnosticEngine diags;
  uint32_t buf = diags.addBuffer(
      "fuzz.tir", std::string(reinterpret_cast<const char *>(data), size));
  auto module = ir::parseModule(diags, buf);
  if (!module)
    return 0;
  for (auto &k : module->kernels) {
    if (!ir::verify(*k, diags))
      continue;
    // The passes assume verified IR; what they produce must verify too.
    if (!k->buffersPlanned && passes::runDefaultPipeline(*k, diags))
      (void)ir::verify(*k, diags);
  }
  return 0;
}

} // namespace tilejit::fuzz
