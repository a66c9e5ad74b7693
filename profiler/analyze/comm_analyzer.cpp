#include "profiler/analyze/comm_analyzer.hpp"

#include <algorithm>
#include <filesystem>
#include <map>

#include <string>
#include <utility>
#include <vector>

#include "profiler/store/sqlite_db.hpp"

namespace npukit::prof {

namespace {

namespace fs = std::filesystem;

// One transfer of a collective: from rank src to rank dst of its group.
struct Link {
  int src = 0, dst = 0;
};

// One collective as this rank ran it, with what it moved between whom (its COMMUNICATION_TASK_INFO
// rows: what it sent, or for a Receive what its peer sent it).
struct CommRow {
  std::string op_name, group;
  int64_t start = 0, end = 0;
  std::map<std::string, std::pair<double, std::vector<Link>>> transfers;  // transport -> (bytes, links)
};

// ENUM_HCCL_LINK_TYPE -> the transport names of msprof's analysis tables.
const char* transport_of(int64_t link_type) {
  return link_type == 2 ? "PCIE" : link_type == 3 ? "RDMA" : "HCCS";
}

constexpr int64_t kNoRank = 4294967295;  // dstRank of a local op (no send)

Result<std::vector<CommRow>> read_rank(const std::string& db_path) {
  auto db = Db::open(db_path, Db::Mode::kReadOnly);
  if (!db.ok()) return db.status();
  auto q = db->prepare(
      "SELECT o.opId, n.value, g.value, o.startNs, o.endNs, coalesce(i.srcRank, 0), coalesce(i.dstRank, 4294967295), "
      "coalesce(i.linkType, 1), coalesce(i.size, 0) FROM COMMUNICATION_OP o "
      "JOIN STRING_IDS n ON n.id = o.opName JOIN STRING_IDS g ON g.id = o.groupName "
      "LEFT JOIN COMMUNICATION_TASK_INFO i ON i.opId = o.opId ORDER BY o.startNs, o.opId, i.planeId");
  if (!q.ok()) return q.status();
  std::vector<CommRow> rows;
  int64_t op = -1;
  while (q->next()) {
    if (rows.empty() || q->i64(0) != op) {
      op = q->i64(0);
      CommRow r;
      r.op_name = q->text(1), r.group = q->text(2);
      r.start = q->i64(3), r.end = q->i64(4);
      rows.push_back(std::move(r));
    }
    if (q->i64(6) == kNoRank) continue;
    auto& [bytes, links] = rows.back().transfers[transport_of(q->i64(7))];
    bytes += static_cast<double>(q->i64(8));
    links.push_back({static_cast<int>(q->i64(5)), static_cast<int>(q->i64(6))});
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
    time->bind(1, r.op_name).bind(2, r.group).bind(3, static_cast<double>(r.start) / 1e3).bind(4, ms(elapse));
    NPUKIT_RETURN_IF_ERROR(time->bind(5, transit_ms).bind(6, ms(wait)).bind(7, ms(wait)).run());
    // Per transport: what the rank moved over it and between whom. A collective across hosts sends
    // over HCCS and RDMA; its phases are not timed apart, so each row carries the op's transit time.
    for (const auto& [transport, moved] : r.transfers) {
      const auto& [bytes, links] = moved;
      const double mb = bytes / 1e6;
      double package_mb = links.empty() ? 0 : mb / static_cast<double>(links.size());
      bw->bind(1, r.op_name).bind(2, r.group).bind(3, transport).bind(4, mb).bind(5, transit_ms);
      bw->bind(6, transit_ms > 0 ? mb / transit_ms : 0).bind(7, package_mb >= 1.0 ? 1.0 : 0.0).bind(8, package_mb);
      NPUKIT_RETURN_IF_ERROR(bw->bind(9, static_cast<int64_t>(links.size())).bind(10, ms(elapse)).run());
      for (const Link& link : links) {
        matrix->bind(1, r.op_name).bind(2, r.group).bind(3, int64_t{link.src}).bind(4, int64_t{link.dst}).bind(5, transport);
        NPUKIT_RETURN_IF_ERROR(matrix->bind(6, package_mb).bind(7, transit_ms).bind(8, transit_ms > 0 ? package_mb / transit_ms : 0).run());
      }
    }
  }
  return Status::Ok();
}

}  // namespace

Result<int> write_comm_analysis(const std::vector<RankDb>& ranks) {
  std::vector<std::vector<CommRow>> per_rank;
  std::map<std::string, int64_t> last_arrival;  // opName -> the latest start over its ranks
  for (const RankDb& r : ranks) {
    auto read = read_rank(r.db);
    if (!read.ok()) return read.status();
    for (const CommRow& row : *read) {
      auto [it, fresh] = last_arrival.try_emplace(row.op_name, row.start);
      it->second = std::max(it->second, row.start);
    }
    per_rank.push_back(std::move(*read));
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
