// Snapshot: an immutable value holding everything a consumer draws from one read of the bus:
// node and device identity, every field of every entity with its status, the process table and
// whether the writer is stale. Collect -> immutable snapshot -> draw (STYLE.md item 4).
//
// Consistency: each entity (the node, one device, one link) and the process table is read
// under its own seqlock, so each is internally consistent (never torn); different devices may
// come from different writer commits.
//
// Stale: when the writer is gone or silent, stale() is true, every sample's status is kStale,
// npu_health reads Health::kUnknown and the process table is empty: a stale segment never shows
// as live data. Only the devices' error codes keep their last published bits (still kStale):
// they may say why the writer went quiet (a host that is down).
//
// Thread-safety: a Snapshot is a value; const methods are safe from any thread. Copies share
// the immutable identity block (node/device/link info).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "telemetry/fields.hpp"

namespace npukit::telemetry {

// Static identity, fixed for the writer's lifetime. String lengths are limited by the fixed
// arrays of the segment (limits below, in bytes, excluding the terminator); the writer rejects
// longer strings with InvalidArgument.
struct NodeInfo {
  std::string node_name;       // <= 48
  std::string node_spec;       // e.g. "8x910B2", <= 63
  std::string topology;        // e.g. "hccs_full_mesh", <= 31
  std::string driver_version;  // npu-smi banner "Version:", <= 31
  std::string tool_version;    // npu-smi banner tool version, <= 31
  int32_t card_count = 0;
  // CLOCK_REALTIME when the writer started (filled by the writer unless given: the hosts of an
  // emulated cluster run on one virtual clock, so their buses share one base).
  uint64_t start_realtime_ns = 0;
  int32_t writer_pid = 0;          // filled by the writer
  // One host of an emulated cluster publishes its devices as 0..n-1, as that machine's npu-smi
  // numbers them; this is the cluster-wide id of its device 0 (0 on a node that is not a host).
  int32_t device_base = 0;
  // Where the devices form HCCS groups joined by one shared host link (the first-generation 910's
  // two 4-NPU meshes), that link's line rate in bytes/s; 0 where there is none. It has no device
  // at either end, so it is not among the bus's links.
  double inter_group_bytes_per_s = 0;
};

struct DeviceInfo {
  int32_t npu_id = 0;    // card id (npu-smi -i)
  int32_t chip_id = 0;   // chip index within the card (npu-smi -c)
  int32_t logic_id = 0;  // chip logic id
  int32_t phy_id = 0;    // chip physical id (/dev/davinciN)
  int32_t aicore_count = 0;
  int32_t aicpu_count = 0;
  std::string name;              // product name as npu-smi prints it, e.g. "910B2", <= 31
  std::string chip_name;         // e.g. "910B2", <= 31
  std::string chip_type;         // family, e.g. "Ascend910B", <= 31
  std::string bus_id;            // "DDDD:BB:DD.F", <= 15
  std::string serial_number;     // <= 31
  std::string firmware_version;  // <= 31
  std::string smi_layout;        // "hbm" or "classic", <= 15
  std::string chip_version;      // e.g. "V1", <= 15 ("NA" when the part has none)
  std::string board_id;          // e.g. "0x65", <= 15
  std::string pcb_id;            // <= 15
  std::string bom_id;            // <= 15
  std::string die_id;            // VDie ID: 5 groups of 8 hex digits, unique per chip, <= 47

  // The chip's memory is HBM (npu-smi's "hbm" layout); else it is DDR (310P, "classic").
  bool has_hbm() const { return smi_layout != "classic"; }
};

// One direction of a physical link: data flows from device_a to device_b. An end that is not a
// device of this node is -1: the host (PCIe), the switch (an HCCS port into an NVSwitch-like
// fabric) or the network (a RoCE port), told by kind. At most one end is -1.
struct LinkInfo {
  int32_t device_a = 0;          // the sending end
  int32_t device_b = 0;          // the receiving end
  std::string kind;              // "hccs", "pcie", "roce", <= 15
  double peak_bytes_per_s = 0;   // one direction
  double latency_ns = 0;         // the fixed cost of one transfer over it (alpha), ns
};

struct ProcessInfo {
  int32_t pid = 0;
  int32_t device = 0;
  uint64_t hbm_bytes = 0;
  std::string name;  // <= 31 (longer names are truncated, like npu-smi)
};

// One sample: status plus the raw value bits, interpreted by the field's ValueType.
struct Sample {
  SampleStatus status = SampleStatus::kBlank;
  ValueType type = ValueType::kU64;
  uint64_t bits = 0;

  bool ok() const { return status == SampleStatus::kOk; }
  uint64_t as_u64() const;
  int64_t as_i64() const;
  double as_f64() const;
  // The value converted to double when ok(), nullopt otherwise ("no value" is never 0).
  std::optional<double> number() const;
};

struct SnapshotIdentity {
  NodeInfo node;
  std::vector<DeviceInfo> devices;
  std::vector<LinkInfo> links;
};

class Snapshot {
 public:
  Snapshot() = default;

  const NodeInfo& node() const { return identity_->node; }
  int device_count() const { return static_cast<int>(identity_->devices.size()); }
  int link_count() const { return static_cast<int>(identity_->links.size()); }
  const DeviceInfo& device_info(int device) const { return identity_->devices.at(device); }
  const LinkInfo& link_info(int link) const { return identity_->links.at(link); }

  // A field of the right level; an unknown id, a field of another level or an out-of-range
  // entity yields a kBlank sample.
  Sample node_field(FieldId id) const;
  Sample device(int device, FieldId id) const;
  Sample link(int link, FieldId id) const;
  // npu_health as an enum: kUnknown when stale or when the sample is not ok.
  Health health(int device) const;
  // Recomputes npu_snapshot_checksum from the device's other values: false means torn data (or
  // a device that never published; check the checksum's status first).
  bool checksum_ok(int device) const;

  const std::vector<ProcessInfo>& processes() const { return processes_; }

  bool stale() const { return stale_; }
  // Why the snapshot is stale ("writer pid 123 is gone", "heartbeat is 3.1 s old ..."); empty
  // when live.
  const std::string& stale_reason() const { return stale_reason_; }
  // CLOCK_MONOTONIC time the snapshot was taken, ns.
  uint64_t taken_at_ns() const { return taken_at_ns_; }

 private:
  friend class SnapshotBuilder;
  Sample sample(EntityLevel level, int entity, FieldId id) const;

  std::shared_ptr<const SnapshotIdentity> identity_ = std::make_shared<SnapshotIdentity>();
  // Per level (node, device, link): entity-major values and statuses.
  std::vector<uint64_t> values_[3];
  std::vector<uint8_t> statuses_[3];
  std::vector<ProcessInfo> processes_;
  bool stale_ = false;
  std::string stale_reason_;
  uint64_t taken_at_ns_ = 0;
};

// How npu-smi addresses a chip (-i card -c chip): "NPU 3" where every card has one chip,
// "NPU 2 Chip 1" on multi-chip cards (310P); the short form for narrow columns is "3" or "2-1".
std::string chip_label(int npu_id, int chip_id, bool multi_chip);
std::string chip_short_label(int npu_id, int chip_id, bool multi_chip);
// The same for a device of a snapshot (multi-chip when the node has fewer cards than chips).
std::string chip_label(const Snapshot& s, int device);
std::string chip_short_label(const Snapshot& s, int device);

// The checksum the writer stores in npu_snapshot_checksum: kChecksumSeed plus, for every other
// device field, checksum_term(slot, value bits, status). A sum of independently mixed terms, so
// one torn word changes it, and the writer can maintain it incrementally (O(changed fields)).
inline constexpr uint64_t kChecksumSeed = 0x6e706b6974637363ull;
inline uint64_t checksum_term(std::size_t slot, uint64_t value, uint8_t status) {
  uint64_t x = (value ^ (static_cast<uint64_t>(status) << 56)) + (slot + 1) * 0x9E3779B97F4A7C15ull;
  x *= 0xbf58476d1ce4e5b9ull;
  return x ^ (x >> 31);
}
uint64_t device_checksum(const uint64_t* values, const uint8_t* statuses, std::size_t n);

// Fills a Snapshot; used by the readers of both client backends (not by consumers).
class SnapshotBuilder {
 public:
  explicit SnapshotBuilder(Snapshot& s) : s_(s) {}
  void set_identity(std::shared_ptr<const SnapshotIdentity> identity);
  // Resizes the value/status storage of `level` for `entities` entities (keeps capacity).
  void resize(EntityLevel level, std::size_t entities);
  uint64_t* values(EntityLevel level, int entity);
  uint8_t* statuses(EntityLevel level, int entity);
  std::vector<ProcessInfo>& processes() { return s_.processes_; }
  void set_taken_at(uint64_t ns) { s_.taken_at_ns_ = ns; }
  // Blanks every field not in `keep` (processes are kept).
  void keep_only(std::span<const FieldId> keep);
  // Marks everything stale: statuses kStale, values 0, health kUnknown, no processes.
  void mark_stale(std::string reason);
  void mark_live() {
    s_.stale_ = false;
    s_.stale_reason_.clear();
  }

 private:
  Snapshot& s_;
};

}  // namespace npukit::telemetry
