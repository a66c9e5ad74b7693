#include "smi/exporter/server.hpp"

#include <arpa/inet.h>

#include <chrono>
#include <ostream>

#include <CLI/CLI.hpp>

#include "smi/exporter/metrics.hpp"
#include "smi/exporter/text.hpp"
#include "telemetry/naming.hpp"
#include "telemetry/version.hpp"

namespace npukit::smi::exporter {

namespace tf = telemetry;

namespace {

bool parse_listen(const std::string& text, ExporterOptions& out) {
  std::size_t colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == text.size() || colon + 6 < text.size()) return false;
  std::string port = text.substr(colon + 1);
  for (char c : port) {
    if (c < '0' || c > '9') return false;
  }
  int p = std::stoi(port);
  if (p > 65535) return false;
  // A host the server cannot bind (malformed, IPv6) is a bad argument, not a failure to listen.
  std::string host = text.substr(0, colon);
  if (!listen_address(host)) return false;
  out.host = host;
  out.port = p;
  return true;
}

}  // namespace

std::optional<std::string> listen_address(const std::string& host) {
  std::string ip = host == "localhost" ? "127.0.0.1" : host;
  in_addr addr{};
  if (inet_pton(AF_INET, ip.c_str(), &addr) != 1) return std::nullopt;
  return ip;
}

std::shared_ptr<tf::Client> Exporter::client(std::string& error) {
  std::lock_guard lock(mu_);
  if (client_) return client_;
  auto opened = open_();
  if (!opened.ok()) {
    error = opened.status().message();
    return nullptr;
  }
  client_ = std::shared_ptr<tf::Client>(std::move(*opened));
  return client_;
}

void Exporter::drop(const std::shared_ptr<tf::Client>& broken) {
  std::lock_guard lock(mu_);
  if (client_ == broken) client_.reset();
}

std::string Exporter::scrape() {
  auto start = std::chrono::steady_clock::now();
  ScrapeStatus st;
  st.node = node_;
  st.version = std::string(telemetry::kVersion);
  std::optional<tf::Snapshot> snap;
  if (auto c = client(st.error)) {
    auto s = c->snapshot();
    if (s.ok()) {
      snap = std::move(*s);
    } else {
      st.error = s.status().message();
      drop(c);  // reopen on the next scrape (a restarted or replaced segment)
    }
  }
  st.reachable = snap.has_value();
  st.scrapes_total = scrapes_.fetch_add(1) + 1;
  bool failed = !snap || snap->stale();
  st.scrape_errors_total = errors_.load() + (failed ? 1 : 0);
  if (failed) errors_.fetch_add(1);
  st.last_scrape_seconds = last_seconds_.load();
  std::string body = render_metrics(snap ? &*snap : nullptr, st);
  last_seconds_.store(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  return body;
}

namespace {

struct RawArgs {
  std::string listen, node;
  bool help = false, version = false;
};

// npu-exporter's manual beyond its options (man npu-exporter, and --help's footer).
cli::Manual manual() {
  cli::Manual m;
  m.name = "npu-exporter";
  m.summary = "serve an npukit node's telemetry as Prometheus metrics";
  m.description = {
      "Serves the node's telemetry at http://HOST:PORT/metrics (text/plain; version=0.0.4): the MindX DL "
      "npu_chip_info_* names plus every field of the bus, each device labelled by id, name and bus id. A "
      "scrape reads the snapshot the node already published and never makes the node measure anything; "
      "while the node is absent or stale the exporter still answers, with npukit_node_up 0.",
      "deploy/ holds a Prometheus scrape config, alert rules and a Grafana dashboard for it, and systemd "
      "units (npu-exporter@NODE.service).",
  };
  m.exit_codes = {{"0", "stopped by SIGINT or SIGTERM"},
                  {"1", "cannot listen on the address (at start, or accept() failing for good later)"},
                  {std::to_string(exit_code::kUsage), "usage: a bad option or value (one line names it)"}};
  m.environment = {cli::npu_node_variable()};
  m.examples = {{"npu-exporter --node-name lab", "serve node lab on 127.0.0.1:9101"},
                {"npu-exporter --listen 0.0.0.0:9101", "serve on every interface"},
                {"curl -s localhost:9101/metrics | grep npu_chip_info_power", "read it"}};
  m.see_also = {"npu-smi(1)", "npu-emud(1)", "prometheus(1)"};
  return m;
}

void build_app(CLI::App& app, RawArgs& r) {
  cli::present(app, manual(), "serve an npukit node's telemetry as Prometheus metrics", false);
  app.set_help_flag();  // our own -h: a parse error must name the bad option, not print help
  app.add_option("--listen", r.listen, "address to listen on (default 127.0.0.1:9101; port 0: any free)")
      ->type_name("HOST:PORT");
  app.add_option("--node-name,--node", r.node, "node to export (default $NPU_NODE, else npukit)")->type_name("NODE");
  app.add_flag("-h,--help", r.help, "this help");
  app.add_flag("--version", r.version, "print the version and exit");
}

}  // namespace

npukit::cli::Program exporter_program() {
  CLI::App app;
  RawArgs r;
  build_app(app, r);
  return {cli::describe(app), manual(), nullptr};
}

std::string exporter_help() {
  CLI::App app;
  RawArgs r;
  build_app(app, r);
  return app.help();
}

bool parse_exporter_args(int argc, const char* const* argv, ExporterOptions& out, bool& help, std::string& error) {
  CLI::App app;
  RawArgs r;
  build_app(app, r);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    error = e.what();
    return false;
  }
  if (r.version) out.version = true;
  help = r.help;
  if (help) return true;
  if (!r.listen.empty() && !parse_listen(r.listen, out)) {
    error = "--listen: '" + r.listen + "' is not IPV4:PORT or localhost:PORT (e.g. 127.0.0.1:9101)";
    return false;
  }
  out.node = r.node.empty() ? tf::node_name_from_env() : r.node;
  if (Status s = tf::validate_node_name(out.node); !s.ok()) {
    error = s.message();
    return false;
  }
  return true;
}

}  // namespace npukit::smi::exporter
