// Device health: ECC counters, injected faults, and the alarms they raise.
//
// Health is the worst active alarm: OK < Warning < Alarm < Critical; a lost device reads UNKNOWN
// (npu-smi's strings and DCMI's 0/1/2/3/0xFFFFFFFF codes). Each alarm carries an error code from
// the catalog below (documented in docs/faults.md). Faults are injected deterministically (at a
// virtual time, from a timeline or the control channel); clear() lifts what can be lifted and
// reset() returns the device to a fresh state, keeping only aggregate ECC history.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "telemetry/incidents.hpp"
#include "telemetry/status.hpp"

namespace npukit::emu {

enum class Health : uint8_t { kOk = 0, kWarning = 1, kAlarm = 2, kCritical = 3, kUnknown = 4 };
const char* health_name(Health h);  // "OK", "Warning", "Alarm", "Critical", "UNKNOWN"

enum class FaultKind : uint8_t {
  kOverTemperature,  // cooling failure: thermal resistance x4 until cleared
  kHbmDoubleBit,     // one uncorrectable HBM error; the next reset isolates its page
  kEccStorm,         // single-bit errors at a high rate until cleared
  kAicoreHang,       // AI Core tasks never finish: they time out; Critical until reset
  kLinkDown,         // the device's HCCS (or PCIe peer) links go down until cleared
  kDeviceLost,       // the device falls off the bus: UNKNOWN until reset
  // Silent degradations (no alarm, as on real parts; the profiler finds them) until cleared:
  kAicoreDegraded,   // a quarter of the AI cores isolated: AI Core kernels take 4/3 as long
  kLinkDegraded,     // the device's HCCS links retrained at a quarter of their bandwidth
  kLinkFlapping,     // one link goes down and up again every second (per-link only)
  // Host faults (a cluster host's every device; Node::inject_host_fault), until cleared:
  kHostSlow,         // the host's CPU is contended: launches, input and other host work take 3x
  kHostDown,         // the host is down: its devices are gone and its bus stops publishing
};
// "over-temperature", "hbm-double-bit", "ecc-storm", "aicore-hang", "link-down", "device-lost",
// "aicore-degraded", "link-degraded", "link-flapping", "host-slow", "host-down"
const char* fault_name(FaultKind k);
Result<FaultKind> parse_fault(std::string_view name);
const std::vector<FaultKind>& all_faults();
// What a fault acts on (one may act on several): a link (link-down, link-degraded, link-flapping),
// a whole host (host-slow, host-down), or one device (every other, and link-down/-degraded on
// all of a device's links).
bool acts_on_link(FaultKind k);
bool acts_on_host(FaultKind k);
bool acts_on_device(FaultKind k);
// "a, b, c": the names of the faults `pred` takes, in table order.
std::string fault_names(bool (*pred)(FaultKind));

// Alarm codes, severities, texts and the memory limits come from the incident table
// (telemetry/incidents.hpp).

inline constexpr uint64_t kHbmPageBytes = 2ull << 20;  // the page ECC isolates

struct EccCounters {
  bool enabled = true;
  uint64_t single_bit_volatile = 0;   // since the last reset / clear
  uint64_t double_bit_volatile = 0;
  uint64_t single_bit_aggregate = 0;  // lifetime of the device
  uint64_t double_bit_aggregate = 0;
  uint64_t isolated_pages_single = 0;
  uint64_t isolated_pages_double = 0;
};

struct Alarm {
  uint32_t code = 0;
  Health severity = Health::kOk;
  std::string text;  // the incident kind's summary
};
// The alarm an incident kind raises on the NPU it sits on (or, `as_peer`, on one it touches).
Alarm alarm_of(const telemetry::IncidentKind& kind, bool as_peer = false);

// Thresholds the temperature alarms are judged against (from the device spec).
struct ThermalLimits {
  double throttle_c = 0;
  double shutdown_c = 0;
};

class DeviceHealth {
 public:
  void inject(FaultKind kind);
  // Lifts over-temperature, ECC storm, link faults, isolated cores and host faults, and clears
  // volatile ECC counters. A hang or a lost device needs reset().
  void clear();
  void reset();
  // Lifts one fault kind (what a workload's own fault does when the workload ends).
  void lift(FaultKind kind) { active_ &= ~(1u << static_cast<int>(kind)); }
  // Zeroes the volatile ECC counters (npu-smi clear -t ecc-info); aggregate history stays.
  void clear_ecc();

  bool active(FaultKind kind) const { return (active_ >> static_cast<int>(kind)) & 1u; }
  bool hung() const { return active(FaultKind::kAicoreHang); }
  bool lost() const { return active(FaultKind::kDeviceLost) || active(FaultKind::kHostDown); }
  bool links_down() const { return active(FaultKind::kLinkDown); }
  bool links_degraded() const { return active(FaultKind::kLinkDegraded); }
  // How much longer an AI Core kernel takes than on a healthy chip at the same clock (>= 1).
  double aicore_slowdown() const { return active(FaultKind::kAicoreDegraded) ? kDegradedAicoreSlowdown : 1.0; }
  static constexpr double kDegradedAicoreSlowdown = 4.0 / 3.0;  // 3 of 4 cores left
  // How much longer the host work of this device's processes takes (launches, input, malloc; >= 1).
  double host_slowdown() const { return active(FaultKind::kHostSlow) ? kSlowHostFactor : 1.0; }
  static constexpr double kSlowHostFactor = 3.0;
  static constexpr double kDegradedLinkShare = 0.25;            // of the link's line rate
  // Marks that a task timed out on this device (raises the Critical timeout alarm).
  void note_task_timeout() { timeouts_ += 1; }
  uint64_t task_timeouts() const { return timeouts_; }

  // HBM pages with a stuck bit (physical byte offsets of 2 MiB pages, kHbmPageBytes). An
  // hbm-double-bit fault adds one; it fails memory pattern tests until reset() isolates it
  // (isolation is pending until then, as page retirement is on real devices; clear() lifts the
  // alarm but not the page). Retired pages are never handed out again, so tests pass over them.
  struct BadPage {
    uint64_t offset = 0;
    int stuck_bit = 0;  // bit (0-63) of each 64-bit word that reads 0
  };
  void add_bad_page(BadPage page) { bad_pages_.push_back(page); }
  const std::vector<BadPage>& bad_pages() const { return bad_pages_; }
  const std::vector<BadPage>& retired_pages() const { return retired_pages_; }

  EccCounters& ecc() { return ecc_; }
  const EccCounters& ecc() const { return ecc_; }
  void add_single_bit_errors(uint64_t n);
  void add_double_bit_error();

  // Alarms the node's link root cause puts on this device (Node keeps them current): its own
  // links_down / links_degraded, or a peer's Warning for a link incident it touches.
  void set_link_alarms(std::vector<Alarm> alarms) { link_alarms_ = std::move(alarms); }
  const std::vector<Alarm>& link_alarms() const { return link_alarms_; }

  // Active alarms, worst first; empty when healthy.
  std::vector<Alarm> alarms(double temperature_c, const ThermalLimits& limits) const;
  Health health(double temperature_c, const ThermalLimits& limits) const;
  uint32_t error_code(double temperature_c, const ThermalLimits& limits) const;

 private:
  uint32_t active_ = 0;  // bit per FaultKind
  uint64_t timeouts_ = 0;
  EccCounters ecc_;
  std::vector<BadPage> bad_pages_;
  std::vector<BadPage> retired_pages_;
  std::vector<Alarm> link_alarms_;
};

}  // namespace npukit::emu
