//===- LibFuzzerMain.cpp - libFuzzer's entry for one target ---------------===//
//
// Compiled once per target with TILE_FUZZ_ENTRY naming its function.
//
//===----------------------------------------------------------------------===//
#include "FuzzTargets.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  return tilejit::fuzz::TILE_FUZZ_ENTRY(data, size);
}
