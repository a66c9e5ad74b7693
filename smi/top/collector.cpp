#include "smi/top/collector.hpp"

#include <algorithm>
#include <cmath>
#include <ctime>

#include "probes/health/incidents.hpp"
#include "smi/common/text.hpp"
#include "smi/top/format.hpp"

namespace npukit::top {

namespace {

uint64_t monotonic_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000ull + static_cast<uint64_t>(ts.tv_nsec);
}

// npu-smi's name of a chip ("NPU 2 Chip 1" on a 310P node), "node" for node-level events.
std::string device_name(const tf::Snapshot& s, int device) {
  if (device < 0 || device >= s.device_count()) return device < 0 ? "node" : "NPU " + std::to_string(device);
  return smi::chip_label(s, device);
}

float as_float(const tf::Sample& s) {
  auto v = s.number();
  return v ? static_cast<float>(*v) : std::nanf("");
}

// Events that feed the alarm banner (and the recording); the rest (kernels, copies, ...) are
// the profiler's business.
bool alarm_event(tf::EventType t) {
  using E = tf::EventType;
  return t == E::kTaskTimeout || t == E::kLinkStateChanged || t == E::kFaultInjected ||
         t == E::kFaultCleared || t == E::kHealthChanged || t == E::kThrottleChanged;
}

// A string id's text; "" for none or an id the table does not hold.
std::string resolve(const tf::EventCursor& cursor, uint32_t id) {
  if (id == 0) return "";
  auto s = cursor.resolve(id);
  return s.ok() ? *s : "";
}

// The ring also carries every kernel and copy of a busy node: at most this many events are read
// per tick, so a flood cannot stall the UI (the cursor counts what it skips; state alarms never
// depend on events).
constexpr std::size_t kEventBatch = 1024;
constexpr int kMaxBatchesPerTick = 8;

}  // namespace

void state_alarms(const tf::Snapshot& s, std::vector<Alarm>& out) {
  for (const probes::Incident& inc : probes::node_incidents(s)) {
    int device = inc.device >= 0 ? inc.device : inc.peers.empty() ? -1 : inc.peers.front();
    Severity severity = inc.kind->severity == tf::Health::kWarning ? Severity::kWarning : Severity::kCritical;
    out.push_back({severity, device, inc.entity + " " + tf::health_name(inc.kind->severity) + " " +
                                         smi::error_code_text(inc.kind->code) + " " + inc.summary});
  }
  // Thermal throttling is the temperature incident's; a power limit holding the clock down is
  // worth seeing too.
  for (int d = 0; d < s.device_count(); ++d) {
    tf::Sample throttle = s.device(d, tf::fid::kThrottleReasons);
    if (!throttle.ok() || (throttle.as_u64() & ~tf::kThrottleThermal) == 0) continue;
    std::string text = device_name(s, d) + " throttled (" + throttle_text(throttle.as_u64()) + ")";
    tf::Sample clock = s.device(d, tf::fid::kAicoreClockMhz);
    tf::Sample max = s.device(d, tf::fid::kAicoreClockMaxMhz);
    if (clock.ok() && max.ok()) {
      text += " " + std::to_string(clock.as_u64()) + "/" + std::to_string(max.as_u64()) + " MHz";
    }
    out.push_back({Severity::kWarning, d, text});
  }
}

Collector::Collector(CollectorOptions options, Opener open, Clock clock)
    : options_(std::move(options)), open_(std::move(open)), clock_(std::move(clock)) {}

std::unique_ptr<Collector> Collector::for_node(const CollectorOptions& options) {
  std::string node = options.node;
  return std::make_unique<Collector>(
      options, [node] { return tf::ShmClient::open({.node = node}); }, monotonic_ns);
}

bool Collector::ensure_client(Frame& f) {
  if (!client_) {
    auto c = open_();
    if (!c.ok()) {
      f.message = c.status().message();
      f.denied = c.status().code() == Code::kPermissionDenied;
      return false;
    }
    client_ = std::move(*c);
    cursor_.reset();
  }
  auto snap = client_->snapshot();
  if (!snap.ok()) {
    f.message = snap.status().message();
    client_.reset();
    cursor_.reset();
    return false;
  }
  f.snapshot = std::move(*snap);
  return true;
}

std::shared_ptr<const Frame> Collector::collect() {
  auto f = std::make_shared<Frame>();
  f->seq = ++seq_;
  f->now_ns = clock_();
  f->node = options_.node;
  if (!ensure_client(*f)) {
    f->state = NodeState::kAbsent;
    f->history = history_ ? std::make_shared<const History>(*history_) : std::make_shared<const History>(0, 2);
    return f;
  }
  if (f->snapshot.stale()) {
    f->state = NodeState::kStale;
    f->message = f->snapshot.stale_reason();
    cursor_.reset();  // a restarted daemon has a new ring: reopen when live again
  } else {
    f->state = NodeState::kLive;
    tf::Sample vt = f->snapshot.node_field(tf::fid::kNodeVirtualTimeNs);
    if (vt.ok()) virtual_now_ns_ = vt.as_u64();
    read_events(*f);
    detect_ecc(*f);
  }
  update_history(*f);
  build_processes(*f);
  build_alarms(*f);
  return f;
}

void Collector::read_events(Frame& f) {
  if (!cursor_) {
    auto c = client_->open_events(false);
    if (!c.ok()) return;  // alarms from the snapshot still work; retried next tick
    cursor_ = std::move(*c);
  }
  for (int batch_no = 0; batch_no < kMaxBatchesPerTick; ++batch_no) {
    tf::EventBatch batch = cursor_->next(kEventBatch);
    for (const auto& ev : batch.events) {
      if (!alarm_event(ev.type)) continue;
      ReceivedEvent r{ev, "", ""};
      r.name = resolve(*cursor_, ev.name_id);
      r.aux = resolve(*cursor_, ev.aux_id);
      remember(f.snapshot, r);
      f.new_events.push_back(std::move(r));
    }
    if (batch.events.size() < kEventBatch) break;
  }
}

void Collector::remember(const tf::Snapshot& s, const ReceivedEvent& r) {
  using E = tf::EventType;
  const tf::Event& e = r.event;
  std::string dev = device_name(s, e.device);
  auto note = [&](uint64_t kind, const std::string& name, Severity sev, std::string text, uint64_t add) {
    RecentEvent& slot = recent_[{static_cast<int>(e.type), e.device, kind, name}];
    slot.severity = sev;
    slot.text = std::move(text);
    slot.count += add;
    slot.last_ts_ns = e.ts_ns;
  };
  switch (e.type) {
    case E::kTaskTimeout:
      note(0, r.name, Severity::kCritical, dev + " task timeout: " + r.name, 1);
      break;
    case E::kLinkStateChanged:
      if (e.words[1] == 0) {
        note(e.words[0], "", Severity::kCritical, dev + " link " + std::to_string(e.words[0]) + " down", 1);
      } else {
        recent_.erase({static_cast<int>(E::kLinkStateChanged), e.device, e.words[0], ""});
      }
      break;
    case E::kFaultInjected:
      note(0, r.name, Severity::kInfo, dev + " fault injected: " + r.name, 1);
      break;
    case E::kFaultCleared:
      recent_.erase({static_cast<int>(E::kFaultInjected), e.device, 0, r.name});
      break;
    default:
      break;  // health and throttle changes: the snapshot's state says it better
  }
}

void Collector::detect_ecc(const Frame& f) {
  const int n = f.snapshot.device_count();
  if (static_cast<int>(ecc_totals_.size()) != n) ecc_totals_.assign(static_cast<std::size_t>(n), {});
  constexpr tf::FieldId kTotals[2] = {tf::fid::kEccSingleBitTotal, tf::fid::kEccDoubleBitTotal};
  for (int d = 0; d < n; ++d) {
    for (int k = 0; k < 2; ++k) {
      tf::Sample s = f.snapshot.device(d, kTotals[k]);
      auto& last = ecc_totals_[static_cast<std::size_t>(d)][static_cast<std::size_t>(k)];
      if (!s.ok()) continue;
      if (last && s.as_u64() > *last) {
        RecentEvent& r = recent_[{static_cast<int>(tf::EventType::kEccError), d, static_cast<uint64_t>(k + 1), ""}];
        r.severity = k == 1 ? Severity::kCritical : Severity::kWarning;
        r.text = device_name(f.snapshot, d) + (k == 1 ? " ECC double-bit" : " ECC single-bit");
        r.count += s.as_u64() - *last;
        r.last_ts_ns = virtual_now_ns_;
      }
      last = s.as_u64();
    }
  }
}

void Collector::update_history(Frame& f) {
  int n = f.snapshot.device_count();
  if (!history_ || history_->devices() != n) {
    history_ = std::make_shared<History>(n, options_.history_capacity);
  }
  std::vector<float> values[kMetricCount];
  constexpr tf::FieldId kFields[kMetricCount] = {tf::fid::kAicoreUtil, tf::fid::kPowerWatts,
                                                 tf::fid::kTemperatureCelsius};
  for (int m = 0; m < kMetricCount; ++m) {
    values[m].resize(static_cast<std::size_t>(n));
    for (int d = 0; d < n; ++d) values[m][static_cast<std::size_t>(d)] = as_float(f.snapshot.device(d, kFields[m]));
  }
  history_->push(f.now_ns, values);
  f.history = std::make_shared<const History>(*history_);
}

void Collector::build_processes(Frame& f) const {
  int n = f.snapshot.device_count();
  std::vector<uint64_t> held(static_cast<std::size_t>(n), 0);
  std::vector<int> count(static_cast<std::size_t>(n), 0);
  for (const auto& p : f.snapshot.processes()) {
    if (p.device < 0 || p.device >= n) continue;
    held[static_cast<std::size_t>(p.device)] += p.hbm_bytes;
    ++count[static_cast<std::size_t>(p.device)];
  }
  for (const auto& p : f.snapshot.processes()) {
    ProcessRow row{p.pid, p.device, p.hbm_bytes, p.name, std::nullopt, ""};
    if (p.device >= 0 && p.device < n) {
      row.npu = smi::chip_short_label(f.snapshot, p.device);
      auto d = static_cast<std::size_t>(p.device);
      if (auto util = value_of(f, p.device, tf::fid::kAicoreUtil)) {
        double weight = held[d] > 0 ? static_cast<double>(p.hbm_bytes) / static_cast<double>(held[d])
                                    : 1.0 / count[d];
        row.share = *util * weight;
      }
    }
    f.processes.push_back(std::move(row));
  }
}

void Collector::build_alarms(Frame& f) {
  if (f.state == NodeState::kStale) {
    f.alarms.push_back({Severity::kCritical, -1, "node '" + f.node + "' is stale (" + f.message +
                                                     "): values are not live"});
    return;
  }
  state_alarms(f.snapshot, f.alarms);
  auto memory = static_cast<uint64_t>(options_.event_memory.count());
  std::erase_if(recent_, [&](const auto& kv) { return kv.second.last_ts_ns + memory < virtual_now_ns_; });
  for (const auto& [key, r] : recent_) {
    std::string text = r.text;
    if (std::get<0>(key) == static_cast<int>(tf::EventType::kEccError)) {
      text += " +" + std::to_string(r.count);
    } else if (r.count > 1) {
      text += " x" + std::to_string(r.count);
    }
    uint64_t age_s = virtual_now_ns_ > r.last_ts_ns ? (virtual_now_ns_ - r.last_ts_ns) / 1'000'000'000ull : 0;
    text += " (" + std::to_string(age_s) + "s ago)";
    f.alarms.push_back({r.severity, std::get<1>(key), text});
  }
  std::stable_sort(f.alarms.begin(), f.alarms.end(), [](const Alarm& a, const Alarm& b) {
    return a.severity != b.severity ? a.severity > b.severity : a.device < b.device;
  });
}

}  // namespace npukit::top
