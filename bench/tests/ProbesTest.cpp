//===- ProbesTest.cpp - The bandwidth probes move every byte --------------===//
//
// The limits are only as honest as the probes: every copy plan must copy
// every byte (shares and stream ranges that do not divide the size, the
// tails), and every read plan must read the buffer through its end.
//
//===----------------------------------------------------------------------===//
#include "MachineLimits.h"

#include <gtest/gtest.h>

#include <cstring>

using namespace tilejit::bench;

namespace {

// Sizes around the 64-byte shares and 256-byte stream steps.
const size_t kSizes[] = {
    1, 63, 64, 255, 257, 4096 + 37, 3 * 8 * 256 + 1, (size_t(1) << 20) + 4099};

TEST(BenchProbes, EveryCopyPlanCopiesEveryByte) {
  for (size_t bytes : kSizes)
    for (int threads : {1, 2, 3})
      for (const StreamPlan &plan : copyPlans()) {
        Buffer src(bytes), dst(bytes, 0);
        for (size_t i = 0; i < bytes; ++i)
          src.data()[i] = static_cast<char>(i * 131 + 7);
        EXPECT_GT(copySeconds(dst.data(), src.data(), bytes, threads, plan), 0);
        EXPECT_EQ(std::memcmp(dst.data(), src.data(), bytes), 0)
            << planName(plan, true) << ", " << bytes << " bytes, " << threads
            << " threads";
      }
}

TEST(BenchProbes, EveryReadPlanReads) {
  for (size_t bytes : kSizes)
    for (const StreamPlan &plan : readPlans()) {
      Buffer buf(bytes);
      EXPECT_GT(readSeconds(buf.data(), bytes, 2, plan), 0)
          << planName(plan, false);
    }
}

TEST(BenchProbes, PlanNamesAreDistinct) {
  for (bool copy : {false, true}) {
    const auto &plans = copy ? copyPlans() : readPlans();
    for (size_t i = 0; i < plans.size(); ++i)
      for (size_t j = i + 1; j < plans.size(); ++j)
        EXPECT_NE(planName(plans[i], copy), planName(plans[j], copy));
  }
}

} // namespace
