// `npu-prof diff A B`: what changed between two recordings, built from their two reports.
//   - the step breakdown, averaged per device-step (step, computing, communication, overlapped,
//     not overlapped, free, preparing);
//   - ops by name + input shapes (+ op type, core type): count, total and average in A and B,
//     sorted by the absolute change of total time; ops present on one side only are marked;
//   - collectives by type;
//   - findings on either side with their estimated cost per step in A and B, ordered by the
//     change of that cost, and how much of the step-time change the costed findings explain
//     (the rest is left to the ops and collectives tables).
// Renderers: text and JSON (nlohmann).
//
// Thread-safety: values and pure functions.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "profiler/analyze/report_model.hpp"

namespace npukit::prof {

struct OpDiff {
  std::string name, op_type, core_type, shapes;
  DurationStats a, b;  // count 0 = absent on that side
  int64_t delta_total() const { return b.total - a.total; }
};

struct StepDiff {
  std::string metric;  // "Step", "Computing", ...
  double a_ns = 0, b_ns = 0;
};

struct CommDiff {
  std::string op_type;
  DurationStats a, b;
};

// One rule's finding on either side. On a side without the finding, the cost is what the rule
// measured under its threshold (Report::measured_cost_ns_per_step), else 0 for a costed rule;
// a rule that estimates no cost has none on either side.
struct FindingDiff {
  std::string id, severity_a, severity_b;  // "" on a side without the finding
  bool in_a = false, in_b = false;         // the finding is on that side
  std::string text;                        // B's sentence, else A's
  std::optional<double> a_cost_ns, b_cost_ns;
  bool costed() const { return a_cost_ns.has_value() || b_cost_ns.has_value(); }
  double delta_cost_ns() const { return b_cost_ns.value_or(0) - a_cost_ns.value_or(0); }
};

struct DiffReport {
  std::string a_db, b_db;
  uint64_t a_steps = 0, b_steps = 0;  // device-steps averaged
  std::vector<StepDiff> steps;
  std::vector<OpDiff> ops;
  std::vector<CommDiff> comm;
  std::vector<std::string> findings_gone, findings_new;  // finding ids
  std::vector<FindingDiff> findings;  // costed first, by |delta cost|; then the others by id
  double step_delta_ns() const;       // B's average step - A's
  double explained_ns() const;        // sum of the costed findings' deltas
};

DiffReport diff_reports(const Report& a, const Report& b);
std::string render_diff_text(const DiffReport& diff, int top);
nlohmann::json render_diff_json(const DiffReport& diff);

}  // namespace npukit::prof
