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
constexpr double kCapMargin = 0.01;  // a power cap is held this far under the limit
constexpr double kThermalHoldAboveC = 0.5;  // a thermal throttle holds the chip this far over the point

double ratio(double part, double whole) { return whole > 0 ? std::clamp(part / whole, 0.0, 1.0) : 0.0; }

}  // namespace

double model_power_w(const DeviceSpec& spec, double activity, double f) {
  return spec.power.idle_w + (spec.power.tdp_w - spec.power.idle_w) * activity * f * f;
}

double power_at_lowest_clock_w(const DeviceSpec& spec) {
  const double max = spec.aicore_clock.max_mhz;
  return model_power_w(spec, 1.0, max > 0 ? spec.aicore_clock.min_mhz / max : 1.0);
}

Physics::Physics(Scheduler& scheduler, std::vector<Device>& devices, Fabric& fabric, const NodeEvents& events,
                 PhysicsOptions options)
    : scheduler_(scheduler),
      devices_(devices),
      fabric_(fabric),
      events_(events),
      options_(options),
      states_(devices.size()),
      link_util_(fabric.links().size(), 0.0),
      hccs_out_(devices.size()),
      pcie_fabric_share_(devices.size(), 0.0) {
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
    double pcie = 0;
    const auto [up, down] = fabric_.pcie_links_of(static_cast<int>(d));
    for (int id : {up, down}) {
      if (id >= 0) pcie += flow[static_cast<std::size_t>(id)] - first.value[static_cast<std::size_t>(id)];
    }
    pcie_fabric_share_[d] = ratio(pcie, seconds * devices_[d].spec().pcie.bandwidth_bps);
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
    update_dvfs(dev, st);
    st.next_dvfs = now + options_.dvfs_period_ns;
  }
  // A clock change is an event within a tick: a DVFS decision, or a chip woken by work.
  uint32_t reasons = dev.sensors().throttle_reasons;
  int mhz = dev.reported_clock_mhz();
  if (st.event_mhz < 0) st.event_mhz = mhz, st.event_reasons = reasons;
  if (reasons != st.event_reasons || mhz != st.event_mhz) {
    if (!events_.empty()) events_.clock({dev.id(), st.event_reasons, reasons, mhz, now});
    st.event_mhz = mhz, st.event_reasons = reasons;
  }
}

void Physics::update_utilization(Device& dev, State& st, Nanos now) {
  const auto& first = st.window.push(now, dev.counters(), options_.window_ns);
  const DeviceCounters& a = first.value;
  const DeviceCounters& b = dev.counters();
  double span = static_cast<double>(now - first.t);
  const DeviceSpec& spec = dev.spec();
  DeviceSensors& s = dev.sensors();
  s.util_since = first.t;
  double cores = span * spec.aicore_count;
  s.cube_util = ratio(static_cast<double>(b.cube_busy_core_ns - a.cube_busy_core_ns), cores);
  s.vector_util = ratio(static_cast<double>(b.vector_busy_core_ns - a.vector_busy_core_ns),
                        span * spec.vector_pool());
  s.aicore_util = ratio(static_cast<double>(b.aicore_busy_core_ns - a.aicore_busy_core_ns), cores);
  s.aicpu_util = ratio(static_cast<double>(b.aicpu_busy_core_ns - a.aicpu_busy_core_ns),
                       span * spec.aicpu_count);
  s.hbm_bw_util = ratio(b.hbm_bytes_flow - a.hbm_bytes_flow, span * 1e-9 * spec.hbm.bandwidth_bps);
  // Host copies and collectives routed through the host share the PCIe link (both directions, as
  // the bus's PCIe byte counters).
  s.pcie_bw_util = std::min(1.0, ratio(b.pcie_bytes_flow - a.pcie_bytes_flow, span * 1e-9 * spec.pcie.bandwidth_bps) +
                                     pcie_fabric_share_[static_cast<std::size_t>(dev.id())]);
}

void Physics::update_power_thermal(Device& dev, double dt_s) {
  const DeviceSpec& spec = dev.spec();
  DeviceSensors& s = dev.sensors();
  if (dev.health().lost()) {  // no power reading from a device off the bus; it cools down
    s.power_w = 0;
  } else {
    double activity = std::min(1.0, kCubeWeight * s.cube_util + kVectorWeight * s.vector_util +
                                        kHbmWeight * s.hbm_bw_util + kAicpuWeight * s.aicpu_util);
    s.power_w = model_power_w(spec, activity, dev.clock_ratio());
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

void Physics::update_dvfs(Device& dev, State& st) {
  const DeviceSpec& spec = dev.spec();
  DeviceSensors& s = dev.sensors();
  const int fmax = spec.aicore_clock.max_mhz;
  const int f = dev.clock_mhz();
  const int step = std::max(1, static_cast<int>(std::lround(fmax * options_.clock_step)));
  const double period_s = static_cast<double>(options_.dvfs_period_ns) * 1e-9;

  bool busy = s.aicore_util > 0 || s.aicpu_util > 0 || dev.free_aicores() < spec.aicore_count ||
              dev.free_vector_cores() < spec.vector_pool() || dev.free_aicpus() < spec.aicpu_count;
  dev.set_idle(!busy);

  // Power cap: the clock at which this activity draws 1% under the limit.
  double cap_clock = fmax;
  double dynamic_w = s.power_w - spec.power.idle_w;
  if (dynamic_w > 1e-9) {
    double allowed_w = s.power_limit_w * (1 - kCapMargin) - spec.power.idle_w;
    cap_clock = allowed_w > 0 ? f * std::sqrt(allowed_w / dynamic_w) : 0;
  }
  bool capped = cap_clock < fmax;

  // Thermal, with hysteresis; `heading` is where the temperature settles at this clock.
  const double throttle = spec.thermal.throttle_c;
  if (s.temperature_c >= throttle) st.thermal_engaged = true;
  else if (s.temperature_c < throttle - options_.hysteresis_c) st.thermal_engaged = false;
  double slope = st.dvfs_temperature_c < 0 ? 0 : (s.temperature_c - st.dvfs_temperature_c) / period_s;
  st.dvfs_temperature_c = s.temperature_c;
  double heading = s.temperature_c + spec.thermal.time_constant_s * slope;
  double thermal_clock = fmax;
  if (st.thermal_engaged && dynamic_w > 1e-9 && s.power_w > 0) {
    // The clock whose steady temperature is just over the throttle point, from the thermal
    // resistance the chip shows now ((heading - ambient) / P): a failing fan raises it.
    double resistance = std::max(1e-9, (heading - s.ambient_c) / s.power_w);
    double goal_w = (throttle + kThermalHoldAboveC - s.ambient_c) / resistance - spec.power.idle_w;
    thermal_clock = goal_w > 0 ? f * std::sqrt(goal_w / dynamic_w) : 0;
  }

  // Capping acts at once; thermal moves a step per period down or up (a chip's temperature
  // follows in seconds); climbing back is a step per period.
  double target = std::min({cap_clock, thermal_clock, static_cast<double>(fmax)});
  int next = static_cast<int>(std::floor(target));
  if (target >= f) next = std::min(next, f + step);
  else if (!(capped && cap_clock <= thermal_clock)) next = std::max(next, f - step);
  dev.set_clock_mhz(next);

  s.throttle_reasons = 0;
  if (dev.idle()) return;  // nothing is being slowed: the idle clock is not a throttle (reasons resume with work)
  if (dev.clock_mhz() < fmax) {
    if (st.thermal_engaged) s.throttle_reasons |= throttle_reason::kThermal;
    if (capped) s.throttle_reasons |= throttle_reason::kPowerLimit;
    if (s.throttle_reasons == 0) s.throttle_reasons = st.last_reasons;  // climbing back
  }
  st.last_reasons = s.throttle_reasons;
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
