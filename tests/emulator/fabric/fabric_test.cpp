// The switched scale-up fabric (topology hccs_switch, the 8xA100 what-if node): each device has
// one port into the switch, so a pair's transfer holds the sender's port up and the receiver's
// port down; what one device sends at once shares its port, pairs of different devices do not.
#include "emulator/fabric/fabric.hpp"

#include <gtest/gtest.h>

#include "telemetry/incidents.hpp"
#include "tests/emulator/test_util.hpp"

namespace npukit::emu {
namespace {

TEST(Fabric, ASwitchedNodeSharesEachDevicesPortNotItsPeers) {
  auto spec = load_node_spec("8xA100");
  ASSERT_TRUE(spec.ok()) << spec.status().message();
  EXPECT_EQ(spec->topology, "hccs_switch");
  Fabric fabric(*spec);
  ASSERT_EQ(fabric.path(0, 5).size(), 2u) << "port up of 0, port down of 5";
  EXPECT_EQ(fabric.path(0, 5)[0], fabric.path(0, 6)[0]) << "one up port for every peer";
  EXPECT_EQ(fabric.path(0, 5)[1], fabric.path(3, 5)[1]) << "one down port for every sender";
  EXPECT_EQ(fabric.relation(0, 5), "HCCS");
  const uint64_t bytes = 300'000'000;
  Nanos one = fabric.transfer_time(0, 1, bytes);
  // 300 MB at 300 GB/s x 0.8 is 1.25 ms, plus a port's latency each way.
  EXPECT_NEAR(static_cast<double>(one), 1.25e6 + 2 * 1500, 1e3);
  Nanos a = fabric.reserve(0, 1, bytes, 0);
  Nanos b = fabric.reserve(0, 2, bytes, 0);  // the same sender: queues behind the first
  Nanos c = fabric.reserve(3, 4, bytes, 0);  // another pair: at once
  EXPECT_EQ(a, one);
  EXPECT_EQ(b, 2 * one);
  EXPECT_EQ(c, one);
}

TEST(Fabric, TheSwitchIsAKnownTopologyKind) {
  auto spec = load_node_spec("8x910B2");
  ASSERT_TRUE(spec.ok());
  Fabric mesh(*spec);
  EXPECT_EQ(mesh.path(0, 5).size(), 1u) << "a full mesh: the pair's own link";
}

// Device 1 has two links with no device at the far end: its PCIe link to the host ("1-host") and
// its HCCS port into the switch ("1-switch"). A link fault names one of them and touches only it
// (both used to be "1-host", so a fault on either took both).
TEST(Fabric, ASwitchPortAndAHostLinkAreDifferentLinks) {
  auto node = testing::make_node({.spec = "8xA100", .jitter = 0});
  auto share = [&](LinkKind kind) {
    double s = 1;
    for (const Link& l : node->fabric().links()) {
      if (l.kind == kind && (l.src == 1 || l.dst == 1) && (l.src < 0 || l.dst < 0)) s = std::min(s, l.rate_share);
    }
    return s;
  };
  ASSERT_TRUE(node->inject_link_fault(1, telemetry::kSwitchPort, FaultKind::kLinkDegraded).ok());
  EXPECT_EQ(share(LinkKind::kHccs), 0.25);
  EXPECT_EQ(share(LinkKind::kPcie), 1.0) << "the switch port's fault left the PCIe link alone";
  ASSERT_TRUE(node->clear_link_faults(1, telemetry::kSwitchPort).ok());
  EXPECT_EQ(share(LinkKind::kHccs), 1.0);
  ASSERT_TRUE(node->inject_link_fault(1, -1, FaultKind::kLinkDegraded).ok());
  EXPECT_EQ(share(LinkKind::kPcie), 0.25);
  EXPECT_EQ(share(LinkKind::kHccs), 1.0) << "the host link's fault left the switch port alone";
  auto mesh = testing::make_node({.spec = "8x910B2", .jitter = 0});
  auto none = mesh->inject_link_fault(1, telemetry::kSwitchPort, FaultKind::kLinkDegraded);
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.message().find("no direct link between device 1 and its port into the node's switch"), std::string::npos)
      << none.message();
}

// A device's PCIe link at a quarter of its rate (a link-degraded fault on "1-host", or on a
// PCIe-only node the device's own link-degraded fault) carries its host copies at that rate too:
// they used to run at the spec's PCIe rate whatever the link, so npu-smi diag's PCIe test passed a
// link that health reported at 25%.
TEST(Fabric, ADegradedPcieLinkSlowsTheDevicesHostCopies) {
  auto node = testing::make_node({.spec = "8x910B2", .jitter = 0});
  Context& ctx = testing::make_context(*node, 1, 700);
  StreamId stream = ctx.create_stream();
  const uint64_t bytes = 256ull << 20;
  auto h2d_ns = [&] {
    Nanos start = node->now();
    EXPECT_TRUE(ctx.memcpy_h2d(stream, 0, nullptr, bytes).ok());
    node->run_until_idle();
    return static_cast<double>(node->now() - start);
  };
  const double healthy = h2d_ns();
  ASSERT_TRUE(node->inject_link_fault(1, -1, FaultKind::kLinkDegraded).ok());
  EXPECT_NEAR(h2d_ns() / healthy, 4.0, 0.05);
  ASSERT_TRUE(node->clear_link_faults(1, -1).ok());
  EXPECT_NEAR(h2d_ns() / healthy, 1.0, 0.01);
  ASSERT_TRUE(node->inject_fault(1, FaultKind::kLinkDegraded).ok());  // its HCCS links, not its PCIe
  EXPECT_NEAR(h2d_ns() / healthy, 1.0, 0.01);
}

}  // namespace
}  // namespace npukit::emu
