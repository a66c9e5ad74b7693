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

std::string fmt_mhz(double mhz) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0f MHz", mhz);
  return buf;
}

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
  // The finding gives the clock averaged over the time at each (it gave the clock most time was
  // spent at, "9.6% of that time at 1469 MHz", which reads as "mostly" and says little).
  double weighted = 0, max_mhz = 0;
  for (const auto& [mhz, ns] : p["time_at_mhz_ns"].items()) {
    weighted += std::stod(mhz) * static_cast<double>(ns.get<int64_t>()), max_mhz = std::max(max_mhz, std::stod(mhz));
  }
  const json* finding = nullptr;
  for (const json& f : j["findings"]) finding = f["id"] == "throttling" ? &f : finding;
  ASSERT_NE(finding, nullptr);
  const double mean = (*finding)["numbers"]["device 0 mean_clock_mhz"].get<double>();
  EXPECT_NEAR(mean, weighted / static_cast<double>(total), 0.5);
  EXPECT_GT(mean, p["min_clock_mhz"].get<double>());
  EXPECT_LT(mean, max_mhz);
  EXPECT_NE((*finding)["text"].get<std::string>().find(fmt_mhz(mean) + " on average over that time"), std::string::npos)
      << (*finding)["text"];
}

TEST(Throttle, AChipAlreadyThrottledWhenTheRecordingStartsIsReported) {
  HotNode hot;
  // Keep the chip busy, and hot, until the bus says it is throttled; then attach to it. (Heating
  // in one run and recording the next let it cool below the release point in between on a slow
  // build: a chip held at its throttle point cools out of it within a second or two.)
  run_command("(" + npu_run() + " burn --devices 0 --steps 100000 --node-name " + hot.node.name() + " >/dev/null 2>&1 &)");
  std::string query = std::string(NPU_SMI_PATH) + " --node-name " + hot.node.name() +
                      " --query=npu_throttle_reasons --format=csv,noheader -i 0";
  ASSERT_TRUE(eventually([&] { return run_command(query).output == "1\n"; }, std::chrono::seconds(30)))
      << run_command(query).output;
  TempDir dir("throttle-hot");
  auto r = run_command(prof() + " record -o " + dir.str() + " --node-name " + hot.node.name() + " --attach --duration 300ms");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  json j = report_of(dir.str());
  ASSERT_EQ(j["throttling"].size(), 1u) << r.output;
  const json& p = j["throttling"][0];
  // Throttled from the recording's first moment on.
  EXPECT_EQ(p["start_ns"], j["header"]["session_start_ns"]) << p.dump();
  EXPECT_LT(p["min_clock_mhz"].get<double>(), 1850.0) << p.dump();
  EXPECT_GE(p["min_clock_mhz"].get<double>(), kMinClockMhz);
}

}  // namespace
}  // namespace npukit::testing

namespace npukit::testing {
namespace {

// A power cap set before a short run (resnet50-train, 5 steps, device 6 at 150 W): the clock comes
// down after the warm-up step, so its cost lies in the steps after it, which the truth (npu-run's
// step time) counts. Spread over every step it read 6.44 ms against a true 7.90 (-18%).
TEST(ThrottleCost, IsPerStepAfterTheWarmUpAsTheStepTimeIs) {
  ScopedNode node("cap-short", "--speed 1000 --seed 7");
  TempDir dir("cap-short");
  FaultAgainstClean run = fault_against_clean(node, "resnet50-train --steps 5", "set --device 6 --power-limit 150", dir.str());
  ASSERT_GT(run.truth_ms, 3);
  run.costed("throttling", 0.05 * run.truth_ms);
}

}  // namespace
}  // namespace npukit::testing
