// Active diagnostics in levels, like `dcgmi diag -r`. Each test judges every selected device
// (or the node as a whole) and yields per-device verdicts with one-line reasons; a run's verdict
// is the worst of its tests.
//
// Level 1 ("quick", seconds: deployment and health), computed from one Snapshot:
//   Deployment / Node Reachable  the node's bus is live (UNKNOWN when stale, as in health)
//   Deployment / Device Count    the bus carries as many chips as the node spec promises
//   Deployment / Device Specs    each chip has AI cores, memory, a max clock and a PCIe bus id
//   Hardware   / Health Rules    the passive health rules (health_rules.hpp), worst per chip
//   Deployment / Processes       WARN when processes hold a chip (active tests would compete)
// Levels 2 and 3 (memory pattern, compute, bandwidth, stress) are not part of this build:
// diag_tests(level) lists only what exists, and run_diag() refuses a level without tests.
//
// Thread-safety: pure functions over an immutable Snapshot.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "probes/health_rules.hpp"
#include "telemetry/snapshot.hpp"

namespace npukit::probes {

struct DiagDeviceResult {
  int device = 0;
  Verdict verdict = Verdict::kPass;
  std::vector<std::string> reasons;  // why not PASS (empty on PASS)
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

struct DiagTest {
  std::string_view name;
  std::string_view category;
  int level;  // the lowest level that runs it
  bool per_device;
  void (*run)(const telemetry::Snapshot& s, std::span<const int> devices, DiagTestResult& out);
};

// The tests run at `level` (a level runs every test of the levels below it), in order.
std::vector<const DiagTest*> diag_tests(int level);
// Highest level with tests in this build.
int max_diag_level();
// Runs level `level` over `devices` (all when empty). A level above max_diag_level() runs the
// tests that exist; callers reject it first.
DiagReport run_diag(const telemetry::Snapshot& s, int level, std::span<const int> devices = {});

}  // namespace npukit::probes
