//===- TargetLevels.h - The vector widths an end-to-end test runs at ------===//
//
// AVX2 always (it runs natively on any AVX-512 host too), AVX-512 where the
// host has it: the two code paths every kernel must get right.
//
//===----------------------------------------------------------------------===//
#ifndef TILEJIT_TESTS_E2E_TARGETLEVELS_H
#define TILEJIT_TESTS_E2E_TARGETLEVELS_H

#include "jit/Compiler.h"

#include <vector>

namespace tilejit::test_support {

inline std::vector<jit::TargetLevel> levels() {
  std::vector<jit::TargetLevel> out{jit::TargetLevel::Avx2};
  if (jit::Compiler::hostSupports(jit::TargetLevel::Avx512))
    out.push_back(jit::TargetLevel::Avx512);
  return out;
}

} // namespace tilejit::test_support

#endif
