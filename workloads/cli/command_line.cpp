// npu-run's command line (command_line.hpp).
#include "workloads/cli/command_line.hpp"

#include <algorithm>

#include <csignal>
#include <cstdio>
#include <cstdlib>

#include <CLI/CLI.hpp>
#include <iostream>

#include "emulator/device/spec.hpp"
#include "telemetry/cli/meta.hpp"
#include "telemetry/naming.hpp"
#include "workloads/cli/standalone.hpp"
#include "telemetry/version.hpp"

namespace npukit::work {

namespace {

std::atomic<bool> g_interrupted{false};
extern "C" void on_interrupt(int) { g_interrupted = true; }

// Everything the command line can set.
struct Args {
  std::string name, spec = "8x910B2", allocator, devices, node_name = telemetry::node_name_from_env();
  int64_t steps = 0;
  int hosts = 0, ranks = 0;  // --hosts / --ranks (0: not given)
  double speed = 1.0;
  double host_input_rate = -1;  // --host-input-rate (< 0: the workload's)
  uint64_t seed = 1;
  bool fast = false, standalone = false, hccl = false, list = false, no_fusion = false;
};

void add_options(CLI::App& app, Args& a) {
  app.add_option("workload", a.name, "built-in name or path to a workload .json")->type_name("WORKLOAD");
  app.add_flag("--list", a.list, "list the built-in workloads");
  app.add_option("--steps", a.steps, "steps to run (default: the workload's)")->check(CLI::Range(int64_t{1}, int64_t{1} << 40));
  app.add_option("--spec", a.spec, "node spec for --standalone and mlp-train (8x910B2, 8x910B3, 8x910, 8xA100, 4x310P3, a JSON path, or a cluster of H hosts: Hx<node>, e.g. 4x8x910B2)")
      ->capture_default_str()
      ->type_name("SPEC");
  app.add_option("--node-name,--node", a.node_name, "daemon node to submit to (default $NPU_NODE or npukit)")->type_name("NODE");
  app.add_option("--devices", a.devices, "comma-separated device ids, one per rank (data-parallel workloads scale)");
  app.add_option("--hosts", a.hosts, "cluster: run on the first N hosts (with --ranks: spread over them; default every device of each)")
      ->check(CLI::Range(1, 1024))
      ->type_name("N");
  app.add_option("--ranks", a.ranks, "cluster: R ranks in all, the same number on each host of --hosts (default 1 host)")
      ->check(CLI::Range(1, 1 << 16))
      ->type_name("R");
  app.add_flag("--fast", a.fast, "standalone: run as fast as possible instead of paced");
  app.add_option("--speed", a.speed, "standalone paced: virtual seconds per wall second")->capture_default_str();
  app.add_option("--allocator", a.allocator, "caching or direct (default: the workload's)")->check(CLI::IsMember({"caching", "direct"}));
  app.add_flag("--no-fusion", a.no_fusion, "every op its own kernel (no graph fusion), to see what fusion saves");
  app.add_option("--host-input-rate", a.host_input_rate,
                 "samples/s each host's input pipeline (data loader) makes for the job's ranks on it; 0: no limit (default: the workload's)")
      ->check(CLI::Range(0.0, 1e12))
      ->type_name("SAMPLES_PER_S");
  app.add_option("--seed", a.seed, "seed of the emulated timing jitter")->capture_default_str();
  app.add_flag("--standalone", a.standalone, "run on a node inside this process (no daemon)");
  app.add_flag("--hccl-format", a.hccl, "allreduce-sweep: print the HCCL test's columns");
}

// "0,3,5" -> {0, 3, 5}; a part that is not a number ends the program with a usage error.
std::optional<std::vector<int>> parse_devices(const std::string& text) {
  std::vector<int> out;
  for (std::size_t pos = 0; !text.empty() && pos <= text.size();) {
    std::size_t comma = text.find(',', pos);
    std::string part = text.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    try {
      out.push_back(std::stoi(part));
    } catch (const std::exception&) {
      std::fprintf(stderr, "npu-run: --devices: '%s' is not a device id\n", part.c_str());
      return std::nullopt;
    }
    if (std::find(out.begin(), out.end() - 1, out.back()) != out.end() - 1) {
      // One rank per device: a device named twice was a job failure ("a device may hold only one rank").
      std::fprintf(stderr, "npu-run: --devices: device %d is named twice (one rank per device)\n", out.back());
      return std::nullopt;
    }
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return out;
}

// --hosts H / --ranks R on a node of `spec_name`: R / H ranks on each of the first H hosts, from
// each host's first device, in host order (rank r on host r / (R/H)); one line when they do not fit.
Result<std::vector<int>> devices_for_hosts(const std::string& spec_name, int hosts, int ranks) {
  auto spec = emu::load_node_spec(spec_name);
  if (!spec.ok()) return spec.status();
  const int per_host_max = spec->devices_per_host(), cluster_hosts = spec->hosts;
  if (hosts == 0) hosts = 1;
  if (hosts > cluster_hosts) {
    return InvalidArgument("--hosts " + std::to_string(hosts) + ": " + spec->name + " has " + std::to_string(cluster_hosts) +
                           (cluster_hosts == 1 ? " host" : " hosts"));
  }
  if (ranks == 0) ranks = hosts * per_host_max;
  if (ranks % hosts != 0 || ranks / hosts > per_host_max) {
    return InvalidArgument("--ranks " + std::to_string(ranks) + " over " + std::to_string(hosts) + " host(s): each host takes the same number, at most " +
                           std::to_string(per_host_max) + " (its devices)");
  }
  std::vector<int> out;
  for (int h = 0; h < hosts; ++h) {
    for (int l = 0; l < ranks / hosts; ++l) out.push_back(h * per_host_max + l);
  }
  return out;
}

// Whether the node of `spec_name` has every device id in `devices` (ids run across a cluster's
// hosts). A spec that does not load leaves the check to the node.
Status check_devices(const std::string& spec_name, const std::vector<int>& devices) {
  auto spec = emu::load_node_spec(spec_name);
  if (!spec.ok()) return Status::Ok();
  const int count = spec->devices_per_host() * std::max(1, spec->hosts);
  for (int d : devices) {
    if (d >= count) {
      return InvalidArgument("invalid device id " + std::to_string(d) + " (this node has devices 0-" + std::to_string(count - 1) + ")");
    }
  }
  return Status::Ok();
}

// The node the job runs on: one inside this process, or the daemon's. Prints why not and sets
// `exit_code` when there is none.
std::unique_ptr<JobBackend> open_backend(const Args& a, int& exit_code) {
  if (a.standalone) {
    auto b = StandaloneBackend::create({.spec = a.spec, .seed = a.seed, .speed = a.speed}, a.fast);
    if (b.ok()) return std::move(*b);
    std::fprintf(stderr, "npu-run: %s\n", b.status().message().c_str());
    exit_code = kExitUsage;
    return nullptr;
  }
  // A name no node can have is a usage error, as in every program (it read "no node": exit 5).
  if (Status valid = telemetry::validate_node_name(a.node_name); !valid.ok()) {
    std::fprintf(stderr, "npu-run: %s\n", valid.message().c_str());
    exit_code = kExitUsage;
    return nullptr;
  }
  auto b = DaemonBackend::connect(a.node_name);
  if (b.ok()) return std::move(*b);
  bool denied = b.status().code() == Code::kPermissionDenied;
  std::fprintf(stderr, "npu-run: %s%s\n", b.status().message().c_str(), denied ? "" : " (or use --standalone)");
  exit_code = denied ? kExitPermission : kExitNoNode;
  return nullptr;
}

// Under `npu-prof record` a node inside this process would run unseen: the recorder reads the
// node it was pointed at, so the profile would hold something else. One line and a usage error.
bool refuse_in_process_under_recorder(const Args& a) {
  const char* recorded = std::getenv(telemetry::kRecorderNodeEnv);
  bool in_process = a.standalone || a.name == "mlp-train";
  if (recorded == nullptr || *recorded == '\0' || !in_process) return false;
  std::fprintf(stderr,
               "npu-run: %s runs on a node inside npu-run, which npu-prof record cannot see (it records node "
               "'%s'); %s\n",
               a.standalone ? "--standalone" : "mlp-train", recorded,
               a.standalone ? "drop --standalone to run the workload on that node" : "record another workload");
  return true;
}

// npu-run's manual beyond its options (man npu-run, and --help's footer).
cli::Manual manual() {
  cli::Manual m;
  m.name = "npu-run";
  m.summary = "run a workload on an emulated NPU node";
  m.description = {
      "Runs a workload, a built-in name (npu-run --list) or a workload JSON file, as a job on the node "
      "named by --node-name (default $NPU_NODE, else npukit), or with --standalone on a node inside this "
      "process. It prints one line per step (step number from 1, step time, throughput, ETA) and a "
      "summary: the mean step time over steps 2 and on, throughput and peak reserved memory per device.",
      "A job on a daemon node runs paced: virtual time follows the wall clock times the node's --speed. "
      "A --standalone run is paced too unless --fast runs it as fast as the host allows.",
  };
  m.exit_codes = {{"0", "the job completed"},
                  {"1", "the job failed; the runtime's message is printed (acl_rt_malloc failed, size=...)"}};
  for (auto& e : cli::shared_exit_codes(true)) m.exit_codes.push_back(e);
  m.environment = {cli::npu_node_variable(),
                   {"NPUKIT_WORKLOAD_DIR", "where the built-in workloads are (default: share/npukit/workloads beside the program)"},
                   {"NPUKIT_SPEC_DIR", "where node and device specs are, for --standalone (default: share/npukit/specs)"}};
  m.examples = {{"npu-run --list", "the built-in workloads"},
                {"npu-run resnet50-train --steps 20", "20 steps on the default node"},
                {"npu-run ernie3-train --standalone --fast --steps 3", "no daemon: a node inside npu-run, as fast as possible"},
                {"npu-run bert-large-train --allocator direct", "the same job with the malloc/free allocator"},
                {"npu-run resnet50-train --no-fusion", "every op its own kernel: what graph fusion saves"}};
  m.see_also = {"npu-emud(1)", "npu-smi(1)", "npu-prof(1)"};
  return m;
}

void build_app(CLI::App& app, Args& a) {
  cli::present(app, manual(), "run a workload (a built-in name or a workload JSON file) on an emulated NPU node");
  add_options(app, a);
}

cli::Program program() {
  CLI::App app;
  Args a;
  build_app(app, a);
  return {cli::describe(app), manual(), [](const std::string& kind, const std::vector<std::string>&) {
            std::vector<std::string> out;
            if (kind == "SPEC") out = emu::catalog_node_names();
            if (kind == "WORKLOAD") out = builtin_names();
            return out;
          }};
}

constexpr int kParsed = -1;

// The command line into `a`: kParsed, or the exit code (help, --list or a usage error printed).
int parse(CLI::App& app, Args& a, int argc, const char* const* argv) {
  build_app(app, a);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return cli::parse_error_exit(app, e);
  }
  if (a.list || a.name.empty()) {
    for (const auto& n : builtin_names()) std::printf("%s\n", n.c_str());
    return a.list ? 0 : kExitUsage;
  }
  if (refuse_in_process_under_recorder(a)) return kExitUsage;
  // Options of an in-process node; a daemon's node has its own, set when it started.
  struct InProcessOnly { const char* option; const char* daemon_has; };
  for (auto [option, daemon_has] : {InProcessOnly{"--spec", "a daemon node's spec is set by npu-emud start --spec"},
                                    InProcessOnly{"--fast", "a daemon node runs at the pace set by npu-emud start --speed"},
                                    InProcessOnly{"--speed", "a daemon node runs at the pace set by npu-emud start --speed"}}) {
    if (app.count(option) > 0 && !a.standalone && a.name != "mlp-train") {
      std::fprintf(stderr, "npu-run: %s applies to --standalone runs; %s\n", option, daemon_has);
      return kExitUsage;
    }
  }
  if (!parse_devices(a.devices)) return kExitUsage;
  if (!a.devices.empty() && (a.hosts > 0 || a.ranks > 0)) {
    std::fprintf(stderr, "npu-run: --devices names each rank's device; --hosts/--ranks place the ranks: give one or the other\n");
    return kExitUsage;
  }
  return kParsed;
}

int run(const Args& a) {
  if (a.name == "mlp-train") return run_mlp_train(a.steps > 0 ? static_cast<int>(a.steps) : 50, a.seed, a.spec, stdout, stderr);
  auto w = load_workload(a.name);
  if (!w.ok()) {
    std::fprintf(stderr, "npu-run: %s\n", w.status().message().c_str());
    return kExitUsage;
  }
  CompileOptions co;
  co.steps = a.steps;
  co.allocator = a.allocator;
  co.fusion = !a.no_fusion;
  co.host_input_samples_per_s = a.host_input_rate;
  co.devices = *parse_devices(a.devices);
  int rc = 0;
  std::unique_ptr<JobBackend> backend;
  if (a.hosts > 0 || a.ranks > 0) {  // placement needs the node's hosts: open it first
    backend = open_backend(a, rc);
    if (!backend) return rc;
    auto devices = devices_for_hosts(backend->spec_name(), a.hosts, a.ranks);
    if (!devices.ok()) {
      std::fprintf(stderr, "npu-run: %s\n", devices.status().message().c_str());
      return kExitUsage;
    }
    co.devices = *devices;
  }
  if (!co.devices.empty() && !backend) {  // ids the node does not have: a bad value, refused before the job
    backend = open_backend(a, rc);
    if (!backend) return rc;
    if (Status s = check_devices(backend->spec_name(), co.devices); !s.ok()) {
      std::fprintf(stderr, "npu-run: --devices: %s\n", s.message().c_str());
      return kExitUsage;
    }
  }
  auto points = compile_workload(*w, co);
  if (!points.ok()) {
    std::fprintf(stderr, "npu-run: %s\n", points.status().message().c_str());
    return kExitUsage;
  }
  if (!backend) backend = open_backend(a, rc);
  if (!backend) return rc;
  // The fault timeline's devices and links are the file's values: one the node does not have is
  // a workload error (it failed the job, exit 1, naming neither the file nor the field).
  for (std::size_t i = 0; i < w->faults.size(); ++i) {
    const FaultAt& f = w->faults[i];
    std::vector<int> named = {f.device};
    if (f.peer >= 0) named.push_back(f.peer);
    if (Status s = check_devices(backend->spec_name(), named); !s.ok()) {
      std::fprintf(stderr, "npu-run: workload error: %s: faults[%zu].%s: %s\n", a.name.c_str(), i, f.peer == -2 ? "device" : "link",
                   s.message().c_str());
      return kExitUsage;
    }
  }
  std::signal(SIGINT, on_interrupt);
  std::signal(SIGTERM, on_interrupt);
  return run_workload(*w, *points, *backend, {.hccl_format = a.hccl, .interrupted = &g_interrupted});
}

}  // namespace

int run_command_line(int argc, const char* const* argv) {
  if (auto rc = cli::answer_meta_request(argc, argv, program, std::cout)) return *rc;
  CLI::App app;
  Args a;
  int rc = parse(app, a, argc, argv);
  return rc == kParsed ? run(a) : rc;
}

int check_command_line(int argc, const char* const* argv) {
  CLI::App app;
  Args a;
  int rc = parse(app, a, argc, argv);
  return rc == kParsed ? kExitOk : rc;
}

}  // namespace npukit::work

