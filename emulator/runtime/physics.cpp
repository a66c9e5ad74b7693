#include "emulator/runtime/physics.hpp"

#include <algorithm>
#include <cmath>

namespace npukit::emu {

namespace {

// Activity weights of the power model (see physics.hpp).
constexpr double kCubeWeight = 0.92;
constexpr double kVectorWeight = 0.45;
constexpr double kHbmWeight = 0.20;
constexpr double kAicpuWeight = 0.10;
constexpr double kHbmHeatC = 8.0;  // HBM self-heating at full bandwidth
constexpr double kHbmCoupling = 0.7;

double ratio(double part, double whole) { return whole > 0 ? std::clamp(part / whole, 0.0, 1.0) : 0.0; }

}  // namespace

Physics::Physics(Scheduler& scheduler, std::vector<Device>& devices, Fabric& fabric, const NodeEvents& events,
                 PhysicsOptions options)
    : scheduler_(scheduler),
      devices_(devices),
      fabric_(fabric),
      events_(events),
      options_(options),
      states_(devices.size()),
      link_util_(fabric.links().size(), 0.0),
      hccs_out_(devices.size()) {
  for (const Link& l : fabric_.links()) {
    if (l.kind == LinkKind::kHccs && l.src >= 0) hccs_out_[static_cast<std::size_t>(l.src)].push_back(l.id);
  }
  tick_kind_ = scheduler_.add_handler([this](const SimEvent& e) { tick(e); });
}

void Physics::start() {
  if (started_) return;
  started_ = true;
  for (auto& st : states_) {
    st.last_tick = scheduler_.now();
    st.next_dvfs = scheduler_.now() + options_.dvfs_period_ns;
  }
  scheduler_.post_background(scheduler_.now() + options_.tick_ns, tick_kind_);
}

void Physics::tick(const SimEvent&) {
  sample();
  scheduler_.post_background(scheduler_.now() + options_.tick_ns, tick_kind_);
}

void Physics::sample() {
  Nanos now = scheduler_.now();
  update_links(now);
  for (std::size_t i = 0; i < devices_.size(); ++i) update_device(devices_[i], states_[i], now);
}

void Physics::update_links(Nanos now) {
  if (now <= links_sampled_) return;
  links_sampled_ = now;
  fabric_.account(now);
  const std::vector<Link>& links = fabric_.links();
  std::vector<double> flow(links.size());
  for (std::size_t i = 0; i < links.size(); ++i) flow[i] = links[i].bytes_flow;
  const auto& first = link_window_.push(now, flow, options_.window_ns);
  double seconds = static_cast<double>(now - first.t) * 1e-9;
  for (std::size_t i = 0; i < links.size(); ++i) {
    link_util_[i] = ratio(flow[i] - first.value[i], seconds * links[i].bandwidth_bps);
  }
  for (std::size_t d = 0; d < devices_.size(); ++d) {
    double moved = 0, capacity = 0;
    for (int id : hccs_out_[d]) {
      moved += flow[static_cast<std::size_t>(id)] - first.value[static_cast<std::size_t>(id)];
      capacity += seconds * links[static_cast<std::size_t>(id)].bandwidth_bps;
    }
    devices_[d].sensors().hccs_bw_util = ratio(moved, capacity);
  }
}

void Physics::set_power_limit(int device, double watts) {
  devices_[device].sensors().power_limit_w = watts;
}

void Physics::set_ambient(int device, double celsius) { devices_[device].sensors().ambient_c = celsius; }

void Physics::update_device(Device& dev, State& st, Nanos now) {
  double dt_s = static_cast<double>(now - st.last_tick) * 1e-9;
  if (dt_s <= 0) return;
  st.last_tick = now;
  dev.account(now);
  update_utilization(dev, st, now);
  update_faults(dev, st, dt_s, now);
  update_power_thermal(dev, dt_s);
  if (now >= st.next_dvfs) {
    uint32_t reasons = dev.sensors().throttle_reasons;
    int mhz = dev.clock_mhz();
    update_dvfs(dev);
    uint32_t after = dev.sensors().throttle_reasons;
    if (!events_.empty() && (after != reasons || dev.clock_mhz() != mhz)) {
      events_.clock({dev.id(), reasons, after, dev.clock_mhz(), now});
    }
    st.next_dvfs = now + options_.dvfs_period_ns;
  }
}

void Physics::update_utilization(Device& dev, State& st, Nanos now) {
  const auto& first = st.window.push(now, dev.counters(), options_.window_ns);
  const DeviceCounters& a = first.value;
  const DeviceCounters& b = dev.counters();
  double span = static_cast<double>(now - first.t);
  const DeviceSpec& spec = dev.spec();
  DeviceSensors& s = dev.sensors();
  double cores = span * spec.aicore_count;
  s.cube_util = ratio(static_cast<double>(b.cube_busy_core_ns - a.cube_busy_core_ns), cores);
  s.vector_util = ratio(static_cast<double>(b.vector_busy_core_ns - a.vector_busy_core_ns), cores);
  s.aicore_util = ratio(static_cast<double>(b.aicore_busy_core_ns - a.aicore_busy_core_ns), cores);
  s.aicpu_util = ratio(static_cast<double>(b.aicpu_busy_core_ns - a.aicpu_busy_core_ns),
                       span * spec.aicpu_count);
  s.hbm_bw_util = ratio(b.hbm_bytes_flow - a.hbm_bytes_flow, span * 1e-9 * spec.hbm.bandwidth_bps);
  s.pcie_bw_util = ratio(b.pcie_bytes_flow - a.pcie_bytes_flow, span * 1e-9 * spec.pcie.bandwidth_bps);
}

void Physics::update_power_thermal(Device& dev, double dt_s) {
  const DeviceSpec& spec = dev.spec();
  DeviceSensors& s = dev.sensors();
  if (dev.health().lost()) {  // no power reading from a device off the bus; it cools down
    s.power_w = 0;
  } else {
    double activity = std::min(1.0, kCubeWeight * s.cube_util + kVectorWeight * s.vector_util +
                                        kHbmWeight * s.hbm_bw_util + kAicpuWeight * s.aicpu_util);
    double f = dev.clock_ratio();
    s.power_w = spec.power.idle_w + (spec.power.tdp_w - spec.power.idle_w) * activity * f * f;
  }
  dev.counters().energy_j += s.power_w * dt_s;
  double resistance = spec.thermal.resistance_c_per_w;
  if (dev.health().active(FaultKind::kOverTemperature)) resistance *= options_.cooling_failure_factor;
  double steady = s.ambient_c + resistance * s.power_w;
  double tau = spec.thermal.time_constant_s;
  s.temperature_c = steady + (s.temperature_c - steady) * std::exp(-dt_s / tau);
  double hbm_steady = s.ambient_c + kHbmCoupling * (s.temperature_c - s.ambient_c) + kHbmHeatC * s.hbm_bw_util;
  s.hbm_temperature_c = hbm_steady + (s.hbm_temperature_c - hbm_steady) * std::exp(-dt_s / (tau / 2));
}

void Physics::update_dvfs(Device& dev) {
  const DeviceSpec& spec = dev.spec();
  DeviceSensors& s = dev.sensors();
  int step = std::max(1, static_cast<int>(std::lround(spec.aicore_clock.max_mhz * options_.clock_step)));
  bool hot = s.temperature_c >= spec.thermal.throttle_c;
  bool over_power = s.power_w > s.power_limit_w;
  if (hot || over_power) {
    if (hot) s.throttle_reasons |= throttle_reason::kThermal;
    if (over_power) s.throttle_reasons |= throttle_reason::kPowerLimit;
    dev.set_clock_mhz(dev.clock_mhz() - step);
    return;
  }
  bool cool = s.temperature_c < spec.thermal.throttle_c - options_.hysteresis_c;
  bool headroom = s.power_w < 0.95 * s.power_limit_w;
  if (cool && headroom && dev.clock_mhz() < spec.aicore_clock.max_mhz) {
    dev.set_clock_mhz(dev.clock_mhz() + step);
  }
  if (dev.clock_mhz() >= spec.aicore_clock.max_mhz) s.throttle_reasons = 0;
}

void Physics::update_faults(Device& dev, State& st, double dt_s, Nanos now) {
  if (!dev.health().active(FaultKind::kEccStorm)) return;
  st.ecc_carry += options_.ecc_storm_per_s * dt_s;
  auto whole = static_cast<uint64_t>(st.ecc_carry);
  st.ecc_carry -= static_cast<double>(whole);
  const EccCounters& ecc = dev.health().ecc();
  if (whole == 0 || !ecc.enabled) return;  // a disabled ECC counts nothing
  dev.health().add_single_bit_errors(whole);
  if (!events_.empty()) events_.ecc({dev.id(), false, whole, 0, ecc.single_bit_aggregate, now});
}

}  // namespace npukit::emu
