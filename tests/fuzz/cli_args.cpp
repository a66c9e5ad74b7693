// Fuzz target: every CLI's arguments. The first byte picks the program; the rest, split at NUL
// and newline bytes, are its arguments (at most 24). npu-smi runs for real against a daemon in
// this process (its reads, its set/reset/diag requests); the others are parsed and checked as
// their main does, running nothing (no node is started, no workload read, no command recorded).
// Each must return one of its documented exit codes.
#include <cstdio>
#include <cstdlib>
#include <set>
#include <sstream>
#include <vector>

#include "emulator/daemon/emud_cli.hpp"
#include "profiler/cli/cli.hpp"
#include "smi/cli/cli.hpp"
#include "smi/exporter/server.hpp"
#include "smi/top/app.hpp"
#include "tests/fuzz/fuzz_daemon.hpp"
#include "tests/fuzz/fuzz_util.hpp"
#include "workloads/cli/command_line.hpp"
#include "workloads/run.hpp"

namespace {

namespace tf = npukit::telemetry;

std::unique_ptr<npukit::fuzz::RunningDaemon> g_daemon;
std::string g_node;

void expect_one_of(int rc, const std::set<int>& documented, const char* program) {
  if (documented.count(rc) == 0) {
    std::fprintf(stderr, "cli fuzz: %s exited %d, not a documented code\n", program, rc);
    std::abort();
  }
}

int run_smi(const std::vector<const char*>& argv) {
  if (!g_daemon || g_daemon->ended()) {  // `npu-smi` cannot stop it, but be safe
    g_daemon.reset();
    g_daemon = std::make_unique<npukit::fuzz::RunningDaemon>(g_node);
  }
  std::ostringstream out, err;
  std::istringstream in("n\n");
  std::stop_source stopped;
  stopped.request_stop();  // `watch` and `-l` loops end after their first round
  npukit::smi::Context ctx;
  ctx.out = &out;
  ctx.err = &err;
  ctx.in = &in;
  ctx.open = [] { return tf::open_client("shm", {.node = g_node}); };
  ctx.numa_cpulists = {"0-1"};
  ctx.timestamp = [] { return std::string("2026-01-01T00:00:00.000Z"); };
  ctx.stop = stopped.get_token();
  return npukit::smi::run_cli(ctx, static_cast<int>(argv.size()), argv.data());
}

int check_exporter(const std::vector<const char*>& argv) {
  npukit::smi::exporter::ExporterOptions o;
  bool help = false;
  std::string error;
  return npukit::smi::exporter::parse_exporter_args(static_cast<int>(argv.size()), argv.data(), o, help, error) ? 0 : 2;
}

int check_top(const std::vector<const char*>& argv) {
  npukit::top::Options o;
  int rc = npukit::top::parse_command_line(static_cast<int>(argv.size()), argv.data(), o);
  return rc == npukit::top::kParsedArgs ? 0 : rc;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  g_node = "fz-cli-" + std::to_string(::getpid());
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const uint8_t program = data[0] % 6;
  std::vector<std::string> args;
  std::string current;
  for (std::size_t i = 1; i < size && args.size() < 24; ++i) {
    if (data[i] == 0 || data[i] == '\n') {
      args.push_back(current);
      current.clear();
    } else {
      current += static_cast<char>(data[i]);
    }
  }
  if (args.size() < 24 && !current.empty()) args.push_back(current);
  static const char* const kNames[] = {"npu-smi", "npu-prof", "npu-emud", "npu-run", "npu-top", "npu-exporter"};
  std::vector<const char*> argv = {kNames[program]};
  for (const auto& a : args) argv.push_back(a.c_str());
  const int argc = static_cast<int>(argv.size());
  namespace smi = npukit::smi;
  switch (program) {
    case 0:
      expect_one_of(run_smi(argv),
                    {smi::kExitOk, smi::kExitInvalidParameter, smi::kExitNotFound, smi::kExitInvalidDeviceId,
                     smi::kExitAborted, smi::kExitDcmiFailed, smi::kExitNotSupported, smi::kExitHealthWarn,
                     smi::kExitHealthFail, smi::kExitHealthUnknown, smi::kExitUsage, smi::kExitNoNode,
                     smi::kExitBusError, smi::kExitInterrupted},
                    "npu-smi");
      break;
    case 1:
      expect_one_of(npukit::prof::check_args(argc, argv.data()), {npukit::prof::kExitOk, npukit::prof::kExitUsage}, "npu-prof");
      break;
    case 2: {
      namespace emud = npukit::emu::emud;
      expect_one_of(emud::check_command_line(argc, argv.data()), {emud::kExitOk, emud::kExitUsage}, "npu-emud");
      break;
    }
    case 3:
      expect_one_of(npukit::work::check_command_line(argc, argv.data()), {npukit::work::kExitOk, npukit::work::kExitUsage},
                    "npu-run");
      break;
    case 4:
      expect_one_of(check_top(argv), {npukit::top::kExitOk, npukit::top::kExitUsage}, "npu-top");
      break;
    default:
      expect_one_of(check_exporter(argv), {0, 2}, "npu-exporter");
      break;
  }
  return 0;
}
