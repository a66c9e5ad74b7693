#include "telemetry/client.hpp"

#include <unistd.h>

#include <condition_variable>
#include <map>

#include "telemetry/naming.hpp"

namespace npukit::telemetry {

namespace {

// Sleeps until `deadline` or until `stop` fires; false when stopped.
bool sleep_until(std::chrono::steady_clock::time_point deadline, const std::stop_token& stop) {
  std::mutex m;
  std::condition_variable_any cv;
  std::unique_lock lock(m);
  cv.wait_until(lock, stop, deadline, [] { return false; });
  return !stop.stop_requested();
}

// Live in-process buses of this process, by node name.
struct BusRegistry {
  std::mutex mu;
  std::map<std::string, std::weak_ptr<InProcessBus>> buses;
};
BusRegistry& bus_registry() {
  static BusRegistry r;
  return r;
}

}  // namespace

Status Client::watch(const WatchOptions& options, const std::function<bool(const Snapshot&)>& callback) {
  if (options.interval.count() <= 0) return InvalidArgument("watch interval must be positive");
  for (FieldId id : options.fields) {
    if (find_field(id) == nullptr) return InvalidArgument("watch: unknown field id " + std::to_string(id));
  }
  auto next = std::chrono::steady_clock::now();
  for (uint64_t delivered = 0; options.count == 0 || delivered < options.count; ++delivered) {
    if (options.stop.stop_requested()) return Status::Ok();
    auto snap = snapshot();
    if (!snap.ok()) return snap.status();
    if (!options.fields.empty() && !snap->stale()) SnapshotBuilder(*snap).keep_only(options.fields);
    if (!callback(*snap)) return Status::Ok();
    if (options.count != 0 && delivered + 1 == options.count) break;
    next += options.interval;
    auto now = std::chrono::steady_clock::now();
    if (next < now) next = now;  // the callback overran: skip the missed ticks
    if (!sleep_until(next, options.stop)) return Status::Ok();
  }
  return Status::Ok();
}

// ---- shm backend ----

Result<std::unique_ptr<Client>> ShmClient::open(const ClientOptions& options) {
  NPUKIT_RETURN_IF_ERROR(validate_node_name(options.node));
  auto reader = Reader::open({options.node, options.stale_after});
  if (!reader.ok()) return reader.status();
  std::unique_ptr<ShmClient> c(new ShmClient(options));
  c->reader_ = std::move(*reader);
  return std::unique_ptr<Client>(std::move(c));
}

std::shared_ptr<const Reader> ShmClient::current() {
  std::lock_guard lock(mu_);
  return reader_;
}

Result<Snapshot> ShmClient::snapshot() {
  std::shared_ptr<const Reader> r = current();
  Snapshot s = r->snapshot();
  if (!s.stale() || !r->replaced()) return s;
  // The daemon restarted under the same node name: follow it.
  auto fresh = Reader::open({options_.node, options_.stale_after});
  // Stopped cleanly (closed, its name removed): absent, as a reader opening afresh finds it,
  // not stale for ever. A writer that died leaves its name: that stays stale.
  if (!fresh.ok() && r->closed() && fresh.status().code() == Code::kUnavailable) {
    return Status(Code::kUnavailable, "node '" + options_.node + "' was stopped; start it with: npu-emud start --node-name " +
                                          options_.node);
  }
  if (!fresh.ok()) return s;  // still starting, or gone: report the stale snapshot
  std::shared_ptr<const Reader> next = std::move(*fresh);
  {
    std::lock_guard lock(mu_);
    reader_ = next;
  }
  return next->snapshot();
}

Result<std::unique_ptr<EventCursor>> ShmClient::open_events(bool lossless) {
  return current()->open_events(lossless);
}

Result<nlohmann::json> ShmClient::control(const nlohmann::json& request) {
  std::string path = current()->control_path();
  if (path.empty()) path = control_socket_path(options_.node);
  auto conn = ControlClient::connect(options_.node, path, options_.control_timeout);
  if (!conn.ok()) return conn.status();
  return (*conn)->call(request);
}

// ---- in-process backend ----

class InProcessClient final : public Client {
 public:
  InProcessClient(std::shared_ptr<InProcessBus> bus, std::chrono::nanoseconds stale_after)
      : bus_(std::move(bus)),
        reader_(Reader::attach(bus_->writer(), {bus_->writer().node(), stale_after})) {}
  const char* backend() const override { return "inprocess"; }
  const std::string& node() const override { return reader_->node(); }
  Result<Snapshot> snapshot() override { return reader_->snapshot(); }
  Result<std::unique_ptr<EventCursor>> open_events(bool lossless) override {
    return reader_->open_events(lossless);
  }
  Result<nlohmann::json> control(const nlohmann::json& request) override { return bus_->control(request); }

 private:
  std::shared_ptr<InProcessBus> bus_;
  std::unique_ptr<Reader> reader_;
};

Result<std::shared_ptr<InProcessBus>> InProcessBus::create(const WriterOptions& options) {
  BusRegistry& reg = bus_registry();
  std::lock_guard lock(reg.mu);
  if (auto it = reg.buses.find(options.node); it != reg.buses.end() && !it->second.expired()) {
    return Status(Code::kFailedPrecondition,
                  "this process already has an in-process bus for node '" + options.node + "'");
  }
  auto writer = Writer::create_in_memory(options);
  if (!writer.ok()) return writer.status();
  std::shared_ptr<InProcessBus> bus(new InProcessBus(std::move(*writer)));
  reg.buses[options.node] = bus;
  return bus;
}

InProcessBus::~InProcessBus() {
  BusRegistry& reg = bus_registry();
  std::lock_guard lock(reg.mu);
  auto it = reg.buses.find(writer_->node());
  if (it != reg.buses.end() && it->second.expired()) reg.buses.erase(it);
}

std::unique_ptr<Client> InProcessBus::client(std::chrono::nanoseconds stale_after) {
  return std::make_unique<InProcessClient>(shared_from_this(), stale_after);
}

void InProcessBus::set_control_handler(ControlHandler handler) {
  auto d = handler ? std::make_shared<const ControlDispatcher>(std::move(handler), ::geteuid()) : nullptr;
  std::lock_guard lock(mu_);
  dispatcher_ = std::move(d);
}

void InProcessBus::close() { writer_->close(); }

Result<nlohmann::json> InProcessBus::control(const nlohmann::json& request) {
  std::shared_ptr<const ControlDispatcher> d;
  {
    std::lock_guard lock(mu_);
    d = dispatcher_;
  }
  if (!d) {
    return Status(Code::kUnavailable,
                  "no control handler is attached to the in-process bus '" + writer_->node() + "'");
  }
  return d->handle(request, Peer{::getpid(), ::geteuid(), ::getegid()});
}

// ---- the backend list ----

namespace {

Result<std::unique_ptr<Client>> open_in_process(const ClientOptions& options) {
  std::shared_ptr<InProcessBus> bus;
  {
    BusRegistry& reg = bus_registry();
    std::lock_guard lock(reg.mu);
    if (auto it = reg.buses.find(options.node); it != reg.buses.end()) bus = it->second.lock();
  }
  if (!bus) {
    return Status(Code::kUnavailable, "no in-process bus for node '" + options.node + "' in this process");
  }
  return bus->client(options.stale_after);
}

constexpr ClientBackend kBackends[] = {
    {"shm", "the node's shared-memory segment and control socket (npu-emud)", &ShmClient::open},
    {"inprocess", "a bus inside this process (tests, npu-run --standalone)", &open_in_process},
};

}  // namespace

std::span<const ClientBackend> client_backends() { return kBackends; }

Result<std::unique_ptr<Client>> open_client(std::string_view backend, const ClientOptions& options) {
  std::string known;
  for (const auto& b : kBackends) {
    if (b.name == backend) return b.open(options);
    known += (known.empty() ? "" : ", ") + std::string(b.name);
  }
  return NotFoundError("unknown bus backend '" + std::string(backend) + "' (known: " + known + ")");
}

std::vector<std::string> ClusterFace::hosts() const {
  std::vector<std::string> out;
  for (const auto& h : status.value("hosts", nlohmann::json::array())) {
    if (h.is_string()) out.push_back(h.get<std::string>());
  }
  return out;
}

Result<ClusterFace> open_cluster(const std::string& node, std::chrono::milliseconds timeout) {
  auto control = ControlClient::connect(node, control_socket_path(node), timeout);
  if (!control.ok()) return NotFoundError(control.status().message());
  auto status = (*control)->call({{"op", "status"}});
  if (!status.ok()) return NotFoundError(status.status().message());
  ClusterFace face{std::move(*control), std::move(*status)};
  if (!face.status.value("ok", false) || face.hosts().empty()) return NotFoundError("node '" + node + "' is not a cluster");
  return face;
}

}  // namespace npukit::telemetry
