// The passive health rules over fixture snapshots built with the in-process bus.
#include <gtest/gtest.h>

#include "probes/error_codes.hpp"
#include "probes/health_rules.hpp"
#include "telemetry/client.hpp"

namespace npukit::probes {
namespace {

namespace tf = telemetry;
namespace fid = telemetry::fid;

std::shared_ptr<tf::InProcessBus> bus_with(const std::string& node, const std::string& chip_type) {
  tf::WriterOptions o;
  o.node = node;
  o.node_info.card_count = 2;
  for (int d = 0; d < 2; ++d) {
    tf::DeviceInfo info;
    info.npu_id = d;
    info.logic_id = d;
    info.chip_type = chip_type;
    info.smi_layout = chip_type == "Ascend310P" ? "classic" : "hbm";
    o.devices.push_back(info);
  }
  o.links.push_back({0, 1, "hccs", 56e9});
  auto bus = tf::InProcessBus::create(o);
  EXPECT_TRUE(bus.ok());
  for (int d = 0; d < 2; ++d) {
    auto u = (*bus)->writer().update_device(d);
    u.set(fid::kHealth, uint64_t{0}).set(fid::kErrorCode, uint64_t{0}).set(fid::kTemperatureCelsius, 50.0);
    u.set(fid::kThrottleReasons, uint64_t{0}).set(fid::kEccSingleBitVolatile, uint64_t{0});
    u.set(fid::kEccDoubleBitVolatile, uint64_t{0}).set(fid::kEccSingleBitIsolatedPages, uint64_t{0});
    u.set(fid::kEccDoubleBitIsolatedPages, uint64_t{0}).set(fid::kPowerWatts, 90.0).set(fid::kPowerLimitWatts, 310.0);
    u.set(fid::kHbmTotalBytes, uint64_t{64} << 30).set(fid::kHbmTemperatureCelsius, 45.0);
  }
  (*bus)->writer().update_link(0).set(fid::kLinkUp, uint64_t{1});
  return *bus;
}

const Check* find(const DeviceReport& r, const std::string& rule) {
  for (const auto& c : r.checks) {
    if (c.rule == rule) return &c;
  }
  return nullptr;
}

TEST(HealthRules, AHealthyNodePassesEveryRuleInListOrder) {
  auto bus = bus_with("probe-ok", "Ascend910B");
  auto report = evaluate_node(*bus->client()->snapshot());
  EXPECT_EQ(report.verdict, Verdict::kPass);
  ASSERT_EQ(report.devices.size(), 2u);
  std::vector<std::string> rules;
  for (const auto& c : report.devices[0].checks) rules.push_back(c.rule);
  EXPECT_EQ(rules, (std::vector<std::string>{"heartbeat", "device_health", "temperature", "throttling", "ecc_errors",
                                             "ecc_isolated_pages", "memory", "links", "aicore_hang", "power"}));
  EXPECT_EQ(health_rules().size(), 10u);
}

TEST(HealthRules, TemperatureIsJudgedAgainstTheChipsThrottlePoint) {
  auto bus = bus_with("probe-hot", "Ascend910B");
  bus->writer().update_device(0).set(fid::kTemperatureCelsius, 86.0);
  bus->writer().update_device(1).set(fid::kTemperatureCelsius, 101.0);
  auto s = *bus->client()->snapshot();
  DeviceReport r0 = evaluate_device(s, 0), r1 = evaluate_device(s, 1);
  const Check* warm = find(r0, "temperature");
  ASSERT_NE(warm, nullptr);
  EXPECT_EQ(warm->verdict, Verdict::kWarn);
  EXPECT_EQ(*warm->threshold, 85.0);
  EXPECT_EQ(warm->reason, "chip temperature 86 C is at or above the throttle point 85 C");
  EXPECT_EQ(find(r1, "temperature")->verdict, Verdict::kFail);
  auto p = bus_with("probe-310p", "Ascend310P");
  p->writer().update_device(0).set(fid::kTemperatureCelsius, 86.0);
  DeviceReport cool = evaluate_device(*p->client()->snapshot(), 0);
  EXPECT_EQ(find(cool, "temperature")->verdict, Verdict::kPass);  // 310P throttles at 90
}

TEST(HealthRules, EccLinksHangAndPowerEachFlipTheirRule) {
  auto bus = bus_with("probe-faults", "Ascend910B");
  bus->writer().update_device(0).set(fid::kEccDoubleBitVolatile, uint64_t{1}).set(fid::kEccSingleBitIsolatedPages, uint64_t{60});
  bus->writer().update_device(1).set(fid::kErrorCode, uint64_t{kErrorAicoreTimeout}).set(fid::kPowerWatts, 400.0);
  bus->writer().update_link(0).set(fid::kLinkUp, uint64_t{0});
  auto s = *bus->client()->snapshot();
  DeviceReport d0 = evaluate_device(s, 0), d1 = evaluate_device(s, 1);
  EXPECT_EQ(find(d0, "ecc_errors")->verdict, Verdict::kFail);
  EXPECT_EQ(find(d0, "ecc_isolated_pages")->verdict, Verdict::kWarn);
  EXPECT_EQ(find(d0, "links")->reason, "link(s) down: hccs 0<->1");
  EXPECT_EQ(find(d1, "aicore_hang")->verdict, Verdict::kFail);
  EXPECT_EQ(find(d1, "power")->verdict, Verdict::kWarn);
  EXPECT_EQ(evaluate_node(s).verdict, Verdict::kFail);
}

// One root cause, one failing chip: NPU 2 lost all its links; its peers still have a link up
// between them, so they WARN and name NPU 2 rather than FAIL.
TEST(HealthRules, AChipThatLostAllItsLinksFailsAndItsPeersWarnNamingIt) {
  tf::WriterOptions o;
  o.node = "probe-root";
  o.node_info.card_count = 3;
  for (int d = 0; d < 3; ++d) {
    tf::DeviceInfo info;
    info.npu_id = d, info.logic_id = d, info.chip_type = "Ascend910B", info.smi_layout = "hbm";
    o.devices.push_back(info);
  }
  o.links = {{0, 1, "hccs", 56e9}, {0, 2, "hccs", 56e9}, {1, 2, "hccs", 56e9}};
  auto bus = tf::InProcessBus::create(o);
  ASSERT_TRUE(bus.ok());
  for (int d = 0; d < 3; ++d) {
    auto u = (*bus)->writer().update_device(d);
    u.set(fid::kHealth, uint64_t{0}).set(fid::kErrorCode, uint64_t{0}).set(fid::kTemperatureCelsius, 50.0);
  }
  for (int l = 0; l < 3; ++l) (*bus)->writer().update_link(l).set(fid::kLinkUp, uint64_t{l == 0 ? 1u : 0u});
  auto s = *(*bus)->client()->snapshot();
  DeviceReport d0 = evaluate_device(s, 0), d1 = evaluate_device(s, 1), d2 = evaluate_device(s, 2);
  ASSERT_NE(find(d0, "links"), nullptr);
  ASSERT_NE(find(d2, "links"), nullptr);
  EXPECT_EQ(find(d2, "links")->verdict, Verdict::kFail);
  EXPECT_EQ(find(d2, "links")->reason, "link(s) down: hccs 2<->0, hccs 2<->1");
  EXPECT_EQ(find(d0, "links")->verdict, Verdict::kWarn);
  EXPECT_EQ(find(d0, "links")->reason, "link(s) down: hccs 0<->2 (NPU 2 lost all its links)");
  EXPECT_EQ(find(d1, "links")->verdict, Verdict::kWarn);
}

TEST(HealthRules, AStaleNodeIsUnknownAndNothingElseIsJudged) {
  auto bus = bus_with("probe-stale", "Ascend910B");
  bus->close();
  auto report = evaluate_node(*bus->client()->snapshot());
  EXPECT_EQ(report.verdict, Verdict::kUnknown);
  EXPECT_TRUE(report.stale);
  ASSERT_EQ(report.devices[0].checks.size(), 1u);
  EXPECT_EQ(report.devices[0].checks[0].rule, "heartbeat");
  EXPECT_EQ(worst(Verdict::kUnknown, Verdict::kFail), Verdict::kFail);
  EXPECT_EQ(worst(Verdict::kWarn, Verdict::kUnknown), Verdict::kUnknown);
}

TEST(ErrorCodes, TheCatalogKnowsEveryEmulatedCode) {
  EXPECT_EQ(find_error_code(kErrorEccDoubleBit)->severity, tf::Health::kAlarm);
  EXPECT_EQ(find_error_code(0x12345678), nullptr);
  EXPECT_EQ(error_codes().size(), 8u);
}

}  // namespace
}  // namespace npukit::probes
