// Active diagnostics in levels, like `dcgmi diag -r`. Each test judges every selected device
// (or the node as a whole) and yields per-device verdicts with one-line reasons; a run's verdict
// is the worst of its tests.
//
// Level 1 ("quick", seconds: deployment and health), computed from one Snapshot:
//   Deployment / Node Reachable  the node's bus is live (UNKNOWN when stale, as in health)
//   Deployment / Device Count    the bus carries as many cards as the node spec promises
//   Deployment / Device Specs    each chip has AI cores, memory, a max clock and a PCIe bus id
//   Hardware   / Health Rules    the passive health rules (health_rules.hpp), worst per chip
//   Deployment / Processes       WARN when processes hold a chip (active tests would compete)
// Level 2 ("medium": + active tests; programs submitted to the node's daemon, every selected
// device at once, measured in the node's virtual time; diag_active.cpp):
//   Hardware    / Memory Pattern   writes and reads back 4 bit patterns over all free HBM;
//                                  FAIL names every page that failed (hbm-double-bit faults)
//   Integration / PCIe Bandwidth   H2D and D2H copies against the node's PCIe reference
//   Integration / HCCS Bandwidth   Send/Recv over every HCCS link of the topology, pair by pair
//   Performance / Compute          fp16 8192^3 matmuls: achieved TFLOPS against the reference
//   Performance / Memory Bandwidth device-to-device copies against the HBM (DDR) reference
// Level 3 ("long": + Stress / Targeted Stress; diag_stress.cpp): matmuls on every device for
//   DiagOptions::stress_seconds with a thermal watch (peak temperature, throttling, power, ECC,
//   sustained throughput) sampled from the bus while it runs.
// Active tests run only on idle chips: a chip some process holds gets WARN "not run: ...".
// Measured figures are judged against the node's healthy references (the daemon's "reference"
// request, as DCGM judges against per-SKU targets): PASS at >= 90%, WARN at >= 75%, else FAIL.
//
// Thread-safety: run_diag() over one DiagContext at a time; level 1 is pure over the Snapshot.
#pragma once

#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "probes/health/health_rules.hpp"
#include "telemetry/client.hpp"
#include "telemetry/snapshot.hpp"

namespace npukit::probes {

struct DiagDeviceResult {
  int device = 0;
  Verdict verdict = Verdict::kPass;
  std::vector<std::string> reasons;  // why not PASS (empty on PASS)
  std::string measured;              // what an active test measured ("312.4 TFLOPS of 314.3"), or ""
};

struct DiagTestResult {
  std::string name;
  std::string category;
  bool per_device = true;  // false: one node-wide verdict (devices[0] carries it, device -1)
  Verdict verdict = Verdict::kPass;
  std::vector<DiagDeviceResult> devices;
};

struct DiagReport {
  int level = 1;
  Verdict verdict = Verdict::kPass;
  std::vector<DiagTestResult> tests;
};

struct DiagTest;

struct DiagOptions {
  double stress_seconds = 60;  // level 3: how long the stress runs, in the node's virtual seconds
};

// What the tests of one run see. Level 1 needs only the snapshot; active tests (level >= 2)
// submit programs and sample live snapshots through `client`, and judge against `reference`
// (the daemon's reply to {"op": "reference"}).
struct DiagContext {
  const telemetry::Snapshot& snapshot;  // taken when the run started
  telemetry::Client* client = nullptr;
  nlohmann::json reference;
  DiagOptions options;
  std::function<void(const DiagTest& test)> on_test_start;  // progress for people; may be empty
  std::function<bool()> interrupted;  // true: cancel the running test jobs and skip the rest
};

struct DiagTest {
  std::string_view name;
  std::string_view category;
  int level;  // the lowest level that runs it
  bool per_device;
  void (*run)(const DiagContext& ctx, std::span<const int> devices, DiagTestResult& out);
};

// The tests run at `level` (a level runs every test of the levels below it), in order.
std::vector<const DiagTest*> diag_tests(int level);
// Highest level with tests in this build.
int max_diag_level();
// Runs level `level` over `devices` (all when empty). A level above max_diag_level() runs the
// tests that exist; callers reject it first. Active tests without a client, or on a stale
// node, are UNKNOWN.
DiagReport run_diag(const DiagContext& ctx, int level, std::span<const int> devices = {});
// Level 1 over a snapshot alone.
DiagReport run_diag(const telemetry::Snapshot& s, int level, std::span<const int> devices = {});
// Opens what active tests need on `client`'s node: the reference figures (level >= 2).
Result<nlohmann::json> fetch_reference(telemetry::Client& client);

}  // namespace npukit::probes
