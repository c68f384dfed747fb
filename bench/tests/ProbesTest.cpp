//===- ProbesTest.cpp - The bandwidth probes move every byte --------------===//
//
// The limits are only as honest as the probes: every copy plan must copy
// every byte (shares and stream ranges that do not divide the size, the
// tails), and every read plan must read the buffer through its end. And the
// thread counts a run measures them at (`tilejit bench --threads`) are
// counts the machine has, or a usage error that says which item is not.
//
//===----------------------------------------------------------------------===//
#include "Driver.h"
#include "MachineLimits.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <system_error>
#include <vector>

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

/// parseThreadCounts' error message for `list` (8 cores, all = 8), or ""
/// where it parses; the error must be a usage error.
std::string threadsError(const std::string &list, int most = 8,
                         const std::string &why = "the 8 cores") {
  llvm::Expected<std::vector<int>> r = parseThreadCounts(list, 8, most, why);
  if (r)
    return "";
  std::string message;
  llvm::handleAllErrors(r.takeError(), [&](const llvm::ErrorInfoBase &e) {
    message = e.message();
    EXPECT_EQ(e.convertToErrorCode(), std::errc::invalid_argument);
  });
  return message;
}

TEST(BenchThreads, ListsParseAscendingOnce) {
  auto counts = [](const std::string &list) {
    return llvm::cantFail(parseThreadCounts(list, 8, 8, "the 8 cores"));
  };
  EXPECT_EQ(counts("all"), std::vector<int>({8}));
  EXPECT_EQ(counts("1,2,all"), std::vector<int>({1, 2, 8}));
  EXPECT_EQ(counts("all, 2 ,1,2"), std::vector<int>({1, 2, 8}));
  EXPECT_EQ(counts("8,all"), std::vector<int>({8}));
  EXPECT_EQ(counts("3"), std::vector<int>({3}));
}

TEST(BenchThreads, BadItemsAreNamed) {
  auto says = [](const std::string &list, const std::string &part) {
    const std::string e = threadsError(list);
    EXPECT_NE(e.find(part), std::string::npos) << list << ": " << e;
    EXPECT_NE(e.find("bad --threads '" + list + "'"), std::string::npos) << e;
  };
  says("0", "'0' is no threads: at least 1");
  says("1,0", "'0' is no threads");
  says("-2", "'-2' is negative");
  says("9", "'9' is more than the 8 cores");
  says("99999999999999", "is more than the 8 cores");
  says("two", "'two' is not a thread count");
  says("1.5", "'1.5' is not a thread count");
  says("2x", "'2x' is not a thread count");
  says("1,,2", "has an empty item");
  says("", "has an empty item");
  says("1,", "has an empty item");
  says("ALL", "'ALL' is not a thread count");
  // A cap below the cores is the limit, and named.
  EXPECT_NE(threadsError("4", 2, "TILEJIT_NUM_THREADS=2")
                .find("'4' is more than TILEJIT_NUM_THREADS=2"),
            std::string::npos);
  EXPECT_EQ(threadsError("2", 2, "TILEJIT_NUM_THREADS=2"), "");
}

} // namespace
