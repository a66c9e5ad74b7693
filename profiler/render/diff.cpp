#include "profiler/render/diff.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include "profiler/render/text_table.hpp"

namespace npukit::prof {

namespace {

using nlohmann::json;

std::vector<StepDiff> step_diffs(const Report& a, const Report& b) {
  auto averages = [](const Report& r) {
    std::array<double, 7> sum{};
    for (const StepRow& s : r.steps) {
      const StepBreakdown& x = s.b;
      int64_t v[] = {x.step, x.computing, x.communication, x.overlapped, x.comm_not_overlapped, x.free, x.preparing};
      for (std::size_t i = 0; i < sum.size(); ++i) sum[i] += static_cast<double>(v[i]);
    }
    for (double& v : sum) v = r.steps.empty() ? 0 : v / static_cast<double>(r.steps.size());
    return sum;
  };
  static const char* kNames[] = {"Step", "Computing", "Communication", "Overlapped", "Communication(Not Overlapped)",
                                 "Free", "Preparing"};
  auto sa = averages(a), sb = averages(b);
  std::vector<StepDiff> out;
  for (std::size_t i = 0; i < sa.size(); ++i) out.push_back({kNames[i], sa[i], sb[i]});
  return out;
}

std::vector<OpDiff> op_diffs(const Report& a, const Report& b) {
  using Key = std::tuple<std::string, std::string, std::string, std::string>;
  std::map<Key, OpDiff> ops;
  for (const OpNameRow& r : a.op_names) {
    ops[{r.name, r.shapes, r.op_type, r.core_type}] = {r.name, r.op_type, r.core_type, r.shapes, r.stats, {}};
  }
  for (const OpNameRow& r : b.op_names) {
    auto [it, fresh] = ops.try_emplace({r.name, r.shapes, r.op_type, r.core_type},
                                       OpDiff{r.name, r.op_type, r.core_type, r.shapes, {}, {}});
    it->second.b = r.stats;
  }
  std::vector<OpDiff> out;
  for (auto& [key, d] : ops) out.push_back(std::move(d));
  std::stable_sort(out.begin(), out.end(), [](const OpDiff& x, const OpDiff& y) {
    return std::llabs(x.delta_total()) > std::llabs(y.delta_total());
  });
  return out;
}

std::vector<CommDiff> comm_diffs(const Report& a, const Report& b) {
  std::map<std::string, CommDiff> comm;
  for (const CommTypeRow& r : a.comm_types) comm[r.op_type] = {r.op_type, r.stats, {}};
  for (const CommTypeRow& r : b.comm_types) {
    comm.try_emplace(r.op_type, CommDiff{r.op_type, {}, {}}).first->second.b = r.stats;
  }
  std::vector<CommDiff> out;
  for (auto& [type, d] : comm) out.push_back(std::move(d));
  return out;
}

std::vector<FindingDiff> finding_diffs(const Report& a, const Report& b) {
  std::map<std::string, FindingDiff> by_id;
  for (const Finding& f : a.findings) {
    FindingDiff& d = by_id[f.id];
    d.id = f.id, d.in_a = true, d.severity_a = f.severity, d.text = f.text, d.a_cost_ns = f.cost_ns_per_step;
  }
  for (const Finding& f : b.findings) {
    FindingDiff& d = by_id[f.id];
    d.id = f.id, d.in_b = true, d.severity_b = f.severity, d.text = f.text, d.b_cost_ns = f.cost_ns_per_step;
  }
  // The side without the finding: what its rule measured there, under the threshold.
  auto below_threshold = [](const Report& r, const std::string& id) -> std::optional<double> {
    auto it = r.measured_cost_ns_per_step.find(id);
    return it == r.measured_cost_ns_per_step.end() ? std::nullopt : std::optional<double>(it->second);
  };
  std::vector<FindingDiff> out;
  for (auto& [id, d] : by_id) {
    if (!d.in_a && d.b_cost_ns) d.a_cost_ns = below_threshold(a, id);
    if (!d.in_b && d.a_cost_ns) d.b_cost_ns = below_threshold(b, id);
    out.push_back(std::move(d));
  }
  std::stable_sort(out.begin(), out.end(), [](const FindingDiff& x, const FindingDiff& y) {
    if (x.costed() != y.costed()) return x.costed();
    return std::fabs(x.delta_cost_ns()) > std::fabs(y.delta_cost_ns());
  });
  return out;
}

std::string us(double ns) { return fixed(ns / 1e3, 3); }

std::string change(double a, double b) {
  if (a == 0) return b == 0 ? "0.0%" : "new";
  return (b >= a ? "+" : "") + fixed(100.0 * (b - a) / a, 1) + "%";
}

std::string side(const DurationStats& s, double value) { return s.count == 0 ? "-" : us(value); }

std::string signed_us(double ns) { return (ns >= 0 ? "+" : "") + us(ns); }
std::string cost_cell(bool present, const std::optional<double>& cost) {
  if (!cost) return present ? "n/a" : "-";
  return present ? us(*cost) : "(" + us(*cost) + ")";
}

// The findings table and the line saying how much of the step-time change they explain.
std::string render_findings_diff(const DiffReport& d) {
  std::string out = "\n== Findings (estimated cost per step, us) ==\n";
  if (d.findings.empty()) return out + "  (no findings on either side)\n";
  TextTable table({"Finding", "A", "B", "Delta", "Severity A", "Severity B"}, 1);
  for (const FindingDiff& f : d.findings) {
    table.add({f.id, cost_cell(f.in_a, f.a_cost_ns), cost_cell(f.in_b, f.b_cost_ns),
               f.costed() ? signed_us(f.delta_cost_ns()) : "n/a", f.severity_a.empty() ? "-" : f.severity_a,
               f.severity_b.empty() ? "-" : f.severity_b});
  }
  out += table.render();
  out += "  (x): measured under the rule's threshold, no finding on that side; -: no finding, counted as 0.\n";
  const double step = d.step_delta_ns(), explained = d.explained_ns();
  const double a_step = d.steps.empty() ? 0 : d.steps.front().a_ns;
  out += "  The average step changed by " + signed_us(step) + " us; the findings' costs changed by " +
         signed_us(explained) + " us";
  // A share of a change within the noise (under 1% of A's step) would say nothing.
  if (std::fabs(step) > 0.01 * a_step && step != 0) {
    const double share = explained / step;
    out += " (" + fixed(100.0 * share, 0) + "% of the change" +
           (share < 0.995 ? "; look for the rest in the ops and collectives tables above)" : ")");  // "100%" has no rest
  } else {
    out += " (the step did not change beyond 1%)";
  }
  return out + ".\n";
}

}  // namespace

double DiffReport::step_delta_ns() const { return steps.empty() ? 0 : steps.front().b_ns - steps.front().a_ns; }

double DiffReport::explained_ns() const {
  double sum = 0;
  for (const FindingDiff& f : findings) sum += f.delta_cost_ns();
  return sum;
}

DiffReport diff_reports(const Report& a, const Report& b) {
  DiffReport d;
  d.a_db = a.header.db, d.b_db = b.header.db;
  d.a_steps = a.steps.size(), d.b_steps = b.steps.size();
  d.steps = step_diffs(a, b);
  d.ops = op_diffs(a, b);
  d.comm = comm_diffs(a, b);
  d.findings = finding_diffs(a, b);
  for (const FindingDiff& f : d.findings) {
    if (!f.in_a) d.findings_new.push_back(f.id);
    if (!f.in_b) d.findings_gone.push_back(f.id);
  }
  std::sort(d.findings_new.begin(), d.findings_new.end());
  std::sort(d.findings_gone.begin(), d.findings_gone.end());
  return d;
}

std::string render_diff_text(const DiffReport& d, int top) {
  std::string out = "npu-prof diff\n  A: " + d.a_db + "\n  B: " + d.b_db + "\n";
  out += "\n== Step breakdown (average per device-step; A " + std::to_string(d.a_steps) + ", B " +
         std::to_string(d.b_steps) + " device-steps) ==\n";
  TextTable steps({"Metric", "A(us)", "B(us)", "Delta(us)", "Change"}, 1);
  for (const StepDiff& s : d.steps) steps.add({s.metric, us(s.a_ns), us(s.b_ns), us(s.b_ns - s.a_ns), change(s.a_ns, s.b_ns)});
  out += steps.render();
  out += "\n== Ops by name and input shapes (top " + std::to_string(top) + " by change of total time) ==\n";
  TextTable ops({"Name", "OP Type", "Core Type", "Input Shapes", "Count A", "Count B", "Avg A(us)", "Avg B(us)",
                 "Avg change", "Total A(us)", "Total B(us)", "Delta total(us)"}, 4);
  for (std::size_t i = 0; i < d.ops.size() && i < static_cast<std::size_t>(top); ++i) {
    const OpDiff& o = d.ops[i];
    std::string avg_change = o.a.count == 0 ? "only in B" : o.b.count == 0 ? "only in A" : change(o.a.avg, o.b.avg);
    ops.add({o.name, o.op_type, o.core_type, o.shapes, std::to_string(o.a.count), std::to_string(o.b.count),
             side(o.a, o.a.avg), side(o.b, o.b.avg), avg_change, us(static_cast<double>(o.a.total)),
             us(static_cast<double>(o.b.total)), us(static_cast<double>(o.delta_total()))});
  }
  out += ops.empty() ? "  (no kernels on either side)\n" : ops.render();
  out += "\n== Communication by type ==\n";
  TextTable comm({"OP Type", "Count A", "Count B", "Avg A(us)", "Avg B(us)", "Avg change", "Total A(us)", "Total B(us)"}, 1);
  for (const CommDiff& c : d.comm) {
    comm.add({collective_display_name(c.op_type), std::to_string(c.a.count), std::to_string(c.b.count), side(c.a, c.a.avg), side(c.b, c.b.avg),
              change(c.a.avg, c.b.avg), us(static_cast<double>(c.a.total)), us(static_cast<double>(c.b.total))});
  }
  out += comm.empty() ? "  (no collectives on either side)\n" : comm.render();
  out += render_findings_diff(d);
  return out;
}

json render_diff_json(const DiffReport& d) {
  auto stats = [](const DurationStats& s) -> json {
    if (s.count == 0) return nullptr;
    return {{"count", s.count}, {"total_ns", s.total}, {"avg_ns", s.avg}, {"median_ns", s.median}};
  };
  json steps = json::array(), ops = json::array(), comm = json::array();
  for (const StepDiff& s : d.steps) steps.push_back({{"metric", s.metric}, {"a_ns", s.a_ns}, {"b_ns", s.b_ns}});
  for (const OpDiff& o : d.ops) {
    ops.push_back({{"name", o.name}, {"op_type", o.op_type}, {"core_type", o.core_type}, {"input_shapes", o.shapes},
                   {"a", stats(o.a)}, {"b", stats(o.b)}, {"delta_total_ns", o.delta_total()}});
  }
  json findings = json::array();
  for (const FindingDiff& f : d.findings) {
    auto cost = [](const std::optional<double>& c) -> json { return c ? json(*c) : json(nullptr); };
    findings.push_back({{"id", f.id}, {"severity_a", f.severity_a.empty() ? json(nullptr) : json(f.severity_a)},
                        {"severity_b", f.severity_b.empty() ? json(nullptr) : json(f.severity_b)},
                        {"a_cost_ns", cost(f.a_cost_ns)}, {"b_cost_ns", cost(f.b_cost_ns)},
                        {"delta_cost_ns", f.costed() ? json(f.delta_cost_ns()) : json(nullptr)}, {"text", f.text}});
  }
  for (const CommDiff& c : d.comm) comm.push_back({{"op_type", c.op_type}, {"a", stats(c.a)}, {"b", stats(c.b)}});
  return {{"a", d.a_db}, {"b", d.b_db},   {"a_device_steps", d.a_steps}, {"b_device_steps", d.b_steps},
          {"steps", steps}, {"ops", ops}, {"communication", comm},
          {"findings_new", d.findings_new}, {"findings_gone", d.findings_gone},
          {"findings", findings}, {"step_delta_ns", d.step_delta_ns()}, {"explained_ns", d.explained_ns()}};
}

}  // namespace npukit::prof
