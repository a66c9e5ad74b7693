// RankSinks: where a recording goes, one msprof PROF_ tree per rank (prof_layout.hpp). Each
// device of the node gets its own database, event mapper and counter sampler; a device's events
// go to its database, node-level events (jobs, the node's markers) to every database, so each
// one is a whole msprof profile of its rank.
//
// Ranks: a job_started event lists the job's devices by rank; a device's rank is its place in
// the first job that used it (its device id when no job said). On one host of a cluster, jobs
// list cluster-wide ids: the bus's device d is device_base + d there. At finalize, trees of devices that
// ran no task are removed (unless none did), and every database is finalized, in parallel.
//
// Thread-safety: one thread owns the sinks (finalize() uses worker threads internally).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "profiler/record/counter_sampler.hpp"
#include "profiler/record/event_mapper.hpp"
#include "profiler/store/prof_layout.hpp"
#include "profiler/store/profile_writer.hpp"

namespace npukit::prof {

struct RankSink {
  int device = 0;
  ProfPaths paths;
  std::unique_ptr<ProfileWriter> writer;
  std::unique_ptr<EventMapper> mapper;  // both write through `writer`
  std::unique_ptr<CounterSampler> sampler;
};

struct RankSinkOptions {
  std::string out_dir;
  int devices = 0;
  int64_t realtime_ns = 0;       // names the PROF_ trees
  int64_t session_start_ns = 0;  // opens each SESSION_TIME_INFO
  int64_t clock_base_ns = 0;     // bus time -> Unix ns
  int64_t link_type = 1;         // ENUM_HCCL_LINK_TYPE of collectives without a communicator
  int device_base = 0;           // the bus's device 0 in the cluster's numbering (NodeInfo)
  int host_devices = 0;          // devices per host (a cluster's hosts are alike): rank sends across hosts
  std::vector<std::pair<int, int>> hccs_pairs = {};  // a host's devices (local ids) with an HCCS link a -> b
  // The PROF_ trees, one per device, when the caller made them (several hosts' buses recorded as
  // one collection); empty: created here under out_dir.
  std::vector<ProfPaths> dirs = {};
};

class RankSinks {
 public:
  static Result<RankSinks> create(const RankSinkOptions& options, EventMapper::Resolver resolver);

  // One batch into every database, each in one transaction: the events routed to it, a counter
  // sample of `snapshot` (when given), and the EMU_RUN values. `threads` > 1 writes groups of
  // databases in parallel (each database stays on one thread).
  struct Batch {
    const std::vector<telemetry::Event>* events = nullptr;
    const telemetry::Snapshot* snapshot = nullptr;
    std::vector<std::pair<std::string, std::string>> run;
  };
  Status write(const Batch& batch, int threads);
  Status begin_batch();
  Status commit_batch();
  Status set_run(std::string_view key, std::string_view value);
  Status insert_every(Table table, std::initializer_list<SqlValue> values);
  Status describe(const telemetry::Snapshot& s);
  Status sample(const telemetry::Snapshot& s);
  uint64_t samples() const;
  // Whether any device of this bus ran a task while recording.
  bool any_busy() const;
  // Finalizes every database; returns the summed stats. Afterwards sinks() are the kept ranks:
  // when `recording_busy` (a device of any bus of the recording ran a task), the devices of this
  // bus that ran none have no tree; else (an idle node's recording keeps its counters) all do.
  Result<FinalizeStats> finalize(const std::string& host_uid, bool recording_busy);

  std::vector<RankSink>& sinks() { return sinks_; }
  int rank_of(int device) const;

 private:
  RankSinks() = default;
  Status note_job(const telemetry::Event& e);
  Status write_sink(RankSink& sink, const Batch& batch);
  // What each process on the sink's device holds, from a sample's process table, for the mapper's
  // NPU_OP_MEM.totalReserve (EventMapper::note_reserved).
  static void note_holdings(RankSink& sink, const telemetry::Snapshot& snap);
  Status drop_idle_ranks(bool recording_busy);

  EventMapper::Resolver resolve_;
  std::vector<RankSink> sinks_;     // by device
  std::map<int, int> ranks_;        // cluster-wide device id -> rank, from job_started events
  int device_base_ = 0;
};

}  // namespace npukit::prof
