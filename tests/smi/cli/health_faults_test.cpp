// npu-smi health -v: the node's active faults with their source and start, beside the verdicts.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/daemon_util.hpp"

namespace npukit::testing {
namespace {

const std::string kSmi = std::string(NPUKIT_BUILD_DIR) + "/smi/npu-smi";

TEST(HealthVerbose, ListsActiveFaultsWithSourceAndStart) {
  ScopedNode node("health-v");
  auto none = run_command(kSmi + " health -v --node-name " + node.name());
  EXPECT_EQ(none.exit_code, 0) << none.output;
  EXPECT_NE(none.output.find("Active faults: none\n"), std::string::npos) << none.output;
  ASSERT_EQ(run_command(emud() + " inject --node-name " + node.name() + " --device 3 --fault ecc-storm").exit_code, 0);
  auto text = run_command(kSmi + " health -v --node-name " + node.name());
  EXPECT_NE(text.output.find("Active faults:\n  NPU 3 Chip 0: ecc-storm since "), std::string::npos) << text.output;
  EXPECT_NE(text.output.find(" s, from control\n"), std::string::npos) << text.output;
  auto json = nlohmann::json::parse(run_command(kSmi + " health -v --json --node-name " + node.name()).output, nullptr, false);
  ASSERT_TRUE(json.is_object());
  ASSERT_EQ(json["active_faults"].size(), 1u) << json.dump();
  EXPECT_EQ(json["active_faults"][0]["npu_id"], 3);
  EXPECT_EQ(json["active_faults"][0]["fault"], "ecc-storm");
  EXPECT_EQ(json["active_faults"][0]["source"], "control");
  // -i narrows the list to that card's chips; without -v nothing is listed.
  auto other = run_command(kSmi + " health -v -i 2 --node-name " + node.name());
  EXPECT_NE(other.output.find("Active faults: none\n"), std::string::npos) << other.output;
  auto plain = run_command(kSmi + " health --node-name " + node.name());
  EXPECT_EQ(plain.output.find("Active faults"), std::string::npos) << plain.output;
}

}  // namespace
}  // namespace npukit::testing
