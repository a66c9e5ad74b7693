// The switched scale-up fabric (topology hccs_switch, the 8xA100 what-if node): each device has
// one port into the switch, so a pair's transfer holds the sender's port up and the receiver's
// port down; what one device sends at once shares its port, pairs of different devices do not.
#include "emulator/fabric/fabric.hpp"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace npukit::emu
