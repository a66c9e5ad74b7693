// Fixtures for the npu-smi tests: an in-process bus filled from a small JSON file under
// tests/data/smi/, and a Context that runs the real CLI code against it with captured output.
//
// Fixture JSON: {"node", "node_spec", "topology", "driver_version", "tool_version",
//   "defaults": {<field name>: value}, "devices": [{identity..., "fields": {...}}],
//   "links": [{"a", "b", "kind", "peak", "up"}], "processes": [{"pid", "device", "name", "mib"}],
//   "stale": bool}
// A field value is a number (stored with the field's type), {"mib": N} for bytes, or
// "not_supported".
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "smi/cli/cli.hpp"
#include "telemetry/client.hpp"
#include "tests/golden_util.hpp"

namespace npukit::smi::testing {

namespace tf = telemetry;
using nlohmann::json;

inline std::string data_path(const std::string& name) { return std::string(NPUKIT_TEST_DATA_DIR) + "/smi/" + name; }

inline json load_json(const std::string& name) {
  std::ifstream in(data_path(name));
  EXPECT_TRUE(in.good()) << "cannot open " << data_path(name);
  return json::parse(in);
}

inline void set_field(tf::Writer::Update& u, const std::string& name, const json& v) {
  const tf::FieldDef* f = tf::find_field(name);
  ASSERT_NE(f, nullptr) << "fixture names unknown field '" << name << "'";
  if (v.is_string()) {
    ASSERT_EQ(v.get<std::string>(), "not_supported") << name;
    u.set_status(f->id, tf::SampleStatus::kNotSupported);
  } else if (v.is_object()) {
    u.set(f->id, v.at("mib").get<uint64_t>() << 20);
  } else if (f->type == tf::ValueType::kF64) {
    u.set(f->id, v.get<double>());
  } else if (f->type == tf::ValueType::kI64) {
    u.set(f->id, v.get<int64_t>());
  } else {
    u.set(f->id, v.get<uint64_t>());
  }
}

inline tf::DeviceInfo device_info(const json& d) {
  tf::DeviceInfo info;
  info.npu_id = d.at("npu_id");
  info.chip_id = d.value("chip_id", 0);
  info.logic_id = d.value("logic_id", info.npu_id);
  info.phy_id = d.value("phy_id", info.logic_id);
  info.aicore_count = d.value("aicore_count", 24);
  info.aicpu_count = d.value("aicpu_count", 6);
  info.name = d.at("name");
  info.chip_name = d.value("chip_name", info.name);
  info.chip_type = d.at("chip_type");
  info.bus_id = d.at("bus_id");
  info.serial_number = d.value("serial_number", "SN" + std::to_string(info.logic_id));
  info.firmware_version = d.value("firmware_version", "7.1.0.5.220");
  info.smi_layout = d.at("smi_layout");
  return info;
}

// A bus holding the fixture's values; close() marks it stale when the fixture says so.
inline std::shared_ptr<tf::InProcessBus> make_bus(const json& fx) {
  tf::WriterOptions o;
  o.node = fx.at("node");
  o.node_info.node_spec = fx.at("node_spec");
  o.node_info.topology = fx.value("topology", "hccs_full_mesh");
  o.node_info.driver_version = fx.at("driver_version");
  o.node_info.tool_version = fx.at("tool_version");
  for (const auto& d : fx.at("devices")) o.devices.push_back(device_info(d));
  o.node_info.card_count = fx.value("card_count", static_cast<int>(o.devices.size()));
  const json links = fx.value("links", json::array());
  for (const auto& l : links) o.links.push_back({l.at("a"), l.at("b"), l.at("kind"), l.value("peak", 56e9)});
  auto bus = tf::InProcessBus::create(o);
  EXPECT_TRUE(bus.ok()) << bus.status().message();
  auto& w = (*bus)->writer();
  const json defaults = fx.value("defaults", json::object());
  for (std::size_t i = 0; i < o.devices.size(); ++i) {
    auto u = w.update_device(static_cast<int>(i));
    const json fields = fx.at("devices")[i].value("fields", json::object());
    for (const auto& [k, v] : defaults.items()) set_field(u, k, v);
    for (const auto& [k, v] : fields.items()) set_field(u, k, v);
  }
  int li = 0;
  for (const auto& l : links) w.update_link(li++).set(tf::fid::kLinkUp, l.value("up", uint64_t{1}));
  std::vector<tf::ProcessInfo> procs;
  const json processes = fx.value("processes", json::array());
  for (const auto& p : processes) {
    procs.push_back({p.at("pid"), p.at("device"), p.at("mib").get<uint64_t>() << 20, p.at("name")});
  }
  EXPECT_TRUE(w.set_processes(procs).ok());
  if (fx.value("stale", false)) (*bus)->close();
  return *bus;
}

struct SmiRun {
  int exit_code = -1;
  std::string out;
  std::string err;
};

// Runs npu-smi's CLI (argv without the program name) against `bus`.
inline SmiRun run(const std::shared_ptr<tf::InProcessBus>& bus, const std::vector<std::string>& args,
               const std::string& stdin_text = "") {
  std::ostringstream out, err;
  std::istringstream in(stdin_text);
  Context ctx;
  ctx.out = &out;
  ctx.err = &err;
  ctx.in = &in;
  ctx.open = [bus]() -> Result<std::unique_ptr<tf::Client>> {
    if (!bus) return Status(Code::kUnavailable, "no npukit node 'absent' is running (start one with: npu-emud start --node-name absent)");
    return bus->client();
  };
  ctx.numa_cpulists = {"0-23", "48-71", "96-119", "144-167"};
  int tick = 0;
  ctx.timestamp = [&tick] { return "2025-01-22T04:28:4" + std::to_string(tick++ % 10) + ".000Z"; };
  std::vector<const char*> argv = {"npu-smi"};
  for (const auto& a : args) argv.push_back(a.c_str());
  SmiRun r;
  r.exit_code = run_cli(ctx, static_cast<int>(argv.size()), argv.data());
  r.out = out.str();
  r.err = err.str();
  return r;
}

// Compares `actual` with the golden file; NPUKIT_UPDATE_GOLDEN=1 rewrites it instead.
inline void expect_golden(const std::string& golden, const std::string& actual) {
  npukit::testing::expect_golden_file(data_path(golden), actual);
}

inline void expect_no_trailing_whitespace(const std::string& text, const std::string& what) {
  std::istringstream in(text);
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    if (!line.empty() && (line.back() == ' ' || line.back() == '\t')) ADD_FAILURE() << what << ": trailing whitespace on line " << n << ": '" << line << "'";
  }
}

}  // namespace npukit::smi::testing
