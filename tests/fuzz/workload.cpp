// Fuzz target: a workload file, as `npu-run FILE --standalone --fast --steps 1` reads it — parse,
// validate, compile, and run one step on an in-process node. A run still going after 2 s of
// wall time is interrupted, as Ctrl-C would, and must then end.
#include <cstdio>
#include <thread>

#include "tests/fuzz/fuzz_util.hpp"
#include "telemetry/json_reader.hpp"
#include "workloads/cli/standalone.hpp"
#include "workloads/compiler.hpp"

namespace {

namespace work = npukit::work;

void run_one_step(const work::Workload& w, const std::vector<work::CompiledPoint>& points) {
  auto backend = work::StandaloneBackend::create({.spec = "8x910B2", .seed = 1}, /*fast=*/true);
  if (!backend.ok()) return;
  std::atomic<bool> interrupted{false};
  std::atomic<bool> finished{false};
  std::thread watchdog([&] {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
    while (!finished && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    interrupted = true;
  });
  static std::FILE* devnull = std::fopen("/dev/null", "w");
  work::run_workload(w, points, **backend, {.interrupted = &interrupted, .out = devnull, .err = devnull});
  finished = true;
  watchdog.join();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  std::string text(npukit::fuzz::as_text(data, size));
  auto doc = npukit::parse_json_text(text, "fuzz.json", "workload error");
  if (!doc.ok()) return 0;
  auto w = work::parse_workload(*doc, "fuzz.json");
  if (!w.ok()) return 0;
  work::CompileOptions options;
  options.steps = 1;
  auto points = work::compile_workload(*w, options);
  if (!points.ok()) return 0;
  run_one_step(*w, *points);
  return 0;
}
