// The npu-smi commands, each a function of a Context and already-validated arguments,
// returning the process exit code (context.hpp). cli.cpp parses argv into these.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "smi/cli/context.hpp"
#include "smi/common/csv.hpp"
#include "smi/cli/types.hpp"

namespace npukit::smi {

// A connected bus and one snapshot of it.
struct Session {
  std::unique_ptr<telemetry::Client> client;
  telemetry::Snapshot snapshot;
};
// Opens the bus and takes a snapshot. On failure prints one line to ctx.err and sets
// `exit_code` (kExitNoNode when no node runs, kExitBusError for a foreign segment or a bad
// node name). A stale snapshot is returned, with a warning line on ctx.err.
std::optional<Session> open_session(Context& ctx, int& exit_code);
// "npu-smi: warning: node 'x' is stale (<reason>): values are not live\n".
std::string stale_warning(const telemetry::Snapshot& s);
// A request over the node's control channel; a stale node (its daemon hung or gone) is not
// asked: Unavailable at once, where the request would wait out the channel's timeout (30 s).
Result<nlohmann::json> ask_node(const Session& session, const nlohmann::json& request);

int cmd_version(Context& ctx, const Session& session);
int cmd_info_table(Context& ctx, const Session& session, bool json);
int cmd_info_list(Context& ctx, const Session& session, bool json);     // info -l
int cmd_info_mapping(Context& ctx, const Session& session, bool json);  // info -m
int cmd_info_type(Context& ctx, const Session& session, const TypeQuery& q, bool json);

// topo / info -t topo. CPU affinity maps device npu ids onto the host's NUMA nodes.
Document build_topo_doc(const telemetry::Snapshot& s, const std::vector<std::string>& numa_cpulists);
std::string render_topo_text(const Document& doc);
int cmd_topo(Context& ctx, const Session& session, bool json);

// health: exit 0 PASS, 1 WARN, 2 FAIL, 3 UNKNOWN (stale node or device without data).
Document build_health_doc(const telemetry::Snapshot& s, const std::vector<int>& devices);
std::string render_health_text(const Document& doc);
// stats (stats.cpp): job accounting of the node's running and recent jobs (or one).
int cmd_stats(Context& ctx, Session& session, std::optional<int> job, bool json);
// --npd (health_npd.cpp): one line for node-problem-detector, exit 0 OK / 1 problem / 2 unknown.
int npd_line(std::ostream& out, const telemetry::Snapshot& s, const std::vector<int>& devices);
int npd_unknown(std::ostream& out, const std::string& why);
// verbose: also the node's active faults (with their source and start), from its control channel.
int cmd_health(Context& ctx, const Session& session, std::optional<int> npu, bool json, bool verbose = false);

struct QueryOptions {
  std::vector<std::string> columns;  // validated column keys
  CsvOptions csv;
  std::optional<int> npu;            // -i: only this card
};
int cmd_query(Context& ctx, const Session& session, const QueryOptions& q);
std::string help_query_text();

struct WatchOptions {
  std::optional<int> npu;
  std::optional<int> chip;
  double delay_s = 1.0;
  std::string types;     // -s letters; empty: all the chip supports
  bool timestamp = false;
  uint64_t count = 0;    // 0: until killed
  enum class Format : uint8_t { kText, kCsv, kJson } format = Format::kText;
};
int cmd_watch(Context& ctx, Session& session, const WatchOptions& w);

struct SetRequest {
  std::string type;      // ecc-enable, reset, clear-ecc-info, power-limit
  int npu = -1;
  std::optional<int> chip;
  std::optional<std::string> value;  // -d
};
int cmd_set(Context& ctx, Session& session, const SetRequest& r);
int cmd_clear(Context& ctx, Session& session, const SetRequest& r);  // clear -t ecc-info

}  // namespace npukit::smi
