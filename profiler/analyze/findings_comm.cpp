// The slow-link rule: a communicator whose large collectives move data far below what its links'
// line rate allows once the latencies their algorithm pays one after another are set aside, the
// links it points at, and the exposed time the slowness costs each step.
#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>
#include <string>

#include <strings.h>

#include "profiler/analyze/findings_internal.hpp"
#include "profiler/analyze/ranks.hpp"
#include "profiler/analyze/findings_links.hpp"
#include "profiler/analyze/report_build.hpp"
#include "profiler/analyze/summary.hpp"

namespace npukit::prof {

bool kind_is(const LinkRecord& l, const char* kind) { return strcasecmp(l.kind.c_str(), kind) == 0; }

// The host a device ran on ("" in a one-host recording).
std::string host_of(const ProfileData& d, int device) {
  auto it = d.device_hosts.find(device);
  return it == d.device_hosts.end() ? "" : it->second.host;
}

// Their HCCS links (between two members, or each member's port into the node's switch: an HCCS
// link to -1, as the A100's NVSwitch) and, where HCCS does not join a host's members (the
// first-generation 910's two 4-NPU meshes), the path between the groups: the host's link between
// them (EMU_RUN.inter_group_bytes_per_s), else the devices' PCIe. Without HCCS among them, the
// slowest other link between two members, else (a PCIe-only node such as 4x310P3) their PCIe
// links: a transfer goes up one member's and down another's, through the host.
MemberRate member_line_rate(const ProfileData& d, const std::set<int>& devices) {
  constexpr int kSwitch = -1;
  double hccs = 0, other = 0, pcie = 0;
  double hccs_latency = 0, port_latency = 0, other_latency = 0, pcie_latency = 0;
  auto slowest = [](double& rate, double r) { rate = rate == 0 ? r : std::min(rate, r); };
  std::map<int, int> group;  // union-find over the HCCS links between members (and the switch)
  for (int dev : devices) group[dev] = dev;
  group[kSwitch] = kSwitch;
  auto root = [&](int dev) {
    while (group[dev] != dev) dev = group[dev] = group[group[dev]];
    return dev;
  };
  for (const auto& [id, l] : d.links) {
    if (kind_is(l, "PCIE") && (devices.count(l.device_a) || devices.count(l.device_b))) {
      slowest(pcie, l.peak_bytes_per_s);
      pcie_latency = std::max(pcie_latency, l.latency_ns);
    }
    if (kind_is(l, "HCCS") && l.device_b == kSwitch && devices.count(l.device_a)) {  // a port into the switch
      slowest(hccs, l.peak_bytes_per_s);
      port_latency = std::max(port_latency, l.latency_ns);
      group[root(l.device_a)] = root(kSwitch);
      continue;
    }
    if (!devices.count(l.device_a) || !devices.count(l.device_b)) continue;
    if (!kind_is(l, "HCCS")) {
      slowest(other, l.peak_bytes_per_s);
      other_latency = std::max(other_latency, l.latency_ns);
      continue;
    }
    slowest(hccs, l.peak_bytes_per_s);
    hccs_latency = std::max(hccs_latency, l.latency_ns);
    group[root(l.device_a)] = root(l.device_b);
  }
  if (hccs == 0 && other > 0) return {other, 0, 0, other_latency, false, false};
  const double inter_group = std::atof(d.run_value("inter_group_bytes_per_s", "0").c_str());
  if (hccs == 0) {  // up one member's PCIe, (between a 910's meshes, the host link,) down another's
    double between = std::max(inter_group, 0.0);
    return {between > 0 ? std::min(pcie, between) : pcie, 0, between, 2 * pcie_latency, false, pcie > 0};
  }
  const bool switched = root(*devices.begin()) == root(kSwitch);
  hccs_latency = std::max(hccs_latency, 2 * port_latency);  // through the switch: up one port, down another
  std::set<std::pair<std::string, int>> groups;  // (host, group): hosts are apart anyway (RoCE)
  std::set<std::string> hosts;
  for (int dev : devices) {
    groups.insert({host_of(d, dev), root(dev)});
    hosts.insert(host_of(d, dev));
  }
  double between = 0;
  if (groups.size() > hosts.size()) {  // some host's members are in more than one group
    between = inter_group > 0 ? inter_group : pcie;
  }
  // Across the groups: up one device's PCIe, the host's link, down another's (its latency is not
  // on the bus: the PCIe legs' stand for it).
  double latency = between > 0 ? std::max(hccs_latency, 2 * pcie_latency) : hccs_latency;
  return {between > 0 ? std::min(hccs, between) : hccs, hccs, between, latency, switched};
}

// The slowest RoCE port among the members (a port's far end is the switch: device_b -1), and the
// largest port latency.
RoceRate member_roce_rate(const ProfileData& d, const std::set<int>& devices) {
  RoceRate r;
  for (const auto& [id, l] : d.links) {
    if (!kind_is(l, "ROCE") || !devices.count(l.device_a)) continue;
    r.rate = r.rate == 0 ? l.peak_bytes_per_s : std::min(r.rate, l.peak_bytes_per_s);
    r.latency_ns = std::max(r.latency_ns, l.latency_ns);
  }
  return r;
}

namespace {

// One collective as every rank ran it (its opName); the last rank to arrive waited for nobody,
// so its duration is the transfer's.
struct Instance {
  int64_t group = -1, op_type = 0, algorithm = -1, bytes = 0;
  int ranks = 1;
  int64_t transfer_ns = 0;
  std::set<int> devices;
};

struct GroupLinks {
  double achieved_share = 0;  // median over its large instances: the time its links' line rate
                              // allows over the time it took less its latencies (ring/mesh: busbw
                              // x duration / (duration - latencies) / (links x line rate))
  double latency_ns = 0;      // median: the latencies its collectives pay in turn (hops x alpha)
  MemberRate path;            // its members' slowest path: rate, latency, how they meet
  std::string links_text;     // "56 GB/s", or for a group across hosts "HCCS 56 GB/s within ... "
  double busbw = 0;           // median, bytes/s
  int instances = 0;
  std::set<int> devices;
  std::set<std::string> hosts;  // more than one: a group across hosts
  int64_t op_type = 0;
};

std::map<int64_t, Instance> instances(const ProfileData& d) {
  std::map<int64_t, Instance> out;
  for (const CollectiveRecord& c : d.collectives) {
    // A Send or Receive has no transfer time of its own to judge a link by: a Receive's duration
    // includes waiting for its sender (pipeline_bubble).
    if (is_point_to_point(d.str(c.op_type))) continue;
    Instance& i = out[c.op_name];
    int64_t duration = c.end - c.start;
    i.transfer_ns = i.devices.empty() ? duration : std::min(i.transfer_ns, duration);
    i.group = c.group, i.op_type = c.op_type, i.algorithm = c.algorithm, i.bytes = c.bytes, i.ranks = c.ranks;
    i.devices.insert(c.device);
  }
  return out;
}

// "30 GB/s", "300 GB/s per port into the switch", or for members in two groups "HCCS 30 GB/s
// within each mesh, 16 GB/s between them".
std::string rate_text(const MemberRate& r) {
  if (r.switched) return fmt("%.0f GB/s per port into the switch", r.rate / 1e9);
  if (r.through_host && r.between > 0) return fmt("PCIe, %.0f GB/s between the meshes, through the host", r.between / 1e9);
  if (r.through_host) return fmt("PCIe %.0f GB/s per device, through the host", r.rate / 1e9);
  if (r.between <= 0) return fmt("%.0f GB/s", r.rate / 1e9);
  return fmt("HCCS %.0f GB/s within each mesh, ", r.hccs / 1e9) + fmt("%.0f GB/s between the meshes", r.between / 1e9);
}

// The hosts the members run on (none in a one-host recording).
std::set<std::string> member_hosts(const ProfileData& d, const std::set<int>& devices) {
  std::set<std::string> hosts;
  for (int dev : devices) {
    if (d.device_hosts.count(dev)) hosts.insert(host_of(d, dev));
  }
  return hosts;
}

// The seconds a hierarchical AllReduce of `bytes` over `ranks` members on `hosts` hosts takes at
// line rate (hierarchical_shares): within each host a mesh spreads its share over L-1 HCCS links
// (a ring uses one), across hosts each rank's share goes through its RoCE port.
double hierarchical_line_seconds(double bytes, int ranks, int hosts, double intra_rate, double roce_rate, bool mesh) {
  const double l = static_cast<double>(ranks) / hosts;
  const HierarchicalShares share = hierarchical_shares(ranks, hosts);
  return share.intra * bytes / ((mesh && l > 1 ? l - 1 : 1) * intra_rate) + share.inter * bytes / roce_rate;
}

// Below this share of its duration spent on bandwidth (the rest is latency), a collective says
// little about its links' rate.
constexpr double kMinBandwidthShare = 0.5;

std::map<int64_t, GroupLinks> group_links(const ProfileData& d, const std::map<int64_t, Instance>& all) {
  std::map<int64_t, std::vector<double>> shares, busbws, latencies;
  std::map<int64_t, GroupLinks> out;
  for (const auto& [name, i] : all) {
    if (i.bytes < kLargeBytes || i.transfer_ns <= 0 || i.ranks < 2 || static_cast<int>(i.devices.size()) < i.ranks) continue;
    MemberRate member = member_line_rate(d, i.devices);
    double rate = member.rate;
    if (rate <= 0) continue;
    const std::string& type = d.str(i.op_type);
    const std::string& algorithm = d.str(i.algorithm);
    double seconds = static_cast<double>(i.transfer_ns) / 1e9;
    double busbw = static_cast<double>(i.bytes) * algbw_size_factor(type, i.ranks) * busbw_factor(type, i.ranks) / seconds;
    std::set<std::string> hosts = member_hosts(d, i.devices);
    double line_seconds = 0, latency_ns = 0;
    std::string links_text = rate_text(member);
    if (hosts.size() > 1) {  // across hosts: HCCL's hierarchical AllReduce (other collectives are not judged)
      RoceRate roce = member_roce_rate(d, i.devices);
      if (type.find("allReduce") == std::string::npos || algorithm.find('-') == std::string::npos || roce.rate <= 0) continue;
      int n_hosts = static_cast<int>(hosts.size());
      const bool mesh = algorithm.rfind("MESH", 0) == 0;
      line_seconds = hierarchical_line_seconds(static_cast<double>(i.bytes), i.ranks, n_hosts, rate, roce.rate, mesh);
      // Within each host as its algorithm does; across, a ring over the hosts through two ports.
      latency_ns = latency_hops(type, mesh ? "MESH" : "RING", i.ranks / n_hosts) * member.latency_ns +
                   latency_hops(type, "RING", n_hosts) * 2 * roce.latency_ns;
      links_text = (member.between > 0 ? rate_text(member) + " in each host, " : fmt("HCCS %.0f GB/s within each host, ", rate / 1e9)) +
                   fmt("RoCE %.0f GB/s per port across ", roce.rate / 1e9) +
                   std::to_string(n_hosts) + " hosts";
    } else {
      double links = algorithm == "MESH" ? i.ranks - 1 : 1;
      line_seconds = busbw * seconds / (links * rate);
      latency_ns = latency_hops(type, algorithm, i.ranks) * member.latency_ns;
    }
    const double bandwidth_seconds = seconds - latency_ns / 1e9;
    if (bandwidth_seconds < kMinBandwidthShare * seconds) continue;
    shares[i.group].push_back(line_seconds / bandwidth_seconds);
    latencies[i.group].push_back(latency_ns);
    busbws[i.group].push_back(busbw);
    GroupLinks& g = out[i.group];
    g.path = member, g.links_text = links_text, g.devices = i.devices, g.hosts = hosts, g.op_type = i.op_type, ++g.instances;
  }
  for (auto& [group, g] : out) {
    g.achieved_share = nearest_rank(shares[group], 0.5), g.busbw = nearest_rank(busbws[group], 0.5);
    g.latency_ns = nearest_rank(latencies[group], 0.5);
  }
  return out;
}

// The part of [start, end) that nothing else on the device covers (`hiding`).
double open_ns(const Intervals& hiding, int64_t start, int64_t end) {
  return static_cast<double>(std::max<int64_t>(0, end - start)) - static_cast<double>(total(clip(hiding, {start, end})));
}

// Per device, what a slow group's collective runs beside without delaying the step: its compute,
// and the collectives of groups that are not slow (the step waits for those anyway). A
// data-parallel bucket beside a tensor-parallel AllReduce, on a degraded link of its group, was
// costed as if it ran alone: 4.4 ms per step where the fault cost 0.17.
std::map<int, Intervals> hiding_by_device(const ProfileData& d, const std::map<int64_t, GroupLinks>& judged,
                                          const std::map<int64_t, GroupLinks>& slow) {
  std::map<int, Intervals> spans;
  for (const CollectiveRecord& c : d.collectives) {  // a group never judged may be on the slow link too
    if (judged.count(c.group) && !slow.count(c.group)) spans[c.device].push_back({c.start, c.end});
  }
  for (const auto& [device, overlap] : d.overlap) {
    Intervals& s = spans[device];
    s.insert(s.end(), overlap.compute.begin(), overlap.compute.end());
  }
  for (auto& [device, s] : spans) s = union_of(std::move(s));
  return spans;
}

// The slow collectives' cost; `at_tail` is set when they all sit at their devices' tail, where the
// cost is in the other stages' waits (pipeline_bubble's receives) rather than on the device.
struct ExposedCost {
  double ns = 0;
  bool at_tail = false;
  double on_device_ns = 0;  // what they add on their own devices, whether the step waits or not
};

// Per step, on the device that loses most: how much less of the slow groups' large collectives
// would run with nothing beside them (hiding_by_device) if their links were healthy. Replayed per device in start
// order: each collective takes its excess over a healthy share of line rate less, and one that
// queued behind the previous (it started as that one ended) starts when the previous would have
// ended; the compute stays where it was. Collectives hidden under compute so lose nothing, and
// the slack between them absorbs delay as it does on the device.
ExposedCost exposed_cost(const ProfileData& d, const std::map<int64_t, GroupLinks>& judged, const std::map<int64_t, GroupLinks>& slow) {
  std::map<int, std::vector<std::pair<const CollectiveRecord*, double>>> by_device;  // with its excess
  for (const CollectiveRecord& c : d.collectives) {
    auto g = slow.find(c.group);
    if (g == slow.end() || c.bytes < kLargeBytes) continue;
    double bandwidth_ns = std::max(0.0, static_cast<double>(c.end - c.start) - g->second.latency_ns);
    double excess = bandwidth_ns * std::max(0.0, 1 - g->second.achieved_share / kHealthyShare);
    by_device[c.device].emplace_back(&c, excess);
  }
  std::map<int, int> steps = steps_per_device(d);
  const std::map<int, Intervals> hiding = hiding_by_device(d, judged, slow);
  std::vector<SlowSpan> spans;
  double worst = 0;
  for (auto& [device, list] : by_device) {
    std::sort(list.begin(), list.end(), [](const auto& a, const auto& b) { return a.first->start < b.first->start; });
    auto h = hiding.find(device);
    static const Intervals kNothing;
    const Intervals& covered = h == hiding.end() ? kNothing : h->second;
    double lost = 0;
    int64_t prev_end = INT64_MIN, healthy_prev_end = INT64_MIN;
    for (const auto& [c, excess] : list) {
      int64_t start = c->start <= prev_end ? std::min(healthy_prev_end, c->start) : c->start;  // queued: moves up
      auto healthy_end = static_cast<int64_t>(static_cast<double>(start) + static_cast<double>(c->end - c->start) - excess);
      const double one = open_ns(covered, c->start, c->end) - open_ns(covered, start, healthy_end);
      lost += one, spans.push_back({device, c->start, c->end, one});
      prev_end = c->end, healthy_prev_end = healthy_end;
    }
    worst = std::max(worst, std::max(0.0, lost) / std::max(1, steps[device]));
  }
  std::set<int64_t> slow_groups;
  for (const auto& [group, g] : slow) slow_groups.insert(group);
  // At its devices' tail a collective delays only them: the others wait as far as they reach it.
  std::optional<double> tail = tail_cost(d, spans, slow_groups);
  if (tail && *tail < worst) return {*tail, true, worst};
  return {worst, false, worst};
}

std::string device_list(const std::set<int>& devices) {
  std::string out;
  for (int dev : devices) out += (out.empty() ? "" : ", ") + std::to_string(dev);
  return out;
}

// Where a slow group's transfers go (degraded_links_text): among its members, and their RoCE ports
// across hosts, their ports into a switch, or their PCIe links through the host.
LinkPath path_of(const GroupLinks& g) {
  return {g.devices, g.hosts.size() > 1 ? "roce" : g.path.switched ? "hccs" : g.path.through_host ? "pcie" : ""};
}

std::string structural_suspect(const std::map<int64_t, GroupLinks>& slow);

// The links that ran slow on the slow groups' paths (degraded_links_text), and for the groups on
// none of those, where their members' paths leave it open (structural_suspect).
std::string suspect(const ProfileData& d, const ReportHeader& h, const std::map<int64_t, GroupLinks>& slow) {
  std::vector<LinkPath> paths;
  std::map<int64_t, GroupLinks> unexplained;
  for (const auto& [group, g] : slow) {
    paths.push_back(path_of(g));
    if (degraded_links_text(d, h, {path_of(g)}).empty()) unexplained.emplace(group, g);
  }
  std::string known = unexplained.size() == slow.size() ? "" : degraded_links_text(d, h, paths);
  if (unexplained.empty()) return known;
  return (known.empty() ? "" : known + "; ") + structural_suspect(unexplained);
}

// "device 3's links" when one device is in every slow group (and a group has more than two).
std::string structural_suspect(const std::map<int64_t, GroupLinks>& slow) {
  for (const auto& [group, g] : slow) {  // across hosts the HCCS meshes are judged by the groups within one
    if (g.hosts.size() > 1) {
      std::string hosts;
      for (const std::string& h : g.hosts) hosts += (hosts.empty() ? "" : ", ") + h;
      return "a RoCE port of hosts " + hosts + " (or the switch between them)";
    }
  }
  for (const auto& [group, g] : slow) {  // every transfer crosses two ports: the slow one is among theirs
    if (g.path.switched) return "the switch port of one of devices " + device_list(g.devices) + " (a ring runs at its slowest port)";
    if (g.path.through_host) return "the PCIe link of one of devices " + device_list(g.devices) + " (their transfers go through the host)";
  }
  std::map<int, int> seen;
  bool pair_only = true;
  for (const auto& [group, g] : slow) {
    for (int dev : g.devices) ++seen[dev];
    pair_only = pair_only && g.devices.size() == 2;
  }
  if (slow.size() == 1 && pair_only) {
    const std::set<int>& devs = slow.begin()->second.devices;
    return "the link between devices " + std::to_string(*devs.begin()) + " and " + std::to_string(*devs.rbegin());
  }
  std::vector<int> common;
  for (const auto& [dev, n] : seen) {
    if (n == static_cast<int>(slow.size())) common.push_back(dev);
  }
  if (common.size() == 1) return "device " + std::to_string(common.front()) + "'s links";
  return "the links among devices " + device_list([&] { std::set<int> s; for (auto& [d, n] : seen) s.insert(d); return s; }());
}

}  // namespace

// What the slow groups' collectives and the slow stage-to-stage links cost in a replay of the
// collectives with their transfers at a healthy share of line rate.
std::optional<double> healthy_replay_cost(const ProfileData& d, const std::map<int64_t, GroupLinks>& slow,
                                          const std::vector<PointToPoint>& slow_p2p) {
  return replay_cost(d, {}, [&](const CollectiveRecord& c, int from, int to, double ns) {
    double share = 1;
    if (auto g = slow.find(c.group); g != slow.end() && from < 0) share = g->second.achieved_share;
    for (const PointToPoint& l : slow_p2p) {
      if (l.group == c.group && l.from == from && l.to == to) share = l.achieved_share();
    }
    return ns * std::min(1.0, share / kHealthyShare);
  });
}

void slow_link(const ProfileData& d, const Report& r, const std::vector<PointToPoint>& slow_p2p, std::vector<Finding>& out,
               Measured& measured) {
  auto groups = group_links(d, instances(d));
  std::map<int64_t, GroupLinks> slow;
  for (const auto& [group, g] : groups) {
    if (g.achieved_share < kSlowShare) slow.emplace(group, g);
  }
  // A pipeline's stage-to-stage transfers too (a degraded port between two stages was left to
  // pipeline_bubble, whose advice is more micro-batches).
  const ExposedCost collectives = slow.empty() ? ExposedCost{} : exposed_cost(d, groups, slow);
  double cost = collectives.ns + point_to_point_cost(d, slow_p2p);
  // Where the ranks wait for another cause anyway (a straggler), the links cost what a replay of
  // the collectives with their transfers at a healthy share of line rate says. Only then: the
  // replay does not see the compute beside a bucket's allreduce, and alone it reads a data-parallel
  // link's 0.18 ms as 0.02.
  const bool other_cause = straggler_apart_from(r.ranks, -1);
  const std::optional<double> replayed = !other_cause || (slow.empty() && slow_p2p.empty()) ? std::nullopt : healthy_replay_cost(d, slow, slow_p2p);
  const bool hidden = cost > 0 && replayed && *replayed < kHiddenShare * cost;
  if (hidden) cost = *replayed;
  if (!groups.empty() || !slow_p2p.empty()) measured["slow_link"] = cost;
  if (collectives.at_tail) measured[kSlowLinkAtTail] = collectives.ns;
  measured[kSlowLinkOnDevice] = collectives.on_device_ns;
  if (slow.empty() && slow_p2p.empty()) return;
  std::string list;
  Finding f{"slow_link", "", {}};
  for (const auto& [group, g] : slow) {
    std::string name = d.str(group);
    list += (list.empty() ? "" : "; ") + name + " (devices " + device_list(g.devices) + ") moves its " +
            d.str(g.op_type) + " at " + fmt("%.1f GB/s", g.busbw / 1e9) + " busbw, " + pct(g.achieved_share) +
            " of what its links' line rate allows (" + g.links_text +
            (g.latency_ns > 0 ? fmt("; %.1f us of link latency per call set aside", g.latency_ns / 1e3) : "") + ")";
    f.numbers.push_back({name + " busbw_GBps", g.busbw / 1e9});
    f.numbers.push_back({name + " percent_of_line_rate", 100 * g.achieved_share});
  }
  for (const PointToPoint& l : slow_p2p) {
    std::string name = d.str(l.group) + " " + std::to_string(l.from) + "->" + std::to_string(l.to);
    double gbps = static_cast<double>(l.bytes) / ((static_cast<double>(l.shortest_ns) - l.latency_ns) / 1e9) / 1e9;
    list += (list.empty() ? "" : "; ") + d.str(l.group) + " sends from " + r.header.rank_label(l.from) + " to " +
            r.header.rank_label(l.to) + " at " + fmt("%.1f GB/s", gbps) + ", " + pct(l.achieved_share()) + " of " + line_text(l) +
            " " + fmt("%.0f GB/s", l.rate / 1e9);
    f.numbers.push_back({name + " GBps", gbps});
    f.numbers.push_back({name + " percent_of_line_rate", 100 * l.achieved_share()});
  }
  std::string suspects = slow.empty() ? "" : suspect(d, r.header, slow);
  for (const PointToPoint& l : slow_p2p) {
    std::string one = suspect_text(d, l, r.header);
    if (suspects.find(one) == std::string::npos) suspects += (suspects.empty() ? "" : "; ") + one;
  }
  f.text = "Slow link: " + list + "; healthy links reach about " + pct(kHealthyShare) + ". The suspect is " + suspects +
           (hidden ? ". The step hides most of it: the ranks wait in their collectives for another cause anyway (replayed "
                     "with these transfers at a healthy share of line rate, the step ends " + ms(cost) + " sooner)."
            : cost > 0              ? ". The slowness costs " + ms(cost) + " per step of communication with nothing else running."
            : collectives.at_tail ? ". It costs no step time in this run: its collectives end their devices' part of the step, "
                                    "and no other device waited for them."
                                  : ". It costs no step time in this run: the communication stays hidden behind compute and other communicators' collectives.");
  f.numbers.insert(f.numbers.begin(), {"cost_ms_per_step", cost / 1e6});
  double step = 0;
  for (const RankRow& row : r.ranks) step = std::max(step, row.step);
  f.cost_ns_per_step = cost, f.step_ns = step;
  out.push_back(std::move(f));
}

}  // namespace npukit::prof
