// npu-prof against its budgets (docs/architecture.md), with one database per rank (8 ranks):
//   BM_Ingest               bus events -> the 8 ranks' databases through the recorder's sinks
//                           (mapper and writer per rank): >= 1 M events/s, and >= 0.7x a bare
//                           prepared-statement insert loop of the same rows (read back from the
//                           ingested databases, same batches and transactions, same schema)
//                           measured in the same run
//   BM_ProfilingOverhead    fast-mode 8-device ernie3-train in this process, published to an
//                           in-process bus, with and without a lossless recorder: <= 5% wall time
//                           (median of the rounds; the mean is printed beside it), and the
//                           profile final (drained, finalized) <= 1 s after the job's end
//   BM_Report1M             npu-prof report (load 8 databases + merge + build + text) on a
//                           1 M-task recording: <= 1 s
//   BM_ChromeDemo           the default Chrome trace of the 60-step demo recording: <= 25 MB
#include <benchmark/benchmark.h>
#include <sqlite3.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <map>
#include <random>
#include <thread>

#include "bench/budget.hpp"
#include "emulator/runtime/node.hpp"
#include "emulator/runtime/program_runner.hpp"
#include "emulator/daemon/publisher.hpp"
#include "profiler/record/event_mapper.hpp"
#include "profiler/analyze/profile_data.hpp"
#include "profiler/record/rank_sinks.hpp"
#include "profiler/render/chrome_trace.hpp"
#include "profiler/record/recorder.hpp"
#include "profiler/analyze/report_build.hpp"
#include "profiler/render/report_render.hpp"
#include "profiler/store/schema.hpp"
#include "telemetry/client.hpp"
#include "workloads/compiler.hpp"
#include "workloads/workload.hpp"

namespace npukit::prof {
namespace {

namespace fs = std::filesystem;
namespace tf = telemetry;
using Clock = std::chrono::steady_clock;

const bool kBudgets[] = {
    bench::register_budget({"BM_Ingest", "events_per_s", "M/s", 1e6, true, 1.0, "DESIGN.md 9: profiler ingest"}),
    bench::register_budget({"BM_Ingest", "vs_bare_insert", "x", 1, true, 0.7,
                            "DESIGN.md 9: ingest vs a bare prepared-statement insert loop, same rows, same run"}),
    bench::register_budget({"BM_ProfilingOverhead", "overhead_pct", "%", 1, false, 5.0,
                            "DESIGN.md 9: profiling overhead, fast-mode 8-device ernie3-train"}),
    bench::register_budget({"BM_ProfilingOverhead", "drain_finalize_s", "s", 1, false, 1.0,
                            "DESIGN.md 9: profile final after the job's end (~1 M events)"}),
    bench::register_budget({"BM_Report1M", "s_per_report", "s", 1, false, 1.0,
                            "DESIGN.md 9: npu-prof report on a 1 M-task recording, 8 rank databases"}),
    bench::register_budget({"BM_ChromeDemo", "trace_mb", "MB", 1, false, 25.0,
                            "DESIGN.md 9: Chrome trace of the demo run (60-step ernie3-train, default steps)"}),
};

// This run's scratch root, removed when the bench exits (a run writes about 1.2 GB of profiles).
struct ScratchRoot {
  fs::path path = fs::temp_directory_path() / ("npuprof-bench-" + std::to_string(getpid()));
  ~ScratchRoot() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

// An empty scratch directory.
std::string scratch_dir(const std::string& name) {
  static ScratchRoot root;
  fs::path dir = root.path / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir.string();
}


// A training-like event stream: every task is a launch then its task event; 85% kernels over
// 32 op descriptors (a tenth of them on AI CPU), 10% copies, 5% collectives; 8 devices.
struct Stream {
  std::vector<tf::Event> events;
  std::map<uint32_t, std::string> strings;
};

Stream make_stream(std::size_t tasks) {
  Stream s;
  auto intern = [&](const std::string& v) {
    uint32_t id = static_cast<uint32_t>(s.strings.size() + 1);
    s.strings[id] = v;
    return id;
  };
  std::vector<std::pair<uint32_t, uint32_t>> ops;  // kernel name, descriptor
  for (int i = 0; i < 32; ++i) {
    ops.push_back({intern("Kernel" + std::to_string(i)),
                   intern("aten::op" + std::to_string(i) + "|" + std::to_string(64 * (i + 1)) + ",1024;1024,1024|FLOAT16;FLOAT16")});
  }
  uint32_t launch_name = intern("aten::op"), memcpy_name = intern("memcpy"), allreduce = intern("hcom_allReduce_");
  std::mt19937_64 rng(1);
  std::vector<uint64_t> clock(8, 1'000'000);
  for (std::size_t i = 0; i < tasks; ++i) {
    int device = static_cast<int>(i % 8);
    uint64_t r = rng() % 100, dur = 5'000 + rng() % 50'000, task = i + 1;
    uint32_t stream = static_cast<uint32_t>(device * 3 + (r < 85 ? 0 : r < 95 ? 1 : 2));
    uint64_t sp = tf::pack_stream_pid(stream, 1234);
    tf::Event launch{i * 2, tf::EventType::kLaunch, device, clock[device], r < 85 ? launch_name : r < 95 ? memcpy_name : allreduce,
                     0, {task, sp, 0, 0}};
    tf::Event e{i * 2 + 1, tf::EventType::kKernel, device, clock[device] + 2'000, 0, 0, {dur, sp, 0, 0}};
    if (r < 85) {
      const auto& op = ops[rng() % ops.size()];
      e.name_id = op.first, e.aux_id = op.second;
      e.words[3] = (r < 8 ? 2 : r % 2) | task << 8 | uint64_t{20} << 56;
      e.set_f64(2, 1e9);
    } else if (r < 95) {
      e.type = tf::EventType::kMemcpy;
      e.words = {dur, 1 << 20, 0 | task << 8, sp};
    } else {
      e.type = tf::EventType::kCollective;
      e.name_id = allreduce;
      e.words = {dur, 1 << 24, task, sp};
    }
    clock[device] += dur + 3'000;
    s.events.push_back(launch);
    s.events.push_back(e);
  }
  return s;
}

constexpr std::size_t kBatch = 8192;
constexpr int kRanks = 8;
const char* kIngestTables[] = {"STRING_IDS", "CANN_API", "TASK", "COMPUTE_TASK_INFO", "TASK_PMU_INFO",
                               "MEMCPY_INFO", "COMMUNICATION_OP", "COMMUNICATION_TASK_INFO"};

// Row counts per rank per table after one batch.
using BatchEnds = std::vector<std::vector<int64_t>>;

// Ingests `s` into one database per rank (the recorder's RankSinks, one thread as while a job
// runs); returns the seconds spent in map + commit, the databases, and the row count each table
// of each database reached after each batch (for the bare loop's identical batches).
double ingest(const Stream& s, const std::string& dir, std::vector<std::string>* dbs, std::vector<BatchEnds>* batch_ends) {
  auto sinks = RankSinks::create({.out_dir = dir, .devices = kRanks}, [&](uint32_t id) -> Result<std::string> {
    return s.strings.at(id);
  });
  double seconds = 0;
  std::vector<tf::Event> batch;
  for (std::size_t at = 0; at < s.events.size(); at += kBatch) {
    batch.assign(s.events.begin() + static_cast<std::ptrdiff_t>(at),
                 s.events.begin() + static_cast<std::ptrdiff_t>(std::min(at + kBatch, s.events.size())));
    auto t0 = Clock::now();
    (void)sinks->write({.events = &batch, .snapshot = nullptr, .run = {}}, 1);
    seconds += std::chrono::duration<double>(Clock::now() - t0).count();
    BatchEnds ends;
    for (RankSink& sink : sinks->sinks()) {
      std::vector<int64_t> rows;
      for (const char* t : kIngestTables) rows.push_back(*sink.writer->db().query_i64(std::string("SELECT count(*) FROM ") + t));
      ends.push_back(std::move(rows));
    }
    batch_ends->push_back(std::move(ends));
  }
  for (RankSink& sink : sinks->sinks()) dbs->push_back(sink.paths.db);
  return seconds;
}

using Value = std::variant<int64_t, double, std::string>;
using Rows = std::vector<std::vector<Value>>;

Rows read_rows(Db& db, const char* table) {
  Rows rows;
  auto q = db.prepare(std::string("SELECT * FROM ") + table + " ORDER BY rowid");
  sqlite3_stmt* raw = q->handle();
  while (q->next()) {
    std::vector<Value> row;
    for (int c = 0; c < sqlite3_column_count(raw); ++c) {
      int type = sqlite3_column_type(raw, c);
      if (type == SQLITE_FLOAT) row.emplace_back(q->f64(c));
      else if (type == SQLITE_TEXT) row.emplace_back(q->text(c));
      else row.emplace_back(q->i64(c));
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

void bind_row(sqlite3_stmt* stmt, const std::vector<Value>& row) {
  for (std::size_t c = 0; c < row.size(); ++c) {
    int i = static_cast<int>(c) + 1;
    if (auto* v = std::get_if<int64_t>(&row[c])) sqlite3_bind_int64(stmt, i, *v);
    else if (auto* d = std::get_if<double>(&row[c])) sqlite3_bind_double(stmt, i, *d);
    else sqlite3_bind_text(stmt, i, std::get<std::string>(row[c]).c_str(), -1, SQLITE_TRANSIENT);
  }
}

// One rank's rows, with raw sqlite3 prepared statements into a fresh database of the same schema
// and pragmas.
struct BareRank {
  std::unique_ptr<ProfileWriter> writer;  // schema and pragmas only; the loop bypasses it
  std::vector<Rows> rows;
  std::vector<sqlite3_stmt*> inserts;
  std::vector<int64_t> done;
};

BareRank bare_rank(const std::string& from, const std::string& to) {
  BareRank b;
  b.writer = std::move(*ProfileWriter::create(to, 0));
  auto src = Db::open(from, Db::Mode::kReadOnly);
  for (const char* table : kIngestTables) {
    b.rows.push_back(read_rows(*src, table));
    std::string sql = std::string("INSERT INTO ") + table + " VALUES (";
    for (std::size_t c = 0; c < find_table(table)->columns.size(); ++c) sql += c ? ",?" : "?";
    sqlite3_stmt* stmt = nullptr;
    sqlite3_prepare_v2(b.writer->db().handle(), (sql + ")").c_str(), -1, &stmt, nullptr);
    b.inserts.push_back(stmt);
  }
  b.done.assign(b.inserts.size(), 0);
  return b;
}

// The same rows into fresh databases, in the same batches (one transaction per database per
// batch). Returns the seconds of the loop.
double bare_insert(const std::vector<std::string>& from, const std::string& dir, const std::vector<BatchEnds>& batch_ends) {
  std::vector<BareRank> ranks;
  for (std::size_t r = 0; r < from.size(); ++r) ranks.push_back(bare_rank(from[r], dir + "/bare" + std::to_string(r) + ".db"));
  auto t0 = Clock::now();
  for (const BatchEnds& ends : batch_ends) {
    for (std::size_t r = 0; r < ranks.size(); ++r) {
      BareRank& b = ranks[r];
      sqlite3* db = b.writer->db().handle();
      sqlite3_exec(db, "BEGIN", nullptr, nullptr, nullptr);
      for (std::size_t t = 0; t < b.inserts.size(); ++t) {
        for (; b.done[t] < ends[r][t]; ++b.done[t]) {
          bind_row(b.inserts[t], b.rows[t][static_cast<std::size_t>(b.done[t])]);
          sqlite3_step(b.inserts[t]);
          sqlite3_reset(b.inserts[t]);
        }
      }
      sqlite3_exec(db, "COMMIT", nullptr, nullptr, nullptr);
    }
  }
  double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  for (BareRank& b : ranks) {
    for (sqlite3_stmt* st : b.inserts) sqlite3_finalize(st);
  }
  return seconds;
}

void BM_Ingest(benchmark::State& state) {
  Stream s = make_stream(static_cast<std::size_t>(state.range(0)) / 2);
  double ingest_s = 0, bare_s = 0;
  int round = 0;
  for (auto _ : state) {
    std::vector<BatchEnds> ends;
    std::vector<std::string> dbs;
    std::string dir = scratch_dir("ingest-" + std::to_string(round++));
    ingest_s += ingest(s, dir, &dbs, &ends);
    bare_s += bare_insert(dbs, dir, ends);
  }
  double events = static_cast<double>(s.events.size()) * static_cast<double>(state.iterations());
  state.counters["events_per_s"] = events / ingest_s;
  state.counters["bare_events_per_s"] = events / bare_s;
  state.counters["vs_bare_insert"] = bare_s / ingest_s;
}
BENCHMARK(BM_Ingest)->Arg(1 << 20)->Iterations(2)->Unit(benchmark::kMillisecond);

// A finalized 8-rank recording of `tasks` tasks (the stream above) with 100 steps on each rank.
std::string report_recording(std::size_t tasks) {
  std::string dir = scratch_dir("report");
  Stream s = make_stream(tasks);
  uint64_t end = 0;
  for (const tf::Event& e : s.events) end = std::max(end, e.ts_ns + e.words[0]);
  uint32_t job = static_cast<uint32_t>(s.strings.size() + 1);
  s.strings[job] = "bench-job";
  for (int d = 0; d < kRanks; ++d) {
    for (uint64_t k = 0; k < 100; ++k) s.events.push_back({0, tf::EventType::kStep, d, k * (end / 100), job, 0, {1, k, end / 100, 1234}});
  }
  auto sinks = RankSinks::create({.out_dir = dir, .devices = kRanks}, [&](uint32_t id) -> Result<std::string> {
    return s.strings.at(id);
  });
  // The run metadata a recording writes, so the report reads a whole recording, not a damaged one.
  const std::pair<const char*, const char*> run[] = {{"node", "bench"},  {"node_spec", "8x910B2"}, {"topology", "hccs_mesh"},
                                                     {"mode", "lossless"}, {"command", "profiler_bench"}, {"clock_base_ns", "0"}};
  for (const auto& [key, value] : run) (void)sinks->set_run(key, value);
  std::vector<tf::Event> batch;
  for (std::size_t at = 0; at < s.events.size(); at += kBatch) {
    batch.assign(s.events.begin() + static_cast<std::ptrdiff_t>(at),
                 s.events.begin() + static_cast<std::ptrdiff_t>(std::min(at + kBatch, s.events.size())));
    (void)sinks->write({.events = &batch, .snapshot = nullptr, .run = {}}, 2);
  }
  (void)sinks->finalize("bench", true);
  return dir;
}

void BM_Report1M(benchmark::State& state) {
  static const std::string dir = report_recording(1'000'000);
  std::size_t tasks = 0;
  double seconds = 0;
  for (auto _ : state) {
    auto t0 = Clock::now();
    auto data = load_profile(dir);
    auto report = build_report(*data, {.top = 10, .step = std::nullopt});
    std::string text = render_text(*report, 10);
    seconds += std::chrono::duration<double>(Clock::now() - t0).count();
    benchmark::DoNotOptimize(text);
    tasks = data->tasks.size();
    if (!report->header.complete) {
      state.SkipWithError(("the bench's recording reads as " + report->header.recording_state()).c_str());
      break;
    }
  }
  state.counters["tasks"] = static_cast<double>(tasks);
  state.counters["s_per_report"] = seconds / static_cast<double>(state.iterations());
}
BENCHMARK(BM_Report1M)->Iterations(3)->Unit(benchmark::kMillisecond);


// Fast-mode ernie3-train on 8 devices, in this process, publishing to an in-process bus as the
// daemon does (task, launch and step events; counters every step). Returns the wall seconds
// from the job's start to its end.
double run_ernie3(const std::string& bus_name, int64_t steps, const std::function<void()>& before_start) {
  auto workload = work::load_workload("ernie3-train");
  work::CompileOptions compile;
  compile.steps = steps;
  auto points = work::compile_workload(*workload, compile);
  auto node = emu::Node::create({.spec = "8x910B2", .seed = 1});
  auto bus = tf::InProcessBus::create(emu::writer_options_for(**node, bus_name));
  emu::Publisher publisher(**node, (*bus)->writer());
  publisher.publish(1.0, 0);
  before_start();
  auto t0 = Clock::now();
  auto runner = emu::ProgramRunner::create(**node, (*points)[0].program);
  bool done = false;
  publisher.record(tf::EventType::kJobStarted, -1, "ernie3-train", {1, 1, 0, 0});
  (*runner)->start(
      [&](const emu::StepReport& r) {
        publisher.record_at(tf::EventType::kStep, r.rank, r.start, "ernie3-train",
                            {1, static_cast<uint64_t>(r.step), static_cast<uint64_t>(r.end - r.start), 1});
        if (r.rank == 0) publisher.publish(1.0, 0);
      },
      [&](const Status&) { done = true; });
  (*node)->scheduler().run_while([&] { return !done; });
  publisher.record(tf::EventType::kJobFinished, -1, "ernie3-train", {1, 0, 0, 0});
  publisher.publish(1.0, 0);
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// ernie3-train recorded by a lossless in-process recorder into `dir`; returns the job's wall
// seconds, and in `final_s` the seconds from the job's end until the profile was final.
double profile_ernie3(const std::string& name, const std::string& dir, int64_t steps, double* final_s,
                      Result<RecordResult>* result) {
  std::atomic<bool> stop{false};
  std::thread recorder;
  double job = run_ernie3(name, steps, [&] {
    RecordOptions o;
    o.out_dir = dir;
    o.node = name;
    o.backend = "inprocess";
    o.attach = true;
    o.duration = std::chrono::hours(1);
    o.log = stdout;
    recorder = std::thread([result, &stop, o] { *result = record(o, &stop); });
    std::this_thread::sleep_for(std::chrono::milliseconds(300));  // the recorder registers its cursor
  });
  auto t0 = Clock::now();
  stop = true;
  recorder.join();
  *final_s = std::chrono::duration<double>(Clock::now() - t0).count();
  return job;
}

void BM_ProfilingOverhead(benchmark::State& state) {
  const int64_t steps = state.range(0);
  double plain = 0, profiled = 0, finish = 0;
  std::vector<double> overheads;  // per round: the median is robust to other load on the machine
  uint64_t events = 0, missed = 0;
  int round = 0;
  for (auto _ : state) {
    double p0 = plain, q0 = profiled, f = 0;
    plain += run_ernie3("bench-plain-" + std::to_string(getpid()) + "-" + std::to_string(round), steps, [] {});
    std::string name = "bench-prof-" + std::to_string(getpid()) + "-" + std::to_string(round++);
    Result<RecordResult> result = InternalError("not run");
    profiled += profile_ernie3(name, scratch_dir("overhead-" + name), steps, &f, &result);
    finish += f;
    overheads.push_back(100.0 * ((profiled - q0) - (plain - p0)) / (plain - p0));
    if (!result.ok()) state.SkipWithError(result.status().message().c_str());
    if (result.ok()) events += result->events, missed += result->missed;
  }
  auto n = static_cast<double>(state.iterations());
  state.counters["plain_s"] = plain / n;
  state.counters["profiled_s"] = profiled / n;
  std::sort(overheads.begin(), overheads.end());
  state.counters["overhead_pct"] = overheads[overheads.size() / 2];
  state.counters["mean_overhead_pct"] = 100.0 * (profiled - plain) / plain;
  state.counters["drain_finalize_s"] = finish / n;
  state.counters["events"] = static_cast<double>(events) / n;
  state.counters["missed"] = static_cast<double>(missed);
}
BENCHMARK(BM_ProfilingOverhead)->Arg(60)->Iterations(5)->Unit(benchmark::kMillisecond);

}  // namespace
// The demo's recording (60 fast steps of ernie3-train on 8 ranks) exported with the default
// step selection, as `npu-prof export --chrome` does: size and seconds (load + build + write).
void BM_ChromeDemo(benchmark::State& state) {
  double final_s = 0, mb = 0, seconds = 0;
  std::string dir = scratch_dir("chrome-demo");
  Result<RecordResult> recorded = InternalError("not run");
  profile_ernie3("bench-chrome-" + std::to_string(getpid()), dir, 60, &final_s, &recorded);
  if (!recorded.ok()) {
    state.SkipWithError(recorded.status().message().c_str());
    return;
  }
  for (auto _ : state) {
    auto t0 = Clock::now();
    auto data = load_profile(dir, {.launches = true, .counters = true, .rank = std::nullopt, .ranks = {}});
    ChromeOptions options;
    options.steps = default_steps(*data);
    auto trace = chrome_trace(*data, options);
    std::string file = dir + "/trace.json";
    (void)write_chrome_trace(*trace, file);
    seconds += std::chrono::duration<double>(Clock::now() - t0).count();
    mb = static_cast<double>(fs::file_size(file)) / 1e6;
  }
  state.counters["trace_mb"] = mb;
  state.counters["export_s"] = seconds / static_cast<double>(state.iterations());
  state.counters["events_recorded"] = static_cast<double>(recorded->events);
}
BENCHMARK(BM_ChromeDemo)->Iterations(2)->Unit(benchmark::kMillisecond);

}  // namespace npukit::prof
