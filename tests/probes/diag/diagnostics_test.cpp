// The diagnostics levels over in-process buses, and link naming in the health rules.
#include <gtest/gtest.h>

#include "probes/diag/diagnostics.hpp"
#include "telemetry/client.hpp"
#include "tests/probes/diag/chip_fixture.hpp"

namespace npukit::probes {
namespace {

namespace tf = telemetry;
namespace fid = telemetry::fid;

// Two chips joined by two parallel HCCS links (as the 8x910B2 mesh publishes them).
std::shared_ptr<tf::InProcessBus> two_chips(const std::string& node, const std::string& spec) {
  tf::WriterOptions o;
  o.node = node;
  o.node_info.node_spec = spec;
  for (int d = 0; d < 2; ++d) o.devices.push_back(testing::chip_info(d));
  o.links = {{0, 1, "hccs", 56e9}, {1, 0, "hccs", 56e9}};
  auto bus = tf::InProcessBus::create(o);
  EXPECT_TRUE(bus.ok());
  for (int d = 0; d < 2; ++d) {
    (*bus)->writer().update_device(d).set(fid::kHealth, uint64_t{0}).set(fid::kHbmTotalBytes, uint64_t{1} << 36)
        .set(fid::kAicoreClockMaxMhz, uint64_t{1800});
  }
  for (int l = 0; l < 2; ++l) (*bus)->writer().update_link(l).set(fid::kLinkUp, uint64_t{0});
  return *bus;
}

TEST(Diagnostics, Level1ListsDeploymentThenHardwareTests) {
  std::vector<std::string> names;
  for (const DiagTest* t : diag_tests(1)) names.push_back(std::string(t->name));
  EXPECT_EQ(names, (std::vector<std::string>{"Node Reachable", "Device Count", "Device Specs", "Processes", "Health Rules"}));
}

// Both directions of the one link between two chips: one link incident, both ends warned, and
// the link itself (an Alarm, as npu-smi health's node verdict counts it) fails the test.
TEST(Diagnostics, ParallelDownLinksAreNamedOnceAndWarnBothEnds) {
  auto bus = two_chips("diag-links", "2x910B2");
  auto s = *bus->client()->snapshot();
  DiagReport r = run_diag(s, 1);
  const DiagTestResult& health = r.tests.back();
  ASSERT_EQ(health.devices.size(), 3u);  // the node's line first, then the chips
  EXPECT_EQ(health.devices[0].device, -1);
  EXPECT_EQ(health.devices[0].verdict, Verdict::kFail);
  EXPECT_EQ(health.devices[0].reasons, (std::vector<std::string>{"HCCS link 0-1 down"}));
  for (int d = 0; d < 2; ++d) {
    const DiagDeviceResult& chip = health.devices[static_cast<std::size_t>(d) + 1];
    EXPECT_EQ(chip.device, d);
    EXPECT_EQ(chip.verdict, Verdict::kWarn);
    ASSERT_EQ(chip.reasons.size(), 1u);
    EXPECT_EQ(chip.reasons[0], "links: HCCS link 0-1 down");
  }
  EXPECT_EQ(health.verdict, evaluate_node(s).verdict);
}

TEST(Diagnostics, SelectedDevicesOnlyAndNodeWideTestsOnce) {
  auto bus = two_chips("diag-select", "2x910B2");
  auto s = *bus->client()->snapshot();
  std::vector<int> one{1};
  DiagReport r = run_diag(s, 1, one);
  for (const DiagTestResult& t : r.tests) {
    // The chip's line, and at most the node's (Health Rules: the down link device 1 touches).
    int chips = 0, nodes = 0;
    for (const DiagDeviceResult& d : t.devices) {
      chips += d.device == 1;
      nodes += d.device == -1;
      EXPECT_TRUE(d.device == 1 || d.device == -1) << t.name;
    }
    EXPECT_EQ(chips, t.per_device ? 1 : 0) << t.name;
    EXPECT_EQ(nodes, t.per_device ? (t.name == std::string_view("Health Rules") ? 1 : 0) : 1) << t.name;
  }
}

TEST(Diagnostics, ASpecWithoutAChipCountWarns) {
  auto bus = two_chips("diag-nospec", "custom");
  auto s = *bus->client()->snapshot();
  DiagReport r = run_diag(s, 1);
  EXPECT_EQ(r.tests[1].name, "Device Count");
  EXPECT_EQ(r.tests[1].verdict, Verdict::kWarn);
}

}  // namespace
}  // namespace npukit::probes
