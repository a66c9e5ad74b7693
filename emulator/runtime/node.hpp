// An emulated node: N devices from a node spec, one virtual clock, one task engine, and the
// per-process contexts (the ACL-like runtime) that drive them.
//
// Usage:
//   auto node = Node::create({.spec = "8x910B2", .seed = 1});
//   Context& ctx = *(*node)->create_context(/*device=*/0, /*pid=*/4242, "python3");
//   ... ctx.malloc / launch / synchronize ...
//
// The node reports through observers: tasks to the engine's TaskObservers, allocations, link
// state changes and ECC errors to its NodeObservers (node_events.hpp); the Publisher carries both
// to the telemetry bus. It never prints. One thread drives a node; nothing here is thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "emulator/device/allocator.hpp"
#include "emulator/fabric/collectives.hpp"
#include "emulator/device/device.hpp"
#include "emulator/engine/engine.hpp"
#include "emulator/fabric/fabric.hpp"
#include "emulator/device/health.hpp"
#include "emulator/runtime/node_events.hpp"
#include "emulator/runtime/physics.hpp"
#include "emulator/engine/scheduler.hpp"
#include "emulator/device/spec.hpp"

namespace npukit::emu {

class Context;

struct NodeOptions {
  std::string spec = "8x910B2";  // node catalog name or path
  uint64_t seed = 0;
  bool functional = false;        // back device memory and compute real results
  double jitter = 0.005;          // relative spread of task durations
  TimeMode mode = TimeMode::kFast;
  double speed = 1.0;             // paced mode: virtual seconds per wall second
  Nanos task_timeout_ns = 2'000'000'000;  // a task on a hung AI Core fails after this long
  bool physics = true;            // run the power/thermal/DVFS model
};

// A fault in force and where it came from.
struct ActiveFault {
  int device = 0;
  int peer = -1;       // a link fault: the link's other end (-1: the host, telemetry::kRocePort:
                       // its RoCE port, telemetry::kSwitchPort: its port into the node's switch);
                       // device < peer when both are devices
  bool link = false;   // on the link device-peer rather than on the device
  FaultKind kind = FaultKind::kOverTemperature;
  std::string source;  // "control" (npu-emud inject, npu-smi) or the job whose timeline injected it
  Nanos since = 0;     // virtual time of the injection
  uint64_t id = 0;     // the node's serial number for it
  bool flap_down = false;  // link-flapping: in its down phase
};

// One entry of a fault timeline: at virtual time `at`, do `action` on `device` (kPowerLimit
// sets its power limit to `watts`, as `npu-emud set --power-limit` does).
struct FaultEvent {
  enum class Action : uint8_t { kInject, kClear, kReset, kPowerLimit };
  Nanos at = 0;
  int device = 0;
  Action action = Action::kInject;
  FaultKind kind = FaultKind::kOverTemperature;  // for kInject
  double watts = 0;                               // for kPowerLimit
  std::string source = "control";                 // who scheduled it (end_faults_of() ends its faults)
  int peer = -2;  // else the fault acts on the link device-peer (-1: device's host link,
                  // telemetry::kRocePort: its RoCE port, telemetry::kSwitchPort: its switch port)
};

class Node {
 public:
  static Result<std::unique_ptr<Node>> create(const NodeOptions& options);
  ~Node();
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;

  const NodeSpec& spec() const { return spec_; }
  const NodeOptions& options() const { return options_; }
  int device_count() const { return static_cast<int>(devices_.size()); }
  Device& device(int id) { return devices_[id]; }
  const Device& device(int id) const { return devices_[id]; }
  Scheduler& scheduler() { return scheduler_; }
  Engine& engine() { return *engine_; }
  Fabric& fabric() { return *fabric_; }
  const Fabric& fabric() const { return *fabric_; }
  CollectiveHub& collectives() { return *collectives_; }
  Physics& physics() { return *physics_; }
  // Observers of allocations, link state changes and ECC errors (node_events.hpp).
  NodeEvents& events() { return events_; }
  Nanos now() const { return scheduler_.now(); }

  // A process context on `device` (like aclrtSetDevice + aclrtCreateContext). InvalidArgument
  // "invalid device id N (this node has devices 0-7)" for a bad id.
  Result<Context*> create_context(int device, uint32_t pid, std::string process_name,
                                  AllocatorPolicy policy = AllocatorPolicy::kCaching);
  // Frees everything the context holds and forgets it.
  void destroy_context(Context* ctx);
  const std::vector<std::unique_ptr<Context>>& contexts() const { return contexts_; }

  // Advances virtual time by `ns` of host-side blocking (the device keeps running meanwhile).
  void host_wait(Nanos ns) { scheduler_.run_until(scheduler_.now() + ns); }
  // Runs until no event is pending.
  void run_until_idle() { scheduler_.run_until_idle(); }

  Status check_device(int device) const;

  // A communicator over the devices of `ranks` (rank r = ranks[r]); each context issues its
  // rank's calls (Context::all_reduce, ...).
  Result<CommId> create_communicator(std::string name, const std::vector<Context*>& ranks,
                                     CollectiveAlgo algo = CollectiveAlgo::kAuto);

  // Faults (health.hpp). inject/clear/reset act now; schedule_faults() at virtual times.
  // A device's HCCS links (PCIe links on a PCIe-only node) are down while a device at either end
  // has an active link-down fault.
  // A host fault (host-slow, host-down) named by any device acts on every device of its host.
  Status inject_fault(int device, FaultKind kind, const std::string& source = "control");
  // Whether host `host` (of a cluster; 0 on a single node) is down (a host-down fault).
  bool host_down(int host) const;
  // A fault on one physical link (both directions) between devices a and b (b = -1: a's PCIe
  // link to the host): link-down, link-degraded or link-flapping (down 100 ms of every second).
  Status inject_link_fault(int a, int b, FaultKind kind, const std::string& source = "control");
  // Lifts the device's faults and those of every link that touches it (and that link's
  // down-event history).
  Status clear_faults(int device);
  Status clear_link_faults(int a, int b);
  Status reset_device(int device);
  Status schedule_faults(const std::vector<FaultEvent>& timeline);
  // Whether an entry of a timeline can be carried out here (its device or link, fault, time, watts).
  Status check_fault(const FaultEvent& f) const;
  // The faults in force, by device then injection time.
  std::vector<ActiveFault> active_faults() const;
  // A workload ended: its timeline's events not yet due are dropped, and the faults it injected
  // end with it, as they would on real parts, except those that outlive a workload there
  // (hbm-double-bit: the page stays bad; aicore-hang and device-lost: until a reset). Power
  // limits it set return to what they were.
  void end_faults_of(const std::string& source);
  // Lowers (or restores) a device's power limit; DVFS keeps power under it. Watts in (0, TDP].
  // `shown_as`: the device's id in messages (a cluster host's own numbering); -1: `device`.
  Status set_power_limit(int device, double watts, int shown_as = -1);
  // Brings every link to the state the faults in force call for, reporting each change, and
  // puts the link root cause (telemetry::link_incidents) on the devices as alarms. Called after
  // each fault change and before each publish (down events age out of the flap window).
  // `cause`: the device whose fault, clear or reset this follows (named in link-state events).
  void refresh_links(int cause = -1);

 private:
  Node(NodeSpec spec, NodeOptions options);
  Status check_link(int a, int b) const;
  void flap(uint64_t fault_id, bool down);
  uint64_t next_fault_id_ = 1;

  NodeSpec spec_;
  NodeOptions options_;
  NodeEvents events_;
  Scheduler scheduler_;
  std::vector<Device> devices_;
  std::unique_ptr<Engine> engine_;
  std::unique_ptr<Fabric> fabric_;
  std::unique_ptr<CollectiveHub> collectives_;
  std::unique_ptr<Physics> physics_;
  std::vector<std::unique_ptr<Context>> contexts_;
  std::vector<ActiveFault> faults_;  // as injected; entries whose fault was lifted are pruned
  struct PowerLimitSet {
    int device;
    double previous_w;
    std::string source;
  };
  std::vector<PowerLimitSet> power_limits_;  // set by timelines, restored at end_faults_of()
  std::vector<std::string> ended_sources_;
  void prune_faults();
  void apply_fault(int device, FaultKind kind, const std::string& source);  // checked by inject_fault
};

}  // namespace npukit::emu
