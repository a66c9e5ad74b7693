// How a report's header names what it covers: ranks, hosts and faults in words
// (ReportHeader's methods, report_model.hpp).
#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "profiler/analyze/report_model.hpp"
#include "telemetry/incidents.hpp"

namespace npukit::prof {

std::string ReportHeader::rank_label(int device) const {
  auto rank = device_ranks.find(device);
  std::string where = device_label(device_hosts, device);
  return rank == device_ranks.end() ? where : "rank " + std::to_string(rank->second) + " (" + where + ")";
}

namespace {

// Whether the injected fault ("host-slow", "link-degraded on link 3-roce") strikes a whole host
// (its incident's entity is the node), from the incident table.
bool host_wide(const std::string& fault) {
  std::string name = fault.substr(0, fault.find(' '));
  for (const telemetry::IncidentKind& k : telemetry::incident_kinds()) {
    if (k.entity == telemetry::IncidentEntity::kNode && std::find(k.faults.begin(), k.faults.end(), name) != k.faults.end()) return true;
  }
  return false;
}

}  // namespace

std::string ReportHeader::fault_where(const Fault& f) const {
  if (f.devices.empty()) return f.fault;
  // A link's fault names the link ("link-degraded on link 0-2"), not one of its ends (it read
  // "... on link 0-2 on rank 0 (device 0)"); across hosts, with the host whose numbering it uses.
  if (f.fault.find(" on link ") != std::string::npos) {
    std::string host = host_of(f.devices.front());
    return host.empty() ? f.fault : f.fault + " of " + host;
  }
  if (device_hosts.empty() && f.devices.size() == devices.size() && devices.size() > 1) {
    return f.fault + " on every NPU (" + std::to_string(devices.size()) + ")";
  }
  // Every device of one host: the host.
  std::string host = host_of(f.devices.front());
  int on_host = 0;
  for (const auto& [device, where] : device_hosts) on_host += where.host == host;
  bool whole_host = !host.empty() && on_host == static_cast<int>(f.devices.size()) &&
                    std::all_of(f.devices.begin(), f.devices.end(), [&](int d) { return host_of(d) == host; });
  // One recorded NPU of a host is "all" of it only for a fault of the host's (a degraded NPU read
  // "on c-1 (all 1 NPUs)", a host-wide fault).
  if (whole_host && on_host > 1) return f.fault + " on " + host + " (all " + std::to_string(on_host) + " NPUs)";
  if (whole_host && host_wide(f.fault)) return f.fault + " on " + host + " (1 NPU recorded)";
  std::string out;
  for (int d : f.devices) out += (out.empty() ? "" : ", ") + rank_label(d);
  return f.fault + " on " + out;
}

std::string ReportHeader::recorded_as() const {
  if (mode != "lossless") return mode;
  if (lossless_lost) return "lossless until its reader was evicted (" + std::to_string(events_missed) + " events missed)";
  if (events_missed > 0) return "lossless, yet " + std::to_string(events_missed) + " events missed";
  return mode;
}

std::string ReportHeader::size_label() const {
  if (ranks > 1) return std::to_string(ranks) + " ranks";
  return std::to_string(devices.size()) + (devices.size() == 1 ? " device" : " devices");
}

std::string ReportHeader::host_of(int device) const {
  auto it = device_hosts.find(device);
  return it == device_hosts.end() ? "" : it->second.host;
}

std::vector<std::string> ReportHeader::hosts() const {
  std::vector<std::string> out;
  for (const auto& [device, h] : device_hosts) {
    if (std::find(out.begin(), out.end(), h.host) == out.end()) out.push_back(h.host);
  }
  return out;
}

std::string ReportHeader::node_label() const {
  std::vector<std::string> h = hosts();
  if (h.size() == 1) return h.front() + ", a host of " + node_spec;  // one host's ranks of a cluster
  return h.empty() ? node_spec : std::to_string(h.size()) + " hosts of " + node_spec;
}

std::string ReportHeader::recording_state() const {
  if (!damage.empty()) {
    std::string what;
    for (const std::string& d : damage) what += (what.empty() ? "" : "; ") + d;
    return "DAMAGED: " + what;
  }
  if (complete) return "complete";
  if (!node_lost.empty()) return "INCOMPLETE: the node went away during the recording (" + node_lost + ")";
  return "INCOMPLETE: the recorder stopped before finalizing; derived tables recomputed";
}

}  // namespace npukit::prof
