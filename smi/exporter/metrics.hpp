// What npu-exporter serves at /metrics, computed from one bus Snapshot (a scrape reads the bus;
// it never asks the node to measure anything).
//
// Families, in order:
//   npu_exporter_*        the exporter itself: node_up / node_stale (a dead or absent node is
//                         visible: up 0 and no device series, never frozen values), scrapes,
//                         scrape errors, last scrape duration, version info.
//   machine_npu_nums, machine_card_nums (MindX DL).
//   <registry names>      every node, device and link field of telemetry/fields.hpp under its
//                         registry name, converted mechanically (exporter_name()): "_ns" becomes
//                         "_seconds" (value / 1e9) and a gauge's "_count" suffix becomes "_num",
//                         so promtool's lint passes. npu_snapshot_checksum is internal and left out.
//   npu_chip_info_*       the MindX DL names, from the one alias table mindx_metrics().
//   processes             npu_process_hbm_used_bytes and MindX npu_chip_info_process_info (MB),
//                         labelled id + process_id (+ process_name).
// Device labels: id (logic id), model_name, pcie_bus_info. Samples whose status is not ok are
// left out ("no value" is never 0).
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "telemetry/snapshot.hpp"

namespace npukit::smi::exporter {

// How a MindX metric's value derives from its field.
enum class Convert : uint8_t {
  kAsIs,       // same unit
  kMebibytes,  // bytes -> MB (MiB, as MindX and npu-smi print memory)
  kHealthy,    // npu_health -> 1 when OK, 0 otherwise
};

struct MindxMetric {
  std::string_view name;  // e.g. "npu_chip_info_temperature"
  telemetry::FieldId field;
  Convert convert;
  std::string_view help;
};
// THE mapping from MindX DL npu-exporter names to registry fields (all device level, gauges).
std::span<const MindxMetric> mindx_metrics();

// The exporter's name for a registry field (see above), its HELP text (the registry's description
// with the unit it is exported in) and the factor its value is scaled by.
std::string exporter_name(const telemetry::FieldDef& f);
std::string exporter_help(const telemetry::FieldDef& f);
double exporter_scale(const telemetry::FieldDef& f);

struct ScrapeStatus {
  std::string node;
  bool reachable = false;             // a snapshot was read (it may still be stale)
  std::string error;                  // why not, when !reachable
  uint64_t scrapes_total = 0;         // including this one
  uint64_t scrape_errors_total = 0;   // scrapes that found no live node
  double last_scrape_seconds = 0;     // duration of the previous scrape
  std::string version;
};

// The exposition text. `snapshot` is null when the node could not be read.
std::string render_metrics(const telemetry::Snapshot* snapshot, const ScrapeStatus& status);

}  // namespace npukit::smi::exporter
