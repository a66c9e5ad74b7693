// The straggler verdict on constructed rank rows: which rank, how much slower than the others'
// median own work, and the phase it loses the time in.
#include "profiler/analyze/ranks.hpp"

#include "profiler/analyze/findings_internal.hpp"
#include "profiler/analyze/profile_data.hpp"

#include <gtest/gtest.h>

#include <map>

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

// A pipeline's heaviest stage in each of two data-parallel replicas (ranks 1 and 5 of dp2 x pp4):
// both are stragglers, against the median of the other six (one was named, the other went into
// the baseline). Half or more alike are the pace, not stragglers among them.
TEST(Ranks, RanksAsSlowAsTheStragglerAreStragglersWithIt) {
  // Eight ranks computing `computing_ms` each, but those listed in `slow` (rank -> ms).
  auto ranks = [](std::map<int, double> slow) {
    std::vector<RankRow> rows;
    for (int d = 0; d < 8; ++d) rows.push_back(rank(d, (slow.count(d) ? slow[d] : 8.0) * 1e6, 0.1e6, 0.1e6));
    return rows;
  };
  std::vector<RankRow> rows = ranks({{1, 9.6}, {5, 9.55}});  // rank 5 within 1% of rank 1's work
  StragglerVerdict v = straggler(rows);
  ASSERT_EQ(v.index, 1);
  EXPECT_EQ(v.tied, (std::vector<int>{5}));
  EXPECT_TRUE(v.slow);
  EXPECT_DOUBLE_EQ(v.baseline_ns, 8.2e6);
  EXPECT_NEAR(v.excess_ns, 1.6e6, 1);
  ReportHeader h;
  for (int d = 0; d < 8; ++d) h.device_ranks[d] = d;
  EXPECT_EQ(straggler_label(h, rows, v), "rank 1 (device 1) and rank 5 (device 5)");
  Report r;
  r.header = h, r.ranks = rows, r.comm_types.push_back({});
  std::vector<Finding> out;
  Measured measured;
  slow_rank(ProfileData{}, r, HostVerdict{}, out, measured);  // no collectives recorded: nothing to replay
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].text.rfind("Stragglers: rank 1 (device 1) and rank 5 (device 5) work up to 9.800 ms per step against "
                              "8.200 ms on the other ranks (the median), 19.5% slower",
                              0),
            0u)
      << out[0].text;
  // A rank 2% behind is not tied: it stays in the baseline.
  EXPECT_TRUE(straggler(ranks({{1, 9.6}, {5, 9.4}})).tied.empty());
  // Four of eight alike: no ties, as before (each is judged against the median of the others).
  EXPECT_TRUE(straggler(ranks({{0, 9.6}, {1, 9.6}, {4, 9.6}, {5, 9.6}})).tied.empty());
  EXPECT_EQ(straggler(ranks({{0, 9.6}, {1, 9.6}, {5, 9.6}})).tied, (std::vector<int>{1, 5})) << "three of eight";
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
  slow_rank(ProfileData{}, r, HostVerdict{}, out, measured);  // no collectives recorded: nothing to replay
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

// Three ranks over steps 1-11 (step 1 the warm-up), rank 2 working `work_ms(step)` per step and
// the others 8 ms, each step 10 ms long.
Report stepped(double (*work_ms)(int64_t)) {
  Report r;
  for (int64_t step = 1; step <= 11; ++step) {
    for (int device = 0; device < 3; ++device) {
      StepRow s;
      s.device = device, s.step = step;
      const double work = (device == 2 ? work_ms(step) : 8.0) * 1e6;
      s.b.step = 10'000'000, s.b.computing = static_cast<int64_t>(work), s.b.comm_not_overlapped = s.b.step - s.b.computing;
      r.steps.push_back(s);
    }
  }
  r.ranks = rank_rows(r);
  r.comm_types.push_back({});
  return r;
}

// A cause that struck mid-run is named with its steps; a rank slow throughout, whose jitter takes
// some steps under the 5% threshold, is not read as one (it was: "all of it in 6 of 10 steps (6
// scattered steps) (a cause that began or ended during the run)").
TEST(SlowRankFinding, NamesTheStepsOfACauseThatStruckMidRunNotOfJitter) {
  auto mid = slow_rank_of(stepped([](int64_t step) { return step >= 7 ? 10.0 : 8.0; }));
  ASSERT_EQ(mid.size(), 1u);
  EXPECT_NE(mid[0].text.find("all of it in 5 of 10 steps (steps 7-11), 2.000 ms more in each (a cause that began during the run)"),
            std::string::npos)
      << mid[0].text;
  auto jitter = slow_rank_of(stepped([](int64_t step) { return step % 2 ? 8.8 : 8.2; }));  // 10% and 2.5% over
  ASSERT_EQ(jitter.size(), 1u);
  EXPECT_EQ(jitter[0].text.find("all of it"), std::string::npos) << jitter[0].text;
}

TEST(SlowRankFinding, AThrottledRankIsTheThrottlingFindings) {
  EXPECT_TRUE(slow_rank_of(straggling(true, true)).empty());
}

// Four hosts of two ranks, each host's ranks computing `computing_ms[h]`.
Report hosts_of(std::vector<double> computing_ms) {
  Report r;
  for (std::size_t h = 0; h < computing_ms.size(); ++h) {
    for (int local = 0; local < 2; ++local) {
      int device = static_cast<int>(h) * 2 + local;
      r.ranks.push_back(rank(device, computing_ms[h] * 1e6, 0.1e6, 0.1e6, 30e6));
      r.header.device_hosts[device] = {"c-" + std::to_string(h), local};
    }
  }
  return r;
}

// Two slow hosts of four: both are named (only the slower was; the other one's slowness went into
// the baseline or another finding), against the hosts that are not slow.
TEST(SlowHostFinding, EverySlowHostIsNamedAgainstTheOthers) {
  HostVerdict two = slow_host_verdict(hosts_of({15.5, 19.6, 19.7, 15.5}));
  ASSERT_TRUE(two.slow);
  EXPECT_EQ(two.slow_hosts, (std::vector<std::string>{"c-2", "c-1"}));
  EXPECT_EQ(two.ranks, (std::vector<int>{2, 3, 4, 5}));
  EXPECT_NEAR(two.baseline_ns, 15.7e6, 1);  // 15.5 computing + 0.2 idle
  EXPECT_NEAR(two.excess_ns, 4.2e6, 1);
  EXPECT_TRUE(two.is_slow("c-1"));
  EXPECT_FALSE(two.is_slow("c-0"));
  std::vector<Finding> out;
  Measured measured;
  slow_host(two, out, measured);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].text.rfind("Straggler hosts: c-2, c-1 (ranks 2-5); the slowest, c-2, works 19.900 ms", 0), 0u) << out[0].text;
  // Three of four alike: they set the pace (each host is judged against the median of the others).
  EXPECT_FALSE(slow_host_verdict(hosts_of({15.5, 19.6, 19.6, 19.6})).slow);
  // One slow host reads as before.
  HostVerdict one = slow_host_verdict(hosts_of({15.5, 19.6, 15.5, 15.5}));
  EXPECT_EQ(one.slow_hosts, (std::vector<std::string>{"c-1"}));
  EXPECT_EQ(one.host, "c-1");
  // None.
  EXPECT_FALSE(slow_host_verdict(hosts_of({15.5, 15.6, 15.5, 15.4})).slow);
}

// One slow NPU is not its host: a host is slow when its ranks are slow throughout (its fastest
// too), with two ranks or more to tell the host from one of its NPUs. One degraded NPU of a host
// with two ranks made their median slow, and the finding said "Straggler host" at half the cost,
// and silenced slow_rank for it.
TEST(SlowHostFinding, OneSlowNpuOfAHostIsASlowRankNotASlowHost) {
  Report r = hosts_of({15.5, 15.5, 15.5, 15.5});
  r.ranks[2] = rank(2, 19.6e6, 0.1e6, 0.1e6, 30e6);  // c-1's first rank; its second, device 3, is fine
  HostVerdict host = slow_host_verdict(r);
  EXPECT_FALSE(host.slow) << host.host;
  std::vector<Finding> out;
  Measured measured;
  slow_rank(ProfileData{}, r, host, out, measured);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].id, "slow_rank");
  EXPECT_NEAR(out[0].cost_ns_per_step.value_or(0), 4.1e6, 1);
  // Both of c-1's ranks slow: the host.
  r.ranks[3] = rank(3, 19.6e6, 0.1e6, 0.1e6, 30e6);
  EXPECT_TRUE(slow_host_verdict(r).slow);
  EXPECT_EQ(slow_host_verdict(r).host, "c-1");
  // One rank on each host: a slow rank, never a slow host.
  Report single;
  for (int h = 0; h < 4; ++h) {
    single.ranks.push_back(rank(h, (h == 1 ? 19.6 : 15.5) * 1e6, 0.1e6, 0.1e6, 30e6));
    single.header.device_hosts[h] = {"c-" + std::to_string(h), 0};
  }
  EXPECT_FALSE(slow_host_verdict(single).slow);
}

// A rank's row is its steps after the first (the warm-up), as npu-run's step time and the matrix's
// truth are: a slow host whose first input took twice as long read 12.45 ms for a true 10.0.
TEST(Ranks, RowsLeaveOutTheWarmUpStepWhenLaterStepsAreRecorded) {
  Report r;
  for (int64_t step : {1, 2, 3}) {
    StepRow row{0, step, {}, 0};
    row.b.step = step == 1 ? 30'000'000 : 10'000'000, row.b.computing = row.b.step;
    r.steps.push_back(row);
  }
  StepRow alone{1, 1, {}, 0};  // a device with one step keeps it
  alone.b.step = alone.b.computing = 20'000'000;
  r.steps.push_back(alone);
  std::vector<RankRow> rows = rank_rows(r);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].steps, 2);
  EXPECT_DOUBLE_EQ(rows[0].step, 10e6);
  EXPECT_EQ(rows[1].steps, 1);
  EXPECT_DOUBLE_EQ(rows[1].step, 20e6);
}

// The header's fault line: a fault on one NPU of a host with one recorded rank is that rank's
// (it read "aicore-degraded on c-1 (all 1 NPUs)", a host-wide fault); a host's own fault is the host's.
TEST(FaultWhere, OneRecordedNpuOfAHostIsAllOfItOnlyForAFaultOfTheHost) {
  ReportHeader h;
  for (int d : {0, 8}) h.device_hosts[d] = {"c-" + std::to_string(d / 8), 0}, h.device_ranks[d] = d / 8;
  EXPECT_EQ(h.fault_where({"aicore-degraded", {8}}), "aicore-degraded on rank 1 (device 0 of c-1)");
  EXPECT_EQ(h.fault_where({"host-slow", {8}}), "host-slow on c-1 (1 NPU recorded)");
  h.device_hosts[9] = {"c-1", 1}, h.device_ranks[9] = 2;
  EXPECT_EQ(h.fault_where({"host-slow", {8, 9}}), "host-slow on c-1 (all 2 NPUs)");
  EXPECT_EQ(h.fault_where({"aicore-degraded", {8}}), "aicore-degraded on rank 1 (device 0 of c-1)");
  // A link's fault is the link's, on its host (it read "... on link 3-roce on rank 1 (device 0 of c-1)").
  EXPECT_EQ(h.fault_where({"link-degraded on link 0-roce", {8}}), "link-degraded on link 0-roce of c-1");
  EXPECT_EQ(ReportHeader{}.fault_where({"link-degraded on link 0-2", {0}}), "link-degraded on link 0-2");
}

// pipeline_bubble beside 1F1B's floor: a stage waiting at its receives less than the floor's share
// of the whole step (the step also holds the optimizer and a gradient allreduce) is not told that
// "the other -0.4% is transfers" (dp2 x pp4 pipeline-train: 26.9% against 27.3%).
std::string bubble_text(double receive_ms_per_step) {
  ProfileData d;
  d.strings = {"hcom_receive_"};
  d.job_settings["layout"] = "dp2 x pp4 (8 micro-batches, 1F1B)";
  Report r;
  for (int device = 0; device < 3; ++device) {
    r.ranks.push_back(rank(device, 6e6, 0, 0));  // steps of 10 ms
    r.ranks.back().receive = receive_ms_per_step * 1e6;
  }
  std::vector<Finding> out;
  Measured measured;
  pipeline_bubble(d, r, 0, out, measured);
  return out.empty() ? "" : out[0].text;
}

TEST(PipelineBubbleFinding, AWaitBelowTheFloorIsNotCalledTransfers) {
  std::string below = bubble_text(2.5), above = bubble_text(3.5);
  EXPECT_NE(below.find("(25.0% of the step)"), std::string::npos) << below;
  EXPECT_EQ(below.find("is transfers"), std::string::npos) << below;
  EXPECT_NE(below.find("outside the pipeline"), std::string::npos) << below;
  EXPECT_NE(above.find("the other 7.7% is transfers"), std::string::npos) << above;
}

// A 2-stage pipeline whose second stage (device 1) is slow: the first waits for it at its receives
// (8 ms a step), the slow one waits little (1 ms). The bubble is the slow stage's wait, the one
// the others wait for; the fast stage's wait is slow_rank's cost. Taken on the median of all
// stages it read 8 ms and outranked the straggler. A report of one rank (--rank) names it alone.
// The bubble per step is over the rows' own steps (after the warm-up): the recording's whole
// receive time over them read N/(N-1) of the wait (4/3 with 4 steps).
TEST(PipelineBubbleFinding, IsPerStepOverTheSameStepsAsTheStepTime) {
  Report r;
  r.header.device_ranks[0] = 0;
  for (int64_t step : {1, 2, 3, 4}) {
    StepRow row{0, step, {}, 2'000'000};  // a 2 ms receive in each 10 ms step
    row.b.step = 10'000'000, row.b.computing = 8'000'000, row.b.comm_not_overlapped = 2'000'000;
    row.bubble_not_overlapped = 2'000'000;
    r.steps.push_back(row);
  }
  r.ranks = rank_rows(r);
  ProfileData d;
  std::vector<Finding> out;
  Measured measured;
  pipeline_bubble(d, r, 0, out, measured);
  EXPECT_DOUBLE_EQ(measured["pipeline_bubble"], 2e6);
}

TEST(PipelineBubbleFinding, IsTheWaitOfTheStageTheOthersWaitFor) {
  auto bubble = [](std::vector<int> devices) {
    ProfileData d;
    d.strings = {"hcom_receive_"};
    d.job_settings["layout"] = "dp1 x pp2 (8 micro-batches, 1F1B)";
    Report r;
    for (int device : devices) {
      r.header.device_ranks[device] = device;
      r.ranks.push_back(rank(device, device == 1 ? 8e6 : 1e6, 0, 0));  // steps of 10 ms
      r.ranks.back().receive = device == 1 ? 1e6 : 8e6;  // per step
    }
    std::vector<Finding> out;
    Measured measured;
    pipeline_bubble(d, r, 0, out, measured);
    return std::make_pair(measured["pipeline_bubble"], out.empty() ? std::string() : out[0].text);
  };
  auto [wait, text] = bubble({0, 1});
  EXPECT_DOUBLE_EQ(wait, 1e6);
  EXPECT_EQ(text.rfind("Pipeline bubble: rank 1 (device 1), the stage the others wait for, waits 1.000 ms per step", 0), 0u) << text;
  auto [alone, alone_text] = bubble({0});
  EXPECT_DOUBLE_EQ(alone, 8e6);
  EXPECT_EQ(alone_text.rfind("Pipeline bubble: rank 0 (device 0) waits 8.000 ms per step", 0), 0u) << alone_text;
}

}  // namespace
}  // namespace npukit::prof
