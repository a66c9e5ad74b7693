// The node's incidents, one per root cause, read from one bus snapshot with the incident table
// (telemetry/incidents.hpp): what `npu-smi health`, `-t health`, npu-top's alarms and the
// exporter's npu_incident series all show.
//
// Where they come from: a chip's or its memory's incidents are the error codes the device
// publishes (npu_error_code, _2.._4); link incidents are the links' states put through the link
// root-cause rule (a chip that lost all its links is one incident, its peers touched; any other
// unhealthy link is one incident, its endpoints touched); a stale node is one node incident.
//
// Thread-safety: pure functions over an immutable Snapshot.
#pragma once

#include <string>
#include <vector>

#include "telemetry/incidents.hpp"
#include "telemetry/snapshot.hpp"

namespace npukit::probes {

struct Incident {
  const telemetry::IncidentKind* kind = nullptr;
  int device = -1;            // chip and memory incidents (and links_down/links_degraded)
  int device_a = -1;          // link incidents: the pair (device_b -1: the host)
  int device_b = -1;
  std::string link_kind;      // "hccs", "pcie" for link incidents and links_down/_degraded
  std::vector<int> peers;     // NPUs it touches besides its own (shown at peer_severity)
  std::string entity;         // "NPU 3", "NPU 1 Chip 0", "HCCS 2-3", "node"
  std::string message;        // the kind's message with the measured values, <= 80 chars
  std::string summary;        // the kind's summary for this entity: static while it lasts
};

inline constexpr std::size_t kMaxMessageChars = 80;

std::vector<Incident> node_incidents(const telemetry::Snapshot& s);

// Whether `incident` sits on or touches `device`, and the severity it shows there (OK: neither).
telemetry::Health severity_on(const Incident& incident, int device);

// The summary text of a code for this chip ({memory} HBM or DDR, {link} HCCS or PCIe); "" for a
// code outside the table. (npu-smi -t health's Error Information.)
std::string code_summary(uint32_t code, const telemetry::Snapshot& s, int device);

// Every code a device publishes (npu_error_code, _2.._4), most severe first; empty when none.
std::vector<uint32_t> device_codes(const telemetry::Snapshot& s, int device);

}  // namespace npukit::probes
