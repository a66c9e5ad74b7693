// The link rules' suspects narrowed by what the recording saw of its links (counters, events): a collective
// tells only that some link on its members' paths is slow (a mesh or a cross-host ring waits for
// its slowest transfer); the link that trained at a fraction of its rate says which.
#include <algorithm>
#include <cctype>
#include <map>
#include <tuple>

#include "profiler/analyze/findings_internal.hpp"
#include "profiler/analyze/findings_links.hpp"
#include "telemetry/incidents.hpp"

namespace npukit::prof {

namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

const char* port_name(const std::string& kind) {
  if (kind == "roce") return "RoCE port";
  if (kind == "hccs") return "switch port";
  return "PCIe link";
}

}  // namespace

std::string degraded_links_text(const ProfileData& d, const ReportHeader& h, const std::vector<LinkPath>& paths) {
  // (one end, the other or -1 for a port, kind) -> the least rate either direction read
  std::map<std::tuple<int, int, std::string>, double> degraded;
  for (const auto& [devices, port_kind] : paths) {
    for (const auto& [id, l] : d.links) {
      if (l.least_rate_percent >= telemetry::kDegradedRatePercent) continue;
      const bool between = devices.count(l.device_a) && devices.count(l.device_b);
      const int port_of = l.device_b < 0 ? l.device_a : l.device_a < 0 ? l.device_b : -1;
      const bool port = !port_kind.empty() && port_of >= 0 && devices.count(port_of) && kind_is(l, port_kind.c_str());
      if (!between && !port) continue;
      auto key =
          port ? std::make_tuple(port_of, -1, lower(l.kind))
               : std::make_tuple(std::min(l.device_a, l.device_b), std::max(l.device_a, l.device_b), lower(l.kind));
      auto [it, fresh] = degraded.try_emplace(key, l.least_rate_percent);
      it->second = std::min(it->second, l.least_rate_percent);
    }
  }
  // Several links of one device (its links all retrained slow): that device's links, once.
  std::map<int, std::size_t> ends;
  double least = 100;
  for (const auto& [key, percent] : degraded) {
    ++ends[std::get<0>(key)], least = std::min(least, percent);
    if (std::get<1>(key) >= 0) ++ends[std::get<1>(key)];
  }
  for (const auto& [device, n] : ends) {
    if (degraded.size() >= 2 && n == degraded.size()) {
      return "the links of " + h.rank_label(device) + ", which ran at " + fmt("%.0f%%", least) +
             " of their line rate during the recording";
    }
  }
  std::string out;
  for (const auto& [key, percent] : degraded) {
    const auto& [a, b, kind] = key;
    std::string what = b < 0 ? std::string("the ") + port_name(kind) + " of " + h.rank_label(a)
                             : "the link between " + h.rank_label(a) + " and " + h.rank_label(b);
    out += (out.empty() ? "" : "; ") + what + ", which ran at " + fmt("%.0f%%", percent) +
           " of its line rate during the recording";
  }
  return out;
}

}  // namespace npukit::prof
