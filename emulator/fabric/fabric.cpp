#include "emulator/fabric/fabric.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace npukit::emu {

const char* link_kind_name(LinkKind k) {
  switch (k) {
    case LinkKind::kHccs: return "HCCS";
    case LinkKind::kPcie: return "PCIE";
    case LinkKind::kInterGroup: return "SYS";
    case LinkKind::kRoce: return "ROCE";
    case LinkKind::kSpine: return "SPINE";
  }
  return "?";
}

const char* link_bus_kind(LinkKind k) {
  switch (k) {
    case LinkKind::kHccs: return "hccs";
    case LinkKind::kPcie: return "pcie";
    case LinkKind::kInterGroup: return "sys";
    case LinkKind::kRoce: return "roce";
    case LinkKind::kSpine: return "spine";
  }
  return "pcie";
}

int Fabric::add_link(LinkKind kind, int src, int dst, double bps, Nanos latency) {
  Link l;
  l.id = static_cast<int>(links_.size());
  l.kind = kind;
  l.src = src;
  l.dst = dst;
  l.host = src >= 0 ? host_of(src) : dst >= 0 ? host_of(dst) : 0;
  l.bandwidth_bps = bps;
  l.efficiency = efficiency_;
  l.latency_ns = latency;
  links_.push_back(l);
  carried_.emplace_back();
  if (kind == LinkKind::kPcie && src >= 0 && dst < 0) pcie_of_[static_cast<std::size_t>(src)].first = l.id;
  if (kind == LinkKind::kPcie && src < 0 && dst >= 0) pcie_of_[static_cast<std::size_t>(dst)].second = l.id;
  return l.id;
}

Fabric::Fabric(const NodeSpec& spec)
    : devices_(spec.device_count()),
      hosts_(spec.hosts),
      per_host_(spec.devices_per_host()),
      efficiency_(spec.link_efficiency),
      group_of_(devices_, -1),
      pcie_of_(static_cast<std::size_t>(devices_), {-1, -1}),
      local_paths_(static_cast<std::size_t>(hosts_) * per_host_ * per_host_) {
  switched_ = spec.topology == "hccs_switch";
  for (int h = 0; h < hosts_; ++h) add_host(spec, h);
  if (hosts_ > 1) add_scale_out(spec);
}

// One host's links and paths, as the node spec lays them out (device ids offset by the host's).
void Fabric::add_host(const NodeSpec& spec, int host) {
  const int base = host * per_host_;
  const int chips = spec.device_spec.chips_per_card;
  const int groups = static_cast<int>(spec.hccs_groups.size());
  for (int g = 0; g < groups; ++g) {
    for (int card : spec.hccs_groups[static_cast<std::size_t>(g)]) {
      for (int c = 0; c < chips; ++c) group_of_[base + card * chips + c] = host * groups + g;
    }
  }
  const PcieSpec& pcie = spec.device_spec.pcie;
  std::vector<int> up(per_host_), down(per_host_);
  for (int d = 0; d < per_host_; ++d) {
    up[d] = add_link(LinkKind::kPcie, base + d, -1, pcie.bandwidth_bps, pcie.latency_ns);
    down[d] = add_link(LinkKind::kPcie, -1, base + d, pcie.bandwidth_bps, pcie.latency_ns);
  }
  int across_fwd = -1, across_back = -1;
  if (spec.inter_group_bps > 0) {
    across_fwd = add_link(LinkKind::kInterGroup, -1, -1, spec.inter_group_bps, spec.inter_group_latency_ns);
    across_back = add_link(LinkKind::kInterGroup, -1, -1, spec.inter_group_bps, spec.inter_group_latency_ns);
    links_[across_fwd].host = links_[across_back].host = host;
  }
  // hccs_switch: one port per device into the group's switch (each direction a link); a pair's
  // path is the sender's port up and the receiver's port down, so every transfer a device sends
  // at once shares its port.
  std::vector<int> port_up(per_host_, -1), port_down(per_host_, -1);
  for (int d = 0; switched_ && d < per_host_; ++d) {
    if (group_of_[base + d] < 0) continue;
    port_up[d] = add_link(LinkKind::kHccs, base + d, -1, spec.hccs_link_bps, spec.hccs_latency_ns);
    port_down[d] = add_link(LinkKind::kHccs, -1, base + d, spec.hccs_link_bps, spec.hccs_latency_ns);
  }
  for (int a = 0; a < per_host_; ++a) {
    for (int b = 0; b < per_host_; ++b) {
      if (a == b) continue;
      auto& p = local_paths_[(static_cast<std::size_t>(host) * per_host_ + a) * per_host_ + b];
      int ga = group_of_[base + a], gb = group_of_[base + b];
      if (same_group(base + a, base + b) && switched_) {
        p = {port_up[a], port_down[b]};
      } else if (same_group(base + a, base + b)) {
        p = {add_link(LinkKind::kHccs, base + a, base + b, spec.hccs_link_bps, spec.hccs_latency_ns)};
      } else if (across_fwd >= 0 && ga >= 0 && gb >= 0) {
        p = {up[a], ga < gb ? across_fwd : across_back, down[b]};
      } else {
        p = {up[a], down[b]};
      }
    }
  }
}

// Every device's RoCE port, and for a leaf-spine switch each leaf's lanes to the spines.
void Fabric::add_scale_out(const NodeSpec& spec) {
  const RoceSpec& roce = spec.roce;
  const SwitchSpec& sw = spec.scale_out_switch;
  for (int d = 0; d < devices_; ++d) {
    roce_up_.push_back(add_link(LinkKind::kRoce, d, -1, roce.port_bps, roce.latency_ns));
    roce_down_.push_back(add_link(LinkKind::kRoce, -1, d, roce.port_bps, roce.latency_ns));
    links_[roce_up_.back()].efficiency = links_[roce_down_.back()].efficiency = roce.efficiency;
  }
  const int per_leaf = sw.kind == "leaf_spine" ? sw.hosts_per_leaf : hosts_;
  for (int h = 0; h < hosts_; ++h) leaf_of_host_.push_back(h / per_leaf);
  if (sw.kind != "leaf_spine") return;
  const int leaves = (hosts_ + per_leaf - 1) / per_leaf;
  const auto lanes = static_cast<int>(std::ceil(per_leaf * per_host_ / sw.oversubscription - 1e-9));
  lanes_up_.resize(leaves);
  lanes_down_.resize(leaves);
  for (int leaf = 0; leaf < leaves; ++leaf) {
    for (int k = 0; k < lanes; ++k) {
      for (auto* dir : {&lanes_up_[leaf], &lanes_down_[leaf]}) {
        int id = add_link(LinkKind::kSpine, -1, -1, roce.port_bps, roce.latency_ns);
        links_[id].host = leaf * per_leaf;
        links_[id].efficiency = roce.efficiency;
        dir->push_back(id);
      }
    }
  }
}

Path Fabric::path(int src, int dst) const {
  Path p;
  int hs = host_of(src), hd = host_of(dst);
  if (hs == hd) {
    std::size_t at = (static_cast<std::size_t>(hs) * per_host_ + src % per_host_) * per_host_ + dst % per_host_;
    for (int id : local_paths_[at]) p.push(id);
    return p;
  }
  p.push(roce_up_[src]);
  int ls = leaf_of_host_[hs], ld = leaf_of_host_[hd];
  if (ls != ld) {  // ECMP: the pair's hash pins its lanes
    uint64_t h = (static_cast<uint64_t>(src) * 0x9E3779B97F4A7C15ull) ^ (static_cast<uint64_t>(dst) * 0xC2B2AE3D27D4EB4Full);
    h ^= h >> 29;
    p.push(lanes_up_[ls][h % lanes_up_[ls].size()]);
    p.push(lanes_down_[ld][(h >> 17) % lanes_down_[ld].size()]);
  }
  p.push(roce_down_[dst]);
  return p;
}

bool Fabric::same_group(int a, int b) const { return group_of_[a] >= 0 && group_of_[a] == group_of_[b]; }

std::string Fabric::relation(int a, int b) const {
  if (a == b) return "X";
  if (same_group(a, b)) return "HCCS";
  if (host_of(a) != host_of(b)) return "SYS";
  return path(a, b).size() == 2 ? "PIX" : "SYS";
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
    bw = std::min(bw, links_[id].bandwidth_bps * links_[id].rate_share * links_[id].efficiency);
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
  if (l.kind == LinkKind::kSpine) return "SPINE lane of the leaf of host " + std::to_string(l.host);
  return std::string(link_kind_name(l.kind)) + " " + end(l.src) + "->" + end(l.dst);
}

}  // namespace npukit::emu
