#include "emulator/fabric/fabric.hpp"

#include <algorithm>
#include <limits>

namespace npukit::emu {

const char* link_kind_name(LinkKind k) {
  switch (k) {
    case LinkKind::kHccs: return "HCCS";
    case LinkKind::kPcie: return "PCIE";
    case LinkKind::kInterGroup: return "SYS";
  }
  return "?";
}

int Fabric::add_link(LinkKind kind, int src, int dst, double bps, Nanos latency) {
  Link l;
  l.id = static_cast<int>(links_.size());
  l.kind = kind;
  l.src = src;
  l.dst = dst;
  l.bandwidth_bps = bps;
  l.latency_ns = latency;
  links_.push_back(l);
  carried_.emplace_back();
  return l.id;
}

Fabric::Fabric(const NodeSpec& spec)
    : devices_(spec.device_count()),
      efficiency_(spec.link_efficiency),
      group_of_(devices_, -1),
      paths_(static_cast<std::size_t>(devices_) * devices_) {
  int chips = spec.device_spec.chips_per_card;
  for (std::size_t g = 0; g < spec.hccs_groups.size(); ++g) {
    for (int card : spec.hccs_groups[g]) {
      for (int c = 0; c < chips; ++c) group_of_[card * chips + c] = static_cast<int>(g);
    }
  }
  const PcieSpec& pcie = spec.device_spec.pcie;
  std::vector<int> up(devices_), down(devices_);
  for (int d = 0; d < devices_; ++d) {
    up[d] = add_link(LinkKind::kPcie, d, -1, pcie.bandwidth_bps, pcie.latency_ns);
    down[d] = add_link(LinkKind::kPcie, -1, d, pcie.bandwidth_bps, pcie.latency_ns);
  }
  int across_fwd = -1, across_back = -1;
  if (spec.inter_group_bps > 0) {
    across_fwd = add_link(LinkKind::kInterGroup, -1, -1, spec.inter_group_bps, spec.inter_group_latency_ns);
    across_back = add_link(LinkKind::kInterGroup, -1, -1, spec.inter_group_bps, spec.inter_group_latency_ns);
  }
  // hccs_switch: one port per device into the group's switch (each direction a link); a pair's
  // path is the sender's port up and the receiver's port down, so every transfer a device sends
  // at once shares its port.
  bool switched = switched_ = spec.topology == "hccs_switch";
  std::vector<int> port_up(devices_, -1), port_down(devices_, -1);
  for (int d = 0; switched && d < devices_; ++d) {
    if (group_of_[d] < 0) continue;
    port_up[d] = add_link(LinkKind::kHccs, d, -1, spec.hccs_link_bps, spec.hccs_latency_ns);
    port_down[d] = add_link(LinkKind::kHccs, -1, d, spec.hccs_link_bps, spec.hccs_latency_ns);
  }
  for (int a = 0; a < devices_; ++a) {
    for (int b = 0; b < devices_; ++b) {
      if (a == b) continue;
      auto& p = paths_[a * devices_ + b];
      if (same_group(a, b) && switched) {
        p = {port_up[a], port_down[b]};
      } else if (same_group(a, b)) {
        p = {add_link(LinkKind::kHccs, a, b, spec.hccs_link_bps, spec.hccs_latency_ns)};
      } else if (across_fwd >= 0 && group_of_[a] >= 0 && group_of_[b] >= 0) {
        p = {up[a], group_of_[a] < group_of_[b] ? across_fwd : across_back, down[b]};
      } else {
        p = {up[a], down[b]};
      }
    }
  }
}

bool Fabric::same_group(int a, int b) const { return group_of_[a] >= 0 && group_of_[a] == group_of_[b]; }

std::string Fabric::relation(int a, int b) const {
  if (a == b) return "X";
  if (same_group(a, b)) return "HCCS";
  return path(a, b).size() == 2 ? "PIX" : "SYS";
}

const char* link_bus_kind(LinkKind k) {
  switch (k) {
    case LinkKind::kHccs: return "hccs";
    case LinkKind::kPcie: return "pcie";
    case LinkKind::kInterGroup: return "sys";
  }
  return "pcie";
}

int Fabric::down_link_on(int src, int dst) const {
  for (int id : path(src, dst)) {
    if (!links_[id].up) return id;
  }
  return -1;
}

Nanos Fabric::transfer_time(int src, int dst, uint64_t bytes) const {
  Nanos latency = 0;
  double bw = std::numeric_limits<double>::max();
  for (int id : path(src, dst)) {
    latency += links_[id].latency_ns;
    bw = std::min(bw, links_[id].bandwidth_bps * links_[id].rate_share * efficiency_);
  }
  return latency + static_cast<Nanos>(static_cast<double>(bytes) / bw * 1e9);
}

Nanos Fabric::reserve(int src, int dst, uint64_t bytes, Nanos earliest) {
  Nanos start = earliest;
  for (int id : path(src, dst)) start = std::max(start, links_[id].free_at);
  Nanos end = start + transfer_time(src, dst, bytes);
  for (int id : path(src, dst)) {
    links_[id].free_at = end;
    links_[id].bytes_total += bytes;
    if (bytes > 0) carried_[id].pending.push_back({start, end, bytes});
  }
  return end;
}

void Fabric::account(Nanos now) {
  for (std::size_t id = 0; id < links_.size(); ++id) {
    Carried& c = carried_[id];
    if (c.pending.empty()) continue;
    double partial = 0;
    while (!c.pending.empty()) {
      const Hold& h = c.pending.front();
      if (h.end <= now) {
        c.settled += static_cast<double>(h.bytes);
        c.pending.pop_front();
        continue;
      }
      if (h.start < now) {
        partial = static_cast<double>(h.bytes) * static_cast<double>(now - h.start) / static_cast<double>(h.end - h.start);
      }
      break;
    }
    links_[id].bytes_flow = c.settled + partial;
  }
}

std::string Fabric::describe(int link_id) const {
  const Link& l = links_[link_id];
  auto end = [](int d) { return d < 0 ? std::string("host") : std::to_string(d); };
  if (l.kind == LinkKind::kInterGroup) return "SYS link between the two meshes";
  return std::string(link_kind_name(l.kind)) + " " + end(l.src) + "->" + end(l.dst);
}

}  // namespace npukit::emu
