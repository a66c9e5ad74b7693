// npu-exporter: serves render_metrics() (metrics.hpp) over HTTP at /metrics.
//
//   npu-exporter [--listen HOST:PORT] [--node NAME]
//   default --listen 127.0.0.1:9101; port 0 picks a free port. The node is --node, else
//   $NPU_NODE, else "npukit". The exporter may start before the node and survives its restarts:
//   each scrape reads the bus snapshot (opening the bus when it is not open yet); it never makes
//   the node measure anything.
// Prints one line "npu-exporter: listening on http://HOST:PORT/metrics (node NAME)" once bound.
// Exit: 0 stopped by SIGINT/SIGTERM, 1 cannot listen (at start, or accept() failing for good
// later), 4 bad arguments.
//
// Thread-safety: Exporter::scrape() may be called from several threads at once.
#pragma once

#include "telemetry/exit_codes.hpp"
#include <atomic>
#include <functional>
#include <iosfwd>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "telemetry/cli/meta.hpp"
#include "telemetry/client.hpp"

namespace npukit::smi::exporter {

inline constexpr int kExitListenFailed = 1;
inline constexpr int kExitBadArguments = exit_code::kUsage;

class Exporter {
 public:
  using Opener = std::function<Result<std::unique_ptr<telemetry::Client>>()>;
  Exporter(std::string node, Opener open) : node_(std::move(node)), open_(std::move(open)) {}
  // The exposition for one scrape.
  std::string scrape();

 private:
  std::shared_ptr<telemetry::Client> client(std::string& error);
  void drop(const std::shared_ptr<telemetry::Client>& broken);

  std::string node_;
  Opener open_;
  std::mutex mu_;
  std::shared_ptr<telemetry::Client> client_;
  std::atomic<uint64_t> scrapes_{0};
  std::atomic<uint64_t> errors_{0};
  std::atomic<double> last_seconds_{0};
};

struct ExporterOptions {
  std::string host = "127.0.0.1";
  int port = 9101;
  std::string node;
  bool version = false;  // --version: print it and exit
};
// The IPv4 address the server binds for `host` (an IPv4 address, or localhost: 127.0.0.1);
// nullopt for anything else (a malformed or IPv6 address).
std::optional<std::string> listen_address(const std::string& host);
// false with a one-line message in `error` for bad arguments; `help` set for -h/--help.
bool parse_exporter_args(int argc, const char* const* argv, ExporterOptions& out, bool& help, std::string& error);
std::string exporter_help();
// The command model and manual (man npu-exporter, completion).
npukit::cli::Program exporter_program();

// The whole program: parse, bind, serve until SIGINT/SIGTERM (http.cpp). The HTTP side
// is cpp-httplib's Server (GET/HEAD /metrics and /; one request per connection, "Connection:
// close"): up to 8 connections served at once, each with a 2 s read and 5 s write timeout, so a
// slow or silent client never delays another scrape.
int run_exporter(int argc, const char* const* argv, std::ostream& out, std::ostream& err);

}  // namespace npukit::smi::exporter
