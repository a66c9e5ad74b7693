#include "emulator/engine/scheduler.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <random>
#include <vector>

namespace npukit::emu {
namespace {

TEST(Scheduler, RunsEventsInTimeThenPostingOrder) {
  Scheduler s;
  std::vector<std::pair<Nanos, uint32_t>> seen;
  uint32_t kind = s.add_handler([&](const SimEvent& e) { seen.emplace_back(s.now(), e.a); });
  s.post(300, kind, 1);
  s.post(100, kind, 2);
  s.post(100, kind, 3);
  s.post(200, kind, 4);
  s.run_until(1000);
  EXPECT_EQ(seen, (std::vector<std::pair<Nanos, uint32_t>>{{100, 2}, {100, 3}, {200, 4}, {300, 1}}));
  EXPECT_EQ(s.now(), 1000);
  EXPECT_EQ(s.events_processed(), 4u);
}

TEST(Scheduler, PastEventsAreClampedToNow) {
  Scheduler s;
  Nanos at = -1;
  uint32_t kind = s.add_handler([&](const SimEvent&) { at = s.now(); });
  s.run_until(500);
  s.post(10, kind);
  s.step();
  EXPECT_EQ(at, 500);  // time never goes backwards
}

TEST(Scheduler, CallbacksCanScheduleMore) {
  Scheduler s;
  std::vector<Nanos> ticks;
  std::function<void()> tick = [&] {
    ticks.push_back(s.now());
    if (ticks.size() < 5) s.post_callback(s.now() + 10, tick);
  };
  s.post_callback(0, tick);
  EXPECT_FALSE(s.run_while([] { return true; }) == false);  // ran dry
  EXPECT_EQ(ticks, (std::vector<Nanos>{0, 10, 20, 30, 40}));
}

TEST(Scheduler, RunWhileStopsWhenTheConditionIsMet) {
  Scheduler s;
  int count = 0;
  uint32_t kind = s.add_handler([&](const SimEvent&) { ++count; });
  for (int i = 0; i < 10; ++i) s.post(i, kind);
  EXPECT_FALSE(s.run_while([&] { return count < 3; }));
  EXPECT_EQ(count, 3);
  EXPECT_EQ(s.pending(), 7u);
}

TEST(Scheduler, PacedModeFollowsWallTime) {
  Scheduler s;
  s.set_paced(10.0);  // 10 virtual ms per wall ms
  auto t0 = std::chrono::steady_clock::now();
  s.run_until(200'000'000);  // 200 ms virtual -> 20 ms wall
  auto wall = std::chrono::steady_clock::now() - t0;
  EXPECT_GE(wall, std::chrono::milliseconds(19));
  EXPECT_LT(wall, std::chrono::milliseconds(500));
  EXPECT_EQ(s.mode(), TimeMode::kPaced);
}

TEST(Scheduler, FastModeDoesNotSleep) {
  Scheduler s;
  auto t0 = std::chrono::steady_clock::now();
  s.run_until(3'600'000'000'000);  // an hour of virtual time
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(100));
  EXPECT_EQ(s.lag_ns(), 0);
}

}  // namespace
}  // namespace npukit::emu

namespace npukit::emu {
namespace {

TEST(Scheduler, BackgroundTicksDoNotKeepTheNodeBusy) {
  Scheduler s;
  int ticks = 0;
  int work = 0;
  uint32_t tick = 0;
  tick = s.add_handler([&](const SimEvent&) {
    ++ticks;
    s.post_background(s.now() + 10, tick);  // reschedules itself forever
  });
  uint32_t job = s.add_handler([&](const SimEvent&) { ++work; });
  s.post_background(0, tick);
  s.post(95, job);
  EXPECT_FALSE(s.idle());
  EXPECT_TRUE(s.run_while([] { return true; }));  // returns once the foreground work is done
  EXPECT_EQ(work, 1);
  EXPECT_EQ(ticks, 10);  // ticks at 0..90 ran before the job at 95
  EXPECT_TRUE(s.idle());
  s.run_until(200);      // explicit time still runs background events
  EXPECT_EQ(ticks, 21);
}

}  // namespace
}  // namespace npukit::emu

namespace npukit::emu {
namespace {

// Thousands of events posted in random time order from inside handlers, many at equal times: they
// run in (time, posting order), the order a stable sort gives.
TEST(Scheduler, ManyEventsRunInTimeThenPostingOrder) {
  Scheduler s;
  std::mt19937 rng(11);
  std::vector<std::pair<Nanos, uint32_t>> posted, seen;
  uint32_t kind = 0;
  uint32_t next = 0;
  kind = s.add_handler([&](const SimEvent& e) {
    seen.emplace_back(s.now(), e.a);
    for (int i = 0; i < 2 && next < 5000; ++i) {
      Nanos at = s.now() + static_cast<Nanos>(rng() % 50);
      posted.emplace_back(at, next);
      s.post(at, kind, next++);
    }
  });
  for (int i = 0; i < 20; ++i) {
    Nanos at = static_cast<Nanos>(rng() % 50);
    posted.emplace_back(at, next);
    s.post(at, kind, next++);
  }
  while (s.step()) {
  }
  ASSERT_EQ(seen.size(), posted.size());
  for (std::size_t i = 1; i < seen.size(); ++i) {
    ASSERT_LE(seen[i - 1].first, seen[i].first) << "event " << i;
    if (seen[i - 1].first == seen[i].first) {
      ASSERT_LT(seen[i - 1].second, seen[i].second) << "event " << i;
    }
  }
}

}  // namespace
}  // namespace npukit::emu

namespace npukit::emu {
namespace {

// The running event keeps its heap slot while its handler runs (the handler's first post takes
// it): it is not pending, and a handler that runs the scheduler itself (a nested run) neither
// runs it twice nor loses the events it posted.
TEST(Scheduler, TheRunningEventIsNotPendingAndANestedRunIsSafe) {
  Scheduler s;
  std::vector<std::pair<Nanos, uint32_t>> seen;
  std::size_t pending_inside = 99;
  Nanos after_nested_run = -1;
  uint32_t kind = 0;
  kind = s.add_handler([&](const SimEvent& e) {
    seen.emplace_back(s.now(), e.a);
    if (e.a == 1) {
      pending_inside = s.pending();  // event 2 only
      s.run_until(12);               // nothing is due by 12: event 2 is at 15
      after_nested_run = s.now();
      s.post(15, kind, 3);  // after 2: same time, posted later
    }
  });
  s.post(10, kind, 1);
  s.post(15, kind, 2);
  while (s.step()) {
  }
  EXPECT_EQ(pending_inside, 1u);
  EXPECT_EQ(after_nested_run, 12);
  EXPECT_EQ(seen, (std::vector<std::pair<Nanos, uint32_t>>{{10, 1}, {15, 2}, {15, 3}}));
  EXPECT_EQ(s.pending(), 0u);
  EXPECT_TRUE(s.idle());
}

}  // namespace
}  // namespace npukit::emu
