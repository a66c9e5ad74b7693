#include "smi/exporter/server.hpp"

#include <chrono>
#include <ostream>

#include <CLI/CLI.hpp>

#include "smi/exporter/metrics.hpp"
#include "smi/exporter/text.hpp"
#include "telemetry/naming.hpp"

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
  out.host = text.substr(0, colon);
  out.port = p;
  return true;
}

}  // namespace

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
  st.version = kExporterVersion;
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

std::string exporter_help() {
  return "Usage: npu-exporter [--listen HOST:PORT] [--node-name NAME]\n"
         "\n"
         "Serves the node's telemetry as Prometheus metrics at http://HOST:PORT/metrics\n"
         "(text/plain; version=0.0.4): MindX DL npu_chip_info_* names plus every bus field.\n"
         "\n"
         "Options:\n"
         "       --listen HOST:PORT  address to listen on (default 127.0.0.1:9101; port 0: any free)\n"
         "       --node-name NAME    node to export (default $NPU_NODE, else npukit; --node is the same)\n"
         "       -h, --help          this help\n"
         "\n"
         "Exit: 0 stopped by SIGINT/SIGTERM, 1 cannot listen, 4 bad arguments.\n";
}

bool parse_exporter_args(int argc, const char* const* argv, ExporterOptions& out, bool& help, std::string& error) {
  CLI::App app{"npu-exporter"};
  app.set_help_flag();
  std::string listen, node;
  app.add_option("--listen", listen);
  app.add_option("--node-name,--node", node);
  app.add_flag("-h,--help", help);
  bool version = false;
  app.add_flag("--version", version);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    error = e.what();
    return false;
  }
  if (version) out.version = true;
  if (help) return true;
  if (!listen.empty() && !parse_listen(listen, out)) {
    error = "--listen: '" + listen + "' is not HOST:PORT (e.g. 127.0.0.1:9101)";
    return false;
  }
  out.node = node.empty() ? tf::node_name_from_env() : node;
  if (Status s = tf::validate_node_name(out.node); !s.ok()) {
    error = s.message();
    return false;
  }
  return true;
}

}  // namespace npukit::smi::exporter
