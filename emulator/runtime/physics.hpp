// Device physics: utilization over a sliding window, power, temperature and DVFS.
//
// Every tick (default 10 ms of virtual time, a background event) each device is sampled:
//   utilization  = busy core-time (or bytes moved) in the window / capacity of the window
//   links        the same window over each link's bytes_flow (fabric.hpp): utilization =
//                bytes carried / (line rate x window), so a saturated link reads the fabric's
//                efficiency (80%), not 100%. A device's HCCS utilization is its outgoing HCCS
//                links' bytes over their summed line rate (the share of its aggregate HCCS
//                bandwidth: one busy link of a 910B's seven reads 1/7 of that link's figure)
//   power        = idle + (tdp - idle) x activity x (f / f_max)^2,
//                  activity = min(1, 0.92 u_cube + 0.45 u_vector + 0.20 u_hbm + 0.10 u_aicpu)
//                  (weights chosen so a sustained large GEMM draws ~95% of TDP and idle draws
//                  the spec's idle power)
//   temperature  first-order: T -> T_ss = ambient + R x P with time constant tau;
//                HBM: ambient + 0.7 (T - ambient) + 8 C x u_hbm, with tau / 2
//   DVFS         every 100 ms, as firmware does it:
//                power cap: power scales with f^2 at the same activity, so the clock that holds
//                  the cap (1% under it) is f x sqrt((limit x 0.99 - idle) / (P - idle)); the
//                  clock drops to it at once and climbs back a step (5% of max) per period, so a
//                  capped chip holds its cap without cycling;
//                thermal: engaged at the throttle temperature, released below it minus the
//                  hysteresis (3 C); while engaged it aims at the clock whose steady temperature
//                  is 0.5 C over the throttle point, from the thermal resistance the chip shows
//                  now ((T + tau dT/dt - ambient) / P: where a first-order chip is heading), a
//                  step per period, so it holds the throttle point instead of walking to the
//                  minimum, and a failing fan's higher resistance is followed; once released the
//                  clock climbs a step per period;
//                idle: a chip with no work reports the spec's idle clock (it wakes at once).
//                Reasons are published while a limit holds the clock below max.
// A task's duration is fixed when it starts, so a clock change affects the tasks that start
// after it. An ECC storm adds its single-bit errors every tick and reports them as one record per
// device and tick (node_events.hpp). Deterministic; driven by the node's scheduler.
#pragma once

#include <deque>
#include <vector>

#include "emulator/device/device.hpp"
#include "emulator/fabric/fabric.hpp"
#include "emulator/runtime/node_events.hpp"
#include "emulator/engine/scheduler.hpp"

namespace npukit::emu {

// The power model: what a chip draws at `activity` (0..1, the weighted utilization) and clock
// ratio `f` (clock / max clock): idle + (TDP - idle) x activity x f^2.
double model_power_w(const DeviceSpec& spec, double activity, double f);
// What it draws flat out at its lowest clock: the lowest power limit a cap can hold under load.
double power_at_lowest_clock_w(const DeviceSpec& spec);

struct PhysicsOptions {
  Nanos tick_ns = 10'000'000;        // sampling period
  Nanos window_ns = 100'000'000;     // utilization window
  Nanos dvfs_period_ns = 100'000'000;
  double clock_step = 0.05;          // fraction of max clock per DVFS step
  double hysteresis_c = 3.0;
  double cooling_failure_factor = 2.0;  // over-temperature fault: thermal resistance multiplier (a failing fan)
  double ecc_storm_per_s = 2000;     // single-bit errors per second during an ECC storm
};

// Samples of a monotonic quantity over a sliding window of virtual time: the oldest kept sample
// is the newest one at least `window` old, so oldest..newest spans the window once it has filled.
template <typename T>
class SlidingWindow {
 public:
  struct Entry {
    Nanos t = 0;
    T value{};
  };
  // Adds the sample taken at `now`, drops those no longer needed; returns the oldest kept.
  const Entry& push(Nanos now, T value, Nanos window) {
    entries_.push_back({now, std::move(value)});
    while (entries_.size() > 2 && now - entries_[1].t >= window) entries_.pop_front();
    return entries_.front();
  }

 private:
  std::deque<Entry> entries_;
};

class Physics {
 public:
  Physics(Scheduler& scheduler, std::vector<Device>& devices, Fabric& fabric, const NodeEvents& events,
          PhysicsOptions options = {});

  // Starts the periodic tick (idempotent).
  void start();
  // Samples every device at the current time (ticks do this; tests may call it).
  void sample();
  const PhysicsOptions& options() const { return options_; }

  void set_power_limit(int device, double watts);
  void set_ambient(int device, double celsius);
  // Utilization of fabric link `link` over the window, a fraction of its line rate in [0, 1].
  double link_util(int link) const { return link_util_[static_cast<std::size_t>(link)]; }

 private:
  struct State {
    SlidingWindow<DeviceCounters> window;
    Nanos last_tick = 0;
    Nanos next_dvfs = 0;
    double ecc_carry = 0;  // fractional single-bit errors owed by a storm
    bool thermal_engaged = false;
    double dvfs_temperature_c = -1;  // the temperature at the last DVFS decision (-1: none yet)
    uint32_t last_reasons = 0;       // kept while the clock climbs back to max
    int event_mhz = -1;              // the clock and reasons the last clock event announced
    uint32_t event_reasons = 0;
  };
  void tick(const SimEvent&);
  void update_device(Device& dev, State& st, Nanos now);
  void update_utilization(Device& dev, State& st, Nanos now);
  void update_power_thermal(Device& dev, double dt_s);
  void update_dvfs(Device& dev, State& st);
  void update_faults(Device& dev, State& st, double dt_s, Nanos now);
  void update_links(Nanos now);

  Scheduler& scheduler_;
  std::vector<Device>& devices_;
  Fabric& fabric_;
  const NodeEvents& events_;
  PhysicsOptions options_;
  std::vector<State> states_;
  SlidingWindow<std::vector<double>> link_window_;  // every link's bytes_flow, by link id
  Nanos links_sampled_ = -1;
  std::vector<double> link_util_;                    // by link id
  std::vector<std::vector<int>> hccs_out_;           // by device: its outgoing HCCS link ids
  // By device: the bytes collectives moved over its PCIe links in the window, as a share of its
  // PCIe bandwidth (added to its host copies' share for the PCIe utilization).
  std::vector<double> pcie_fabric_share_;
  uint32_t tick_kind_;
  bool started_ = false;
};

}  // namespace npukit::emu
