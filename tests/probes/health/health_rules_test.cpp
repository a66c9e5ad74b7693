// The passive health rules over fixture snapshots built with the in-process bus.
#include <gtest/gtest.h>

#include "probes/health/health_rules.hpp"
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

// What the emulator publishes for an incident kind on a device: the health and the code.
void raise(tf::InProcessBus& bus, int device, const std::string& kind, tf::Health health) {
  bus.writer().update_device(device).set(fid::kHealth, static_cast<uint64_t>(health)).set(fid::kErrorCode, uint64_t{tf::incident(kind).code});
}

// A node of `n` single-chip 910B cards in a full HCCS mesh, both directions of each link
// published, everything healthy.
std::shared_ptr<tf::InProcessBus> mesh(const std::string& node, int n) {
  tf::WriterOptions o;
  o.node = node;
  o.node_info.card_count = n;
  for (int d = 0; d < n; ++d) {
    tf::DeviceInfo info;
    info.npu_id = d, info.logic_id = d, info.chip_type = "Ascend910B", info.smi_layout = "hbm";
    o.devices.push_back(info);
  }
  for (int a = 0; a < n; ++a) {
    for (int b = 0; b < n; ++b) {
      if (a != b) o.links.push_back({a, b, "hccs", 56e9});
    }
  }
  auto bus = tf::InProcessBus::create(o);
  EXPECT_TRUE(bus.ok());
  for (int d = 0; d < n; ++d) {
    (*bus)->writer().update_device(d).set(fid::kHealth, uint64_t{0}).set(fid::kErrorCode, uint64_t{0}).set(fid::kTemperatureCelsius, 50.0);
  }
  for (int l = 0; l < n * (n - 1); ++l) {
    (*bus)->writer().update_link(l).set(fid::kLinkUp, uint64_t{1}).set(fid::kLinkRatePercent, 100.0).set(fid::kLinkDownEventsRecent, uint64_t{0});
  }
  return *bus;
}

// Sets both directions of the link a-b.
void set_link(tf::InProcessBus& bus, int n, int a, int b, uint64_t up, double rate, uint64_t flaps) {
  int l = 0;
  for (int x = 0; x < n; ++x) {
    for (int y = 0; y < n; ++y) {
      if (x == y) continue;
      if ((x == a && y == b) || (x == b && y == a)) {
        bus.writer().update_link(l).set(fid::kLinkUp, up).set(fid::kLinkRatePercent, rate).set(fid::kLinkDownEventsRecent, flaps);
      }
      ++l;
    }
  }
}

TEST(HealthRules, AHealthyNodePassesEveryRuleInListOrder) {
  auto bus = bus_with("probe-ok", "Ascend910B");
  auto report = evaluate_node(*bus->client()->snapshot());
  EXPECT_EQ(report.verdict, Verdict::kPass);
  EXPECT_TRUE(report.incidents.empty());
  ASSERT_EQ(report.devices.size(), 2u);
  std::vector<std::string> rules;
  for (const auto& c : report.devices[0].checks) rules.push_back(c.rule);
  EXPECT_EQ(rules, (std::vector<std::string>{"heartbeat", "device_health", "temperature", "throttling", "ecc_errors",
                                             "ecc_isolated_pages", "memory", "links", "aicore", "host", "power"}));
  EXPECT_EQ(health_rules().size(), 11u);
}

// The links check counts physical links: a 4-NPU mesh publishes both directions of each of a
// chip's 3 links, which read "6 link(s) up" (a real 8x910B2 read 16 for its 7 HCCS links and PCIe).
TEST(HealthRules, TheLinksCheckCountsEachLinkOnceNotEachDirection) {
  auto bus = mesh("probe-links", 4);
  auto report = evaluate_node(*bus->client()->snapshot());
  ASSERT_EQ(report.devices.size(), 4u);
  const Check* links = find(report.devices[2], "links");
  ASSERT_NE(links, nullptr);
  EXPECT_EQ(links->reason, "3 link(s) up at full rate");
}

// The device's code decides, the message names the measured value and the chip's limit.
TEST(HealthRules, ATemperatureIncidentWarnsWithTheMeasuredValueAndTheChipsLimit) {
  auto bus = bus_with("probe-hot", "Ascend910B");
  bus->writer().update_device(0).set(fid::kTemperatureCelsius, 86.0);
  raise(*bus, 0, "temperature_high", tf::Health::kWarning);
  bus->writer().update_device(1).set(fid::kTemperatureCelsius, 84.0);
  auto report = evaluate_node(*bus->client()->snapshot());
  const Check* warm = find(report.devices[0], "temperature");
  ASSERT_NE(warm, nullptr);
  EXPECT_EQ(warm->verdict, Verdict::kWarn);
  EXPECT_EQ(warm->reason, "NPU 0 at 86 C, at or above its throttle point 85 C");
  EXPECT_EQ(warm->incident, "temperature_high");
  EXPECT_EQ(warm->code, 0x80E18401u);
  EXPECT_EQ(find(report.devices[1], "temperature")->verdict, Verdict::kPass);
  ASSERT_EQ(report.incidents.size(), 1u);
  EXPECT_EQ(report.verdict, Verdict::kWarn);
  auto p = bus_with("probe-310p", "Ascend310P");
  p->writer().update_device(0).set(fid::kTemperatureCelsius, 91.0);
  raise(*p, 0, "temperature_high", tf::Health::kWarning);
  EXPECT_EQ(node_incidents(*p->client()->snapshot())[0].message, "NPU 0 at 91 C, at or above its throttle point 90 C");
}

TEST(HealthRules, EachCodeLandsOnItsRuleAndInformationalRulesNeverFail) {
  auto bus = bus_with("probe-faults", "Ascend910B");
  bus->writer().update_device(0).set(fid::kEccDoubleBitVolatile, uint64_t{1}).set(fid::kEccSingleBitIsolatedPages, uint64_t{60});
  bus->writer().update_device(0).set(fid::kHealth, uint64_t{2}).set(fid::kErrorCode, uint64_t{tf::incident("ecc_double_bit").code});
  bus->writer().update_device(0).set(fid::kErrorCode2, uint64_t{tf::incident("ecc_isolated_pages").code});
  raise(*bus, 1, "aicore_timeout", tf::Health::kCritical);
  bus->writer().update_device(1).set(fid::kPowerWatts, 400.0).set(fid::kThrottleReasons, tf::kThrottlePowerLimit);
  auto report = evaluate_node(*bus->client()->snapshot());
  const DeviceReport& d0 = report.devices[0];
  const DeviceReport& d1 = report.devices[1];
  EXPECT_EQ(find(d0, "ecc_errors")->verdict, Verdict::kFail);
  EXPECT_EQ(find(d0, "ecc_errors")->reason, "NPU 0 has 1 uncorrectable HBM ECC error(s); reset isolates the page");
  EXPECT_EQ(find(d0, "ecc_isolated_pages")->verdict, Verdict::kWarn);
  EXPECT_EQ(find(d1, "aicore")->verdict, Verdict::kFail);
  EXPECT_EQ(find(d1, "power")->verdict, Verdict::kPass);       // a power cap at work is no fault
  EXPECT_EQ(find(d1, "throttling")->verdict, Verdict::kPass);
  EXPECT_EQ(report.incidents.size(), 3u);
  EXPECT_EQ(report.verdict, Verdict::kFail);
}

// One root cause, one incident: NPU 2 lost all its links; its peers WARN naming it.
TEST(HealthRules, AChipThatLostAllItsLinksIsOneIncidentItsPeersWarnNamingIt) {
  auto bus = mesh("probe-root", 3);
  set_link(*bus, 3, 2, 0, 0, 100, 1);
  set_link(*bus, 3, 2, 1, 0, 100, 1);
  auto report = evaluate_node(*bus->client()->snapshot());
  ASSERT_EQ(report.incidents.size(), 1u);
  EXPECT_EQ(report.incidents[0].kind->kind, "links_down");
  EXPECT_EQ(report.incidents[0].message, "NPU 2 lost all 2 HCCS links");
  EXPECT_EQ(report.incidents[0].peers, (std::vector<int>{0, 1}));
  EXPECT_EQ(find(report.devices[2], "links")->verdict, Verdict::kFail);
  EXPECT_EQ(find(report.devices[0], "links")->verdict, Verdict::kWarn);
  EXPECT_EQ(find(report.devices[0], "links")->reason, "NPU 2 lost all 2 HCCS links");
  EXPECT_EQ(find(report.devices[1], "links")->verdict, Verdict::kWarn);
}

// A down link is one Alarm incident on that link; its endpoints WARN, the other NPUs pass.
TEST(HealthRules, OneDownLinkIsOneIncidentOnTheLinkAndAWarningOnItsEnds) {
  auto bus = mesh("probe-link", 4);
  set_link(*bus, 4, 1, 2, 0, 100, 1);
  auto report = evaluate_node(*bus->client()->snapshot());
  ASSERT_EQ(report.incidents.size(), 1u);
  const Incident& inc = report.incidents[0];
  EXPECT_EQ(inc.kind->kind, "link_down");
  EXPECT_EQ(inc.kind->severity, tf::Health::kAlarm);
  EXPECT_EQ(inc.entity, "HCCS 1-2");
  EXPECT_EQ(inc.message, "HCCS link 1-2 down");
  EXPECT_EQ(report.devices[1].verdict, Verdict::kWarn);
  EXPECT_EQ(report.devices[2].verdict, Verdict::kWarn);
  EXPECT_EQ(report.devices[0].verdict, Verdict::kPass);
  EXPECT_EQ(report.devices[3].verdict, Verdict::kPass);
  EXPECT_EQ(report.verdict, Verdict::kFail);  // the node has a failed link
}

TEST(HealthRules, AFlappingOrDegradedLinkIsAWarningIncidentWithItsFigure) {
  auto bus = mesh("probe-flap", 3);
  set_link(*bus, 3, 0, 1, 1, 100, 3);
  set_link(*bus, 3, 1, 2, 1, 25, 0);
  auto report = evaluate_node(*bus->client()->snapshot());
  ASSERT_EQ(report.incidents.size(), 2u);
  EXPECT_EQ(report.incidents[0].message, "HCCS link 0-1 flapping: 3 down events in the last 60 s");
  EXPECT_EQ(report.incidents[1].message, "HCCS link 1-2 runs at 25% of its line rate");
  EXPECT_EQ(report.verdict, Verdict::kWarn);
  EXPECT_EQ(report.devices[1].verdict, Verdict::kWarn);
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

}  // namespace
}  // namespace npukit::probes
