#include "telemetry/incidents.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <tuple>
#include <nlohmann/json.hpp>

namespace npukit::telemetry {

extern const char kIncidentsJson[];  // incidents.json, compiled in (incidents_data.cpp.in)

namespace {

[[noreturn]] void table_error(const std::string& what) {
  std::fprintf(stderr, "npukit: telemetry/incidents.json: %s\n", what.c_str());
  std::abort();
}

Health parse_health(const std::string& s, const std::string& where) {
  for (Health h : {Health::kOk, Health::kWarning, Health::kAlarm, Health::kCritical}) {
    if (s == health_name(h)) return h;
  }
  table_error(where + ": unknown severity '" + s + "'");
}

template <typename E, std::size_t N>
E parse_enum(const std::string& s, const E (&all)[N], const char* (*name)(E), const std::string& where) {
  for (E e : all) {
    if (s == name(e)) return e;
  }
  table_error(where + ": unknown value '" + s + "'");
}

constexpr IncidentEntity kEntities[] = {IncidentEntity::kChip, IncidentEntity::kMemory, IncidentEntity::kLink,
                                        IncidentEntity::kNode};
constexpr Handling kHandlings[] = {Handling::kNone, Handling::kRestartJob, Handling::kResetNpu, Handling::kIsolateNpu,
                                   Handling::kReplaceHardware};

IncidentKind parse_row(const nlohmann::json& row) {
  IncidentKind k;
  k.kind = row.at("kind").get<std::string>();
  std::string code = row.at("code").get<std::string>();
  k.code = static_cast<uint32_t>(std::stoul(code, nullptr, 16));
  k.severity = parse_health(row.at("severity").get<std::string>(), k.kind);
  k.peer_severity = parse_health(row.value("peer_severity", "OK"), k.kind);
  k.entity = parse_enum(row.at("entity").get<std::string>(), kEntities, entity_name, k.kind);
  k.handling = parse_enum(row.at("handling").get<std::string>(), kHandlings, handling_name, k.kind);
  k.summary = row.at("summary").get<std::string>();
  k.message = row.at("message").get<std::string>();
  k.faults = row.at("faults").get<std::vector<std::string>>();
  k.lifted_by = row.at("lifted_by").get<std::string>();
  k.alert = row.value("alert", "NpuIncident");
  k.outlives_bus = row.value("outlives_bus", false);
  return k;
}

// Never destroyed: a thread still publishing while the process exits (an in-process daemon when
// a fuzzer calls exit()) must not read a table that static destruction has freed.
const std::vector<IncidentKind>& table() {
  static const std::vector<IncidentKind>* kinds = [] {
    auto* out_table = new std::vector<IncidentKind>;
    std::vector<IncidentKind>& out = *out_table;
    try {
      nlohmann::json doc = nlohmann::json::parse(kIncidentsJson);
      for (const auto& row : doc.at("incidents")) out.push_back(parse_row(row));
    } catch (const std::exception& e) {
      table_error(e.what());
    }
    return out_table;
  }();
  return *kinds;
}

}  // namespace

const char* entity_name(IncidentEntity e) {
  switch (e) {
    case IncidentEntity::kChip: return "chip";
    case IncidentEntity::kMemory: return "memory";
    case IncidentEntity::kLink: return "link";
    case IncidentEntity::kNode: return "node";
  }
  return "chip";
}

const char* handling_name(Handling h) {
  switch (h) {
    case Handling::kNone: return "none";
    case Handling::kRestartJob: return "restart_job";
    case Handling::kResetNpu: return "reset_npu";
    case Handling::kIsolateNpu: return "isolate_npu";
    case Handling::kReplaceHardware: return "replace_hardware";
  }
  return "none";
}

std::span<const IncidentKind> incident_kinds() { return table(); }

const IncidentKind* find_incident(uint32_t code) {
  for (const IncidentKind& k : table()) {
    if (k.code == code) return &k;
  }
  return nullptr;
}

const IncidentKind* find_incident(std::string_view kind) {
  for (const IncidentKind& k : table()) {
    if (k.kind == kind) return &k;
  }
  return nullptr;
}

const IncidentKind& incident(std::string_view kind) {
  const IncidentKind* k = find_incident(kind);
  if (k == nullptr) table_error("no incident kind '" + std::string(kind) + "'");
  return *k;
}

std::string fill(std::string_view text, std::span<const std::pair<std::string_view, std::string>> values) {
  std::string out(text);
  for (const auto& [key, value] : values) {
    std::string placeholder = "{" + std::string(key) + "}";
    for (auto at = out.find(placeholder); at != std::string::npos; at = out.find(placeholder, at + value.size())) {
      out.replace(at, placeholder.size(), value);
    }
  }
  return out;
}

// ---- Link root cause ----------------------------------------------------------------------

namespace {

// The kind of link a device's root cause is judged on: HCCS when it has any, else PCIe.
std::string main_kind(std::span<const LinkState> links, int device) {
  std::string kind;
  for (const LinkState& l : links) {
    if (l.device_a != device && l.device_b != device) continue;
    if (l.kind == "hccs") return "hccs";
    kind = l.kind;
  }
  return kind;
}

// Whether every link of `kind` touching `device` is in `condition`, and they lead to at least two
// peers (with a single peer, the link is as likely the cause as either chip).
bool all_links(std::span<const LinkState> links, int device, const std::string& kind, LinkCondition condition) {
  int total = 0, matching = 0;
  std::vector<int> peers;
  for (const LinkState& l : links) {
    if ((l.device_a != device && l.device_b != device) || l.kind != kind) continue;
    ++total, matching += l.condition == condition;
    int peer = l.device_a == device ? l.device_b : l.device_a;
    if (std::find(peers.begin(), peers.end(), peer) == peers.end()) peers.push_back(peer);
  }
  return peers.size() >= 2 && matching == total;
}

void add_peer(std::vector<int>& peers, int d) {
  if (d >= 0 && std::find(peers.begin(), peers.end(), d) == peers.end()) peers.push_back(d);
}

}  // namespace

std::vector<LinkIncident> link_incidents(std::span<const LinkState> links, int device_count) {
  std::vector<LinkIncident> out;
  std::vector<std::string> kinds(static_cast<std::size_t>(std::max(device_count, 0)));
  std::map<int, std::size_t> chip_incident;  // device -> index in out
  for (int d = 0; d < device_count; ++d) {
    std::string kind = main_kind(links, d);
    kinds[static_cast<std::size_t>(d)] = kind;
    for (auto [condition, name] : {std::pair{LinkCondition::kDown, "links_down"}, {LinkCondition::kDegraded, "links_degraded"}}) {
      if (kind.empty() || !all_links(links, d, kind, condition)) continue;
      chip_incident[d] = out.size();
      out.push_back({&incident(name), d, -1, -1, kind, {}});
      break;
    }
  }
  std::map<std::tuple<int, int, std::string>, std::size_t> pair_incident;
  for (const LinkState& l : links) {
    if (l.condition == LinkCondition::kOk) continue;
    // A down or degraded link explained by a chip that lost (or degraded) all its links.
    bool explained = false;
    for (int end : {l.device_a, l.device_b}) {
      auto it = end >= 0 ? chip_incident.find(end) : chip_incident.end();
      if (it == chip_incident.end() || kinds[static_cast<std::size_t>(end)] != l.kind) continue;
      LinkIncident& root = out[it->second];
      bool same = (root.kind->kind == "links_down") == (l.condition == LinkCondition::kDown);
      if (!same) continue;
      add_peer(root.peers, end == l.device_a ? l.device_b : l.device_a);
      explained = true;
    }
    if (explained) continue;
    int a = std::min(l.device_a, l.device_b) < 0 ? std::max(l.device_a, l.device_b) : std::min(l.device_a, l.device_b);
    int b = a == l.device_a ? l.device_b : l.device_a;
    auto key = std::tuple{a, b, l.kind};
    auto found = pair_incident.find(key);
    const char* name = l.condition == LinkCondition::kDown       ? "link_down"
                       : l.condition == LinkCondition::kFlapping ? "link_flapping"
                                                                 : "link_degraded";
    if (found == pair_incident.end()) {
      found = pair_incident.emplace(key, out.size()).first;
      out.push_back({&incident(name), -1, a, b, l.kind, {}});
    }
    LinkIncident& inc = out[found->second];
    // Directions disagree (one flapping, one down): the worse condition names the incident.
    if (incident(name).severity > inc.kind->severity) inc.kind = &incident(name);
    add_peer(inc.peers, a);
    add_peer(inc.peers, b);
  }
  for (LinkIncident& inc : out) std::sort(inc.peers.begin(), inc.peers.end());
  return out;
}

}  // namespace npukit::telemetry

namespace npukit::telemetry {

LinkCondition link_condition(bool up, double rate_percent, uint64_t down_events_recent) {
  if (down_events_recent >= kFlapEvents) return LinkCondition::kFlapping;
  if (!up) return LinkCondition::kDown;
  if (rate_percent < kDegradedRatePercent) return LinkCondition::kDegraded;
  return LinkCondition::kOk;
}

}  // namespace npukit::telemetry

namespace npukit::telemetry {

Result<std::pair<int, int>> parse_link_ends(std::string_view text) {
  auto number = [](std::string_view t, int& out) {
    if (t.empty() || t.size() > 4) return false;
    out = 0;
    for (char c : t) {
      if (c < '0' || c > '9') return false;
      out = out * 10 + (c - '0');
    }
    return true;
  };
  auto dash = text.find('-');
  int a = 0, b = 0;
  bool ok = dash != std::string_view::npos && number(text.substr(0, dash), a);
  std::string_view second = ok ? text.substr(dash + 1) : std::string_view();
  if (ok && second == "host") return std::pair{a, -1};
  if (ok && second == "roce") return std::pair{a, kRocePort};
  if (ok && second == "switch") return std::pair{a, kSwitchPort};
  if (ok && number(second, b)) return std::pair{a, b};
  return InvalidArgument("invalid link '" + std::string(text) +
                         "': expected A-B (two device ids, e.g. 2-3), A-host, A-roce (A's RoCE port) or A-switch "
                         "(A's port into the node's switch)");
}

std::string link_ends_name(int a, int b) {
  const char* far = b == kRocePort ? "roce" : b == kSwitchPort ? "switch" : "host";
  return std::to_string(a) + "-" + (b < 0 ? std::string(far) : std::to_string(b));
}

std::string link_ends_name(int a, int b, std::string_view kind) {
  if (b >= 0) return link_ends_name(a, b);
  return link_ends_name(a, kind == "roce" ? kRocePort : kind == "hccs" ? kSwitchPort : b);
}

}  // namespace npukit::telemetry
