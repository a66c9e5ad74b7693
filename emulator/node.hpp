// An emulated node: N devices from a node spec, one virtual clock, one task engine, and the
// per-process contexts (the ACL-like runtime) that drive them.
//
// Usage:
//   auto node = Node::create({.spec = "8x910B2", .seed = 1});
//   Context& ctx = *(*node)->create_context(/*device=*/0, /*pid=*/4242, "python3");
//   ... ctx.malloc / launch / synchronize ...
//
// The node publishes (observers now, the telemetry bus later); it never prints. One thread drives
// a node; nothing here is thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "emulator/allocator.hpp"
#include "emulator/device.hpp"
#include "emulator/engine.hpp"
#include "emulator/scheduler.hpp"
#include "emulator/spec.hpp"

namespace npukit::emu {

class Context;

struct NodeOptions {
  std::string spec = "8x910B2";  // node catalog name or path
  uint64_t seed = 0;
  bool functional = false;        // back device memory and compute real results
  double jitter = 0.005;          // relative spread of task durations
  TimeMode mode = TimeMode::kFast;
  double speed = 1.0;             // paced mode: virtual seconds per wall second
};

class Node {
 public:
  static Result<std::unique_ptr<Node>> create(const NodeOptions& options);
  ~Node();
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;

  const NodeSpec& spec() const { return spec_; }
  const NodeOptions& options() const { return options_; }
  int device_count() const { return static_cast<int>(devices_.size()); }
  Device& device(int id) { return devices_[id]; }
  const Device& device(int id) const { return devices_[id]; }
  Scheduler& scheduler() { return scheduler_; }
  Engine& engine() { return *engine_; }
  Nanos now() const { return scheduler_.now(); }

  // A process context on `device` (like aclrtSetDevice + aclrtCreateContext). InvalidArgument
  // "invalid device id N (this node has devices 0-7)" for a bad id.
  Result<Context*> create_context(int device, uint32_t pid, std::string process_name,
                                  AllocatorPolicy policy = AllocatorPolicy::kCaching);
  // Frees everything the context holds and forgets it.
  void destroy_context(Context* ctx);
  const std::vector<std::unique_ptr<Context>>& contexts() const { return contexts_; }

  // Advances virtual time by `ns` of host-side blocking (the device keeps running meanwhile).
  void host_wait(Nanos ns) { scheduler_.run_until(scheduler_.now() + ns); }
  // Runs until no event is pending.
  void run_until_idle() { scheduler_.run_while([] { return true; }); }

  Status check_device(int device) const;

 private:
  Node(NodeSpec spec, NodeOptions options);

  NodeSpec spec_;
  NodeOptions options_;
  Scheduler scheduler_;
  std::vector<Device> devices_;
  std::unique_ptr<Engine> engine_;
  std::vector<std::unique_ptr<Context>> contexts_;
};

}  // namespace npukit::emu
