// Runs a telemetry::Program on a node: one process context per rank, each rank's host side
// issuing its ops in order, all ranks concurrently in virtual time.
//
// The host side is a state machine driven by scheduler callbacks (never by a nested scheduler
// run), so many ranks and many jobs share one node: it issues ops until one blocks the host
// (host_delay, a sync, an allocation's modelled cost) and resumes when that is over. Every step
// ends with an implicit sync of the rank's streams; its start and end are reported. Kernels are
// resolved and priced before anything runs, so an unknown op or bad shape fails the job at
// create() with the runtime's message. The first error (OOM, a timed-out task, a down link...)
// stops every rank; memory is released when the job ends or is cancelled (buffers still held are
// freed through the context first, so the node's observers see a free for every allocation; the
// alloc and free ops themselves are reported by the Context, node_events.hpp). Single-threaded.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "emulator/runtime/node.hpp"
#include "emulator/runtime/runtime.hpp"
#include "telemetry/program.hpp"

namespace npukit::emu {

struct StepReport {
  int rank = 0;
  int64_t step = 0;  // 0-based
  Nanos start = 0;
  Nanos end = 0;
};

// Something a diagnostic op found (a memtest: an HBM page that failed a pattern).
struct Finding {
  int rank = 0;
  int device = 0;
  std::string kind;     // "hbm_bad_page"
  uint64_t offset = 0;  // physical HBM offset of the page
  uint64_t wrote = 0;   // the pattern word written
  uint64_t read = 0;    // what was read back
  std::string text;     // one line for people
};

class ProgramRunner {
 public:
  using StepFn = std::function<void(const StepReport&)>;
  using DoneFn = std::function<void(const Status&)>;

  // Validates devices and resolves every kernel; errors name the rank and op.
  // `label` names the run where it shows (the source of the faults its timeline injects, e.g.
  // "job 3 'overheat-throttle'"); default "job '<program name>'".
  static Result<std::unique_ptr<ProgramRunner>> create(Node& node, telemetry::Program program, std::string label = "");
  ~ProgramRunner();

  // Starts issuing at the node's current time. `on_step` fires per rank per step; `on_done`
  // once, when every rank finished or the first error stopped the job.
  void start(StepFn on_step, DoneFn on_done);
  // Stops issuing, releases device memory; on_done gets "cancelled".
  void cancel();

  bool finished() const { return finished_; }
  const Status& status() const { return status_; }
  const telemetry::Program& program() const { return program_; }
  int64_t steps_done() const;  // steps every rank has completed
  // Peak device memory any rank's allocator held (bytes).
  uint64_t peak_reserved_bytes() const;
  // Per device, the job's peak device memory: in use (as requested) and reserved from the device.
  struct DevicePeak {
    uint64_t allocated = 0, reserved = 0;
  };
  std::map<int, DevicePeak> device_peaks() const;
  const std::vector<Finding>& findings() const { return findings_; }

 private:
  enum class Block { kNone, kWait };
  // What an op needs resolved ahead of time.
  struct Prepared {
    PreparedKernel kernel;
    std::vector<PreparedKernel> variants;  // a kernel with "vary": step k runs variants[k % n]
    CollectiveCall call;
  };
  struct Rank {
    Context* ctx = nullptr;
    std::vector<StreamId> streams;
    std::vector<EventId> events;
    std::vector<EventId> sync_events;  // one per stream, for host-side syncs
    // A program buffer and where it sits in physical HBM: live allocations are modelled as
    // packed from the bottom of the device's memory (`phys` = device use before it).
    struct Buffer {
      DevPtr ptr = 0;
      uint64_t phys = 0;
      uint64_t bytes = 0;
    };
    std::map<std::string, Buffer> buffers;
    // By op index; shared by the ranks that run the same ops (RankProgram::ops_of).
    std::shared_ptr<const std::map<std::size_t, Prepared>> setup_prepared;
    std::shared_ptr<const std::map<std::size_t, Prepared>> step_prepared;
    bool in_setup = true;
    bool drained_for_flush = false;  // the alloc at next_op - 1 already waited for the device
    bool drained_for_free = false;   // the direct free at next_op - 1 already waited for the device
    std::size_t next_op = 0;
    int64_t step = 0;
    Nanos step_start = 0;
    bool step_synced = false;
    int pending_syncs = 0;
    bool done = false;
  };


  ProgramRunner(Node& node, telemetry::Program program);
  Status set_up();
  Status set_up_comms(const std::vector<Context*>& contexts);
  Status schedule_faults();
  void resume(int rank);
  bool advance_phase(int rank);
  Result<PreparedKernel> prepare_kernel(int rank, const telemetry::ProgramOp& op, const nlohmann::json& inputs,
                                        const std::string& where);
  Status prepare_variants(int rank, const telemetry::ProgramOp& op, const std::string& where, Prepared& out);
  Status prepare_ops(int rank, const std::vector<telemetry::ProgramOp>& ops, const char* phase,
                     std::map<std::size_t, Prepared>& out);
  Block execute(int rank, const telemetry::ProgramOp& op, const Prepared* prepared);
  Block sync(int rank, int stream);
  Status memtest(int rank, const telemetry::ProgramOp& op);
  void delay(int rank, Nanos ns);
  Nanos input_wait(int rank, uint64_t samples);
  void fail(Status s);
  void finish_if_done();
  void release();
  const std::string& fault_source() const { return label_; }
  std::map<int, DevicePeak> peaks_;  // of released contexts
  std::string label_;

  Node& node_;
  telemetry::Program program_;
  std::vector<Rank> ranks_;
  std::vector<CommId> comms_;  // program communicator index -> node communicator
  std::map<int, Nanos> input_cursor_;  // host -> when its input pipeline has made every sample taken so far
  std::map<int, int> input_fed_;       // host -> the job's ranks on it that take input
  uint64_t peak_reserved_ = 0;
  std::vector<Finding> findings_;
  StepFn on_step_;
  DoneFn on_done_;
  Status status_;
  bool finished_ = false;
  bool released_ = false;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);  // guards late callbacks
};

}  // namespace npukit::emu
