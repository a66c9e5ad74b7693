// The report document: everything `npu-prof report` says about one recording, built once
// (report_build.cpp) and printed by three renderers (report_text.cpp, report_csv.cpp,
// report_json.cpp). Times are ns, sizes bytes, bandwidths bytes/s; renderers convert units and
// name them in their headers.
//
// Thread-safety: a Report is a value.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "profiler/analyze/host_device.hpp"
#include "profiler/store/intervals.hpp"

namespace npukit::prof {

struct DurationStats {
  uint64_t count = 0;
  int64_t total = 0, min = 0, max = 0;
  double avg = 0, median = 0;
  double ratio = 0;  // percent of the table's total time
};
// Fills count/total/min/max/avg/median (reorders `durations`); ratio is left to the caller.
DurationStats duration_stats(std::vector<int64_t>& durations);

struct ReportHeader {
  std::string db;
  int ranks = 1;  // rank databases merged (one PROF_ tree each)
  std::map<int, int> device_ranks;  // device -> rank, where the recording knows it
  std::map<int, HostDevice> device_hosts;  // ranks recorded on several hosts: each device's host
  // How every surface names a device: "rank 9 (device 1 of c-1)", "rank 3 (device 3)", "device 3".
  std::string rank_label(int device) const;
  std::string host_of(int device) const;  // "" unless recorded on several hosts
  std::vector<std::string> hosts() const;
  // "8x910B2", for several hosts "2 hosts of 8x910B2", for one host's ranks of a cluster
  // "c-1, a host of 8x910B2".
  std::string node_label() const;  // in device order, each once
  std::string size_label() const;  // what the recording covers: "16 ranks", "8 devices", "1 device"
  std::string schema_version, producer;
  bool complete = true;
  std::vector<std::string> damage;  // a damaged recording: what it lacks or has broken (never "complete")
  std::string node_lost;  // the node went away mid-recording: why (EMU_RUN.node_lost; "" when it did not)
  // "complete", "INCOMPLETE: the recorder stopped before finalizing; ..." or "DAMAGED: <what>; ..."
  std::string recording_state() const;
  std::string node, node_spec, command;
  std::string mode;  // the recording: "lossless" or "lossy" (EMU_RUN.mode; older profiles' fast/paced mapped)
  // How it was recorded, as the header says it: the mode, and when a lossless recording lost
  // events, that it did ("lossless until its reader was evicted").
  std::string recorded_as() const;
  std::string pace;  // the run: "paced at speed X" or "fast" (EMU_RUN.speed), "NA" when not recorded
  std::vector<std::pair<int, std::string>> devices;  // id, chip name
  int64_t session_start = 0, session_end = 0;
  int64_t first_task = 0;  // the origin of the "offset" times
  uint64_t tasks = 0;
  uint64_t events_recorded = 0, events_missed = 0;
  bool lossless_lost = false;
  std::optional<int> command_exit;
  std::string job_error;  // the main job ended in error: the runtime's message ("" when it did not)
  // Faults injected while recording (EMU_EVENT fault_injected), one per fault and moment, with
  // the devices it hit: what the emulator did, for the reader to set against the findings.
  struct Fault {
    std::string fault;   // "host-slow", "over-temperature", "link-degraded on link 3-roce"
    std::vector<int> devices;
    int64_t ts = 0;      // Unix ns
    bool before_recording = false;  // in force when the recording started (the recorder noted it)
  };
  std::vector<Fault> faults;
  // "host-down on cx-1 (all 8 NPUs)", "over-temperature on rank 3 (device 3)": the devices by host.
  std::string fault_where(const Fault& f) const;
  std::optional<int64_t> step_filter;
  std::map<std::string, std::string> job;  // the job's settings: allocator, launch, layout (when recorded)
};

struct OpTypeRow {
  std::string op_type, core_type;
  DurationStats stats;
};

struct DeviceOpTypeRow {  // op_statistic: per device
  int device = 0;
  OpTypeRow row;
};

struct OpNameRow {
  std::string name, op_type, core_type, shapes, dtypes;
  DurationStats stats;
  double flops = 0;          // total over the calls
  double input_bytes = 0;    // per call, from shapes x dtypes (0 when unknown)
};

struct TopTask {  // the longest task of one op (name, type, shapes)
  int device = 0;
  int64_t stream = 0, task_id = 0;
  std::string name, op_type, core_type, shapes;
  int64_t start = 0, duration = 0, wait = 0, block_num = 0;
  uint64_t tasks = 1;  // tasks of this op in the selection
  int devices = 1;     // devices they ran on
};

struct StepRow {
  int device = 0;
  int64_t step = 0;
  StepBreakdown b;
  // Pipeline receives (hcom_receive) that started in the step: the time a stage waited for
  // its neighbour, msprof's "Bubble" (0 without pipeline parallelism), ns.
  int64_t bubble = 0;
  // Of `bubble`, the part with no compute running on the device: a part of b.comm_not_overlapped
  // (the raw receive time can overlap another stream's compute), ns.
  int64_t bubble_not_overlapped = 0;
};

struct CommTypeRow {
  std::string op_type;
  DurationStats stats;
};

struct DeviceCommTypeRow {  // communication_statistic: per device
  int device = 0;
  CommTypeRow row;
};

struct CommSizeRow {  // one communicator's calls of one type and size
  std::string group;    // groupName ("N/A" when the recording did not know it)
  std::string op_type;
  int64_t bytes = 0;  // per rank
  int ranks = 1;
  uint64_t count = 0;  // rank-level ops
  double avg_ns = 0;
  double algbw = 0, busbw = 0;  // bytes/s (nccl-tests definitions, reference section 4)
};

struct MemoryRow {
  int device = 0;
  int64_t peak_bytes = 0, peak_ts = 0, first_bytes = 0, last_bytes = 0;
  uint64_t samples = 0;
  uint64_t samples_in_job = 0;  // of those, taken between the device's first task start and last task end
  // The most the recorded processes' allocator held on it, allocated and reserved (NPU_OP_MEM;
  // -1 when it holds no allocation): exact, where the samples may miss a short job.
  int64_t allocated_peak = -1, reserved_peak = -1;
  int64_t capacity_bytes = 0;  // the device's HBM (0 when the recording does not say)
  bool ddr = false;            // the samples are DDR (310P), not HBM
  // Every sample fell outside the job's tasks while its allocator held memory: the sampled
  // columns are the idle device's, the allocator's are the job's (a job shorter than the
  // sampling interval, or a node run fast).
  bool sampled_outside_job() const { return samples > 0 && samples_in_job == 0 && allocated_peak > 0; }
};

struct MemoryPoint {
  int device = 0;
  int64_t ts = 0, bytes = 0;
};

struct ClockPoint {  // the AI-core clock from `ts` on
  int device = 0;
  int64_t ts = 0;
  int mhz = 0;
};

struct ThrottlePeriod {
  int device = 0;
  int64_t start = 0, end = 0;
  bool open = false;  // still throttled when the recording ended
  uint64_t reasons = 0;
  double min_clock_mhz = 0;
  std::map<int, int64_t> time_at_mhz;  // ns the device spent at each AI-core clock in the period
  // The clock averaged over the period's time (the DVFS steps it moved between); the minimum when
  // no time was noted. (The clock most time was spent at was named "mostly at" with 9.6% of it.)
  double mean_clock_mhz() const;
};

// One rank's step, averaged over its steps (ns). Its own work is the step minus the time it sat in
// communication with no compute running: in a synchronous job every rank's step is as long as the
// slowest one's, and the others spend the difference waiting inside the next collective.
struct RankRow {
  int device = 0;
  int rank = -1;  // -1 when the recording does not know it
  int steps = 0;
  double step = 0, computing = 0, communication = 0, comm_exposed = 0, preparing = 0, other_idle = 0;
  double bubble = 0;  // of comm_exposed, its pipeline receives (StepRow::bubble_not_overlapped)
  double receive = 0;  // its pipeline receives, all of their time (StepRow::bubble)
  double work() const { return step - comm_exposed; }
};

struct Finding {
  Finding() = default;
  Finding(std::string id_, std::string text_, std::vector<std::pair<std::string, double>> numbers_ = {})
      : id(std::move(id_)), text(std::move(text_)), numbers(std::move(numbers_)) {}
  std::string id;     // a rule of rules.hpp: data_loader_starvation, unoverlapped_communication, ...
  std::string text;   // one plain-language sentence with its numbers
  std::vector<std::pair<std::string, double>> numbers;  // the numbers behind it, named with units
  std::optional<double> cost_ns_per_step;  // what the cause takes from each step, where estimated
  double step_ns = 0;                      // the average step it is measured against
  std::string severity;                    // info, warning, critical (rules.hpp)
  std::string action;                      // what to do (rules.hpp)
};

struct Report {
  ReportHeader header;
  std::vector<OpTypeRow> op_types;
  std::vector<DeviceOpTypeRow> device_op_types;
  std::vector<OpNameRow> op_names;
  std::vector<TopTask> top_tasks;
  std::vector<OpNameRow> aicpu_ops;
  std::vector<StepRow> steps;
  std::vector<CommTypeRow> comm_types;
  std::vector<DeviceCommTypeRow> device_comm_types;
  std::vector<CommSizeRow> comm_sizes;
  std::vector<MemoryRow> memory;
  std::vector<MemoryPoint> memory_timeline;  // at most ~24 points per device
  std::vector<ThrottlePeriod> throttles;
  std::vector<ClockPoint> clock_timeline;  // per device: the first sample's clock, then each DVFS step
  std::vector<RankRow> ranks;  // by device
  std::vector<Finding> findings;
  // What each rule that estimates a cost measured (ns per step), whether it fired or not: a cause
  // under its rule's threshold still has a cost, which `npu-prof diff` compares against.
  std::map<std::string, double> measured_cost_ns_per_step;
};

}  // namespace npukit::prof
