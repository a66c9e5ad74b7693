// The npu-emud daemon: hosts one emulated node in paced mode, publishes it on the telemetry bus
// and serves control requests (submit programs, list/cancel jobs, inject/clear faults, reset,
// set power limit, stop, and `reference`: what a healthy device of the node achieves, for the
// diagnostics). A job's status carries its `findings` (what memtest ops found, program_runner.hpp).
//
// Threads: the node thread (run()) owns the Node, the Publisher and every job; the control
// server's thread only hands requests over (a queue) and waits for the node thread's reply, so
// nothing of the emulator is ever touched from two threads. Virtual time follows wall time x
// speed: the node thread advances the scheduler to the wall-mapped time, publishes at `rate_hz`,
// and sleeps until the next publish or the next request. Lag (virtual time falling behind) is
// published as npu_node_lag_ns.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "emulator/daemon/accounting.hpp"
#include "telemetry/phase_clock.hpp"
#include "emulator/runtime/node.hpp"
#include "emulator/runtime/job_steps.hpp"
#include "emulator/runtime/program_runner.hpp"
#include "emulator/daemon/publisher.hpp"
#include "telemetry/control.hpp"
#include "telemetry/writer.hpp"

namespace npukit::emu {

// The bounds of --speed and --rate: (0, kMaxSpeed] virtual s per wall s, (0, kMaxRateHz] Hz.
inline constexpr double kMaxSpeed = 1000;
inline constexpr double kMaxRateHz = 1000;

struct DaemonOptions {
  std::string node_name = "npukit";
  std::string spec = "8x910B2";
  double speed = 1.0;
  double rate_hz = 10.0;
  uint64_t seed = 0;
  telemetry::Access access;
};

// One submitted program and what is known about its progress.
struct Job {
  int id = 0;
  std::string name;
  uint32_t pid = 0;
  int owner_pid = 0;              // the process that submitted it: the job dies with it (0: unknown)
  std::string cancel_reason;      // why the daemon cancelled it
  std::string state = "running";  // running, done, failed, cancelled
  std::string error;
  int64_t steps_total = 0;
  std::vector<double> step_ms;    // the job's step times (every rank done), in virtual ms
  JobSteps steps;                 // what step_ms is made from
  Nanos started_ns = 0;
  Nanos finished_ns = 0;
  uint64_t peak_reserved_bytes = 0;
  int exit_code = -1;        // 0 done, 1 failed, 2 cancelled; -1 while running
  JobAccount account;        // accounting.hpp
  std::unique_ptr<ProgramRunner> runner;  // released once the job ended (its program is large)
  std::map<int, ProgramRunner::DevicePeak> device_peaks;  // kept from the runner when it is released
  std::vector<Finding> findings;
};

class Daemon {
 public:
  static Result<std::unique_ptr<Daemon>> create(const DaemonOptions& options);
  ~Daemon();

  // Runs the node until stop is requested (a "stop" request, or request_stop()).
  void run();
  // Thread-safe; wakes run().
  void request_stop();

  // The control socket named by the node's name (a cluster's own, which takes global device ids;
  // each host <node>-<h> has its own too).
  const std::string& socket_path() const;
  const Node& node() const { return *node_; }
  // What the node thread and each control server's thread are doing and for how long, for a
  // stall's report: "node thread: serving 'clear' for 5.213 s; longest recent: waiting, 0.051 s;
  // control server 'npukit': polling for 0.2 s; longest recent: ...; 1 connections; fd 9 ...".
  // Thread-safe.
  std::string activity() const;

 private:
  // What one name of the node shows. A single host is one face: its bus and control socket,
  // named by the node. A cluster has a face per host, "<node>-<h>", whose bus and socket show and
  // take that host's devices numbered from 0 as its own npu-smi does; and the cluster's own face,
  // "<node>", a control socket without a bus taking the cluster's device ids.
  struct Face {
    std::string name;
    HostView view;  // count -1: the whole node
    std::unique_ptr<telemetry::Writer> writer;        // none for a cluster's own face
    std::unique_ptr<Publisher> publisher;
    std::unique_ptr<telemetry::ControlServer> server;
    bool down_published = false;  // its host is down and said so once; it publishes nothing more
  };
  struct Pending {
    telemetry::Request request;
    const Face* face = nullptr;
    std::promise<nlohmann::json> reply;
  };

  explicit Daemon(DaemonOptions options) : options_(std::move(options)) {}
  Status open_face(const std::string& name, HostView view, bool bus);
  nlohmann::json hand_over(const telemetry::Request& request, const Face& face);  // control thread
  void serve_pending();                                                          // node thread
  nlohmann::json execute(const telemetry::Request& request, const Face& face);   // node thread
  // Every bus's publisher: publishes, or records an event (each bus keeps its own devices').
  void publish_all();
  void record(telemetry::EventType type, int device, const std::string& name, std::array<uint64_t, 4> words = {},
              const std::string& aux = "");
  void record_at(telemetry::EventType type, int device, Nanos ts, const std::string& name,
                 std::array<uint64_t, 4> words = {}, const std::string& aux = "");
  nlohmann::json submit(const telemetry::Request& request, const Face& face);
  // A job as the control channel shows it; `view`: the host asking (its devices only, in its numbering).
  nlohmann::json job_json(const Job& job, std::size_t since_step, const HostView& view) const;
  nlohmann::json device_request(const telemetry::Request& request, const Face& face);  // publishes after a change
  nlohmann::json device_or_link_request(const telemetry::Request& request, const Face& face);
  nlohmann::json link_request(const telemetry::Request& request, const Face& face);
  nlohmann::json host_request(const telemetry::Request& request, const Face& face);
  nlohmann::json status_json(const Face& face) const;
  nlohmann::json reference_json() const;
  // Simulates up to the wall-mapped virtual time, for at most kMaxSimulationSlice of wall time
  // and never past `publish_at` (requests are served in between, however much a job asks to
  // simulate, and the publish period holds); false when behind.
  bool advance_time(std::chrono::steady_clock::time_point publish_at);
  static constexpr std::chrono::milliseconds kMaxSimulationSlice{20};
  void forget_old_jobs();
  void release_finished_runners();
  void cancel_orphaned_jobs();

  DaemonOptions options_;
  std::unique_ptr<Node> node_;
  std::deque<Face> faces_;  // a deque: a Face's address is its handle while the daemon lives
  // CLOCK_REALTIME at the first bus: every bus of a cluster states the same base for the one
  // virtual clock (profiles map node ns to unix ns with it; per-bus bases skewed the hosts).
  uint64_t clock_base_ns_ = 0;
  std::map<int, Job> jobs_;
  bool accounting_scheduled_ = false;
  // Samples every running job's account every kAccountingSampleNs of virtual time while any runs.
  void schedule_accounting();
  int next_job_ = 1;

  mutable std::mutex mu_;
  std::condition_variable wake_;
  std::deque<std::shared_ptr<Pending>> pending_;
  std::atomic<bool> stop_{false};
  // The node thread's phase; the request's op while serving one (under mu_).
  telemetry::PhaseClock clock_;
  std::string serving_op_;
  std::chrono::steady_clock::time_point wall_start_;
  Nanos virtual_start_ = 0;
  Nanos lag_ns_ = 0;
};

}  // namespace npukit::emu
