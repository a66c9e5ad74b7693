#include "emulator/daemon/daemon.hpp"

#include <unistd.h>

#include <fstream>

#include "telemetry/incidents.hpp"
#include "telemetry/naming.hpp"
#include "telemetry/segment.hpp"

namespace npukit::emu {

namespace tf = telemetry;
using nlohmann::json;

Result<std::unique_ptr<Daemon>> Daemon::create(const DaemonOptions& options) {
  NPUKIT_RETURN_IF_ERROR(tf::validate_node_name(options.node_name));
  if (!(options.speed > 0 && options.speed <= kMaxSpeed)) {
    return InvalidArgument("speed must be in (0, 1000], got " + std::to_string(options.speed));
  }
  if (!(options.rate_hz > 0 && options.rate_hz <= kMaxRateHz)) {
    return InvalidArgument("publish rate must be in (0, 1000] Hz, got " + std::to_string(options.rate_hz));
  }
  std::unique_ptr<Daemon> d(new Daemon(options));
  auto node = Node::create({.spec = options.spec, .seed = options.seed});
  if (!node.ok()) return node.status();
  d->node_ = std::move(*node);
  const NodeSpec& spec = d->node_->spec();
  for (int h = 0; spec.is_cluster() && h < spec.hosts; ++h) {
    NPUKIT_RETURN_IF_ERROR(d->open_face(options.node_name + "-" + std::to_string(h), HostView::of_host(*d->node_, h), true));
  }
  NPUKIT_RETURN_IF_ERROR(d->open_face(options.node_name, {}, !spec.is_cluster()));
  return d;
}

// Readers see a complete bus before its socket opens.
Status Daemon::open_face(const std::string& name, HostView view, bool bus) {
  NPUKIT_RETURN_IF_ERROR(tf::validate_node_name(name));
  Face& f = faces_.emplace_back();
  f.name = name;
  f.view = view;
  const std::string control_path = tf::control_socket_path(name);
  if (bus) {
    tf::WriterOptions wo = writer_options_for(*node_, name, view);
    if (clock_base_ns_ == 0) clock_base_ns_ = tf::realtime_ns();
    wo.node_info.start_realtime_ns = clock_base_ns_;
    wo.access = options_.access;
    wo.control_path = control_path;
    auto writer = tf::Writer::create(wo);
    if (!writer.ok()) return writer.status();
    f.writer = std::move(*writer);
    f.publisher = std::make_unique<Publisher>(*node_, *f.writer, view);
    f.publisher->publish(options_.speed, 0);
  }
  tf::ControlServerOptions so;
  so.node = name;
  so.path = control_path;
  so.access = options_.access;
  const Face* face = &f;
  auto server = tf::ControlServer::start(so, [this, face](const tf::Request& r) { return hand_over(r, *face); });
  if (!server.ok()) return server.status();
  f.server = std::move(*server);
  return Status::Ok();
}

Daemon::~Daemon() {
  for (Face& f : faces_) {
    if (f.server) f.server->stop();  // no request can arrive while the node goes away
  }
  jobs_.clear();
  for (Face& f : faces_) {
    f.publisher.reset();
    f.writer.reset();  // unlinks the segment
  }
}

void Daemon::publish_all() {
  bool sampled = false;
  for (Face& f : faces_) {
    if (!f.publisher) continue;
    // A host that is down publishes once more, its host_down incident (readers saw PASS until the
    // heartbeat went stale, then a stale bus and no cause), then nothing: its heartbeat stops.
    const bool down = f.view.one_host(*node_) && node_->host_down(node_->spec().host_of(f.view.first));
    if (down && f.down_published) continue;
    f.down_published = down;
    f.publisher->publish(options_.speed, lag_ns_, !sampled);
    sampled = true;
  }
}

void Daemon::record(tf::EventType type, int device, const std::string& name, std::array<uint64_t, 4> words,
                    const std::string& aux) {
  record_at(type, device, node_->now(), name, words, aux);
}

void Daemon::record_at(tf::EventType type, int device, Nanos ts, const std::string& name,
                       std::array<uint64_t, 4> words, const std::string& aux) {
  for (Face& f : faces_) {
    if (f.publisher) f.publisher->record_at(type, device, ts, name, words, aux);
  }
}

const std::string& Daemon::socket_path() const { return faces_.back().server->path(); }

void Daemon::request_stop() {
  stop_ = true;
  wake_.notify_all();
}

json Daemon::hand_over(const tf::Request& request, const Face& face) {
  auto p = std::make_shared<Pending>();
  p->request = request;
  p->face = &face;
  auto reply = p->reply.get_future();
  {
    std::lock_guard lock(mu_);
    pending_.push_back(p);
  }
  wake_.notify_all();
  if (reply.wait_for(std::chrono::seconds(20)) != std::future_status::ready) {
    return tf::error_reply("the node did not answer within 20 s", "busy");
  }
  return reply.get();
}

std::string Daemon::activity() const {
  std::string detail;
  if (std::string(clock_.phase()) == "serving") {
    std::lock_guard lock(mu_);
    detail = " '" + serving_op_ + "'";
  }
  std::string out = "node thread: " + clock_.describe(detail);
  for (const Face& f : faces_) {
    if (f.server) out += "; control server '" + f.name + "': " + f.server->activity();
  }
  return out;
}

void Daemon::serve_pending() {
  std::deque<std::shared_ptr<Pending>> batch;
  {
    std::lock_guard lock(mu_);
    batch.swap(pending_);
  }
  for (auto& p : batch) {
    {
      std::lock_guard lock(mu_);
      serving_op_ = p->request.op;
    }
    clock_.enter("serving");
    json reply;
    try {
      reply = execute(p->request, *p->face);
    } catch (const std::exception& e) {  // a malformed field type in a request
      reply = tf::error_reply(std::string("invalid request: ") + e.what(), "invalid_argument");
    }
    p->reply.set_value(std::move(reply));
  }
}

bool Daemon::advance_time(std::chrono::steady_clock::time_point publish_at) {
  auto start = std::chrono::steady_clock::now();
  auto wall_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(start - wall_start_).count();
  auto target = virtual_start_ + static_cast<Nanos>(static_cast<double>(wall_ns) * options_.speed);
  bool caught_up = node_->scheduler().run_until(target, std::min(start + kMaxSimulationSlice, publish_at));
  auto took = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start).count();
  Nanos behind = caught_up ? took : static_cast<Nanos>(static_cast<double>(target - node_->now()) / options_.speed);
  lag_ns_ = std::max<Nanos>(0, behind);
  return caught_up;
}

void Daemon::run() {
  wall_start_ = std::chrono::steady_clock::now();
  virtual_start_ = node_->now();
  auto period = std::chrono::nanoseconds(static_cast<int64_t>(1e9 / options_.rate_hz));
  auto next_publish = wall_start_ + period;
  while (!stop_) {
    serve_pending();
    clock_.enter("simulating");
    bool caught_up = advance_time(next_publish);
    auto now = std::chrono::steady_clock::now();
    if (now >= next_publish) {
      clock_.enter("publishing");
      publish_all();
      clock_.enter("tidying jobs");
      cancel_orphaned_jobs();
      release_finished_runners();
      forget_old_jobs();
      next_publish += period;
      if (next_publish <= now) next_publish = now + period;  // fell behind: do not burst
    }
    if (!caught_up) continue;  // more to simulate: serve requests, then go on without sleeping
    clock_.enter("waiting");
    std::unique_lock lock(mu_);
    wake_.wait_until(lock, next_publish, [this] { return stop_ || !pending_.empty(); });
  }
  serve_pending();  // answer what arrived with the stop (the "stop" request itself)
}

// A job whose submitting process is gone (SIGKILL included) would hold its devices and memory for
// ever: it is cancelled, which frees them.
void Daemon::cancel_orphaned_jobs() {
  for (auto& [id, job] : jobs_) {
    if (job.state != "running" || job.owner_pid <= 0 || !job.cancel_reason.empty()) continue;
    if (tf::pid_alive(job.owner_pid)) continue;  // a zombie counts as exited
    job.cancel_reason = "cancelled: its submitting process " + std::to_string(job.owner_pid) + " exited";
    job.runner->cancel();
  }
}

// A finished job keeps what its status reports (peaks, findings), not its runner: the 64 jobs of
// the history held ~730 MB of programs and prepared ops (found by bench/soak.sh). Never inside the
// runner's own callbacks: here, between publishes.
void Daemon::release_finished_runners() {
  for (auto& [id, job] : jobs_) {
    if (job.state == "running" || !job.runner) continue;
    job.device_peaks = job.runner->device_peaks();
    job.findings = job.runner->findings();
    job.peak_reserved_bytes = std::max(job.peak_reserved_bytes, job.runner->peak_reserved_bytes());
    job.runner.reset();
  }
}

void Daemon::forget_old_jobs() {
  constexpr std::size_t kKeepFinished = 64;
  std::size_t finished = 0;
  for (auto it = jobs_.rbegin(); it != jobs_.rend(); ++it) finished += it->second.state != "running";
  for (auto it = jobs_.begin(); it != jobs_.end() && finished > kKeepFinished;) {
    if (it->second.state != "running") {
      it = jobs_.erase(it);
      --finished;
    } else {
      ++it;
    }
  }
}

json Daemon::status_json(const Face& face) const {
  int running = 0;
  for (const auto& [id, j] : jobs_) running += j.state == "running";
  const HostView view = face.view.on(*node_);
  json faults = json::array();
  for (const ActiveFault& f : node_->active_faults()) {
    if (f.device < view.first || f.device >= view.first + view.count) continue;  // another host's
    faults.push_back({{"device", f.device - view.first}, {"fault", fault_name(f.kind)}, {"source", f.source}, {"since_ns", f.since}});
    if (f.link) faults.back()["link"] = telemetry::link_ends_name(f.device - view.first, f.peer < 0 ? f.peer : f.peer - view.first);
  }
  const bool host = face.view.one_host(*node_);
  json hosts = json::array();  // a cluster's face: its hosts' buses, in host order
  for (const Face& f : faces_) {
    if (&f != &face && f.writer && !host) hosts.push_back(f.name);
  }
  json reply = {{"ok", true},
          {"node", face.name},
          {"spec", host ? node_->spec().host_spec : node_->spec().name},
          {"devices", view.count},
          {"pid", static_cast<int>(getpid())},
          {"virtual_time_ns", node_->now()},
          {"speed", options_.speed},
          {"lag_ns", lag_ns_},
          {"jobs_running", running},
          {"jobs", jobs_.size()},
          {"faults", faults}};
  if (node_->spec().is_cluster()) {
    reply["devices_per_host"] = node_->spec().devices_per_host();
    if (host) reply["device_base"] = view.first;
    else reply["hosts"] = hosts;
  }
  return reply;
}

}  // namespace npukit::emu
