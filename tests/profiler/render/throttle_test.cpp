// Throttling as it happened, from every DVFS step on the bus: a chip whose clock walks down is
// reported at the lowest clock it reached with the time it spent at each clock (the report used to
// keep the first step's clock), and a chip already throttled when the recording starts is
// reported as throttled from the recording's start (the report used to see nothing without a
// change of reasons).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/profiler/prof_test_util.hpp"

namespace npukit::testing {
namespace {

using nlohmann::json;

constexpr double kMinClockMhz = 800;  // Ascend910B2's lowest AI-core clock (and its idle clock)

json report_of(const std::string& dir) {
  auto r = run_command(prof() + " report " + dir + " --format json");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  return json::parse(r.output, nullptr, false);
}

// A node at 100x whose device 0 has lost its cooling (the over-temperature fault).
struct HotNode {
  ScopedNode node{"throttle", "--speed 100 --seed 7"};
  HotNode() {
    auto r = run_command(emud() + " inject --node-name " + node.name() + " --device 0 --fault over-temperature");
    EXPECT_EQ(r.exit_code, 0) << r.output;
  }
  CommandResult record(const std::string& dir, int steps) {
    return run_command(prof() + " record -o " + dir + " --node-name " + node.name() + " -- " + npu_run() +
                       " burn --devices 0 --steps " + std::to_string(steps));
  }
};

TEST(Throttle, AClockThatWalksDownIsReportedAtItsLowestWithTheTimeAtEachClock) {
  HotNode hot;
  TempDir dir("throttle-walk");
  auto r = hot.record(dir.str(), 400);  // ~43 s of the node's time: past 85 C at ~15 s, then held
  ASSERT_EQ(r.exit_code, 0) << r.output;
  json j = report_of(dir.str());
  ASSERT_FALSE(j["throttling"].empty()) << r.output;
  const json& p = j["throttling"][0];
  EXPECT_EQ(p["device"], 0);
  // It steps down to the clock that holds the throttle point, not to the minimum (nor does the
  // idle clock after the job count as throttling).
  EXPECT_GT(p["min_clock_mhz"].get<double>(), kMinClockMhz) << p.dump();
  EXPECT_LT(p["min_clock_mhz"].get<double>(), 1850) << p.dump();
  EXPECT_GE(p["time_at_mhz_ns"].size(), 5u) << p.dump() << ": one entry per clock it stepped through";
  int64_t total = 0;
  for (const auto& [mhz, ns] : p["time_at_mhz_ns"].items()) total += ns.get<int64_t>();
  EXPECT_EQ(total, p["end_ns"].get<int64_t>() - p["start_ns"].get<int64_t>());
  bool found = false;
  for (const json& f : j["findings"]) found = found || f["id"] == "throttling";
  EXPECT_TRUE(found);
}

TEST(Throttle, AChipAlreadyThrottledWhenTheRecordingStartsIsReported) {
  HotNode hot;
  auto heat = run_command(npu_run() + " burn --devices 0 --steps 300 --node-name " + hot.node.name());
  ASSERT_EQ(heat.exit_code, 0) << heat.output;
  TempDir dir("throttle-hot");
  auto r = hot.record(dir.str(), 4);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  json j = report_of(dir.str());
  ASSERT_EQ(j["throttling"].size(), 1u) << r.output;
  const json& p = j["throttling"][0];
  // Throttled from the recording's first moment on (the node idles at 100x between the two runs,
  // so how far the chip cooled and its clock rose by then depends on the machine's speed; on a
  // slow build, such as the sanitizers', it may even recover before the recording ends, so
  // whether it is still throttled at the end is not asserted).
  EXPECT_EQ(p["start_ns"], j["header"]["session_start_ns"]) << p.dump();
  EXPECT_LT(p["min_clock_mhz"].get<double>(), 1850.0) << p.dump();
  EXPECT_GE(p["min_clock_mhz"].get<double>(), kMinClockMhz);
}

}  // namespace
}  // namespace npukit::testing
