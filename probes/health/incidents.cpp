#include "probes/health/incidents.hpp"

#include <algorithm>
#include <cstdio>
#include <utility>

#include "probes/health/health_rules.hpp"

namespace npukit::probes {

namespace tf = telemetry;
namespace fid = telemetry::fid;

namespace {

using Values = std::vector<std::pair<std::string_view, std::string>>;

std::string whole(std::optional<double> v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0f", v.value_or(0));
  return buf;
}

bool has_hbm(const tf::Snapshot& s, int device) {
  auto hbm = s.device(device, fid::kHbmTotalBytes).number();
  return hbm && *hbm > 0;
}

bool has_hccs(const tf::Snapshot& s, int device) {
  for (int l = 0; l < s.link_count(); ++l) {
    const tf::LinkInfo& link = s.link_info(l);
    if (link.kind == "hccs" && (link.device_a == device || link.device_b == device)) return true;
  }
  return false;
}

std::string link_word(const std::string& kind) { return kind == "hccs" ? "HCCS" : kind == "pcie" ? "PCIe" : kind; }

// The placeholders every message of a device may use.
Values device_values(const tf::Snapshot& s, int device) {
  return {{"npu", tf::chip_label(s, device)},
          {"memory", has_hbm(s, device) ? "HBM" : "DDR"},
          {"link", has_hccs(s, device) ? "HCCS" : "PCIe"}};
}

// The measured value and the limit a device incident's message names.
std::pair<std::string, std::string> measured(const tf::IncidentKind& k, const tf::Snapshot& s, int d) {
  Thresholds limits = thresholds_for(s.device_info(d));
  auto field = [&](tf::FieldId id) { return s.device(d, id).number(); };
  const std::string& kind = k.kind;
  if (kind == "temperature_high") return {whole(field(fid::kTemperatureCelsius)), whole(limits.temperature_warn_c)};
  if (kind == "temperature_critical" || kind == "temperature_shutdown") {
    return {whole(field(fid::kTemperatureCelsius)), whole(limits.temperature_fail_c + 5)};
  }
  if (kind == "ecc_single_bit_storm") {
    return {whole(field(fid::kEccSingleBitVolatile)), whole(static_cast<double>(tf::kSingleBitStormErrors))};
  }
  if (kind == "ecc_double_bit") return {whole(field(fid::kEccDoubleBitVolatile)), ""};
  if (kind == "ecc_isolated_pages") {
    double pages = field(fid::kEccSingleBitIsolatedPages).value_or(0) + field(fid::kEccDoubleBitIsolatedPages).value_or(0);
    return {whole(pages), whole(static_cast<double>(tf::kIsolatedPagesReplace))};
  }
  if (kind == "aicore_degraded") return {"", std::to_string(s.device_info(d).aicore_count)};
  return {"", ""};
}

std::string finish(std::string message) {
  if (message.size() > kMaxMessageChars) message = message.substr(0, kMaxMessageChars - 3) + "...";
  return message;
}

// A node kind's one incident (however many NPUs carry its code), unless `out` has it already.
void add_node_incident(const tf::Snapshot& s, const tf::IncidentKind* k, std::vector<Incident>& out) {
  if (std::any_of(out.begin(), out.end(), [&](const Incident& i) { return i.kind == k; })) return;
  Values values{{"value", s.node().node_name}};
  out.push_back({k, -1, -1, -1, "", {}, "node", finish(tf::fill(k->message, values)), tf::fill(k->summary, values)});
}

// The device's non-zero error codes whose samples have `status` (kOk: live; kStale: the last a
// quiet writer published).
std::vector<uint32_t> codes_with(const tf::Snapshot& s, int device, tf::SampleStatus status) {
  std::vector<uint32_t> codes;
  for (tf::FieldId id : {fid::kErrorCode, fid::kErrorCode2, fid::kErrorCode3, fid::kErrorCode4}) {
    tf::Sample c = s.device(device, id);
    if (c.status == status && c.as_u64() != 0) codes.push_back(static_cast<uint32_t>(c.as_u64()));
  }
  return codes;
}

void add_device_incidents(const tf::Snapshot& s, int d, std::vector<Incident>& out) {
  for (uint32_t code : device_codes(s, d)) {
    const tf::IncidentKind* k = tf::find_incident(code);
    // Link kinds come from the links themselves (a peer shows the code of its neighbour's).
    if (k == nullptr || k->entity == tf::IncidentEntity::kLink || k->kind == "links_down" || k->kind == "links_degraded") continue;
    if (k->entity == tf::IncidentEntity::kNode) {  // the host's: one incident however many NPUs carry it
      add_node_incident(s, k, out);
      continue;
    }
    Values values = device_values(s, d);
    auto [value, limit] = measured(*k, s, d);
    values.emplace_back("value", value);
    values.emplace_back("limit", limit);
    Incident inc;
    inc.kind = k;
    inc.device = d;
    inc.entity = tf::chip_label(s, d);
    inc.message = finish(tf::fill(k->message, values));
    inc.summary = tf::fill(k->summary, values);
    out.push_back(std::move(inc));
  }
}

// Each link direction's condition as the bus carries it.
std::vector<tf::LinkState> link_states(const tf::Snapshot& s) {
  std::vector<tf::LinkState> states;
  for (int l = 0; l < s.link_count(); ++l) {
    const tf::LinkInfo& info = s.link_info(l);
    tf::Sample up = s.link(l, fid::kLinkUp);
    if (!up.ok() || info.kind == "sys") continue;
    double rate = s.link(l, fid::kLinkRatePercent).number().value_or(100);
    uint64_t flaps = s.link(l, fid::kLinkDownEventsRecent).ok() ? s.link(l, fid::kLinkDownEventsRecent).as_u64() : 0;
    states.push_back({info.device_a, info.device_b, info.kind, tf::link_condition(up.as_u64() != 0, rate, flaps)});
  }
  return states;
}

// The worst value of a link field over both directions of a pair.
double pair_field(const tf::Snapshot& s, int a, int b, const std::string& kind, tf::FieldId id, bool lowest) {
  double out = lowest ? 1e300 : 0;
  for (int l = 0; l < s.link_count(); ++l) {
    const tf::LinkInfo& info = s.link_info(l);
    bool same = info.kind == kind && ((info.device_a == a && info.device_b == b) || (info.device_a == b && info.device_b == a));
    auto v = s.link(l, id).number();
    if (same && v) out = lowest ? std::min(out, *v) : std::max(out, *v);
  }
  return out == 1e300 ? 0 : out;
}

void add_link_incidents(const tf::Snapshot& s, std::vector<Incident>& out) {
  for (const tf::LinkIncident& li : tf::link_incidents(link_states(s), s.device_count())) {
    Incident inc;
    inc.kind = li.kind;
    inc.link_kind = li.link_kind;
    inc.peers = li.peers;
    Values values{{"link", link_word(li.link_kind)}};
    if (li.device >= 0) {
      inc.device = li.device;
      inc.entity = tf::chip_label(s, li.device);
      values.emplace_back("npu", inc.entity);
      int links = 0;
      double rate = 100;
      for (int l = 0; l < s.link_count(); ++l) {
        const tf::LinkInfo& info = s.link_info(l);
        if (info.kind != li.link_kind || (info.device_a != li.device && info.device_b != li.device)) continue;
        links += info.device_a == li.device;  // one direction per physical link
        rate = std::min(rate, s.link(l, fid::kLinkRatePercent).number().value_or(100));
      }
      values.emplace_back("value", li.kind->kind == "links_down" ? std::to_string(links) : whole(rate));
    } else {
      inc.device_a = li.device_a;
      inc.device_b = li.device_b;
      std::string pair = tf::link_ends_name(li.device_a, li.device_b, li.link_kind);
      inc.entity = link_word(li.link_kind) + " " + pair;
      values.emplace_back("pair", pair);
      bool flapping = li.kind->kind == "link_flapping";
      double v = flapping ? pair_field(s, li.device_a, li.device_b, li.link_kind, fid::kLinkDownEventsRecent, false)
                          : pair_field(s, li.device_a, li.device_b, li.link_kind, fid::kLinkRatePercent, true);
      values.emplace_back("value", whole(v));
      values.emplace_back("limit", whole(tf::kFlapWindowS));
    }
    inc.message = finish(tf::fill(li.kind->message, values));
    inc.summary = tf::fill(li.kind->summary, values);
    out.push_back(std::move(inc));
  }
}

}  // namespace

std::vector<uint32_t> device_codes(const tf::Snapshot& s, int device) { return codes_with(s, device, tf::SampleStatus::kOk); }

std::string code_summary(uint32_t code, const tf::Snapshot& s, int device) {
  const tf::IncidentKind* k = tf::find_incident(code);
  if (k == nullptr) return "";
  // A neighbour's code (the peer of a chip that lost its links carries that chip's code): the
  // summary would describe this chip ("all HCCS links down"); the incident names the one it is.
  if (k->entity == tf::IncidentEntity::kChip) {
    for (const Incident& inc : node_incidents(s)) {
      bool peer = std::find(inc.peers.begin(), inc.peers.end(), device) != inc.peers.end();
      if (inc.kind == k && inc.device != device && peer) return inc.message;
    }
  }
  // A link's code: the summary of that link's incident, which names its kind (a RoCE port's
  // degradation read "HCCS link degraded", the chip's scale-up kind).
  if (k->entity == tf::IncidentEntity::kLink) {
    for (const Incident& inc : node_incidents(s)) {
      if (inc.kind == k && (inc.device_a == device || inc.device_b == device)) return inc.summary;
    }
  }
  return tf::fill(k->summary, device_values(s, device));
}

namespace {

// The incidents the snapshot's data shows, live or not.
std::vector<Incident> published_incidents(const tf::Snapshot& s) {
  std::vector<Incident> out;
  for (int d = 0; d < s.device_count(); ++d) add_device_incidents(s, d, out);
  // A host that is down lost every NPU on it: one root cause, the host's, not nine incidents.
  auto is = [](const char* kind) { return [kind](const Incident& i) { return i.kind->kind == kind; }; };
  if (std::any_of(out.begin(), out.end(), is("host_down"))) std::erase_if(out, is("device_lost"));
  add_link_incidents(s, out);
  std::stable_sort(out.begin(), out.end(), [](const Incident& a, const Incident& b) { return a.kind->severity > b.kind->severity; });
  return out;
}

}  // namespace

std::vector<Incident> node_incidents(const tf::Snapshot& s) {
  if (!s.stale()) return published_incidents(s);
  // A stale node's device data is old: nothing else to judge, unless what it last published is
  // why it went quiet (its host is down), which still holds.
  std::vector<Incident> out;
  for (int d = 0; d < s.device_count(); ++d) {
    for (uint32_t code : codes_with(s, d, tf::SampleStatus::kStale)) {
      const tf::IncidentKind* k = tf::find_incident(code);
      if (k != nullptr && k->outlives_bus) add_node_incident(s, k, out);
    }
  }
  if (!out.empty()) return out;
  const tf::IncidentKind& k = tf::incident("node_stale");
  Values values{{"value", s.node().node_name}, {"limit", s.stale_reason()}};
  out.push_back({&k, -1, -1, -1, "", {}, "node", finish(tf::fill(k.message, values)), k.summary});
  return out;
}

tf::Health severity_on(const Incident& incident, int device) {
  if (incident.kind->entity == tf::IncidentEntity::kNode) return incident.kind->severity;
  if (incident.device == device) return incident.kind->severity;
  if (std::find(incident.peers.begin(), incident.peers.end(), device) != incident.peers.end()) return incident.kind->peer_severity;
  return tf::Health::kOk;
}

}  // namespace npukit::probes
