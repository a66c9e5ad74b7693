// What the link rules share (findings_comm.cpp: slow_link over communicators; findings_p2p.cpp:
// a pipeline's stage-to-stage transfers): the thresholds, the line rate between devices, and a
// pipeline link as judged.
#pragma once

#include <algorithm>
#include <climits>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "profiler/analyze/profile_data.hpp"
#include "profiler/analyze/report_model.hpp"

namespace npukit::prof {

constexpr int64_t kLargeBytes = 1 << 20;  // per rank: below this, latency dominates the time
constexpr double kHealthyShare = 0.8;     // ring and mesh busbw reach about 80% of line rate
constexpr double kSlowShare = 0.4;        // of the line rate: half of what healthy links reach

// The slowest line rate on the members' paths, and how to say it.
struct MemberRate {
  double rate = 0;        // bytes/s
  double hccs = 0;        // within a group: the slowest HCCS link
  double between = 0;     // members in more than one HCCS group: the path between the groups
  double latency_ns = 0;  // one transfer's fixed cost between two members (the slowest path)
  bool switched = false;  // the members reach each other through their ports into a switch
  bool through_host = false;  // ... or, with no link between them, over PCIe through the host
};

// The slowest RoCE port among the devices (a port's far end is the switch: device_b -1), and the
// largest port latency.
struct RoceRate {
  double rate = 0, latency_ns = 0;
};
RoceRate member_roce_rate(const ProfileData& d, const std::set<int>& devices);
// The members' slowest path (findings_comm.cpp has how it is found).
MemberRate member_line_rate(const ProfileData& d, const std::set<int>& devices);
bool kind_is(const LinkRecord& l, const char* kind);  // EMU_LINK kind, any case
std::string host_of(const ProfileData& d, int device);  // "" in a one-host recording

// Each Send and Receive whose two ends were recorded, with its sender's and receiver's devices
// (findings_p2p.cpp; a peerless one, recorded before peers were published, is left out).
struct Transfer {
  const CollectiveRecord* call = nullptr;
  int from = -1, to = -1;  // devices
};
std::vector<Transfer> transfers(const ProfileData& d);

// A pipeline's transfers from one stage to the next (Send/Receive, both ends recorded). Of the two
// ends the later to arrive waits for nobody, so over a run's micro-batches the shortest of its
// Sends and its peer's Receives is the transfer's own time; it is judged against the line between
// the two devices: their HCCS link, or across hosts their RoCE ports.
struct PointToPoint {
  int from = -1, to = -1;  // devices
  int64_t group = -1, bytes = 0, shortest_ns = INT64_MAX;
  int sends = 0;           // transfers over the recording (the sender's Sends)
  double rate = 0, latency_ns = 0;
  enum class Line { kLink, kRoce, kSwitch, kThroughHost } line = Line::kLink;  // how the two devices meet
  double achieved_share() const {
    double seconds = (static_cast<double>(shortest_ns) - latency_ns) / 1e9;
    return seconds > 0 && rate > 0 ? static_cast<double>(bytes) / seconds / rate : 1;
  }
  // What each transfer takes beyond a healthy link's time for its bytes, ns.
  double excess_ns() const {
    return std::max(0.0, static_cast<double>(shortest_ns) - latency_ns - static_cast<double>(bytes) / (kHealthyShare * rate) * 1e9);
  }
};

// The recording's pipeline links judged slow (under kSlowShare of their line), and what they add to
// the step: per pipeline its boundaries' costlier directions, the slowest pipeline of those side by
// side (findings_p2p.cpp).
std::vector<PointToPoint> slow_point_to_point(const ProfileData& d);
double point_to_point_cost(const ProfileData& d, const std::vector<PointToPoint>& slow);
const char* line_text(const PointToPoint& l);                         // "their RoCE ports'", ...
// "the link between rank 1 ... and rank 2 ...", narrowed as degraded_links_text can.
std::string suspect_text(const ProfileData& d, const PointToPoint& l, const ReportHeader& h);

// A slow collective's time with nothing beside it that its links' slowness added (exposed_cost's
// replay), and when it ran.
struct SlowSpan {
  int device = 0;
  int64_t start = 0, end = 0;
  double lost_ns = 0;
};
// What `spans` cost per step, on the device that loses most, when every one is at its device's
// tail: no communication outside `slow_groups` starts on the device after it within the step (a
// pipeline stage's data-parallel AllReduce after its last send). The step then waits for it only
// where another device waits: at the device's next transfer, whose other end, posted while it ran,
// waited from then on (the previous stage computes its next step's first forward meanwhile).
// nullopt when one is not at the tail (later collectives wait for all of it) or outside the steps.
std::optional<double> tail_cost(const ProfileData& d, const std::vector<SlowSpan>& spans, const std::set<int64_t>& slow_groups);

// Where a group's (or a stage pair's) transfers go: the links among `devices` (both ends among
// them) and the devices' ports of `port_kind` ("roce"; "hccs": into a switch; "pcie": to the host;
// "" none).
struct LinkPath {
  std::set<int> devices;
  std::string port_kind;
};
// The links on `paths` that ran below the health rule's degraded rate
// (telemetry::kDegradedRatePercent) during the recording (LinkRecord::least_rate_percent: their
// counter samples and link_state_changed events), one per physical link, as the report names
// ranks: "the link between rank 0 (device 0) and rank 2 (device 2), which ran at 25% of its line
// rate during the recording", or "the links of rank 2 (device 2), ..." when they all end there.
// "" when none did (a slowness no link's rate explains, or a profile from before both).
std::string degraded_links_text(const ProfileData& d, const ReportHeader& h, const std::vector<LinkPath>& paths);

}  // namespace npukit::prof
