#include "profiler/analyze/profile_data.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <limits>
#include <optional>
#include <thread>
#include <unordered_map>

#include "profiler/analyze/merge.hpp"
#include "profiler/analyze/profile_links.hpp"
#include "profiler/analyze/time_sanity.hpp"
#include "profiler/store/prof_layout.hpp"
#include "profiler/store/schema.hpp"
#include "telemetry/comm_group.hpp"

namespace npukit::prof {

namespace {

// A REAL counter value as an integer: NaN reads 0 and values past the type's range its nearest
// end (a corrupted database's 2e17 MHz clock; the plain cast was undefined behaviour, found by
// tests/fuzz/profile).
template <typename T>
T clamped(double v) {
  if (!(v == v)) return 0;
  if (v <= static_cast<double>(std::numeric_limits<T>::min())) return std::numeric_limits<T>::min();
  if (v >= static_cast<double>(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
  return static_cast<T>(v);
}

constexpr const char* kRequiredTables[] = {"META_DATA", "STRING_IDS", "TASK", "COMPUTE_TASK_INFO",
                                           "COMMUNICATION_OP", "SESSION_TIME_INFO"};

// SQLite errors met while reading mean the file is damaged (or not ours): bad input.
Status as_bad_input(const Status& s, const std::string& path) {
  if (s.ok() || s.code() != Code::kInternal) return s;
  return InvalidArgument(path + ": corrupted or unreadable profile database: " + s.message());
}

Result<Db> open_db(const std::string& path) {
  // Read-write when we may (a killed recorder's WAL is then recovered cleanly), else read-only.
  bool writable = ::access(path.c_str(), W_OK) == 0;
  auto db = Db::open(path, writable ? Db::Mode::kReadWrite : Db::Mode::kReadOnly);
  if (!db.ok()) return db.status();
  return db;
}

Status validate(Db& db, ProfileData& p) {
  for (const char* table : kRequiredTables) {
    auto has = db.has_table(table);
    if (!has.ok()) return has.status();
    if (!*has) return InvalidArgument(p.db_path + ": not a profile database (no " + table + " table)");
  }
  auto q = db.prepare("SELECT name, value FROM META_DATA");
  if (!q.ok()) return q.status();
  while (q->next()) p.meta[q->text(0)] = q->text(1);
  NPUKIT_RETURN_IF_ERROR(q->status());
  auto version = p.meta.find("SCHEMA_VERSION");
  if (version == p.meta.end()) return InvalidArgument(p.db_path + ": not a profile database (no SCHEMA_VERSION in META_DATA)");
  if (version->second.rfind("1.", 0) != 0) {
    return InvalidArgument(p.db_path + ": unsupported schema version " + version->second + " (npu-prof reads 1.x)");
  }
  p.complete = p.meta[std::string(kMetaState)] != "recording";
  if (p.meta[std::string(kMetaProducer)] == kProducer) {  // ours: every table of the schema is written
    for (const TableDef& t : all_tables()) {
      auto has = db.has_table(std::string(t.name));
      if (!has.ok()) return has.status();
      if (!*has) p.damage.push_back("no " + std::string(t.name) + " table");
    }
  }
  return Status::Ok();
}

Status load_basics(Db& db, ProfileData& p) {
  auto s = db.prepare("SELECT id, value FROM STRING_IDS");
  if (!s.ok()) return s.status();
  constexpr int64_t kMaxStringId = int64_t{1} << 26;  // a recording interns far fewer
  while (s->next()) {
    if (s->i64(0) < 0 || s->i64(0) >= kMaxStringId) {
      return InvalidArgument(p.db_path + ": corrupted profile database: STRING_IDS id " + std::to_string(s->i64(0)) + " out of range");
    }
    auto id = static_cast<std::size_t>(s->i64(0));
    if (id >= p.strings.size()) p.strings.resize(id + 1), p.string_known.resize(id + 1);
    p.strings[id] = s->text(1);
    p.string_known[id] = true;
  }
  NPUKIT_RETURN_IF_ERROR(s->status());
  auto session = db.prepare("SELECT startTimeNs, endTimeNs FROM SESSION_TIME_INFO");
  if (!session.ok()) return session.status();
  if (session->next()) p.session_start = session->i64(0), p.session_end = session->i64(1);
  NPUKIT_RETURN_IF_ERROR(session->status());
  for (auto [table, sql] : {std::pair{"EMU_RUN", "SELECT key, value FROM EMU_RUN"},
                            std::pair{"NPU_INFO", "SELECT id, name FROM NPU_INFO"},
                            std::pair{"RANK_DEVICE_MAP", "SELECT deviceId, rankId FROM RANK_DEVICE_MAP WHERE rankId >= 0"}}) {
    auto has = db.has_table(table);
    if (!has.ok()) return has.status();
    if (!*has) continue;
    auto q = db.prepare(sql);
    if (!q.ok()) return q.status();
    std::string which = table;
    while (q->next()) {
      if (which == "EMU_RUN") p.run[q->text(0)] = q->text(1);
      else if (which == "NPU_INFO") p.npu_names[static_cast<int>(q->i64(0))] = q->text(1);
      else p.device_ranks[static_cast<int>(q->i64(0))] = static_cast<int>(q->i64(1));
    }
    NPUKIT_RETURN_IF_ERROR(q->status());
  }
  if (p.run.empty() && p.meta[std::string(kMetaProducer)] == kProducer) p.damage.push_back("EMU_RUN is empty (no run metadata)");
  return Status::Ok();
}

Status load_flops(Db& db, ProfileData& p) {
  int64_t flops = p.find_string("flops");
  auto has = db.has_table("TASK_PMU_INFO");  // a damaged database may lack any optional table (validate names it)
  if (!has.ok() || !*has || flops < 0) return has.status();
  auto f = db.prepare("SELECT globalTaskId, value FROM TASK_PMU_INFO WHERE name = ?");
  if (!f.ok()) return f.status();
  f->bind(1, flops);
  // globalTaskIds are dense from 0 in our databases: index directly, search otherwise.
  while (f->next()) {
    int64_t gid = f->i64(0);
    auto i = static_cast<std::size_t>(gid);
    if (gid >= 0 && i < p.tasks.size() && p.tasks[i].global_task_id == gid) {
      p.tasks[i].flops = f->f64(1);
      continue;
    }
    auto it = std::lower_bound(p.tasks.begin(), p.tasks.end(), gid,
                               [](const TaskRecord& t, int64_t g) { return t.global_task_id < g; });
    if (it != p.tasks.end() && it->global_task_id == gid) it->flops = f->f64(1);
  }
  return f->status();
}

// A STRING_IDS id as a task holds it: one that does not fit reads as a missing string (damage,
// named by note_missing_strings), never as some other string.
TaskRecord::Id task_string_id(int64_t id) {
  using Limits = std::numeric_limits<TaskRecord::Id>;
  return id < -1 || id > Limits::max() ? Limits::max() : static_cast<TaskRecord::Id>(id);
}

// Two sequential scans merged on globalTaskId (cheaper than a join's per-row index seek).
Status load_tasks(Db& db, ProfileData& p) {
  auto rows = db.query_i64("SELECT coalesce(max(rowid), 0) FROM TASK");  // a capacity hint, O(log n)
  if (rows.ok()) p.tasks.reserve(static_cast<std::size_t>(*rows));
  auto q = db.prepare("SELECT deviceId, streamId, taskId, globalTaskId, connectionId, startNs, endNs, taskType FROM TASK");
  if (!q.ok()) return q.status();
  while (q->next()) {
    TaskRecord t;
    t.device = static_cast<int32_t>(q->i64(0));
    t.stream = q->i64(1), t.task_id = q->i64(2), t.global_task_id = q->i64(3), t.connection_id = q->i64(4);
    t.start = q->i64(5), t.end = q->i64(6), t.task_type = task_string_id(q->i64(7));
    p.tasks.push_back(t);
  }
  NPUKIT_RETURN_IF_ERROR(q->status());
  auto by_gid = [](const TaskRecord& a, const TaskRecord& b) { return a.global_task_id < b.global_task_id; };
  if (!std::is_sorted(p.tasks.begin(), p.tasks.end(), by_gid)) std::sort(p.tasks.begin(), p.tasks.end(), by_gid);
  auto c = db.prepare("SELECT globalTaskId, name, opType, inputShapes, inputDataTypes, inputFormats, blockNum, "
                      "outputShapes, outputDataTypes, outputFormats, opState, hf32Eligible "
                      "FROM COMPUTE_TASK_INFO ORDER BY globalTaskId");
  if (!c.ok()) return c.status();
  std::size_t at = 0;
  while (c->next()) {
    int64_t gid = c->i64(0);
    while (at < p.tasks.size() && p.tasks[at].global_task_id < gid) ++at;
    if (at == p.tasks.size() || p.tasks[at].global_task_id != gid) continue;  // info without a task
    TaskRecord& t = p.tasks[at];
    t.name = task_string_id(c->i64(1)), t.op_type = task_string_id(c->i64(2)), t.shapes = task_string_id(c->i64(3));
    t.dtypes = task_string_id(c->i64(4)), t.formats = task_string_id(c->i64(5));
    t.block_num = static_cast<int32_t>(std::clamp<int64_t>(c->i64(6), std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max()));
    t.out_shapes = task_string_id(c->i64(7)), t.out_dtypes = task_string_id(c->i64(8));
    t.out_formats = task_string_id(c->i64(9)), t.state = task_string_id(c->i64(10)), t.hf32 = task_string_id(c->i64(11));
  }
  NPUKIT_RETURN_IF_ERROR(c->status());
  return load_flops(db, p);
}

// opId -> (srcRank, dstRank) of each Send and Receive: its one task info row (slow_link's pipelines).
Result<std::unordered_map<int64_t, std::pair<int32_t, int32_t>>> point_to_point_ends(Db& db) {
  std::unordered_map<int64_t, std::pair<int32_t, int32_t>> out;
  auto known = db.has_column("COMMUNICATION_TASK_INFO", "srcRank");  // older profiles may lack the table
  if (!known.ok() || !*known) return known.ok() ? Result<decltype(out)>(out) : known.status();
  auto q = db.prepare(
      "SELECT t.opId, t.srcRank, t.dstRank FROM COMMUNICATION_TASK_INFO t JOIN COMMUNICATION_OP o ON o.opId = t.opId "
      "JOIN STRING_IDS s ON s.id = o.opType WHERE s.value IN ('hcom_send_', 'hcom_receive_')");
  if (!q.ok()) return q.status();
  while (q->next()) out[q->i64(0)] = {static_cast<int32_t>(q->i64(1)), static_cast<int32_t>(q->i64(2))};
  return q->status().ok() ? Result<decltype(out)>(std::move(out)) : q->status();
}

Status load_collectives(Db& db, ProfileData& p) {
  auto ends = point_to_point_ends(db);
  auto q = ends.ok() ? db.prepare(
      "SELECT deviceId, opName, opType, startNs, endNs, count, groupName, rankSize, dataType, algType, opId "
      "FROM COMMUNICATION_OP ORDER BY opId") : ends.status();
  if (!q.ok()) return q.status();
  std::unordered_map<int64_t, std::vector<int>> devices;  // opName -> devices
  while (q->next()) {
    CollectiveRecord c;
    c.device = static_cast<int32_t>(q->i64(0));
    c.op_name = q->i64(1);
    c.op_type = q->i64(2);
    c.start = q->i64(3);
    c.end = q->i64(4);
    c.group = q->i64(6);
    c.ranks = static_cast<int>(q->i64(7));
    c.data_type = q->i64(8);
    c.algorithm = q->i64(9);
    int size = telemetry::hccl_dtype_size(static_cast<int>(c.data_type));
    c.count = q->i64(5);
    c.bytes = size > 0 ? c.count * size : c.count;  // without a data type, count holds bytes
    if (auto e = ends->find(q->i64(10)); e != ends->end()) c.src_rank = e->second.first, c.dst_rank = e->second.second;
    devices[c.op_name].push_back(c.device);
    p.collectives.push_back(c);
  }
  NPUKIT_RETURN_IF_ERROR(q->status());
  // A recording cut short before finalize has rankSize 0 where the communicator was unknown:
  // count the devices that ran the same opName.
  for (auto& [name, list] : devices) {
    std::sort(list.begin(), list.end());
    list.erase(std::unique(list.begin(), list.end()), list.end());
  }
  for (CollectiveRecord& c : p.collectives) {
    if (c.ranks <= 0) c.ranks = static_cast<int>(devices[c.op_name].size());
  }
  return Status::Ok();
}

Status load_steps(Db& db, ProfileData& p) {
  auto has = db.has_table("EMU_STEP");
  if (!has.ok()) return has.status();
  if (*has) {
    auto job = main_job(db);
    if (!job.ok()) return job.status();
    p.main_job = *job;
    if (!p.main_job) return Status::Ok();
    auto steps = load_step_windows(db, *p.main_job);
    if (!steps.ok()) return steps.status();
    p.steps = std::move(*steps);
    return Status::Ok();
  }
  // An msprof/torch_npu database: STEP_TIME windows apply to every device.
  auto q = db.prepare("SELECT s.id, s.startNs, s.endNs, d.deviceId FROM STEP_TIME s, (SELECT DISTINCT deviceId FROM TASK) d");
  if (!q.ok()) return Status::Ok();
  while (q->next()) p.steps.push_back({static_cast<int>(q->i64(3)), q->i64(0), {q->i64(1), q->i64(2)}});
  return q->status();
}

// Recomputed from the loaded tasks (the same function finalize stored OVERLAP_ANALYSIS with):
// cheaper than reading the table back, and it covers recordings that were never finalized.
Status load_overlap(Db&, ProfileData& p) {
  int64_t comm = p.find_string("COMMUNICATION");
  std::map<int, std::vector<TaskSpan>> spans;
  for (const TaskRecord& t : p.tasks) spans[t.device].push_back({t.start, t.end, t.task_type == comm});
  for (const auto& [device, list] : spans) p.overlap[device] = analyze_overlap(list);
  return Status::Ok();
}

Status load_node_data(Db& db, ProfileData& p) {
  auto has_mem = db.has_table("NPU_MEM");
  if (!has_mem.ok()) return has_mem.status();
  auto mem = !*has_mem ? db.prepare("SELECT 0, 0, 0, 0 WHERE 0") : db.prepare("SELECT deviceId, timestampNs, coalesce(hbm, ddr), hbm IS NULL FROM NPU_MEM WHERE coalesce(hbm, ddr) IS NOT NULL "
                        "ORDER BY deviceId, timestampNs");
  if (!mem.ok()) return mem.status();
  while (mem->next()) p.memory.push_back({static_cast<int32_t>(mem->i64(0)), mem->i64(1), mem->i64(2), mem->i64(3) != 0});
  NPUKIT_RETURN_IF_ERROR(mem->status());
  auto has = db.has_table("EMU_EVENT");
  if (!has.ok() || !*has) return has.status();
  // EMU_EVENT.type names EMU_EVENT_TYPE; in profiles older than that table, STRING_IDS.
  auto has_enum = db.has_table("EMU_EVENT_TYPE");
  if (!has_enum.ok()) return has_enum.status();
  std::string types = *has_enum ? "EMU_EVENT_TYPE s ON s.id = e.type" : "STRING_IDS s ON s.id = e.type";
  auto ev = db.prepare("SELECT e.timestampNs, e.deviceId, " + std::string(*has_enum ? "s.name" : "s.value") +
                       ", e.a, e.b, e.c, e.d, coalesce(n.value, ''), coalesce(m.value, '') FROM EMU_EVENT e JOIN " +
                       types + " LEFT JOIN STRING_IDS n ON n.id = e.name LEFT JOIN STRING_IDS m ON m.id = e.message "
                       "ORDER BY e.timestampNs");
  if (!ev.ok()) return ev.status();
  while (ev->next()) {
    NodeEvent e{static_cast<int32_t>(ev->i64(1)), ev->i64(0), ev->text(2), static_cast<uint64_t>(ev->i64(3)),
                static_cast<uint64_t>(ev->i64(4)), static_cast<uint64_t>(ev->i64(5)), static_cast<uint64_t>(ev->i64(6)),
                ev->text(7), ev->text(8)};
    bool alloc = e.type == "alloc";
    if (alloc) ++p.alloc_events;
    if (alloc || e.type == "free") p.alloc_calls.push_back({e.device, e.ts, static_cast<int64_t>(e.c >> 32)});
    else p.events.push_back(std::move(e));
  }
  return ev->status();
}

// The main job's settings from its job_started message ("0,1;allocator=caching;launch=eager;...").
Status load_job_settings(Db& db, ProfileData& p) {
  auto has = db.has_table("EMU_EVENT_TYPE");
  if (!has.ok() || !*has || !p.main_job) return has.status();
  has = db.has_table("EMU_EVENT");
  if (!has.ok() || !*has) return has.status();
  auto q = db.prepare("SELECT s.value FROM EMU_EVENT e JOIN EMU_EVENT_TYPE t ON t.id = e.type "
                      "JOIN STRING_IDS s ON s.id = e.message WHERE t.name = 'job_started' AND e.a = ? LIMIT 1");
  if (!q.ok()) return q.status();
  q->bind(1, *p.main_job);
  if (q->next()) {
    std::string text = q->text(0);
    for (std::size_t pos = text.find(';'); pos != std::string::npos;) {
      std::size_t next = text.find(';', pos + 1);
      std::string item = text.substr(pos + 1, next == std::string::npos ? std::string::npos : next - pos - 1);
      if (std::size_t eq = item.find('='); eq != std::string::npos) p.job_settings[item.substr(0, eq)] = item.substr(eq + 1);
      pos = next;
    }
  }
  return q->status();
}

Status load_hbm_capacity(Db& db, ProfileData& p) {
  auto has = db.has_table("EMU_COUNTER");
  if (!has.ok() || !*has) return has.status();
  auto q = db.prepare("SELECT c.deviceId, max(c.value) FROM EMU_COUNTER c JOIN STRING_IDS s ON s.id = c.name "
                      "WHERE s.value = 'npu_hbm_total_bytes' AND c.deviceId >= 0 GROUP BY c.deviceId");
  if (!q.ok()) return q.status();
  while (q->next()) p.hbm_capacity[static_cast<int>(q->i64(0))] = clamped<int64_t>(q->f64(1));
  return q->status();
}

Status load_allocator_peak(Db& db, ProfileData& p) {
  auto has = db.has_table("NPU_OP_MEM");
  if (!has.ok() || !*has) return has.status();
  auto q = db.prepare("SELECT deviceId, max(totalAllocate), max(totalReserve) FROM NPU_OP_MEM GROUP BY deviceId");
  if (!q.ok()) return q.status();
  while (q->next()) p.allocator_peak[static_cast<int>(q->i64(0))] = {q->i64(1), q->i64(2)};
  return q->status();
}

Status load_initial_clock(Db& db, ProfileData& p) {
  auto has = db.has_table("EMU_COUNTER");
  if (!has.ok() || !*has) return has.status();
  auto q = db.prepare(
      "SELECT c.deviceId, s.value, c.value FROM EMU_COUNTER c JOIN STRING_IDS s ON s.id = c.name "
      "WHERE s.value IN ('npu_throttle_reasons', 'npu_aicore_clock_mhz') AND c.deviceId >= 0 "
      "AND c.timestampNs = (SELECT min(timestampNs) FROM EMU_COUNTER)");
  if (!q.ok()) return q.status();
  while (q->next()) {
    ProfileData::ClockState& s = p.initial_clock[static_cast<int>(q->i64(0))];
    if (q->text(1) == "npu_throttle_reasons") s.reasons = clamped<uint64_t>(q->f64(2));
    else s.clock_mhz = clamped<int>(q->f64(2));
  }
  return q->status();
}

Status load_launches(Db& db, ProfileData& p) {
  auto has = db.has_table("CANN_API");
  if (!has.ok() || !*has) return has.status();
  auto q = db.prepare("SELECT connectionId, startNs, endNs, type, globalTid, name FROM CANN_API ORDER BY startNs, connectionId");
  if (!q.ok()) return q.status();
  while (q->next()) p.launches.push_back({q->i64(0), q->i64(1), q->i64(2), q->i64(3), q->i64(4), q->i64(5)});
  return q->status();
}

// The counter tracks worth drawing: clock, power, temperature, HBM in use (EMU_COUNTER, by
// field name) and the bandwidth series of HBM and HCCS.
Status load_counters(Db& db, ProfileData& p) {
  const std::pair<const char*, const char*> queries[] = {
      {"EMU_COUNTER",
       "SELECT c.deviceId, s.value, c.timestampNs, c.value FROM EMU_COUNTER c JOIN STRING_IDS s ON s.id = c.name "
       "WHERE c.deviceId >= 0 AND s.value IN ('npu_aicore_clock_mhz', 'npu_power_watts', 'npu_temperature_celsius', "
       "'npu_hbm_used_bytes') ORDER BY c.timestampNs"},
      // Read and write rows of a sample add up (an older profile has one "read/write" row).
      {"HBM", "SELECT deviceId, 'hbm_bandwidth_bytes_per_s', timestampNs, sum(bandwidth) FROM HBM "
              "GROUP BY deviceId, timestampNs ORDER BY timestampNs"},
      {"HCCS", "SELECT deviceId, 'hccs_tx_bytes_per_s', timestampNs, txThroughput FROM HCCS ORDER BY timestampNs"}};
  for (const auto& [table, sql] : queries) {
    auto has = db.has_table(table);
    if (!has.ok()) return has.status();
    if (!*has) continue;
    auto q = db.prepare(sql);
    if (!q.ok()) return q.status();
    while (q->next()) p.counters.push_back({static_cast<int32_t>(q->i64(0)), q->text(1), q->i64(2), q->f64(3)});
    NPUKIT_RETURN_IF_ERROR(q->status());
  }
  return Status::Ok();
}

}  // namespace

const std::string& ProfileData::str(int64_t id) const {
  static const std::string kEmpty;
  if (id < 0 || static_cast<std::size_t>(id) >= strings.size()) return kEmpty;
  return strings[static_cast<std::size_t>(id)];
}

int64_t ProfileData::find_string(const std::string& value) const {
  for (std::size_t i = 0; i < strings.size(); ++i) {
    if (strings[i] == value) return static_cast<int64_t>(i);
  }
  return -1;
}

int ProfileData::rank_of(int device) const {
  auto it = device_ranks.find(device);
  return it == device_ranks.end() ? device : it->second;
}

std::string ProfileData::run_value(const std::string& key, const std::string& fallback) const {
  auto it = run.find(key);
  return it == run.end() ? fallback : it->second;
}

namespace {

// Task rows whose names point at STRING_IDS rows that are not there (a damaged database): named
// as damage, since the report shows them with blank names.
void note_missing_strings(ProfileData& p) {
  auto missing = [&](int64_t id) {
    return id >= 0 && (static_cast<std::size_t>(id) >= p.string_known.size() || !p.string_known[static_cast<std::size_t>(id)]);
  };
  std::size_t n = 0;
  for (const TaskRecord& t : p.tasks) n += missing(t.name) || missing(t.op_type) || missing(t.task_type);
  if (n > 0) {
    p.damage.push_back("STRING_IDS: " + std::to_string(n) + " task row" + (n == 1 ? "" : "s") +
                       " name ids that are not there (shown blank)");
  }
}

Result<ProfileData> load_one(const std::string& file, const LoadOptions& options) {
  auto db = open_db(file);
  if (!db.ok()) return db.status();
  ProfileData p;
  p.db_path = file;
  for (auto step : {validate, load_basics, load_tasks, load_collectives, load_steps, load_overlap, load_node_data, load_links, load_job_settings, load_hbm_capacity, load_allocator_peak,
                    load_initial_clock}) {
    Status s = step(*db, p);
    if (!s.ok()) return as_bad_input(s, p.db_path);
  }
  if (options.launches) NPUKIT_RETURN_IF_ERROR(as_bad_input(load_launches(*db, p), p.db_path));
  if (options.counters) NPUKIT_RETURN_IF_ERROR(as_bad_input(load_counters(*db, p), p.db_path));
  drop_impossible_times(p);
  note_missing_strings(p);
  return p;
}

std::string rank_list(const std::vector<RankDb>& dbs) {
  std::string out;
  for (const RankDb& r : dbs) out += (out.empty() ? "" : ", ") + std::to_string(r.rank);
  return out;
}

}  // namespace

Result<ProfileData> load_profile(const std::string& path, const LoadOptions& options) {
  auto dbs = find_profile_dbs(path);
  if (!dbs.ok()) return dbs.status();
  std::set<int> wanted = options.ranks;
  if (options.rank) wanted = {*options.rank};
  if (!wanted.empty() && (dbs->size() > 1 || options.rank)) {  // one old database holds every rank: no trees to pick
    std::vector<RankDb> picked;
    for (int rank : wanted) {
      auto it = std::find_if(dbs->begin(), dbs->end(), [&](const RankDb& r) { return r.rank == rank; });
      if (it == dbs->end()) {
        return InvalidArgument(path + ": no rank " + std::to_string(rank) + " in this recording (ranks: " +
                               rank_list(*dbs) + ")");
      }
      picked.push_back(*it);
    }
    std::sort(picked.begin(), picked.end(), [](const RankDb& a, const RankDb& b) { return a.rank < b.rank; });
    dbs = std::move(picked);
  }
  // The rank databases are independent (a connection each): read them on a few threads, then
  // report the first error in rank order.
  std::vector<std::optional<Result<ProfileData>>> loaded(dbs->size());
  std::atomic<std::size_t> next{0};
  auto work = [&] {
    for (std::size_t i = next++; i < dbs->size(); i = next++) loaded[i].emplace(load_one((*dbs)[i].db, options));
  };
  std::size_t workers = std::clamp<std::size_t>(std::thread::hardware_concurrency(), 1, std::min<std::size_t>(dbs->size(), 8));
  std::vector<std::thread> threads;
  for (std::size_t w = 1; w < workers; ++w) threads.emplace_back(work);
  work();
  for (std::thread& t : threads) t.join();
  std::vector<ProfileData> parts;
  for (auto& part : loaded) {
    if (!part->ok()) return part->status();
    parts.push_back(std::move(**part));
  }
  return merge_ranks(std::move(parts), path);
}

}  // namespace npukit::prof
