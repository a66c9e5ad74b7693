// npu-top's model: the immutable Frame the collector (collector.hpp) builds once per tick
// and every frontend draws. Collect -> immutable snapshot -> draw (STYLE.md item 4): a Frame
// never changes after it is built and holds no UI state (sorting, filtering and selection live
// in the ViewState, view.hpp).
//
// History keeps, per device, the recent AI-core utilization, power and temperature samples in
// a ring of fixed capacity (default 3600 samples: an hour at 1 s, six minutes at 0.1 s). A
// missing sample (value not ok, node stale) is stored as NaN and drawn as a gap, never as 0.
//
// Thread-safety: Frame and History are values; const access from any thread.
#pragma once

#include <cmath>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "telemetry/events.hpp"
#include "telemetry/snapshot.hpp"

namespace npukit::top {

namespace tf = ::npukit::telemetry;

enum class Metric : uint8_t { kUtil, kPower, kTemp };
inline constexpr int kMetricCount = 3;

class History {
 public:
  History(int devices, std::size_t capacity);
  // Appends one sample per device taken at `t_ns` (the collector's clock); values[m][d].
  void push(uint64_t t_ns, const std::vector<float> (&values)[kMetricCount]);
  int devices() const { return devices_; }
  std::size_t size() const { return count_; }
  std::size_t capacity() const { return capacity_; }
  // Sample i, 0 = oldest.
  uint64_t time(std::size_t i) const { return times_[slot(i)]; }
  float value(Metric m, int device, std::size_t i) const {
    return values_[static_cast<int>(m)][static_cast<std::size_t>(device) * capacity_ + slot(i)];
  }

 private:
  std::size_t slot(std::size_t i) const { return (head_ + capacity_ - count_ + i) % capacity_; }
  int devices_;
  std::size_t capacity_;
  std::size_t head_ = 0;   // next slot to write
  std::size_t count_ = 0;
  std::vector<uint64_t> times_;
  std::vector<float> values_[kMetricCount];
};

// The per-column values of one device's series over the last `window_ns` before `now_ns`,
// `columns` wide: each column is the largest sample whose time span (a sample lasts until the
// next one, at most 1.5 typical intervals) meets the column's time bin; NaN where none does.
std::vector<float> history_columns(const History& h, Metric m, int device, uint64_t now_ns,
                                   uint64_t window_ns, int columns);

// One row of the process table: a process's context on one device.
struct ProcessRow {
  int32_t pid = 0;
  int32_t device = 0;
  uint64_t hbm_bytes = 0;
  std::string name;
  // The process's estimated share of its device's AI-core utilization, percent: the device's
  // utilization split by the HBM each process holds on it (the bus has no per-process busy
  // time). Absent when the device's utilization has no value.
  std::optional<double> share;
  // The device as npu-smi names it in narrow columns: "3", or "2-1" (card 2, chip 1) on a
  // multi-chip card; "" when the process table names a device the node does not have.
  std::string npu;
};

enum class Severity : uint8_t { kInfo, kWarning, kCritical };

struct Alarm {
  Severity severity = Severity::kWarning;
  int device = -1;  // -1: the node
  std::string text;
};

// An event as the collector received it, names resolved (for the alarm banner and --record).
struct ReceivedEvent {
  tf::Event event;
  std::string name;
  std::string aux;
};

enum class NodeState : uint8_t { kLive, kStale, kAbsent };

struct Frame {
  uint64_t seq = 0;        // frames collected so far, 1 for the first
  uint64_t now_ns = 0;     // the collector's clock when collected (the history time base)
  std::string node;        // the node asked for
  NodeState state = NodeState::kAbsent;
  std::string message;     // why stale / absent (empty when live)
  bool denied = false;     // absent because the node is another user's and this one may not read it
  tf::Snapshot snapshot;   // empty (0 devices) when absent
  std::shared_ptr<const History> history;
  std::vector<ProcessRow> processes;      // in bus order
  std::vector<Alarm> alarms;              // most severe first
  std::vector<ReceivedEvent> new_events;  // events received during this tick

  int devices() const { return state == NodeState::kAbsent ? 0 : snapshot.device_count(); }
};

// The value of a device field when ok, else nullopt ("no value" is never 0).
inline std::optional<double> value_of(const Frame& f, int device, tf::FieldId id) {
  return f.snapshot.device(device, id).number();
}

}  // namespace npukit::top
