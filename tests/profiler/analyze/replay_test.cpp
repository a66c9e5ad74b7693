// The collectives' replay (straggler_replay.cpp) on hand-built timelines, and the allocator span
// the gap rules leave out: the answers the findings build on, without a node.
#include <gtest/gtest.h>

#include "profiler/analyze/findings_internal.hpp"

namespace npukit::prof {
namespace {

// Two devices, `steps` steps of 100 us each: 60 us of own work, then one 40 us AllReduce. Device 1
// works `slow_ns` more per step, so device 0 waits that long in each AllReduce.
ProfileData two_ranks(int steps, int64_t slow_ns, bool zero_length_call = false) {
  ProfileData d;
  const int64_t step_ns = 100'000 + slow_ns;
  for (int s = 0; s < steps; ++s) {
    const int64_t at = s * step_ns;
    for (int device : {0, 1}) {
      d.steps.push_back({device, kFirstStep + s, {at, at + step_ns}});
      const int64_t arrive = at + 60'000 + (device == 1 ? slow_ns : 0);
      CollectiveRecord c;
      c.device = device, c.op_name = 1000 + s, c.start = arrive, c.end = at + step_ns;
      d.collectives.push_back(c);
      if (zero_length_call) {  // a barrier with nothing to move, recorded at the step's end
        CollectiveRecord b;
        b.device = device, b.op_name = 5000 + s, b.start = at + step_ns, b.end = at + step_ns;
        d.collectives.push_back(b);
      }
    }
  }
  return d;
}

TEST(Replay, AStragglerAtTheOthersPaceShortensEachStepByItsExcess) {
  ProfileData d = two_ranks(4, 20'000);
  // Device 1's own work 80 us a step; at the other's 60 us its pace is 0.75.
  auto cost = straggler_replay_cost(d, {{1, 0.75}});
  ASSERT_TRUE(cost.has_value());
  EXPECT_NEAR(*cost, 20'000, 1);
  auto none = straggler_replay_cost(d, {{0, 0.75}});  // the rank that waits anyway
  ASSERT_TRUE(none.has_value());
  EXPECT_NEAR(*none, 0, 1);
}

TEST(Replay, AZeroLengthCallDoesNotStopTheReplay) {
  // It ends at its start: taken as its own predecessor, its instance never became ready.
  ProfileData d = two_ranks(4, 20'000, true);
  auto cost = straggler_replay_cost(d, {{1, 0.75}});
  ASSERT_TRUE(cost.has_value());
  EXPECT_NEAR(*cost, 20'000, 1);
}

TEST(Replay, ARowThatEndsBeforeItStartsIsNotReplayed) {
  ProfileData d = two_ranks(3, 20'000);
  std::swap(d.collectives[2].start, d.collectives[2].end);
  EXPECT_FALSE(straggler_replay_cost(d, {{1, 0.75}}).has_value());
}

TEST(AllocatorSpan, ARuntimeCallTakesTheWaitForTheNextTaskButACacheHitTakesNothing) {
  const Intervals busy = {{0, 10'000}, {30'000, 40'000}};
  // A free at 10 us that costs the host 5 us: the device waits until the task at 30 us.
  EXPECT_EQ(allocator_span(busy, {0, 10'000, 5'000}), (Interval{10'000, 30'000}));
  // A cache hit costs nothing and widens nothing.
  EXPECT_EQ(allocator_span(busy, {0, 10'000, 0}), (Interval{10'000, 10'000}));
  // Past 50 us the device waits for something else.
  EXPECT_EQ(allocator_span({{0, 10'000}, {100'000, 110'000}}, {0, 10'000, 5'000}), (Interval{10'000, 15'000}));
}

}  // namespace
}  // namespace npukit::prof
