#include "telemetry/events.hpp"

namespace npukit::telemetry {

namespace {

// THE event type table. Ids never reused. Words are u64 unless marked f64.
constexpr EventTypeDef kEventTypes[] = {
    {EventType::kMarker, "marker", "name: text; a..d: free for the producer"},
    {EventType::kKernel, "kernel",
     "ts: start; name: NPU kernel (op type, e.g. MatMulV2); aux: \"<framework op>|<input shapes>|<input dtypes>|"
     "<output shapes>|<output dtypes>|<static|dynamic>|<HF32 YES|NO>\" (msprof spelling: "
     "\"aten::mm|4096,4096;4096,4096|FLOAT16;FLOAT16|4096,4096|FLOAT16|static|NO\"); a: duration ns; b: stream | pid << 32; "
     "c: flops (f64); d: unit (0 cube, 1 vector, 2 AI CPU) | task id << 8 | cores << 56"},
    {EventType::kMemcpy, "memcpy",
     "ts: start; a: duration ns; b: bytes; c: kind (0 H2D, 1 D2H, 2 D2D) | task id << 8; d: stream | pid << 32"},
    {EventType::kAlloc, "alloc",
     "ts: the call; device: where; name: the buffer's name in its program (\"activations\"; none when "
     "unnamed); a: bytes requested; b: device address; c: pid | the call's host cost ns << 32 (the "
     "allocator's modelled aclrtMalloc time); d: the process's allocated bytes on the device after the "
     "call (msprof totalAllocate)"},
    {EventType::kFree, "free",
     "ts: the call; device: where; name: the buffer's name; a: bytes of the freed allocation (as "
     "requested); b: its device address; c: pid | the call's host cost ns << 32; d: the process's "
     "allocated bytes on the device after the call"},
    {EventType::kCollective, "collective",
     "ts: start; name: op type (hcom_allReduce_, ...); aux: the communicator, "
     "\"<name>|<size>|<devices by rank>|<MESH|RING>|<HCCS|PCIE>\" (comm_group.hpp); a: duration ns; "
     "b: bytes (per rank) | (Send/Receive: the other end's rank in the communicator + 1) << 48; "
     "c: task id | HCCL data type << 56; d: stream | pid << 32"},
    {EventType::kHealthChanged, "health_changed", "a: old health; b: new health; c: error code"},
    {EventType::kThrottleChanged, "throttle_changed",
     "every DVFS step that changed a device's AI-core clock or its throttle reasons, at its virtual "
     "time: a: old reasons bitmask; b: new reasons bitmask; c: AI-core clock MHz after"},
    {EventType::kFaultInjected, "fault_injected", "name: fault kind (\"<fault> on link A-B\" for a link); a: 1 when a recorder noted it in force at its start"},
    {EventType::kFaultCleared, "fault_cleared", "name: fault kind"},
    {EventType::kProcessStarted, "process_started", "name: process name; a: pid"},
    {EventType::kProcessExited, "process_exited", "a: pid; b: exit status"},
    {EventType::kJobStarted, "job_started",
     "name: job name; aux: the job's devices by rank, \"0,1,2,3\" (rank r runs on the r-th); a: job id; b: pid"},
    {EventType::kJobFinished, "job_finished",
     "name: job name; aux: error message (0 when ok); a: job id; b: 0 ok, else error code"},
    {EventType::kEccError, "ecc_error",
     "ts: when the errors were added (an ECC storm: one event per device per physics tick, 10 ms, "
     "with the tick's count); a: 1 single-bit, 2 double-bit; b: error count added; c: isolated pages "
     "added; d: the device's aggregate count of that kind after"},
    {EventType::kLinkStateChanged, "link_state_changed",
     "one per link that went down or up or retrained at another rate; device: the device whose fault, "
     "clear or reset changed it; a: link index (the bus's link order, as in snapshots); b: 1 up, 0 down; "
     "c: the rate it now trains at, % of its line rate (25 after a degradation; 0 from before buses said)"},
    {EventType::kTaskTimeout, "task_timeout", "name: op; a: stream id; b: waited ns"},
    {EventType::kStep, "step",
     "ts: step start; name: job name; device: the rank's device; a: job id; b: step index (0-based); "
     "c: duration ns; d: pid"},
    {EventType::kLaunch, "launch",
     "ts: when the host call that queued the task began; name: what was launched (framework op, "
     "\"memcpy\", or the collective's op type); a: task id (the connection id of the task's "
     "kernel/memcpy/collective event); b: stream | pid << 32; c: the call's duration ns (the task "
     "reaches the device when it returns)"},
    {EventType::kOpCompile, "op_compile",
     "ts: the compile's start, at the start of the launch call it delays (jit_compile: an op's first "
     "launch for a static shape); name: the framework op; aux: its input shapes, msprof style; "
     "a: compile ns; b: stream | pid << 32; c: the task id of the launch"},
    {EventType::kCacheFlush, "cache_flush",
     "ts: the allocation call (right after its alloc event, same ts); device: where; name: the buffer; "
     "a: the call's host ns (the flush's frees, then the new segment's malloc); b: bytes requested; c: cached "
     "bytes the flush gave back to the device; d: the largest cached free block before it (none fit the request)"},
    {EventType::kReserved, "reserved",
     "ts: an alloc or free call that changed what the process's allocator holds from the device (right "
     "before that call's alloc or free event, same ts); device: where; a: the bytes it holds after the "
     "call, cached blocks included (msprof totalReserve; a non-caching allocator holds what is allocated); b: pid"},
};

}  // namespace

std::span<const EventTypeDef> all_event_types() { return kEventTypes; }

const EventTypeDef* find_event_type(EventType type) {
  for (const auto& t : kEventTypes) {
    if (t.type == type) return &t;
  }
  return nullptr;
}

const EventTypeDef* find_event_type(std::string_view name) {
  for (const auto& t : kEventTypes) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

}  // namespace npukit::telemetry
