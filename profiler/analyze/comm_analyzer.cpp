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

// ENUM_HCCL_LINK_TYPE -> the transport names of msprof's analysis tables.
const char* transport_of(int64_t link_type) {
  return link_type == 2 ? "PCIE" : link_type == 3 ? "RDMA" : "HCCS";
}

// Which host each rank of each group runs on (from the rank databases' EMU_RUN `node`): a group
// that spans hosts sends over HCCS to its own host's members and over RDMA to the others'.
using GroupHosts = std::map<std::string, std::map<int, std::string>>;  // group -> rank -> host

// A hierarchical collective (HCCL across hosts: within each host, then one ring per local rank
// across the hosts) as one rank runs it: its peers with their transports, and the bytes it sends
// over each transport (reduce-scatter + all-gather within the host, an allreduce of its 1/L share
// across the H hosts).
struct Hierarchy {
  std::vector<std::pair<int, std::string>> peers;
  std::map<std::string, double> sent_share;  // transport -> bytes sent / op bytes
};

Hierarchy hierarchy(const CommRow& r, const std::map<int, std::string>& hosts) {
  Hierarchy h;
  auto here = hosts.find(r.rank);
  if (here == hosts.end()) return h;
  std::map<std::string, std::vector<int>> by_host;  // ranks in order
  for (const auto& [rank, host] : hosts) by_host[host].push_back(rank);
  const std::vector<int>& local = by_host[here->second];
  const auto index = static_cast<std::size_t>(std::find(local.begin(), local.end(), r.rank) - local.begin());
  const bool mesh = r.algorithm.rfind("MESH", 0) == 0;
  const char* intra = mesh ? "HCCS" : "PCIE";
  const HierarchicalShares share = hierarchical_shares(static_cast<double>(hosts.size()), static_cast<double>(by_host.size()));
  if (local.size() > 1) {
    for (std::size_t p = 0; p < local.size(); ++p) {  // a mesh: every other local rank; a ring: the next
      if (local[p] != r.rank && (mesh || p == (index + 1) % local.size())) h.peers.emplace_back(local[p], intra);
    }
    h.sent_share[intra] = share.intra;
  }
  // The ring across hosts: the member with the same local index on the next host.
  auto it = by_host.find(here->second);
  auto next = std::next(it) == by_host.end() ? by_host.begin() : std::next(it);
  if (next != it && index < next->second.size()) {
    h.peers.emplace_back(next->second[index], "RDMA");
    h.sent_share["RDMA"] = share.inter;
  }
  return h;
}

// The rank database's host (EMU_RUN `node`; "" in a recording without one).
Result<std::string> host_of(Db& db) {
  auto has = db.has_table("EMU_RUN");
  if (!has.ok() || !*has) return has.ok() ? Result<std::string>(std::string()) : has.status();
  auto q = db.prepare("SELECT value FROM EMU_RUN WHERE key = 'node'");
  if (!q.ok()) return q.status();
  std::string node = q->next() ? q->text(0) : "";
  NPUKIT_RETURN_IF_ERROR(q->status());
  return node;
}

struct RankRows {
  std::vector<CommRow> rows;
  std::string host;
};

Result<RankRows> read_rank(const std::string& db_path) {
  auto db = Db::open(db_path, Db::Mode::kReadOnly);
  if (!db.ok()) return db.status();
  auto host = host_of(*db);
  if (!host.ok()) return host.status();
  auto q = db->prepare(
      "SELECT n.value, g.value, a.value, t.value, o.startNs, o.endNs, o.count, o.dataType, o.rankSize, "
      "coalesce(i.srcRank, 0), coalesce(i.linkType, 1) FROM COMMUNICATION_OP o "
      "JOIN STRING_IDS n ON n.id = o.opName JOIN STRING_IDS g ON g.id = o.groupName "
      "JOIN STRING_IDS a ON a.id = o.algType JOIN STRING_IDS t ON t.id = o.opType "
      "LEFT JOIN COMMUNICATION_TASK_INFO i ON i.opId = o.opId ORDER BY o.startNs");
  if (!q.ok()) return q.status();
  std::vector<CommRow> rows;
  while (q->next()) {
    CommRow r{q->text(0), q->text(1), q->text(2), q->text(3), transport_of(q->i64(10))};
    r.start = q->i64(4), r.end = q->i64(5);
    int size = telemetry::hccl_dtype_size(static_cast<int>(q->i64(7)));
    r.bytes = size > 0 ? q->i64(6) * size : q->i64(6);
    r.ranks = std::max<int>(1, static_cast<int>(q->i64(8)));
    r.rank = static_cast<int>(q->i64(9));
    rows.push_back(std::move(r));
  }
  NPUKIT_RETURN_IF_ERROR(q->status());
  return RankRows{std::move(rows), std::move(*host)};
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

Status write_rows(Db& db, const std::vector<CommRow>& rows, const std::map<std::string, int64_t>& last_arrival,
                  const GroupHosts& group_hosts) {
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
    time->bind(1, r.op_name).bind(2, r.group).bind(3, static_cast<double>(r.start) / 1e3).bind(4, ms(elapse));
    NPUKIT_RETURN_IF_ERROR(time->bind(5, transit_ms).bind(6, ms(wait)).bind(7, ms(wait)).run());
    // Per transport: what the rank sent over it and to whom. A collective across hosts sends over
    // HCCS and RDMA; its phases are not timed apart, so each row carries the op's transit time.
    std::map<std::string, std::pair<double, std::vector<int>>> sends;  // transport -> (MB, peers)
    auto hosts = group_hosts.find(r.group);
    bool spans_hosts = r.transport == "RDMA" && hosts != group_hosts.end();
    if (spans_hosts && r.algorithm.find('-') != std::string::npos) {
      Hierarchy h = hierarchy(r, hosts->second);
      for (const auto& [transport, share] : h.sent_share) sends[transport].first = static_cast<double>(r.bytes) * share / 1e6;
      for (const auto& [peer, transport] : h.peers) sends[transport].second.push_back(peer);
    } else {
      sends[r.transport] = {sent_mb, peers(r)};
    }
    for (const auto& [transport, sent] : sends) {
      const auto& [mb, to] = sent;
      double package_mb = to.empty() ? 0 : mb / static_cast<double>(to.size());
      bw->bind(1, r.op_name).bind(2, r.group).bind(3, transport).bind(4, mb).bind(5, transit_ms);
      bw->bind(6, transit_ms > 0 ? mb / transit_ms : 0).bind(7, package_mb >= 1.0 ? 1.0 : 0.0).bind(8, package_mb);
      NPUKIT_RETURN_IF_ERROR(bw->bind(9, static_cast<int64_t>(to.size())).bind(10, ms(elapse)).run());
      for (int peer : to) {
        matrix->bind(1, r.op_name).bind(2, r.group).bind(3, int64_t{r.rank}).bind(4, int64_t{peer}).bind(5, transport);
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
  GroupHosts group_hosts;
  for (const RankDb& r : ranks) {
    auto read = read_rank(r.db);
    if (!read.ok()) return read.status();
    for (const CommRow& row : read->rows) {
      auto [it, fresh] = last_arrival.try_emplace(row.op_name, row.start);
      it->second = std::max(it->second, row.start);
      group_hosts[row.group][row.rank] = read->host;
    }
    per_rank.push_back(std::move(read->rows));
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
    NPUKIT_RETURN_IF_ERROR(write_rows(*db, per_rank[i], last_arrival, group_hosts));
    NPUKIT_RETURN_IF_ERROR(tx.commit());
    ++written;
  }
  return written;
}

}  // namespace npukit::prof
