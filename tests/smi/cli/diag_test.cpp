// npu-smi diag against in-process buses: the result box, per-test results, JSON, exit codes.
#include <gtest/gtest.h>

#include "tests/smi/cli/smi_fixture.hpp"

namespace npukit::smi::testing {
namespace {

json node_fixture(const std::string& node, const std::string& spec = "2x910B2") {
  json dev = {{"name", "910B2"}, {"chip_type", "Ascend910B"}, {"smi_layout", "hbm"}};
  json d0 = dev, d1 = dev;
  d0["npu_id"] = 0, d0["bus_id"] = "0000:C1:00.0";
  d1["npu_id"] = 1, d1["bus_id"] = "0000:C2:00.0";
  json defaults = {{"npu_health", 0}, {"npu_error_code", 0}, {"npu_temperature_celsius", 45.0},
                   {"npu_throttle_reasons", 0}, {"npu_ecc_single_bit_volatile_errors", 0},
                   {"npu_ecc_double_bit_volatile_errors", 0}, {"npu_hbm_total_bytes", {{"mib", 65536}}},
                   {"npu_aicore_clock_max_mhz", 1800}, {"npu_power_watts", 90.0}, {"npu_power_limit_watts", 310.0}};
  return {{"node", node}, {"node_spec", spec}, {"driver_version", "23.0.2.1"}, {"tool_version", "23.0.2.1"},
          {"defaults", defaults}, {"devices", {d0, d1}}, {"links", {{{"a", 0}, {"b", 1}, {"kind", "hccs"}}}}};
}

TEST(SmiDiag, HealthyNodePassesWithADcgmiStyleBox) {
  auto bus = make_bus(node_fixture("diag-ok"));
  SmiRun r = run(bus, {"diag", "-r", "1"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("+===========================+================================================+\n"), std::string::npos);
  EXPECT_NE(r.out.find("|-----  Deployment  --------+------------------------------------------------|\n"), std::string::npos);
  EXPECT_NE(r.out.find("| Node Reachable            | Pass                                           |\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("| Health Rules              | Pass - All                                     |\n"), std::string::npos);
  EXPECT_NE(r.out.find("Result: PASS (exit 0)\n"), std::string::npos);
  std::istringstream in(r.out);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && (line[0] == '|' || line[0] == '+')) {
      EXPECT_EQ(line.size(), 78u) << line;
    }
  }
  expect_no_trailing_whitespace(r.out, "diag");
}

TEST(SmiDiag, AFailingChipIsNamedWithItsReasonAndExit2) {
  json fx = node_fixture("diag-fail");
  fx["devices"][1]["fields"] = {{"npu_ecc_double_bit_volatile_errors", 2}, {"npu_health", 2}, {"npu_error_code", 0x80E01802u}};
  SmiRun r = run(make_bus(fx), {"diag"});
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("| Health Rules              | Fail - NPU: 1                                  |"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Health Rules, NPU 1: ecc_errors: NPU 1 has 2 uncorrectable HBM ECC error(s)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Result: FAIL (exit 2)"), std::string::npos);
}

TEST(SmiDiag, ProcessesOnAChipWarnWithExit1) {
  json fx = node_fixture("diag-warn");
  fx["processes"] = json::array({json{{"pid", 77}, {"device", 0}, {"name", "python3"}, {"mib", 100}}});
  SmiRun r = run(make_bus(fx), {"diag"});
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("| Processes                 | Warn - NPU: 0                                  |"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Processes, NPU 0: held by pid 77 (python3)"), std::string::npos);
}

TEST(SmiDiag, AChipCountBelowTheSpecFails) {
  SmiRun r = run(make_bus(node_fixture("diag-count", "4x910B2")), {"diag"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.out.find("Device Count, node: node spec 4x910B2 promises 4 cards, the bus carries 2 (2 chips)"), std::string::npos) << r.out;
}

TEST(SmiDiag, TheSpecCountsCardsSoTwoChipCardsPass) {
  json fx = node_fixture("diag-310p", "1x310P3");
  fx["devices"][1]["npu_id"] = 0;
  fx["devices"][1]["chip_id"] = 1;
  SmiRun r = run(make_bus(fx), {"diag"});
  EXPECT_NE(r.out.find("| Device Count              | Pass "), std::string::npos) << r.out;
}

TEST(SmiDiag, MissingSpecsFailDeviceSpecs) {
  json fx = node_fixture("diag-specs");
  fx["devices"][0]["fields"] = {{"npu_hbm_total_bytes", 0}};
  SmiRun r = run(make_bus(fx), {"diag"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.out.find("| Device Specs              | Fail - NPU: 0"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("HBM capacity is 0 or missing"), std::string::npos);
}

TEST(SmiDiag, StaleNodeIsUnknownWithExit3) {
  json fx = node_fixture("diag-stale");
  fx["stale"] = true;
  SmiRun r = run(make_bus(fx), {"diag"});
  EXPECT_EQ(r.exit_code, 3) << r.out;
  EXPECT_NE(r.out.find("| Node Reachable            | Unknown"), std::string::npos) << r.out;
}

TEST(SmiDiag, JsonCarriesVerdictExitCodeAndEveryTest) {
  json fx = node_fixture("diag-json");
  fx["devices"][0]["fields"] = {{"npu_temperature_celsius", 101.0}, {"npu_health", 2}, {"npu_error_code", 0x80E18402u}};
  SmiRun r = run(make_bus(fx), {"diag", "--json", "-i", "0"});
  EXPECT_EQ(r.exit_code, 2);
  json j = json::parse(r.out);
  EXPECT_EQ(j.at("verdict"), "FAIL");
  EXPECT_EQ(j.at("exit_code"), 2);
  EXPECT_EQ(j.at("level"), 1);
  ASSERT_EQ(j.at("tests").size(), 5u);
  const json& health = j.at("tests")[4];
  EXPECT_EQ(health.at("name"), "Health Rules");
  EXPECT_EQ(health.at("result"), "Fail - NPU: 0");
  ASSERT_EQ(health.at("devices").size(), 1u);  // -i 0: only card 0
  EXPECT_EQ(health.at("devices")[0].at("npu_id"), 0);
}

TEST(SmiDiag, BadArgumentsExit4AndNoNodeExit5) {
  auto bus = make_bus(node_fixture("diag-args"));
  SmiRun bad_level = run(bus, {"diag", "-r", "7"});
  EXPECT_EQ(bad_level.exit_code, 4);
  EXPECT_NE(bad_level.err.find("npu-smi: diag: -r '7': expected a level from 1 to 3"), std::string::npos) << bad_level.err;
  SmiRun bad_id = run(bus, {"diag", "-i", "9"});
  EXPECT_EQ(bad_id.exit_code, 4);
  EXPECT_NE(bad_id.err.find("no NPU id '9'"), std::string::npos);
  EXPECT_EQ(run(bus, {"diag", "--bogus"}).exit_code, 4);
  EXPECT_EQ(run(nullptr, {"diag"}).exit_code, 5);
  SmiRun help = run(bus, {"diag", "-h"});
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_NE(help.out.find("Usage: npu-smi diag"), std::string::npos);
}

}  // namespace
}  // namespace npukit::smi::testing
