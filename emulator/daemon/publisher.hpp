// Publishes an emulated node to the telemetry bus: every device's fields (utilization, power,
// temperature, clocks, memory, health, ECC, counters), every link (counters, state, bandwidth
// utilization), the process table, and events (each finished kernel, copy and collective; HBM
// allocs and frees, link state changes, ECC errors; health, throttle and fault changes).
//
// The emulator never prints; this is how its state leaves the process. The daemon calls
// publish() at its publishing rate; task events are recorded as tasks finish (the Publisher is a
// TaskObserver) and node events as they happen (a NodeObserver), each with its virtual time.
// Payload words: the table in telemetry/events.cpp. Same thread as the node.
#pragma once

#include <string>
#include <unordered_map>
#include <vector>

#include "emulator/runtime/node.hpp"
#include "telemetry/writer.hpp"

namespace npukit::emu {

// The devices one bus shows: the whole node, or one host of a cluster, whose devices it numbers
// from 0 as that machine's own npu-smi does (bus device = node device - first).
struct HostView {
  int first = 0;
  int count = -1;  // -1: every device of the node
  static HostView of_host(const Node& node, int host) {
    return {host * node.spec().devices_per_host(), node.spec().devices_per_host()};
  }
  // The devices it covers on `node` (count -1 resolved to every device).
  HostView on(const Node& node) const { return count < 0 ? HostView{0, node.device_count()} : *this; }
  // Whether it is one host of a cluster `node` rather than the whole node.
  bool one_host(const Node& node) const { return count >= 0 && count < node.device_count(); }
};

// The fabric links the bus carries: every link with one of the view's devices at one end, in
// fabric order (the shared link between the 8x910's two meshes has none and is not published;
// a spine lane neither).
std::vector<int> published_links(const Node& node, HostView view = {});
// The writer options (identity of the node or host, its devices and links) for `node`.
telemetry::WriterOptions writer_options_for(const Node& node, const std::string& node_name, HostView view = {});

class Publisher final : public TaskObserver, public NodeObserver {
 public:
  // Publishes the view's devices (events of other devices are not its own; node-level events,
  // device -1, are every bus's).
  Publisher(Node& node, telemetry::Writer& writer, HostView view = {});
  ~Publisher() override;

  // Samples physics, then publishes node, device and link fields, the process table and any
  // health/throttle changes since the last call, and beats the heartbeat.
  // `sample_node` false: another publisher of the same node sampled it this round.
  void publish(double speed, Nanos lag_ns, bool sample_node = true);
  void on_task_end(const TaskRecord& r) override;
  void on_task_enqueued(const TaskRecord& r) override;
  void on_memory(const MemoryRecord& r) override;
  void on_link_state(const LinkStateRecord& r) override;
  void on_fault(const FaultRecord& r) override;
  void on_ecc(const EccRecord& r) override;
  void on_clock(const ClockRecord& r) override;
  // Records a marker-like event with a name (job started/finished, faults); `device` is the
  // node's id (-1: the node), and an event of a device outside the view is not recorded.
  void record(telemetry::EventType type, int device, const std::string& name,
              std::array<uint64_t, 4> words = {}, const std::string& aux = "");
  // The same with an explicit timestamp (virtual ns).
  void record_at(telemetry::EventType type, int device, Nanos ts, const std::string& name,
                 std::array<uint64_t, 4> words = {}, const std::string& aux = "");

 private:
  // The bus's id of node device `d`, or -2 when it is not in the view (-1 stays -1).
  int bus_device(int d) const { return d < 0 ? -1 : d >= first_ && d < first_ + count_ ? d - first_ : -2; }
  void emit(telemetry::Event& e);  // e.device is the node's id
  void publish_device(int d);
  void publish_links();
  void publish_processes();
  uint32_t intern(const std::string& s);
  // The bus string id of an op descriptor's "<op>|<shapes>|<dtypes>" (cached).
  uint32_t descriptor_string(uint32_t descriptor);
  // The bus string id of the communicator description of a collective call (cached per
  // communicator; telemetry/comm_group.hpp).
  uint32_t group_string(uint32_t call);

  Node& node_;
  telemetry::Writer& writer_;
  int first_ = 0;  // the view
  int count_ = 0;
  std::vector<uint64_t> last_health_;
  std::vector<int> links_;      // bus link index -> fabric link id
  std::vector<int> bus_links_;  // fabric link id -> bus link index, -1 when not published
  std::vector<bool> has_hccs_;  // by device: it has outgoing HCCS links
  // The bytes a device's PCIe link carried in one direction: its host copies (the engine counts
  // them on the device) plus the fabric's transfers over it (collectives through the host, counted
  // on the link). The device's PCIe counters and the link's counter both publish this sum.
  uint64_t pcie_bytes(int device, bool to_host) const;
  std::unordered_map<uint32_t, uint32_t> descriptor_ids_;
  // communicator -> (its slot's generation, bus string id): a reused slot is a new communicator
  std::unordered_map<uint32_t, std::pair<uint64_t, uint32_t>> group_ids_;
};

}  // namespace npukit::emu
