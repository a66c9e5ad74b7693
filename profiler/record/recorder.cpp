#include "profiler/record/recorder.hpp"

#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <optional>
#include <set>
#include <unordered_map>
#include <thread>

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

class Recording {
 public:
  Recording(const RecordOptions& options, const std::atomic<bool>* stop) : o_(options), stop_(stop) {}
  Status open();
  Status start_command();
  Status run();
  Result<RecordResult> finish();

 private:
  Status open_bus();
  Status describe_run(const tf::Snapshot& snapshot);
  Status ingest(const PumpBatch& batch, bool sample_due);
  Status step(Clock::time_point& next_sample);
  bool done(bool caught_up);
  const RecordOptions& o_;
  const std::atomic<bool>* stop_;
  std::unique_ptr<tf::Client> client_;
  std::unique_ptr<tf::EventCursor> cursor_;  // until the pump takes it
  std::unique_ptr<EventPump> pump_;
  std::unordered_map<uint32_t, std::string> strings_;  // bus string ids seen so far
  std::optional<RankSinks> sinks_;  // one PROF_ tree per device
  std::optional<ChildProcess> child_;
  std::set<uint64_t> open_jobs_;
  Clock::time_point deadline_ = Clock::time_point::max();
  bool stopping_ = false;
  bool reading_done_ = false;
  bool work_ended_ = false;
  std::string stale_;
  RecordResult result_;
};

Status Recording::open_bus() {
  // An in-process writer lives as long as this process: no heartbeat staleness for it.
  auto stale_after = o_.backend == "inprocess" ? std::chrono::nanoseconds(0) : std::chrono::nanoseconds(std::chrono::seconds(2));
  auto client = tf::open_client(o_.backend, {.node = o_.node, .stale_after = stale_after});
  if (!client.ok()) return client.status();
  client_ = std::move(*client);
  auto cursor = client_->open_events(o_.lossless);
  if (!cursor.ok()) {
    std::string hint = o_.lossless ? " (lossless recording needs write access to the node's segment: run as the "
                                     "daemon's user, or record with --mode lossy)"
                                   : "";
    return Status(Code::kUnavailable, "cannot read the events of node '" + o_.node + "': " +
                                          cursor.status().message() + hint);
  }
  cursor_ = std::move(*cursor);
  return Status::Ok();
}

Status Recording::describe_run(const tf::Snapshot& s) {
  auto set = [&](std::string_view k, const std::string& v) { return sinks_->set_run(k, v); };
  auto speed = s.node_field(tf::fid::kNodeSpeedRatio).number();
  NPUKIT_RETURN_IF_ERROR(set("node", o_.node));
  NPUKIT_RETURN_IF_ERROR(set("node_spec", s.node().node_spec));
  NPUKIT_RETURN_IF_ERROR(set("topology", s.node().topology));
  NPUKIT_RETURN_IF_ERROR(set("driver_version", s.node().driver_version));
  NPUKIT_RETURN_IF_ERROR(set("clock_base_ns", std::to_string(s.node().start_realtime_ns)));
  NPUKIT_RETURN_IF_ERROR(set("clock", "unix_ns = clock_base_ns + node virtual ns (follows wall time at speed 1)"));
  NPUKIT_RETURN_IF_ERROR(set("speed", speed ? std::to_string(*speed) : "NA"));
  NPUKIT_RETURN_IF_ERROR(set("mode", o_.lossless ? "lossless" : "lossy"));
  NPUKIT_RETURN_IF_ERROR(set("command", o_.attach ? "(attach)" : join(o_.command)));
  NPUKIT_RETURN_IF_ERROR(set("recorder_pid", std::to_string(getpid())));
  NPUKIT_RETURN_IF_ERROR(set("events_recorded", "0"));
  NPUKIT_RETURN_IF_ERROR(set("events_missed", "0"));
  NPUKIT_RETURN_IF_ERROR(sinks_->insert_every(Table::kHostInfo, {std::string_view(host_uid()), std::string_view(host_name())}));
  return sinks_->describe(s);
}

Status Recording::open() {
  NPUKIT_RETURN_IF_ERROR(open_bus());
  auto snap = client_->snapshot();
  if (!snap.ok()) return snap.status();
  if (snap->stale()) return Status(Code::kUnavailable, "node '" + o_.node + "' is stale: " + snap->stale_reason());
  auto base = static_cast<int64_t>(snap->node().start_realtime_ns);
  auto vt = snap->node_field(tf::fid::kNodeVirtualTimeNs).number();
  bool hccs = false;
  for (int l = 0; l < snap->link_count(); ++l) hccs = hccs || snap->link_info(l).kind == "hccs";
  auto resolve = [this](uint32_t id) -> Result<std::string> {
    auto it = strings_.find(id);
    if (it == strings_.end()) return NotFoundError("bus string id " + std::to_string(id) + " was never resolved");
    return it->second;
  };
  auto sinks = RankSinks::create({.out_dir = o_.out_dir,
                                  .devices = snap->device_count(),
                                  .realtime_ns = realtime_now_ns(),
                                  .session_start_ns = base + static_cast<int64_t>(vt.value_or(0)),
                                  .clock_base_ns = base,
                                  .link_type = hccs ? enum_id::kLinkHccs : enum_id::kLinkPcie},
                                 resolve);
  if (!sinks.ok()) return sinks.status();
  sinks_.emplace(std::move(*sinks));
  for (RankSink& s : sinks_->sinks()) {
    NPUKIT_RETURN_IF_ERROR(write_device_info(s.paths.prof_dir, s.device, -1, host_uid()));
  }
  NPUKIT_RETURN_IF_ERROR(sinks_->begin_batch());
  NPUKIT_RETURN_IF_ERROR(describe_run(*snap));
  NPUKIT_RETURN_IF_ERROR(sinks_->sample(*snap));
  NPUKIT_RETURN_IF_ERROR(sinks_->commit_batch());
  pump_ = std::make_unique<EventPump>(std::move(cursor_), o_.queue_events);
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

Status Recording::ingest(const PumpBatch& batch, bool sample_due) {
  result_.missed += batch.missed;
  if (batch.lossless_lost && !result_.lossless_lost) {
    result_.lossless_lost = true;
    std::fprintf(o_.log, "npu-prof: warning: the node evicted the recorder (it fell behind); continuing lossy\n");
  }
  if (batch.events.empty() && !sample_due && batch.missed == 0) return Status::Ok();
  for (const auto& [id, text] : batch.strings) strings_[id] = text;
  for (const tf::Event& e : batch.events) {
    if (e.type == tf::EventType::kJobStarted) open_jobs_.insert(e.words[0]);
    if (e.type == tf::EventType::kJobFinished) open_jobs_.erase(e.words[0]);
  }
  result_.events += batch.events.size();
  std::optional<tf::Snapshot> snap;
  if (sample_due) {
    auto s = client_->snapshot();
    if (s.ok() && s->stale()) stale_ = s->stale_reason();
    if (s.ok()) snap = std::move(*s);
  }
  // While the recorded work runs, one background writer leaves the node its core; once it has
  // ended, every core writes (each rank's database on one thread).
  int threads = work_ended_ ? static_cast<int>(std::max(1u, std::thread::hardware_concurrency())) : 1;
  return sinks_->write({.events = &batch.events,
                        .snapshot = snap ? &*snap : nullptr,
                        .run = {{"events_recorded", std::to_string(result_.events)},
                                {"events_missed", std::to_string(result_.missed)}}},
                       threads);
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
  return caught_up && open_jobs_.empty();
}

// One pop-and-write step; ends reading once the recording should end.
Status Recording::step(Clock::time_point& next_sample) {
  std::optional<PumpBatch> batch = pump_->pop(std::chrono::milliseconds(50));
  bool sample_due = Clock::now() >= next_sample;
  if (sample_due) next_sample = Clock::now() + o_.sample_interval;
  NPUKIT_RETURN_IF_ERROR(ingest(batch ? *batch : PumpBatch{}, sample_due));
  // Once the recording should end, read up to the ring's head, then write all that was read.
  if (!reading_done_ && done(pump_->caught_up())) {
    reading_done_ = true;
    if (stale_.empty()) pump_->finish();
    else pump_->stop();
  }
  return Status::Ok();
}

Status Recording::run() {
  auto next_sample = Clock::now() + o_.sample_interval;
  // While the recorded work runs, write from a background-priority thread: the workload keeps
  // the CPU and the queue absorbs the difference. The rest is written at normal priority.
  Status recording;
  std::thread background([&] {
    if (o_.background_priority) ::setpriority(PRIO_PROCESS, static_cast<id_t>(::gettid()), 19);
    while (recording.ok() && !reading_done_ && !work_ended_) recording = step(next_sample);
  });
  background.join();
  NPUKIT_RETURN_IF_ERROR(recording);
  while (!reading_done_ || !pump_->drained()) NPUKIT_RETURN_IF_ERROR(step(next_sample));
  if (!stale_.empty()) {
    std::fprintf(o_.log, "npu-prof: warning: node '%s' went stale (%s); the recording ends here\n", o_.node.c_str(),
                 stale_.c_str());
  }
  return Status::Ok();
}

Result<RecordResult> Recording::finish() {
  if (child_) result_.command_exit = child_->wait();
  NPUKIT_RETURN_IF_ERROR(sinks_->begin_batch());
  if (auto snap = client_->snapshot(); snap.ok()) NPUKIT_RETURN_IF_ERROR(sinks_->sample(*snap));
  result_.samples = sinks_->samples();
  NPUKIT_RETURN_IF_ERROR(sinks_->set_run("lossless_lost", result_.lossless_lost ? "1" : "0"));
  NPUKIT_RETURN_IF_ERROR(sinks_->set_run("samples", std::to_string(result_.samples)));
  NPUKIT_RETURN_IF_ERROR(sinks_->set_run("command_exit", std::to_string(result_.command_exit)));
  // The node died or stalled mid-recording: what came before is kept, the report says INCOMPLETE.
  NPUKIT_RETURN_IF_ERROR(sinks_->set_run("node_lost", stale_));
  NPUKIT_RETURN_IF_ERROR(sinks_->commit_batch());
  auto stats = sinks_->finalize(host_uid());
  if (!stats.ok()) return stats.status();
  result_.finalize = *stats;
  result_.out_dir = o_.out_dir;
  for (RankSink& s : sinks_->sinks()) {
    result_.ranks.push_back({s.paths.db, s.paths.prof_dir, s.device, sinks_->rank_of(s.device)});
  }
  return result_;
}

}  // namespace

Result<RecordResult> record(const RecordOptions& options, const std::atomic<bool>* stop) {
  if (!options.attach && options.command.empty()) return InvalidArgument("record: give a command after --, or --attach");
  if (Status s = tf::validate_node_name(options.node); !s.ok()) return s;
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
