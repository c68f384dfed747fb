//===- Operators.cpp - The built-in aclnn operators -----------------------===//
#include "ops/Operators.h"

#include <mutex>

namespace tilejit::ops {

void registerBuiltinOperators() {
  static std::once_flag once;
  std::call_once(once, [] {
    registerScatterPaKvCache();
    registerGatherPaKvCache();
    registerIncreFlashAttentionV4();
    registerNsaCompressWithCache();
    registerFlashAttentionUnpaddingScoreGradV5();
  });
}

} // namespace tilejit::ops
