// Slow links between pipeline stages: a pipeline's transfers (Send/Receive) judged against the
// line between their two devices, and what a slow one adds to the step (findings_links.hpp).
#include <algorithm>
#include <map>
#include <tuple>

#include "profiler/analyze/findings_internal.hpp"
#include "profiler/analyze/findings_links.hpp"
#include "profiler/analyze/report_build.hpp"

namespace npukit::prof {

std::vector<Transfer> transfers(const ProfileData& d) {
  // Both ends known: a peerless Send or Receive has dstRank 4294967295, read as -1.
  auto known = [](const CollectiveRecord& c) { return c.src_rank >= 0 && c.dst_rank >= 0 && c.src_rank != c.dst_rank; };
  std::map<std::pair<int64_t, int>, int> device_of;  // (group, rank in it) -> device
  for (const CollectiveRecord& c : d.collectives) {
    if (known(c)) device_of[{c.group, is_receive(d.str(c.op_type)) ? c.dst_rank : c.src_rank}] = c.device;
  }
  std::vector<Transfer> out;
  for (const CollectiveRecord& c : d.collectives) {
    if (!known(c)) continue;
    auto from = device_of.find({c.group, c.src_rank}), to = device_of.find({c.group, c.dst_rank});
    if (from == device_of.end() || to == device_of.end() || from->second == to->second) continue;  // the other end was not recorded
    out.push_back({&c, from->second, to->second});
  }
  return out;
}

namespace {

std::vector<PointToPoint> point_to_point_links(const ProfileData& d) {
  std::map<std::pair<int, int>, PointToPoint> links;
  for (const auto& [call, from, to] : transfers(d)) {
    const CollectiveRecord& c = *call;
    PointToPoint& l = links[{from, to}];
    l.from = from, l.to = to, l.group = c.group, l.bytes = std::max(l.bytes, c.bytes);
    l.shortest_ns = std::min(l.shortest_ns, c.end - c.start);
    l.sends += !is_receive(d.str(c.op_type));
  }
  std::vector<PointToPoint> out;
  for (auto& [pair, l] : links) {
    if (l.bytes < kLargeBytes || l.sends == 0) continue;
    const std::set<int> ends{l.from, l.to};
    const std::string a = host_of(d, l.from), b = host_of(d, l.to);
    if (!a.empty() && !b.empty() && a != b) {
      RoceRate roce = member_roce_rate(d, ends);
      l.rate = roce.rate, l.latency_ns = 2 * roce.latency_ns;  // out of one port and into the other
      l.line = PointToPoint::Line::kRoce;
    } else {
      MemberRate m = member_line_rate(d, ends);
      l.rate = m.rate, l.latency_ns = m.latency_ns;
      l.line = m.switched ? PointToPoint::Line::kSwitch : m.through_host ? PointToPoint::Line::kThroughHost : PointToPoint::Line::kLink;
    }
    if (l.rate > 0) out.push_back(l);
  }
  return out;
}

}  // namespace

// Per step, what the slow pipeline links add to the step: at each boundary between two stages, a
// micro-batch's activations cross it one way and its gradients the other, and under 1F1B one of
// the two lies on the step's critical path while the other overlaps the stage's compute, so a
// boundary costs its costlier direction's excess (measured: a RoCE port at a quarter of its rate
// between stages 1 and 2 of pipeline-train, 17.2 ms estimated against 17.9 true; both directions
// summed read 34.3).
double point_to_point_cost(const ProfileData& d, const std::vector<PointToPoint>& slow) {
  std::map<int, int> steps = steps_per_device(d);
  std::map<std::tuple<int64_t, int, int>, double> boundary;  // (pipeline, lower device, higher) -> its costlier direction
  for (const PointToPoint& l : slow) {
    double& worst = boundary[{l.group, std::min(l.from, l.to), std::max(l.from, l.to)}];
    worst = std::max(worst, l.sends * l.excess_ns() / std::max(1, steps[l.from]));
  }
  // A pipeline's boundaries add up; pipelines side by side (data-parallel replicas) run at once,
  // and the step waits for the slowest of them.
  std::map<int64_t, double> per_pipeline;
  for (const auto& [key, c] : boundary) per_pipeline[std::get<0>(key)] += c;
  double cost = 0;
  for (const auto& [group, c] : per_pipeline) cost = std::max(cost, c);
  return cost;
}

// "their RoCE ports'" (the line a transfer took, as the finding names its rate), and the suspect.
const char* line_text(const PointToPoint& l) {
  switch (l.line) {
    case PointToPoint::Line::kRoce: return "their RoCE ports'";
    case PointToPoint::Line::kSwitch: return "their ports' into the switch";
    case PointToPoint::Line::kThroughHost: return "their PCIe links' (through the host)";
    case PointToPoint::Line::kLink: break;
  }
  return "their link's";
}
std::string suspect_text(const ProfileData& d, const PointToPoint& l, const ReportHeader& h) {
  static const std::map<PointToPoint::Line, std::string> kPorts = {
      {PointToPoint::Line::kRoce, "roce"}, {PointToPoint::Line::kSwitch, "hccs"}, {PointToPoint::Line::kThroughHost, "pcie"}};
  auto port = kPorts.find(l.line);
  std::string known = degraded_links_text(d, h, {{{l.from, l.to}, port == kPorts.end() ? "" : port->second}});
  if (!known.empty()) return known;
  const std::string a = h.rank_label(std::min(l.from, l.to)), b = h.rank_label(std::max(l.from, l.to));
  switch (l.line) {  // a boundary once, whichever way
    case PointToPoint::Line::kRoce: return "the RoCE port of " + a + " or of " + b + " (or the switch between them)";
    case PointToPoint::Line::kSwitch: return "the switch port of " + a + " or of " + b;
    case PointToPoint::Line::kThroughHost: return "the PCIe link of " + a + " or of " + b;
    case PointToPoint::Line::kLink: break;
  }
  return "the link between " + a + " and " + b;
}

std::vector<PointToPoint> slow_point_to_point(const ProfileData& d) {
  std::vector<PointToPoint> slow;
  for (const PointToPoint& l : point_to_point_links(d)) {
    if (l.achieved_share() < kSlowShare) slow.push_back(l);
  }
  return slow;
}

}  // namespace npukit::prof
