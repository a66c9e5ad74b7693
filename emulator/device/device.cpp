#include "emulator/device/device.hpp"

#include <algorithm>

namespace npukit::emu {

Device::Device(int id, const DeviceSpec& spec, std::string bus_id, bool functional, uint64_t seed)
    : id_(id),
      spec_(&spec),
      bus_id_(std::move(bus_id)),
      memory_(id, spec.hbm.capacity_bytes, spec.hbm.firmware_reserved_bytes, functional),
      clock_mhz_(spec.aicore_clock.max_mhz),
      free_aicores_(spec.aicore_count),
      free_aicpus_(spec.aicpu_count),
      rng_(seed ^ (0xD1B54A32D192ED03ull * static_cast<uint64_t>(id + 1))) {
  sensors_.ambient_c = spec.thermal.ambient_c;
  sensors_.temperature_c = spec.thermal.ambient_c + spec.thermal.resistance_c_per_w * spec.power.idle_w;
  sensors_.hbm_temperature_c = sensors_.temperature_c;
  sensors_.power_w = spec.power.idle_w;
  sensors_.power_limit_w = spec.power.tdp_w;
}

void Device::account(Nanos now) {
  Nanos dt = now - accounted_to_;
  if (dt <= 0) return;
  counters_.cube_busy_core_ns += dt * running_cube_;
  counters_.vector_busy_core_ns += dt * running_vector_;
  counters_.aicore_busy_core_ns += dt * (running_cube_ + running_vector_);
  counters_.aicpu_busy_core_ns += dt * running_aicpu_;
  counters_.hbm_bytes_flow += static_cast<double>(dt) * running_hbm_rate_;
  counters_.pcie_bytes_flow += static_cast<double>(dt) * running_pcie_rate_;
  accounted_to_ = now;
}

void Device::begin(const Activity& a, Nanos now) {
  account(now);
  idle_ = false;  // work wakes the clock at once
  (a.unit == Unit::kCube ? running_cube_ : a.unit == Unit::kVector ? running_vector_ : running_aicpu_) +=
      a.cores;
  running_hbm_rate_ += a.hbm_bytes_per_ns;
  running_pcie_rate_ += a.pcie_bytes_per_ns;
}

void Device::end(const Activity& a, Nanos now) {
  account(now);
  (a.unit == Unit::kCube ? running_cube_ : a.unit == Unit::kVector ? running_vector_ : running_aicpu_) -=
      a.cores;
  running_hbm_rate_ = std::max(0.0, running_hbm_rate_ - a.hbm_bytes_per_ns);
  running_pcie_rate_ = std::max(0.0, running_pcie_rate_ - a.pcie_bytes_per_ns);
}

void Device::set_clock_mhz(int mhz) {
  clock_mhz_ = std::clamp(mhz, spec_->aicore_clock.min_mhz, spec_->aicore_clock.max_mhz);
}

bool Device::acquire_cores(Unit unit, uint32_t n) {
  int& pool = unit == Unit::kAiCpu ? free_aicpus_ : free_aicores_;
  if (static_cast<uint32_t>(pool) < n) return false;
  pool -= static_cast<int>(n);
  return true;
}

void Device::release_cores(Unit unit, uint32_t n) {
  int& pool = unit == Unit::kAiCpu ? free_aicpus_ : free_aicores_;
  pool += static_cast<int>(n);
}

Nanos Device::jittered(Nanos d, double jitter) {
  if (jitter <= 0) return d;
  double t = rng_.uniform() + rng_.uniform() - 1.0;
  return std::max<Nanos>(1, static_cast<Nanos>(static_cast<double>(d) * (1.0 + jitter * t)));
}

}  // namespace npukit::emu
