// Helpers for the exporter tests: a small in-process node, line lookups in an exposition, and
// promtool (installed from Debian's prometheus package when missing and we are root).
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "tests/daemon_util.hpp"
#include "telemetry/client.hpp"

namespace npukit::smi::exporter::testing {

namespace tf = telemetry;
namespace fid = telemetry::fid;

// Shell commands through the helper the daemon tests use.
using Cmd = npukit::testing::CommandResult;
using npukit::testing::run_command;

// "" when promtool is usable, else why not (the caller skips with it).
inline std::string ensure_promtool() { return npukit::testing::ensure_debian_package("promtool", "prometheus"); }

inline std::string write_temp(const std::string& tag, const std::string& text) {
  std::string path = "/tmp/npukit-exporter-" + std::to_string(getpid()) + "-" + tag;
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

// Sample lines (not comments) whose metric name is exactly `name`.
inline std::vector<std::string> samples(const std::string& text, const std::string& name) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    std::string n = line.substr(0, line.find_first_of("{ "));
    if (n == name) out.push_back(line);
  }
  return out;
}

// The value of the first sample of `name` whose line contains `match`; NaN when none.
inline double value_of(const std::string& text, const std::string& name, const std::string& match = "") {
  for (const std::string& line : samples(text, name)) {
    if (line.find(match) != std::string::npos) return std::stod(line.substr(line.rfind(' ') + 1));
  }
  return std::numeric_limits<double>::quiet_NaN();
}

// Two 910B2 devices, one HCCS link, one process; all values plausible and healthy.
// Two 910B2-like chips; `layout` "classic" makes them 310P-like (DDR, no HBM).
inline std::shared_ptr<tf::InProcessBus> make_node(const std::string& node, const std::string& layout = "hbm") {
  tf::WriterOptions o;
  o.node = node;
  o.node_info.node_spec = "2x910B2";
  o.node_info.card_count = 2;
  for (int d = 0; d < 2; ++d) {
    tf::DeviceInfo info;
    info.npu_id = d;
    info.logic_id = d;
    info.phy_id = d;
    info.name = "910B2";
    info.chip_type = "Ascend910B";
    info.bus_id = "0000:5" + std::to_string(d) + ":00.0";
    info.serial_number = "SN\"" + std::to_string(d);  // a quote, to exercise escaping
    info.smi_layout = layout;
    o.devices.push_back(info);
  }
  o.links.push_back({0, 1, "hccs", 56e9});
  auto bus = tf::InProcessBus::create(o);
  EXPECT_TRUE(bus.ok()) << bus.status().message();
  for (int d = 0; d < 2; ++d) {
    auto u = (*bus)->writer().update_device(d);
    u.set(fid::kHealth, uint64_t{0}).set(fid::kErrorCode, uint64_t{0}).set(fid::kTemperatureCelsius, 50.0 + d);
    u.set(fid::kAicoreUtil, 42.5).set(fid::kHbmUsedBytes, uint64_t{3} << 30).set(fid::kHbmTotalBytes, uint64_t{64} << 30);
    u.set(fid::kAicoreBusyNs, uint64_t{2'500'000'000}).set(fid::kKernelsTotal, uint64_t{7}).set(fid::kDeviceInfo, uint64_t{1});
    u.set_status(fid::kVoltageVolts, tf::SampleStatus::kNotSupported);
  }
  (*bus)->writer().update_link(0).set(fid::kLinkUp, uint64_t{1});
  std::vector<tf::ProcessInfo> procs{{4242, 1, uint64_t{512} << 20, "python3"}};
  EXPECT_TRUE((*bus)->writer().set_processes(procs).ok());
  return *bus;
}

}  // namespace npukit::smi::exporter::testing
