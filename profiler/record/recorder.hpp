// The recorder: `npu-prof record`. Drains a node's event ring and samples its counters into new
// profile databases, one PROF_ tree per rank (rank_sinks.hpp; prof_layout.hpp for where,
// schema.hpp for what) until the recorded command ends (and the jobs it started finished
// publishing) or, with attach, for a duration.
//
// Modes:
//   fast (lossless)  the cursor registers as a lossless reader: the node's writer waits for the
//                    recorder before overwriting an event, so nothing is lost (the emulator
//                    slows down instead). Needs write access to the node's segment (the
//                    daemon's user or root). If the writer ever evicts the recorder (stalled
//                    past its lossless timeout) the recording continues lossy and says so.
//   paced (lossy)    the recorder never slows the node; events overwritten before it read them
//                    are counted (EMU_RUN events_missed) and reported, never silently lost.
//
// Threads: an EventPump thread drains the bus into memory (event_pump.hpp); a background-
// priority thread (nice 19) maps and writes while the recorded work runs, so a workload sharing
// the CPU keeps it; once the recording ends the calling thread writes the rest and finalizes
// (every rank's database in parallel). Durability: one transaction per database per batch of
// events (and the samples taken with it), WAL mode.
// A recorder killed at any point leaves a database that passes integrity_check, holds every
// committed batch and still says RECORDING_STATE = recording (report calls it incomplete).
//
// Thread-safety: record() runs on the calling thread; `stop` may be set from a signal handler.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "profiler/store/prof_layout.hpp"
#include "profiler/store/profile_writer.hpp"

namespace npukit::prof {

struct RecordOptions {
  std::string out_dir;
  std::string node;                  // the node to record (validated by the caller)
  // The bus client backend (telemetry/client.hpp): "shm" for a daemon's node, "inprocess" for
  // a node embedded in this process (tests, benches, library users).
  std::string backend = "shm";
  std::vector<std::string> command;  // run with NPU_NODE=<node>; empty with attach
  bool attach = false;
  std::chrono::nanoseconds duration{0};  // attach: how long to record
  bool lossless = true;                  // --mode lossless (else lossy)
  std::chrono::milliseconds sample_interval{100};
  // Events held in memory between the bus and SQLite (64 bytes each): the node runs ahead of
  // the database by up to this many events before a lossless recording makes it wait.
  std::size_t queue_events = std::size_t{4} << 20;
  // Write at nice 19 while the recorded work runs (the drain after it runs at normal priority).
  bool background_priority = true;
  // After the command ended: how long to wait for the jobs it started to finish publishing.
  std::chrono::milliseconds drain{3000};
  std::FILE* log = stderr;  // progress and warnings, one line each
};

struct RecordResult {
  std::string out_dir;
  std::vector<RankDb> ranks;  // one PROF_ tree per rank that ran something, in device order
  uint64_t events = 0;
  uint64_t missed = 0;
  bool lossless_lost = false;
  uint64_t samples = 0;
  int command_exit = -1;  // -1: no command
  FinalizeStats finalize;
};

// Errors: Unavailable (no node / stale node / no event access), InvalidArgument (output dir,
// command), Internal (SQLite). `stop` (optional) ends the recording early, cleanly.
Result<RecordResult> record(const RecordOptions& options, const std::atomic<bool>* stop = nullptr);

// "10s", "500ms", "2m", "1h", or plain seconds ("1.5"); InvalidArgument otherwise.
Result<std::chrono::nanoseconds> parse_duration(const std::string& text);

}  // namespace npukit::prof
