// npu-emu-demo: runs the runtime demo on an emulated node and prints one row per device.
// Exit codes: 0 ok, 2 usage error, 3 bad spec or runtime error.
#include <cstdio>

#include <CLI/CLI.hpp>

#include "emulator/daemon/demo.hpp"

namespace {

void print_report(const npukit::emu::DemoReport& r) {
  std::printf("npukit runtime demo: %s node (%zu x %s, peak %.0f TFLOPS fp16 each), %llu tasks\n\n",
              r.node.c_str(), r.devices.size(), r.chip.c_str(), r.peak_tflops_fp16,
              static_cast<unsigned long long>(r.tasks));
  std::printf("%-4s %-13s %10s %8s %9s %9s %7s %12s %12s %12s %7s %6s\n", "NPU", "Bus-Id",
              "Time(ms)", "Kernels", "TFLOPS", "HBM(GB/s)", "AICore", "Alloc(MiB)", "Reserv(MiB)",
              "Peak(MiB)", "Allocs", "Frag");
  for (const auto& d : r.devices) {
    std::printf("%-4d %-13s %10.3f %8llu %9.1f %9.1f %6.1f%% %12llu %12llu %12llu %7llu %5.1f%%\n",
                d.device, d.bus_id.c_str(), static_cast<double>(d.modelled_ns) / 1e6,
                static_cast<unsigned long long>(d.kernels), d.achieved_tflops, d.hbm_gbps,
                d.aicore_util * 100.0,
                static_cast<unsigned long long>(d.allocator.allocated_bytes >> 20),
                static_cast<unsigned long long>(d.allocator.reserved_bytes >> 20),
                static_cast<unsigned long long>(d.allocator.peak_allocated_bytes >> 20),
                static_cast<unsigned long long>(d.allocator.alloc_count),
                d.allocator.fragmentation * 100.0);
  }
  std::printf("\nnode makespan %.3f ms of virtual time\n", static_cast<double>(r.makespan_ns) / 1e6);
}

}  // namespace

int main(int argc, char** argv) {
  npukit::emu::DemoOptions o;
  std::string allocator = "caching";
  CLI::App app{"Run a matmul-heavy program on every device of an emulated NPU node"};
  app.add_option("--node", o.node, "node spec name or JSON path")->capture_default_str();
  app.add_option("--steps", o.steps, "steps per device")->capture_default_str()->check(CLI::Range(1, 1 << 20));
  app.add_option("--layers", o.layers, "layers per step")->capture_default_str()->check(CLI::Range(1, 1 << 20));
  app.add_option("--tokens", o.tokens, "rows per matmul (batch x sequence)")->capture_default_str()->check(CLI::Range(1, 1 << 20));
  app.add_option("--hidden", o.hidden, "hidden size")->capture_default_str()->check(CLI::Range(1, 1 << 20));
  app.add_option("--seed", o.seed, "seed of the emulated timing jitter")->capture_default_str();
  app.add_option("--allocator", allocator, "caching or direct")->capture_default_str()
      ->check(CLI::IsMember({"caching", "direct"}));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;  // --help is not an error
  }
  o.allocator = *npukit::emu::parse_allocator_policy(allocator);
  auto report = npukit::emu::run_demo(o);
  if (!report.ok()) {
    std::fprintf(stderr, "npu-emu-demo: %s\n", report.status().message().c_str());
    return 3;
  }
  print_report(*report);
  return 0;
}
