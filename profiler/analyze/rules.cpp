#include "profiler/analyze/rules.hpp"

namespace npukit::prof {

namespace {

constexpr RuleDef kRules[] = {
    {"data_loader_starvation", "step windows and the device's busy intervals (OVERLAP_ANALYSIS)",
     "the idle time before each step's first task, less the host's device malloc/free calls (with the device's "
     "wait for its next task after a runtime call, up to 50 us) and online compiles in it (allocator_cost's and "
     "shape_recompilation's), is >= 15% of the step (the steps after each device's "
     "warm-up; with collectives, the longest wait of the step's ranks)",
     "the average of that idle time; with collectives the per-step longest (the others wait for the rank fed "
     "last, one host's pipeline feeding its ranks in turn: that wait in their collectives is this rule's, not "
     "communication's, and the rank fed last no straggler)",
     Severity::kWarning,
     "feed the device faster: more loader workers, prefetching, pinned host memory"},
    {"unoverlapped_communication", "collective tasks against compute tasks per device (OVERLAP_ANALYSIS)",
     "communication with no compute running is >= 10% of the step",
     "the communication time per step with no compute running, on the rank with the most own work "
     "(what the others spend beyond it is waiting for that rank: slow_rank)",
     Severity::kWarning,
     "overlap communication with compute: gradient buckets launched during the backward pass, "
     "a separate communication stream, fewer and larger collectives"},
    {"aicpu_fallback", "COMPUTE_TASK_INFO tasks of type AI_CPU",
     "any op ran on AI CPU (it has no AI Core kernel for its inputs)",
     "the AI CPU time per device-step", Severity::kWarning,
     "give the op an AI Core path: another dtype or shape the AI Core kernel supports, or a "
     "replacement op"},
    {"allocator_cost", "the alloc/free events' host cost (EMU_EVENT c >> 32) inside each step",
     "device malloc/free cost the host >= 0.5% of the step on the costliest device",
     "the host time of device malloc/free calls per step on that device while the device sat idle, and the "
     "device's wait for its next task after a call that left it idle, up to 50 us (a free drains the device first)",
     Severity::kWarning,
     "use a caching allocator (torch_npu's, or Paddle's FLAGS_allocator_strategy=auto_growth) "
     "or preallocate the buffers; with a caching allocator already, let it reserve its pool before the steps "
     "(a warm-up step at the largest shapes)"},
    {"allocator_churn", "NPU_OP_MEM alloc rows per step", ">= 100 allocations per step across the node", "",
     Severity::kInfo, "reuse buffers across steps; a caching allocator makes each allocation cheap"},
    {"hbm_near_capacity", "NPU_MEM (HBM in use) against the device's HBM (EMU_COUNTER npu_hbm_total_bytes)",
     "a device's peak HBM in use is >= 90% of its HBM", "", Severity::kWarning,
     "free headroom: activation recomputation, a smaller micro-batch with gradient accumulation, optimizer "
     "state sharding (ZeRO), or a lower-precision optimizer state"},
    {"hbm_fragmentation", "EMU_EVENT cache_flush (a caching allocator out of HBM emptied its cache to allocate) "
     "against the device's busy intervals (OVERLAP_ANALYSIS), in the steps after the first",
     "flushes with the device idle cost >= 1% of the step on a device",
     "per step after the first, on the device where it is most: the time the device sat idle while the host "
     "flushed the cache and allocated again (the flush's frees synchronize the device first)",
     Severity::kWarning,
     "keep allocation sizes steady: pad varying inputs to a few fixed sizes, allocate the largest buffers first; "
     "let segments grow in place (PYTORCH_NPU_ALLOC_CONF=expandable_segments:True) or stop splitting large blocks "
     "(max_split_size_mb); or free HBM held elsewhere"},
    {"unfused_kernels", "per stream: runs of kernels that one fused kernel could do, each taking the previous one's "
     "output as its first input (shapes): what CANN's graph compiler fuses (the fusion pattern table the workload "
     "compiler fuses by: conv + batch_norm [+ add] [+ relu], matmul + gelu | relu, add + layer_norm, relu | gelu | "
     "add | mul chains, relu_grad | gelu_grad + batch_norm_grad; families from the ops' names), and chains of "
     "memory-bound element-wise kernels of any op type (Add, Sigmoid, ...; not softmax or norms) whose inputs have "
     "their output's shape",
     "the runs could save >= 3% of the step on a device",
     "per run, its kernels' time beyond one fused kernel priced as the emulator prices one: the values passed "
     "between them skip HBM (a kernel that reads its input twice, batch-norm statistics first, still has it "
     "written and read once), and the kernel takes the longer of its cube work and its HBM traffic at the "
     "device's rate and a kernel's fixed start (a line through its element-wise kernels' bytes and times; else a "
     "high percentile of its vector kernels' bytes per second); per step on the device where "
     "that is most",
     Severity::kWarning,
     "fuse the runs: graph mode with operator fusion (MindSpore's graph mode, torch.compile / TorchAir, Paddle's "
     "static graph with fusion passes), or fused ops (a fused activation, AddLayerNorm) in the model code"},
    {"memory_bound_ops", "per op: flops (TASK_PMU_INFO) against input bytes (shapes x dtypes)",
     "ops with >= 3% of kernel time below 10 FLOP per input byte", "", Severity::kInfo,
     "fuse the elementwise chain into its producer, or keep the data in a lower precision"},
    {"throttling", "the clock's DVFS steps (EMU_EVENT throttle_changed), the first counter sample, and every kernel "
     "that ran throttled against the same op (name, shapes, dtypes) run unthrottled on its own device (else on every "
     "device, times how much slower its device runs the ops it ran unthrottled)",
     "any period with a throttle reason",
     "per step after each device's warm-up step, on the costliest device: the throttled kernels' time in those "
     "steps beyond their unthrottled median; or, where "
     "another rank is a straggler and a replay of the collectives (as slow_rank's) with its throttled work at its "
     "unthrottled clock says the step hides over half of it, what the replay says",
     Severity::kWarning,
     "cool the chip (airflow, inlet temperature) or raise the power limit; check npu-smi health"},
    {"launch_bound", "per device: idle gaps between tasks inside each step (OVERLAP_ANALYSIS), less the host's "
     "malloc/free (with the device's wait for its next task after a runtime call, up to 50 us) and "
     "online-compile time",
     "gaps shorter than 50 us add up to >= 5% of the step on a device",
     "those gaps per step on the device where they add up most", Severity::kWarning,
     "launch fewer, larger kernels: graph mode (torch.compile / TorchAir, Paddle's static graph), fused ops, "
     "a larger batch per step"},
    {"host_launch_gaps", "per device: idle gaps between tasks inside each step (OVERLAP_ANALYSIS), less the host's "
     "malloc/free (with the device's wait for its next task after a runtime call, up to 50 us) and "
     "online-compile time",
     "gaps of 50 us or more add up to >= 5% of the step on a device",
     "those gaps per step on the device where they add up most", Severity::kWarning,
     "remove host work from the step: no loss.item()/.cpu() syncs or prints inside it, log every N steps, move "
     "host preprocessing to the data loader"},
    {"shape_recompilation", "EMU_EVENT op_compile (the host compiled an op online for a shape it had not compiled) "
     "of ops compiled before for other shapes, against the device's busy intervals (OVERLAP_ANALYSIS), in the steps "
     "after the first",
     "recompiles with the device idle cost >= 3% of the step on a device",
     "per step after the first, on the device where it is most: the time the device sat idle while the host "
     "recompiled",
     Severity::kWarning,
     "keep shapes static: pad inputs to a few fixed sizes (sequence-length buckets), or run prebuilt "
     "dynamic-shape kernels instead of compiling each shape (torch_npu: "
     "torch.npu.set_compile_mode(jit_compile=False))"},
    {"slow_link",
     "COMMUNICATION_OP per communicator (the last rank to arrive's duration) against EMU_LINK line rates; the "
     "suspect is the link on its members' paths that ran below 95% of its rate during the recording (EMU_COUNTER "
     "npu_link_rate_percent, EMU_EVENT link_state_changed), when one did",
     "a communicator's collectives of >= 1 MiB per rank take < 40% of their time at line rate, once the link latencies "
     "their algorithm pays in turn are set aside (EMU_LINK latencyNs; ring AllReduce 2(n-1) of them, mesh 2; a "
     "collective spending over half its time in latency is not judged) (busbw over its links' "
     "rate; mesh counts n-1 links per rank; a switched node (each device's port into the switch, as the A100's "
     "NVSwitch) against its slowest port; a PCIe-only node (4x310P3) against its members' PCIe links, through the host; members in two HCCS groups of a host (the first-generation 910's two "
     "4-NPU meshes) against the slower of HCCS and the host link between the groups; an AllReduce across hosts against HCCL's hierarchical one over HCCS "
     "within each host and RoCE ports between them); healthy links reach about 80%; a pipeline's transfers from "
     "one stage to the next (Send/Receive of >= 1 MiB, COMMUNICATION_TASK_INFO srcRank/dstRank) whose shortest, "
     "the later of the two ends waiting for nobody, moves its bytes at < 40% of the line between the two devices "
     "(their HCCS link, or across hosts their RoCE ports)",
     "per step, on the device that loses most: how much less of the slow communicators' time would have nothing "
     "beside it (no compute, no collective of a communicator that is not slow: the step waits for that one anyway) "
     "if each took only its latencies and its bytes at 80% of line rate (replayed in order: a queued collective "
     "moves up), except that slow collectives at their devices' tail (none of the devices' other communication "
     "follows them within the step: a pipeline stage's data-parallel AllReduce) cost no more than the device's "
     "next transfer's other end waited for it; plus, per boundary between two stages, its costlier direction's "
     "transfers' time beyond 80% of line rate (under 1F1B one direction of each micro-batch lies on the step's "
     "critical path); where a straggler is found too and a replay of the collectives (as slow_rank's) with these "
     "transfers at 80% of line rate says the step hides over half of that, what the replay says",
     Severity::kWarning,
     "check the named links: npu-smi info -t topo and the link counters, npu-smi diag's bandwidth test, "
     "reseat or replace the part; route the communicator over other links meanwhile"},
    {"pipeline_bubble", "COMMUNICATION_OP Send/Recv (hcom_send_, hcom_receive_) per rank against its steps; the job's layout "
     "(pp stages, micro-batches) from its job_started event",
     "the receive time of the ranks the others wait for (within 1% of the most own work; every rank of a "
     "balanced pipeline), their median per step after the first, less what slow links between stages add "
     "(slow_link's), is >= 5% of the step",
     "that receive time per step (its compute stream waits there for the neighbouring stage; a faster stage's "
     "longer wait is waiting for the slow one: slow_rank)",
     Severity::kWarning,
     "more micro-batches per step (the 1F1B bubble is (p-1)/(m+p-1)), an interleaved schedule (virtual pipeline "
     "stages), stages of equal work (move layers from the slowest stage), fewer pipeline stages"},
    {"slow_rank", "per-rank step breakdown (OVERLAP_ANALYSIS within each rank's step windows)",
     "a rank's own work (its step minus communication with no compute running) is >= 5% above the "
     "median of the other ranks'; ranks within 1% of its work are named with it, against the median of "
     "the rest, unless half the ranks or more are alike",
     "the straggler's own work per step minus the other ranks' median (they wait that long for it); when it was "
     "slow in some steps only (a cause that began or ended during the run), those steps are named with its excess "
     "in each; or, when less, what a replay of the collectives (COMMUNICATION_OP; each instance, a Send with its "
     "Receive too, ends its shortest member's time after its last member arrives) with the straggler's work between "
     "them at the others' pace takes off the step, for a rank slow in every step: where that is below the excess by "
     "more than the straggler's collectives' time beside its work, which the replay cannot shorten (a pipeline stage, "
     "part of whose work falls in the bubble; another rank slow too), or where the replay says the step hides over "
     "half of it (the others wait for a slow link's group anyway)",
     Severity::kWarning,
     "look at the slow rank's device: npu-smi info/health for its clock, temperature and cores, npu-smi "
     "diag for its compute; balance its input or its share of the model"},
    {"slow_host", "per-rank step breakdown grouped by host (ranks recorded on several hosts of a cluster: each "
     "rank's EMU_RUN node)",
     "the own work of every rank of one host, its fastest too, is >= 5% above the median of the other hosts' "
     "(every such host is named); a host with one rank recorded is never one (its NPU and its host cannot be "
     "told apart: slow_rank names it)",
     "the slowest host's median own work per step minus that of the hosts that are not slow (every rank "
     "waits that long in the cross-host collectives)",
     Severity::kWarning,
     "look at the host rather than one NPU: its CPU load and frequency (top, the data loader's workers), "
     "npu-smi health on it for a slow-host or thermal incident; move the job off it or fix its input pipeline"},
    {"incomplete_recording", "META_DATA RECORDING_STATE, EMU_RUN node_lost",
     "the recorder stopped before finalizing, or the node went away mid-recording", "",
     Severity::kWarning, "re-record; this report covers what was committed"},
    {"dropped_events", "EMU_RUN events_missed, lossless_lost", "any event missed", "", Severity::kWarning,
     "record with --mode lossless (the default), or with fewer readers on the node"},
};

}  // namespace

std::string_view severity_name(Severity s) {
  switch (s) {
    case Severity::kInfo: return "info";
    case Severity::kWarning: return "warning";
    case Severity::kCritical: return "critical";
  }
  return "info";
}

std::span<const RuleDef> all_rules() { return kRules; }

const RuleDef* find_rule(std::string_view id) {
  for (const RuleDef& r : kRules) {
    if (r.id == id) return &r;
  }
  return nullptr;
}

Severity severity_of_share(double share) {
  return share >= 0.10 ? Severity::kCritical : share >= 0.01 ? Severity::kWarning : Severity::kInfo;
}

}  // namespace npukit::prof
