// Helpers for the npu-top tests: recorded fixtures replayed into frames, a node on an in-process
// bus whose values the test sets, and rendering to text.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <limits>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "smi/top/canvas.hpp"
#include "smi/top/collector.hpp"
#include "smi/top/recording.hpp"
#include "smi/top/render.hpp"
#include "smi/top/view.hpp"
#include "tests/telemetry/bus_fixtures.hpp"

namespace npukit::top::testing {

namespace fid = telemetry::fid;

inline std::string data_path(const std::string& name) { return std::string(NPUKIT_TEST_DATA_DIR) + "/top/" + name; }

inline std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The frames a live npu-top collected, replayed from the recording `file` (tests/data/top).
inline std::vector<std::shared_ptr<const Frame>> replay(const std::string& file,
                                                        std::size_t limit = std::numeric_limits<std::size_t>::max()) {
  std::vector<std::shared_ptr<const Frame>> frames;
  auto rec = load_recording(data_path(file));
  EXPECT_TRUE(rec.ok()) << rec.status().message();
  if (!rec.ok()) return frames;
  std::string node = rec->node.node_name;
  auto replayer = Replayer::create(std::move(*rec));
  EXPECT_TRUE(replayer.ok()) << replayer.status().message();
  if (!replayer.ok()) return frames;
  Collector collector({.node = node}, (*replayer)->opener(), (*replayer)->clock());
  for (std::size_t i = 0; i < (*replayer)->frames() && i < limit; ++i) {
    (*replayer)->step(i);
    frames.push_back(collector.collect());
  }
  return frames;
}

// `text` split at newlines (a final newline does not start another line).
inline std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    out.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

inline std::string render_text(const Frame& f, const ViewState& v, int width, int height) {
  TextCanvas canvas(width, height);
  render(canvas, f, v);
  return canvas.text();
}

// Values for every field the dashboard draws on one device.
struct DeviceValues {
  double util = 50, cube = 40, vector = 10, power = 200, limit = 310, temp = 55;
  uint64_t clock = 1850, clock_max = 1850, hbm_used = 8ull << 30, hbm_total = 64ull << 30;
  uint64_t health = 0, code = 0, throttle = 0, sbe_total = 0, dbe_total = 0;
};

// A node of `devices` 910B2-like devices on an in-process bus, `chips_per_card` of them on each
// card (2: npu-smi's "NPU 1 Chip 0" of a 310P node); the test publishes its values and drives
// the collector's clock.
class TestNode {
 public:
  TestNode(const std::string& name, int devices, int chips_per_card = 1) {
    auto o = telemetry::testing::small_options(name, devices, 0);
    o.node_info.node_spec = std::to_string(devices) + "x910B2";
    o.node_info.card_count = devices / chips_per_card;
    for (int d = 0; d < devices; ++d) {
      o.devices[static_cast<std::size_t>(d)].npu_id = d / chips_per_card;
      o.devices[static_cast<std::size_t>(d)].chip_id = d % chips_per_card;
    }
    auto bus = telemetry::InProcessBus::create(o);
    EXPECT_TRUE(bus.ok()) << bus.status().message();
    bus_ = *bus;
    for (int d = 0; d < devices; ++d) publish(d, {});
    set_virtual_time(1'000'000'000);
  }
  telemetry::Writer& writer() { return bus_->writer(); }
  telemetry::InProcessBus& bus() { return *bus_; }

  void publish(int d, const DeviceValues& v) {
    auto u = writer().update_device(d);
    u.set(fid::kAicoreUtil, v.util).set(fid::kCubeUtil, v.cube).set(fid::kVectorUtil, v.vector);
    u.set(fid::kPowerWatts, v.power).set(fid::kPowerLimitWatts, v.limit).set(fid::kTemperatureCelsius, v.temp);
    u.set(fid::kAicoreClockMhz, v.clock).set(fid::kAicoreClockMaxMhz, v.clock_max);
    u.set(fid::kHbmUsedBytes, v.hbm_used).set(fid::kHbmTotalBytes, v.hbm_total);
    u.set(fid::kHealth, v.health).set(fid::kErrorCode, v.code).set(fid::kThrottleReasons, v.throttle);
    u.set(fid::kEccSingleBitVolatile, v.sbe_total).set(fid::kEccDoubleBitVolatile, v.dbe_total);  // no clear yet
    u.set(fid::kEccSingleBitTotal, v.sbe_total).set(fid::kEccDoubleBitTotal, v.dbe_total);
    u.set(fid::kProcessCount, uint64_t{0});
  }
  void set_virtual_time(uint64_t ns) { writer().update_node().set(fid::kNodeVirtualTimeNs, ns); }

  // A collector of this node whose clock is `now_ns`.
  std::unique_ptr<Collector> collector() {
    auto bus = bus_;
    return std::make_unique<Collector>(
        CollectorOptions{.node = "testnode"},
        [bus]() -> Result<std::unique_ptr<telemetry::Client>> { return bus->client(); }, [this] { return now_ns; });
  }

  uint64_t now_ns = 1'000'000'000;

 private:
  std::shared_ptr<telemetry::InProcessBus> bus_;
};

// "t<pid>-<test name>": a node name unique to this test.
inline std::string test_node_name() {
  std::string name = ::testing::UnitTest::GetInstance()->current_test_info()->name();
  name = "top" + std::to_string(::getpid()) + "-" + name;
  return name.substr(0, 48);
}

}  // namespace npukit::top::testing
