#include "emulator/runtime/program_runner.hpp"
#include "emulator/runtime/program_parse.hpp"

#include <algorithm>
#include <atomic>
#include <cstdio>

namespace npukit::emu {

namespace {

using telemetry::ProgramOp;
using Kind = ProgramOp::Kind;

}  // namespace

ProgramRunner::ProgramRunner(Node& node, telemetry::Program program)
    : node_(node), program_(std::move(program)) {}

ProgramRunner::~ProgramRunner() {
  *alive_ = false;
  release();
}

Result<std::unique_ptr<ProgramRunner>> ProgramRunner::create(Node& node, telemetry::Program program, std::string label) {
  static std::atomic<int> runs{0};  // default labels stay unique: ended labels never fault again
  if (label.empty()) label = "job '" + program.name + "' (run " + std::to_string(++runs) + ")";
  std::unique_ptr<ProgramRunner> runner(new ProgramRunner(node, std::move(program)));
  runner->label_ = std::move(label);
  Status s = runner->set_up();
  if (!s.ok()) return s;
  return runner;
}

// The kernel op `op` with these `inputs`: its input errors carry `where`, the runtime's (NotFound,
// ShapeInferenceError) its own message.
Result<PreparedKernel> ProgramRunner::prepare_kernel(int rank, const ProgramOp& op, const nlohmann::json& inputs,
                                                     const std::string& where) {
  auto parsed = parse_inputs(inputs);
  if (!parsed.ok()) return InvalidArgument(where + parsed.status().message());
  auto epilogue = parse_epilogue(op.attrs);
  if (!epilogue.ok()) return InvalidArgument(where + epilogue.status().message());
  if (!epilogue->empty()) return ranks_[rank].ctx->prepare_fused(op.name, *parsed, parse_attrs(op.attrs), *epilogue, op.block_dim);
  return ranks_[rank].ctx->prepare(op.name, *parsed, parse_attrs(op.attrs), op.block_dim);
}

// A kernel whose input dim varies by step: one prepared kernel per value of the dim.
Status ProgramRunner::prepare_variants(int rank, const ProgramOp& op, const std::string& where, Prepared& out) {
  if (op.vary.input < 0) return Status::Ok();
  for (int64_t value : op.vary.values) {
    nlohmann::json inputs = op.inputs;
    inputs[static_cast<std::size_t>(op.vary.input)]["shape"][static_cast<std::size_t>(op.vary.dim)] = value;
    auto k = prepare_kernel(rank, op, inputs, where);
    if (!k.ok()) return k.status();
    out.variants.push_back(std::move(*k));
  }
  return Status::Ok();
}

Status ProgramRunner::prepare_ops(int rank, const std::vector<ProgramOp>& ops, const char* phase,
                                  std::map<std::size_t, Prepared>& out) {
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const ProgramOp& op = ops[i];
    std::string where = "rank " + std::to_string(rank) + " " + phase + "[" + std::to_string(i) + "]: ";
    if (op.kind == Kind::kKernel) {
      auto k = prepare_kernel(rank, op, op.inputs, where);
      if (!k.ok()) return k.status();
      out[i].kernel = std::move(*k);
      NPUKIT_RETURN_IF_ERROR(prepare_variants(rank, op, where, out[i]));
    } else if (op.kind == Kind::kCollective) {
      auto call = parse_call(op);
      if (!call.ok()) return InvalidArgument(where + call.status().message());
      call->comm = comms_.at(op.comm);
      out[i].call = *call;
    }
  }
  return Status::Ok();
}

Status ProgramRunner::set_up() {
  auto policy = parse_allocator_policy(program_.allocator);
  if (!policy.ok()) return policy.status();
  std::vector<Context*> contexts;
  for (const auto& rp : program_.ranks) {
    auto ctx = node_.create_context(rp.device, program_.pid, program_.process_name, *policy);
    if (!ctx.ok()) return ctx.status();
    Rank r;
    r.ctx = *ctx;
    r.ctx->set_graph_launch(program_.launch == "graph");
    r.ctx->set_dispatch_ns(program_.dispatch_ns);
    r.ctx->set_jit_compile(program_.jit_compile);
    for (int s = 0; s < rp.streams; ++s) {
      r.streams.push_back(r.ctx->create_stream());
      r.sync_events.push_back(r.ctx->create_event());
    }
    for (int e = 0; e < rp.events; ++e) r.events.push_back(r.ctx->create_event());
    contexts.push_back(r.ctx);
    ranks_.push_back(std::move(r));
  }
  NPUKIT_RETURN_IF_ERROR(set_up_comms(contexts));
  NPUKIT_RETURN_IF_ERROR(schedule_faults());
  for (std::size_t i = 0; i < ranks_.size(); ++i) {
    int rank = static_cast<int>(i);
    const int source = program_.ranks[i].ops_of;
    // A rank running another's ops on the same kind of device shares its prepared kernels.
    if (source >= 0 && node_.device(ranks_[source].ctx->device()).spec().name ==
                           node_.device(ranks_[i].ctx->device()).spec().name) {
      ranks_[i].setup_prepared = ranks_[static_cast<std::size_t>(source)].setup_prepared;
      ranks_[i].step_prepared = ranks_[static_cast<std::size_t>(source)].step_prepared;
      continue;
    }
    const telemetry::RankProgram& ops = telemetry::ops_of(program_.ranks, i);
    auto setup = std::make_shared<std::map<std::size_t, Prepared>>(), step = std::make_shared<std::map<std::size_t, Prepared>>();
    NPUKIT_RETURN_IF_ERROR(prepare_ops(rank, ops.setup, "setup", *setup));
    NPUKIT_RETURN_IF_ERROR(prepare_ops(rank, ops.step, "step", *step));
    ranks_[i].setup_prepared = std::move(setup);
    ranks_[i].step_prepared = std::move(step);
  }
  return Status::Ok();
}

Status ProgramRunner::set_up_comms(const std::vector<Context*>& contexts) {
  for (const auto& spec : program_.comms) {
    auto algo = parse_collective_algo(spec.algo);
    if (!algo.ok()) return algo.status();
    std::vector<Context*> members;
    if (spec.ranks.empty()) members = contexts;
    for (int r : spec.ranks) {
      if (r < 0 || r >= static_cast<int>(contexts.size())) {
        return InvalidArgument("communicator '" + spec.name + "': rank " + std::to_string(r) + " does not exist");
      }
      members.push_back(contexts[r]);
    }
    auto comm = node_.create_communicator(spec.name, members, *algo);
    if (!comm.ok()) return comm.status();
    comms_.push_back(*comm);
  }
  return Status::Ok();
}

Status ProgramRunner::schedule_faults() {
  std::vector<FaultEvent> timeline;
  for (const auto& f : program_.faults) {
    FaultEvent e;
    e.at = node_.now() + f.at_ns;
    e.device = f.device;
    e.peer = f.peer;
    e.action = f.action == "inject"        ? FaultEvent::Action::kInject
             : f.action == "clear"         ? FaultEvent::Action::kClear
             : f.action == "power-limit"   ? FaultEvent::Action::kPowerLimit
                                           : FaultEvent::Action::kReset;
    e.watts = f.watts;
    e.source = fault_source();
    if (e.action == FaultEvent::Action::kInject) {
      auto kind = parse_fault(f.fault);
      if (!kind.ok()) return kind.status();
      e.kind = *kind;
    }
    timeline.push_back(e);
  }
  return node_.schedule_faults(timeline);
}

void ProgramRunner::start(StepFn on_step, DoneFn on_done) {
  on_step_ = std::move(on_step);
  on_done_ = std::move(on_done);
  for (std::size_t i = 0; i < ranks_.size(); ++i) {
    ranks_[i].step_start = node_.now();
    auto alive = alive_;
    node_.scheduler().post_callback(node_.now(), [this, alive, i] {
      if (*alive) resume(static_cast<int>(i));
    });
  }
}

void ProgramRunner::resume(int rank) {
  Rank& r = ranks_[rank];
  const auto& rp = telemetry::ops_of(program_.ranks, static_cast<std::size_t>(rank));
  while (!finished_ && !r.done) {
    const auto& ops = r.in_setup ? rp.setup : rp.step;
    if (r.next_op >= ops.size()) {
      if (!advance_phase(rank)) return;
      continue;
    }
    std::size_t i = r.next_op++;
    const auto& prepared = r.in_setup ? *r.setup_prepared : *r.step_prepared;
    auto it = prepared.find(i);
    if (execute(rank, ops[i], it == prepared.end() ? nullptr : &it->second) == Block::kWait) return;
  }
}

// At the end of the setup or of a step body: sync, report the step, start the next one.
// Returns false when the rank must wait (or is done).
bool ProgramRunner::advance_phase(int rank) {
  Rank& r = ranks_[rank];
  if (!r.step_synced) {
    r.step_synced = true;
    sync(rank, -1);
    return false;
  }
  r.step_synced = false;
  for (StreamId s : r.streams) {
    Status st = node_.engine().take_stream_error(s);
    if (!st.ok()) {
      fail(st);
      return false;
    }
  }
  if (r.in_setup) {
    r.in_setup = false;
  } else {
    if (on_step_) on_step_({rank, r.step, r.step_start, node_.now()});
    ++r.step;
  }
  r.next_op = 0;
  r.step_start = node_.now();
  if (r.step >= program_.repeat) {
    r.done = true;
    finish_if_done();
    return false;
  }
  return true;
}

ProgramRunner::Block ProgramRunner::sync(int rank, int stream) {
  Rank& r = ranks_[rank];
  std::vector<int> which;
  if (stream >= 0) which.push_back(stream);
  else for (std::size_t s = 0; s < r.streams.size(); ++s) which.push_back(static_cast<int>(s));
  r.pending_syncs = static_cast<int>(which.size());
  for (int s : which) {
    uint64_t target = node_.engine().enqueue_record(r.streams[s], r.sync_events[s], r.ctx->host_free());
    auto alive = alive_;
    node_.engine().when_reached(r.sync_events[s], target, [this, alive, rank] {
      if (*alive && --ranks_[rank].pending_syncs == 0) resume(rank);
    });
  }
  return Block::kWait;
}

// Host work (a loader wait, a malloc) starts when the rank's host thread is free of the
// launches it has issued.
void ProgramRunner::delay(int rank, Nanos ns) {
  auto alive = alive_;
  node_.scheduler().post_callback(ranks_[rank].ctx->host_free() + ns, [this, alive, rank] {
    if (*alive) resume(rank);
  });
}

// The host's input pipeline makes Program::host_input_samples_per_s samples a second for the job's
// ranks on that host (divided by the host's slowdown: a contended host's loaders are slower), in
// the order they ask. It starts when it is first asked (a loader's workers start with the first
// batch requested) and then keeps working while the ranks compute, up to two batches ahead for
// each rank it feeds (a model choice: enough that it never idles in a steady state). n samples
// asked for when the rank's host thread is free at t are ready at
// cursor = max(cursor, t - ahead) + n/rate. Returns how long the rank waits for them (0: no limit).
Nanos ProgramRunner::input_wait(int rank, uint64_t samples) {
  const double rate = program_.host_input_samples_per_s / node_.device(ranks_[rank].ctx->device()).health().host_slowdown();
  if (!(rate > 0)) return 0;
  const int host = node_.fabric().host_of(ranks_[rank].ctx->device());
  auto [known, fresh] = input_fed_.try_emplace(host, 0);
  for (std::size_t r = 0; fresh && r < ranks_.size(); ++r) {  // the ranks this host's pipeline feeds
    const auto& step = telemetry::ops_of(program_.ranks, r).step;
    bool takes = std::any_of(step.begin(), step.end(), [](const ProgramOp& op) { return op.kind == Kind::kInput; });
    known->second += takes && node_.fabric().host_of(ranks_[r].ctx->device()) == host;
  }
  const int fed = known->second;
  const Nanos t = ranks_[rank].ctx->host_free();
  const auto make = static_cast<Nanos>(static_cast<double>(samples) / rate * 1e9);
  const Nanos ahead = 2 * std::max(fed, 1) * make;
  Nanos& cursor = input_cursor_.try_emplace(host, t).first->second;  // nothing made before the first ask
  cursor = std::max(cursor, t - ahead) + make;
  return std::max<Nanos>(0, cursor - t);
}

ProgramRunner::Block ProgramRunner::execute(int rank, const ProgramOp& op, const Prepared* prepared) {
  Rank& r = ranks_[rank];
  Context& ctx = *r.ctx;
  StreamId s = op.stream >= 0 ? r.streams[op.stream] : 0;
  Status st;
  Nanos host_ns = 0;
  switch (op.kind) {
    case Kind::kAlloc: {
      uint64_t bytes = r.in_setup || op.bytes_by_step.empty()
                           ? op.bytes
                           : op.bytes_by_step[static_cast<std::size_t>(r.step) % op.bytes_by_step.size()];
      if (!r.drained_for_flush && ctx.allocation_would_flush(bytes)) {
        r.drained_for_flush = true;  // the flush's frees synchronize the device: drain, then come back
        --r.next_op;
        return sync(rank, -1);
      }
      r.drained_for_flush = false;
      auto a = ctx.allocate(bytes, op.buffer);
      if (!a.ok()) {
        st = a.status();
        break;
      }
      uint64_t used = node_.device(ctx.device()).memory().app_used_bytes();
      r.buffers[op.buffer] = {a->ptr, used > bytes ? used - bytes : 0, bytes};
      host_ns = a->host_ns;
      break;
    }
    case Kind::kFree: {
      auto it = r.buffers.find(op.buffer);
      if (it == r.buffers.end()) {
        st = InvalidArgument("rank " + std::to_string(rank) + ": free of unknown buffer '" + op.buffer + "'");
        break;
      }
      // A non-caching free (aclrtFree, like cudaFree) synchronizes the device: the memory may
      // still be in use by queued work. Drain, then come back.
      if (!r.in_setup && !r.drained_for_free && ctx.allocator_policy() == AllocatorPolicy::kDirect) {
        r.drained_for_free = true;
        --r.next_op;
        return sync(rank, -1);
      }
      r.drained_for_free = false;
      auto a = ctx.deallocate(it->second.ptr, op.buffer);
      r.buffers.erase(it);
      if (!a.ok()) st = a.status();
      else host_ns = a->host_ns;
      break;
    }
    case Kind::kEmptyCache: host_ns = ctx.empty_cache_cost(); break;
    case Kind::kKernel: {
      const auto& variants = prepared->variants;
      st = ctx.enqueue(s, variants.empty() ? prepared->kernel
                                           : variants[static_cast<std::size_t>(r.step) % variants.size()]);
      break;
    }
    case Kind::kMemcpy:
      if (op.name == "H2D") st = ctx.memcpy_h2d(s, 0, nullptr, op.bytes);
      else if (op.name == "D2H") st = ctx.memcpy_d2h(s, nullptr, 0, op.bytes);
      else st = ctx.memcpy_d2d(s, 0, 0, op.bytes);
      break;
    case Kind::kRecord: st = ctx.record_event(s, r.events[op.event]); break;
    case Kind::kWait: st = ctx.wait_event(s, r.events[op.event]); break;
    case Kind::kCollective: st = ctx.collective(s, prepared->call); break;
    case Kind::kHostDelay: host_ns = op.ns; break;
    case Kind::kInput:
      if (Nanos wait = input_wait(rank, op.count); wait > 0) {  // the host's slowdown is in its rate
        delay(rank, wait);
        return Block::kWait;
      }
      break;
    case Kind::kSync: return sync(rank, op.stream);
    case Kind::kMemTest: st = memtest(rank, op); break;
  }
  if (!st.ok()) {
    fail(st);
    return Block::kWait;
  }
  if (host_ns > 0) {
    // Host work (input, malloc/free) runs on the rank's host: a slow host takes longer.
    host_ns = static_cast<Nanos>(static_cast<double>(host_ns) * node_.device(r.ctx->device()).health().host_slowdown());
    delay(rank, host_ns);
    return Block::kWait;
  }
  return Block::kNone;
}

// The patterns a memtest writes, in order (program.hpp: kMaxMemTestPatterns).
constexpr uint64_t kMemTestPatterns[telemetry::kMaxMemTestPatterns] = {
    0x0000000000000000ull, 0xFFFFFFFFFFFFFFFFull, 0x5555555555555555ull, 0xAAAAAAAAAAAAAAAAull,
    0x0101010101010101ull, 0x8080808080808080ull, 0x3333333333333333ull, 0xCCCCCCCCCCCCCCCCull};

// Each pattern pass writes the buffer and reads it back: on the stream it costs what a D2D copy
// of the buffer costs (one read and one write of every byte). Pages of the buffer with a stuck
// bit fail the first pattern that has a 1 there; they are reported as findings.
Status ProgramRunner::memtest(int rank, const ProgramOp& op) {
  Rank& r = ranks_[rank];
  auto it = r.buffers.find(op.buffer);
  if (it == r.buffers.end()) {
    return InvalidArgument("rank " + std::to_string(rank) + ": memtest of unknown buffer '" + op.buffer + "'");
  }
  const Rank::Buffer& b = it->second;
  for (uint64_t p = 0; p < op.count; ++p) {
    NPUKIT_RETURN_IF_ERROR(r.ctx->memcpy_d2d(r.streams[op.stream], b.ptr, b.ptr, b.bytes));
  }
  int device = r.ctx->device();
  for (const DeviceHealth::BadPage& page : node_.device(device).health().bad_pages()) {
    if (page.offset + kHbmPageBytes <= b.phys || page.offset >= b.phys + b.bytes) continue;
    uint64_t stuck = 1ull << page.stuck_bit;
    for (uint64_t p = 0; p < op.count; ++p) {
      if (!(kMemTestPatterns[p] & stuck)) continue;
      Finding f{rank, device, "hbm_bad_page", page.offset, kMemTestPatterns[p], kMemTestPatterns[p] & ~stuck, ""};
      char line[160];
      std::snprintf(line, sizeof line, "HBM page at offset 0x%llx (%.2f GiB): wrote 0x%016llx, read 0x%016llx",
                    static_cast<unsigned long long>(f.offset), static_cast<double>(f.offset) / (1ull << 30),
                    static_cast<unsigned long long>(f.wrote), static_cast<unsigned long long>(f.read));
      f.text = line;
      findings_.push_back(std::move(f));
      break;
    }
  }
  return Status::Ok();
}

void ProgramRunner::fail(Status s) {
  if (finished_) return;
  finished_ = true;
  status_ = std::move(s);
  release();
  if (on_done_) on_done_(status_);
}

void ProgramRunner::cancel() { fail(Status(Code::kFailedPrecondition, "cancelled")); }

void ProgramRunner::finish_if_done() {
  if (finished_) return;
  for (const Rank& r : ranks_) {
    if (!r.done) return;
  }
  finished_ = true;
  release();
  if (on_done_) on_done_(status_);
}

void ProgramRunner::release() {
  if (released_) return;
  released_ = true;
  if (!program_.faults.empty()) node_.end_faults_of(fault_source());
  for (Rank& r : ranks_) {
    if (r.ctx == nullptr) continue;
    AllocatorStats st = r.ctx->allocator_stats();
    peak_reserved_ = std::max(peak_reserved_, st.peak_reserved_bytes);
    DevicePeak& p = peaks_[r.ctx->device()];
    p.allocated = std::max(p.allocated, st.peak_allocated_bytes), p.reserved = std::max(p.reserved, st.peak_reserved_bytes);
    // Buffers the program never freed go back one by one, so every alloc event gets its free.
    for (const auto& [name, buffer] : r.buffers) (void)r.ctx->deallocate(buffer.ptr);
    r.buffers.clear();
    node_.destroy_context(r.ctx);
    r.ctx = nullptr;
  }
  for (CommId c : comms_) node_.collectives().release_communicator(c);
  comms_.clear();
}

int64_t ProgramRunner::steps_done() const {
  int64_t least = program_.repeat;
  for (const Rank& r : ranks_) least = std::min(least, r.step);
  return least;
}

std::map<int, ProgramRunner::DevicePeak> ProgramRunner::device_peaks() const {
  std::map<int, DevicePeak> out = peaks_;
  for (const Rank& r : ranks_) {
    if (!r.ctx) continue;
    AllocatorStats st = r.ctx->allocator_stats();
    DevicePeak& p = out[r.ctx->device()];
    p.allocated = std::max(p.allocated, st.peak_allocated_bytes), p.reserved = std::max(p.reserved, st.peak_reserved_bytes);
  }
  return out;
}

uint64_t ProgramRunner::peak_reserved_bytes() const {
  uint64_t peak = peak_reserved_;
  for (const Rank& r : ranks_) {
    if (r.ctx) peak = std::max(peak, r.ctx->allocator_stats().peak_reserved_bytes);
  }
  return peak;
}

}  // namespace npukit::emu
