// Device and node specifications: the catalog of emulated chips (JSON files under
// emulator/specs/, each figure with its public source) and the loaders that validate them.
//
// Units are in the field names: *_mhz, *_bytes, *_bps (bytes per second), *_ns, *_w, *_c.
// A spec is an immutable value once loaded; share it by const reference.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "telemetry/status.hpp"

namespace npukit::emu {

using Nanos = int64_t;  // virtual time and durations, integer nanoseconds

struct ClockSpec {
  int nominal_mhz = 0;
  int min_mhz = 0;
  int max_mhz = 0;
  int idle_mhz = 0;  // what the clock reads while the chip has no work (kernels never run at it)
};

// Peak throughput of one unit over the whole chip, in FLOP/s (or OP/s for int8).
struct PeakSpec {
  double fp16 = 0;
  double bf16 = 0;
  double fp32 = 0;
  double int8 = 0;
};

// Fraction of peak a well-shaped kernel achieves (calibrated against published measurements).
struct EfficiencySpec {
  double cube = 1;
  double conv = 0;  // convolutions on the cube unit (implicit GEMM); 0: they run at `cube`
  double vector = 1;
  double hbm = 1;
  double aicpu = 1;
  double pcie = 1;
};

struct HbmSpec {
  uint64_t capacity_bytes = 0;
  uint64_t firmware_reserved_bytes = 0;  // used by driver/firmware at idle (npu-smi shows it)
  double bandwidth_bps = 0;              // peak bytes/s
  int clock_mhz = 0;
};

struct PcieSpec {
  int gen = 0;
  int lanes = 0;
  double bandwidth_bps = 0;  // per direction, raw
  Nanos latency_ns = 0;      // per transfer set-up
};

// Costs of runtime calls that run on the host and block it (modelled aclrtMalloc/aclrtFree).
struct RuntimeCostSpec {
  Nanos kernel_launch_ns = 0;   // AI Core task scheduling + completion overhead
  Nanos aicpu_launch_ns = 0;    // AI CPU task overhead
  Nanos malloc_ns = 0;          // fixed cost of one device malloc
  Nanos malloc_ns_per_mib = 0;  // page-table set-up cost per MiB
  Nanos free_ns = 0;            // device free (implies a device synchronize)
  Nanos op_compile_ns = 0;      // online compile of an op for a static shape not compiled before
};

struct PowerSpec {
  double tdp_w = 0;
  double idle_w = 0;
  bool reported = true;  // false: the chip reports no power reading (310P), so the bus has none
};

struct ThermalSpec {
  double ambient_c = 0;
  double throttle_c = 0;  // AI-core clock steps down above this
  double shutdown_c = 0;
  double resistance_c_per_w = 0;  // steady-state rise per watt
  double time_constant_s = 0;
};

struct DeviceSpec {
  std::string name;        // catalog name, e.g. "Ascend910B2"
  std::string chip_name;   // as npu-smi prints it, e.g. "910B2"
  std::string chip_type;   // family, e.g. "Ascend910B"
  std::string smi_layout;  // "hbm" (910 family) or "classic" (310P)
  int chips_per_card = 1;
  int aicore_count = 0;    // cube (AIC) cores: the pool cube kernels are launched over
  // Vector (AIV) cores. Where there are more of them than AI cores (the 910B: one AIC and two
  // AIVs per cluster) they are a pool of their own that vector kernels run over; where the counts
  // are equal (the 910, 310P: one DaVinci core holds both units) vector kernels share the AI cores.
  int vector_core_count = 0;
  int aicpu_count = 0;
  ClockSpec aicore_clock;
  PeakSpec cube_peak;      // FLOP/s at aicore_clock.max_mhz
  PeakSpec vector_peak;    // FLOP/s at aicore_clock.max_mhz
  double aicpu_flops_per_core = 0;
  EfficiencySpec efficiency;
  HbmSpec hbm;
  PcieSpec pcie;
  RuntimeCostSpec runtime;
  PowerSpec power;
  ThermalSpec thermal;

  bool separate_vector_cores() const { return vector_core_count > aicore_count; }
  // The vector kernels' pool: the AIVs where they are separate, else the AI cores.
  int vector_pool() const { return separate_vector_cores() ? vector_core_count : aicore_count; }
  std::string firmware_version;
  // Board identity npu-smi -t board prints ("NA" where the part has none).
  std::string chip_version, board_id, pcb_id, bom_id;
  std::string driver_version;
  std::map<std::string, std::string> sources;  // field -> where the figure comes from
};

// Scale-out: every NPU's own RoCE port into the cluster's switches (a node spec's `scale_out`).
struct RoceSpec {
  double port_bps = 0;       // per direction (200 GbE: 25e9); 0: the node has no scale-out port
  Nanos latency_ns = 0;      // one hop: NIC, switch, NIC
  double efficiency = 0.9;   // achieved fraction of line rate for bulk transfers
};

// How the hosts' ports meet: one leaf switch for all ("leaf"), or leaves of `hosts_per_leaf`
// hosts joined through spines ("leaf_spine"), each leaf's uplinks carrying its ports' rate
// divided by `oversubscription`.
struct SwitchSpec {
  std::string kind = "leaf";
  int hosts_per_leaf = 0;
  double oversubscription = 1;
};

// A node spec describes one host. A cluster is `hosts` of them on one virtual clock, joined by
// RoCE: device ids run host by host (host h has devices h x devices_per_host() ..), and the
// per-host fields (cards, topology, bus ids) describe every host alike.
struct NodeSpec {
  std::string name;       // e.g. "8x910B2", or a cluster's "4x8x910B2"
  std::string device;     // device catalog name
  int cards = 0;
  std::string topology;   // "hccs_full_mesh", "hccs_switch", "hccs_two_meshes_pcie", "pcie"
  std::vector<std::vector<int>> hccs_groups;  // card ids fully meshed by HCCS
  double hccs_link_bps = 0;  // per peer link, per direction
  Nanos hccs_latency_ns = 0;
  double link_efficiency = 0.8;    // achieved fraction of line rate for bulk transfers
  double inter_group_bps = 0;      // hccs_two_meshes_pcie: the shared link between the groups
  Nanos inter_group_latency_ns = 0;
  std::vector<std::string> bus_ids;  // one per card, "DDDD:BB:DD.F"
  std::map<std::string, std::string> sources;
  DeviceSpec device_spec;  // resolved from `device`
  RoceSpec roce;
  // Cluster only (hosts > 1):
  int hosts = 1;
  std::string host_spec;   // the node spec each host is, e.g. "8x910B2" (its name when hosts == 1)
  SwitchSpec scale_out_switch;

  int devices_per_host() const { return cards * device_spec.chips_per_card; }
  int device_count() const { return hosts * devices_per_host(); }
  int host_of(int device) const { return device / devices_per_host(); }
  bool is_cluster() const { return hosts > 1; }
};

// The catalog folder: $NPUKIT_SPEC_DIR if set, else the source tree's emulator/specs.
std::string spec_dir();

// Load a device spec by catalog name (specs/devices/<name>.json) or by path to a .json file.
// Errors are one line: "spec error: <file>: field '<path>': <what>" or
// "spec error: <file>:<line>:<col>: <json syntax problem>" or "spec error: no device spec '<n>' ...".
Result<DeviceSpec> load_device_spec(const std::string& name_or_path);
// Load a node spec (specs/nodes/<name>.json or a path) and the device spec it names; or a
// cluster: "<H>x<node>" (H hosts of a catalog node, one leaf switch) or a cluster file
// (specs/clusters/<name>.json: its host node, host count and switch).
Result<NodeSpec> load_node_spec(const std::string& name_or_path);
// Names of the shipped node specs, sorted (for --help texts and error messages).
std::vector<std::string> catalog_node_names();

}  // namespace npukit::emu
