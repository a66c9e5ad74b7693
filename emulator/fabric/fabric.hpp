// The node's interconnect: HCCS links between NPUs and PCIe paths, with per-link counters and
// an alpha-beta transfer model with contention.
//
// Links are directed (one per direction). Within a host, paths by topology:
//   hccs_full_mesh        i -> j: the HCCS link i->j
//   hccs_switch           i -> j: i's port up to the switch, then j's port down (an NVSwitch-like
//                         scale-up switch: all of a device's concurrent transfers share its port)
//   hccs_two_meshes_pcie  same group: HCCS i->j; across: PCIe up(i), inter-group, PCIe down(j)
//   pcie                  PCIe up(i), PCIe down(j) (through the host bridge)
// Between hosts of a cluster (NodeSpec::hosts > 1), every device has its own RoCE port (one link
// up to its leaf switch, one down): i -> j is RoCE up(i), down(j) when both hosts share a leaf;
// across leaves it also takes one uplink lane of i's leaf to the spines and one downlink lane of
// j's leaf. A leaf has ceil(its ports / oversubscription) lanes each way at the port rate; a
// pair's lane is fixed by a hash of the pair, as ECMP pins a flow (so flows can collide).
// A transfer of S bytes over a path starting no earlier than t0 begins when every link of the
// path is free, lasts  sum(latency) + S / min(bandwidth x efficiency)  and holds every link of
// the path for that long (cut-through; contending transfers queue in request order).
//
// Two byte counts per link: `bytes_total` jumps when a transfer is scheduled (the bus's link
// counters); `bytes_flow` spreads each transfer's bytes evenly over the time it holds the link,
// as of the last account() (the utilization figures: physics.hpp).
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <string>
#include <utility>
#include <vector>

#include "emulator/device/spec.hpp"

namespace npukit::emu {

enum class LinkKind : uint8_t { kHccs, kPcie, kInterGroup, kRoce, kSpine };
const char* link_kind_name(LinkKind k);  // "HCCS", "PCIE", "SYS", "ROCE", "SPINE"
const char* link_bus_kind(LinkKind k);   // "hccs", "pcie", "sys", "roce", "spine": the bus's name

struct Link {
  int id = 0;
  LinkKind kind = LinkKind::kHccs;
  int src = -1;  // device id, or -1 for the host side / switch
  int dst = -1;
  int host = 0;   // the host it belongs to (a spine lane: its leaf's first host)
  double bandwidth_bps = 0;  // line rate per direction
  double efficiency = 0.8;   // achieved fraction of the line rate for bulk transfers
  Nanos latency_ns = 0;
  bool up = true;
  double rate_share = 1;     // of the line rate it runs at (< 1: retrained after a degradation)
  std::vector<Nanos> down_events;  // virtual times it went down since the last clear
  Nanos free_at = 0;
  uint64_t bytes_total = 0;  // bytes carried (counted when the transfer is scheduled)
  double bytes_flow = 0;     // bytes carried by the time of the last Fabric::account()
};

// The link ids of one path, in order (at most kMax).
class Path {
 public:
  static constexpr int kMax = 6;
  void push(int id) { ids_[n_++] = id; }
  std::size_t size() const { return n_; }
  int operator[](std::size_t i) const { return ids_[i]; }
  const int* begin() const { return ids_.data(); }
  const int* end() const { return ids_.data() + n_; }

 private:
  std::array<int, kMax> ids_{};
  std::size_t n_ = 0;
};

class Fabric {
 public:
  explicit Fabric(const NodeSpec& spec);

  const std::vector<Link>& links() const { return links_; }
  Link& link(int id) { return links_[id]; }
  // Link ids from device `src` to device `dst` (src != dst).
  Path path(int src, int dst) const;
  int hosts() const { return hosts_; }
  int devices_per_host() const { return per_host_; }
  int host_of(int device) const { return device / per_host_; }
  // npu-smi topo's word for the pair: "HCCS", "PIX" (same PCIe switch), "SYS" (across the host
  // or, in a cluster, between hosts).
  std::string relation(int a, int b) const;
  // The first down link on the path, or -1. (Links go down and up through Node's faults.)
  int down_link_on(int src, int dst) const;

  // Reserves the path for a transfer; returns its end time. Adds `bytes` to each link's count.
  Nanos reserve(int src, int dst, uint64_t bytes, Nanos earliest);
  // Brings every link's bytes_flow up to `now` (non-decreasing across calls) and forgets the
  // transfers that have finished by then.
  void account(Nanos now);
  // Time of an uncontended transfer (the alpha-beta model alone).
  Nanos transfer_time(int src, int dst, uint64_t bytes) const;
  double efficiency() const { return efficiency_; }  // of the links within a host
  // hccs_switch: devices reach each other through one port each (collectives then run as rings,
  // as NCCL's do over NVSwitch: a mesh's n-1 concurrent sends would share the port).
  bool switched() const { return switched_; }
  std::string describe(int link_id) const;  // "HCCS 3->5", "PCIE 2->host"
  // Device `device`'s PCIe links to and from its host: {up, down}, -1 where it has none (a fabric
  // without PCIe paths between devices). Collectives routed through the host use them.
  std::pair<int, int> pcie_links_of(int device) const { return pcie_of_[static_cast<std::size_t>(device)]; }

 private:
  // A transfer's hold on one link. A link's holds never overlap and come in time order: each
  // starts no earlier than the link is free.
  struct Hold {
    Nanos start = 0;
    Nanos end = 0;
    uint64_t bytes = 0;
  };
  struct Carried {
    std::deque<Hold> pending;  // not finished at the last account()
    double settled = 0;        // bytes of the finished holds
  };

  int add_link(LinkKind kind, int src, int dst, double bps, Nanos latency);
  void add_host(const NodeSpec& spec, int host);
  void add_scale_out(const NodeSpec& spec);
  bool same_group(int a, int b) const;

  int devices_;
  int hosts_;
  int per_host_;
  double efficiency_;
  bool switched_ = false;
  std::vector<int> group_of_;  // by device; groups are numbered across hosts
  std::vector<std::pair<int, int>> pcie_of_;  // by device: pcie_links_of
  std::vector<Link> links_;
  std::vector<Carried> carried_;  // by link id
  std::vector<std::vector<int>> local_paths_;  // by host, source, destination within the host
  // Scale-out (hosts > 1): each device's RoCE port, each host's leaf, each leaf's spine lanes.
  std::vector<int> roce_up_, roce_down_, leaf_of_host_;
  std::vector<std::vector<int>> lanes_up_, lanes_down_;  // by leaf
};

}  // namespace npukit::emu
