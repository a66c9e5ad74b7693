#include "emulator/runtime/node.hpp"

#include <algorithm>

#include "emulator/runtime/runtime.hpp"

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
    devices_.emplace_back(i, spec_.device_spec, spec_.bus_ids[i], options_.functional, options_.seed);
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

// HCCS topologies take a device's HCCS links down; a PCIe-only node its PCIe peer links. A link
// stays down while either end's fault is active (clearing one device leaves its links to another
// link-down device down). A link-degraded fault at either end runs the link at a quarter of its rate.
void Node::refresh_links(int device) {
  bool has_hccs = false;
  for (const Link& l : fabric_->links()) {
    has_hccs = has_hccs || (l.kind == LinkKind::kHccs && (l.src == device || l.dst == device));
  }
  auto faulted = [this](int d) { return d >= 0 && devices_[d].health().links_down(); };
  auto degraded = [this](int d) { return d >= 0 && devices_[d].health().links_degraded(); };
  for (const Link& l : fabric_->links()) {
    bool touches = l.src == device || l.dst == device;
    if (!touches || (l.kind == LinkKind::kHccs) != has_hccs) continue;
    fabric_->link(l.id).rate_share = degraded(l.src) || degraded(l.dst) ? DeviceHealth::kDegradedLinkShare : 1.0;
    bool up = !faulted(l.src) && !faulted(l.dst);
    if (up == l.up) continue;
    fabric_->link(l.id).up = up;
    if (!events_.empty()) events_.link_state({l.id, up, device, now()});
  }
}

Status Node::inject_fault(int device, FaultKind kind, const std::string& source) {
  NPUKIT_RETURN_IF_ERROR(check_device(device));
  if (!devices_[device].health().active(kind)) faults_.push_back({device, kind, source, now()});
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
  return Status::Ok();
}

Status Node::clear_faults(int device) {
  NPUKIT_RETURN_IF_ERROR(check_device(device));
  devices_[device].health().clear();
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

Status Node::schedule_faults(const std::vector<FaultEvent>& timeline) {
  for (const FaultEvent& f : timeline) {
    NPUKIT_RETURN_IF_ERROR(check_device(f.device));
    if (f.at < 0) return InvalidArgument("fault time must be >= 0");
    double tdp = devices_[f.device].spec().power.tdp_w;
    if (f.action == FaultEvent::Action::kPowerLimit && !(f.watts > 0 && f.watts <= tdp)) {
      return InvalidArgument("power limit " + std::to_string(static_cast<int>(f.watts)) + " W is out of range (0, " +
                             std::to_string(static_cast<int>(tdp)) + "] for device " + std::to_string(f.device));
    }
  }
  for (const FaultEvent& f : timeline) {
    scheduler_.post_callback(f.at, [this, f] {
      if (std::find(ended_sources_.begin(), ended_sources_.end(), f.source) != ended_sources_.end()) return;
      switch (f.action) {
        case FaultEvent::Action::kInject: (void)inject_fault(f.device, f.kind, f.source); break;
        case FaultEvent::Action::kClear: (void)clear_faults(f.device); break;
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
  std::erase_if(faults_, [this](const ActiveFault& f) { return !devices_[f.device].health().active(f.kind); });
}

std::vector<ActiveFault> Node::active_faults() const {
  std::vector<ActiveFault> out;
  for (const ActiveFault& f : faults_) {
    if (devices_[f.device].health().active(f.kind)) out.push_back(f);
  }
  std::stable_sort(out.begin(), out.end(), [](const ActiveFault& a, const ActiveFault& b) { return a.device < b.device; });
  return out;
}

void Node::end_faults_of(const std::string& source) {
  if (source == "control") return;
  ended_sources_.push_back(source);
  for (const ActiveFault& f : faults_) {
    bool persistent = f.kind == FaultKind::kHbmDoubleBit || f.kind == FaultKind::kAicoreHang || f.kind == FaultKind::kDeviceLost;
    if (f.source != source || persistent) continue;
    devices_[f.device].health().lift(f.kind);
    if (f.kind == FaultKind::kLinkDown || f.kind == FaultKind::kLinkDegraded) refresh_links(f.device);
  }
  prune_faults();
  for (auto it = power_limits_.rbegin(); it != power_limits_.rend(); ++it) {  // newest first: the oldest value wins
    if (it->source == source) physics_->set_power_limit(it->device, it->previous_w);
  }
  std::erase_if(power_limits_, [&](const PowerLimitSet& p) { return p.source == source; });
}

Status Node::set_power_limit(int device, double watts) {
  NPUKIT_RETURN_IF_ERROR(check_device(device));
  double tdp = devices_[device].spec().power.tdp_w;
  if (!(watts > 0 && watts <= tdp)) {
    return InvalidArgument("power limit " + std::to_string(static_cast<int>(watts)) +
                           " W is out of range (0, " + std::to_string(static_cast<int>(tdp)) + "] for device " +
                           std::to_string(device));
  }
  physics_->set_power_limit(device, watts);
  return Status::Ok();
}

}  // namespace npukit::emu
