#include "profiler/analyze/comm_analyzer.hpp"

#include <algorithm>
#include <filesystem>
#include <map>

#include "profiler/analyze/report_build.hpp"
#include "profiler/store/sqlite_db.hpp"
#include "telemetry/comm_group.hpp"

namespace npukit::prof {

namespace {

namespace fs = std::filesystem;

struct CommRow {
  std::string op_name, group, algorithm, op_type, transport;
  int64_t start = 0, end = 0, bytes = 0;
  int ranks = 1, rank = 0;
};

Result<std::vector<CommRow>> read_rank(const std::string& db_path) {
  auto db = Db::open(db_path, Db::Mode::kReadOnly);
  if (!db.ok()) return db.status();
  auto q = db->prepare(
      "SELECT n.value, g.value, a.value, t.value, o.startNs, o.endNs, o.count, o.dataType, o.rankSize, "
      "coalesce(i.srcRank, 0), coalesce(i.linkType, 1) FROM COMMUNICATION_OP o "
      "JOIN STRING_IDS n ON n.id = o.opName JOIN STRING_IDS g ON g.id = o.groupName "
      "JOIN STRING_IDS a ON a.id = o.algType JOIN STRING_IDS t ON t.id = o.opType "
      "LEFT JOIN COMMUNICATION_TASK_INFO i ON i.opId = o.opId ORDER BY o.startNs");
  if (!q.ok()) return q.status();
  std::vector<CommRow> rows;
  while (q->next()) {
    CommRow r{q->text(0), q->text(1), q->text(2), q->text(3), q->i64(10) == 2 ? "PCIE" : "HCCS"};
    r.start = q->i64(4), r.end = q->i64(5);
    int size = telemetry::hccl_dtype_size(static_cast<int>(q->i64(7)));
    r.bytes = size > 0 ? q->i64(6) * size : q->i64(6);
    r.ranks = std::max<int>(1, static_cast<int>(q->i64(8)));
    r.rank = static_cast<int>(q->i64(9));
    rows.push_back(std::move(r));
  }
  NPUKIT_RETURN_IF_ERROR(q->status());
  return rows;
}

constexpr const char* kSchema =
    "CREATE TABLE CommAnalyzerTime (hccl_op_name TEXT, group_name TEXT, start_timestamp NUMERIC, elapse_time NUMERIC, "
    "transit_time NUMERIC, wait_time NUMERIC, synchronization_time NUMERIC, idle_time NUMERIC);"
    "CREATE TABLE CommAnalyzerBandwidth (hccl_op_name TEXT, group_name TEXT, transport_type TEXT, transit_size NUMERIC, "
    "transit_time NUMERIC, bandwidth NUMERIC, large_packet_ratio NUMERIC, package_size NUMERIC, count INTEGER, "
    "total_duration NUMERIC);"
    "CREATE TABLE CommAnalyzerMatrix (hccl_op_name TEXT, group_name TEXT, src_rank INTEGER, dst_rank INTEGER, "
    "transport_type TEXT, transit_size NUMERIC, transit_time NUMERIC, bandwidth NUMERIC);";

double ms(int64_t ns) { return static_cast<double>(ns) / 1e6; }

// The peers a rank sends to: every other rank of a mesh, the next rank of a ring.
std::vector<int> peers(const CommRow& r) {
  std::vector<int> out;
  if (r.ranks < 2) return out;
  if (r.algorithm == "RING") return {(r.rank + 1) % r.ranks};
  for (int p = 0; p < r.ranks; ++p) {
    if (p != r.rank) out.push_back(p);
  }
  return out;
}

Status write_rows(Db& db, const std::vector<CommRow>& rows, const std::map<std::string, int64_t>& last_arrival) {
  auto time = db.prepare("INSERT INTO CommAnalyzerTime VALUES (?, ?, ?, ?, ?, ?, ?, 0)");
  auto bw = db.prepare("INSERT INTO CommAnalyzerBandwidth VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
  auto matrix = db.prepare("INSERT INTO CommAnalyzerMatrix VALUES (?, ?, ?, ?, ?, ?, ?, ?)");
  for (auto* s : {&time, &bw, &matrix}) {
    if (!s->ok()) return s->status();
  }
  for (const CommRow& r : rows) {
    int64_t elapse = r.end - r.start;
    int64_t wait = std::clamp<int64_t>(last_arrival.at(r.op_name) - r.start, 0, elapse);
    double transit_ms = ms(elapse - wait);
    double sent_mb = static_cast<double>(r.bytes) * algbw_size_factor(r.op_type, r.ranks) *
                     busbw_factor(r.op_type, r.ranks) / 1e6;
    double bandwidth = transit_ms > 0 ? sent_mb / transit_ms : 0;
    std::vector<int> to = peers(r);
    double package_mb = to.empty() ? 0 : sent_mb / static_cast<double>(to.size());
    time->bind(1, r.op_name).bind(2, r.group).bind(3, static_cast<double>(r.start) / 1e3).bind(4, ms(elapse));
    NPUKIT_RETURN_IF_ERROR(time->bind(5, transit_ms).bind(6, ms(wait)).bind(7, ms(wait)).run());
    bw->bind(1, r.op_name).bind(2, r.group).bind(3, r.transport).bind(4, sent_mb).bind(5, transit_ms).bind(6, bandwidth);
    bw->bind(7, package_mb >= 1.0 ? 1.0 : 0.0).bind(8, package_mb).bind(9, static_cast<int64_t>(to.size()));
    NPUKIT_RETURN_IF_ERROR(bw->bind(10, ms(elapse)).run());
    for (int peer : to) {
      matrix->bind(1, r.op_name).bind(2, r.group).bind(3, int64_t{r.rank}).bind(4, int64_t{peer}).bind(5, r.transport);
      NPUKIT_RETURN_IF_ERROR(matrix->bind(6, package_mb).bind(7, transit_ms).bind(8, transit_ms > 0 ? package_mb / transit_ms : 0).run());
    }
  }
  return Status::Ok();
}

}  // namespace

Result<int> write_comm_analysis(const std::vector<RankDb>& ranks) {
  std::vector<std::vector<CommRow>> per_rank;
  std::map<std::string, int64_t> last_arrival;  // opName -> the latest start over its ranks
  for (const RankDb& r : ranks) {
    auto rows = read_rank(r.db);
    if (!rows.ok()) return rows.status();
    for (const CommRow& row : *rows) {
      auto [it, fresh] = last_arrival.try_emplace(row.op_name, row.start);
      it->second = std::max(it->second, row.start);
    }
    per_rank.push_back(std::move(*rows));
  }
  int written = 0;
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    if (per_rank[i].empty() || ranks[i].prof_dir.empty()) continue;
    fs::path dir = fs::path(ranks[i].prof_dir) / "analyze";
    std::error_code ec;
    fs::create_directories(dir, ec);
    fs::remove(dir / "communication_analyzer.db", ec);
    auto db = Db::open((dir / "communication_analyzer.db").string(), Db::Mode::kCreate);
    if (!db.ok()) return db.status();
    NPUKIT_RETURN_IF_ERROR(db->exec(kSchema));
    Transaction tx(*db);
    NPUKIT_RETURN_IF_ERROR(tx.begun());
    NPUKIT_RETURN_IF_ERROR(write_rows(*db, per_rank[i], last_arrival));
    NPUKIT_RETURN_IF_ERROR(tx.commit());
    ++written;
  }
  return written;
}

}  // namespace npukit::prof
