// npu-smi health --npd: the node-problem-detector custom-plugin contract. One line of at most
// 80 characters on stdout, exit 0 OK, 1 a problem (a chip FAILs), 2 unknown (no node, a stale
// node, a chip without data). Warnings are not problems: they show in the OK line.
#include <ostream>
#include <sstream>

#include "probes/health_rules.hpp"
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

// The first chip with `verdict`, its first check with it, and how many chips have it.
std::string first_with(const tf::Snapshot& s, const pr::NodeReport& r, pr::Verdict verdict, int& chips) {
  std::string first;
  chips = 0;
  for (const pr::DeviceReport& d : r.devices) {
    if (d.verdict != verdict) continue;
    if (chips++ > 0) continue;
    const tf::DeviceInfo& info = s.device_info(d.device);
    first = "NPU " + std::to_string(info.npu_id) + " Chip " + std::to_string(info.chip_id);
    for (const pr::Check& c : d.checks) {
      if (c.verdict == verdict) {
        first += " " + c.rule + ": " + c.reason;
        break;
      }
    }
  }
  return first;
}

}  // namespace

int npd_line(std::ostream& out, const tf::Snapshot& s, const std::vector<int>& devices) {
  pr::NodeReport r = pr::evaluate_node(s, devices);
  int chips = 0;
  if (r.stale) return out << fit("NPU health unknown: node is stale: " + r.stale_reason) << "\n", kNpdUnknown;
  if (r.verdict == pr::Verdict::kFail) {
    std::string first = first_with(s, r, pr::Verdict::kFail, chips);
    std::string more = chips > 1 ? " (+" + std::to_string(chips - 1) + " more)" : "";
    return out << fit("NPU FAIL" + more + ": " + first) << "\n", kNpdProblem;
  }
  if (r.verdict == pr::Verdict::kUnknown) {
    return out << fit("NPU health unknown: " + first_with(s, r, pr::Verdict::kUnknown, chips)) << "\n", kNpdUnknown;
  }
  if (r.verdict == pr::Verdict::kWarn) {
    std::string first = first_with(s, r, pr::Verdict::kWarn, chips);
    return out << fit("NPUs OK, " + std::to_string(chips) + " WARN: " + first) << "\n", kNpdOk;
  }
  return out << fit("NPUs OK: " + std::to_string(r.devices.size()) + " chips PASS") << "\n", kNpdOk;
}

int npd_unknown(std::ostream& out, const std::string& why) {
  std::string line = why.substr(0, why.find('\n'));
  if (line.rfind("npu-smi: ", 0) == 0) line = line.substr(9);
  out << fit("NPU health unknown: " + line) << "\n";
  return kNpdUnknown;
}

}  // namespace npukit::smi
