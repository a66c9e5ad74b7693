// Levels 2 and 3 over an in-process bus whose control handler plays the daemon: it answers
// "reference" and runs submitted programs by formula, so the grading, the HCCS pairing and the
// error paths are checked exactly. (The real daemon is driven in tests/smi/cli/diag_faults_test.cpp.)
#include <gtest/gtest.h>
#include <unistd.h>

#include <map>
#include <mutex>
#include <set>

#include "probes/diag/diagnostics.hpp"
#include "telemetry/client.hpp"
#include "tests/probes/diag/chip_fixture.hpp"

namespace npukit::probes {
namespace {

namespace tf = telemetry;
namespace fid = telemetry::fid;
using nlohmann::json;

constexpr double kFlops = 300e12, kHbm = 1e12, kPcie = 25e9, kLink = 50e9, kLinkEfficiency = 0.8;

// A fake daemon: every job is done at once; its step time is what its work costs at the
// reference rates divided by `speed[device]` (1 = healthy), or it fails with `error[device]`.
struct FakeDaemon {
  std::map<int, double> speed;
  std::map<int, std::string> error;
  std::map<int, json> findings;
  std::mutex mu;
  std::vector<json> submitted;
  std::map<int, json> jobs;

  static double step_seconds(const json& rank) {
    double s = 0;
    for (const json& op : rank["step"]) {
      std::string kind = op["op"];
      if (kind == "kernel") s += 2.0 * 8192 * 8192 * 8192 / kFlops;
      if (kind == "memcpy") s += op["bytes"].get<double>() / (op["kind"] == "D2D" ? kHbm / 2 : kPcie);
      if (kind == "memtest") s += op["patterns"].get<double>() * 1e9 / kHbm;
      if (kind == "collective") s += op["count"].get<double>() * 2 / (kLink * kLinkEfficiency);
    }
    return s;
  }

  json handle(const tf::Request& r) {
    std::lock_guard lock(mu);
    if (r.op == "reference") {
      return {{"ok", true}, {"matmul_fp16_flops", kFlops}, {"hbm_bytes_per_s", kHbm}, {"pcie_bytes_per_s", kPcie},
              {"link_efficiency", kLinkEfficiency}};
    }
    if (r.op == "submit") {
      const json& p = r.body["program"];
      submitted.push_back(p);
      int id = static_cast<int>(submitted.size());
      double slowest = 1;
      std::string failure;
      json found = json::array();
      for (const json& rank : p["ranks"]) {
        int d = rank["device"];
        if (speed.count(d)) slowest = std::min(slowest, speed[d]);
        if (error.count(d)) failure = error[d];
        if (findings.count(d) && rank["step"][0]["op"] == "memtest") found = findings[d];
      }
      double ms = step_seconds(p["ranks"][0]) / slowest * 1e3;
      json steps = json::array();
      for (int i = 0; i < p.value("repeat", 1); ++i) steps.push_back(ms);
      jobs[id] = {{"id", id}, {"state", failure.empty() ? "done" : "failed"}, {"step_ms", steps}, {"findings", found}};
      if (!failure.empty()) jobs[id]["error"] = failure;
      return {{"ok", true}, {"job", id}};
    }
    if (r.op == "job_status") return {{"ok", true}, {"job", jobs.at(r.body["job"].get<int>())}};
    return tf::error_reply("unknown op", "unknown_op");
  }
};

// `n` 910B2-like chips in a full HCCS mesh (both directions of every pair published), or when
// `switched` each with its port into a switch (up and down: two HCCS links to -1, as 8xA100's).
std::shared_ptr<tf::InProcessBus> mesh(const std::string& node, int n, bool switched = false) {
  tf::WriterOptions o;
  o.node = node;
  o.node_info.node_spec = std::to_string(n) + "x910B2";
  for (int d = 0; d < n; ++d) o.devices.push_back(testing::chip_info(d));
  for (int a = 0; a < n; ++a) {
    for (int b = 0; b < n && !switched; ++b) {
      if (a != b) o.links.push_back({a, b, "hccs", kLink});
    }
    if (switched) o.links.insert(o.links.end(), 2, {a, -1, "hccs", kLink});
  }
  auto bus = tf::InProcessBus::create(o);
  EXPECT_TRUE(bus.ok());
  for (int d = 0; d < n; ++d) {
    (*bus)->writer().update_device(d).set(fid::kHealth, uint64_t{0}).set(fid::kHbmTotalBytes, uint64_t{1} << 34)
        .set(fid::kHbmUsedBytes, uint64_t{1} << 30).set(fid::kAicoreClockMaxMhz, uint64_t{1850})
        .set(fid::kTemperatureCelsius, 50.0).set(fid::kThrottleReasons, uint64_t{0});
  }
  return *bus;
}

struct DiagRun {
  DiagReport report;
  std::vector<json> submitted;
};

DiagRun run_level(int level, FakeDaemon& fake, int chips = 4, std::vector<int> devices = {},
                  std::vector<tf::ProcessInfo> processes = {}, bool switched = false) {
  static int serial = 0;
  auto bus = mesh("diag-active-" + std::to_string(serial++), chips, switched);
  EXPECT_TRUE(bus->writer().set_processes(processes).ok());
  bus->set_control_handler([&fake](const tf::Request& r) { return fake.handle(r); });
  auto client = bus->client();
  auto snapshot = client->snapshot();
  EXPECT_TRUE(snapshot.ok());
  auto reference = fetch_reference(*client);
  EXPECT_TRUE(reference.ok()) << reference.status().message();
  DiagOptions options;
  options.stress_seconds = 2;
  std::vector<std::string> started;
  DiagContext ctx{*snapshot, client.get(), *reference, options,
                  [&started](const DiagTest& t) { started.push_back(std::string(t.name)); }, {}};
  DiagReport report = run_diag(ctx, level, devices);
  EXPECT_EQ(started.size(), report.tests.size());  // progress: every test announced, in order
  for (std::size_t i = 0; i < started.size() && i < report.tests.size(); ++i) EXPECT_EQ(started[i], report.tests[i].name);
  return {report, fake.submitted};
}

const DiagTestResult& test_named(const DiagReport& r, const std::string& name) {
  for (const DiagTestResult& t : r.tests) {
    if (t.name == name) return t;
  }
  ADD_FAILURE() << "no test " << name;
  return r.tests.front();
}

TEST(DiagActive, LevelsAddTheirTestsInOrder) {
  std::vector<std::string> names;
  for (const DiagTest* t : diag_tests(3)) names.push_back(std::string(t->name) + "/" + std::to_string(t->level));
  EXPECT_EQ(names, (std::vector<std::string>{"Node Reachable/1", "Device Count/1", "Device Specs/1", "Processes/1",
                                             "Health Rules/1", "Memory Pattern/2", "PCIe Bandwidth/2", "HCCS Bandwidth/2",
                                             "Compute/2", "Memory Bandwidth/2", "Targeted Stress/3"}));
  EXPECT_EQ(max_diag_level(), 3);
  EXPECT_EQ(diag_tests(2).size(), 10u);
}

TEST(DiagActive, AHealthyNodePassesEveryTestAtItsReference) {
  FakeDaemon fake;
  DiagRun run = run_level(3, fake);
  EXPECT_EQ(run.report.verdict, Verdict::kPass);
  const DiagTestResult& compute = test_named(run.report, "Compute");
  ASSERT_EQ(compute.devices.size(), 4u);
  EXPECT_EQ(compute.devices[0].measured, "fp16 matmul 300.0 TFLOPS, expected 300.0 TFLOPS (100%)");
  EXPECT_EQ(test_named(run.report, "PCIe Bandwidth").devices[1].measured,
            "H2D 25.0 GB/s, expected 25.0 GB/s (100%); D2H 25.0 GB/s, expected 25.0 GB/s (100%)");
  EXPECT_EQ(test_named(run.report, "Memory Bandwidth").devices[2].measured, "copy 1000.0 GB/s, expected 1000.0 GB/s (100%)");
  EXPECT_EQ(test_named(run.report, "HCCS Bandwidth").devices[3].measured,
            "3 link(s); slowest HCCS 0<->3 40.0 GB/s, expected 40.0 GB/s (100%)");
  // Memory pattern: all free memory but the runtime's headroom, in whole 2 MiB pages.
  EXPECT_EQ(test_named(run.report, "Memory Pattern").devices[0].measured, "14.9 GiB x 4 patterns: no bad pages");
}

TEST(DiagActive, SlowDevicesWarnFromNinetyAndFailBelowSeventyFivePercent) {
  FakeDaemon fake;
  fake.speed = {{1, 0.85}, {2, 0.70}};
  DiagRun run = run_level(2, fake);
  const DiagTestResult& compute = test_named(run.report, "Compute");
  EXPECT_EQ(compute.verdict, Verdict::kFail);
  EXPECT_EQ(compute.devices[0].verdict, Verdict::kPass);
  EXPECT_EQ(compute.devices[1].verdict, Verdict::kWarn);
  ASSERT_EQ(compute.devices[1].reasons.size(), 1u);
  EXPECT_EQ(compute.devices[1].reasons[0], "fp16 matmul 255.0 TFLOPS, expected 300.0 TFLOPS (85%), below 90%");
  EXPECT_EQ(compute.devices[2].verdict, Verdict::kFail);
  EXPECT_EQ(compute.devices[2].reasons[0], "fp16 matmul 210.0 TFLOPS, expected 300.0 TFLOPS (70%), below 75%");
  // A slow chip slows every link it is on: both ends of its pairs are judged.
  const DiagTestResult& hccs = test_named(run.report, "HCCS Bandwidth");
  EXPECT_EQ(hccs.devices[3].verdict, Verdict::kFail);
  EXPECT_NE(hccs.devices[3].reasons[0].find("HCCS 1<->3: 34.0 GB/s, expected 40.0 GB/s (85%)"), std::string::npos)
      << hccs.devices[3].reasons[0];
}

TEST(DiagActive, HccsPairsEveryLinkOnceInRoundsOfDisjointPairs) {
  FakeDaemon fake;
  DiagRun run = run_level(2, fake, 4);
  std::set<std::pair<int, int>> pairs;
  for (const json& p : run.submitted) {
    if (p["name"].get<std::string>().rfind("diag-hccs-", 0) != 0) continue;
    ASSERT_EQ(p["ranks"].size(), 2u);
    pairs.insert({p["ranks"][0]["device"].get<int>(), p["ranks"][1]["device"].get<int>()});
    EXPECT_EQ(p["ranks"][0]["step"][0]["kind"], "Send");
    EXPECT_EQ(p["ranks"][1]["step"][0]["kind"], "Recv");
  }
  EXPECT_EQ(pairs, (std::set<std::pair<int, int>>{{0, 1}, {0, 2}, {0, 3}, {1, 2}, {1, 3}, {2, 3}}));
}

// On a switched node the chips have no links to each other: each chip's port is tested by
// transfers to its neighbours through the switch, and a port is cleared by a pair that passes
// (the test used to say "no HCCS links in this topology" and pass a port at a quarter of its rate).
TEST(DiagActive, ASwitchedNodeTestsEachChipsPortThroughItsNeighbours) {
  FakeDaemon fake;
  fake.speed = {{3, 0.25}};
  DiagRun run = run_level(2, fake, 4, {}, {}, true);
  std::set<std::pair<int, int>> pairs;
  for (const json& p : run.submitted) {
    if (p["name"].get<std::string>().rfind("diag-hccs-", 0) == 0) {
      pairs.insert({p["ranks"][0]["device"].get<int>(), p["ranks"][1]["device"].get<int>()});
    }
  }
  EXPECT_EQ(pairs, (std::set<std::pair<int, int>>{{0, 1}, {1, 2}, {2, 3}, {0, 3}}));
  const DiagTestResult& hccs = test_named(run.report, "HCCS Bandwidth");
  EXPECT_EQ(hccs.verdict, Verdict::kFail);
  ASSERT_EQ(hccs.devices.size(), 4u);
  EXPECT_EQ(hccs.devices[3].verdict, Verdict::kFail);
  ASSERT_EQ(hccs.devices[3].reasons.size(), 2u);
  EXPECT_EQ(hccs.devices[3].reasons[0], "HCCS 2<->3 via the switch: 10.0 GB/s, expected 40.0 GB/s (25%), below 75%")
      << hccs.devices[3].reasons[0];
  for (int d : {0, 1, 2}) EXPECT_EQ(hccs.devices[d].verdict, Verdict::kPass) << d;
  EXPECT_EQ(hccs.devices[0].measured,
            "its port into the switch, in 2 pair(s); slowest HCCS 0<->1 via the switch 40.0 GB/s, expected 40.0 GB/s (100%)");
}

TEST(DiagActive, OneSelectedChipTestsOnlyItsLinks) {
  FakeDaemon fake;
  DiagRun run = run_level(2, fake, 4, {2});
  int exchanges = 0;
  for (const json& p : run.submitted) exchanges += p["name"].get<std::string>().rfind("diag-hccs-", 0) == 0;
  EXPECT_EQ(exchanges, 3);
  EXPECT_EQ(test_named(run.report, "Compute").devices.size(), 1u);
}

TEST(DiagActive, ChipsInUseAreNotTestedAndWarn) {
  FakeDaemon fake;
  tf::ProcessInfo trainer;
  trainer.pid = static_cast<int32_t>(::getpid());  // alive: entries of exited processes are ignored
  trainer.device = 1;
  trainer.name = "python3";
  DiagRun run = run_level(2, fake, 4, {}, {trainer});
  for (const json& p : run.submitted) {
    for (const json& rank : p["ranks"]) EXPECT_NE(rank["device"], 1) << p.dump();
  }
  const DiagTestResult& memory = test_named(run.report, "Memory Pattern");
  ASSERT_EQ(memory.devices.size(), 4u);
  EXPECT_EQ(memory.devices[1].device, 1);  // in device order
  EXPECT_EQ(memory.devices[1].verdict, Verdict::kWarn);
  EXPECT_EQ(memory.devices[1].reasons,
            (std::vector<std::string>{"not run: the chip is in use by pid " + std::to_string(::getpid()) +
                                      " (python3); active tests run on idle chips"}));
  EXPECT_EQ(memory.devices[0].verdict, Verdict::kPass);
  EXPECT_EQ(test_named(run.report, "HCCS Bandwidth").devices[0].measured,
            "2 link(s); slowest HCCS 0<->2 40.0 GB/s, expected 40.0 GB/s (100%)");
  EXPECT_EQ(run.report.verdict, Verdict::kWarn);
  // The table can still list a process that has just exited: it holds nothing any more.
  FakeDaemon again;
  trainer.pid = 999999999;
  DiagRun after = run_level(2, again, 4, {}, {trainer});
  EXPECT_EQ(test_named(after.report, "Compute").devices[1].verdict, Verdict::kPass);
  EXPECT_EQ(test_named(after.report, "Processes").devices[1].verdict, Verdict::kWarn);  // it reports the table as is
}

TEST(DiagActive, BadPagesAndRuntimeErrorsFailWithTheirText) {
  FakeDaemon fake;
  fake.findings[1] = json::array({json{{"text", "HBM page at offset 0x2000000 (0.03 GiB): wrote 0xff, read 0xfe"}}});
  fake.error[3] = "device 3 lost (error code 0xFFFFFFFF)";
  DiagRun run = run_level(2, fake);
  const DiagTestResult& memory = test_named(run.report, "Memory Pattern");
  EXPECT_EQ(memory.devices[1].verdict, Verdict::kFail);
  EXPECT_EQ(memory.devices[1].reasons,
            (std::vector<std::string>{"HBM page at offset 0x2000000 (0.03 GiB): wrote 0xff, read 0xfe (isolation pending a reset)"}));
  EXPECT_EQ(memory.devices[3].reasons,
            (std::vector<std::string>{"the pattern test did not run: device 3 lost (error code 0xFFFFFFFF)"}));
  EXPECT_EQ(test_named(run.report, "Compute").devices[3].reasons,
            (std::vector<std::string>{"fp16 matmuls failed: device 3 lost (error code 0xFFFFFFFF)"}));
  EXPECT_EQ(run.report.verdict, Verdict::kFail);
}

TEST(DiagActive, WithoutAConnectionActiveTestsAreUnknown) {
  auto bus = mesh("diag-active-noclient", 2);
  auto snapshot = bus->client()->snapshot();
  DiagReport r = run_diag(*snapshot, 2);
  const DiagTestResult& compute = test_named(r, "Compute");
  EXPECT_EQ(compute.verdict, Verdict::kUnknown);
  EXPECT_EQ(compute.devices[0].reasons, (std::vector<std::string>{"no node connection to run test programs on"}));
  EXPECT_EQ(r.verdict, Verdict::kUnknown);
}

TEST(DiagActive, ARefusedReferenceIsAnError) {
  auto bus = mesh("diag-active-noref", 2);
  bus->set_control_handler([](const tf::Request&) { return tf::error_reply("unknown op 'reference'", "unknown_op"); });
  auto r = fetch_reference(*bus->client());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "the node gave no reference figures: unknown op 'reference'");
}

}  // namespace
}  // namespace npukit::probes
