// Fuzz target: a program, as the daemon's `submit` request carries it (npu-run sends one per
// workload point; anyone who can reach the socket may send their own). Parsed, written back
// (parse(write(p)) must write the same JSON: a program survives the wire unchanged), then run
// on an in-process node in fast mode until it ends or 2 s of wall time pass.
#include <cstdio>
#include <cstdlib>

#include "tests/fuzz/fuzz_util.hpp"
#include "telemetry/json_reader.hpp"
#include "telemetry/program.hpp"
#include "workloads/cli/standalone.hpp"

namespace {

namespace tf = npukit::telemetry;
namespace work = npukit::work;

void expect_round_trip(const tf::Program& p) {
  nlohmann::json once = tf::program_to_json(p);
  auto again = tf::parse_program(once);
  if (!again.ok()) {
    std::fprintf(stderr, "a written program does not parse back: %s\n", again.status().message().c_str());
    std::abort();
  }
  if (tf::program_to_json(*again) != once) {
    std::fprintf(stderr, "a program changed on its way through JSON\n");
    std::abort();
  }
}

void run(const tf::Program& p) {
  auto backend = work::StandaloneBackend::create({.spec = "8x910B2", .seed = 1}, /*fast=*/true);
  if (!backend.ok()) return;
  auto job = (*backend)->submit(p);
  if (!job.ok()) return;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  while (std::chrono::steady_clock::now() < deadline) {
    auto poll = (*backend)->poll(*job, 0);
    if (!poll.ok() || poll->state != "running") return;
    (*backend)->wait(*job);
  }
  (void)(*backend)->cancel(*job);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  std::string text(npukit::fuzz::as_text(data, size));
  auto doc = npukit::parse_json_text(text, "program.json", "program error");
  if (!doc.ok()) return 0;
  auto program = tf::parse_program(*doc);
  if (!program.ok()) return 0;
  expect_round_trip(*program);
  run(*program);
  return 0;
}
