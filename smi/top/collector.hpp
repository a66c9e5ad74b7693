// Collector: reads a node's bus once per tick and builds an immutable Frame (model.hpp):
// the snapshot, the history of utilization/power/temperature, the process rows with their
// utilization shares, and the alarms. It never reads UI state.
//
// Node states: absent (the client cannot be opened, or a snapshot fails: the frame carries the
// error message and the next tick retries), stale (the snapshot says so: values are not live and
// history records gaps), live.
//
// Alarms: from the snapshot, the node's incidents (probes/health/incidents.hpp, one per root
// cause) and a device a power limit throttles (with the reasons and clock); new ECC errors (the increase of the aggregate
// single/double-bit counters between ticks, so none is missed, coalesced per device and kind);
// from events, task timeouts, links going down and injected faults. Each stays for
// `event_memory` of the node's virtual time after it last happened. A stale node gets one node
// alarm instead.
//
// Thread-safety: one thread (the UI loop) calls collect(); the frames it returns are shared,
// immutable values.
#pragma once

#include <array>
#include <chrono>
#include <optional>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <tuple>

#include "smi/top/model.hpp"
#include "telemetry/client.hpp"

namespace npukit::top {

struct CollectorOptions {
  std::string node = "npukit";
  std::size_t history_capacity = 3600;
  std::chrono::nanoseconds event_memory = std::chrono::seconds(60);
};

class Collector {
 public:
  using Opener = std::function<Result<std::unique_ptr<tf::Client>>()>;
  using Clock = std::function<uint64_t()>;  // ns, monotonic

  Collector(CollectorOptions options, Opener open, Clock clock);
  // The node's shared-memory client and CLOCK_MONOTONIC.
  static std::unique_ptr<Collector> for_node(const CollectorOptions& options);

  // One tick: never fails (an unreachable node is an absent frame).
  std::shared_ptr<const Frame> collect();

 private:
  struct RecentEvent {
    Severity severity;
    std::string text;
    uint64_t count = 0;
    uint64_t last_ts_ns = 0;
  };
  using EventKey = std::tuple<int, int, uint64_t, std::string>;  // type, device, kind, name

  bool ensure_client(Frame& f);
  void read_events(Frame& f);
  void remember(const tf::Snapshot& s, const ReceivedEvent& e);
  void detect_ecc(const Frame& f);
  void update_history(Frame& f);
  void build_processes(Frame& f) const;
  void build_alarms(Frame& f);

  CollectorOptions options_;
  Opener open_;
  Clock clock_;
  uint64_t seq_ = 0;
  std::unique_ptr<tf::Client> client_;
  std::unique_ptr<tf::EventCursor> cursor_;
  std::shared_ptr<History> history_;
  uint64_t virtual_now_ns_ = 0;
  std::map<EventKey, RecentEvent> recent_;
  std::vector<std::array<std::optional<uint64_t>, 2>> ecc_totals_;  // per device: SBE, DBE totals
};

// The alarms of the node's state: one per incident (one per root cause: where, level, code and
// what, on the device it sits on or the first it touches), and each device a power limit throttles.
void state_alarms(const tf::Snapshot& s, std::vector<Alarm>& out);

}  // namespace npukit::top
