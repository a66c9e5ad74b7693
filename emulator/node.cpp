#include "emulator/node.hpp"

#include <algorithm>

#include "emulator/runtime.hpp"

namespace npukit::emu {

Result<std::unique_ptr<Node>> Node::create(const NodeOptions& options) {
  auto spec = load_node_spec(options.spec);
  if (!spec.ok()) return spec.status();
  if (options.speed <= 0) return InvalidArgument("speed must be > 0, got " + std::to_string(options.speed));
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
  engine_ = std::make_unique<Engine>(scheduler_, devices_, options_.jitter);
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
