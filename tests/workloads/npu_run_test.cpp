// npu-run end to end: the real binary, standalone and against a real daemon.
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <regex>

#include "tests/daemon_util.hpp"

namespace npukit::testing {
namespace {

std::string npu_run() { return NPU_RUN_PATH; }
std::string data(const std::string& f) { return std::string(NPUKIT_TEST_DATA_DIR) + "/workloads/" + f; }

std::vector<double> numbers_after(const std::string& text, const std::string& key) {
  std::vector<double> out;
  std::regex re(key + " ([0-9.]+)");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), re); it != std::sregex_iterator(); ++it) {
    out.push_back(std::stod((*it)[1]));
  }
  return out;
}

// "  throughput  1814.3 img/s ..." -> 1814.3
double throughput(const std::string& text) {
  auto v = numbers_after(text, "throughput ");
  return v.empty() ? 0 : v.back();
}

TEST(NpuRun, MlpTrainLossFallsAndRepeatsExactly) {
  auto a = run_command(npu_run() + " mlp-train --steps 50 --seed 7");
  ASSERT_EQ(a.exit_code, 0) << a.output;
  auto loss = numbers_after(a.output, "loss");
  ASSERT_EQ(loss.size(), 50u);
  EXPECT_LT(loss.back(), 0.7 * loss.front()) << a.output;
  auto b = run_command(npu_run() + " mlp-train --steps 50 --seed 7");
  EXPECT_EQ(a.output, b.output);
  auto c = run_command(npu_run() + " mlp-train --steps 50 --seed 8");
  EXPECT_NE(numbers_after(c.output, "loss"), loss);
}

TEST(NpuRun, ScenariosFailWithTheRuntimesMessage) {
  auto oom = run_command(npu_run() + " oom --standalone --fast");
  EXPECT_EQ(oom.exit_code, 1);
  EXPECT_NE(oom.output.find("npu-run: oom failed: acl_rt_malloc failed, size=80000000000; device 0: total 65536 MiB"),
            std::string::npos) << oom.output;
  auto op = run_command(npu_run() + " unsupported-op --standalone --fast");
  EXPECT_EQ(op.exit_code, 1);
  EXPECT_NE(op.output.find("npu-run: NotFound: Operator roi_align_v2 does not have kernel for NPU"), std::string::npos);
  auto dyn = run_command(npu_run() + " dynamic-shape --standalone --fast");
  EXPECT_EQ(dyn.exit_code, 1);
  EXPECT_NE(dyn.output.find("npu-run: ShapeInferenceError: output shape is dynamic, but operator MatMulV2 does not "
                            "support dynamic shape."), std::string::npos) << dyn.output;
}

TEST(NpuRun, BrokenWorkloadFilesExitWithUsageErrors) {
  for (const char* f : {"truncated.json", "wrong_type.json", "bad_shape.json", "unknown_field.json"}) {
    auto r = run_command(npu_run() + " " + data(f) + " --standalone --fast");
    EXPECT_EQ(r.exit_code, 4) << f << ": " << r.output;
    EXPECT_EQ(r.output.rfind("npu-run: workload error: " + data(f), 0), 0u) << r.output;
    EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), 1) << "one line: " << r.output;
  }
  auto op = run_command(npu_run() + " " + data("unknown_op.json") + " --standalone --fast");
  EXPECT_EQ(op.exit_code, 1);
  EXPECT_NE(op.output.find("NotFound: Operator deformable_conv_v9 does not have kernel for NPU"), std::string::npos);
  auto shape = run_command(npu_run() + " " + data("impossible_shape.json") + " --standalone --fast");
  EXPECT_EQ(shape.exit_code, 1);
  EXPECT_NE(shape.output.find("ShapeInferenceError: MatMulV2"), std::string::npos) << shape.output;
  EXPECT_EQ(run_command(npu_run() + " resnet50-train --steps 0").exit_code, 4);
  EXPECT_EQ(run_command(npu_run() + " resnet50-train --devices 0,x --standalone").exit_code, 4);
  // A device the node does not have is a bad value too (it was the job failing, exit 1).
  auto absent = run_command(npu_run() + " resnet50-train --devices 0,9 --standalone --fast");
  EXPECT_EQ(absent.exit_code, 4) << absent.output;
  EXPECT_EQ(absent.output, "npu-run: --devices: invalid device id 9 (this node has devices 0-7)\n");
  // A timeline fault the node does not know is a workload error naming the file and field.
  auto fault = run_command(npu_run() + " " + data("unknown_fault.json") + " --standalone --fast");
  EXPECT_EQ(fault.exit_code, 4) << fault.output;
  EXPECT_NE(fault.output.find("unknown_fault.json: faults[0].fault: unknown fault 'bogus' (expected one of: "), std::string::npos)
      << fault.output;
  // A timeline naming a device or port the node does not have: the file and the field, exit 4
  // (it was the job failing, exit 1, with "invalid device id 99" alone).
  auto port = run_command(npu_run() + " " + data("absent_fault_device.json") + " --standalone --fast");
  EXPECT_EQ(port.exit_code, 4) << port.output;
  EXPECT_EQ(port.output, "npu-run: workload error: " + data("absent_fault_device.json") +
                             ": faults[1].link: invalid device id 99 (this node has devices 0-7)\n");
  // A device named twice is a bad value too (the job failed: "a device may hold only one rank").
  auto twice = run_command(npu_run() + " resnet50-train --devices 1,2,1 --standalone --fast");
  EXPECT_EQ(twice.exit_code, 4) << twice.output;
  EXPECT_EQ(twice.output, "npu-run: --devices: device 1 is named twice (one rank per device)\n");
  // Placing ranks on a cluster's hosts: one line naming what does not fit.
  auto both = run_command(npu_run() + " resnet50-train --devices 0,1 --hosts 2 --standalone --fast");
  EXPECT_EQ(both.exit_code, 4) << both.output;
  EXPECT_EQ(both.output, "npu-run: --devices names each rank's device; --hosts/--ranks place the ranks: give one or the other\n");
  auto hosts = run_command(npu_run() + " resnet50-train --hosts 3 --standalone --fast --spec 2x8x910B2");
  EXPECT_EQ(hosts.exit_code, 4) << hosts.output;
  EXPECT_EQ(hosts.output, "npu-run: --hosts 3: 2x8x910B2 has 2 hosts\n");
  auto ranks = run_command(npu_run() + " resnet50-train --hosts 2 --ranks 5 --standalone --fast --spec 2x8x910B2");
  EXPECT_EQ(ranks.exit_code, 4) << ranks.output;
  EXPECT_EQ(ranks.output, "npu-run: --ranks 5 over 2 host(s): each host takes the same number, at most 8 (its devices)\n");
  auto placed = run_command(npu_run() + " resnet50-train --hosts 2 --ranks 4 --standalone --fast --spec 2x8x910B2 --steps 2");
  EXPECT_EQ(placed.exit_code, 0) << placed.output;
  EXPECT_NE(placed.output.find("4 devices (dp 4 x tp 1)"), std::string::npos) << placed.output;
}

// One step has no steady steps to average: the summary says it is the first step alone.
TEST(NpuRun, OneStepIsReportedAsTheFirstStepNotAMeanOverNone) {
  auto r = run_command(npu_run() + " resnet50-train --standalone --fast --steps 1");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("ms (one step, the first: it includes the warm-up)"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("steps 2-1"), std::string::npos) << r.output;
  auto two = run_command(npu_run() + " resnet50-train --standalone --fast --steps 2");
  EXPECT_NE(two.output.find("mean over steps 2-2 (first step "), std::string::npos) << two.output;
}

// The mean step time `npu-run <args> --standalone --fast` prints; 0 (and a failure) when it failed.
double step_time(const std::string& args) {
  auto r = run_command(npu_run() + " " + args + " --standalone --fast");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  std::vector<double> ms = numbers_after(r.output, "step time  ");
  return r.exit_code == 0 && !ms.empty() ? ms.back() : 0;
}

TEST(NpuRun, AllocatorChurnIsSlowerWithDirect) {
  double c = step_time("allocator-churn --allocator caching"), d = step_time("allocator-churn --allocator direct");
  ASSERT_GT(c, 0);
  ASSERT_GT(d, 0);
  EXPECT_GT(d, 10 * c) << "caching " << c << " ms, direct " << d << " ms";
}

// The seed's experiment (docs/validation.md): its batch was set once so 8x910B2 lands at the
// seed's 2.1 s/step; the 8xA100, nothing else changed, must then be the faster of the two, as in the
// seed (a first A100 spec came out slower than the 910B2, the opposite). How much faster is the
// model's answer, reported, not pinned: 1.009 against the seed's 1.167.
TEST(NpuRun, TheSeedsExperimentLandsAtTheSeedsStepAndTheA100IsTheFaster) {
  double b2 = step_time("ernie3-medium-seed --steps 2");
  double a = step_time("ernie3-medium-seed --steps 2 --spec 8xA100 --allocator caching");
  ASSERT_GT(b2, 0);
  ASSERT_GT(a, 0);
  EXPECT_NEAR(b2 / 2100.0, 1.0, 0.01) << "8x910B2 " << b2 << " ms";
  EXPECT_LT(a, b2) << "8xA100 " << a << " ms, 8x910B2 " << b2 << " ms";
}

TEST(NpuRun, OverheatThrottleSlowsTheHotDevice) {
  auto r = run_command(npu_run() + " overheat-throttle --standalone --fast --steps 300");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::regex step_re("step [0-9]+/300  ([0-9.]+) ms");
  std::vector<double> ms;
  for (auto it = std::sregex_iterator(r.output.begin(), r.output.end(), step_re); it != std::sregex_iterator(); ++it) {
    ms.push_back(std::stod((*it)[1]));
  }
  ASSERT_EQ(ms.size(), 300u);
  EXPECT_GT(ms.back(), 1.3 * ms[1]) << "the clock of device 0 stepped down";
}

TEST(NpuRun, CalibratedAgainstPublishedResults) {
  auto one = throughput(run_command(npu_run() + " resnet50-train --standalone --fast --spec 8x910 --devices 0 --steps 4").output);
  auto eight = throughput(run_command(npu_run() + " resnet50-train --standalone --fast --spec 8x910 --steps 4").output);
  EXPECT_NEAR(one / 2115.0, 1.0, 0.10) << one;  // the validation table's max (docs/validation.md)
  EXPECT_NEAR(eight / 16600.0, 1.0, 0.10) << eight;
  EXPECT_NEAR(eight / (8 * one), 0.98, 0.03) << "published scaling 0.98";
  auto bert = throughput(run_command(npu_run() + " bert-large-train --standalone --fast --spec 8x910 --steps 4").output);
  auto bert1 = throughput(run_command(npu_run() + " bert-large-train --standalone --fast --spec 8x910 --devices 0 --steps 4").output);
  EXPECT_NEAR(bert / 2069.0, 1.0, 0.10) << bert;
  EXPECT_NEAR(bert1 / 269.0, 1.0, 0.10) << bert1;
  EXPECT_NEAR(bert / (8 * bert1), 0.96, 0.03) << "published scaling 0.96";
}

// A host's input pipeline feeds every rank on it: 8 ranks of batch 256 whose devices outrun a
// pipeline of 12,000 img/s run at the pipeline's rate; one rank alone (its 256 samples take 21 ms
// of the pipeline, well inside its step) is not slowed; 0 is no limit.
TEST(NpuRun, AHostsInputPipelineCapsTheNodeNotOneRank) {
  const std::string run = npu_run() + " resnet50-train --standalone --fast --spec 8x910B2 --steps 4";
  double free8 = throughput(run_command(run).output);
  double capped8 = throughput(run_command(run + " --host-input-rate 12000").output);
  double free1 = throughput(run_command(run + " --devices 0").output);
  double capped1 = throughput(run_command(run + " --devices 0 --host-input-rate 12000").output);
  ASSERT_GT(free8, 13000) << "the devices alone must outrun the pipeline for this test to say anything";
  EXPECT_NEAR(capped8 / 12000, 1.0, 0.03) << capped8;
  EXPECT_NEAR(capped1 / free1, 1.0, 0.01) << capped1 << " vs " << free1;
  EXPECT_EQ(throughput(run_command(run + " --host-input-rate 0").output), free8);
  auto bad = run_command(run + " --host-input-rate -5");
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_NE(bad.output.find("--host-input-rate"), std::string::npos) << bad.output;
}

TEST(NpuRun, DataloaderStarvationLeavesAiCoresIdleOnTheBus) {
  ScopedNode node("starve");
  std::string cmd = npu_run() + " dataloader-starvation --node-name " + node.name() + " --steps 25";
  std::FILE* p = popen((cmd + " > /dev/null 2>&1").c_str(), "r");
  ASSERT_NE(p, nullptr);
  auto client = node.client();
  std::vector<double> util;
  for (int i = 0; i < 40; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    auto s = client->snapshot();
    if (s.ok() && !s->processes().empty()) util.push_back(*s->device(0, telemetry::fid::kAicoreUtil).number());
  }
  EXPECT_EQ(pclose(p), 0);
  ASSERT_GT(util.size(), 10u);
  double mean = 0;
  for (double u : util) mean += u / static_cast<double>(util.size());
  EXPECT_LT(mean, 50.0);
  EXPECT_GT(mean, 2.0);  // the cores do work, between long waits
}

// A built-in that cannot be read (its directory is not searchable for this user) is one line
// naming the file and why, exit 4: it was an uncaught std::filesystem error (abort, exit 134).
TEST(NpuRun, AnUnreadableWorkloadIsOneLineNotACrash) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to run npu-run as uid 65534";
  std::string dir = "/tmp/npukit-private-workloads-" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  std::filesystem::copy_file(std::string(NPUKIT_SOURCE_DIR) + "/workloads/builtin/burn.json", dir + "/burn.json",
                             std::filesystem::copy_options::overwrite_existing);
  ::chmod(dir.c_str(), 0700);
  auto r = run_command("NPUKIT_WORKLOAD_DIR=" + dir + " setpriv --reuid=65534 --regid=65534 --clear-groups " + npu_run() +
                       " burn --standalone --fast --steps 1");
  std::filesystem::remove_all(dir);
  EXPECT_EQ(r.exit_code, 4) << r.output;
  EXPECT_NE(r.output.find("npu-run: workload error: " + dir + "/burn.json: cannot open (Permission denied)"), std::string::npos)
      << r.output;
  EXPECT_EQ(r.output.find("terminate called"), std::string::npos) << r.output;
}

TEST(NpuRun, NoDaemonSaysSo) {
  auto r = run_command(npu_run() + " resnet50-train --node-name " + unique_node("absent"));
  EXPECT_EQ(r.exit_code, 5);
  EXPECT_NE(r.output.find("is running (start one with: npu-emud start --node-name"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace npukit::testing
