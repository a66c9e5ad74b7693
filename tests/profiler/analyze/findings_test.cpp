// Findings on constructed timelines: each rule fires on the situation it names, with the
// numbers behind it, and stays quiet otherwise.
#include <gtest/gtest.h>

#include "profiler/analyze/profile_data.hpp"
#include "profiler/analyze/report_build.hpp"
#include "tests/profiler/prof_test_util.hpp"
#include "tests/profiler/synthetic.hpp"

namespace npukit::testing {
namespace {

struct Scenario {
  bool throttle = false;
  bool churn = false;
  bool exposed_comm = false;
  uint64_t missed = 0;
};

// One device, two 10 ms steps. Each step: 4 ms idle lead (the loader), a 2 ms cube matmul, a
// 1 ms AI CPU op, a 1 ms memory-bound add; optionally 3 ms of allreduce after the compute.
prof::Report build(const Scenario& sc, const std::string& dir) {
  std::string path = dir + "/findings.db";
  auto w = prof::ProfileWriter::create(path, 0);
  EXPECT_TRUE(w.ok());
  SyntheticBus bus;
  auto m = prof::EventMapper::create(**w, bus.resolver(), {});
  EXPECT_TRUE((*w)->begin_batch().ok());
  uint64_t task = 1;
  for (uint64_t step = 0; step < 2; ++step) {
    uint64_t t0 = step * 10'000'000, t = t0 + 4'000'000;
    EXPECT_TRUE(m->map(bus.step(0, t0, 10'000'000, step)).ok());
    EXPECT_TRUE(m->map(bus.kernel(0, t, 2'000'000, 0, task++, "MatMulV2", "aten::mm|4096,4096;4096,4096|FLOAT16;FLOAT16",
                                  0, 2.0 * 4096 * 4096 * 4096)).ok());
    EXPECT_TRUE(m->map(bus.kernel(0, t + 2'000'000, 1'000'000, 0, task++, "Cumsum", "aten::cumsum|4096|FLOAT16", 2, 4096)).ok());
    EXPECT_TRUE(m->map(bus.kernel(0, t + 3'000'000, 1'000'000, 0, task++, "Add", "aten::add|1048576;1048576|FLOAT16;FLOAT16",
                                  1, 1048576)).ok());
    if (sc.exposed_comm) {
      EXPECT_TRUE(m->map(bus.collective(0, t + 4'000'000, 1'500'000, 1, task++, 1 << 26)).ok());
    }
    if (sc.churn) {
      for (uint64_t i = 0; i < 150; ++i) {
        EXPECT_TRUE(m->map(bus.node_event(tf::EventType::kAlloc, 0, t + i, {4096, 0x1000 + i, 4242, 1 << 20})).ok());
      }
    }
  }
  if (sc.throttle) {
    EXPECT_TRUE(m->map(bus.node_event(tf::EventType::kThrottleChanged, 0, 5'000'000, {0, 1, 1757, 0})).ok());
    EXPECT_TRUE(m->map(bus.node_event(tf::EventType::kThrottleChanged, 0, 6'000'000, {1, 1, 1665, 0})).ok());
    EXPECT_TRUE(m->map(bus.node_event(tf::EventType::kThrottleChanged, 0, 12'000'000, {1, 0, 1850, 0})).ok());
  }
  if (sc.missed) {
    EXPECT_TRUE((*w)->set_run("events_missed", std::to_string(sc.missed)).ok());
  }
  for (const char* key : {"node", "node_spec", "topology", "mode", "command"}) EXPECT_TRUE((*w)->set_run(key, "t").ok());
  EXPECT_TRUE((*w)->set_run("clock_base_ns", "0").ok());  // what every recording writes
  EXPECT_TRUE((*w)->commit_batch().ok());
  EXPECT_TRUE((*w)->finalize().ok());
  auto data = prof::load_profile(path);
  EXPECT_TRUE(data.ok()) << data.status().message();
  auto r = prof::build_report(*data, {});
  EXPECT_TRUE(r.ok());
  return *r;
}

const prof::Finding* find(const prof::Report& r, const std::string& id) {
  for (const prof::Finding& f : r.findings) {
    if (f.id == id) return &f;
  }
  return nullptr;
}

double number(const prof::Finding& f, const std::string& name) {
  for (const auto& [n, v] : f.numbers) {
    if (n == name) return v;
  }
  ADD_FAILURE() << f.id << " has no number " << name;
  return -1;
}

TEST(Findings, StarvationAiCpuAndMemoryBound) {
  TempDir dir("findings");
  prof::Report r = build({}, dir.str());
  const prof::Finding* starve = find(r, "data_loader_starvation");
  ASSERT_NE(starve, nullptr);
  EXPECT_DOUBLE_EQ(number(*starve, "idle_before_first_task_percent"), 40.0);
  EXPECT_DOUBLE_EQ(number(*starve, "idle_before_first_task_avg_ms"), 4.0);
  EXPECT_NE(starve->text.find("AI cores idle 40.0% of each step waiting for input"), std::string::npos) << starve->text;
  const prof::Finding* cpu = find(r, "aicpu_fallback");
  ASSERT_NE(cpu, nullptr);
  EXPECT_DOUBLE_EQ(number(*cpu, "total_ms"), 2.0);
  EXPECT_DOUBLE_EQ(number(*cpu, "percent_of_kernel_time"), 25.0);
  EXPECT_NE(cpu->text.find("aten::cumsum (Cumsum, 2 calls"), std::string::npos) << cpu->text;
  const prof::Finding* mem = find(r, "memory_bound_ops");
  ASSERT_NE(mem, nullptr);
  EXPECT_NE(mem->text.find("aten::add [1048576;1048576]"), std::string::npos) << mem->text;
  EXPECT_EQ(mem->text.find("aten::mm"), std::string::npos) << "a 4096^3 matmul is compute-bound: " << mem->text;
  EXPECT_DOUBLE_EQ(number(*mem, "aten::add [1048576;1048576] flop_per_byte"), 0.25);
  for (const char* quiet : {"unoverlapped_communication", "throttling", "allocator_churn", "dropped_events",
                            "incomplete_recording"}) {
    EXPECT_EQ(find(r, quiet), nullptr) << quiet;
  }
}

TEST(Findings, ExposedCommunicationThrottlingChurnAndDrops) {
  TempDir dir("findings2");
  prof::Report r = build({.throttle = true, .churn = true, .exposed_comm = true, .missed = 17}, dir.str());
  const prof::Finding* comm = find(r, "unoverlapped_communication");
  ASSERT_NE(comm, nullptr);
  EXPECT_DOUBLE_EQ(number(*comm, "not_overlapped_percent_of_step"), 15.0);
  EXPECT_DOUBLE_EQ(number(*comm, "exposed_percent_of_communication"), 100.0);
  const prof::Finding* hot = find(r, "throttling");
  ASSERT_NE(hot, nullptr);
  EXPECT_DOUBLE_EQ(number(*hot, "device 0 throttled_s"), 0.007);
  EXPECT_DOUBLE_EQ(number(*hot, "device 0 min_clock_mhz"), 1665);
  ASSERT_EQ(r.throttles.size(), 1u);
  EXPECT_EQ(r.throttles[0].reasons, 1u);
  EXPECT_FALSE(r.throttles[0].open);
  const prof::Finding* churn = find(r, "allocator_churn");
  ASSERT_NE(churn, nullptr);
  EXPECT_DOUBLE_EQ(number(*churn, "allocations_per_step"), 150);
  const prof::Finding* drops = find(r, "dropped_events");
  ASSERT_NE(drops, nullptr);
  EXPECT_DOUBLE_EQ(number(*drops, "events_missed"), 17);
  // busbw of a 1-rank "allreduce" is 0 (2(n-1)/n); algbw = bytes / time.
  ASSERT_EQ(r.comm_sizes.size(), 1u);
  EXPECT_DOUBLE_EQ(r.comm_sizes[0].algbw, static_cast<double>(1 << 26) / 1.5e-3);
  EXPECT_DOUBLE_EQ(r.comm_sizes[0].busbw, 0.0);
}

TEST(Findings, CollectiveBandwidthFactorsFollowNcclTests) {
  EXPECT_DOUBLE_EQ(prof::busbw_factor("hcom_allReduce_", 8), 2.0 * 7 / 8);
  EXPECT_DOUBLE_EQ(prof::busbw_factor("hcom_allGather_", 8), 7.0 / 8);
  EXPECT_DOUBLE_EQ(prof::algbw_size_factor("hcom_allGather_", 8), 8);
  EXPECT_DOUBLE_EQ(prof::algbw_size_factor("hcom_reduceScatter_", 4), 4);
  EXPECT_DOUBLE_EQ(prof::busbw_factor("hcom_alltoall_", 4), 3.0 / 4);
  EXPECT_DOUBLE_EQ(prof::busbw_factor("hcom_broadcast_", 8), 1);
  EXPECT_DOUBLE_EQ(prof::algbw_size_factor("hcom_allReduce_", 8), 1);
  EXPECT_DOUBLE_EQ(prof::input_bytes("8,16;16", "FLOAT16;INT64"), 8 * 16 * 2 + 16 * 8);
  EXPECT_DOUBLE_EQ(prof::input_bytes("8", "MYSTERY"), 0);
  // A damaged database's shapes: unknown size, not an exception out of std::stod (profile fuzz target).
  EXPECT_DOUBLE_EQ(prof::input_bytes("8,x;16", "FLOAT16;INT64"), 0);
  EXPECT_DOUBLE_EQ(prof::input_bytes("-8", "FLOAT16"), 0);
  EXPECT_DOUBLE_EQ(prof::input_bytes("1e999", "FLOAT16"), 0);
}

}  // namespace
}  // namespace npukit::testing

namespace npukit::testing {
namespace {

// A job that fails before its first step has no steps to make it the main job: the header still
// reports its error (the report said "Steps: none recorded" and dropped it, JSON job_error null).
TEST(ReportHeader, NamesTheErrorOfAJobThatFailedBeforeItsFirstStep) {
  prof::ProfileData d;
  d.events.push_back({-1, 100, "job_started", 7, 4242, 0, 0, "resnet50-train", ""});
  d.events.push_back({-1, 900, "job_finished", 7, 6, 0, 0, "resnet50-train", "AI Core task timeout: task 9"});
  auto r = prof::build_report(d, {});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->header.job_error, "AI Core task timeout: task 9");
}

// Memory that stays flat from before the job (a burn allocates nothing) peaks at the job's first
// sample, not at one taken seconds before the first task ("Peak at(ms) -10976.306").
TEST(ReportMemory, AFlatPeakIsPlacedInTheJobNotBeforeIt) {
  prof::ProfileData d;
  d.session_start = 0, d.session_end = 30'000'000'000;
  prof::TaskRecord t;
  t.start = 11'000'000'000, t.end = t.start + 1'000'000;
  d.tasks.push_back(t);
  for (int64_t ts : {int64_t{100'000'000}, int64_t{12'000'000'000}, int64_t{20'000'000'000}}) {
    d.memory.push_back({0, ts, int64_t{1258} << 20, false});
  }
  auto r = prof::build_report(d, {});
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->memory.size(), 1u);
  EXPECT_EQ(r->memory[0].peak_ts, 12'000'000'000);
}

}  // namespace
}  // namespace npukit::testing
