// Node-level happenings other than tasks (a TaskObserver sees those): device-memory allocations
// and frees, link state changes and ECC errors. The Publisher turns them into bus events.
//
// Who reports what:
//   memory     Context::malloc/free/allocate/deallocate, every successful call; a program
//              runner frees the buffers a job still holds when it ends, so allocs and frees pair up
//   link state Node::inject_fault/clear_faults/reset_device: one record per link whose state
//              actually changed
//   ECC        Node::inject_fault (hbm-double-bit: one record), Physics (ecc-storm: one record per
//              device per tick that added errors, with the tick's count; never one per error)
// Each record carries the virtual time it happened at. Observers are called synchronously on the
// node's thread and must not call back into the node; they are not owned (remove one before it
// dies). Nothing here is thread-safe.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string_view>
#include <vector>

#include "emulator/device/allocator.hpp"
#include "emulator/device/health.hpp"
#include "emulator/device/memory.hpp"
#include "emulator/device/spec.hpp"

namespace npukit::emu {

struct MemoryRecord {
  bool alloc = true;   // false: a free
  int device = 0;
  uint32_t pid = 0;
  uint64_t bytes = 0;  // as the caller requested (a free: the freed allocation's request)
  DevPtr address = 0;
  uint64_t allocated_after = 0;  // the context's live requested bytes after the call
  uint64_t reserved_before = 0;  // what the context's allocator held from the device before the call
  uint64_t reserved_after = 0;   // and after it
  Nanos at = 0;
  std::string_view tag;  // what the caller calls the buffer ("activations"; "" when unnamed);
                         // valid during the observer call only
  Nanos host_ns = 0;     // the call's cost on the host (the allocator's modelled aclrtMalloc/Free)
  AllocResult::Flush flush;  // an alloc that emptied the cache first (released_bytes > 0)
};

struct LinkStateRecord {
  int link = 0;  // Fabric link id
  bool up = true;
  int device = 0;  // the device whose fault, clear or reset changed the link
  Nanos at = 0;
  double rate_percent = 100;  // of its line rate it now trains at (25 after a degradation)
};

struct EccRecord {
  int device = 0;
  bool double_bit = false;
  uint64_t errors = 0;          // added by this happening
  uint64_t isolated_pages = 0;  // added by this happening
  uint64_t total_after = 0;     // the device's aggregate (lifetime) count of that kind after
  Nanos at = 0;
};

// A DVFS decision that changed a device's AI-core clock or its throttle reasons.
struct ClockRecord {
  int device = 0;
  uint32_t reasons_before = 0;  // ThrottleReason bits
  uint32_t reasons_after = 0;
  int clock_mhz = 0;  // after
  Nanos at = 0;
};

// A fault that took effect: injected by hand or by a workload's timeline (Node::inject_fault,
// inject_link_fault). A host fault reports each device of its host.
struct FaultRecord {
  int device = 0;
  int peer = -2;  // a link fault: its other end (-1 the host, telemetry::kRocePort the RoCE port,
                  // telemetry::kSwitchPort the port into the node's switch)
  FaultKind kind = FaultKind::kOverTemperature;
  Nanos at = 0;
};

class NodeObserver {
 public:
  virtual ~NodeObserver() = default;
  virtual void on_memory(const MemoryRecord&) {}
  virtual void on_fault(const FaultRecord&) {}
  virtual void on_link_state(const LinkStateRecord&) {}
  virtual void on_ecc(const EccRecord&) {}
  virtual void on_clock(const ClockRecord&) {}
};

// The node's observer list and the calls that notify it.
class NodeEvents {
 public:
  void add(NodeObserver* o) { observers_.push_back(o); }
  void remove(NodeObserver* o) { std::erase(observers_, o); }
  // True when nobody listens: reporters skip the work of building a record.
  bool empty() const { return observers_.empty(); }

  void memory(const MemoryRecord& r) const {
    for (NodeObserver* o : observers_) o->on_memory(r);
  }
  void link_state(const LinkStateRecord& r) const {
    for (NodeObserver* o : observers_) o->on_link_state(r);
  }
  void fault(const FaultRecord& r) const {
    for (NodeObserver* o : observers_) o->on_fault(r);
  }
  void ecc(const EccRecord& r) const {
    for (NodeObserver* o : observers_) o->on_ecc(r);
  }
  void clock(const ClockRecord& r) const {
    for (NodeObserver* o : observers_) o->on_clock(r);
  }

 private:
  std::vector<NodeObserver*> observers_;
};

}  // namespace npukit::emu
