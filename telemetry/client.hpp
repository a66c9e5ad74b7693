// Client: the one interface every consumer (npu-smi, npu-top, exporter, profiler, probes) uses
// to read a node's bus. Two backends, registered in one explicit list (client_backends()):
//   "shm"        ShmClient: reads the node's shared-memory segment, sends control requests to
//                the daemon's socket. Reattaches by itself when the daemon restarts.
//   "inprocess"  InProcessBus: a writer and readers in this process over a heap segment, with an
//                optional in-process control handler (tests, npu-run --standalone, embedding).
// Both backends share the Writer/Reader code, so snapshots and events behave identically.
//
// Errors: a node that is not running is Unavailable with no_daemon_message(); snapshots of a
// dead or silent writer are stale (not errors).
//
// Thread-safety: snapshot(), open_events() and control() may be called from several threads at
// once on one Client; watch() blocks its calling thread. InProcessBus::writer() belongs to one
// publishing thread (writer.hpp).
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <stop_token>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "telemetry/control.hpp"
#include "telemetry/events.hpp"
#include "telemetry/reader.hpp"
#include "telemetry/snapshot.hpp"
#include "telemetry/writer.hpp"

namespace npukit::telemetry {

struct WatchOptions {
  std::vector<FieldId> fields;  // fields to deliver; other fields read kBlank. Empty: all
  std::chrono::nanoseconds interval = std::chrono::seconds(1);
  uint64_t count = 0;           // snapshots to deliver; 0 = until stopped
  std::stop_token stop;         // stops the watch promptly (checked while sleeping)
};

class Client {
 public:
  virtual ~Client() = default;
  // The backend name ("shm", "inprocess").
  virtual const char* backend() const = 0;
  virtual const std::string& node() const = 0;
  // The node now. A writer that died or stopped publishing gives a stale snapshot; a node
  // stopped cleanly (npu-emud stop) is Unavailable ("node 'x' was stopped; start it with: ...")
  // until one runs under the name again, which the client then follows.
  virtual Result<Snapshot> snapshot() = 0;
  // A cursor starting at the newest event (event_ring.hpp). It stays on the segment it was
  // opened on: after a daemon restart (snapshots go stale, then live again) open a new one.
  virtual Result<std::unique_ptr<EventCursor>> open_events(bool lossless) = 0;
  // Sends one control request (control.hpp) and returns the reply. A reply with "ok": false is
  // still a value; Unavailable means no daemon (or handler) is there to answer.
  virtual Result<nlohmann::json> control(const nlohmann::json& request) = 0;

  // Calls `callback` with a snapshot every `interval` (first one at once) until `count`
  // snapshots were delivered, the stop token fires, or the callback returns false. Fixed-rate:
  // the schedule does not drift with the callback's run time. InvalidArgument for unknown field
  // ids or a non-positive interval; a snapshot error ends the watch with that error.
  Status watch(const WatchOptions& options, const std::function<bool(const Snapshot&)>& callback);
};

struct ClientOptions {
  std::string node = "npukit";
  // Heartbeat staleness threshold (reader.hpp), for both backends: an in-process writer opened
  // through open_client("inprocess") must heartbeat too, or pass 0 to disable the check.
  std::chrono::nanoseconds stale_after = std::chrono::seconds(2);
  std::chrono::milliseconds control_timeout = std::chrono::seconds(30);
};

class ShmClient final : public Client {
 public:
  static Result<std::unique_ptr<Client>> open(const ClientOptions& options);
  const char* backend() const override { return "shm"; }
  const std::string& node() const override { return options_.node; }
  Result<Snapshot> snapshot() override;
  Result<std::unique_ptr<EventCursor>> open_events(bool lossless) override;
  Result<nlohmann::json> control(const nlohmann::json& request) override;

 private:
  explicit ShmClient(ClientOptions options) : options_(std::move(options)) {}
  std::shared_ptr<const Reader> current();

  ClientOptions options_;
  std::mutex mu_;
  std::shared_ptr<const Reader> reader_;
};

// An in-process bus: owns a Writer over a heap segment and hands out Clients reading it.
// Buses are registered by node name for this process while they live, so
// open_client("inprocess", {.node = ...}) finds them.
class InProcessBus : public std::enable_shared_from_this<InProcessBus> {
 public:
  // InvalidArgument for bad options; FailedPrecondition when this process already has a bus
  // with that node name.
  static Result<std::shared_ptr<InProcessBus>> create(const WriterOptions& options);
  ~InProcessBus();

  Writer& writer() { return *writer_; }
  // A client of this bus (keeps the bus alive). Staleness is judged by the heartbeat only when
  // stale_after > 0 (default 0: the writer lives in this process, so it is live until closed).
  std::unique_ptr<Client> client(std::chrono::nanoseconds stale_after = std::chrono::nanoseconds(0));
  // Answers control requests for this bus, through the same dispatch as the socket server
  // (control.hpp); the peer is this process. Unset: control() is Unavailable.
  void set_control_handler(ControlHandler handler);
  // Marks the segment closed: clients' snapshots read stale from now on.
  void close();

 private:
  friend class InProcessClient;
  explicit InProcessBus(std::unique_ptr<Writer> writer) : writer_(std::move(writer)) {}
  Result<nlohmann::json> control(const nlohmann::json& request);

  std::unique_ptr<Writer> writer_;
  std::mutex mu_;
  std::shared_ptr<const ControlDispatcher> dispatcher_;
};

struct ClientBackend {
  std::string_view name;
  std::string_view description;
  Result<std::unique_ptr<Client>> (*open)(const ClientOptions& options);
};
// The explicit backend list, in preference order: {"shm", ...}, {"inprocess", ...}.
std::span<const ClientBackend> client_backends();
// Opens `backend` by name; NotFound lists the known names.
Result<std::unique_ptr<Client>> open_client(std::string_view backend, const ClientOptions& options);

// An emulated cluster's own name (npu-emud start --spec Hx<node>): a control socket without a bus
// of its own, taking cluster-wide device ids; each host publishes its own bus, "<name>-<h>".
struct ClusterFace {
  std::unique_ptr<ControlClient> control;  // connected, for further requests
  nlohmann::json status;                   // its status reply: "hosts" (their bus names), "spec", ...
  std::vector<std::string> hosts() const;
};
// NotFound when nothing answers at `node`'s socket or what answers is not a cluster's face.
Result<ClusterFace> open_cluster(const std::string& node, std::chrono::milliseconds timeout);

}  // namespace npukit::telemetry
