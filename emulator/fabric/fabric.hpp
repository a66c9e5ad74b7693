// The node's interconnect: HCCS links between NPUs and PCIe paths, with per-link counters and
// an alpha-beta transfer model with contention.
//
// Links are directed (one per direction). Paths by topology:
//   hccs_full_mesh        i -> j: the HCCS link i->j
//   hccs_switch           i -> j: i's port up to the switch, then j's port down (an NVSwitch-like
//                         scale-up switch: all of a device's concurrent transfers share its port)
//   hccs_two_meshes_pcie  same group: HCCS i->j; across: PCIe up(i), inter-group, PCIe down(j)
//   pcie                  PCIe up(i), PCIe down(j) (through the host bridge)
// A transfer of S bytes over a path starting no earlier than t0 begins when every link of the
// path is free, lasts  sum(latency) + S / min(bandwidth x efficiency)  and holds every link of
// the path for that long (cut-through; contending transfers queue in request order).
//
// Two byte counts per link: `bytes_total` jumps when a transfer is scheduled (the bus's link
// counters); `bytes_flow` spreads each transfer's bytes evenly over the time it holds the link,
// as of the last account() (the utilization figures: physics.hpp).
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "emulator/device/spec.hpp"

namespace npukit::emu {

enum class LinkKind : uint8_t { kHccs, kPcie, kInterGroup };
const char* link_kind_name(LinkKind k);  // "HCCS", "PCIE", "SYS"
const char* link_bus_kind(LinkKind k);   // "hccs", "pcie", "sys": the bus's name for the kind

struct Link {
  int id = 0;
  LinkKind kind = LinkKind::kHccs;
  int src = -1;  // device id, or -1 for the host side / switch
  int dst = -1;
  double bandwidth_bps = 0;  // line rate per direction
  Nanos latency_ns = 0;
  bool up = true;
  double rate_share = 1;     // of the line rate it runs at (< 1: retrained after a degradation)
  std::vector<Nanos> down_events;  // virtual times it went down since the last clear
  Nanos free_at = 0;
  uint64_t bytes_total = 0;  // bytes carried (counted when the transfer is scheduled)
  double bytes_flow = 0;     // bytes carried by the time of the last Fabric::account()
};

class Fabric {
 public:
  explicit Fabric(const NodeSpec& spec);

  const std::vector<Link>& links() const { return links_; }
  Link& link(int id) { return links_[id]; }
  // Link ids from device `src` to device `dst` (src != dst).
  const std::vector<int>& path(int src, int dst) const { return paths_[src * devices_ + dst]; }
  // npu-smi topo's word for the pair: "HCCS", "PIX" (same PCIe switch), "SYS" (across the host).
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
  double efficiency() const { return efficiency_; }
  // hccs_switch: devices reach each other through one port each (collectives then run as rings,
  // as NCCL's do over NVSwitch: a mesh's n-1 concurrent sends would share the port).
  bool switched() const { return switched_; }
  std::string describe(int link_id) const;  // "HCCS 3->5", "PCIE 2->host"

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
  bool same_group(int a, int b) const;

  int devices_;
  double efficiency_;
  bool switched_ = false;
  std::vector<int> group_of_;
  std::vector<Link> links_;
  std::vector<Carried> carried_;  // by link id
  std::vector<std::vector<int>> paths_;
};

}  // namespace npukit::emu
