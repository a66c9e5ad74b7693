// npu-smi diag: active diagnostics by level (probes/diag/diagnostics.hpp) with a result box like
// `dcgmi diag`'s ("Pass - All", "Fail - NPU: 3") and the health exit codes:
// 0 all Pass, 1 a Warn, 2 a Fail, 3 Unknown (stale node), 4 usage, 5 no node.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "probes/diag/diagnostics.hpp"
#include "smi/cli/context.hpp"

namespace npukit::smi {

// "Pass - All", "Fail - NPU: 3, 5", "Warn" (node-wide tests), ...
std::string diag_result_text(const telemetry::Snapshot& s, const probes::DiagTestResult& t);
// `verbose`: a "measured" line per device for the tests that measure.
std::string render_diag_box(const telemetry::Snapshot& s, const probes::DiagReport& r, bool verbose = false);
nlohmann::json diag_json(const telemetry::Snapshot& s, const probes::DiagReport& r);
// The exit code of a verdict, shared by `health` and `diag` (kExitOk, kExitHealthWarn/Fail/Unknown).
int verdict_exit_code(probes::Verdict v);
std::string diag_help();

// `npu-smi diag [-r 1|2|3] [-i id] [--duration S] [-v] [--json]` (args after "diag").
int run_diag_command(Context& ctx, const std::vector<std::string>& args);

}  // namespace npukit::smi
