// npu-emud's command line (emud_cli.hpp: run_command_line, check_command_line).
#include <CLI/CLI.hpp>
#include <iostream>

#include "emulator/daemon/emud_cli.hpp"
#include "emulator/device/health.hpp"
#include "emulator/device/spec.hpp"
#include "telemetry/cli/meta.hpp"
#include "telemetry/naming.hpp"
#include "telemetry/version.hpp"

namespace npukit::emu::emud {

namespace {

// Everything the command line can set.
struct Args {
  DaemonOptions options;
  bool foreground = false;
  bool as_json = false;
  int device = -1;
  int npu_id = -1;    // -i CARD [-c CHIP]: npu-smi's ids
  int chip_id = 0;
  std::string link;   // "2-3"
  int host = -1;      // a cluster's host
  std::string fault;
  double power_limit = 0;
  std::string ecc;
  std::string access = "owner";
};

struct Commands {
  CLI::App* start;
  CLI::App* stop;
  CLI::App* status;
  CLI::App* inject;
  CLI::App* clear;
  CLI::App* reset;
  CLI::App* set;
};

CLI::App* add_command(CLI::App& app, Args& a, const char* name, const char* help) {
  CLI::App* c = app.add_subcommand(name, help);
  c->add_option("--node-name,--node", a.options.node_name, "node name (default $NPU_NODE or npukit)")->type_name("NODE");
  return c;
}

// start, stop, status: the node as a whole.
void add_node_commands(CLI::App& app, Args& a, Commands& c) {
  auto& o = a.options;
  c.start = add_command(app, a, "start", "start a node (returns once it is ready)");
  c.start->add_option("--spec", o.spec, "node spec: 8x910B2, 8x910B3, 8x910, 8xA100, 4x310P3, a JSON path, or a cluster of H hosts: Hx<node> (4x8x910B2; each host its own node <name>-<h>)")
      ->capture_default_str()
      ->type_name("SPEC");
  // (0, 1000], as the daemon takes them: a value outside is a usage error, not a node that failed.
  static_assert(kMaxSpeed == 1000 && kMaxRateHz == 1000, "the validator's text says (0, 1000]");
  const CLI::Validator up_to_1000(
      [](std::string& text) {
        double v = 0;
        try {
          v = std::stod(text);
        } catch (const std::exception&) {
          return std::string("not a number: ") + text;
        }
        return v > 0 && v <= kMaxSpeed ? std::string() : "must be in (0, 1000], got " + text;
      },
      "(0, 1000]");
  c.start->add_option("--speed", o.speed, "virtual seconds per wall second")->check(up_to_1000)->capture_default_str();
  c.start->add_option("--rate", o.rate_hz, "telemetry publish rate, Hz")->check(up_to_1000)->capture_default_str();
  c.start->add_option("--seed", o.seed, "seed of the emulated timing jitter")->capture_default_str();
  c.start->add_flag("--foreground", a.foreground, "do not daemonize");
  c.start->add_option("--access", a.access,
                      "who may read the node: owner (default: segment and socket 0600), group (0640/0660, "
                      "the daemon's group), all (0644/0666); control stays the owner's")
      ->check(CLI::IsMember({"owner", "group", "all"}))
      ->capture_default_str();
  c.stop = add_command(app, a, "stop", "stop a node");
  c.status = add_command(app, a, "status", "is the node up? (exit 5 when absent or stale)");
  c.status->add_flag("--json", a.as_json, "print the daemon's status reply as JSON");
}

// inject, clear, reset, set: one device, named by --device (its index) or by npu-smi's ids
// -i CARD [-c CHIP]; inject and clear also take one link (--link A-B).
void add_device_commands(CLI::App& app, Args& a, Commands& c) {
  auto device_command = [&](const char* name, const char* help, bool link) {
    CLI::App* d = add_command(app, a, name, help);
    auto* dev = d->add_option("--device,-d", a.device, "device index (0-based, as npu-emud status lists them)")
                    ->check(CLI::Range(0, 65535));
    auto* npu = d->add_option("-i,--npu-id", a.npu_id, "NPU (card) id, as npu-smi -i takes it")->check(CLI::Range(0, 65535));
    d->add_option("-c,--chip-id", a.chip_id, "chip id within the card, as npu-smi -c takes it (default 0)")
        ->needs(npu)
        ->check(CLI::Range(0, 65535));
    dev->excludes(npu);
    if (link) {
      auto* l = d->add_option("--link", a.link, "one link instead of a device: A-B (device indices), A-host or A-roce");
      l->excludes(dev)->excludes(npu);
      auto* h = d->add_option("--host", a.host, "a cluster's host instead of a device: its index (host H is node <name>-H)")
                    ->check(CLI::Range(0, 1023))  // a cluster has at most 1,024 hosts
                    ->type_name("H");
      h->excludes(dev)->excludes(npu)->excludes(l);
    }
    return d;
  };
  c.inject = device_command("inject", "inject a fault into a device or a link", true);
  c.inject->add_option("--fault,-f", a.fault,
                       fault_names(acts_on_device) + "; on a link: " + fault_names(acts_on_link) + "; on a host: " +
                           fault_names(acts_on_host))
      ->required()
      ->type_name("FAULT");
  c.clear = device_command("clear", "clear a device's or a link's faults (a hang or a lost device needs reset)", true);
  c.reset = device_command("reset", "reset a device", false);
  c.set = device_command("set", "set a device's power limit or ECC mode", false);
  c.set->add_option("--power-limit", a.power_limit, "power limit, W (0 < W <= TDP)");
  c.set->add_option("--ecc", a.ecc, "on or off")->check(CLI::IsMember({"on", "off"}));
}

// The request's target: {"link"}, {"npu_id", "chip_id"} or {"device"}; null when none was given.
nlohmann::json target_of(const Args& a) {
  if (!a.link.empty()) return {{"link", a.link}};
  if (a.host >= 0) return {{"host", a.host}};
  if (a.npu_id >= 0) return {{"npu_id", a.npu_id}, {"chip_id", a.chip_id}};
  if (a.device >= 0) return {{"device", a.device}};
  return nullptr;
}

int dispatch(const Commands& c, const Args& a) {
  const std::string& node = a.options.node_name;
  if (*c.start) {
    DaemonOptions o = a.options;
    o.access.scope = a.access == "all" ? telemetry::AccessScope::kAll : a.access == "group" ? telemetry::AccessScope::kGroup : telemetry::AccessScope::kOwner;
    return start(o, a.foreground);
  }
  if (*c.stop) return stop(node);
  if (*c.status) return status(node, a.as_json);
  nlohmann::json target = target_of(a);  // parse() checked there is one
  if (*c.inject) return device_request(node, "inject", target, {{"fault", a.fault}});
  if (*c.clear) return device_request(node, "clear", target, nlohmann::json::object());
  if (*c.reset) return device_request(node, "reset", target, nlohmann::json::object());
  nlohmann::json extra = nlohmann::json::object();
  if (c.set->count("--power-limit")) extra["power_limit_w"] = a.power_limit;
  if (!a.ecc.empty()) extra["ecc_enable"] = a.ecc == "on";  // parse() checked one is given
  return device_request(node, "set", target, extra);
}

// npu-emud's manual beyond its options (man npu-emud, and --help's footer).
cli::Manual manual() {
  cli::Manual m;
  m.name = "npu-emud";
  m.summary = "run an emulated NPU node and control it";
  m.description = {
      "start runs a node: an emulated machine of NPUs (8x910B2 by default; --spec names another, or a "
      "JSON file) that executes the jobs npu-run submits and publishes counters and events on a bus "
      "that npu-smi, npu-top, npu-exporter and npu-prof read. It returns once the node is ready and "
      "keeps running in the background; stop ends it. A node is named (--node-name, else $NPU_NODE, "
      "else npukit), so several can run side by side.",
      "inject puts a fault on a device or a link (the faults real hardware cannot produce on demand); "
      "clear lifts it; reset resets a device; set changes its power limit or ECC mode. Each returns "
      "once the node has applied the request.",
      "A node is private to the user who started it unless --access group or all shares reading; "
      "control (stop, inject, set, jobs) stays its owner's.",
  };
  m.exit_codes = {{"0", "done (status: the node is up)"},
                  {"3", "the node could not start (bad spec, name taken) or refused the request (unknown fault, value out of range)"}};
  for (auto& e : cli::shared_exit_codes(false)) m.exit_codes.push_back(e);
  m.environment = {cli::npu_node_variable(),
                   {"NPUKIT_SPEC_DIR", "where node and device specs are (default: share/npukit/specs beside the program)"},
                   {"XDG_RUNTIME_DIR", "where the control socket goes (default /tmp)"}};
  m.examples = {{"npu-emud start --node-name lab --spec 8x910B2", "an 8-NPU 910B2 node named lab"},
                {"npu-emud status --node-name lab", "is it up, which faults are active"},
                {"npu-emud inject --node-name lab --device 3 --fault over-temperature", "heat device 3 until cleared"},
                {"npu-emud set --node-name lab --device 0 --power-limit 200", "cap device 0 at 200 W"},
                {"npu-emud stop --node-name lab", "stop it"}};
  m.see_also = {"npu-run(1)", "npu-smi(1)", "npu-top(1)", "npu-exporter(1)", "npu-prof(1)"};
  return m;
}

void build_app(CLI::App& app, Args& args, Commands& commands) {
  cli::present(app, manual(), "run an emulated NPU node and control it");
  app.require_subcommand(1);
  args.options.node_name = telemetry::node_name_from_env();
  add_node_commands(app, args, commands);
  add_device_commands(app, args, commands);
}

cli::Program program() {
  CLI::App app;
  Args args;
  Commands commands{};
  build_app(app, args, commands);
  return {cli::describe(app), manual(), [](const std::string& kind, const std::vector<std::string>&) {
            std::vector<std::string> out;
            if (kind == "SPEC") out = catalog_node_names();
            if (kind == "FAULT") {
              for (FaultKind f : all_faults()) out.push_back(fault_name(f));
            }
            return out;
          }};
}

constexpr int kParsed = -1;

// The command line into `args`: kParsed, or the exit code (help printed: 0; usage: kExitUsage).
int parse(CLI::App& app, Args& args, Commands& commands, int argc, const char* const* argv) {
  build_app(app, args, commands);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return cli::parse_error_exit(app, e);
  }
  bool device_command = *commands.inject || *commands.clear || *commands.reset || *commands.set;
  if (device_command && target_of(args).is_null()) {
    std::fprintf(stderr, "npu-emud: name the device (--device D, or -i CARD [-c CHIP])%s\n",
                 *commands.inject || *commands.clear ? ", the link (--link A-B) or the host (--host H)" : "");
    return kExitUsage;
  }
  if (*commands.set && !commands.set->count("--power-limit") && args.ecc.empty()) {
    std::fprintf(stderr, "npu-emud: set needs --power-limit or --ecc\n");
    return kExitUsage;
  }
  // A name no node can have is a usage error in every command (status said "no node": exit 5).
  if (Status s = telemetry::validate_node_name(args.options.node_name); !s.ok()) {
    std::fprintf(stderr, "npu-emud: %s\n", s.message().c_str());
    return kExitUsage;
  }
  return kParsed;
}

}  // namespace

int run_command_line(int argc, const char* const* argv) {
  if (auto rc = cli::answer_meta_request(argc, argv, program, std::cout)) return *rc;
  CLI::App app;
  Args args;
  Commands commands{};
  int rc = parse(app, args, commands, argc, argv);
  return rc == kParsed ? dispatch(commands, args) : rc;
}

int check_command_line(int argc, const char* const* argv) {
  CLI::App app;
  Args args;
  Commands commands{};
  int rc = parse(app, args, commands, argc, argv);
  return rc == kParsed ? kExitOk : rc;
}

}  // namespace npukit::emu::emud
