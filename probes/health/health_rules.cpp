#include "probes/health/health_rules.hpp"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <set>
#include <string>
#include <utility>

namespace npukit::probes {

namespace tf = telemetry;
namespace fid = telemetry::fid;

namespace {

std::string format(const char* fmt, double a, double b) {
  char buf[160];
  std::snprintf(buf, sizeof(buf), fmt, a, b);
  return buf;
}

Check make(std::string_view rule, Verdict v, std::string reason, std::optional<double> measured = {},
           std::optional<double> threshold = {}, std::string unit = "") {
  return {std::string(rule), v, std::move(reason), measured, threshold, std::move(unit), "", 0};
}

std::optional<double> number(const RuleContext& c, tf::FieldId id) { return c.snapshot.device(c.device, id).number(); }

void heartbeat(const RuleContext& c, std::vector<Check>& out) {
  if (c.snapshot.stale()) {
    out.push_back(make("heartbeat", Verdict::kUnknown, "node is stale: " + c.snapshot.stale_reason()));
  } else if (!c.snapshot.device(c.device, fid::kHealth).ok()) {
    out.push_back(make("heartbeat", Verdict::kUnknown, "device has published no health data"));
  } else {
    out.push_back(make("heartbeat", Verdict::kPass, "node is live"));
  }
}

// The device's own health field: PASS when OK; a state no incident explains (a code outside the
// table) is judged as it stands. A state an incident explains is still a check (JSON carries every
// check; it was left out), naming the incident whose own check judges it.
void device_health(const RuleContext& c, std::vector<Check>& out) {
  tf::Sample h = c.snapshot.device(c.device, fid::kHealth);
  if (!h.ok()) return;
  auto health = static_cast<tf::Health>(h.as_u64());
  tf::Sample code = c.snapshot.device(c.device, fid::kErrorCode);
  // The incident behind the state: the one whose code the device reports, else any that touches it.
  auto touches = [&](const Incident& i) { return severity_on(i, c.device) != tf::Health::kOk; };
  auto explains = std::find_if(c.incidents.begin(), c.incidents.end(), [&](const Incident& i) {
    return touches(i) && code.ok() && i.kind->code == code.as_u64();
  });
  if (explains == c.incidents.end()) explains = std::find_if(c.incidents.begin(), c.incidents.end(), touches);
  std::string why = std::string("device reports ") + tf::health_name(health);
  if (health != tf::Health::kOk && code.ok()) {
    char buf[40];
    std::snprintf(buf, sizeof buf, " (error code 0x%08" PRIX64 ")", code.as_u64());
    why += buf;
  }
  if (health != tf::Health::kOk && explains != c.incidents.end()) why += ": the " + explains->kind->kind + " incident";
  out.push_back(make("device_health", verdict_of(health), why, static_cast<double>(h.as_u64()), 0.0));
}

void temperature(const RuleContext& c, std::vector<Check>& out) {
  auto t = number(c, fid::kTemperatureCelsius);
  if (!t) return;
  out.push_back(make("temperature", Verdict::kPass,
                     format("chip temperature %.0f C is below the throttle point %.0f C", *t, c.limits.temperature_warn_c),
                     *t, c.limits.temperature_warn_c, "C"));
}

// Throttling by a power limit is the limit working (an operator's choice, not a fault); thermal
// throttling is the temperature incident's.
void throttling(const RuleContext& c, std::vector<Check>& out) {
  tf::Sample r = c.snapshot.device(c.device, fid::kThrottleReasons);
  if (!r.ok()) return;
  uint64_t bits = r.as_u64();
  auto clock = number(c, fid::kAicoreClockMhz);
  auto max = number(c, fid::kAicoreClockMaxMhz);
  if (bits == 0) {
    out.push_back(make("throttling", Verdict::kPass, "AI Core clock is not throttled", clock, max, "MHz"));
    return;
  }
  std::string why = "AI Core clock held down (";
  std::string sep;
  for (auto [bit, name] : {std::pair{tf::kThrottleThermal, "thermal"}, {tf::kThrottlePowerLimit, "power limit"},
                           {tf::kThrottleFault, "fault"}}) {
    if (bits & bit) why += sep + name, sep = ", ";
  }
  why += ")";
  if (clock && max) why += format(": %.0f MHz of %.0f MHz", *clock, *max);
  out.push_back(make("throttling", Verdict::kPass, why, clock, max, "MHz"));
}

void ecc_errors(const RuleContext& c, std::vector<Check>& out) {
  auto dbe = number(c, fid::kEccDoubleBitVolatile);
  auto sbe = number(c, fid::kEccSingleBitVolatile);
  if (!dbe || !sbe) return;
  out.push_back(make("ecc_errors", Verdict::kPass,
                     format("%.0f single-bit, %.0f double-bit ECC errors since the last clear", *sbe, *dbe)));
}

void ecc_isolated_pages(const RuleContext& c, std::vector<Check>& out) {
  auto single = number(c, fid::kEccSingleBitIsolatedPages);
  auto dbl = number(c, fid::kEccDoubleBitIsolatedPages);
  if (!single || !dbl) return;
  double pages = *single + *dbl;
  double limit = static_cast<double>(tf::kIsolatedPagesReplace);
  out.push_back(make("ecc_isolated_pages", Verdict::kPass, format("%.0f memory page(s) isolated (replace at %.0f)", pages, limit),
                     pages, limit, "pages"));
}

void memory(const RuleContext& c, std::vector<Check>& out) {
  auto t = number(c, fid::kHbmTemperatureCelsius);
  if (!t) return;
  out.push_back(make("memory", Verdict::kPass, format("memory temperature %.0f C (%.0f C is hot)", *t, c.limits.hbm_temperature_warn_c),
                     *t, c.limits.hbm_temperature_warn_c, "C"));
}

void links(const RuleContext& c, std::vector<Check>& out) {
  std::set<std::pair<int, std::string>> physical;  // (far end, kind): a link's two directions are one link
  for (int l = 0; l < c.snapshot.link_count(); ++l) {
    const tf::LinkInfo& info = c.snapshot.link_info(l);
    if ((info.device_a != c.device && info.device_b != c.device) || !c.snapshot.link(l, fid::kLinkUp).ok()) continue;
    physical.emplace(info.device_a == c.device ? info.device_b : info.device_a, info.kind);
  }
  const auto total = physical.size();
  if (total > 0) out.push_back(make("links", Verdict::kPass, std::to_string(total) + " link(s) up at full rate", 1.0, 1.0, "up"));
}

void aicore(const RuleContext& c, std::vector<Check>& out) {
  if (!c.snapshot.device(c.device, fid::kErrorCode).ok()) return;
  out.push_back(make("aicore", Verdict::kPass, "no AI Core task timeout, all AI Cores in service"));
}

void host(const RuleContext& c, std::vector<Check>& out) {
  if (!c.snapshot.device(c.device, fid::kErrorCode).ok()) return;
  out.push_back(make("host", Verdict::kPass, "the host keeps up: no slow-host incident"));
}

void power(const RuleContext& c, std::vector<Check>& out) {
  auto p = number(c, fid::kPowerWatts);
  auto limit = number(c, fid::kPowerLimitWatts);
  if (!p || !limit || *limit <= 0) return;
  out.push_back(make("power", Verdict::kPass, format("power %.1f W, limit %.1f W", *p, *limit), *p, *limit, "W"));
}

constexpr std::string_view kNone[] = {""};
constexpr std::string_view kDeviceKinds[] = {"device_lost"};
constexpr std::string_view kTemperatureKinds[] = {"temperature_high", "temperature_critical", "temperature_shutdown"};
constexpr std::string_view kEccKinds[] = {"ecc_double_bit", "ecc_single_bit_storm"};
constexpr std::string_view kPageKinds[] = {"ecc_isolated_pages"};
constexpr std::string_view kLinkKinds[] = {"links_down", "link_down", "link_flapping", "link_degraded", "links_degraded"};
constexpr std::string_view kAicoreKinds[] = {"aicore_timeout", "aicore_degraded"};
constexpr std::string_view kHostKinds[] = {"host_slow"};

constexpr Rule kRules[] = {
    {"heartbeat", "the node's writer is alive and the device has published", kNone, heartbeat},
    {"device_health", "the device is present on the bus (device lost)", kDeviceKinds, device_health},
    {"temperature", "chip temperature against the throttle point and the shutdown point", kTemperatureKinds, temperature},
    {"throttling", "AI Core clock throttle reasons (thermal, power limit, fault); informational", kNone, throttling},
    {"ecc_errors", "uncorrectable ECC errors and single-bit storms since the last clear", kEccKinds, ecc_errors},
    {"ecc_isolated_pages", "memory pages isolated after ECC errors", kPageKinds, ecc_isolated_pages},
    {"memory", "device memory temperature; informational", kNone, memory},
    {"links", "the device's HCCS / PCIe links: down, flapping, degraded, or a peer that lost its links", kLinkKinds, links},
    {"aicore", "AI Core task timeout (hang) and isolated AI Cores", kAicoreKinds, aicore},
    {"host", "the host the NPU sits in: a slow host (contended CPU) delays its launches and input", kHostKinds, host},
    {"power", "power draw against the enforced power limit; informational", kNone, power},
};

// The rule's checks: one per incident of its kinds on or touching the device, else its PASS.
void run_rule(const Rule& rule, const RuleContext& ctx, std::vector<Check>& out) {
  bool any = false;
  for (const Incident& inc : ctx.incidents) {
    tf::Health on = severity_on(inc, ctx.device);
    if (on == tf::Health::kOk || std::find(rule.kinds.begin(), rule.kinds.end(), inc.kind->kind) == rule.kinds.end()) continue;
    Check c = make(rule.name, verdict_of(on), inc.message);
    c.incident = inc.kind->kind;
    c.code = inc.kind->code;
    out.push_back(std::move(c));
    any = true;
  }
  if (!any) rule.evaluate(ctx, out);
}

}  // namespace

const char* verdict_name(Verdict v) {
  switch (v) {
    case Verdict::kPass: return "PASS";
    case Verdict::kWarn: return "WARN";
    case Verdict::kUnknown: return "UNKNOWN";
    case Verdict::kFail: return "FAIL";
  }
  return "UNKNOWN";
}

Verdict verdict_of(tf::Health severity) {
  return severity == tf::Health::kOk ? Verdict::kPass : severity == tf::Health::kWarning ? Verdict::kWarn : Verdict::kFail;
}

Verdict worst(Verdict a, Verdict b) { return static_cast<uint8_t>(a) >= static_cast<uint8_t>(b) ? a : b; }

Thresholds thresholds_for(const tf::DeviceInfo& info) {
  Thresholds t;
  if (info.chip_type == "Ascend310P") {
    t.temperature_warn_c = 90;  // Ascend310P3 spec: throttle 90 C, shutdown 105 C
    t.temperature_fail_c = 100;
  }
  return t;
}

std::span<const Rule> health_rules() { return kRules; }

DeviceReport evaluate_device(const tf::Snapshot& s, int device, std::span<const Incident> incidents) {
  DeviceReport r;
  r.device = device;
  Thresholds limits = thresholds_for(s.device_info(device));
  RuleContext ctx{s, device, limits, incidents};
  for (const Rule& rule : kRules) {
    run_rule(rule, ctx, r.checks);
    if (rule.evaluate == heartbeat && r.checks.back().verdict == Verdict::kUnknown) break;  // nothing to judge
  }
  for (const Check& c : r.checks) r.verdict = worst(r.verdict, c.verdict);
  return r;
}

NodeReport evaluate_node(const tf::Snapshot& s, std::span<const int> devices) {
  NodeReport r;
  r.stale = s.stale();
  r.stale_reason = s.stale_reason();
  std::vector<Incident> incidents = node_incidents(s);
  std::vector<int> all;
  if (devices.empty()) {
    for (int d = 0; d < s.device_count(); ++d) all.push_back(d);
    devices = all;
  }
  for (int d : devices) {
    r.devices.push_back(evaluate_device(s, d, incidents));
    r.verdict = worst(r.verdict, r.devices.back().verdict);
  }
  for (Incident& inc : incidents) {
    bool touches = std::any_of(devices.begin(), devices.end(), [&](int d) { return severity_on(inc, d) != tf::Health::kOk; });
    if (!touches && devices.size() != static_cast<std::size_t>(s.device_count())) continue;
    // A stale node's incident says nothing is known (UNKNOWN), unless it is why the bus went
    // quiet (host_down: still true); a live host's own (slow) is its severity.
    bool unknown = inc.kind->entity == tf::IncidentEntity::kNode && r.stale && !inc.kind->outlives_bus;
    r.verdict = worst(r.verdict, unknown ? Verdict::kUnknown : verdict_of(inc.kind->severity));
    r.incidents.push_back(std::move(inc));
  }
  if (r.stale) r.verdict = worst(r.verdict, Verdict::kUnknown);
  return r;
}

}  // namespace npukit::probes
