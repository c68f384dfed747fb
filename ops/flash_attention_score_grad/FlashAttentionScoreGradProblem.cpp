//===- FlashAttentionScoreGradProblem.cpp - The analytic keep rule --------===//
//
// Section 5's table as a band per batch: (i, j) is kept iff
// lo <= j - i <= hi, or j < prefix (mode 6). An explicit mask (modes 0 and
// 1) is consulted on top of it; without any mask every position is kept.
//
//===----------------------------------------------------------------------===//
#include "ops/flash_attention_score_grad/FlashAttentionScoreGrad.h"

#include <algorithm>

namespace tilejit::ops::fag {

Problem::Band Problem::band(int64_t bi) const {
  static constexpr int64_t U = kUnbounded;
  Band all{-U, U, 0};
  if (mask == MaskForm::None)
    return all;
  // Tokens are clamped so that sums of two of them cannot overflow.
  const int64_t pre = std::clamp<int64_t>(preTokens, -U, U);
  const int64_t nxt = std::clamp<int64_t>(nextTokens, -U, U);
  const int64_t delta = skv(bi) - sq(bi);
  auto clampU = [](int64_t x) { return std::clamp<int64_t>(x, -U, U); };
  const Band causalTopLeft{-U, 0, 0};        // mode 2: j <= i
  const Band causalBottomRight{-U, delta, 0}; // mode 3: j <= i + δ
  const Band bandBottomRight{clampU(delta - pre), clampU(delta + nxt), 0}; // mode 4
  switch (sparseMode) {
  case 0:
    return Band{-pre, nxt, 0};
  case 1:
    return all;
  case 2:
    return causalTopLeft;
  case 3:
    return causalBottomRight;
  case 4:
    return bandBottomRight;
  case 6:
    // prefix has B entries; trailing (0, 0) batches have none.
    return Band{-U, delta,
                static_cast<size_t>(bi) < prefix.size()
                    ? prefix[static_cast<size_t>(bi)]
                    : 0};
  case 7:
    return bi == bandBatch ? bandBottomRight : causalBottomRight;
  case 8:
    return bi == bandBatch ? bandBottomRight : causalTopLeft;
  default:
    return all; // rejected by validation (mode 5, out of range)
  }
}

} // namespace tilejit::ops::fag
