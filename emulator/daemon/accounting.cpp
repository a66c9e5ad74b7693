#include "emulator/daemon/accounting.hpp"

#include <algorithm>

namespace npukit::emu {

JobAccount start_account(const Node& node, const std::vector<int>& devices) {
  JobAccount a;
  a.start = a.last = node.now();
  for (int d : devices) {
    const Device& dev = node.device(d);
    DeviceAccount da;
    da.device = d;
    da.energy_start_j = dev.counters().energy_j;
    da.busy_start_core_ns = dev.counters().aicore_busy_core_ns;
    da.temperature_max_c = dev.sensors().temperature_c;
    da.sbe_start = dev.health().ecc().single_bit_aggregate;
    da.dbe_start = dev.health().ecc().double_bit_aggregate;
    a.devices.push_back(da);
  }
  return a;
}

void sample_account(JobAccount& a, const Node& node) {
  Nanos now = node.now(), dt = now - a.last;
  for (DeviceAccount& da : a.devices) {
    const Device& dev = node.device(da.device);
    const DeviceSensors& s = dev.sensors();
    da.energy_j = dev.counters().energy_j - da.energy_start_j;
    da.busy_core_ns = dev.counters().aicore_busy_core_ns - da.busy_start_core_ns;
    // A window reaching back before the job holds idle time that is not the job's (a job shorter
    // than a window read "avg 98.4% max 3.9%").
    if (s.util_since >= a.start) da.util_max = std::max(da.util_max, s.aicore_util);
    da.temperature_max_c = std::max(da.temperature_max_c, s.temperature_c);
    if (dt > 0 && (s.throttle_reasons & throttle_reason::kThermal)) da.throttled_ns["thermal"] += dt;
    if (dt > 0 && (s.throttle_reasons & throttle_reason::kPowerLimit)) da.throttled_ns["power_cap"] += dt;
    da.sbe = dev.health().ecc().single_bit_aggregate - da.sbe_start;
    da.dbe = dev.health().ecc().double_bit_aggregate - da.dbe_start;
  }
  a.last = a.end = now;
}

nlohmann::json account_json(const JobAccount& a, const Node& node) {
  nlohmann::json devices = nlohmann::json::array();
  double seconds = static_cast<double>(a.end - a.start) / 1e9;
  for (const DeviceAccount& da : a.devices) {
    double cores = node.device(da.device).spec().aicore_count;
    double avg = a.end > a.start ? static_cast<double>(da.busy_core_ns) / (static_cast<double>(a.end - a.start) * cores) : 0;
    nlohmann::json throttled = {{"thermal", 0.0}, {"power_cap", 0.0}};
    for (const auto& [reason, ns] : da.throttled_ns) throttled[reason] = static_cast<double>(ns) / 1e9;
    devices.push_back({{"device", da.device},
                       {"energy_j", da.energy_j},
                       {"aicore_util_avg_percent", 100 * avg},
                       // The job is a window too: its most busy window is at least its average.
                       {"aicore_util_max_percent", 100 * std::max(da.util_max, avg)},
                       {"temperature_max_c", da.temperature_max_c},
                       {"throttled_s", throttled},
                       {"ecc_single_bit", da.sbe},
                       {"ecc_double_bit", da.dbe}});
  }
  return {{"start_ns", a.start}, {"end_ns", a.end}, {"duration_s", seconds}, {"devices", devices}};
}

}  // namespace npukit::emu
