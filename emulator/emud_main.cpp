// npu-emud: the emulated NPU node daemon. See emud_cli.hpp for the exit codes.
#include <CLI/CLI.hpp>

#include "emulator/emud_cli.hpp"
#include "telemetry/naming.hpp"

namespace emud = npukit::emu::emud;

int main(int argc, char** argv) {
  CLI::App app{"npu-emud: run an emulated NPU node and control it"};
  app.require_subcommand(1);
  npukit::emu::DaemonOptions o;
  o.node_name = npukit::telemetry::node_name_from_env();
  bool foreground = false;
  bool as_json = false;
  int device = 0;
  std::string fault;
  double power_limit = 0;
  std::string ecc;
  auto node_opt = [&](CLI::App* c) {
    c->add_option("--node-name,--node", o.node_name, "node name (default $NPU_NODE or npukit)");
  };
  auto* start = app.add_subcommand("start", "start a node (returns once it is ready)");
  node_opt(start);
  start->add_option("--spec", o.spec, "node spec: 8x910B2, 8x910B3, 8x910, 4x310P3 or a JSON path")->capture_default_str();
  start->add_option("--speed", o.speed, "virtual seconds per wall second")->capture_default_str();
  start->add_option("--rate", o.rate_hz, "telemetry publish rate, Hz")->capture_default_str();
  start->add_option("--seed", o.seed, "seed of the emulated timing jitter")->capture_default_str();
  start->add_flag("--foreground", foreground, "do not daemonize");
  auto* stop = app.add_subcommand("stop", "stop a node");
  node_opt(stop);
  auto* status = app.add_subcommand("status", "is the node up? (exit 1 when absent or stale)");
  node_opt(status);
  status->add_flag("--json", as_json, "print the daemon's status reply as JSON");
  auto* inject = app.add_subcommand("inject", "inject a fault into a device");
  node_opt(inject);
  inject->add_option("--device,-d", device, "device id")->required();
  inject->add_option("--fault,-f", fault,
                     "over-temperature, hbm-double-bit, ecc-storm, aicore-hang, link-down, device-lost")->required();
  auto* clear = app.add_subcommand("clear", "clear a device's faults (a hang or a lost device needs reset)");
  node_opt(clear);
  clear->add_option("--device,-d", device, "device id")->required();
  auto* reset = app.add_subcommand("reset", "reset a device");
  node_opt(reset);
  reset->add_option("--device,-d", device, "device id")->required();
  auto* set = app.add_subcommand("set", "set a device's power limit or ECC mode");
  node_opt(set);
  set->add_option("--device,-d", device, "device id")->required();
  set->add_option("--power-limit", power_limit, "power limit, W (0 < W <= TDP)");
  set->add_option("--ecc", ecc, "on or off")->check(CLI::IsMember({"on", "off"}));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : emud::kExitUsage;
  }
  if (*start) return emud::start(o, foreground);
  if (*stop) return emud::stop(o.node_name);
  if (*status) return emud::status(o.node_name, as_json);
  if (*inject) return emud::device_request(o.node_name, "inject", device, {{"fault", fault}});
  if (*clear) return emud::device_request(o.node_name, "clear", device, nlohmann::json::object());
  if (*reset) return emud::device_request(o.node_name, "reset", device, nlohmann::json::object());
  nlohmann::json extra = nlohmann::json::object();
  if (set->count("--power-limit")) extra["power_limit_w"] = power_limit;
  if (!ecc.empty()) extra["ecc_enable"] = ecc == "on";
  if (extra.empty()) {
    std::fprintf(stderr, "npu-emud: set needs --power-limit or --ecc\n");
    return emud::kExitUsage;
  }
  return emud::device_request(o.node_name, "set", device, extra);
}
