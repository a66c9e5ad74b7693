// The renderer over recorded frames and hand-made nodes: every panel has content at every
// size, no value is never drawn as 0, stale and absent nodes say so, overlays and ASCII mode.
#include "tests/smi/top/top_test_util.hpp"

#include "smi/top/format.hpp"
#include "smi/top/input.hpp"
#include "telemetry/naming.hpp"

namespace npukit::top::testing {
namespace {

std::vector<std::pair<std::string, Rect>> panels(const Layout& l) {
  std::vector<std::pair<std::string, Rect>> out = {{"header", l.header},     {"banner", l.banner},
                                                   {"device header", l.device_header}, {"message", l.message},
                                                   {"graph", l.graph},       {"processes", l.processes},
                                                   {"footer", l.footer}};
  for (std::size_t d = 0; d < l.devices.size(); ++d) out.emplace_back("device " + std::to_string(d), l.devices[d]);
  return out;
}

TEST(TopRender, EveryPanelHasContentAtSizesFrom80x24To300x100) {
  for (const char* file : {"rec-8x910B2.json", "rec-16x910B2.json"}) {
    auto frames = replay(file);
    ASSERT_FALSE(frames.empty());
    const Frame& f = *frames.back();
    for (bool unicode : {true, false}) {
      ViewState v;
      v.unicode = unicode;
      for (int w = 80; w <= 300; w += 11) {
        for (int h = 24; h <= 100; h += 7) {
          TextCanvas canvas(w, h);
          Layout l = render(canvas, f, v);
          ASSERT_FALSE(l.too_small);
          for (const auto& [name, rect] : panels(l)) {
            if (rect.empty()) continue;
            EXPECT_FALSE(canvas.blank(rect)) << file << " at " << w << "x" << h << ": " << name << " is empty";
          }
        }
      }
    }
  }
}

TEST(TopRender, EveryDeviceIsShownWithItsNumber) {
  auto frames = replay("rec-16x910B2.json");
  ASSERT_FALSE(frames.empty());
  for (auto [w, h] : {std::pair{80, 24}, std::pair{300, 100}}) {
    TextCanvas canvas(w, h);
    Layout l = render(canvas, *frames.back(), ViewState{});
    for (std::size_t d = 0; d < l.devices.size(); ++d) {
      std::string row = canvas.lines()[static_cast<std::size_t>(l.devices[d].y)];
      std::string id = l.mode == DeviceMode::kCompact ? std::to_string(d) : "NPU " + std::to_string(d);
      EXPECT_NE(row.find(id), std::string::npos) << w << "x" << h << " device " << d << ": " << row;
    }
  }
}

// The header's uptime is drawn whole or not at all: a long node name at 80 columns left
// "up 00:01:4" before.
TEST(TopRender, TheHeaderNeverCutsTheUptime) {
  auto frames = replay("rec-8x910B2.json");
  ASSERT_FALSE(frames.empty());
  Frame f = *frames.back();
  for (const std::string name : {"lab-a01", "review-11896", "a-rather-long-node-name-01"}) {
    f.node = name;
    TextCanvas canvas(80, 24);
    render(canvas, f, ViewState{});
    std::string header = canvas.lines()[0];
    std::size_t up = header.find(" up ");
    if (up == std::string::npos) continue;  // no room for it: left out
    std::string uptime = header.substr(up + 4, 8);
    EXPECT_EQ(uptime.size(), 8u) << header;
    EXPECT_TRUE(uptime[2] == ':' && uptime[5] == ':' && std::isdigit(static_cast<unsigned char>(uptime[7]))) << name << ": " << header;
  }
  f.node = "lab-a01";
  TextCanvas canvas(80, 24);
  render(canvas, f, ViewState{});
  EXPECT_NE(canvas.lines()[0].find(" up 00:00:"), std::string::npos) << "a short name leaves room: " << canvas.lines()[0];
}

TEST(TopRender, AsciiModeDrawsOnlyAscii) {
  auto frames = replay("rec-8x910B2.json");
  ViewState v;
  v.unicode = false;
  for (auto [w, h] : {std::pair{80, 24}, std::pair{120, 40}, std::pair{200, 60}}) {
    std::string text = render_text(*frames.back(), v, w, h);
    for (char c : text) ASSERT_TRUE(static_cast<unsigned char>(c) < 0x80) << w << "x" << h << "\n" << text;
  }
}

// On a node whose cards hold two chips (310P), npu-smi's NPU is the card: the header counts
// cards and chips, and the process table names a chip as "card-chip" as the device panels do
// ("NPU 1 Chip 1"); it said "4 NPUs" and "3" before.
TEST(TopRender, AMultiChipNodeCountsCardsAndNamesChipsAsNpuSmiDoes) {
  TestNode node(test_node_name(), 4, 2);
  telemetry::ProcessInfo p{4242, 3, 1ull << 30, "train.py"};
  ASSERT_TRUE(node.writer().set_processes(std::span(&p, 1)).ok());
  auto f = node.collector()->collect();
  std::vector<std::string> lines = split_lines(render_text(*f, ViewState{}, 160, 45));
  EXPECT_NE(lines[0].find("  2 NPUs, 4 chips  "), std::string::npos) << lines[0];
  bool named = false;
  for (const std::string& line : lines) {
    if (line.find("4242") != std::string::npos) named = line.find(" 1-1 ") != std::string::npos;
  }
  EXPECT_TRUE(named) << render_text(*f, ViewState{}, 160, 45);
}

TEST(TopRender, NoValueIsDrawnAsNaOrDashNeverZero) {
  TestNode node(test_node_name(), 2);
  {
    auto u = node.writer().update_device(1);
    for (auto id : {fid::kAicoreUtil, fid::kCubeUtil, fid::kVectorUtil, fid::kTemperatureCelsius}) {
      u.set_status(id, telemetry::SampleStatus::kBlank);
    }
    u.set_status(fid::kPowerWatts, telemetry::SampleStatus::kNotSupported);
  }
  auto f = node.collector()->collect();
  TextCanvas canvas(100, 24);
  ViewState v;
  v.device_view = DeviceView::kCompact;
  Layout l = render(canvas, *f, v);
  std::string row0 = canvas.lines()[static_cast<std::size_t>(l.devices[0].y)];
  std::string row1 = canvas.lines()[static_cast<std::size_t>(l.devices[1].y)];
  EXPECT_NE(row0.find("50%"), std::string::npos) << row0;
  EXPECT_NE(row0.find("200/310W"), std::string::npos) << row0;
  EXPECT_EQ(row1.find("0%"), std::string::npos) << row1;
  EXPECT_NE(row1.find(" - "), std::string::npos) << row1;
  EXPECT_NE(row1.find("NA/310W"), std::string::npos) << row1;
  EXPECT_EQ(row1.find("0C"), std::string::npos) << row1;
}

// A count wider than its cell was cut from the right: 73,298,473 single-bit errors read
// "7329847" (ten times fewer) and the double-bit count was gone. The compact row shows it whole
// in fewer characters; the detailed panel kept the counts off its health line whenever the
// device had an error code, exactly when they matter.
TEST(TopRender, LargeEccCountsAreShortenedNeverCut) {
  TestNode node(test_node_name(), 2);
  DeviceValues storm;
  storm.sbe_total = 73'298'473;
  storm.dbe_total = 2;
  storm.health = 1;
  storm.code = 0x80E01801;
  node.publish(1, storm);
  auto f = node.collector()->collect();
  for (int width : {120, 160, 200}) {
    TextCanvas canvas(width, 30);
    ViewState v;
    v.device_view = DeviceView::kCompact;
    Layout l = render(canvas, *f, v);
    std::string row = canvas.lines()[static_cast<std::size_t>(l.devices[1].y)];
    EXPECT_NE(row.find(" 73.2M/2"), std::string::npos) << width << ": " << row;
    EXPECT_EQ(row.find("7329847"), std::string::npos) << width << ": " << row;
  }
  ViewState detailed;
  detailed.device_view = DeviceView::kDetailed;
  std::string text = render_text(*f, detailed, 160, 45);
  EXPECT_NE(text.find("0x80E01801"), std::string::npos) << text;
  EXPECT_NE(text.find("ECC 73.2M/2"), std::string::npos) << text;
}

TEST(TopRender, AStaleNodeIsShownStaleNotWithFrozenValues) {
  TestNode node(test_node_name(), 2);
  auto collector = node.collector();
  std::string live = render_text(*collector->collect(), ViewState{}, 100, 24);
  EXPECT_NE(live.find("55C"), std::string::npos) << live;
  EXPECT_NE(live.find("live"), std::string::npos);
  node.bus().close();
  node.now_ns += 1'000'000'000;
  auto f = collector->collect();
  ASSERT_EQ(f->state, NodeState::kStale);
  std::string stale = render_text(*f, ViewState{}, 100, 24);
  EXPECT_EQ(stale.find("55C"), std::string::npos) << stale;
  EXPECT_EQ(stale.find("200/310W"), std::string::npos) << stale;
  EXPECT_NE(stale.find("STALE"), std::string::npos) << stale;
  EXPECT_NE(stale.find("is stale (writer pid " + std::to_string(getpid()) + " closed the segment): values are not live"),
            std::string::npos) << stale;
  EXPECT_NE(stale.find("UNKNOWN"), std::string::npos) << stale;
  EXPECT_NE(stale.find("(no process table: the node is stale)"), std::string::npos) << stale;
}

TEST(TopRender, ALongNoNodeMessageWrapsAt80Columns) {
  const std::string node = "a-node-name-of-forty-characters-0123456";
  Collector c({.node = node}, [&] {
    return Result<std::unique_ptr<telemetry::Client>>(Status(Code::kUnavailable, telemetry::no_daemon_message(node)));
  }, [] { return uint64_t{1}; });
  auto f = c.collect();
  std::string text = render_text(*f, ViewState{}, 80, 24);
  // Every word of the message is on screen, the command to start the node whole on one line.
  EXPECT_NE(text.find("npu-emud start --node-name " + node), std::string::npos) << text;
  EXPECT_NE(text.find("no npukit node '" + node + "' is running"), std::string::npos) << text;
}

TEST(TopRender, AnAbsentNodeShowsWhyAndThatItRetries) {
  Collector c({.node = "nowhere"}, [] { return Result<std::unique_ptr<telemetry::Client>>(Status(Code::kUnavailable, "no npukit node 'nowhere' is running")); },
              [] { return uint64_t{1}; });
  auto f = c.collect();
  ASSERT_EQ(f->state, NodeState::kAbsent);
  std::string text = render_text(*f, ViewState{}, 80, 24);
  EXPECT_NE(text.find("no npukit node 'nowhere' is running"), std::string::npos) << text;
  EXPECT_NE(text.find("retrying every 1s"), std::string::npos) << text;
  EXPECT_NE(text.find("absent"), std::string::npos) << text;
  EXPECT_NE(text.find("(no node)"), std::string::npos) << text;
}

TEST(TopRender, ATooSmallTerminalGetsAMessageNotACrash) {
  auto frames = replay("rec-16x910B2.json", 3);
  for (auto [w, h] : {std::pair{40, 10}, std::pair{79, 20}, std::pair{1, 1}, std::pair{0, 0}}) {
    std::string text = render_text(*frames.back(), ViewState{}, w, h);
    if (w >= 30 && h >= 3) {
      EXPECT_NE(text.find("is too small"), std::string::npos) << text;
      EXPECT_NE(text.find("needs 60x21 for 16 NPUs"), std::string::npos) << text;
    }
  }
}

TEST(TopRender, HelpScreenListsEveryKeyFromTheKeyTable) {
  auto frames = replay("rec-8x910B2.json", 2);
  ViewState v;
  v.mode = Mode::kHelp;
  std::string text = render_text(*frames.back(), v, 120, 40);
  EXPECT_NE(text.find("npu-top help"), std::string::npos);
  for (const auto& k : key_help()) {
    EXPECT_NE(text.find(std::string(k.keys)), std::string::npos) << k.keys << "\n" << text;
    EXPECT_NE(text.find(std::string(k.action).substr(0, 30)), std::string::npos) << k.action << "\n" << text;
  }
  std::string small = render_text(*frames.back(), v, 80, 24);
  for (const auto& k : key_help()) {
    EXPECT_NE(small.find(std::string(k.action)), std::string::npos) << "the help fits 80x24:\n" << small;
  }
}

TEST(TopRender, SignalDialogThenConfirmation) {
  auto frames = replay("rec-8x910B2.json", 2);
  ViewState v;
  v.mode = Mode::kSignalPick;
  v.signal_target = {4242, 3};
  v.signal_target_name = "train.py";
  v.signal_index = 3;
  std::string pick = render_text(*frames.back(), v, 80, 24);
  EXPECT_NE(pick.find("PID 4242 (train.py) on NPU 3"), std::string::npos) << pick;
  for (const auto& s : signal_choices()) EXPECT_NE(pick.find(s.name), std::string::npos) << s.name;
  v.mode = Mode::kSignalConfirm;
  std::string confirm = render_text(*frames.back(), v, 80, 24);
  EXPECT_NE(confirm.find("Send SIGKILL to PID 4242 (train.py) on NPU 3?"), std::string::npos) << confirm;
}

TEST(TopRender, FooterShowsTheFilterBeingTypedAndTheMatchCount) {
  auto frames = replay("rec-8x910B2.json", 2);
  ViewState v;
  v.mode = Mode::kFilter;
  v.filter = "nothing-matches";
  std::string typing = render_text(*frames.back(), v, 100, 30);
  EXPECT_NE(typing.find("Filter: nothing-matches"), std::string::npos) << typing;
  EXPECT_NE(typing.find("(no process matches \"nothing-matches\")"), std::string::npos) << typing;
  v.mode = Mode::kNormal;
  std::string kept = render_text(*frames.back(), v, 100, 30);
  EXPECT_NE(kept.find("filter \"nothing-matches\"  0/8 procs"), std::string::npos) << kept;
}

TEST(TopRender, TheBannerPacksAlarmsAndCountsTheRest) {
  std::vector<Alarm> alarms;
  for (int d = 0; d < 16; ++d) alarms.push_back({Severity::kWarning, d, "NPU " + std::to_string(d) + " throttled (thermal)"});
  auto lines = pack_alarms(alarms, 80, 3);
  ASSERT_EQ(lines.size(), 3u);
  std::size_t shown = 0;
  for (const auto& l : lines) shown += l.alarms.size();
  EXPECT_EQ(shown + static_cast<std::size_t>(lines.back().more), alarms.size());
  EXPECT_GT(lines.back().more, 0);
  EXPECT_EQ(pack_alarms(alarms, 80, 10).back().more, 0);
  EXPECT_TRUE(pack_alarms({}, 80, 3).empty());
}

}  // namespace
}  // namespace npukit::top::testing

namespace npukit::top {
namespace {

TEST(Format, CountsFitInFiveCharactersAndNeverReadHigher) {
  EXPECT_EQ(format_count(0), "0");
  EXPECT_EQ(format_count(9'999), "9999");
  EXPECT_EQ(format_count(12'399), "12.3k");
  EXPECT_EQ(format_count(123'999), "123k");
  EXPECT_EQ(format_count(999'999), "999k");
  EXPECT_EQ(format_count(73'298'473), "73.2M");
  EXPECT_EQ(format_count(73'298'473, false), "73M");
  EXPECT_EQ(format_count(18'446'744'073'709'551'615ull), "18.4E");
}

TEST(Format, ThrottleReasonsAreNamedAsEverySurfaceNamesThem) {
  EXPECT_EQ(throttle_text(telemetry::kThrottlePowerLimit), "power limit");  // was "power"
  EXPECT_EQ(throttle_text(telemetry::kThrottleThermal | telemetry::kThrottlePowerLimit), "thermal+power limit");
}

}  // namespace
}  // namespace npukit::top
