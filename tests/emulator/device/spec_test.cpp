#include "emulator/device/spec.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace npukit::emu {
namespace {

std::string data(const std::string& rel) { return std::string(NPUKIT_TEST_DATA_DIR) + "/" + rel; }

// Writes `text` to a fresh temp file and returns its path.
std::string temp_json(const std::string& name, const std::string& text) {
  auto dir = std::filesystem::temp_directory_path() / "npukit-spec-test";
  std::filesystem::create_directories(dir);
  auto path = (dir / name).string();
  std::ofstream(path) << text;
  return path;
}

TEST(Spec, EveryShippedNodeLoads) {
  auto names = catalog_node_names();
  ASSERT_EQ(names, (std::vector<std::string>{"4x310P3", "8x910", "8x910B2", "8x910B3", "8xA100"}));
  for (const auto& n : names) {
    auto spec = load_node_spec(n);
    ASSERT_TRUE(spec.ok()) << spec.status().message();
    EXPECT_EQ(spec->name, n);
    EXPECT_EQ(static_cast<int>(spec->bus_ids.size()), spec->device_count());
    EXPECT_FALSE(spec->device_spec.sources.empty());
  }
}

TEST(Spec, Ascend910B2FiguresMatchTheReference) {
  auto spec = load_node_spec("8x910B2");
  ASSERT_TRUE(spec.ok()) << spec.status().message();
  const DeviceSpec& d = spec->device_spec;
  EXPECT_EQ(spec->device_count(), 8);
  EXPECT_EQ(spec->topology, "hccs_full_mesh");
  EXPECT_DOUBLE_EQ(spec->hccs_link_bps, 56e9);
  EXPECT_EQ(d.aicore_count, 24);
  EXPECT_EQ(d.vector_core_count, 48);
  EXPECT_EQ(d.aicore_clock.max_mhz, 1850);
  EXPECT_DOUBLE_EQ(d.cube_peak.fp16, 376e12);
  EXPECT_EQ(d.hbm.capacity_bytes, 65536ull << 20);
  EXPECT_DOUBLE_EQ(d.power.tdp_w, 310);
  EXPECT_EQ(d.smi_layout, "hbm");
}

TEST(Spec, NodeTopologies) {
  auto n910 = load_node_spec("8x910");
  ASSERT_TRUE(n910.ok()) << n910.status().message();
  EXPECT_EQ(n910->topology, "hccs_two_meshes_pcie");
  ASSERT_EQ(n910->hccs_groups.size(), 2u);
  EXPECT_EQ(n910->hccs_groups[1], (std::vector<int>{4, 5, 6, 7}));
  auto n310 = load_node_spec("4x310P3");
  ASSERT_TRUE(n310.ok()) << n310.status().message();
  EXPECT_EQ(n310->device_count(), 8);  // 4 cards x 2 chips
  EXPECT_EQ(n310->device_spec.smi_layout, "classic");
}

TEST(Spec, UnknownNodeNamesTheKnownOnes) {
  auto spec = load_node_spec("9x999");
  ASSERT_FALSE(spec.ok());
  EXPECT_EQ(spec.status().code(), Code::kNotFound);
  EXPECT_EQ(spec.status().message(),
            "spec error: no node spec '9x999' (known: 4x310P3, 8x910, 8x910B2, 8x910B3, 8xA100; a cluster of H "
            "hosts is Hx<node>, e.g. 4x8x910B2)");
}

TEST(Spec, MissingFieldIsNamedWithItsFile) {
  std::string file = data("specs/missing_aicore_count.json");
  auto spec = load_device_spec(file);
  ASSERT_FALSE(spec.ok());
  EXPECT_EQ(spec.status().message(),
            "spec error: " + file + ": field 'aicore.count': missing");
}

TEST(Spec, WrongTypeIsNamed) {
  std::string file = data("specs/string_tdp.json");
  auto spec = load_device_spec(file);
  ASSERT_FALSE(spec.ok());
  EXPECT_EQ(spec.status().message(),
            "spec error: " + file + ": field 'power.tdp_w': expected a number, got string");
}

TEST(Spec, SyntaxErrorGivesLineAndColumn) {
  std::string file = temp_json("broken.json", "{\n  \"name\": \"x\",\n  \"cards\": ,\n}\n");
  auto spec = load_node_spec(file);
  ASSERT_FALSE(spec.ok());
  EXPECT_EQ(spec.status().message().rfind("spec error: " + file + ":3:12: ", 0), 0u)
      << spec.status().message();
}

TEST(Spec, MissingFileSaysSo) {
  auto spec = load_device_spec("/nonexistent/dir/Ascend999.json");
  ASSERT_FALSE(spec.ok());
  EXPECT_EQ(spec.status().message(),
            "spec error: /nonexistent/dir/Ascend999.json: cannot open (No such file or directory)");
}

TEST(Spec, NodeWithBadDeviceReferenceFails) {
  std::string file = temp_json("bad_device.json", R"({
    "name": "2xNope", "device": "AscendNope", "cards": 2,
    "topology": {"kind": "pcie"}, "bus_ids": ["0000:01:00.0", "0000:02:00.0"],
    "sources": {"x": "test"}})");
  auto spec = load_node_spec(file);
  ASSERT_FALSE(spec.ok());
  EXPECT_EQ(spec.status().message().rfind("spec error: no device spec 'AscendNope'", 0), 0u)
      << spec.status().message();
}

TEST(Spec, NodeBusIdsAreChecked) {
  std::string file = temp_json("bad_bus.json", R"({
    "name": "2x910B2", "device": "Ascend910B2", "cards": 2,
    "topology": {"kind": "hccs_full_mesh", "hccs_link_GBps": 56, "hccs_groups": [[0, 1]]},
    "bus_ids": ["0000:01:00.0", "bogus"], "sources": {"x": "test"}})");
  auto spec = load_node_spec(file);
  ASSERT_FALSE(spec.ok());
  EXPECT_EQ(spec.status().message(), "spec error: " + file +
                                         ": field 'bus_ids[1]': expected \"DDDD:BB:DD.F\" (upper-case hex)");
}

}  // namespace
}  // namespace npukit::emu
