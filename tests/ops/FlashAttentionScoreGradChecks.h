//===- FlashAttentionScoreGradChecks.h - Section 8's checks for tests -*- C++ -*-===//
///
/// \file
/// The checks of section 8 of
/// ../shared/spec/flash_attention_unpadding_score_grad_v5.md (element-wise,
/// relative RMS, dθ) with its tolerances (fag::toleranceFor), shared by the
/// operator's and the twin's tests.
///
//===----------------------------------------------------------------------===//
#ifndef TILEJIT_TESTS_OPS_FLASHATTENTIONSCOREGRADCHECKS_H
#define TILEJIT_TESTS_OPS_FLASHATTENTIONSCOREGRADCHECKS_H

#include "ops/flash_attention_score_grad/FlashAttentionScoreGradData.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

namespace tilejit::test_support {

using ops::fag::Tolerance;
using ops::fag::toleranceFor;

/// Element-wise |X - R| <= rtol |R| + atol max|R|, and ||X - R|| / ||R||.
inline void expectClose(const std::vector<double> &x, const std::vector<double> &r,
                        const Tolerance &t, const std::string &what) {
  ASSERT_EQ(x.size(), r.size()) << what;
  double m = 0, err2 = 0, ref2 = 0;
  for (double v : r)
    m = std::max(m, std::fabs(v));
  int64_t bad = 0;
  for (size_t e = 0; e < r.size(); ++e) {
    const double diff = std::fabs(x[e] - r[e]);
    err2 += (x[e] - r[e]) * (x[e] - r[e]);
    ref2 += r[e] * r[e];
    if (!(diff <= t.rtol * std::fabs(r[e]) + t.atol * m) && bad++ < 5)
      ADD_FAILURE() << what << "[" << e << "] = " << x[e] << ", reference " << r[e]
                    << " (max |R| " << m << ")";
  }
  EXPECT_EQ(bad, 0) << what << ": elements out of tolerance";
  if (ref2 > 0)
    EXPECT_LE(std::sqrt(err2 / ref2), t.rms) << what << ": relative RMS";
  else
    EXPECT_EQ(err2, 0.0) << what << ": the reference is all zeros";
}

/// |X - R| <= c * sum |Psink * sum P dP| + 1e-7 per head.
inline void expectSinkClose(const std::vector<double> &x, const std::vector<double> &r,
                            const std::vector<double> &scale, double c) {
  ASSERT_EQ(x.size(), r.size());
  for (size_t h = 0; h < r.size(); ++h)
    EXPECT_LE(std::fabs(x[h] - r[h]), c * scale[h] + 1e-7)
        << "dsink[" << h << "] = " << x[h] << ", reference " << r[h];
}

} // namespace tilejit::test_support

#endif
