// One emulated chip: its spec, the resources tasks occupy (AI cores, AI CPUs, copy engines), its
// memory, its clock and its monotonic counters (the source of every utilization figure).
//
// Counters are totals since the node started; consumers derive rates from deltas. Owned by the
// Node and touched only from the node's thread.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "emulator/device/cost_model.hpp"
#include "emulator/device/memory.hpp"
#include "emulator/device/health.hpp"
#include "emulator/device/spec.hpp"

namespace npukit::emu {

struct DeviceCounters {
  // Busy time summed over cores, integrated continuously (exact at any instant, also mid-task).
  // Cube + vector kernels, in AI-core equivalents: where the AIVs are a pool apart, a vector kernel
  // on all of them counts as all AI cores, and the sum is capped at the AI cores (AICore %).
  Nanos aicore_busy_core_ns = 0;
  Nanos cube_busy_core_ns = 0;
  Nanos vector_busy_core_ns = 0;  // over the vector pool (DeviceSpec::vector_pool)
  Nanos aicpu_busy_core_ns = 0;
  double hbm_bytes_flow = 0;   // HBM bytes moved so far, spread evenly over each task's run
  double pcie_bytes_flow = 0;  // PCIe bytes (both directions) likewise
  double energy_j = 0;         // integrated by the physics model
  double flops_total = 0;          // arithmetic done by kernels
  uint64_t hbm_bytes_total = 0;    // HBM traffic of kernels, D2D copies and collectives, read + written
  uint64_t hbm_write_bytes_total = 0;  // of that, written: kernels' outputs, D2D destinations, collectives' receives and reductions
  uint64_t pcie_h2d_bytes_total = 0;
  uint64_t pcie_d2h_bytes_total = 0;
  uint64_t kernels_total = 0;
  uint64_t aicpu_kernels_total = 0;
  uint64_t copies_total = 0;
  uint64_t collectives_total = 0;
};

// What a running task occupies, for continuous accounting.
struct Activity {
  Unit unit = Unit::kVector;
  uint32_t cores = 0;            // AI cores or AI CPUs (0 for copies)
  double hbm_bytes_per_ns = 0;
  double pcie_bytes_per_ns = 0;
};

// The latest physics sample (physics.cpp writes it every tick).
struct DeviceSensors {
  double power_w = 0;
  double temperature_c = 0;
  double hbm_temperature_c = 0;
  double ambient_c = 0;
  double power_limit_w = 0;
  uint32_t throttle_reasons = 0;  // ThrottleReason bits
  // Utilizations over the sliding window [util_since, now), fractions in [0, 1].
  int64_t util_since = 0;  // virtual ns
  double aicore_util = 0;
  double cube_util = 0;
  double vector_util = 0;
  double aicpu_util = 0;
  double hbm_bw_util = 0;
  double pcie_bw_util = 0;
  double hccs_bw_util = 0;  // over the device's outgoing HCCS links (physics.hpp); 0 without any
};

namespace throttle_reason {
inline constexpr uint32_t kThermal = 1;
inline constexpr uint32_t kPowerLimit = 2;
}  // namespace throttle_reason

// Small deterministic generator (SplitMix64) for duration jitter: cheap enough for the hot path.
class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}
  uint64_t next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }  // [0, 1)

 private:
  uint64_t state_;
};

class Device {
 public:
  Device(int id, const DeviceSpec& spec, std::string bus_id, bool functional, uint64_t seed);

  int id() const { return id_; }
  const DeviceSpec& spec() const { return *spec_; }
  const std::string& bus_id() const { return bus_id_; }
  DeviceMemory& memory() { return memory_; }
  const DeviceMemory& memory() const { return memory_; }
  DeviceCounters& counters() { return counters_; }
  const DeviceCounters& counters() const { return counters_; }
  DeviceSensors& sensors() { return sensors_; }
  const DeviceSensors& sensors() const { return sensors_; }
  DeviceHealth& health() { return health_; }
  const DeviceHealth& health() const { return health_; }
  ThermalLimits thermal_limits() const { return {spec_->thermal.throttle_c, spec_->thermal.shutdown_c}; }
  Health health_state() const { return health_.health(sensors_.temperature_c, thermal_limits()); }

  // Continuous accounting of running work: begin/end bracket each task; account() integrates
  // busy time and traffic up to `now` (called on every change and before every sample).
  void begin(const Activity& a, Nanos now);
  void end(const Activity& a, Nanos now);
  void account(Nanos now);

  // The AI-core clock work runs at; DVFS lowers it. Compute time scales with max / current.
  int clock_mhz() const { return clock_mhz_; }
  void set_clock_mhz(int mhz);
  double clock_ratio() const {
    return static_cast<double>(clock_mhz_) / spec_->aicore_clock.max_mhz;
  }
  // A chip with no work parks its clock at the spec's idle clock and wakes at once when work
  // arrives (no task ever runs at the idle clock): what npu-smi and the bus report.
  void set_idle(bool idle) { idle_ = idle; }
  bool idle() const { return idle_; }
  int reported_clock_mhz() const { return idle_ ? std::min(clock_mhz_, spec_->aicore_clock.idle_mhz) : clock_mhz_; }

  // Resource pools. acquire_* return false (and take nothing) when not enough is free.
  int free_aicores() const { return free_aicores_; }
  int free_vector_cores() const { return separate_aivs_ ? free_aivs_ : free_aicores_; }
  int free_aicpus() const { return free_aicpus_; }
  bool acquire_cores(Unit unit, uint32_t n);
  void release_cores(Unit unit, uint32_t n);
  bool copy_engine_busy(CopyKind k) const { return copy_busy_[static_cast<int>(k)]; }
  // The share of its line rate the device's PCIe link runs at (below 1 after a link-degraded
  // fault retrained it): host copies run at it. Set by the node from its fabric.
  double pcie_rate_share() const { return pcie_rate_share_; }
  void set_pcie_rate_share(double share) { pcie_rate_share_ = share; }
  void set_copy_engine_busy(CopyKind k, bool busy) { copy_busy_[static_cast<int>(k)] = busy; }

  // Streams whose head task waits for cores or a copy engine, in arrival order.
  std::vector<uint32_t>& waiting_streams() { return waiting_; }

  // Multiplies a duration by (1 + jitter * t), t triangular on [-1, 1]; jitter 0 keeps it exact.
  Nanos jittered(Nanos d, double jitter);

 private:
  int& free_pool(Unit unit);
  Nanos running_aicore_equivalents() const;

  int id_;
  const DeviceSpec* spec_;
  std::string bus_id_;
  DeviceMemory memory_;
  DeviceCounters counters_;
  int clock_mhz_;
  bool idle_ = false;
  int free_aicores_;
  int free_aivs_;  // the AIV pool where the spec has one apart (separate_vector_cores)
  bool separate_aivs_;  // spec_->separate_vector_cores(), read per task
  int free_aicpus_;
  std::array<bool, 3> copy_busy_{};
  double pcie_rate_share_ = 1;
  std::vector<uint32_t> waiting_;
  SplitMix64 rng_;
  DeviceSensors sensors_;
  DeviceHealth health_;
  // Currently running work.
  uint32_t running_cube_ = 0;
  uint32_t running_vector_ = 0;
  uint32_t running_aicpu_ = 0;
  double running_hbm_rate_ = 0;
  double running_pcie_rate_ = 0;
  Nanos accounted_to_ = 0;
};

// The engine calls these for every task: defined here so they inline.
inline void Device::account(Nanos now) {
  Nanos dt = now - accounted_to_;
  if (dt <= 0) return;
  counters_.cube_busy_core_ns += dt * running_cube_;
  counters_.vector_busy_core_ns += dt * running_vector_;
  counters_.aicore_busy_core_ns += dt * running_aicore_equivalents();
  counters_.aicpu_busy_core_ns += dt * running_aicpu_;
  counters_.hbm_bytes_flow += static_cast<double>(dt) * running_hbm_rate_;
  counters_.pcie_bytes_flow += static_cast<double>(dt) * running_pcie_rate_;
  accounted_to_ = now;
}

inline void Device::begin(const Activity& a, Nanos now) {
  account(now);
  idle_ = false;  // work wakes the clock at once
  (a.unit == Unit::kCube ? running_cube_ : a.unit == Unit::kVector ? running_vector_ : running_aicpu_) +=
      a.cores;
  running_hbm_rate_ += a.hbm_bytes_per_ns;
  running_pcie_rate_ += a.pcie_bytes_per_ns;
}

inline void Device::end(const Activity& a, Nanos now) {
  account(now);
  (a.unit == Unit::kCube ? running_cube_ : a.unit == Unit::kVector ? running_vector_ : running_aicpu_) -=
      a.cores;
  running_hbm_rate_ = std::max(0.0, running_hbm_rate_ - a.hbm_bytes_per_ns);
  running_pcie_rate_ = std::max(0.0, running_pcie_rate_ - a.pcie_bytes_per_ns);
}

inline int& Device::free_pool(Unit unit) {
  if (unit == Unit::kAiCpu) return free_aicpus_;
  return unit == Unit::kVector && separate_aivs_ ? free_aivs_ : free_aicores_;
}

inline Nanos Device::running_aicore_equivalents() const {
  if (!separate_aivs_) return running_cube_ + running_vector_;
  Nanos vector = static_cast<Nanos>(running_vector_) * spec_->aicore_count / spec_->vector_core_count;
  return std::min<Nanos>(running_cube_ + vector, spec_->aicore_count);
}

inline bool Device::acquire_cores(Unit unit, uint32_t n) {
  int& pool = free_pool(unit);
  if (static_cast<uint32_t>(pool) < n) return false;
  pool -= static_cast<int>(n);
  return true;
}

inline void Device::release_cores(Unit unit, uint32_t n) {
  int& pool = free_pool(unit);
  pool += static_cast<int>(n);
}

inline Nanos Device::jittered(Nanos d, double jitter) {
  if (jitter <= 0) return d;
  double t = rng_.uniform() + rng_.uniform() - 1.0;
  return std::max<Nanos>(1, static_cast<Nanos>(static_cast<double>(d) * (1.0 + jitter * t)));
}

}  // namespace npukit::emu
