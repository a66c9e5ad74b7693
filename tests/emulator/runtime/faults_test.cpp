// Each injectable fault moves health and the error code as documented (docs/faults.md), and
// clear/reset return the device to OK.
#include "emulator/device/health.hpp"

#include <gtest/gtest.h>

#include "tests/emulator/test_util.hpp"

namespace npukit::emu {
namespace {

using testing::fp16;
using testing::make_context;
using testing::make_node;

constexpr Nanos kSecond = 1'000'000'000;

void keep_busy(Node& node, Context& ctx, StreamId s, int seconds) {
  auto mm = ctx.prepare("matmul", {fp16({4096, 4096}), fp16({4096, 4096})});
  ASSERT_TRUE(mm.ok());
  for (int i = 0; i < seconds; ++i) {
    while (node.engine().stream_depth(s) < 4000) ASSERT_TRUE(ctx.enqueue(s, *mm).ok());
    node.scheduler().run_until(node.now() + kSecond);
  }
}

TEST(Faults, NamesParse) {
  for (FaultKind k : all_faults()) EXPECT_EQ(*parse_fault(fault_name(k)), k);
  EXPECT_EQ(parse_fault("fan-stuck").status().message(),
            "unknown fault 'fan-stuck' (expected one of: over-temperature, hbm-double-bit, ecc-storm, "
            "aicore-hang, link-down, device-lost, aicore-degraded, link-degraded, link-flapping, host-slow, host-down)");
}

TEST(Faults, OverTemperatureWarnsUnderLoadAndClears) {
  auto node = make_node({.seed = 1});
  Context& ctx = make_context(*node, 2);
  StreamId s = ctx.create_stream();
  ASSERT_TRUE(node->inject_fault(2, FaultKind::kOverTemperature).ok());
  keep_busy(*node, ctx, s, 60);
  const Device& d = node->device(2);
  EXPECT_EQ(d.health_state(), Health::kWarning);
  EXPECT_EQ(d.health().error_code(d.sensors().temperature_c, d.thermal_limits()), telemetry::incident("temperature_high").code);
  EXPECT_TRUE(d.sensors().throttle_reasons & throttle_reason::kThermal);
  // DVFS holds the throttle point with the failing fan, at a clock above the minimum (it used
  // to walk to 800 MHz while the chip kept heating to 96.6 C).
  EXPECT_NEAR(d.sensors().temperature_c, 85.5, 1.0);
  EXPECT_GT(d.clock_mhz(), 800);
  EXPECT_LT(d.clock_mhz(), 1850);
  EXPECT_EQ(node->device(3).health_state(), Health::kOk);  // only the faulty device
  ASSERT_TRUE(ctx.synchronize_stream(s).ok());
  ASSERT_TRUE(node->clear_faults(2).ok());
  node->scheduler().run_until(node->now() + 120 * kSecond);
  EXPECT_EQ(d.health_state(), Health::kOk);
  EXPECT_EQ(d.clock_mhz(), 1850);
}

// The page counts as isolated only once a reset has isolated it: npu-smi -t ecc said 1 isolated
// page at once while diag and health said the isolation was pending a reset.
TEST(Faults, HbmDoubleBitRaisesAnAlarmAndAResetIsolatesItsPage) {
  auto node = make_node();
  ASSERT_TRUE(node->inject_fault(1, FaultKind::kHbmDoubleBit).ok());
  const Device& d = node->device(1);
  EXPECT_EQ(d.health_state(), Health::kAlarm);
  EXPECT_EQ(d.health().error_code(d.sensors().temperature_c, d.thermal_limits()), telemetry::incident("ecc_double_bit").code);
  EXPECT_EQ(d.health().ecc().double_bit_volatile, 1u);
  EXPECT_EQ(d.health().ecc().isolated_pages_double, 0u);
  ASSERT_TRUE(node->clear_faults(1).ok());
  EXPECT_EQ(d.health_state(), Health::kOk);
  EXPECT_EQ(d.health().ecc().double_bit_aggregate, 1u);  // history survives a clear
  EXPECT_EQ(d.health().ecc().isolated_pages_double, 0u);  // the page is still pending
  ASSERT_TRUE(node->reset_device(1).ok());
  EXPECT_EQ(d.health().ecc().isolated_pages_double, 1u);
  EXPECT_EQ(d.health().retired_pages().size(), 1u);
  ASSERT_TRUE(node->reset_device(1).ok());
  EXPECT_EQ(d.health().ecc().isolated_pages_double, 1u);  // a page is isolated once
}

TEST(Faults, EccStormWarnsOnceErrorsPileUp) {
  auto node = make_node();
  ASSERT_TRUE(node->inject_fault(0, FaultKind::kEccStorm).ok());
  node->scheduler().run_until(node->now() + kSecond);
  const Device& d = node->device(0);
  EXPECT_NEAR(static_cast<double>(d.health().ecc().single_bit_volatile), 2000, 25);
  EXPECT_EQ(d.health_state(), Health::kWarning);
  EXPECT_EQ(d.health().error_code(d.sensors().temperature_c, d.thermal_limits()), telemetry::incident("ecc_single_bit_storm").code);
  ASSERT_TRUE(node->clear_faults(0).ok());
  node->scheduler().run_until(node->now() + kSecond);
  EXPECT_EQ(d.health().ecc().single_bit_volatile, 0u);
  EXPECT_EQ(d.health_state(), Health::kOk);
  EXPECT_GE(d.health().ecc().single_bit_aggregate, 1975u);
}

TEST(Faults, AicoreHangTimesOutTasksAndNeedsAReset) {
  auto node = make_node();
  Context& ctx = make_context(*node);
  StreamId s = ctx.create_stream();
  auto mm = ctx.prepare("matmul", {fp16({1024, 1024}), fp16({1024, 1024})});
  ASSERT_TRUE(mm.ok());
  ASSERT_TRUE(node->inject_fault(0, FaultKind::kAicoreHang).ok());
  ASSERT_TRUE(ctx.enqueue(s, *mm).ok());
  Nanos before = node->now();
  Status st = ctx.synchronize_stream(s);
  EXPECT_EQ(st.message(), "AI Core task timeout: task 0 (MatMulV2) on device 0 did not finish within "
                          "2000 ms (error code 0x80CB8009)");
  // The task reached the device when its launch call returned, then hung for the timeout.
  EXPECT_EQ(node->now() - before, node->device(0).spec().runtime.kernel_launch_ns + 2 * kSecond);
  const Device& d = node->device(0);
  EXPECT_EQ(d.health_state(), Health::kCritical);
  EXPECT_EQ(d.health().error_code(d.sensors().temperature_c, d.thermal_limits()), telemetry::incident("aicore_timeout").code);
  ASSERT_TRUE(node->clear_faults(0).ok());
  EXPECT_EQ(d.health_state(), Health::kCritical);  // clear is not enough
  ASSERT_TRUE(node->reset_device(0).ok());
  EXPECT_EQ(d.health_state(), Health::kOk);
  ASSERT_TRUE(ctx.enqueue(s, *mm).ok());
  EXPECT_TRUE(ctx.synchronize_stream(s).ok());
}

TEST(Faults, DeviceLostReadsUnknownAndFailsWork) {
  auto node = make_node();
  Context& ctx = make_context(*node, 5);
  StreamId s = ctx.create_stream();
  ASSERT_TRUE(node->inject_fault(5, FaultKind::kDeviceLost).ok());
  const Device& d = node->device(5);
  EXPECT_EQ(d.health_state(), Health::kUnknown);
  EXPECT_EQ(d.health().error_code(d.sensors().temperature_c, d.thermal_limits()), telemetry::incident("device_lost").code);
  ASSERT_TRUE(ctx.memcpy_h2d(s, 0, nullptr, 4096).ok());
  EXPECT_EQ(ctx.synchronize_stream(s).message(), "device 5 lost (error code 0xFFFFFFFF)");
  node->scheduler().run_until(node->now() + kSecond);
  EXPECT_DOUBLE_EQ(d.sensors().power_w, 0.0);
  ASSERT_TRUE(node->reset_device(5).ok());
  EXPECT_EQ(d.health_state(), Health::kOk);
  ASSERT_TRUE(ctx.memcpy_h2d(s, 0, nullptr, 4096).ok());
  EXPECT_TRUE(ctx.synchronize_stream(s).ok());
}

// A device lost while its kernels run gets their AI cores back when they end: it kept them, so a
// host that went down mid-job and was cleared (or a lost device reset) never ran a kernel again.
TEST(Faults, ADeviceLostMidKernelGetsItsCoresBack) {
  for (FaultKind fault : {FaultKind::kDeviceLost, FaultKind::kHostDown}) {
    auto node = make_node();
    Context& ctx = make_context(*node, 5);
    StreamId s = ctx.create_stream();
    auto mm = ctx.prepare("matmul", {fp16({4096, 4096}), fp16({4096, 4096})});
    ASSERT_TRUE(mm.ok());
    ASSERT_TRUE(ctx.enqueue(s, *mm).ok());
    node->scheduler().run_until(node->now() + 200'000);  // the kernel (about 1 ms) holds its cores
    const int cores = node->device(5).spec().aicore_count;
    ASSERT_LT(node->device(5).free_aicores(), cores);
    ASSERT_TRUE(node->inject_fault(5, fault).ok());
    (void)ctx.synchronize_stream(s);
    node->scheduler().run_until(node->now() + kSecond);
    ASSERT_TRUE(node->clear_faults(5).ok());
    ASSERT_TRUE(node->reset_device(5).ok());
    EXPECT_EQ(node->device(5).free_aicores(), cores) << fault_name(fault);
    ASSERT_TRUE(ctx.enqueue(s, *mm).ok());
    node->scheduler().run_until(node->now() + kSecond);
    EXPECT_TRUE(node->engine().stream_idle(s)) << fault_name(fault) << ": the next kernel never started";
  }
}

TEST(Faults, LinkDownRaisesAnAlarmUntilCleared) {
  auto node = make_node();
  ASSERT_TRUE(node->inject_fault(3, FaultKind::kLinkDown).ok());
  const Device& d = node->device(3);
  EXPECT_EQ(d.health_state(), Health::kAlarm);
  EXPECT_EQ(d.health().error_code(d.sensors().temperature_c, d.thermal_limits()), telemetry::incident("links_down").code);
  EXPECT_GE(node->fabric().down_link_on(2, 3), 0);
  EXPECT_GE(node->fabric().down_link_on(3, 7), 0);
  EXPECT_EQ(node->fabric().down_link_on(2, 4), -1);
  ASSERT_TRUE(node->clear_faults(3).ok());
  EXPECT_EQ(d.health_state(), Health::kOk);
  EXPECT_EQ(node->fabric().down_link_on(2, 3), -1);
}

// A device's link-down is one root cause: the device Alarms, each peer (a link to it is down) Warns
// with the device's code.
TEST(Faults, ADevicesLinkDownAlarmsItAndWarnsItsPeersWithItsCode) {
  auto node = make_node();
  ASSERT_TRUE(node->inject_fault(0, FaultKind::kLinkDown).ok());
  for (int p = 1; p < 8; ++p) {
    const Device& d = node->device(p);
    EXPECT_EQ(d.health_state(), Health::kWarning) << p;
    EXPECT_EQ(d.health().error_code(20, d.thermal_limits()), telemetry::incident("links_down").code) << p;
  }
  EXPECT_EQ(node->device(0).health_state(), Health::kAlarm);
}

// One link: its two ends Warn with the link's code, the other devices stay OK, traffic across
// it fails, and clearing the link (or either end) lifts it.
TEST(Faults, OneLinkDownWarnsItsTwoEndsOnlyUntilCleared) {
  auto node = make_node();
  ASSERT_TRUE(node->inject_link_fault(2, 3, FaultKind::kLinkDown).ok());
  uint32_t code = telemetry::incident("link_down").code;
  for (int d = 0; d < 8; ++d) {
    const Device& dev = node->device(d);
    bool end = d == 2 || d == 3;
    EXPECT_EQ(dev.health_state(), end ? Health::kWarning : Health::kOk) << d;
    if (end) {
      EXPECT_EQ(dev.health().error_code(20, dev.thermal_limits()), code);
    }
  }
  EXPECT_GE(node->fabric().down_link_on(2, 3), 0);
  EXPECT_GE(node->fabric().down_link_on(3, 2), 0);
  EXPECT_EQ(node->fabric().down_link_on(2, 4), -1);
  ASSERT_EQ(node->active_faults().size(), 1u);
  EXPECT_TRUE(node->active_faults()[0].link);
  EXPECT_EQ(node->active_faults()[0].peer, 3);
  ASSERT_TRUE(node->clear_link_faults(3, 2).ok());
  EXPECT_EQ(node->device(2).health_state(), Health::kOk);
  EXPECT_EQ(node->fabric().down_link_on(2, 3), -1);
  ASSERT_TRUE(node->inject_link_fault(2, 3, FaultKind::kLinkDegraded).ok());
  EXPECT_EQ(node->device(3).health().error_code(20, node->device(3).thermal_limits()), telemetry::incident("link_degraded").code);
  ASSERT_TRUE(node->clear_faults(2).ok());
  EXPECT_TRUE(node->active_faults().empty());
  EXPECT_EQ(node->device(3).health_state(), Health::kOk);
}

TEST(Faults, AFlappingLinkGoesDownEverySecondAndIsCalledFlapping) {
  auto node = make_node();
  ASSERT_TRUE(node->inject_link_fault(4, 5, FaultKind::kLinkFlapping).ok());
  int downs = 0;
  bool was_up = true;
  for (int ms = 0; ms < 3000; ms += 20) {
    node->scheduler().run_until(node->now() + 20'000'000);
    bool up = node->fabric().down_link_on(4, 5) < 0;
    downs += was_up && !up;
    was_up = up;
  }
  EXPECT_GE(downs, 2);
  EXPECT_LE(downs, 4);
  EXPECT_EQ(node->device(4).health().error_code(20, node->device(4).thermal_limits()), telemetry::incident("link_flapping").code);
  EXPECT_EQ(node->device(5).health_state(), Health::kWarning);
  EXPECT_EQ(node->device(6).health_state(), Health::kOk);
  ASSERT_TRUE(node->clear_link_faults(4, 5).ok());
  node->scheduler().run_until(node->now() + 2'000'000'000);
  EXPECT_EQ(node->fabric().down_link_on(4, 5), -1);
  EXPECT_EQ(node->device(4).health_state(), Health::kOk);
}

TEST(Faults, LinkFaultsNameARealLinkAndALinkKind) {
  auto node = make_node();
  EXPECT_EQ(node->inject_link_fault(2, 2, FaultKind::kLinkDown).message(), "a link joins two different devices, got 2-2");
  EXPECT_EQ(node->inject_link_fault(2, 9, FaultKind::kLinkDown).message(), "invalid device id 9 (this node has devices 0-7)");
  EXPECT_EQ(node->inject_link_fault(2, 3, FaultKind::kEccStorm).message(),
            "a link takes link-down, link-degraded or link-flapping, not ecc-storm");
  EXPECT_EQ(node->inject_fault(2, FaultKind::kLinkFlapping).message(),
            "link-flapping acts on one link: give the link (npu-emud inject --link A-B)");
}

// The time one matmul takes on `device`, from enqueue to completion (launch included).
Nanos matmul_time(Node& node, int device) {
  Context& ctx = make_context(node, device);
  StreamId s = ctx.create_stream();
  auto mm = ctx.prepare("matmul", {fp16({4096, 4096}), fp16({4096, 4096})});
  EXPECT_TRUE(mm.ok());
  Nanos before = node.now();
  EXPECT_TRUE(ctx.enqueue(s, *mm).ok());
  EXPECT_TRUE(ctx.synchronize_stream(s).ok());
  return node.now() - before;
}

// Isolated AI Cores: a Warning (the part reports fewer cores) and every AI Core kernel slower.
TEST(Faults, AicoreDegradedWarnsAndSlowsAiCoreKernelsUntilCleared) {
  auto node = make_node();
  Nanos healthy = matmul_time(*node, 1);
  ASSERT_TRUE(node->inject_fault(1, FaultKind::kAicoreDegraded).ok());
  EXPECT_EQ(node->device(1).health_state(), Health::kWarning);
  EXPECT_EQ(node->device(1).health().error_code(20, node->device(1).thermal_limits()), telemetry::incident("aicore_degraded").code);
  Nanos launch = node->device(1).spec().runtime.kernel_launch_ns;
  Nanos degraded = matmul_time(*node, 1);
  EXPECT_NEAR(static_cast<double>(degraded - launch) / static_cast<double>(healthy - launch), 4.0 / 3.0, 0.01);
  ASSERT_TRUE(node->clear_faults(1).ok());
  EXPECT_NEAR(static_cast<double>(matmul_time(*node, 1)) / static_cast<double>(healthy), 1.0, 0.01);
}

// All of a device's links retrained slow: one Warning on it (links_degraded), its peers touched.
TEST(Faults, LinkDegradedQuartersTheDevicesLinksAndWarnsUntilCleared) {
  auto node = make_node();
  Nanos healthy = node->fabric().transfer_time(2, 3, 64 << 20);
  ASSERT_TRUE(node->inject_fault(3, FaultKind::kLinkDegraded).ok());
  EXPECT_EQ(node->device(3).health_state(), Health::kWarning);
  EXPECT_EQ(node->device(3).health().error_code(20, node->device(3).thermal_limits()), telemetry::incident("links_degraded").code);
  EXPECT_EQ(node->device(2).health_state(), Health::kWarning);  // a peer, touched
  EXPECT_EQ(node->fabric().down_link_on(2, 3), -1);  // up, only slower
  EXPECT_NEAR(static_cast<double>(node->fabric().transfer_time(2, 3, 64 << 20)) / static_cast<double>(healthy), 4.0, 0.05);
  EXPECT_NEAR(static_cast<double>(node->fabric().transfer_time(3, 2, 64 << 20)) / static_cast<double>(healthy), 4.0, 0.05);
  EXPECT_EQ(node->fabric().transfer_time(2, 4, 64 << 20), healthy);  // links without device 3 keep their rate
  ASSERT_TRUE(node->clear_faults(3).ok());
  EXPECT_EQ(node->fabric().transfer_time(2, 3, 64 << 20), healthy);
  EXPECT_EQ(node->device(2).health_state(), Health::kOk);
}

TEST(Faults, APowerLimitOnTheTimelineCapsTheDeviceAtItsTime) {
  auto node = make_node();
  FaultEvent cap{.at = node->now() + 5'000'000, .device = 2, .action = FaultEvent::Action::kPowerLimit, .watts = 250};
  ASSERT_TRUE(node->schedule_faults({cap}).ok());
  double before = node->device(2).sensors().power_limit_w;
  node->scheduler().run_until(node->now() + 4'000'000);
  EXPECT_EQ(node->device(2).sensors().power_limit_w, before);
  node->scheduler().run_until(node->now() + 2'000'000);
  EXPECT_EQ(node->device(2).sensors().power_limit_w, 250);
  cap.watts = 1000;  // above the 910B2's 310 W TDP
  EXPECT_EQ(node->schedule_faults({cap}).message(), "faults[0]: power limit 1000 W is out of range [132, 310] for device 2 (at its lowest clock, 800 MHz, the chip draws up to 132 W)");
}

TEST(Faults, AJobsTimelineFaultsEndWithTheJobExceptPersistentOnes) {
  auto node = make_node();
  ASSERT_TRUE(node->inject_fault(5, FaultKind::kEccStorm).ok());  // by hand: stays
  const std::string job = "job 7 'scenario'";
  Nanos t0 = node->now();
  double tdp = node->device(1).sensors().power_limit_w;
  std::vector<FaultEvent> timeline = {
      {.at = t0 + 1'000'000, .device = 1, .kind = FaultKind::kOverTemperature, .source = job},
      {.at = t0 + 1'000'000, .device = 2, .kind = FaultKind::kHbmDoubleBit, .source = job},
      {.at = t0 + 1'000'000, .device = 3, .kind = FaultKind::kLinkDegraded, .source = job},
      {.at = t0 + 1'000'000, .device = 1, .action = FaultEvent::Action::kPowerLimit, .watts = 200, .source = job},
      {.at = t0 + 50'000'000, .device = 4, .kind = FaultKind::kAicoreHang, .source = job}};  // after the job ends
  ASSERT_TRUE(node->schedule_faults(timeline).ok());
  node->scheduler().run_until(t0 + 2'000'000);
  auto active = node->active_faults();
  ASSERT_EQ(active.size(), 4u);
  EXPECT_EQ(active[0].device, 1);
  EXPECT_EQ(active[0].source, job);
  EXPECT_EQ(active[0].since, t0 + 1'000'000);
  EXPECT_EQ(active[3].source, "control");
  EXPECT_EQ(node->device(1).sensors().power_limit_w, 200);
  Nanos slow = node->fabric().transfer_time(2, 3, 64 << 20);

  node->end_faults_of(job);
  active = node->active_faults();
  ASSERT_EQ(active.size(), 2u);  // the bad HBM page outlives the job; the hand-made storm stays
  EXPECT_EQ(active[0].kind, FaultKind::kHbmDoubleBit);
  EXPECT_EQ(active[1].kind, FaultKind::kEccStorm);
  EXPECT_FALSE(node->device(1).health().active(FaultKind::kOverTemperature));
  EXPECT_EQ(node->device(1).sensors().power_limit_w, tdp);
  EXPECT_LT(node->fabric().transfer_time(2, 3, 64 << 20), slow);
  node->scheduler().run_until(t0 + 60'000'000);
  EXPECT_FALSE(node->device(4).health().hung());  // its timeline ended with it
  ASSERT_TRUE(node->clear_faults(2).ok());
  EXPECT_EQ(node->active_faults().size(), 1u);
}

// A timeline's link fault acts on that link and ends with its job.
TEST(Faults, ATimelinesLinkFaultEndsWithItsJob) {
  auto node = make_node();
  const std::string job = "job 8 'links'";
  Nanos t0 = node->now();
  ASSERT_TRUE(node->schedule_faults({{.at = t0 + 1'000'000, .device = 2, .kind = FaultKind::kLinkDown, .source = job, .peer = 5}}).ok());
  node->scheduler().run_until(t0 + 2'000'000);
  EXPECT_GE(node->fabric().down_link_on(5, 2), 0);
  EXPECT_EQ(node->device(5).health_state(), Health::kWarning);
  node->end_faults_of(job);
  EXPECT_EQ(node->fabric().down_link_on(5, 2), -1);
  EXPECT_EQ(node->device(5).health_state(), Health::kOk);
  EXPECT_TRUE(node->active_faults().empty());
  EXPECT_EQ(node->schedule_faults({{.at = t0, .device = 2, .kind = FaultKind::kEccStorm, .peer = 5}}).message(),
            "faults[0]: a link takes link-down, link-degraded or link-flapping, not ecc-storm");
}

TEST(Faults, TheWorstAlarmWins) {
  auto node = make_node();
  ASSERT_TRUE(node->inject_fault(0, FaultKind::kEccStorm).ok());
  node->scheduler().run_until(kSecond);
  ASSERT_TRUE(node->inject_fault(0, FaultKind::kHbmDoubleBit).ok());
  const Device& d = node->device(0);
  auto alarms = d.health().alarms(d.sensors().temperature_c, d.thermal_limits());
  ASSERT_EQ(alarms.size(), 2u);
  EXPECT_EQ(alarms[0].code, telemetry::incident("ecc_double_bit").code);
  EXPECT_EQ(alarms[1].code, telemetry::incident("ecc_single_bit_storm").code);
  EXPECT_EQ(d.health_state(), Health::kAlarm);
}

// A run with a fault timeline: the task timeline plus the devices' ECC and health at the end.
std::pair<std::vector<std::tuple<uint64_t, int, Nanos, Nanos>>, std::vector<uint64_t>> faulty_run(uint64_t seed) {
  auto node = make_node({.seed = seed});
  TimelineRecorder rec;
  node->engine().add_observer(&rec);
  std::vector<FaultEvent> timeline = {
      {kSecond / 2, 1, FaultEvent::Action::kInject, FaultKind::kEccStorm},
      {kSecond, 2, FaultEvent::Action::kInject, FaultKind::kHbmDoubleBit},
      {kSecond, 3, FaultEvent::Action::kInject, FaultKind::kAicoreHang},
      {2 * kSecond, 1, FaultEvent::Action::kClear, FaultKind::kEccStorm},
      {4 * kSecond, 3, FaultEvent::Action::kReset, FaultKind::kEccStorm},
  };
  EXPECT_TRUE(node->schedule_faults(timeline).ok());
  for (int dev = 0; dev < 4; ++dev) {
    Context& ctx = make_context(*node, dev, 300 + dev);
    StreamId s = ctx.create_stream();
    auto mm = ctx.prepare("matmul", {fp16({4096, 4096}), fp16({4096, 4096})});
    for (int i = 0; i < 4000; ++i) EXPECT_TRUE(ctx.enqueue(s, *mm).ok());
  }
  node->scheduler().run_until(5 * kSecond);
  std::vector<std::tuple<uint64_t, int, Nanos, Nanos>> tasks;
  for (const auto& r : rec.records()) tasks.emplace_back(r.id, r.device, r.start, r.end);
  std::vector<uint64_t> state;
  for (int dev = 0; dev < 4; ++dev) {
    const auto& e = node->device(dev).health().ecc();
    state.insert(state.end(), {e.single_bit_aggregate, e.double_bit_aggregate,
                               static_cast<uint64_t>(node->device(dev).health_state())});
  }
  node->engine().remove_observer(&rec);
  return {tasks, state};
}

TEST(Faults, SameSeedAndTimelineGiveTheSameRun) {
  auto a = faulty_run(9);
  auto b = faulty_run(9);
  EXPECT_EQ(a.first, b.first);
  EXPECT_EQ(a.second, b.second);
  EXPECT_NE(a.first, faulty_run(10).first);
  // device 3 hung at 1 s: its running task timed out 2 s later, and it recovered at the reset
  EXPECT_EQ(a.second[3 * 3 + 2], static_cast<uint64_t>(Health::kOk));
  EXPECT_EQ(a.second[2 * 3 + 2], static_cast<uint64_t>(Health::kAlarm));
}

}  // namespace
}  // namespace npukit::emu
