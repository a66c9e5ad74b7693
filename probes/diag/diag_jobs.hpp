// Running diagnostic programs on a node: submit several at once, follow them to their end.
//
// Programs run on the daemon (the `submit` control request); step times are the node's virtual
// time, so a measurement does not depend on the node's pacing. A job that is refused, fails or
// outlives its wall-clock deadline (it is then cancelled) comes back with an error.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "telemetry/client.hpp"
#include "telemetry/program.hpp"

namespace npukit::probes {

struct JobOutcome {
  bool ok = false;
  std::string error;             // why not ok: the daemon's refusal or the runtime's error
  std::vector<double> step_ms;   // the job's step times (a step is done on every rank), virtual ms
  nlohmann::json findings = nlohmann::json::array();  // what diagnostic ops found (memtest)
  // The node's accounting of the job from its start to its end (npu-smi stats' figures: per
  // device ecc_single_bit, ecc_double_bit, temperature_max_c, energy_j; duration_s): the ground
  // truth for what happened during the test, where bus snapshots before and after it are neither
  // taken at its start nor published at its end.
  nlohmann::json accounting;

  // This device's accounting entry, or null.
  const nlohmann::json* account_of(int device) const;
  // A per-device accounting count (ecc_single_bit, ...), when the node accounted the job.
  std::optional<uint64_t> counted(int device, const char* key) const;
};

// Submits every program, then polls them all until each has ended, `deadline` (wall time)
// passed or `interrupted` says so (then the jobs still running are cancelled); `tick` runs after
// every round of polls (the thermal watch samples there).
std::vector<JobOutcome> run_jobs(telemetry::Client& client, const std::vector<telemetry::Program>& programs,
                                 std::chrono::milliseconds deadline, const std::function<void()>& tick = {},
                                 const std::function<bool()>& interrupted = {});

// The wall time a job of `virtual_seconds` takes on the node of `s` (its speed ratio), with
// room for polling and the runtime's 2 s task timeout.
std::chrono::milliseconds deadline_for(const telemetry::Snapshot& s, double virtual_seconds);

}  // namespace npukit::probes
