// A job's step times: a step is done when every rank has finished it (npu-run printed rank 0's
// step times, 105 ms on a burn whose throttled rank 2 took 130 ms a step and set the job's pace).
#include "emulator/runtime/job_steps.hpp"

#include <gtest/gtest.h>

namespace npukit::emu {
namespace {

constexpr Nanos kMs = 1'000'000;

TEST(JobSteps, RanksInLockStepGiveTheirCommonStepTime) {
  JobSteps steps(2);
  std::vector<double> ms;
  steps.add({0, 0, 0, 10 * kMs}, ms);
  EXPECT_TRUE(ms.empty());  // rank 1 has not finished step 0
  steps.add({1, 0, 0, 10 * kMs}, ms);
  steps.add({0, 1, 10 * kMs, 20 * kMs}, ms);
  steps.add({1, 1, 10 * kMs, 20 * kMs}, ms);
  EXPECT_EQ(ms, (std::vector<double>{10, 10}));
}

// Ranks that run free: rank 1 takes 13 ms a step, rank 0 10 ms. The job's steps are rank 1's
// pace: its three steps end at 13, 26 and 39 ms, when the job has done 1, 2 and 3 steps.
TEST(JobSteps, FreeRunningRanksGoAtTheSlowestRanksPace) {
  JobSteps steps(2);
  std::vector<double> ms;
  for (int64_t k = 0; k < 3; ++k) steps.add({0, k, k * 10 * kMs, (k + 1) * 10 * kMs}, ms);
  EXPECT_TRUE(ms.empty());
  for (int64_t k = 0; k < 3; ++k) steps.add({1, k, k * 13 * kMs, (k + 1) * 13 * kMs}, ms);
  EXPECT_EQ(ms, (std::vector<double>{13, 13, 13}));
}

// The first step runs from the earliest rank's start; a late rank's start does not shorten it.
TEST(JobSteps, TheFirstStepStartsWithTheEarliestRank) {
  JobSteps steps(2);
  std::vector<double> ms;
  steps.add({1, 0, 2 * kMs, 9 * kMs}, ms);
  steps.add({0, 0, 1 * kMs, 6 * kMs}, ms);
  EXPECT_EQ(ms, (std::vector<double>{8}));
}

}  // namespace
}  // namespace npukit::emu
