#include "probes/health_rules.hpp"

#include <algorithm>
#include <cinttypes>
#include <cstdio>

#include "probes/error_codes.hpp"

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
  return {std::string(rule), v, std::move(reason), measured, threshold, std::move(unit)};
}

// Grades `value` against warn/fail limits (higher is worse).
Verdict grade(double value, double warn, double fail) {
  return value >= fail ? Verdict::kFail : value >= warn ? Verdict::kWarn : Verdict::kPass;
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

std::string code_text(uint64_t code, const tf::Snapshot& s, int device) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "0x%08" PRIX64, code);
  std::string text = error_text(static_cast<uint32_t>(code), s, device);
  return text.empty() ? std::string(buf) : std::string(buf) + " " + text;
}

void device_health(const RuleContext& c, std::vector<Check>& out) {
  tf::Sample h = c.snapshot.device(c.device, fid::kHealth);
  if (!h.ok()) return;
  auto health = static_cast<tf::Health>(h.as_u64());
  tf::Sample code = c.snapshot.device(c.device, fid::kErrorCode);
  std::string why = std::string("device reports ") + tf::health_name(health);
  if (code.ok() && code.as_u64() != 0) why += " (" + code_text(code.as_u64(), c.snapshot, c.device) + ")";
  Verdict v = health == tf::Health::kOk ? Verdict::kPass : health == tf::Health::kWarning ? Verdict::kWarn : Verdict::kFail;
  out.push_back(make("device_health", v, why, static_cast<double>(h.as_u64()), 0.0));
}

void temperature(const RuleContext& c, std::vector<Check>& out) {
  auto t = number(c, fid::kTemperatureCelsius);
  if (!t) return;
  Verdict v = grade(*t, c.limits.temperature_warn_c, c.limits.temperature_fail_c);
  double limit = v == Verdict::kPass ? c.limits.temperature_warn_c
                 : v == Verdict::kWarn ? c.limits.temperature_warn_c : c.limits.temperature_fail_c;
  const char* fmt = v == Verdict::kPass ? "chip temperature %.0f C is below the throttle point %.0f C"
                    : v == Verdict::kWarn ? "chip temperature %.0f C is at or above the throttle point %.0f C"
                                          : "chip temperature %.0f C is at or above the critical limit %.0f C";
  out.push_back(make("temperature", v, format(fmt, *t, limit), *t, limit, "C"));
}

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
  std::string why = "AI Core clock throttled (";
  std::string sep;
  for (auto [bit, name] : {std::pair{tf::kThrottleThermal, "thermal"}, {tf::kThrottlePowerLimit, "power limit"},
                           {tf::kThrottleFault, "fault"}}) {
    if (bits & bit) why += sep + name, sep = ", ";
  }
  why += ")";
  if (clock && max) why += format(": %.0f MHz of %.0f MHz", *clock, *max);
  out.push_back(make("throttling", Verdict::kWarn, why, clock, max, "MHz"));
}

void ecc_errors(const RuleContext& c, std::vector<Check>& out) {
  auto dbe = number(c, fid::kEccDoubleBitVolatile);
  auto sbe = number(c, fid::kEccSingleBitVolatile);
  if (!dbe || !sbe) return;
  if (*dbe > 0) {
    out.push_back(make("ecc_errors", Verdict::kFail,
                       format("%.0f uncorrectable (double-bit) ECC error(s) since the last clear (limit %.0f)", *dbe, 0),
                       *dbe, 0.0, "errors"));
  } else if (*sbe >= static_cast<double>(c.limits.single_bit_storm)) {
    out.push_back(make("ecc_errors", Verdict::kWarn,
                       format("%.0f single-bit ECC errors since the last clear (storm at %.0f)", *sbe,
                              static_cast<double>(c.limits.single_bit_storm)),
                       *sbe, static_cast<double>(c.limits.single_bit_storm), "errors"));
  } else {
    out.push_back(make("ecc_errors", Verdict::kPass,
                       format("%.0f single-bit, %.0f double-bit ECC errors since the last clear", *sbe, *dbe)));
  }
}

void ecc_isolated_pages(const RuleContext& c, std::vector<Check>& out) {
  auto single = number(c, fid::kEccSingleBitIsolatedPages);
  auto dbl = number(c, fid::kEccDoubleBitIsolatedPages);
  if (!single || !dbl) return;
  double pages = *single + *dbl;
  double limit = static_cast<double>(c.limits.isolated_pages_warn);
  Verdict v = pages >= limit ? Verdict::kWarn : Verdict::kPass;
  out.push_back(make("ecc_isolated_pages", v, format("%.0f memory page(s) isolated (replace at %.0f)", pages, limit),
                     pages, limit, "pages"));
}

void memory(const RuleContext& c, std::vector<Check>& out) {
  bool hbm = c.snapshot.device(c.device, fid::kHbmTotalBytes).ok();
  auto total = number(c, hbm ? fid::kHbmTotalBytes : fid::kDdrTotalBytes);
  if (total && *total <= 0) {
    out.push_back(make("memory", Verdict::kFail, "device memory reports 0 bytes: not visible", 0.0, 0.0, "B"));
    return;
  }
  auto t = number(c, fid::kHbmTemperatureCelsius);
  if (!t) return;
  Verdict v = grade(*t, c.limits.hbm_temperature_warn_c, c.limits.hbm_temperature_fail_c);
  double limit = v == Verdict::kFail ? c.limits.hbm_temperature_fail_c : c.limits.hbm_temperature_warn_c;
  const char* fmt = v == Verdict::kPass ? "memory temperature %.0f C is below %.0f C" : "memory temperature %.0f C is at or above %.0f C";
  out.push_back(make("memory", v, format(fmt, *t, limit), *t, limit, "C"));
}

// Whether every link of `kind` ("hccs", "pcie") of `device` that reports a state is down (the
// device lost its links: the root cause of its peers' down links).
bool all_links_down(const tf::Snapshot& s, int device, const std::string& kind) {
  int total = 0, down = 0;
  for (int l = 0; l < s.link_count(); ++l) {
    const tf::LinkInfo& info = s.link_info(l);
    if ((info.device_a != device && info.device_b != device) || info.kind != kind) continue;
    tf::Sample up = s.link(l, fid::kLinkUp);
    if (!up.ok()) continue;
    ++total, down += up.as_u64() == 0;
  }
  return total > 0 && down == total;
}

// A chip whose links are all down FAILs; its peers, whose only down links lead to it, WARN and
// name it: one root cause, one failing chip.
void links(const RuleContext& c, std::vector<Check>& out) {
  int total = 0;
  std::vector<std::string> down, caused_by, roots;
  for (int l = 0; l < c.snapshot.link_count(); ++l) {
    const tf::LinkInfo& info = c.snapshot.link_info(l);
    if (info.device_a != c.device && info.device_b != c.device) continue;
    tf::Sample up = c.snapshot.link(l, fid::kLinkUp);
    if (!up.ok()) continue;
    ++total;
    if (up.as_u64() != 0) continue;
    int other = info.device_a == c.device ? info.device_b : info.device_a;
    std::string peer = info.device_b < 0 ? "host" : std::to_string(other);
    std::string name = info.kind + " " + std::to_string(c.device) + "<->" + peer;
    bool theirs = !all_links_down(c.snapshot, c.device, info.kind) && other >= 0 && all_links_down(c.snapshot, other, info.kind);
    auto& list = theirs ? caused_by : down;
    if (std::find(list.begin(), list.end(), name) == list.end()) list.push_back(name);  // parallel links: once
    if (theirs) {
      const tf::DeviceInfo& root = c.snapshot.device_info(other);
      bool multi = c.snapshot.node().card_count < c.snapshot.device_count();
      std::string label = "NPU " + std::to_string(root.npu_id) + (multi ? " Chip " + std::to_string(root.chip_id) : "");
      if (std::find(roots.begin(), roots.end(), label) == roots.end()) roots.push_back(label);
    }
  }
  if (total == 0) return;
  auto joined = [](const std::vector<std::string>& names) {
    std::string out;
    for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
    return out;
  };
  if (!down.empty()) {
    out.push_back(make("links", Verdict::kFail, "link(s) down: " + joined(down), 0.0, 1.0, "up"));
  } else if (!caused_by.empty()) {
    out.push_back(make("links", Verdict::kWarn, "link(s) down: " + joined(caused_by) + " (" + joined(roots) + " lost all its links)",
                       0.0, 1.0, "up"));
  } else {
    out.push_back(make("links", Verdict::kPass, std::to_string(total) + " link(s) up", 1.0, 1.0, "up"));
  }
}

void aicore_hang(const RuleContext& c, std::vector<Check>& out) {
  tf::Sample code = c.snapshot.device(c.device, fid::kErrorCode);
  if (!code.ok()) return;
  if (code.as_u64() == kErrorAicoreTimeout) {
    out.push_back(make("aicore_hang", Verdict::kFail, "AI Core task timed out (" + code_text(code.as_u64(), c.snapshot, c.device) + "); reset the device"));
  } else {
    out.push_back(make("aicore_hang", Verdict::kPass, "no AI Core task timeout reported"));
  }
}

void power(const RuleContext& c, std::vector<Check>& out) {
  auto p = number(c, fid::kPowerWatts);
  auto limit = number(c, fid::kPowerLimitWatts);
  if (!p || !limit || *limit <= 0) return;
  double ceiling = *limit * c.limits.power_over_limit_ratio;
  Verdict v = *p > ceiling ? Verdict::kWarn : Verdict::kPass;
  const char* fmt = v == Verdict::kPass ? "power %.1f W is within the limit %.1f W" : "power %.1f W exceeds the limit %.1f W";
  out.push_back(make("power", v, format(fmt, *p, *limit), *p, *limit, "W"));
}

constexpr Rule kRules[] = {
    {"heartbeat", "the node's writer is alive and the device has published", heartbeat},
    {"device_health", "the device's own health state and most severe error code", device_health},
    {"temperature", "chip temperature against the throttle point and the critical limit", temperature},
    {"throttling", "AI Core clock throttle reasons (thermal, power limit, fault)", throttling},
    {"ecc_errors", "uncorrectable ECC errors and single-bit storms since the last clear", ecc_errors},
    {"ecc_isolated_pages", "memory pages isolated after ECC errors", ecc_isolated_pages},
    {"memory", "device memory visible and its temperature", memory},
    {"links", "state of the device's HCCS / PCIe links", links},
    {"aicore_hang", "AI Core task timeout (hang) error code", aicore_hang},
    {"power", "power draw against the enforced power limit", power},
};

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

DeviceReport evaluate_device(const tf::Snapshot& s, int device) {
  DeviceReport r;
  r.device = device;
  Thresholds limits = thresholds_for(s.device_info(device));
  RuleContext ctx{s, device, limits};
  for (const Rule& rule : kRules) {
    rule.evaluate(ctx, r.checks);
    if (rule.evaluate == heartbeat && r.checks.back().verdict == Verdict::kUnknown) break;  // nothing to judge
  }
  for (const Check& c : r.checks) r.verdict = worst(r.verdict, c.verdict);
  return r;
}

NodeReport evaluate_node(const tf::Snapshot& s, std::span<const int> devices) {
  NodeReport r;
  r.stale = s.stale();
  r.stale_reason = s.stale_reason();
  std::vector<int> all;
  if (devices.empty()) {
    for (int d = 0; d < s.device_count(); ++d) all.push_back(d);
    devices = all;
  }
  for (int d : devices) {
    r.devices.push_back(evaluate_device(s, d));
    r.verdict = worst(r.verdict, r.devices.back().verdict);
  }
  if (r.stale) r.verdict = worst(r.verdict, Verdict::kUnknown);
  return r;
}

}  // namespace npukit::probes
