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
      free_aivs_(spec.vector_pool()),
      separate_aivs_(spec.separate_vector_cores()),
      free_aicpus_(spec.aicpu_count),
      rng_(seed ^ (0xD1B54A32D192ED03ull * static_cast<uint64_t>(id + 1))) {
  sensors_.ambient_c = spec.thermal.ambient_c;
  sensors_.temperature_c = spec.thermal.ambient_c + spec.thermal.resistance_c_per_w * spec.power.idle_w;
  sensors_.hbm_temperature_c = sensors_.temperature_c;
  sensors_.power_w = spec.power.idle_w;
  sensors_.power_limit_w = spec.power.tdp_w;
}

void Device::set_clock_mhz(int mhz) {
  clock_mhz_ = std::clamp(mhz, spec_->aicore_clock.min_mhz, spec_->aicore_clock.max_mhz);
}

}  // namespace npukit::emu
