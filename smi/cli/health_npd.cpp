// npu-smi health --npd: the node-problem-detector custom-plugin contract. One line of at most
// 80 characters on stdout, exit 0 OK, 1 a problem (an Alarm or Critical incident), 2 unknown (no node, a stale
// node, a chip without data). Warnings are not problems: they show in the OK line.
#include <ostream>
#include <sstream>

#include "probes/health/health_rules.hpp"
#include "smi/cli/commands.hpp"

namespace npukit::smi {

namespace tf = telemetry;
namespace pr = probes;

namespace {

constexpr std::size_t kNpdLineMax = 80;
constexpr int kNpdOk = 0, kNpdProblem = 1, kNpdUnknown = 2;

std::string fit(std::string line) {
  if (line.size() > kNpdLineMax) line = line.substr(0, kNpdLineMax - 3) + "...";
  return line;
}

// "<message> (+N more)" for the first incident of `pick` and how many there are.
template <typename Pick>
std::string first_incident(const pr::NodeReport& r, Pick pick, int& count) {
  std::string first;
  count = 0;
  for (const pr::Incident& i : r.incidents) {
    if (!pick(i)) continue;
    if (count++ == 0) first = i.message;
  }
  return first + (count > 1 ? " (+" + std::to_string(count - 1) + " more)" : "");
}

}  // namespace

// Problems are incidents of severity Alarm or Critical (one per root cause); Warnings show in the
// OK line.
int npd_line(std::ostream& out, const tf::Snapshot& s, const std::vector<int>& devices) {
  pr::NodeReport r = pr::evaluate_node(s, devices);
  int count = 0;
  if (r.stale) return out << fit("NPU health unknown: node is stale: " + r.stale_reason) << "\n", kNpdUnknown;
  std::string problem = first_incident(r, [](const pr::Incident& i) { return i.kind->severity >= tf::Health::kAlarm; }, count);
  if (count > 0) return out << fit("NPU problem: " + problem) << "\n", kNpdProblem;
  if (r.verdict == pr::Verdict::kUnknown) {
    for (const pr::DeviceReport& d : r.devices) {
      if (d.verdict != pr::Verdict::kUnknown) continue;
      std::string why = d.checks.empty() ? "no data" : d.checks.back().reason;
      return out << fit("NPU health unknown: " + tf::chip_label(s, d.device) + ": " + why) << "\n", kNpdUnknown;
    }
  }
  std::string warning = first_incident(r, [](const pr::Incident& i) { return i.kind->severity == tf::Health::kWarning; }, count);
  if (count > 0) return out << fit("NPUs OK, " + std::to_string(count) + " warning(s): " + warning) << "\n", kNpdOk;
  return out << fit("NPUs OK: " + std::to_string(r.devices.size()) + " chips PASS") << "\n", kNpdOk;
}

int npd_unknown(std::ostream& out, const std::string& why) {
  std::string line = why.substr(0, why.find('\n'));
  if (line.rfind("npu-smi: ", 0) == 0) line = line.substr(9);
  out << fit("NPU health unknown: " + line) << "\n";
  return kNpdUnknown;
}

}  // namespace npukit::smi
