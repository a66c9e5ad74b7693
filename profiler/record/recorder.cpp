#include "profiler/record/recorder.hpp"

#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <optional>
#include <set>
#include <thread>
#include <unordered_map>

#include "profiler/record/child_process.hpp"
#include "profiler/record/counter_sampler.hpp"
#include "profiler/record/event_mapper.hpp"
#include "profiler/record/event_pump.hpp"
#include "profiler/record/rank_sinks.hpp"
#include "profiler/store/prof_layout.hpp"
#include "profiler/store/schema.hpp"
#include "telemetry/client.hpp"
#include "telemetry/naming.hpp"

namespace npukit::prof {

namespace tf = telemetry;
using Clock = std::chrono::steady_clock;

namespace {

int64_t realtime_now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::string join(const std::vector<std::string>& words) {
  std::string out;
  for (const std::string& w : words) out += (out.empty() ? "" : " ") + w;
  return out;
}

// One bus a recording reads: the node, or one host of a cluster (each host publishes its own).
struct Source {
  std::string node;
  std::unique_ptr<tf::Client> client;
  std::unique_ptr<tf::Client> sampling;     // the pump thread's own, for its counter samples (until the pump takes it)
  std::unique_ptr<tf::EventCursor> cursor;  // until the pump takes it
  std::unique_ptr<EventPump> pump;
  std::unordered_map<uint32_t, std::string> strings;  // bus string ids seen so far
  std::optional<RankSinks> sinks;                     // one PROF_ tree per device of the bus
  std::optional<tf::Snapshot> first;                  // at open
  std::set<uint64_t> open_jobs;
  uint64_t events = 0, missed = 0;
  // The host its ranks ran on (HOST_INFO, info.json hostUid): this machine, or, for a cluster's
  // hosts (one bus each), the emulated host: its bus name, and a uid of its own derived from this
  // machine's, so that tools grouping ranks by host see the cluster's hosts, not one.
  std::string host_uid, host_name;
};

class Recording {
 public:
  Recording(const RecordOptions& options, const std::atomic<bool>* stop) : o_(options), stop_(stop) {}
  Status open();
  Status start_command();
  Status run();
  Result<RecordResult> finish();

 private:
  Status open_bus(Source& src);
  Status open_sinks(const std::vector<ProfPaths>& dirs, std::size_t& next_dir, Source& src);
  Status note_active_faults(Source& src);
  Status describe_run(Source& src, const tf::Snapshot& snapshot);
  Status ingest(Source& src, const PumpBatch& batch);
  Status step();
  bool done(bool caught_up);
  bool caught_up() const;
  bool drained() const;
  bool jobs_open() const;
  void note_stale(const Source& src, const tf::Snapshot& snapshot);
  void look_for_lost_node();
  const RecordOptions& o_;
  const std::atomic<bool>* stop_;
  std::vector<Source> sources_;
  std::optional<ChildProcess> child_;
  Clock::time_point deadline_ = Clock::time_point::max();
  bool stopping_ = false;
  bool reading_done_ = false;
  bool work_ended_ = false;
  std::string stale_;  // "<node>: <reason>" of the first bus that went stale
  RecordResult result_;
};

Status Recording::open_bus(Source& src) {
  // An in-process writer lives as long as this process: no heartbeat staleness for it.
  auto stale_after = o_.backend == "inprocess" ? std::chrono::nanoseconds(0) : std::chrono::nanoseconds(std::chrono::seconds(2));
  auto client = tf::open_client(o_.backend, {.node = src.node, .stale_after = stale_after});
  if (!client.ok()) return client.status();
  src.client = std::move(*client);
  auto sampling = tf::open_client(o_.backend, {.node = src.node, .stale_after = stale_after});
  if (!sampling.ok()) return sampling.status();
  src.sampling = std::move(*sampling);
  auto cursor = src.client->open_events(o_.lossless);
  if (!cursor.ok()) {
    std::string hint = o_.lossless ? " (lossless recording needs write access to the node's segment: run as the "
                                     "daemon's user, or record with --mode lossy)"
                                   : "";
    return Status(Code::kUnavailable, "cannot read the events of node '" + src.node + "': " +
                                          cursor.status().message() + hint);
  }
  src.cursor = std::move(*cursor);
  auto snap = src.client->snapshot();
  if (!snap.ok()) return snap.status();
  if (snap->stale()) return Status(Code::kUnavailable, "node '" + src.node + "' is stale: " + snap->stale_reason());
  src.first = std::move(*snap);
  return Status::Ok();
}

Status Recording::describe_run(Source& src, const tf::Snapshot& s) {
  auto set = [&](std::string_view k, const std::string& v) { return src.sinks->set_run(k, v); };
  auto speed = s.node_field(tf::fid::kNodeSpeedRatio).number();
  NPUKIT_RETURN_IF_ERROR(set("node", src.node));
  NPUKIT_RETURN_IF_ERROR(set("device_base", std::to_string(s.node().device_base)));
  // One host of a cluster: a report of its ranks alone still names them by host (analyze/merge.cpp).
  if (sources_.size() > 1) NPUKIT_RETURN_IF_ERROR(set("cluster_hosts", std::to_string(sources_.size())));
  NPUKIT_RETURN_IF_ERROR(set("node_spec", s.node().node_spec));
  NPUKIT_RETURN_IF_ERROR(set("topology", s.node().topology));
  if (s.node().inter_group_bytes_per_s > 0) {  // the link between HCCS groups (not among EMU_LINK's)
    NPUKIT_RETURN_IF_ERROR(set("inter_group_bytes_per_s", std::to_string(static_cast<int64_t>(s.node().inter_group_bytes_per_s))));
  }
  NPUKIT_RETURN_IF_ERROR(set("driver_version", s.node().driver_version));
  NPUKIT_RETURN_IF_ERROR(set("clock_base_ns", std::to_string(s.node().start_realtime_ns)));
  NPUKIT_RETURN_IF_ERROR(set("clock", "unix_ns = clock_base_ns + node virtual ns (follows wall time at speed 1)"));
  NPUKIT_RETURN_IF_ERROR(set("speed", speed ? std::to_string(*speed) : "NA"));
  NPUKIT_RETURN_IF_ERROR(set("mode", o_.lossless ? "lossless" : "lossy"));
  NPUKIT_RETURN_IF_ERROR(set("command", o_.attach ? "(attach)" : join(o_.command)));
  NPUKIT_RETURN_IF_ERROR(set("recorder_pid", std::to_string(getpid())));
  NPUKIT_RETURN_IF_ERROR(set("events_recorded", "0"));
  NPUKIT_RETURN_IF_ERROR(set("events_missed", "0"));
  NPUKIT_RETURN_IF_ERROR(src.sinks->insert_every(Table::kHostInfo, {std::string_view(src.host_uid), std::string_view(src.host_name)}));
  return src.sinks->describe(s);
}

Status Recording::open_sinks(const std::vector<ProfPaths>& dirs, std::size_t& next_dir, Source& src) {
  const tf::Snapshot& snap = *src.first;
  auto base = static_cast<int64_t>(snap.node().start_realtime_ns);
  auto vt = snap.node_field(tf::fid::kNodeVirtualTimeNs).number();
  std::vector<std::pair<int, int>> hccs_pairs;  // this host's devices joined by HCCS
  for (int l = 0; l < snap.link_count(); ++l) {
    const auto& link = snap.link_info(l);
    if (link.kind == "hccs" && link.device_a >= 0 && link.device_b >= 0) hccs_pairs.emplace_back(link.device_a, link.device_b);
  }
  Source* source = &src;
  auto resolve = [source](uint32_t id) -> Result<std::string> {
    auto it = source->strings.find(id);
    if (it == source->strings.end()) return NotFoundError("bus string id " + std::to_string(id) + " was never resolved");
    return it->second;
  };
  std::vector<ProfPaths> mine(dirs.begin() + static_cast<std::ptrdiff_t>(next_dir),
                              dirs.begin() + static_cast<std::ptrdiff_t>(next_dir + static_cast<std::size_t>(snap.device_count())));
  next_dir += mine.size();
  auto sinks = RankSinks::create({.out_dir = o_.out_dir,
                                  .devices = snap.device_count(),
                                  .realtime_ns = realtime_now_ns(),
                                  .session_start_ns = base + static_cast<int64_t>(vt.value_or(0)),
                                  .clock_base_ns = base,
                                  .link_type = hccs_pairs.empty() ? enum_id::kLinkPcie : enum_id::kLinkHccs,
                                  .device_base = snap.node().device_base,
                                  .host_devices = snap.device_count(),
                                  .hccs_pairs = std::move(hccs_pairs),
                                  .dirs = std::move(mine)},
                                 resolve);
  if (!sinks.ok()) return sinks.status();
  src.sinks.emplace(std::move(*sinks));
  for (RankSink& s : src.sinks->sinks()) {
    NPUKIT_RETURN_IF_ERROR(write_device_info(s.paths.prof_dir, s.device, -1, src.host_uid));
  }
  NPUKIT_RETURN_IF_ERROR(src.sinks->begin_batch());
  NPUKIT_RETURN_IF_ERROR(describe_run(src, snap));
  NPUKIT_RETURN_IF_ERROR(src.sinks->sample(snap));
  NPUKIT_RETURN_IF_ERROR(src.sinks->commit_batch());
  NPUKIT_RETURN_IF_ERROR(note_active_faults(src));
  std::shared_ptr<tf::Client> sampling = std::move(src.sampling);
  auto sample = [sampling]() -> std::optional<tf::Snapshot> {
    auto s = sampling->snapshot();
    if (!s.ok()) return std::nullopt;
    return std::move(*s);
  };
  src.pump = std::make_unique<EventPump>(std::move(src.cursor), o_.queue_events / sources_.size(), sample, o_.sample_interval);
  return Status::Ok();
}

// The faults already in force when the recording starts (the node's status), as fault_injected
// events: a profile of a run on a degraded node says so. Each is stamped at the recording's start,
// the time it began in the event's b (stamped then, it stretched that host's session back to the
// injection, 773 s for a recording of 41 s). Best effort: a node that does not answer status
// leaves them out.
Status Recording::note_active_faults(Source& src) {
  auto reply = src.client->control({{"op", "status"}});
  if (!reply.ok() || !reply->value("ok", false) || !(*reply)["faults"].is_array()) return Status::Ok();
  std::vector<tf::Event> events;
  std::optional<double> now;  // the bus's virtual time at the recording's start
  if (src.first) now = src.first->node_field(tf::fid::kNodeVirtualTimeNs).number();
  uint32_t id = 0xFFFFF000u;  // string ids the bus never hands out (it counts up from 1)
  for (const auto& f : (*reply)["faults"]) {
    if (!f.is_object() || !f["fault"].is_string() || !f["device"].is_number_integer()) continue;
    std::string name = f["fault"].get<std::string>();
    if (f.contains("link") && f["link"].is_string()) name += " on link " + f["link"].get<std::string>();
    src.strings[id] = name;
    tf::Event e;
    e.type = tf::EventType::kFaultInjected;
    e.device = f["device"].get<int>();
    const uint64_t since = f.value("since_ns", uint64_t{0});
    e.ts_ns = now ? std::max(since, static_cast<uint64_t>(*now)) : since;
    e.name_id = id++;
    e.words = {1, since, 0, 0};  // a = 1: already in force when the recording started; b: since
    events.push_back(e);
  }
  if (events.empty()) return Status::Ok();
  return src.sinks->write({.events = &events, .snapshot = nullptr, .run = {}}, 1);
}

Status Recording::open() {
  // The node's bus, or, for a cluster's name (a control socket without a bus), every host's.
  std::vector<std::string> buses{o_.node};
  sources_.resize(1);
  sources_[0].node = o_.node;
  if (Status own = open_bus(sources_[0]); !own.ok()) {
    auto cluster = o_.backend == "shm" ? tf::open_cluster(o_.node, std::chrono::seconds(5)) : Result<tf::ClusterFace>(own);
    if (!cluster.ok()) return own;
    buses = cluster->hosts();
    sources_ = std::vector<Source>(buses.size());
    for (std::size_t i = 0; i < sources_.size(); ++i) {
      sources_[i].node = buses[i];
      NPUKIT_RETURN_IF_ERROR(open_bus(sources_[i]));
    }
  }
  int devices = 0;
  const std::string machine_uid = host_uid();
  for (Source& src : sources_) {
    devices += src.first->device_count();
    src.host_uid = machine_uid, src.host_name = host_name();
    if (sources_.size() == 1) continue;
    char hex[17];
    std::snprintf(hex, sizeof hex, "%016zx", std::hash<std::string>{}(machine_uid + "/" + src.node));
    src.host_uid = hex, src.host_name = src.node;
  }
  // Every bus's trees in one go: one recording (one timestamp and tag), numbered in bus order.
  auto dirs = create_prof_dirs(o_.out_dir, realtime_now_ns(), devices);
  if (!dirs.ok()) return dirs.status();
  std::size_t next_dir = 0;
  for (Source& src : sources_) NPUKIT_RETURN_IF_ERROR(open_sinks(*dirs, next_dir, src));
  return Status::Ok();
}

Status Recording::start_command() {
  if (o_.attach) {
    deadline_ = Clock::now() + o_.duration;
    return Status::Ok();
  }
  auto child = ChildProcess::spawn(o_.command, {"NPU_NODE=" + o_.node, std::string(tf::kRecorderNodeEnv) + "=" + o_.node});
  if (!child.ok()) return child.status();
  child_.emplace(std::move(*child));
  return Status::Ok();
}

Status Recording::ingest(Source& src, const PumpBatch& batch) {
  src.missed += batch.missed;
  result_.missed += batch.missed;
  if (batch.lossless_lost && !result_.lossless_lost) {
    result_.lossless_lost = true;
    std::fprintf(o_.log, "npu-prof: warning: node '%s' evicted the recorder (it fell behind); continuing lossy\n",
                 src.node.c_str());
  }
  if (batch.events.empty() && !batch.snapshot && batch.missed == 0) return Status::Ok();
  for (const auto& [id, text] : batch.strings) src.strings[id] = text;
  for (const tf::Event& e : batch.events) {
    if (e.type == tf::EventType::kJobStarted) src.open_jobs.insert(e.words[0]);
    if (e.type == tf::EventType::kJobFinished) src.open_jobs.erase(e.words[0]);
  }
  src.events += batch.events.size();
  result_.events += batch.events.size();
  if (batch.snapshot) note_stale(src, *batch.snapshot);  // taken by the pump as it read these events
  // While the recorded work runs, one background writer leaves the node its core; once it has
  // ended, every core writes (each rank's database on one thread).
  int threads = work_ended_ ? static_cast<int>(std::max(1u, std::thread::hardware_concurrency())) : 1;
  return src.sinks->write({.events = &batch.events,
                           .snapshot = batch.snapshot ? &*batch.snapshot : nullptr,
                           .run = {{"events_recorded", std::to_string(src.events)},
                                   {"events_missed", std::to_string(src.missed)}}},
                          threads);
}

void Recording::note_stale(const Source& src, const tf::Snapshot& snapshot) {
  if (snapshot.stale() && stale_.empty()) {
    stale_ = (sources_.size() > 1 ? src.node + ": " : "") + snapshot.stale_reason();
  }
}

// A command that failed may have failed because its node went away: npu-run sees the daemon's
// socket close at once, while the bus says so only at the recorder's next sample and pid check
// (up to 100 ms later). Look again for a moment before the recording is called complete.
void Recording::look_for_lost_node() {
  if (!stale_.empty() || result_.command_exit <= 0) return;
  auto until = Clock::now() + std::chrono::milliseconds(200);
  while (stale_.empty() && Clock::now() < until) {
    for (const Source& src : sources_) {
      if (auto s = src.client->snapshot(); s.ok()) note_stale(src, *s);
    }
    if (stale_.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

bool Recording::caught_up() const {
  for (const Source& s : sources_) {
    if (!s.pump->caught_up()) return false;
  }
  return true;
}

bool Recording::drained() const {
  for (const Source& s : sources_) {
    if (!s.pump->drained()) return false;
  }
  return true;
}

bool Recording::jobs_open() const {
  for (const Source& s : sources_) {
    if (!s.open_jobs.empty()) return true;
  }
  return false;
}

// Whether reading should end. Also notes when the recorded work ended (the command exited, a
// stop was asked for, the duration passed): writing then continues at normal priority.
bool Recording::done(bool caught_up) {
  auto now = Clock::now();
  if (!stopping_ && stop_ != nullptr && stop_->load()) {
    stopping_ = true;
    work_ended_ = true;
    if (child_) child_->signal(SIGTERM);
    deadline_ = std::min(deadline_, now + std::chrono::milliseconds(500));
  }
  if (!stale_.empty() || now >= deadline_) return work_ended_ = true;
  if (!child_) return stopping_ && caught_up;
  auto exit = child_->poll();
  if (!exit) return false;
  if (result_.command_exit < 0) {
    result_.command_exit = *exit;
    work_ended_ = true;
    deadline_ = std::min(deadline_, now + o_.drain);
  }
  return caught_up && !jobs_open();
}

// One pop-and-write step per bus; ends reading once the recording should end.
Status Recording::step() {
  auto wait = std::chrono::milliseconds(50) / static_cast<int>(sources_.size());
  for (Source& src : sources_) {
    std::optional<PumpBatch> batch = src.pump->pop(wait);
    NPUKIT_RETURN_IF_ERROR(ingest(src, batch ? *batch : PumpBatch{}));
  }
  // Once the recording should end, read up to each ring's head, then write all that was read.
  if (!reading_done_ && done(caught_up())) {
    reading_done_ = true;
    for (Source& src : sources_) {
      if (stale_.empty()) src.pump->finish();
      else src.pump->stop();
    }
  }
  return Status::Ok();
}

Status Recording::run() {
  // While the recorded work runs, write from a background-priority thread: the workload keeps
  // the CPU and the queue absorbs the difference. The rest is written at normal priority.
  Status recording;
  std::thread background([&] {
    if (o_.background_priority) ::setpriority(PRIO_PROCESS, static_cast<id_t>(::gettid()), 19);
    while (recording.ok() && !reading_done_ && !work_ended_) recording = step();
  });
  background.join();
  NPUKIT_RETURN_IF_ERROR(recording);
  while (!reading_done_ || !drained()) NPUKIT_RETURN_IF_ERROR(step());
  if (!stale_.empty()) {
    std::fprintf(o_.log, "npu-prof: warning: node '%s' went stale (%s); the recording ends here\n", o_.node.c_str(),
                 stale_.c_str());
  }
  return Status::Ok();
}

Result<RecordResult> Recording::finish() {
  if (child_) result_.command_exit = child_->wait();
  look_for_lost_node();
  const bool busy = std::any_of(sources_.begin(), sources_.end(), [](const Source& s) { return s.sinks->any_busy(); });
  for (Source& src : sources_) {
    RankSinks& sinks = *src.sinks;
    NPUKIT_RETURN_IF_ERROR(sinks.begin_batch());
    if (auto snap = src.client->snapshot(); snap.ok()) NPUKIT_RETURN_IF_ERROR(sinks.sample(*snap));
    result_.samples = std::max(result_.samples, sinks.samples());
    NPUKIT_RETURN_IF_ERROR(sinks.set_run("lossless_lost", result_.lossless_lost ? "1" : "0"));
    NPUKIT_RETURN_IF_ERROR(sinks.set_run("samples", std::to_string(sinks.samples())));
    NPUKIT_RETURN_IF_ERROR(sinks.set_run("command_exit", std::to_string(result_.command_exit)));
    // The node died or stalled mid-recording: what came before is kept, the report says INCOMPLETE.
    NPUKIT_RETURN_IF_ERROR(sinks.set_run("node_lost", stale_));
    NPUKIT_RETURN_IF_ERROR(sinks.commit_batch());
    auto stats = sinks.finalize(src.host_uid, busy);
    if (!stats.ok()) return stats.status();
    result_.finalize.orphan_launches += stats->orphan_launches;
    result_.finalize.overlap_rows += stats->overlap_rows;
    result_.finalize.left_in_wal += stats->left_in_wal;
    result_.finalize.steps = std::max(result_.finalize.steps, stats->steps);
    for (RankSink& s : sinks.sinks()) {
      result_.ranks.push_back({s.paths.db, s.paths.prof_dir, s.device, sinks.rank_of(s.device)});
    }
  }
  result_.out_dir = o_.out_dir;
  return result_;
}

}  // namespace

Result<RecordResult> record(const RecordOptions& options, const std::atomic<bool>* stop) {
  if (!options.attach && options.command.empty()) return InvalidArgument("record: give a command after --, or --attach");
  if (Status s = tf::validate_node_name(options.node); !s.ok()) return s;
  // A command that cannot run is refused before any rank's tree is created (it left 8 unfinished
  // PROF_ trees behind, and the next recording into the directory could not be reported).
  if (!options.attach) NPUKIT_RETURN_IF_ERROR(ChildProcess::check_runnable(options.command.front()));
  Recording r(options, stop);
  NPUKIT_RETURN_IF_ERROR(r.open());
  NPUKIT_RETURN_IF_ERROR(r.start_command());
  NPUKIT_RETURN_IF_ERROR(r.run());
  return r.finish();
}

Result<std::chrono::nanoseconds> parse_duration(const std::string& text) {
  std::size_t used = 0;
  double value = 0;
  try {
    value = std::stod(text, &used);
  } catch (...) {
    used = 0;
  }
  std::string unit = text.substr(used);
  double scale = unit.empty() || unit == "s" ? 1e9 : unit == "ms" ? 1e6 : unit == "m" ? 60e9 : unit == "h" ? 3600e9 : -1;
  if (used == 0 || scale < 0 || !(value > 0)) {
    return InvalidArgument("invalid duration '" + text + "': use e.g. 10s, 500ms, 2m");
  }
  return std::chrono::nanoseconds(static_cast<int64_t>(value * scale));
}

}  // namespace npukit::prof
