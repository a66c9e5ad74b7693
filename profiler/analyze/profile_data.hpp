// ProfileData: one recording loaded for analysis (report, export, diff) — every task with its
// op fields as STRING_IDS ids, the collectives, step windows, overlap, memory samples and node
// events. Loading validates that the file is a profile database this tool can read and says
// plainly what is wrong otherwise ("<path>: not a profile database (no META_DATA table)").
//
// Thread-safety: a loaded ProfileData is an immutable value.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <optional>
#include <string>
#include <vector>

#include "profiler/analyze/host_device.hpp"
#include "profiler/store/derive.hpp"
#include "profiler/store/intervals.hpp"
#include "profiler/store/sqlite_db.hpp"

namespace npukit::prof {

// One device task. 112 bytes: a recording holds millions, so the STRING_IDS ids are 32-bit
// (a database's ids are row numbers; one past int32 is read as a missing string, see load_tasks).
struct TaskRecord {
  using Id = int32_t;
  int64_t stream = 0;
  int64_t task_id = 0;
  int64_t global_task_id = 0;
  int64_t connection_id = 0;
  int64_t start = 0;  // Unix ns
  int64_t end = 0;
  double flops = 0;
  int32_t device = 0;
  Id task_type = 0;  // STRING_IDS ids; -1 = none (non-kernel tasks)
  Id name = -1;
  Id op_type = -1;
  Id shapes = -1;
  Id dtypes = -1;
  Id formats = -1;
  Id out_shapes = -1;
  Id out_dtypes = -1;
  Id out_formats = -1;
  Id state = -1;  // OP State: "static" / "dynamic" ("N/A" from older recordings)
  Id hf32 = -1;   // HF32 Eligible: "YES" / "NO"
  int32_t block_num = 0;
  int64_t duration() const { return end - start; }
};

struct CollectiveRecord {
  int32_t device = 0;
  int64_t op_name = 0;  // STRING_IDS
  int64_t op_type = 0;
  int64_t group = -1;   // STRING_IDS: groupName ("N/A" when the recording did not know it)
  int64_t algorithm = -1;  // STRING_IDS: algType ("MESH", "RING"; "N/A" when unknown)
  int64_t start = 0, end = 0;
  int64_t count = 0;    // COMMUNICATION_OP.count: elements (bytes when data_type is N/A)
  int64_t data_type = 65534;  // ENUM_HCCL_DATA_TYPE
  int64_t bytes = 0;    // per rank
  int ranks = 1;        // rankSize: the communicator's size
  // A Send or Receive: its transfer's ends, ranks in the communicator (its one
  // COMMUNICATION_TASK_INFO row; -1 otherwise, and in recordings from before peers were known).
  int32_t src_rank = -1, dst_rank = -1;
};

struct MemorySample {
  int32_t device = 0;
  int64_t ts = 0;
  int64_t bytes = 0;
  bool ddr = false;  // NPU_MEM.ddr (a 310P's memory), not .hbm
};

struct NodeEvent {
  int32_t device = -1;
  int64_t ts = 0;
  std::string type;
  uint64_t a = 0, b = 0, c = 0, d = 0;
  std::string name, message;  // EMU_EVENT.name and .message as text ("" when none)
};

struct LinkRecord {  // EMU_LINK: one direction of a node link
  int64_t id = 0;
  int device_a = -1, device_b = -1;  // -1: the host side
  std::string kind;                  // "HCCS", "PCIE", "SYS"
  double peak_bytes_per_s = 0;       // line rate
  double latency_ns = 0;             // one transfer's fixed cost (0 in profiles from before 2026-11-27)
  double least_rate_percent = 100;   // the lowest rate it trained at in any counter sample of the
                                     // recording (EMU_COUNTER npu_link_rate_percent), % of line rate
};

struct LaunchRecord {  // CANN_API
  int64_t connection_id = 0;
  int64_t start = 0, end = 0;
  int64_t type = 0;  // ENUM_API_TYPE id
  int64_t global_tid = 0;
  int64_t name = 0;  // STRING_IDS
};

struct CounterSample {
  int32_t device = -1;
  std::string name;  // track name with unit, e.g. "npu_power_watts", "hbm_bandwidth_bytes_per_s"
  int64_t ts = 0;
  double value = 0;
};

struct LoadOptions {
  bool launches = false;  // CANN_API rows (the Chrome export's host threads and flows)
  bool counters = false;  // sampled counters (the Chrome export's counter tracks)
  std::optional<int> rank;  // only this rank's database of a multi-rank recording
  std::set<int> ranks;      // only these ranks' databases (empty: all); each must be there
};

struct ProfileData {
  std::string db_path;  // the database, or the directory of a multi-rank recording
  int ranks = 1;        // databases merged into this one (merge.hpp)
  std::map<std::string, std::string> meta;  // META_DATA
  std::map<std::string, std::string> run;   // EMU_RUN
  std::vector<std::string> strings;         // STRING_IDS, by id
  std::vector<bool> string_known;           // by id: STRING_IDS has the row (holes read as "")
  std::map<int, std::string> npu_names;     // NPU_INFO
  std::map<int, int> device_ranks;          // RANK_DEVICE_MAP: device -> rank (ranks >= 0 only)
  // Ranks recorded on several hosts of a cluster (merge_ranks): devices carry their cluster-wide
  // ids (the host's EMU_RUN device_base + its own id) and this names each one's host.
  std::map<int, HostDevice> device_hosts;
  int64_t session_start = 0, session_end = 0;
  bool complete = false;
  std::vector<std::string> damage;  // what a damaged database lacks or has broken ("no EMU_EVENT table")
  std::vector<TaskRecord> tasks;  // by globalTaskId
  std::vector<CollectiveRecord> collectives;
  std::optional<int64_t> main_job;
  std::map<std::string, std::string> job_settings;  // the main job's: allocator, launch, layout
  std::vector<StepWindow> steps;
  std::map<int, Overlap> overlap;  // per device, from the tasks (as finalize derives OVERLAP_ANALYSIS)
  std::vector<MemorySample> memory;
  std::vector<NodeEvent> events;  // EMU_EVENT without alloc/free
  std::map<int64_t, LinkRecord> links;  // EMU_LINK by linkId (each rank's database holds its own)
  std::map<int, int64_t> hbm_capacity;  // per device, bytes (the npu_hbm_total_bytes counter)
  // Per device, the most any recorded process's allocator held (NPU_OP_MEM's totals, bytes): exact
  // at every alloc and free, where the memory samples can fall outside a short job.
  struct AllocatorPeak {
    int64_t allocated = 0;
    int64_t reserved = 0;
  };
  std::map<int, AllocatorPeak> allocator_peak;
  uint64_t alloc_events = 0;      // NPU_OP_MEM alloc rows
  struct AllocCall {  // a device malloc or free and what it cost the host
    int32_t device = 0;
    int64_t ts = 0;
    int64_t host_ns = 0;
  };
  std::vector<AllocCall> alloc_calls;
  // Per device, the first counter sample's throttle reasons and AI-core clock: a device already
  // throttled when the recording began changes nothing the events would show.
  struct ClockState {
    uint64_t reasons = 0;
    int clock_mhz = 0;
  };
  std::map<int, ClockState> initial_clock;
  std::vector<LaunchRecord> launches;   // with LoadOptions::launches
  std::vector<CounterSample> counters;  // with LoadOptions::counters

  const std::string& str(int64_t id) const;  // "" for -1 or an unknown id
  int64_t find_string(const std::string& value) const;  // -1 when absent
  std::string run_value(const std::string& key, const std::string& fallback = "") const;
  int rank_of(int device) const;  // RANK_DEVICE_MAP's rank, else the device id
};

// Opens `path` (a directory of one recording's PROF_ trees, a PROF_ dir or a .db;
// prof_layout.hpp) and loads it, every rank merged into one ProfileData (merge.hpp) unless
// options.rank picks one. Errors: NotFound (missing path), InvalidArgument (not a SQLite file,
// not a profile database, unsupported schema, corrupt, no such rank).
Result<ProfileData> load_profile(const std::string& path, const LoadOptions& options = {});

}  // namespace npukit::prof
