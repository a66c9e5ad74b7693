// The diagnosis rules as data: one table that every surface reads (the report's findings, their
// order and severity, the docs). Each rule's evaluation lives in findings.cpp under its id; the
// table says what it reads, when it fires, what it costs and what to do.
//
// Order of findings: by estimated cost per step (the time the cause takes from each step),
// costliest first; rules without a cost estimate follow, by severity.
//
// Thread-safety: immutable data.
#pragma once

#include <span>
#include <string_view>

namespace npukit::prof {

enum class Severity { kInfo, kWarning, kCritical };
std::string_view severity_name(Severity s);  // "info", "warning", "critical"

struct RuleDef {
  std::string_view id;
  std::string_view evidence;   // the data it reads
  std::string_view threshold;  // when it fires
  std::string_view cost;       // how the time it costs per step is estimated ("" = not estimated)
  Severity severity;           // of a finding without a cost; with one, by the cost's share of the step
  std::string_view action;     // what to do about it
};

std::span<const RuleDef> all_rules();
const RuleDef* find_rule(std::string_view id);

// Severity of a finding that costs `share` of the step: critical from 10%, warning from 1%.
Severity severity_of_share(double share);

}  // namespace npukit::prof
