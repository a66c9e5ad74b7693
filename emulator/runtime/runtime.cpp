#include "emulator/runtime/runtime.hpp"

#include <algorithm>
#include <cstring>

#include "emulator/runtime/node.hpp"
#include "emulator/kernels/op_descriptor.hpp"

namespace npukit::emu {

Context::Context(Node& node, int device, uint32_t pid, std::string name, AllocatorPolicy policy)
    : node_(node),
      device_(device),
      pid_(pid),
      name_(std::move(name)),
      allocator_(make_allocator(policy, node.device(device).memory(),
                                node.device(device).spec().runtime, pid, device)) {}

StreamId Context::create_stream() {
  StreamId s = node_.engine().create_stream(device_, pid_);
  streams_.push_back(s);
  return s;
}

EventId Context::create_event() {
  EventId e = node_.engine().create_event(device_);
  events_.push_back(e);
  return e;
}

Status Context::not_mine(const char* what, uint32_t id) const {
  return InvalidArgument(std::string("invalid ") + what + " " + std::to_string(id) + " for process " +
                         std::to_string(pid_) + " on device " + std::to_string(device_));
}

Status Context::check_range(DevPtr ptr, uint64_t bytes, const char* what) const {
  DeviceMemory& mem = node_.device(device_).memory();
  if (!mem.backed() || bytes == 0) return Status::Ok();
  if (mem.host_view(ptr, bytes) != nullptr) return Status::Ok();
  return InvalidArgument(std::string(what) + ": " + std::to_string(bytes) + " bytes at " +
                         hex_address(ptr) + " are not inside one allocation on device " +
                         std::to_string(device_));
}

Result<AllocResult> Context::allocate(uint64_t bytes, std::string_view tag) {
  const NodeEvents& events = node_.events();
  const AllocatorStats before = events.empty() ? AllocatorStats{} : allocator_->stats();
  auto r = allocator_->allocate(bytes);
  if (r.ok() && !events.empty()) {
    const AllocatorStats after = allocator_->stats();
    events.memory({true, device_, pid_, bytes, r->ptr, after.allocated_bytes, before.reserved_bytes, after.reserved_bytes,
                   node_.now(), tag, r->host_ns, r->flush});
  }
  return r;
}

Result<AllocResult> Context::deallocate(DevPtr ptr, std::string_view tag) {
  const NodeEvents& events = node_.events();
  const AllocatorStats before = events.empty() ? AllocatorStats{} : allocator_->stats();
  auto r = allocator_->release(ptr);
  if (r.ok() && !events.empty()) {
    const AllocatorStats after = allocator_->stats();
    events.memory({false, device_, pid_, before.allocated_bytes - after.allocated_bytes, ptr, after.allocated_bytes,
                   before.reserved_bytes, after.reserved_bytes, node_.now(), tag, r->host_ns, {}});
  }
  return r;
}

Result<DevPtr> Context::malloc(uint64_t bytes) {
  auto r = allocate(bytes);
  if (!r.ok()) return r.status();
  node_.host_wait(r->host_ns);
  return r->ptr;
}

Status Context::free(DevPtr ptr) {
  auto r = deallocate(ptr);
  if (!r.ok()) return r.status();
  node_.host_wait(r->host_ns);
  return Status::Ok();
}

void Context::empty_cache() { node_.host_wait(allocator_->empty_cache()); }

uint64_t Context::release_all() {
  DeviceMemory& mem = node_.device(device_).memory();
  uint64_t before = mem.used_by(pid_);
  allocator_->release_all();
  return before - mem.used_by(pid_);
}

Nanos Context::host_free() const { return std::max(node_.now(), host_free_); }

void Context::issue(Task& t, bool launch) {
  // In graph mode kernels and collectives were captured once: the step's graph launch is the
  // host's only call for them (its copies still launch one by one).
  bool op = t.kind == TaskKind::kKernel || t.kind == TaskKind::kCollective;
  if (graph_launch_ && op) launch = false;
  t.host_start = host_free();
  const Device& device = node_.device(device_);
  Nanos cost = launch ? device.spec().runtime.kernel_launch_ns + (op ? dispatch_ns_ : 0) : 0;
  cost = static_cast<Nanos>(static_cast<double>(cost) * device.health().host_slowdown());  // a slow host
  t.ready_at = t.host_start + t.compile_ns + cost;
  host_free_ = t.ready_at;
}

Status Context::enqueue_copy(StreamId stream, CopyKind kind, uint64_t bytes, uint32_t payload) {
  Task t;
  t.kind = TaskKind::kMemcpy;
  t.copy = kind;
  t.stream = stream;
  t.bytes = bytes;
  t.payload = payload;
  issue(t, true);
  node_.engine().enqueue(std::move(t));
  return Status::Ok();
}

Status Context::memcpy_h2d(StreamId stream, DevPtr dst, const void* src, uint64_t bytes) {
  NPUKIT_RETURN_IF_ERROR(check_stream(stream));
  NPUKIT_RETURN_IF_ERROR(check_range(dst, bytes, "memcpy H2D destination"));
  uint32_t payload = kNoPayload;
  DeviceMemory& mem = node_.device(device_).memory();
  if (mem.backed() && src != nullptr) {
    payload = node_.engine().add_payload([&mem, dst, src, bytes] {
      std::memcpy(mem.host_view(dst, bytes), src, bytes);
      return Status::Ok();
    });
  }
  return enqueue_copy(stream, CopyKind::kHostToDevice, bytes, payload);
}

Status Context::memcpy_d2h(StreamId stream, void* dst, DevPtr src, uint64_t bytes) {
  NPUKIT_RETURN_IF_ERROR(check_stream(stream));
  NPUKIT_RETURN_IF_ERROR(check_range(src, bytes, "memcpy D2H source"));
  uint32_t payload = kNoPayload;
  DeviceMemory& mem = node_.device(device_).memory();
  if (mem.backed() && dst != nullptr) {
    payload = node_.engine().add_payload([&mem, dst, src, bytes] {
      std::memcpy(dst, mem.host_view(src, bytes), bytes);
      return Status::Ok();
    });
  }
  return enqueue_copy(stream, CopyKind::kDeviceToHost, bytes, payload);
}

Status Context::memcpy_d2d(StreamId stream, DevPtr dst, DevPtr src, uint64_t bytes) {
  NPUKIT_RETURN_IF_ERROR(check_stream(stream));
  NPUKIT_RETURN_IF_ERROR(check_range(src, bytes, "memcpy D2D source"));
  NPUKIT_RETURN_IF_ERROR(check_range(dst, bytes, "memcpy D2D destination"));
  uint32_t payload = kNoPayload;
  DeviceMemory& mem = node_.device(device_).memory();
  if (mem.backed()) {
    payload = node_.engine().add_payload([&mem, dst, src, bytes] {
      std::memmove(mem.host_view(dst, bytes), mem.host_view(src, bytes), bytes);
      return Status::Ok();
    });
  }
  return enqueue_copy(stream, CopyKind::kDeviceToDevice, bytes, payload);
}

Result<PreparedKernel> Context::prepare(const std::string& op, const std::vector<TensorDesc>& inputs,
                                        const Attrs& attrs, uint32_t block_dim) const {
  return prepare_fused(op, inputs, attrs, {}, block_dim);  // a chain of one: the kernel itself
}

Result<PreparedKernel> Context::prepare_fused(const std::string& op, const std::vector<TensorDesc>& inputs,
                                              const Attrs& attrs, const std::vector<FusedPart>& epilogue,
                                              uint32_t block_dim) const {
  auto fused = resolve_fused(KernelRegistry::builtin(), op, inputs, attrs, epilogue);
  if (!fused.ok()) return fused.status();
  PreparedKernel p;
  p.kernel = fused->kernel;
  p.inputs = fused->inputs;
  p.outputs = std::move(fused->outputs);
  for (const TensorDesc& out : p.outputs) p.written_bytes += out.bytes();  // a fused chain writes its last outputs
  p.attrs = attrs;
  p.cost = fused->cost;
  p.block_dim = block_dim;
  std::string name = op;
  for (const FusedPart& part : epilogue) name += "_" + part.op;
  p.descriptor = intern_op_descriptor(name, p.inputs, p.outputs, p.kernel->unit == Unit::kCube);
  const DeviceSpec& spec = node_.device(device_).spec();
  DType dtype = inputs.empty() ? DType::kFloat32 : inputs.front().dtype;
  p.timing = time_kernel(spec, p.kernel->unit, dtype, p.cost, block_dim, p.kernel->convolution);
  double epilogue_ns = time_kernel(spec, Unit::kVector, dtype, {fused->epilogue_flops, 0}, block_dim).compute_ns_at_max_clock;
  p.timing.compute_ns_at_max_clock = p.kernel->unit == Unit::kCube ? std::max(p.timing.compute_ns_at_max_clock, epilogue_ns)
                                                                   : p.timing.compute_ns_at_max_clock + epilogue_ns;
  p.cost.flops += fused->epilogue_flops;
  return p;
}

namespace {

Task kernel_task(StreamId stream, const PreparedKernel& kernel, uint32_t payload) {
  Task t;
  t.kind = TaskKind::kKernel;
  t.unit = kernel.kernel->unit;
  t.stream = stream;
  t.block_dim = kernel.block_dim;
  t.kernel = kernel.kernel;
  t.timing = kernel.timing;
  t.flops = kernel.cost.flops;
  t.bytes = static_cast<uint64_t>(kernel.cost.bytes);
  t.written = std::min(t.bytes, kernel.written_bytes);
  t.payload = payload;
  t.descriptor = kernel.descriptor;
  return t;
}

Status check_tensors(const std::string& kernel, const char* which,
                     const std::vector<TensorDesc>& expected, const std::vector<DeviceTensor>& got) {
  if (expected.size() != got.size()) {
    return InvalidArgument(kernel + ": expected " + std::to_string(expected.size()) + " " + which +
                           ", got " + std::to_string(got.size()));
  }
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (!(got[i].desc == expected[i])) {
      return InvalidArgument(kernel + ": " + which + " " + std::to_string(i) + " is [" +
                             shape_str(got[i].desc.shape) + "] " + dtype_name(got[i].desc.dtype) +
                             ", expected [" + shape_str(expected[i].shape) + "] " +
                             dtype_name(expected[i].dtype));
    }
  }
  return Status::Ok();
}

// The functional work of one launch: resolve buffers at completion time and run the CPU kernel.
Status run_on_cpu(DeviceMemory& mem, const PreparedKernel& k, const std::vector<DeviceTensor>& in,
                  const std::vector<DeviceTensor>& out) {
  CpuArgs args{{}, {}, k.inputs, k.outputs, k.attrs};
  for (const auto& t : in) args.in.push_back(mem.host_view(t.addr, t.desc.bytes()));
  for (const auto& t : out) args.out.push_back(mem.host_view(t.addr, t.desc.bytes()));
  return k.kernel->compute(args);
}

}  // namespace

Nanos Context::compile_cost(const PreparedKernel& kernel) {
  if (!jit_compile_ || graph_launch_ || kernel.kernel->unit == Unit::kAiCpu) return 0;
  for (const auto* set : {&kernel.inputs, &kernel.outputs}) {
    for (const TensorDesc& t : *set) {
      if (is_dynamic(t.shape)) return 0;  // a dynamic-shape kernel is built once for every shape
    }
  }
  if (!compiled_.insert(kernel.descriptor).second) return 0;
  return node_.device(device_).spec().runtime.op_compile_ns;
}

Status Context::enqueue_kernel(StreamId stream, const PreparedKernel& kernel, uint32_t payload) {
  Task t = kernel_task(stream, kernel, payload);
  t.compile_ns = compile_cost(kernel);
  issue(t, true);
  node_.engine().enqueue(std::move(t));
  return Status::Ok();
}

Status Context::enqueue(StreamId stream, const PreparedKernel& kernel) {
  NPUKIT_RETURN_IF_ERROR(check_stream(stream));
  return enqueue_kernel(stream, kernel, kNoPayload);
}

Status Context::enqueue(StreamId stream, const PreparedKernel& kernel,
                        const std::vector<DeviceTensor>& inputs,
                        const std::vector<DeviceTensor>& outputs) {
  NPUKIT_RETURN_IF_ERROR(check_stream(stream));
  NPUKIT_RETURN_IF_ERROR(check_tensors(kernel.kernel->name, "inputs", kernel.inputs, inputs));
  NPUKIT_RETURN_IF_ERROR(check_tensors(kernel.kernel->name, "outputs", kernel.outputs, outputs));
  DeviceMemory& mem = node_.device(device_).memory();
  if (!mem.backed()) return enqueue(stream, kernel);
  if (kernel.kernel->compute == nullptr) {
    return InvalidArgument("functional mode: kernel " + kernel.kernel->name +
                           " has no CPU implementation");
  }
  for (const auto* set : {&inputs, &outputs}) {
    for (const auto& t : *set) {
      NPUKIT_RETURN_IF_ERROR(check_range(t.addr, t.desc.bytes(), kernel.kernel->name.c_str()));
    }
  }
  uint32_t payload = node_.engine().add_payload(
      [&mem, kernel, inputs, outputs] { return run_on_cpu(mem, kernel, inputs, outputs); });
  return enqueue_kernel(stream, kernel, payload);
}

Status Context::launch(StreamId stream, const std::string& op, const std::vector<DeviceTensor>& inputs,
                       const std::vector<DeviceTensor>& outputs, const Attrs& attrs,
                       uint32_t block_dim) {
  std::vector<TensorDesc> descs;
  descs.reserve(inputs.size());
  for (const auto& t : inputs) descs.push_back(t.desc);
  auto prepared = prepare(op, descs, attrs, block_dim);
  if (!prepared.ok()) return prepared.status();
  return enqueue(stream, *prepared, inputs, outputs);
}

Status Context::record_event(StreamId stream, EventId event) {
  NPUKIT_RETURN_IF_ERROR(check_stream(stream));
  NPUKIT_RETURN_IF_ERROR(check_event(event));
  node_.engine().enqueue_record(stream, event, host_free());
  return Status::Ok();
}

Status Context::wait_event(StreamId stream, EventId event) {
  NPUKIT_RETURN_IF_ERROR(check_stream(stream));
  NPUKIT_RETURN_IF_ERROR(check_event(event));
  node_.engine().enqueue_wait(stream, event, host_free());
  return Status::Ok();
}

Status Context::wait_until(const std::function<bool()>& done, const std::string& what) {
  bool starved = node_.scheduler().run_while([&] { return !done(); });
  if (starved) {
    return Status(Code::kFailedPrecondition,
                  "synchronize: " + what + " on device " + std::to_string(device_) +
                      " can never finish (it waits for an event that is never recorded)");
  }
  return Status::Ok();
}

Status Context::synchronize_stream(StreamId stream) {
  NPUKIT_RETURN_IF_ERROR(check_stream(stream));
  Engine& engine = node_.engine();
  NPUKIT_RETURN_IF_ERROR(
      wait_until([&] { return engine.stream_idle(stream); }, "stream " + std::to_string(stream)));
  return engine.take_stream_error(stream);
}

Status Context::synchronize_event(EventId event) {
  NPUKIT_RETURN_IF_ERROR(check_event(event));
  Engine& engine = node_.engine();
  uint64_t target = engine.event_records(event);
  return wait_until([&] { return engine.event_reached(event, target); },
                    "event " + std::to_string(event));
}

Status Context::synchronize_device() {
  Status first;
  for (StreamId s : streams_) {
    Status st = synchronize_stream(s);
    if (!st.ok() && first.ok()) first = st;
  }
  return first;
}

}  // namespace npukit::emu
