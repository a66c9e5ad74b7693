#include "emulator/runtime/node.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "emulator/runtime/runtime.hpp"
#include "telemetry/incidents.hpp"

namespace npukit::emu {

Result<std::unique_ptr<Node>> Node::create(const NodeOptions& options) {
  auto spec = load_node_spec(options.spec);
  if (!spec.ok()) return spec.status();
  if (options.speed <= 0) return InvalidArgument("speed must be > 0, got " + std::to_string(options.speed));
  if (options.task_timeout_ns <= 0) return InvalidArgument("task timeout must be > 0");
  if (options.jitter < 0 || options.jitter > 0.5) {
    return InvalidArgument("jitter must be in [0, 0.5], got " + std::to_string(options.jitter));
  }
  return std::unique_ptr<Node>(new Node(std::move(*spec), options));
}

Node::Node(NodeSpec spec, NodeOptions options) : spec_(std::move(spec)), options_(options) {
  devices_.reserve(spec_.device_count());
  for (int i = 0; i < spec_.device_count(); ++i) {
    devices_.emplace_back(i, spec_.device_spec, spec_.bus_ids[static_cast<std::size_t>(i % spec_.devices_per_host())],
                          options_.functional, options_.seed);
  }
  engine_ = std::make_unique<Engine>(scheduler_, devices_, options_.jitter, options_.task_timeout_ns);
  fabric_ = std::make_unique<Fabric>(spec_);
  collectives_ = std::make_unique<CollectiveHub>(*engine_, scheduler_, devices_, *fabric_);
  physics_ = std::make_unique<Physics>(scheduler_, devices_, *fabric_, events_);
  if (options_.physics) physics_->start();
  if (options_.mode == TimeMode::kPaced) scheduler_.set_paced(options_.speed);
}

Node::~Node() = default;

Status Node::check_device(int device) const {
  if (device >= 0 && device < device_count()) return Status::Ok();
  return InvalidArgument("invalid device id " + std::to_string(device) + " (this node has devices 0-" +
                         std::to_string(device_count() - 1) + ")");
}

Result<Context*> Node::create_context(int device, uint32_t pid, std::string process_name,
                                      AllocatorPolicy policy) {
  NPUKIT_RETURN_IF_ERROR(check_device(device));
  contexts_.push_back(std::unique_ptr<Context>(
      new Context(*this, device, pid, std::move(process_name), policy)));
  return contexts_.back().get();
}

void Node::destroy_context(Context* ctx) {
  auto it = std::find_if(contexts_.begin(), contexts_.end(),
                         [ctx](const auto& c) { return c.get() == ctx; });
  if (it == contexts_.end()) return;
  (*it)->release_all();
  for (StreamId s : (*it)->streams()) engine_->release_stream(s);
  for (EventId e : (*it)->events()) engine_->release_event(e);
  contexts_.erase(it);
}

}  // namespace npukit::emu

namespace npukit::emu {

Result<CommId> Node::create_communicator(std::string name, const std::vector<Context*>& ranks,
                                         CollectiveAlgo algo) {
  std::vector<int> devices;
  for (const Context* c : ranks) devices.push_back(c->device());
  return collectives_->create_communicator(std::move(name), std::move(devices), algo);
}

namespace {

// A power limit must be in [what the chip draws flat out at its lowest clock, TDP]: below it no
// clock holds the limit under load (a 1 W limit was taken and the chip drew 90-128 W under it; a
// 100 W one, and it drew 125 W at 800 MHz, while health said PASS). The bound is whole watts, up.
// The message shows any double as given (1e300, nan: a cast to int of those was undefined
// behaviour, found by tests/fuzz/program).
Status check_power_limit(double watts, const DeviceSpec& spec, int device) {
  const double lowest = std::ceil(power_at_lowest_clock_w(spec));
  if (watts >= lowest && watts > 0 && watts <= spec.power.tdp_w) return Status::Ok();
  char text[240];
  std::snprintf(text, sizeof text,
                "power limit %g W is out of range [%g, %g] for device %d (at its lowest clock, %d MHz, the chip draws up to %g W)",
                watts, lowest, spec.power.tdp_w, device, spec.aicore_clock.min_mhz, lowest);
  return InvalidArgument(text);
}

constexpr Nanos kFlapPeriodNs = 1'000'000'000;  // link-flapping: one down event a second
constexpr Nanos kFlapDownNs = 100'000'000;      // lasting 100 ms
constexpr Nanos kFlapWindowNs = static_cast<Nanos>(telemetry::kFlapWindowS * 1e9);


// The link's ends as a fault names them: the lower device first, the host (-1) last.
std::pair<int, int> ends_of(int a, int b) {
  if (a < 0 || (b >= 0 && b < a)) std::swap(a, b);
  return {a, b};
}

// A link's ends as faults name them: a RoCE port's far end is telemetry::kRocePort and an HCCS
// port's into the node's switch telemetry::kSwitchPort, not the host.
std::pair<int, int> ends_of(const Link& l) {
  if (l.kind == LinkKind::kRoce) return {l.src >= 0 ? l.src : l.dst, telemetry::kRocePort};
  if (l.kind == LinkKind::kHccs && (l.src < 0 || l.dst < 0)) return {l.src >= 0 ? l.src : l.dst, telemetry::kSwitchPort};
  return ends_of(l.src, l.dst);
}

}  // namespace

// Device faults act on a device's HCCS links (its PCIe links on a PCIe-only node); link faults
// on the links between their two ends. A link is down while a link-down fault at either end or
// on it is in force, or a flapping fault on it is in its down phase; it runs at a quarter of its
// rate under a link-degraded fault at either end or on it.
void Node::refresh_links(int cause) {
  std::vector<bool> has_hccs(devices_.size(), false);
  for (const Link& l : fabric_->links()) {
    for (int d : {l.src, l.dst}) {
      if (d >= 0 && l.kind == LinkKind::kHccs) has_hccs[static_cast<std::size_t>(d)] = true;
    }
  }
  auto device_fault = [&](int d, const Link& l, bool (DeviceHealth::*has)() const) {
    return d >= 0 && (devices_[d].health().*has)() && (l.kind == LinkKind::kHccs) == has_hccs[static_cast<std::size_t>(d)];
  };
  std::vector<telemetry::LinkState> states;
  std::vector<double> pcie_share(devices_.size(), 1.0);  // host copies run at their PCIe link's rate
  for (const Link& l : fabric_->links()) {
    if (l.src < 0 && l.dst < 0) continue;  // the 8x910's shared inter-mesh link: not a device's
    bool down = device_fault(l.src, l, &DeviceHealth::links_down) || device_fault(l.dst, l, &DeviceHealth::links_down);
    bool degraded = device_fault(l.src, l, &DeviceHealth::links_degraded) || device_fault(l.dst, l, &DeviceHealth::links_degraded);
    for (const ActiveFault& f : faults_) {
      if (!f.link || ends_of(l) != std::pair{f.device, f.peer}) continue;
      down = down || f.kind == FaultKind::kLinkDown || (f.kind == FaultKind::kLinkFlapping && f.flap_down);
      degraded = degraded || f.kind == FaultKind::kLinkDegraded;
    }
    Link& link = fabric_->link(l.id);
    const double share = degraded ? DeviceHealth::kDegradedLinkShare : 1.0;
    const bool retrained = link.rate_share != share;  // a link changes rate only by retraining
    link.rate_share = share;
    for (int d : {l.src, l.dst}) {
      if (d >= 0 && l.kind == LinkKind::kPcie) {
        pcie_share[static_cast<std::size_t>(d)] = std::min(pcie_share[static_cast<std::size_t>(d)], link.rate_share);
      }
    }
    std::erase_if(link.down_events, [&](Nanos t) { return t + kFlapWindowNs < now(); });
    const bool flipped = link.up == down;
    if (flipped) {
      link.up = !down;
      if (down) link.down_events.push_back(now());
    }
    if (flipped || (retrained && link.up)) {  // a down link's new rate is said when it comes up
      int device = cause >= 0 && (l.src == cause || l.dst == cause) ? cause : l.src >= 0 ? l.src : l.dst;
      if (!events_.empty()) events_.link_state({l.id, link.up, device, now(), link.rate_share * 100});
    }
    states.push_back({l.src, l.dst, link_bus_kind(l.kind),
                      telemetry::link_condition(link.up, link.rate_share * 100, link.down_events.size())});
  }
  for (std::size_t d = 0; d < devices_.size(); ++d) devices_[d].set_pcie_rate_share(pcie_share[d]);
  std::vector<std::vector<Alarm>> alarms(devices_.size());
  for (const telemetry::LinkIncident& inc : telemetry::link_incidents(states, device_count())) {
    if (inc.device >= 0) alarms[static_cast<std::size_t>(inc.device)].push_back(alarm_of(*inc.kind));
    for (int peer : inc.peers) {
      if (peer != inc.device) alarms[static_cast<std::size_t>(peer)].push_back(alarm_of(*inc.kind, /*as_peer=*/true));
    }
  }
  for (std::size_t d = 0; d < devices_.size(); ++d) devices_[d].health().set_link_alarms(std::move(alarms[d]));
}

Status Node::inject_fault(int device, FaultKind kind, const std::string& source) {
  NPUKIT_RETURN_IF_ERROR(check_device(device));
  if (kind == FaultKind::kLinkFlapping) {
    return InvalidArgument("link-flapping acts on one link: give the link (npu-emud inject --link A-B)");
  }
  if (acts_on_host(kind)) {  // the whole host the device sits in
    const int per_host = spec().devices_per_host(), first = spec().host_of(device) * per_host;
    for (int d = first; d < first + per_host; ++d) apply_fault(d, kind, source);
    return Status::Ok();
  }
  apply_fault(device, kind, source);
  return Status::Ok();
}

void Node::apply_fault(int device, FaultKind kind, const std::string& source) {
  if (!devices_[device].health().active(kind)) {  // a fault already in force takes effect once
    faults_.push_back({device, -1, false, kind, source, now(), next_fault_id_++});
    if (!events_.empty()) events_.fault({device, -2, kind, now()});
  }
  Device& d = devices_[device];
  if (kind == FaultKind::kHbmDoubleBit) {
    // Where the bad cell is: deterministic per node seed, device and how many it has had.
    SplitMix64 place(options_.seed ^ (static_cast<uint64_t>(device) << 40) ^ d.health().ecc().double_bit_aggregate);
    uint64_t pages = d.memory().app_capacity_bytes() / kHbmPageBytes;
    uint64_t r = place.next();
    d.health().add_bad_page({(r % pages) * kHbmPageBytes, static_cast<int>((r >> 32) % 64)});
  }
  d.health().inject(kind);
  if (kind == FaultKind::kHbmDoubleBit && !events_.empty()) {
    const EccCounters& ecc = d.health().ecc();
    events_.ecc({device, true, 1, 1, ecc.double_bit_aggregate, now()});
  }
  if (kind == FaultKind::kLinkDown || kind == FaultKind::kLinkDegraded) refresh_links(device);
}

bool Node::host_down(int host) const {
  const int per_host = spec().devices_per_host(), first = host * per_host;
  return first >= 0 && first < device_count() && devices_[first].health().active(FaultKind::kHostDown);
}

Status Node::check_link(int a, int b) const {
  NPUKIT_RETURN_IF_ERROR(check_device(a));
  if (b >= 0) NPUKIT_RETURN_IF_ERROR(check_device(b));
  if (a == b) return InvalidArgument("a link joins two different devices, got " + std::to_string(a) + "-" + std::to_string(b));
  for (const Link& l : fabric_->links()) {
    if (ends_of(l) == ends_of(a, b)) return Status::Ok();
  }
  std::string other = b == telemetry::kRocePort ? "its RoCE port"
                      : b == telemetry::kSwitchPort ? "its port into the node's switch"
                      : b < 0 ? "the host" : "device " + std::to_string(b);
  return InvalidArgument("no direct link between device " + std::to_string(a) + " and " + other +
                         " on this node (npu-smi info -t topo shows the links)");
}

Status Node::inject_link_fault(int a, int b, FaultKind kind, const std::string& source) {
  NPUKIT_RETURN_IF_ERROR(check_link(a, b));
  if (!acts_on_link(kind)) {
    return InvalidArgument(std::string("a link takes link-down, link-degraded or link-flapping, not ") + fault_name(kind));
  }
  auto [x, y] = ends_of(a, b);
  for (const ActiveFault& f : faults_) {
    if (f.link && f.device == x && f.peer == y && f.kind == kind) return Status::Ok();  // already in force
  }
  uint64_t id = next_fault_id_++;
  faults_.push_back({x, y, true, kind, source, now(), id});
  if (!events_.empty()) events_.fault({a, b, kind, now()});
  if (kind == FaultKind::kLinkFlapping) {
    flap(id, true);
  } else {
    refresh_links();
  }
  return Status::Ok();
}

// One phase of a flapping link: down for kFlapDownNs, then up until the next second.
void Node::flap(uint64_t fault_id, bool down) {
  auto it = std::find_if(faults_.begin(), faults_.end(), [&](const ActiveFault& f) { return f.id == fault_id; });
  if (it == faults_.end()) return;  // cleared
  it->flap_down = down;
  refresh_links();
  Nanos next = now() + (down ? kFlapDownNs : kFlapPeriodNs - kFlapDownNs);
  scheduler_.post_callback(next, [this, fault_id, down] { flap(fault_id, !down); }, /*background=*/true);
}

Status Node::clear_link_faults(int a, int b) {
  NPUKIT_RETURN_IF_ERROR(check_link(a, b));
  auto ends = ends_of(a, b);
  std::erase_if(faults_, [&](const ActiveFault& f) { return f.link && std::pair{f.device, f.peer} == ends; });
  for (const Link& l : fabric_->links()) {
    if (ends_of(l) == ends) fabric_->link(l.id).down_events.clear();
  }
  refresh_links();
  return Status::Ok();
}

Status Node::clear_faults(int device) {
  NPUKIT_RETURN_IF_ERROR(check_device(device));
  // A host fault is the whole host's: clearing it on one of its devices clears it on all.
  const int per_host = spec().devices_per_host(), first = spec().host_of(device) * per_host;
  for (FaultKind k : {FaultKind::kHostSlow, FaultKind::kHostDown}) {
    if (!devices_[device].health().active(k)) continue;
    for (int d = first; d < first + per_host; ++d) devices_[d].health().lift(k);
  }
  devices_[device].health().clear();
  std::erase_if(faults_, [&](const ActiveFault& f) { return f.link && (f.device == device || f.peer == device); });
  for (const Link& l : fabric_->links()) {
    if (l.src == device || l.dst == device) fabric_->link(l.id).down_events.clear();
  }
  refresh_links(device);
  prune_faults();
  return Status::Ok();
}

Status Node::reset_device(int device) {
  NPUKIT_RETURN_IF_ERROR(check_device(device));
  Device& d = devices_[device];
  d.health().reset();
  refresh_links(device);
  prune_faults();
  d.set_clock_mhz(d.spec().aicore_clock.max_mhz);
  d.sensors().throttle_reasons = 0;
  return Status::Ok();
}

Status Node::check_fault(const FaultEvent& f) const {
  const bool link = f.peer != -2;  // -2: a device's fault (program.hpp)
  NPUKIT_RETURN_IF_ERROR(link ? check_link(f.device, f.peer) : check_device(f.device));
  if (link && f.action == FaultEvent::Action::kInject && !acts_on_link(f.kind)) {
    return InvalidArgument(std::string("a link takes link-down, link-degraded or link-flapping, not ") + fault_name(f.kind));
  }
  if (f.at < 0) return InvalidArgument("fault time must be >= 0");
  if (f.action == FaultEvent::Action::kPowerLimit) return check_power_limit(f.watts, devices_[f.device].spec(), f.device);
  return Status::Ok();
}

Status Node::schedule_faults(const std::vector<FaultEvent>& timeline) {
  for (std::size_t i = 0; i < timeline.size(); ++i) {
    if (Status s = check_fault(timeline[i]); !s.ok()) {  // names the entry: a job's timeline can be long
      return Status(s.code(), "faults[" + std::to_string(i) + "]: " + std::string(s.message()));
    }
  }
  for (const FaultEvent& f : timeline) {
    scheduler_.post_callback(f.at, [this, f] {
      if (std::find(ended_sources_.begin(), ended_sources_.end(), f.source) != ended_sources_.end()) return;
      switch (f.action) {
        case FaultEvent::Action::kInject:
          (void)(f.peer != -2 ? inject_link_fault(f.device, f.peer, f.kind, f.source) : inject_fault(f.device, f.kind, f.source));
          break;
        case FaultEvent::Action::kClear:
          (void)(f.peer != -2 ? clear_link_faults(f.device, f.peer) : clear_faults(f.device));
          break;
        case FaultEvent::Action::kReset: (void)reset_device(f.device); break;
        case FaultEvent::Action::kPowerLimit:
          power_limits_.push_back({f.device, devices_[f.device].sensors().power_limit_w, f.source});
          (void)set_power_limit(f.device, f.watts);
          break;
      }
    }, /*background=*/true);
  }
  return Status::Ok();
}

void Node::prune_faults() {
  std::erase_if(faults_, [this](const ActiveFault& f) { return !f.link && !devices_[f.device].health().active(f.kind); });
}

std::vector<ActiveFault> Node::active_faults() const {
  std::vector<ActiveFault> out;
  for (const ActiveFault& f : faults_) {
    if (f.link || devices_[f.device].health().active(f.kind)) out.push_back(f);
  }
  std::stable_sort(out.begin(), out.end(), [](const ActiveFault& a, const ActiveFault& b) { return a.device < b.device; });
  return out;
}

void Node::end_faults_of(const std::string& source) {
  if (source == "control") return;
  ended_sources_.push_back(source);
  for (const ActiveFault& f : faults_) {
    bool persistent = f.kind == FaultKind::kHbmDoubleBit || f.kind == FaultKind::kAicoreHang || f.kind == FaultKind::kDeviceLost;
    if (f.source != source || persistent || f.link) continue;
    devices_[f.device].health().lift(f.kind);
  }
  std::erase_if(faults_, [&](const ActiveFault& f) { return f.link && f.source == source; });
  prune_faults();
  refresh_links();
  for (auto it = power_limits_.rbegin(); it != power_limits_.rend(); ++it) {  // newest first: the oldest value wins
    if (it->source == source) physics_->set_power_limit(it->device, it->previous_w);
  }
  std::erase_if(power_limits_, [&](const PowerLimitSet& p) { return p.source == source; });
}

Status Node::set_power_limit(int device, double watts, int shown_as) {
  NPUKIT_RETURN_IF_ERROR(check_device(device));
  NPUKIT_RETURN_IF_ERROR(check_power_limit(watts, devices_[device].spec(), shown_as < 0 ? device : shown_as));
  physics_->set_power_limit(device, watts);
  return Status::Ok();
}

}  // namespace npukit::emu
