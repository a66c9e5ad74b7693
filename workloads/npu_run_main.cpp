// npu-run: run a workload on the emulated node. Exit codes in workloads/run.hpp.
#include <csignal>

#include <CLI/CLI.hpp>

#include "telemetry/naming.hpp"
#include "workloads/npu_run_standalone.hpp"

namespace {

std::atomic<bool> g_interrupted{false};
extern "C" void on_interrupt(int) { g_interrupted = true; }

}  // namespace

int main(int argc, char** argv) {
  using namespace npukit;
  std::string name, spec = "8x910B2", allocator, devices_arg, node_name = telemetry::node_name_from_env();
  int64_t steps = 0;
  double speed = 1.0;
  uint64_t seed = 1;
  bool fast = false, standalone = false, hccl = false, list = false;
  CLI::App app{"npu-run: run a workload (a built-in name or a workload JSON file) on an emulated NPU node"};
  app.add_option("workload", name, "built-in name or path to a workload .json");
  app.add_flag("--list", list, "list the built-in workloads");
  app.add_option("--steps", steps, "steps to run (default: the workload's)")->check(CLI::Range(int64_t{1}, int64_t{1} << 40));
  app.add_option("--node", spec, "node spec for --standalone (8x910B2, 8x910B3, 8x910, 4x310P3 or a JSON path)")->capture_default_str();
  app.add_option("--node-name", node_name, "daemon node to submit to (default $NPU_NODE or npukit)");
  app.add_option("--devices", devices_arg, "comma-separated device ids, one per rank (data-parallel workloads scale)");
  app.add_flag("--fast", fast, "standalone: run as fast as possible instead of paced");
  app.add_option("--speed", speed, "standalone paced: virtual seconds per wall second")->capture_default_str();
  app.add_option("--allocator", allocator, "caching or direct (default: the workload's)")->check(CLI::IsMember({"caching", "direct"}));
  app.add_option("--seed", seed, "seed of the emulated timing jitter")->capture_default_str();
  app.add_flag("--standalone", standalone, "run on a node inside this process (no daemon)");
  app.add_flag("--hccl-format", hccl, "allreduce-sweep: print the HCCL test's columns");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : work::kExitUsage;
  }
  if (list || name.empty()) {
    for (const auto& n : work::builtin_names()) std::printf("%s\n", n.c_str());
    std::printf("mlp-train\n");
    return list ? 0 : work::kExitUsage;
  }
  if (name == "mlp-train") return work::run_mlp_train(steps > 0 ? static_cast<int>(steps) : 50, seed, spec, stdout, stderr);
  auto w = work::load_workload(name);
  if (!w.ok()) {
    std::fprintf(stderr, "npu-run: %s\n", w.status().message().c_str());
    return work::kExitUsage;
  }
  work::CompileOptions co;
  co.steps = steps;
  co.allocator = allocator;
  for (std::size_t pos = 0; !devices_arg.empty() && pos <= devices_arg.size();) {
    std::size_t comma = devices_arg.find(',', pos);
    std::string part = devices_arg.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    try {
      co.devices.push_back(std::stoi(part));
    } catch (const std::exception&) {
      std::fprintf(stderr, "npu-run: --devices: '%s' is not a device id\n", part.c_str());
      return work::kExitUsage;
    }
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  auto points = work::compile_workload(*w, co);
  if (!points.ok()) {
    std::fprintf(stderr, "npu-run: %s\n", points.status().message().c_str());
    return work::kExitUsage;
  }
  std::unique_ptr<work::JobBackend> backend;
  if (standalone) {
    auto b = work::StandaloneBackend::create({.spec = spec, .seed = seed, .speed = speed}, fast);
    if (!b.ok()) {
      std::fprintf(stderr, "npu-run: %s\n", b.status().message().c_str());
      return work::kExitUsage;
    }
    backend = std::move(*b);
  } else {
    auto b = work::DaemonBackend::connect(node_name);
    if (!b.ok()) {
      std::fprintf(stderr, "npu-run: %s (or use --standalone)\n", b.status().message().c_str());
      return work::kExitNoNode;
    }
    backend = std::move(*b);
  }
  std::signal(SIGINT, on_interrupt);
  std::signal(SIGTERM, on_interrupt);
  return work::run_workload(*w, *points, *backend, {.hccl_format = hccl, .interrupted = &g_interrupted});
}
