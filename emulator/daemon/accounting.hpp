// Job accounting (like dcgmi stats): per job and device, what the job drew from the device from
// its start to its end, in the node's virtual time. Energy and average AI-core utilization are
// exact (integrated counters, differenced); maxima and throttled time come from samples every
// kSampleNs of virtual time while the job runs.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "emulator/runtime/node.hpp"

namespace npukit::emu {

struct DeviceAccount {
  int device = 0;
  double energy_start_j = 0, energy_j = 0;
  Nanos busy_start_core_ns = 0, busy_core_ns = 0;  // AI-core busy time, summed over cores
  double util_max = 0;  // the highest utilization window (physics window_ns) within the job, fraction
  double temperature_max_c = 0;
  std::map<std::string, Nanos> throttled_ns;       // "thermal", "power_cap"
  uint64_t sbe_start = 0, dbe_start = 0, sbe = 0, dbe = 0;  // ECC errors during the job
};

struct JobAccount {
  Nanos start = 0, last = 0, end = 0;
  std::vector<DeviceAccount> devices;
};

inline constexpr Nanos kAccountingSampleNs = 10'000'000;

JobAccount start_account(const Node& node, const std::vector<int>& devices);
// Brings the account up to the node's current time.
void sample_account(JobAccount& account, const Node& node);
// Per device: energy_j, aicore_util_avg/max_percent, temperature_max_c, throttled_s by reason,
// ecc_single_bit/ecc_double_bit.
nlohmann::json account_json(const JobAccount& account, const Node& node);

}  // namespace npukit::emu
