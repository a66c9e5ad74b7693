#include "probes/diag/diagnostics.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <set>

#include "probes/diag/diag_tests.hpp"
#include "telemetry/segment.hpp"

namespace npukit::probes {

namespace tf = telemetry;
namespace fid = telemetry::fid;

namespace diag {

void add(DiagTestResult& out, int device, Verdict v, std::vector<std::string> reasons, std::string measured) {
  out.devices.push_back({device, v, std::move(reasons), std::move(measured)});
  out.verdict = worst(out.verdict, v);
}

namespace {

// A process-table entry of a process that has exited (the table is refreshed at the node's
// publish rate, so right after a job ends its owner may still be listed).
bool gone(const tf::ProcessInfo& p) { return p.pid > 0 && !tf::pid_alive(p.pid); }

}  // namespace

std::vector<int> held_devices(const tf::Snapshot& s) {
  std::set<int> held;
  for (const tf::ProcessInfo& p : s.processes()) {
    if (!gone(p)) held.insert(p.device);
  }
  return {held.begin(), held.end()};
}

std::vector<int> runnable(const DiagContext& ctx, std::span<const int> devices, DiagTestResult& out) {
  std::string why = ctx.snapshot.stale() ? "node is stale: " + ctx.snapshot.stale_reason()
                  : ctx.client == nullptr ? "no node connection to run test programs on"
                  : !ctx.reference.is_object() ? "the node gave no reference figures"
                                               : "";
  std::vector<int> idle;
  for (int d : devices) {
    if (!why.empty()) {
      add(out, d, Verdict::kUnknown, {why});
      continue;
    }
    std::string holders;
    for (const tf::ProcessInfo& p : ctx.snapshot.processes()) {
      if (p.device == d && !gone(p)) holders += (holders.empty() ? "" : ", ") + std::string("pid ") + std::to_string(p.pid) + " (" + p.name + ")";
    }
    if (holders.empty()) idle.push_back(d);
    else add(out, d, Verdict::kWarn, {"not run: the chip is in use by " + holders + "; active tests run on idle chips"});
  }
  return idle;
}

Verdict grade_ratio(double ratio) {
  return ratio >= kPassRatio ? Verdict::kPass : ratio >= kWarnRatio ? Verdict::kWarn : Verdict::kFail;
}

std::string versus(double value, double reference, const char* unit) {
  char buf[128];
  // Rounded, except that a figure judged below a threshold never prints the threshold.
  double ratio = reference > 0 ? value / reference : 0;
  double percent = std::round(100 * ratio);
  for (double limit : {kPassRatio, kWarnRatio}) {
    if (ratio < limit && percent >= std::round(100 * limit)) percent = std::round(100 * limit) - 1;
  }
  std::snprintf(buf, sizeof buf, "%.1f %s, expected %.1f %s (%.0f%%)", value, unit, reference, unit, percent);
  return buf;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
  return v[v.size() / 2];
}

std::optional<double> reference(const DiagContext& ctx, const char* key) {
  if (!ctx.reference.is_object() || !ctx.reference.contains(key) || !ctx.reference[key].is_number()) return std::nullopt;
  return ctx.reference[key].get<double>();
}

void node_reachable(const DiagContext& ctx, std::span<const int>, DiagTestResult& out) {
  const tf::Snapshot& s = ctx.snapshot;
  // Stale is UNKNOWN, as in the health rules: the node's state cannot be judged.
  if (s.stale()) add(out, -1, Verdict::kUnknown, {"node '" + s.node().node_name + "' is stale: " + s.stale_reason()});
  else add(out, -1, Verdict::kPass);
}

// The spec's count is of cards ("4x310P3": four cards of two chips each).
void device_count(const DiagContext& ctx, std::span<const int>, DiagTestResult& out) {
  const tf::Snapshot& s = ctx.snapshot;
  const std::string& spec = s.node().node_spec;
  int promised = std::atoi(spec.c_str());  // "8x910B2" -> 8
  std::set<int> cards;
  for (int d = 0; d < s.device_count(); ++d) cards.insert(s.device_info(d).npu_id);
  int carried = static_cast<int>(cards.size());
  if (promised <= 0 || spec.find('x') == std::string::npos) {
    add(out, -1, Verdict::kWarn, {"node spec '" + spec + "' names no card count"});
  } else if (promised != carried) {
    add(out, -1, Verdict::kFail, {"node spec " + spec + " promises " + std::to_string(promised) + " cards, the bus carries " +
                                  std::to_string(carried) + " (" + std::to_string(s.device_count()) + " chips)"});
  } else {
    add(out, -1, Verdict::kPass);
  }
}

void device_specs(const DiagContext& ctx, std::span<const int> devices, DiagTestResult& out) {
  const tf::Snapshot& s = ctx.snapshot;
  for (int d : devices) {
    const tf::DeviceInfo& info = s.device_info(d);
    std::vector<std::string> why;
    if (info.aicore_count <= 0) why.push_back("reports " + std::to_string(info.aicore_count) + " AI cores");
    if (info.bus_id.empty()) why.push_back("has no PCIe bus id");
    bool hbm = info.has_hbm();
    auto memory = s.device(d, hbm ? fid::kHbmTotalBytes : fid::kDdrTotalBytes).number();
    if (!memory || *memory <= 0) why.push_back(std::string(hbm ? "HBM" : "DDR") + " capacity is 0 or missing");
    auto clock = s.device(d, fid::kAicoreClockMaxMhz).number();
    if (!clock || *clock <= 0) why.push_back("maximum AI Core clock is 0 or missing");
    Verdict v = s.stale() ? Verdict::kUnknown : why.empty() ? Verdict::kPass : Verdict::kFail;
    if (s.stale()) why = {"no live data"};
    add(out, d, v, std::move(why));
  }
}

void health(const DiagContext& ctx, std::span<const int> devices, DiagTestResult& out) {
  const tf::Snapshot& s = ctx.snapshot;
  std::vector<Incident> incidents = node_incidents(s);
  for (int d : devices) {
    DeviceReport r = evaluate_device(s, d, incidents);
    std::vector<std::string> why;
    for (const Check& c : r.checks) {
      if (c.verdict != Verdict::kPass) why.push_back(c.rule + ": " + c.reason);
    }
    add(out, d, r.verdict, std::move(why));
  }
  // An incident worse than every chip it touches (a link down is an Alarm, its ends only
  // Warning): the test fails as npu-smi health's node verdict does, on a line of its own.
  for (const Incident& inc : incidents) {
    Verdict own = verdict_of(inc.kind->severity), on_chips = Verdict::kPass;
    bool touches = false;
    for (int d : devices) {
      tf::Health on = severity_on(inc, d);
      touches = touches || on != tf::Health::kOk;
      on_chips = worst(on_chips, verdict_of(on));
    }
    if (touches && worst(on_chips, own) != on_chips) add(out, -1, own, {inc.message});
  }
}

void processes(const DiagContext& ctx, std::span<const int> devices, DiagTestResult& out) {
  const tf::Snapshot& s = ctx.snapshot;
  for (int d : devices) {
    std::vector<std::string> why;
    for (const tf::ProcessInfo& p : s.processes()) {
      if (p.device == d) why.push_back("held by pid " + std::to_string(p.pid) + " (" + p.name + ")");
    }
    Verdict v = why.empty() ? Verdict::kPass : Verdict::kWarn;  // before `why` is moved from
    add(out, d, v, std::move(why));
  }
}

}  // namespace diag

namespace {

// In display order; a category's tests are contiguous.
constexpr DiagTest kTests[] = {
    {"Node Reachable", "Deployment", 1, false, diag::node_reachable},
    {"Device Count", "Deployment", 1, false, diag::device_count},
    {"Device Specs", "Deployment", 1, true, diag::device_specs},
    {"Processes", "Deployment", 1, true, diag::processes},
    {"Health Rules", "Hardware", 1, true, diag::health},
    {"Memory Pattern", "Hardware", 2, true, diag::memory_pattern},
    {"PCIe Bandwidth", "Integration", 2, true, diag::pcie_bandwidth},
    {"HCCS Bandwidth", "Integration", 2, true, diag::hccs_bandwidth},
    {"Compute", "Performance", 2, true, diag::compute},
    {"Memory Bandwidth", "Performance", 2, true, diag::memory_bandwidth},
    {"Targeted Stress", "Stress", 3, true, diag::targeted_stress},
};

}  // namespace

std::vector<const DiagTest*> diag_tests(int level) {
  std::vector<const DiagTest*> out;
  for (const DiagTest& t : kTests) {
    if (t.level <= level) out.push_back(&t);
  }
  return out;
}

int max_diag_level() {
  int level = 0;
  for (const DiagTest& t : kTests) level = std::max(level, t.level);
  return level;
}

DiagReport run_diag(const tf::Snapshot& s, int level, std::span<const int> devices) {
  return run_diag(DiagContext{s, nullptr, nlohmann::json(), DiagOptions{}, {}, {}}, level, devices);
}

Result<nlohmann::json> fetch_reference(tf::Client& client) {
  auto reply = client.control({{"op", "reference"}});
  if (!reply.ok()) return reply.status();
  if (!reply->value("ok", false)) {
    return Status(Code::kUnavailable, "the node gave no reference figures: " + reply->value("error", std::string("refused")));
  }
  return *reply;
}

DiagReport run_diag(const DiagContext& ctx, int level, std::span<const int> devices) {
  const tf::Snapshot& s = ctx.snapshot;
  std::vector<int> all;
  if (devices.empty()) {
    for (int d = 0; d < s.device_count(); ++d) all.push_back(d);
    devices = all;
  }
  DiagReport report;
  report.level = level;
  for (const DiagTest* t : diag_tests(level)) {
    DiagTestResult r;
    r.name = std::string(t->name);
    r.category = std::string(t->category);
    r.per_device = t->per_device;
    if (ctx.interrupted && ctx.interrupted()) break;
    if (ctx.on_test_start) ctx.on_test_start(*t);
    t->run(ctx, devices, r);
    std::stable_sort(r.devices.begin(), r.devices.end(),
                     [](const DiagDeviceResult& a, const DiagDeviceResult& b) { return a.device < b.device; });
    report.verdict = worst(report.verdict, r.verdict);
    report.tests.push_back(std::move(r));
  }
  return report;
}

}  // namespace npukit::probes
