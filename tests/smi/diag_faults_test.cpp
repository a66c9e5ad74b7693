// Every injectable fault against a real npu-emud node: the right health rule fails with the
// right reason, `npu-smi health` and `npu-smi diag` exit with the documented code, and clearing
// (or resetting) the device returns both to PASS. The node runs at 50x speed so heating and
// cooling take seconds.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>

#include "../daemon/daemon_util.hpp"

namespace npukit::testing {
namespace {

using nlohmann::json;

const std::string kSmi = std::string(NPUKIT_BUILD_DIR) + "/smi/npu-smi";

struct FaultCase {
  const char* fault;
  int exit_code;        // health and diag
  const char* rule;     // the health rule that judges it
  const char* reason;   // part of that rule's reason
  const char* recover;  // "clear" or "reset"
  bool needs_load;      // over-temperature only heats under load
};

const FaultCase kCases[] = {
    {"over-temperature", 1, "temperature", "is at or above the throttle point", "clear", true},
    {"hbm-double-bit", 2, "ecc_errors", "uncorrectable (double-bit) ECC error(s)", "clear", false},
    {"ecc-storm", 1, "ecc_errors", "single-bit ECC errors since the last clear (storm at 1000)", "clear", false},
    {"aicore-hang", 2, "aicore_hang", "AI Core task timed out", "reset", false},
    {"link-down", 2, "links", "link(s) down: hccs 3<->", "clear", false},
    {"device-lost", 2, "device_health", "device lost", "reset", false},
};

CommandResult smi(const ScopedNode& node, const std::string& args) {
  return run_command("NPU_NODE=" + node.name() + " " + kSmi + " " + args);
}

// A long matmul loop on device 3; returns the job id.
int start_load(const ScopedNode& node) {
  json mm = {{"op", "kernel"}, {"stream", 0}, {"name", "aten::mm"},
             {"inputs", {{{"shape", {8192, 8192}}, {"dtype", "float16"}}, {{"shape", {8192, 8192}}, {"dtype", "float16"}}}}};
  json program = {{"name", "diag-burn"}, {"repeat", 1000000}, {"process", {{"pid", 0}, {"name", "burn"}}},
                  {"ranks", json::array({json{{"device", 3}, {"streams", 1}, {"step", {mm, mm, mm, mm}}}})}};
  json reply = node.control({{"op", "submit"}, {"program", program}});
  EXPECT_TRUE(reply.value("ok", false)) << reply.dump();
  return reply.value("job", 0);
}

class DiagFaults : public ::testing::TestWithParam<FaultCase> {};

TEST_P(DiagFaults, TheRightRuleFailsAndRecoveryReturnsToPass) {
  const FaultCase& c = GetParam();
  ScopedNode node(std::string("f") + std::to_string(&c - kCases), "--speed 50");
  ASSERT_EQ(smi(node, "health").exit_code, 0) << smi(node, "health").output;
  int job = c.needs_load ? start_load(node) : 0;
  auto inject = run_command(emud() + " inject --node-name " + node.name() + " --device 3 --fault " + c.fault);
  ASSERT_EQ(inject.exit_code, 0) << inject.output;
  CommandResult health;
  EXPECT_TRUE(eventually([&] { return (health = smi(node, "health -i 3")).exit_code == c.exit_code; },
                         std::chrono::seconds(30))) << health.output;
  EXPECT_NE(health.output.find(c.rule), std::string::npos) << health.output;
  EXPECT_NE(health.output.find(c.reason), std::string::npos) << health.output;
  CommandResult diag = smi(node, "diag -r 1");
  EXPECT_EQ(diag.exit_code, c.exit_code) << diag.output;
  EXPECT_NE(diag.output.find(std::string("Health Rules, NPU 3: ") + c.rule + ": "), std::string::npos) << diag.output;
  if (job != 0) node.control({{"op", "cancel"}, {"job", job}});
  auto recover = run_command(emud() + " " + c.recover + " --node-name " + node.name() + " --device 3");
  ASSERT_EQ(recover.exit_code, 0) << recover.output;
  EXPECT_TRUE(eventually([&] { return (health = smi(node, "health")).exit_code == 0; }, std::chrono::seconds(30)))
      << health.output;
  EXPECT_TRUE(eventually([&] { return (diag = smi(node, "diag -r 1")).exit_code == 0; })) << diag.output;
  EXPECT_NE(diag.output.find("Result: PASS (exit 0)"), std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(AllFaults, DiagFaults, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<FaultCase>& i) {
                           std::string n = i.param.fault;
                           for (char& ch : n) ch = ch == '-' ? '_' : ch;
                           return n;
                         });

TEST(DiagQuick, Level1OnAHealthy8NpuNodeFinishesWellUnder5Seconds) {
  ScopedNode node("quick");
  auto start = std::chrono::steady_clock::now();
  CommandResult diag = smi(node, "diag -r 1");
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(diag.exit_code, 0) << diag.output;
  EXPECT_NE(diag.output.find("| Health Rules              | Pass - All"), std::string::npos) << diag.output;
  EXPECT_LT(seconds, 5.0);
}

}  // namespace
}  // namespace npukit::testing
