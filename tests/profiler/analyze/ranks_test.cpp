// The straggler verdict on constructed rank rows: which rank, how much slower than the others'
// median own work, and the phase it loses the time in.
#include "profiler/analyze/ranks.hpp"

#include "profiler/analyze/findings_internal.hpp"

#include <gtest/gtest.h>

namespace npukit::prof {
namespace {

// A rank of a synchronous job: every step is `step` ns long; what it does not work it waits.
RankRow rank(int device, double computing, double preparing, double other_idle, double step = 10e6) {
  RankRow r;
  r.device = device, r.rank = device, r.steps = 4, r.step = step;
  r.computing = computing, r.preparing = preparing, r.other_idle = other_idle;
  r.comm_exposed = step - computing - preparing - other_idle;
  return r;
}

TEST(Ranks, TheSlowComputerIsTheStragglerAndLosesTimeComputing) {
  std::vector<RankRow> rows = {rank(0, 8e6, 0.1e6, 0.1e6), rank(1, 8e6, 0.1e6, 0.1e6), rank(2, 9.6e6, 0.1e6, 0.1e6),
                               rank(3, 8e6, 0.1e6, 0.1e6)};
  StragglerVerdict v = straggler(rows);
  ASSERT_EQ(v.index, 2);
  EXPECT_TRUE(v.slow);
  EXPECT_DOUBLE_EQ(v.baseline_ns, 8.2e6);
  EXPECT_NEAR(v.excess_ns, 1.6e6, 1);
  EXPECT_EQ(v.phase, "computing");
  EXPECT_NEAR(v.phase_excess_ns, 1.6e6, 1);
}

TEST(Ranks, ARankWaitingForItsInputLosesTimeThere) {
  std::vector<RankRow> rows = {rank(0, 8e6, 0.1e6, 0.1e6), rank(1, 8e6, 1.5e6, 0.1e6), rank(2, 8e6, 0.1e6, 0.1e6)};
  StragglerVerdict v = straggler(rows);
  ASSERT_EQ(v.index, 1);
  EXPECT_TRUE(v.slow);
  EXPECT_EQ(v.phase, "waiting for input");
}

TEST(Ranks, WithinFivePercentIsNoStraggler) {
  std::vector<RankRow> rows = {rank(0, 8e6, 0, 0), rank(1, 8.3e6, 0, 0), rank(2, 8e6, 0, 0)};
  StragglerVerdict v = straggler(rows);
  EXPECT_EQ(v.index, 1);
  EXPECT_FALSE(v.slow);  // 3.75% over
  EXPECT_EQ(straggler({rank(0, 8e6, 0, 0)}).index, -1);
}

// The slow_rank finding on a report: a straggler in a job with collectives makes the others wait
// there; one whose ranks share no collective (a burn per chip) does not, and says so; one whose
// device was throttled is the throttling finding's (it was costed twice, once by each).
Report straggling(bool collectives, bool throttled) {
  Report r;
  r.ranks = {rank(0, 8e6, 0.1e6, 0.1e6), rank(1, 8e6, 0.1e6, 0.1e6), rank(2, 9.6e6, 0.1e6, 0.1e6)};
  if (collectives) r.comm_types.push_back({});
  if (throttled) {
    ThrottlePeriod p;
    p.device = 2, p.end = 40'000'000;
    r.throttles.push_back(p);
  }
  return r;
}

std::vector<Finding> slow_rank_of(const Report& r) {
  std::vector<Finding> out;
  Measured measured;
  slow_rank(r, HostVerdict{}, out, measured);
  return out;
}

TEST(SlowRankFinding, SaysTheOthersWaitOnlyWhenTheyShareCollectives) {
  auto joined = slow_rank_of(straggling(true, false));
  ASSERT_EQ(joined.size(), 1u);
  EXPECT_NE(joined[0].text.find("the other ranks wait for it in their collectives"), std::string::npos) << joined[0].text;
  auto free = slow_rank_of(straggling(false, false));
  ASSERT_EQ(free.size(), 1u);
  EXPECT_EQ(free[0].text.find("collectives."), std::string::npos) << free[0].text;
  EXPECT_NE(free[0].text.find("ends when this rank does"), std::string::npos) << free[0].text;
}

TEST(SlowRankFinding, AThrottledRankIsTheThrottlingFindings) {
  EXPECT_TRUE(slow_rank_of(straggling(true, true)).empty());
}

}  // namespace
}  // namespace npukit::prof
