#include "smi/cli/cli.hpp"

#include <algorithm>
#include <ostream>
#include <sstream>

#include "smi/common/columns.hpp"
#include "smi/cli/commands.hpp"
#include "smi/cli/diag.hpp"
#include "smi/cli/help.hpp"
#include "telemetry/version.hpp"

namespace npukit::smi {

namespace cli {

void add(CLI::App& app, const std::string& name, Opt& opt) {
  opt.option = app.add_option(name, opt.values)->expected(0, 1);
}

bool parse(CLI::App& app, const std::vector<std::string>& args, std::string& bad) {
  app.allow_extras();
  std::vector<std::string> reversed(args.rbegin(), args.rend());  // CLI11 takes them reversed
  try {
    app.parse(reversed);
  } catch (const CLI::ParseError& e) {
    std::string what = e.what();
    bad = what.substr(0, what.find(':'));  // CLI11 messages start with the option name
    return false;
  }
  for (CLI::App* sub : app.get_subcommands()) {
    if (!sub->remaining().empty()) {
      bad = sub->remaining().front();
      return false;
    }
  }
  if (!app.remaining().empty()) {
    bad = app.remaining().front();
    return false;
  }
  return true;
}

bool parse_id(const std::string& text, int& out) {
  if (text.empty() || text.size() > 9 || !std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return false;
  }
  out = std::stoi(text);
  return true;
}

}  // namespace cli

namespace {

int usage_error(Context& ctx, const std::string& message) {
  *ctx.err << "npu-smi: " << message << "\n";
  return kExitUsage;
}

// --format=csv[,noheader][,nounits]
bool parse_csv_format(const std::string& text, CsvOptions& out, std::string& bad) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t comma = text.find(',', start);
    parts.push_back(text.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (parts.front() != "csv") {
    bad = parts.front();
    return false;
  }
  for (std::size_t i = 1; i < parts.size(); ++i) {
    if (parts[i] == "noheader") out.header = false;
    else if (parts[i] == "nounits") out.units = false;
    else {
      bad = parts[i];
      return false;
    }
  }
  return true;
}

int run_query(Context& ctx, const std::vector<std::string>& args) {
  CLI::App app{"npu-smi"};
  app.set_help_flag();
  std::string query, format, id;
  bool help_query = false;
  app.add_option("--query,--query-gpu", query);
  app.add_option("--format", format);
  app.add_option("-i,--id", id);
  app.add_flag("--help-query", help_query);
  std::string bad;
  if (!cli::parse(app, args, bad)) return usage_error(ctx, "unexpected argument '" + bad + "' (see npu-smi -h)");
  if (help_query) {
    *ctx.out << help_query_text();
    return kExitOk;
  }
  QueryOptions q;
  if (query.empty()) return usage_error(ctx, "--query needs a comma-separated field list (see npu-smi --help-query)");
  for (std::size_t start = 0; start <= query.size();) {
    std::size_t comma = query.find(',', start);
    std::string key = query.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    const Column* col = find_column(key);
    if (col == nullptr) return usage_error(ctx, "--query: unknown field '" + key + "' (see npu-smi --help-query)");
    q.columns.push_back(col->key);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (format.empty()) return usage_error(ctx, "--query needs --format=csv[,noheader][,nounits]");
  if (!parse_csv_format(format, q.csv, bad)) return usage_error(ctx, "--format: unknown option '" + bad + "' (use csv[,noheader][,nounits])");
  int rc = kExitOk;
  auto session = open_session(ctx, rc);
  if (!session) return rc;
  if (!id.empty()) {
    int npu = -1;
    if (!cli::parse_id(id, npu) || devices_of_card(session->snapshot, npu).empty()) {
      return usage_error(ctx, "-i: no NPU id '" + id + "' on node '" + session->snapshot.node().node_name + "'");
    }
    q.npu = npu;
  }
  return cmd_query(ctx, *session, q);
}

int run_health(Context& ctx, const std::vector<std::string>& args) {
  CLI::App app{"npu-smi health"};
  app.set_help_flag();
  std::string id;
  bool json = false, help = false, verbose = false, npd = false;
  app.add_option("-i", id);
  app.add_flag("--json", json);
  app.add_flag("-v,--verbose", verbose);
  app.add_flag("--npd", npd);
  app.add_flag("-h,--help", help);
  std::string bad;
  if (!cli::parse(app, args, bad)) return usage_error(ctx, "health: unexpected argument '" + bad + "' (see npu-smi health -h)");
  if (help) {
    *ctx.out << health_help();
    return kExitOk;
  }
  int rc = kExitOk;
  std::ostringstream npd_err;
  Context quiet = ctx;
  if (npd) quiet.err = &npd_err;  // node-problem-detector reads one line on stdout
  auto session = open_session(quiet, rc);
  if (!session) return npd ? npd_unknown(*ctx.out, npd_err.str()) : rc;
  std::optional<int> npu;
  if (!id.empty()) {
    int n = -1;
    if (!cli::parse_id(id, n) || devices_of_card(session->snapshot, n).empty()) {
      return usage_error(ctx, "health -i: no NPU id '" + id + "' on node '" + session->snapshot.node().node_name + "'");
    }
    npu = n;
  }
  if (npd) return npd_line(*ctx.out, session->snapshot, npu ? devices_of_card(session->snapshot, *npu) : std::vector<int>{});
  return cmd_health(ctx, *session, npu, json, verbose);
}

int run_stats(Context& ctx, const std::vector<std::string>& args) {
  CLI::App app{"npu-smi stats"};
  app.set_help_flag();
  std::string job;
  bool json = false, help = false;
  app.add_option("--job,-j", job);
  app.add_flag("--json", json);
  app.add_flag("-h,--help", help);
  std::string bad;
  if (!cli::parse(app, args, bad)) return usage_error(ctx, "stats: unexpected argument '" + bad + "' (see npu-smi stats -h)");
  if (help) {
    *ctx.out << stats_help();
    return kExitOk;
  }
  std::optional<int> id;
  if (!job.empty()) {
    int n = -1;
    if (!cli::parse_id(job, n)) return usage_error(ctx, "stats --job: '" + job + "' is not a job id");
    id = n;
  }
  int rc = kExitOk;
  auto session = open_session(ctx, rc);
  if (!session) return rc;
  return cmd_stats(ctx, *session, id, json);
}

int run_topo(Context& ctx, const std::vector<std::string>& args) {
  CLI::App app{"npu-smi topo"};
  app.set_help_flag();
  bool json = false, help = false;
  app.add_flag("--json", json);
  app.add_flag("-h,--help", help);
  std::string bad;
  if (!cli::parse(app, args, bad)) return usage_error(ctx, "topo: unexpected argument '" + bad + "' (see npu-smi topo -h)");
  if (help) {
    *ctx.out << topo_help();
    return kExitOk;
  }
  int rc = kExitOk;
  auto session = open_session(ctx, rc);
  return session ? cmd_topo(ctx, *session, json) : rc;
}

bool starts_with(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

}  // namespace

namespace {

int dispatch(Context& ctx, int argc, const char* const* argv) {
  if (argc < 2) {
    *ctx.out << top_help();
    return kExitInvalidParameter;
  }
  std::string command = argv[1];
  std::vector<std::string> rest(argv + 2, argv + argc);
  if (command == "-h" || command == "--help") {
    *ctx.out << top_help();
    return kExitOk;
  }
  if (command == "--version") {  // npukit's own; -v is Huawei's, the node's driver and firmware versions
    *ctx.out << telemetry::version_line("npu-smi") << "\n";
    return kExitOk;
  }
  if (command == "-v") {
    int rc = kExitOk;
    auto session = open_session(ctx, rc);
    return session ? cmd_version(ctx, *session) : rc;
  }
  if (command == "info") return cli::run_info(ctx, rest);
  if (command == "set") return cli::run_set(ctx, rest, false);
  if (command == "clear") return cli::run_set(ctx, rest, true);
  if (command == "health") return run_health(ctx, rest);
  if (command == "topo") return run_topo(ctx, rest);
  if (command == "stats") return run_stats(ctx, rest);
  if (command == "diag") return run_diag_command(ctx, rest);
  if (starts_with(command, "--query") || starts_with(command, "--format") || command == "--help-query" ||
      command == "-i" || command == "--id") {
    return run_query(ctx, std::vector<std::string>(argv + 1, argv + argc));
  }
  *ctx.out << "Command or option is not found.\n" << top_help();
  return kExitNotFound;
}

}  // namespace

int run_cli(Context& ctx, int argc, const char* const* argv) {
  try {
    return dispatch(ctx, argc, argv);
  } catch (const std::exception& e) {  // nothing may escape the library (STYLE.md item 9)
    *ctx.err << "npu-smi: internal error: " << e.what() << "\n";
    return kExitBusError;
  }
}

}  // namespace npukit::smi
