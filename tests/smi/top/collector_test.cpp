// The collector over an in-process bus: utilization shares, history (with gaps), alarms from
// state, counters and events, stale and absent nodes, and recordings.
#include <cmath>
#include <cstdio>

#include "tests/smi/top/top_test_util.hpp"

namespace npukit::top::testing {
namespace {

std::vector<std::string> alarm_texts(const Frame& f) {
  std::vector<std::string> out;
  for (const auto& a : f.alarms) out.push_back(a.text);
  return out;
}

TEST(TopCollector, UtilizationSharesSplitTheDeviceByHbmHeld) {
  TestNode node(test_node_name(), 3);
  node.publish(0, {.util = 80});
  node.publish(1, {.util = 30});
  node.writer().update_device(2).set_status(fid::kAicoreUtil, telemetry::SampleStatus::kNotSupported);
  std::vector<telemetry::ProcessInfo> procs = {
      {10, 0, 1ull << 30, "small"}, {11, 0, 3ull << 30, "big"}, {12, 1, 0, "a"}, {13, 1, 0, "b"}, {14, 2, 1 << 20, "c"}};
  ASSERT_TRUE(node.writer().set_processes(procs).ok());
  auto f = node.collector()->collect();
  ASSERT_EQ(f->processes.size(), 5u);
  EXPECT_DOUBLE_EQ(*f->processes[0].share, 20.0);
  EXPECT_DOUBLE_EQ(*f->processes[1].share, 60.0);
  EXPECT_DOUBLE_EQ(*f->processes[2].share, 15.0) << "no HBM held: an even split";
  EXPECT_DOUBLE_EQ(*f->processes[3].share, 15.0);
  EXPECT_FALSE(f->processes[4].share.has_value()) << "no utilization, no share (not 0)";
}

TEST(TopCollector, HistoryKeepsEveryTickAndGapsForMissingValues) {
  TestNode node(test_node_name(), 2);
  auto c = node.collector();
  std::shared_ptr<const Frame> f;
  for (int i = 0; i < 6; ++i) {  // samples at 1..6 s: 0, 10, 20, (none), 40, 50
    node.publish(0, {.util = 10.0 * i});
    if (i == 3) node.writer().update_device(0).set_status(fid::kAicoreUtil, telemetry::SampleStatus::kBlank);
    node.now_ns = static_cast<uint64_t>(i + 1) * 1'000'000'000;
    f = c->collect();
  }
  const History& h = *f->history;
  ASSERT_EQ(h.size(), 6u);
  EXPECT_FLOAT_EQ(h.value(Metric::kUtil, 0, 2), 20.0f);
  EXPECT_TRUE(std::isnan(h.value(Metric::kUtil, 0, 3)));
  EXPECT_FLOAT_EQ(h.value(Metric::kPower, 1, 0), 200.0f);
  EXPECT_EQ(h.time(5) - h.time(0), 5'000'000'000ull);
  // Six columns over the last 6 s: one per second; the newest sample lands in the last column.
  auto cols = history_columns(h, Metric::kUtil, 0, f->now_ns, 6'000'000'000ull, 6);
  EXPECT_TRUE(std::isnan(cols[0])) << "before the first sample";
  EXPECT_FLOAT_EQ(cols[1], 0.0f);
  EXPECT_FLOAT_EQ(cols[3], 20.0f);
  EXPECT_TRUE(std::isnan(cols[4])) << "the missing sample is a gap, not 0";
  EXPECT_FLOAT_EQ(cols[5], 50.0f);
}

TEST(TopCollector, HistoryRingKeepsTheNewestSamples) {
  History h(1, 4);
  std::vector<float> values[kMetricCount] = {{1}, {2}, {3}};
  for (int i = 0; i < 6; ++i) {
    values[0][0] = static_cast<float>(i);
    h.push(static_cast<uint64_t>(i) * 100, values);
  }
  ASSERT_EQ(h.size(), 4u);
  EXPECT_EQ(h.time(0), 200u);
  EXPECT_FLOAT_EQ(h.value(Metric::kUtil, 0, 3), 5.0f);
  auto wide = history_columns(h, Metric::kUtil, 0, 500, 1000, 10);
  EXPECT_FLOAT_EQ(wide[9], 5.0f) << "the newest sample reaches the last column";
}

TEST(TopCollector, AlarmsForHealthThrottlingAndEcc) {
  TestNode node(test_node_name(), 4);
  auto c = node.collector();
  c->collect();
  node.publish(1, {.health = 2, .code = 0x80E01802, .dbe_total = 1});
  node.publish(2, {.clock = 800, .throttle = telemetry::kThrottleThermal | telemetry::kThrottlePowerLimit});
  node.publish(3, {.sbe_total = 2000});
  node.set_virtual_time(5'000'000'000);
  auto f = c->collect();
  EXPECT_EQ(alarm_texts(*f), (std::vector<std::string>{"NPU 1 Alarm 0x80E01802 uncorrectable HBM ECC error, reset isolates",
                                                      "NPU 1 ECC double-bit +1 (0s ago)",
                                                      "NPU 2 throttled (thermal+power limit) 800/1850 MHz",
                                                      "NPU 3 ECC single-bit +2000 (0s ago)"}));
  EXPECT_EQ(f->alarms[0].severity, Severity::kCritical);
  EXPECT_EQ(f->alarms[3].severity, Severity::kWarning);
  node.publish(3, {.sbe_total = 2500});
  node.set_virtual_time(30'000'000'000);
  EXPECT_EQ(alarm_texts(*c->collect())[3], "NPU 3 ECC single-bit +2500 (0s ago)") << "coalesced";
  node.publish(1, {});
  node.publish(2, {});
  node.set_virtual_time(91'000'000'000);
  EXPECT_TRUE(c->collect()->alarms.empty()) << "ECC alarms fade after a minute without new errors";
}

TEST(TopCollector, EventsFeedTheBannerAndFade) {
  TestNode node(test_node_name(), 4);
  auto c = node.collector();
  c->collect();  // opens the event cursor
  auto& w = node.writer();
  auto record = [&w](telemetry::EventType type, int device, uint64_t ts_ns, const std::string& name,
                     std::array<uint64_t, 4> words) {
    telemetry::Event e;
    e.type = type;
    e.device = device;
    e.ts_ns = ts_ns;
    e.name_id = name.empty() ? 0 : *w.intern(name);
    e.words = words;
    w.record(e);
  };
  record(telemetry::EventType::kFaultInjected, 3, 1'000'000'000, "aicore-hang", {});
  record(telemetry::EventType::kLinkStateChanged, 2, 2'000'000'000, "", {5, 0, 0, 0});
  record(telemetry::EventType::kTaskTimeout, 3, 3'000'000'000, "aten::mm", {});
  node.set_virtual_time(4'000'000'000);
  auto f = c->collect();
  EXPECT_EQ(f->new_events.size(), 3u);
  EXPECT_EQ(alarm_texts(*f), (std::vector<std::string>{"NPU 2 link 5 down (2s ago)", "NPU 3 task timeout: aten::mm (1s ago)",
                                                      "NPU 3 fault injected: aicore-hang (3s ago)"}));
  record(telemetry::EventType::kLinkStateChanged, 2, 2'500'000'000, "", {5, 1, 0, 0});
  node.set_virtual_time(62'000'000'000);
  EXPECT_EQ(alarm_texts(*c->collect()), (std::vector<std::string>{"NPU 3 task timeout: aten::mm (59s ago)"}))
      << "the link came back up; the fault is older than a minute";
}

TEST(TopCollector, AStaleNodeHasNoLiveValuesNoProcessesAndOneAlarm) {
  TestNode node(test_node_name(), 2);
  ASSERT_TRUE(node.writer().set_processes(std::vector<telemetry::ProcessInfo>{{10, 0, 1 << 30, "p"}}).ok());
  auto c = node.collector();
  EXPECT_EQ(c->collect()->processes.size(), 1u);
  node.bus().close();
  auto f = c->collect();
  EXPECT_EQ(f->state, NodeState::kStale);
  EXPECT_TRUE(f->processes.empty());
  EXPECT_FALSE(value_of(*f, 0, fid::kPowerWatts).has_value());
  ASSERT_EQ(f->alarms.size(), 1u);
  EXPECT_EQ(f->alarms[0].device, -1);
  EXPECT_TRUE(std::isnan(f->history->value(Metric::kPower, 0, f->history->size() - 1)));
}

TEST(TopCollector, AnAbsentNodeIsRetriedUntilItAppears) {
  TestNode node(test_node_name(), 2);
  int attempts = 0;
  auto bus = std::shared_ptr<telemetry::InProcessBus>(&node.bus(), [](auto*) {});
  Collector c({.node = "late"},
              [&]() -> Result<std::unique_ptr<telemetry::Client>> {
                if (++attempts < 3) return Status(Code::kUnavailable, "no npukit node 'late' is running");
                return bus->client();
              },
              [] { return uint64_t{1}; });
  EXPECT_EQ(c.collect()->state, NodeState::kAbsent);
  auto f = c.collect();
  EXPECT_EQ(f->state, NodeState::kAbsent);
  EXPECT_EQ(f->message, "no npukit node 'late' is running");
  EXPECT_EQ(f->devices(), 0);
  EXPECT_EQ(c.collect()->state, NodeState::kLive);
}

TEST(TopCollector, RecordingsRoundTripThroughJsonAndReplay) {
  TestNode node(test_node_name(), 2);
  node.writer().update_device(1).set_status(fid::kPowerWatts, telemetry::SampleStatus::kNotSupported);
  ASSERT_TRUE(node.writer().set_processes(std::vector<telemetry::ProcessInfo>{{77, 1, 5 << 20, "job"}}).ok());
  auto c = node.collector();
  Recording rec;
  record_frame(rec, *c->collect());
  node.publish(0, {.util = 99, .health = 1, .code = 0x80E18401});
  node.set_virtual_time(2'000'000'000);
  record_frame(rec, *c->collect());
  auto back = recording_from_json(nlohmann::json::parse(recording_to_json(rec).dump()), "mem");
  ASSERT_TRUE(back.ok()) << back.status().message();
  ASSERT_EQ(back->frames.size(), 2u);
  auto replayer = Replayer::create(std::move(*back));
  ASSERT_TRUE(replayer.ok());
  Collector rc({.node = "replayed"}, (*replayer)->opener(), (*replayer)->clock());
  (*replayer)->step(0);
  rc.collect();
  (*replayer)->step(1);
  auto f = rc.collect();
  EXPECT_EQ(f->now_ns, 2'000'000'000u);
  EXPECT_DOUBLE_EQ(*value_of(*f, 0, fid::kAicoreUtil), 99.0);
  EXPECT_EQ(f->snapshot.health(0), telemetry::Health::kWarning);
  EXPECT_EQ(f->snapshot.device(1, fid::kPowerWatts).status, telemetry::SampleStatus::kNotSupported);
  EXPECT_EQ(f->snapshot.device(1, fid::kFlopsTotal).status, telemetry::SampleStatus::kBlank) << "not recorded";
  ASSERT_EQ(f->processes.size(), 1u);
  EXPECT_EQ(f->processes[0].name, "job");
  EXPECT_EQ(f->snapshot.device_info(1).bus_id, "0000:51:00.0");
  EXPECT_EQ(alarm_texts(*f), (std::vector<std::string>{"NPU 0 Warning 0x80E18401 temperature above throttle point"}));
}

TEST(TopCollector, BadRecordingsAreRejectedSayingWhere) {
  auto good = recording_to_json(*load_recording(data_path("rec-8x910B2.json")));
  auto expect_error = [&](nlohmann::json j, const std::string& what) {
    auto r = recording_from_json(j, "x.json");
    ASSERT_FALSE(r.ok()) << what;
    EXPECT_NE(r.status().message().find(what), std::string::npos) << r.status().message();
  };
  auto j = good;
  j["format"] = "something";
  expect_error(j, "x.json: not an npu-top recording");
  j = good;
  j["fields"][0] = "npu_flux_capacitance";
  expect_error(j, "x.json: fields: \"npu_flux_capacitance\" is not a device field");
  j = good;
  j["frames"][3]["devices"][1][0] = "hot";
  expect_error(j, "x.json: frames[3]: a value must be a number, \"NA\" or null");
  j = good;
  j["frames"][5]["devices"].erase(0);
  expect_error(j, "x.json: frames[5]: devices: expected 8 entries");
  // Integers must be integers in range: a float such as 1e38 read as int was undefined behaviour
  // (found by tests/fuzz/top_recording), a negative pid or count is not a pid or a count.
  j = good;
  j["devices"][0]["npu_id"] = 1e38;
  expect_error(j, "expected an integer in range, not 1e+38");
  j = good;
  j["frames"][2]["processes"] = {{-1, 0, -5, "job"}};
  expect_error(j, "x.json: frames[2]: expected an integer in range, not -5");
  EXPECT_EQ(load_recording("/nonexistent/rec.json").status().code(), Code::kNotFound);
  std::string tmp = ::testing::TempDir() + "/top-bad.json";
  std::ofstream(tmp) << "{not json";
  EXPECT_NE(load_recording(tmp).status().message().find("not valid JSON"), std::string::npos);
  std::remove(tmp.c_str());
}

}  // namespace
}  // namespace npukit::top::testing
