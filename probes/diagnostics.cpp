#include "probes/diagnostics.hpp"

#include <algorithm>
#include <cstdlib>

namespace npukit::probes {

namespace tf = telemetry;
namespace fid = telemetry::fid;

namespace {

void add(DiagTestResult& out, int device, Verdict v, std::vector<std::string> reasons = {}) {
  out.devices.push_back({device, v, std::move(reasons)});
  out.verdict = worst(out.verdict, v);
}

void node_reachable(const tf::Snapshot& s, std::span<const int>, DiagTestResult& out) {
  // Stale is UNKNOWN, as in the health rules: the node's state cannot be judged.
  if (s.stale()) add(out, -1, Verdict::kUnknown, {"node '" + s.node().node_name + "' is stale: " + s.stale_reason()});
  else add(out, -1, Verdict::kPass);
}

void device_count(const tf::Snapshot& s, std::span<const int>, DiagTestResult& out) {
  const std::string& spec = s.node().node_spec;
  int promised = std::atoi(spec.c_str());  // "8x910B2" -> 8
  if (promised <= 0 || spec.find('x') == std::string::npos) {
    add(out, -1, Verdict::kWarn, {"node spec '" + spec + "' names no chip count"});
  } else if (promised != s.device_count()) {
    add(out, -1, Verdict::kFail, {"node spec " + spec + " promises " + std::to_string(promised) + " chips, the bus carries " +
                                  std::to_string(s.device_count())});
  } else {
    add(out, -1, Verdict::kPass);
  }
}

void device_specs(const tf::Snapshot& s, std::span<const int> devices, DiagTestResult& out) {
  for (int d : devices) {
    const tf::DeviceInfo& info = s.device_info(d);
    std::vector<std::string> why;
    if (info.aicore_count <= 0) why.push_back("reports " + std::to_string(info.aicore_count) + " AI cores");
    if (info.bus_id.empty()) why.push_back("has no PCIe bus id");
    bool hbm = info.smi_layout != "classic";
    auto memory = s.device(d, hbm ? fid::kHbmTotalBytes : fid::kDdrTotalBytes).number();
    if (!memory || *memory <= 0) why.push_back(std::string(hbm ? "HBM" : "DDR") + " capacity is 0 or missing");
    auto clock = s.device(d, fid::kAicoreClockMaxMhz).number();
    if (!clock || *clock <= 0) why.push_back("maximum AI Core clock is 0 or missing");
    Verdict v = s.stale() ? Verdict::kUnknown : why.empty() ? Verdict::kPass : Verdict::kFail;
    if (s.stale()) why = {"no live data"};
    add(out, d, v, std::move(why));
  }
}

void health(const tf::Snapshot& s, std::span<const int> devices, DiagTestResult& out) {
  for (int d : devices) {
    DeviceReport r = evaluate_device(s, d);
    std::vector<std::string> why;
    for (const Check& c : r.checks) {
      if (c.verdict != Verdict::kPass) why.push_back(c.rule + ": " + c.reason);
    }
    add(out, d, r.verdict, std::move(why));
  }
}

void processes(const tf::Snapshot& s, std::span<const int> devices, DiagTestResult& out) {
  for (int d : devices) {
    std::vector<std::string> why;
    for (const tf::ProcessInfo& p : s.processes()) {
      if (p.device == d) why.push_back("held by pid " + std::to_string(p.pid) + " (" + p.name + ")");
    }
    Verdict v = why.empty() ? Verdict::kPass : Verdict::kWarn;  // before `why` is moved from
    add(out, d, v, std::move(why));
  }
}

constexpr DiagTest kTests[] = {
    {"Node Reachable", "Deployment", 1, false, node_reachable},
    {"Device Count", "Deployment", 1, false, device_count},
    {"Device Specs", "Deployment", 1, true, device_specs},
    {"Processes", "Deployment", 1, true, processes},
    {"Health Rules", "Hardware", 1, true, health},
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
    t->run(s, devices, r);
    report.verdict = worst(report.verdict, r.verdict);
    report.tests.push_back(std::move(r));
  }
  return report;
}

}  // namespace npukit::probes
