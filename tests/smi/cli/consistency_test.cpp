// Consistency across the programs. One flag set: every npukit program selects its node with
// --node-name (and $NPU_NODE), and --spec names a node spec wherever a spec is meant (each
// program is pointed at a running node by the flag alone, with $NPU_NODE naming a node that does
// not exist). Versions follow the chip spec: npu-smi reports its driver package's version.
#include <gtest/gtest.h>

#include <set>

#include <nlohmann/json.hpp>

#include "tests/daemon_util.hpp"

namespace npukit::testing {
namespace {

std::string bin(const std::string& path) { return std::string(NPUKIT_BUILD_DIR) + "/" + path; }

TEST(NodeFlag, EveryProgramTakesNodeName) {
  ScopedNode node("flags");
  std::string env = "NPU_NODE=no-such-node ";
  std::string n = " --node-name " + node.name();
  auto smi = run_command(env + bin("smi/npu-smi") + " info -l" + n);
  EXPECT_EQ(smi.exit_code, 0) << smi.output;
  EXPECT_NE(smi.output.find("Total Count"), std::string::npos) << smi.output;
  auto smi_first = run_command(env + bin("smi/npu-smi") + " --node-name=" + node.name() + " info -l");
  EXPECT_EQ(smi_first.exit_code, 0) << smi_first.output;
  auto top = run_command(env + bin("smi/npu-top") + n + " --frames 1 --ascii --size 100x30");
  EXPECT_EQ(top.exit_code, 0) << top.output;
  auto run = run_command(env + bin("workloads/npu-run") + " matmul-sweep --steps 1" + n);
  EXPECT_EQ(run.exit_code, 0) << run.output;
  auto status = run_command(env + emud() + " status" + n);
  EXPECT_EQ(status.exit_code, 0) << status.output;
  auto exporter = run_command(env + "timeout 1 " + bin("smi/npu-exporter") + " --listen 127.0.0.1:0" + n);
  EXPECT_NE(exporter.output.find("(node " + node.name() + ")"), std::string::npos) << exporter.output;
}

TEST(NodeFlag, SpecIsForInProcessNodesAndAMissingNameIsOneLine) {
  auto r = run_command(bin("workloads/npu-run") + " matmul-sweep --spec 8x910 --node-name no-such-node");
  EXPECT_EQ(r.exit_code, 4) << r.output;
  EXPECT_EQ(r.output, "npu-run: --spec applies to --standalone runs; a daemon node's spec is set by npu-emud start --spec\n");
  // --fast and --speed pace an in-process node; a daemon's pace is its own (they were ignored).
  auto fast = run_command(bin("workloads/npu-run") + " matmul-sweep --fast --node-name no-such-node");
  EXPECT_EQ(fast.exit_code, 4) << fast.output;
  EXPECT_EQ(fast.output, "npu-run: --fast applies to --standalone runs; a daemon node runs at the pace set by npu-emud start --speed\n");
  EXPECT_EQ(run_command(bin("workloads/npu-run") + " matmul-sweep --speed 10 --node-name no-such-node").exit_code, 4);
  auto smi = run_command(bin("smi/npu-smi") + " info --node-name");
  EXPECT_EQ(smi.exit_code, 215) << smi.output;
  EXPECT_EQ(smi.output, "npu-smi: --node-name needs a node name\n");
}

// A node name no node can have is a usage error (4) with one line in every program, from the
// flag or from $NPU_NODE (npu-smi said 6, npu-run and npu-emud status 5, the rest 4).
TEST(NodeFlag, ANameNoNodeCanHaveIsUsageInEveryProgram) {
  const std::string line = "invalid node name 'bad/name': use 1-48 characters of [A-Za-z0-9_.-]";
  // NODE: where the flag goes (npu-prof's before the command it wraps).
  for (const std::string& command : {bin("smi/npu-smi") + " info NODE", bin("smi/npu-smi") + " health NODE",
                                     bin("workloads/npu-run") + " resnet50-train --steps 1 NODE", bin("emulator/npu-emud") + " status NODE",
                                     bin("emulator/npu-emud") + " inject --device 0 --fault over-temperature NODE",
                                     bin("smi/npu-top") + " --frames 1 NODE", bin("smi/npu-exporter") + " --listen 127.0.0.1:0 NODE",
                                     bin("profiler/npu-prof") + " record -o /tmp/npukit-never NODE -- true"}) {
    const std::size_t at = command.find("NODE");
    for (const std::string& how : {"NPU_NODE=bad/name timeout 10 " + std::string(command).erase(at, 4),
                                   "timeout 10 " + std::string(command).replace(at, 4, "--node-name bad/name")}) {
      auto r = run_command(how);
      EXPECT_EQ(r.exit_code, 4) << how << ": " << r.output;
      EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), 1) << how << ": " << r.output;
      EXPECT_NE(r.output.find(line), std::string::npos) << how << ": " << r.output;
    }
  }
}

TEST(Versions, NpuSmiReportsItsDriversVersionPerChipSpec) {
  for (auto [spec, version] : {std::pair{"8x910", "21.0.4"}, std::pair{"8x910B2", "23.0.2.1"}}) {
    ScopedNode node(std::string("ver-") + spec, std::string("--spec ") + spec);
    auto v = run_command(bin("smi/npu-smi") + " -v --node-name " + node.name());
    EXPECT_EQ(v.exit_code, 0) << v.output;
    EXPECT_EQ(v.output.rfind(std::string("npu-smi version: ") + version + "\n", 0), 0u) << spec << ": " << v.output;
    auto info = run_command(bin("smi/npu-smi") + " info --node-name " + node.name());
    EXPECT_NE(info.output.find(std::string("| npu-smi ") + version + " "), std::string::npos) << info.output.substr(0, 300);
    EXPECT_NE(info.output.find(std::string("Version: ") + version + " "), std::string::npos) << info.output.substr(0, 300);
  }
}

// Board identity: every field real npu-smi fills has a value; VDie IDs are unique per chip and
// the same after the node restarts under the same name and spec.
TEST(Identity, VDieIdsAreUniqueAndStableAndBoardFieldsFilled) {
  auto die_ids = [](const std::string& name) {
    std::vector<std::string> ids;
    for (int npu = 0; npu < 8; ++npu) {
      auto r = run_command(bin("smi/npu-smi") + " info -t board -i " + std::to_string(npu) + " -c 0 --json --node-name " + name);
      nlohmann::json j = nlohmann::json::parse(r.output, nullptr, false);
      EXPECT_TRUE(j.is_object()) << r.output;
      if (!j.is_object()) return ids;
      for (const char* key : {"chip_version", "board_id", "pcb_id", "bom_id", "die_id"}) {
        EXPECT_TRUE(j[key].is_string()) << key << ": " << r.output;
      }
      ids.push_back(j.value("die_id", std::string()));
    }
    return ids;
  };
  std::vector<std::string> first;
  {
    ScopedNode node("ident");
    first = die_ids(node.name());
    ASSERT_EQ(first.size(), 8u);
    EXPECT_EQ(std::set<std::string>(first.begin(), first.end()).size(), 8u) << "unique per chip";
    EXPECT_EQ(first[0].size(), 44u) << first[0];  // 5 groups of 8 hex digits
    ScopedNode other("ident-other");
    EXPECT_NE(die_ids(other.name())[0], first[0]) << "another node's chip 0 is another chip";
  }
  ScopedNode again("ident");  // the same name: the same node restarted
  EXPECT_EQ(die_ids(again.name()), first);
}

// A 310P chip reports no power reading: NA in every text, null in JSON, and -t power --json is
// JSON too (it used to print the text sentence).
TEST(PowerNa, A310PReportsNoPowerAnywhere) {
  ScopedNode node("power-na", "--spec 4x310P3");
  std::string smi = bin("smi/npu-smi");
  std::string n = " --node-name " + node.name();
  ASSERT_TRUE(eventually([&] { return run_command(smi + " info --json" + n).exit_code == 0; }));
  nlohmann::json info = nlohmann::json::parse(run_command(smi + " info --json" + n).output, nullptr, false);
  ASSERT_TRUE(info.is_object());
  std::string dump = info.dump();
  EXPECT_NE(dump.find("\"npu_power_watts\":null"), std::string::npos) << dump.substr(0, 600);
  EXPECT_EQ(dump.find("\"npu_power_watts\":1"), std::string::npos);
  nlohmann::json power = nlohmann::json::parse(run_command(smi + " info -t power -i 0 -c 0 --json" + n).output, nullptr, false);
  ASSERT_TRUE(power.is_object());
  EXPECT_EQ(power["supported"], false);
  auto top = run_command(bin("smi/npu-top") + n + " --frames 1 --ascii --size 120x30");
  EXPECT_NE(top.output.find("NA/72W"), std::string::npos) << top.output;
}

// One numbering: on multi-chip cards npu-top names chips as npu-smi addresses them (-i card -c
// chip): rows "2-1", alarms and panels "NPU 2 Chip 1"; single-chip nodes keep "NPU 5".
TEST(Numbering, NpuTopUsesNpuSmisCardAndChipIds) {
  ScopedNode node("numbering", "--spec 4x310P3");
  // npu-emud takes the same ids: -i 2 -c 1 is the sixth chip.
  ASSERT_EQ(run_command(emud() + " inject --node-name " + node.name() + " -i 2 -c 1 --fault ecc-storm").exit_code, 0);
  std::string top = bin("smi/npu-top") + " --node-name " + node.name() + " --frames 1 --ascii --size 120x30";
  ASSERT_TRUE(eventually([&] { return run_command(top).output.find("! NPU 2 Chip 1 Warning 0x80E01801 single-bit ECC error storm") != std::string::npos; }))
      << run_command(top).output;
  std::string frame = run_command(top).output;
  EXPECT_NE(frame.find("\n2-1 "), std::string::npos) << frame;
  EXPECT_NE(frame.find("NPU 0 Chip 0 history"), std::string::npos) << frame;
  EXPECT_EQ(run_command(bin("smi/npu-smi") + " info -t health -i 2 -c 1 --node-name " + node.name()).output.find("Warning") == std::string::npos, false);
}

// Fault texts name the memory and links the chip has: DDR and PCIe on a 310P node, HBM and
// HCCS on a 910B2 node.
TEST(FaultTexts, NameTheChipsMemoryAndLinks) {
  struct Case {
    const char* spec;
    const char* npu_chip;  // -i N -c C of device 2
    const char* memory;
    const char* link;
  };
  for (const Case& c : {Case{"4x310P3", "-i 1 -c 0", "DDR", "PCIe"}, Case{"8x910B2", "-i 2 -c 0", "HBM", "HCCS"}}) {
    ScopedNode node(std::string("texts-") + c.spec, std::string("--spec ") + c.spec);
    ASSERT_EQ(run_command(emud() + " inject --node-name " + node.name() + " --device 2 --fault hbm-double-bit").exit_code, 0);
    std::string want = std::string("uncorrectable ") + c.memory + " ECC error";
    ASSERT_TRUE(eventually([&] {
      return run_command(bin("smi/npu-smi") + " info -t health " + c.npu_chip + " --node-name " + node.name()).output.find(want) !=
             std::string::npos;
    })) << c.spec;
    EXPECT_NE(run_command(bin("smi/npu-smi") + " health --node-name " + node.name()).output.find(want), std::string::npos);
    ASSERT_EQ(run_command(emud() + " clear --node-name " + node.name() + " --device 2").exit_code, 0);
    ASSERT_EQ(run_command(emud() + " inject --node-name " + node.name() + " --device 2 --fault link-down").exit_code, 0);
    std::string link = std::string(c.link) + " link";
    EXPECT_TRUE(eventually([&] {
      return run_command(bin("smi/npu-smi") + " health --node-name " + node.name()).output.find(link) != std::string::npos;
    })) << c.spec << ": " << run_command(bin("smi/npu-smi") + " health --node-name " + node.name()).output;
  }
}

}  // namespace
}  // namespace npukit::testing
