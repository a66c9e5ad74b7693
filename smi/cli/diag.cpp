#include "smi/cli/diag.hpp"

#include <atomic>
#include <csignal>
#include <cstdlib>
#include <optional>
#include <ostream>

#include "smi/cli/cli.hpp"
#include "smi/cli/commands.hpp"
#include "smi/common/text.hpp"
#include "telemetry/json_reader.hpp"

namespace npukit::smi {

namespace tf = telemetry;
namespace pr = probes;

namespace {

// Set by SIGINT/SIGTERM while active tests run (a lock-free atomic: safe in a signal handler).
std::atomic<bool> g_interrupted{false};
static_assert(std::atomic<bool>::is_always_lock_free);

void note_interrupt(int) { g_interrupted.store(true); }

// While it lives, SIGINT and SIGTERM set g_interrupted instead of killing npu-smi, so the test
// jobs it submitted are cancelled rather than left running on the node.
class InterruptGuard {
 public:
  InterruptGuard() {
    g_interrupted.store(false);
    struct sigaction sa {};
    sa.sa_handler = note_interrupt;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_int_);
    sigaction(SIGTERM, &sa, &old_term_);
  }
  ~InterruptGuard() {
    sigaction(SIGINT, &old_int_, nullptr);
    sigaction(SIGTERM, &old_term_, nullptr);
  }
  InterruptGuard(const InterruptGuard&) = delete;
  InterruptGuard& operator=(const InterruptGuard&) = delete;

 private:
  struct sigaction old_int_ {};
  struct sigaction old_term_ {};
};

constexpr int kNameWidth = 27;    // dashes of the first column
constexpr int kResultWidth = 48;  // dashes of the second column

const char* result_word(pr::Verdict v) {
  switch (v) {
    case pr::Verdict::kPass: return "Pass";
    case pr::Verdict::kWarn: return "Warn";
    case pr::Verdict::kFail: return "Fail";
    case pr::Verdict::kUnknown: return "Unknown";
  }
  return "Unknown";
}

std::string npu_label(const tf::Snapshot& s, int device) {
  const tf::DeviceInfo& info = s.device_info(device);
  return info.chip_id == 0 ? std::to_string(info.npu_id) : std::to_string(info.npu_id) + "." + std::to_string(info.chip_id);
}

std::string row(const std::string& name, const std::string& result) {
  return strprintf("| %-*s| %-*s|\n", kNameWidth - 1, name.c_str(), kResultWidth - 1, result.c_str());
}

std::string rule(char fill) {
  return "+" + std::string(kNameWidth, fill) + "+" + std::string(kResultWidth, fill) + "+\n";
}

std::string category_row(const std::string& category) {
  std::string left = "-----  " + category + "  ";
  left += std::string(left.size() < kNameWidth ? kNameWidth - left.size() : 0, '-');
  return "|" + left + "+" + std::string(kResultWidth, '-') + "|\n";
}

}  // namespace

int verdict_exit_code(pr::Verdict v) {
  switch (v) {
    case pr::Verdict::kPass: return kExitOk;
    case pr::Verdict::kWarn: return kExitHealthWarn;
    case pr::Verdict::kFail: return kExitHealthFail;
    case pr::Verdict::kUnknown: return kExitHealthUnknown;
  }
  return kExitHealthUnknown;
}

std::string diag_result_text(const tf::Snapshot& s, const pr::DiagTestResult& t) {
  std::string word = result_word(t.verdict);
  if (!t.per_device) return word;
  if (t.verdict == pr::Verdict::kPass) return word + " - All";
  // Every verdict below PASS that a chip (or the node: a link's incident) got, worst first:
  // "Fail - NPU: 5; Warn - NPU: 1", "Fail - node; Warn - NPU: 1.1".
  std::string text;
  for (pr::Verdict v : {pr::Verdict::kFail, pr::Verdict::kUnknown, pr::Verdict::kWarn}) {
    std::string ids;
    bool node = false;
    for (const pr::DiagDeviceResult& d : t.devices) {
      if (d.verdict != v) continue;
      if (d.device < 0) node = true;
      else ids += (ids.empty() ? "" : ", ") + npu_label(s, d.device);
    }
    std::string word = result_word(v);
    if (node) text += (text.empty() ? "" : "; ") + word + " - node";
    if (!ids.empty()) text += (text.empty() ? "" : "; ") + word + " - NPU: " + ids;
  }
  return text;
}

std::string render_diag_box(const tf::Snapshot& s, const pr::DiagReport& r, bool verbose) {
  std::string out = "Successfully ran diagnostic level " + std::to_string(r.level) + " on node " + s.node().node_name +
                    " (" + s.node().node_spec + ").\n";
  out += rule('-') + row("Diagnostic", "Result") + rule('=');
  std::string category;
  for (const pr::DiagTestResult& t : r.tests) {
    if (t.category != category) out += category_row(category = t.category);
    out += row(t.name, diag_result_text(s, t));
  }
  out += rule('-');
  for (const pr::DiagTestResult& t : r.tests) {
    for (const pr::DiagDeviceResult& d : t.devices) {
      std::string where = d.device < 0 ? "node" : "NPU " + npu_label(s, d.device);
      if (verbose && !d.measured.empty()) out += t.name + ", " + where + ": measured " + d.measured + "\n";
      for (const std::string& why : d.reasons) out += t.name + ", " + where + ": " + why + "\n";
    }
  }
  out += std::string("Result: ") + pr::verdict_name(r.verdict) + " (exit " + std::to_string(verdict_exit_code(r.verdict)) + ")\n";
  return out;
}

nlohmann::json diag_json(const tf::Snapshot& s, const pr::DiagReport& r) {
  nlohmann::json tests = nlohmann::json::array();
  for (const pr::DiagTestResult& t : r.tests) {
    nlohmann::json devices = nlohmann::json::array();
    for (const pr::DiagDeviceResult& d : t.devices) {
      nlohmann::json o = {{"verdict", pr::verdict_name(d.verdict)}, {"reasons", d.reasons}};
      if (!d.measured.empty()) o["measured"] = d.measured;
      if (d.device >= 0) o["npu_id"] = s.device_info(d.device).npu_id, o["chip_id"] = s.device_info(d.device).chip_id;
      devices.push_back(std::move(o));
    }
    tests.push_back({{"name", t.name}, {"category", t.category}, {"verdict", pr::verdict_name(t.verdict)},
                     {"result", diag_result_text(s, t)}, {"devices", std::move(devices)}});
  }
  return {{"node", s.node().node_name}, {"node_spec", s.node().node_spec}, {"level", r.level},
          {"verdict", pr::verdict_name(r.verdict)}, {"exit_code", verdict_exit_code(r.verdict)}, {"tests", std::move(tests)}};
}

std::string diag_help() {
  return "Usage: npu-smi diag [-r level] [-i id] [--duration S] [-v] [--json]\n"
         "\n"
         "Runs diagnostics by level (like dcgmi diag) and prints a result box.\n"
         "  -r 1          quick (seconds): node reachable, device count, device specs, processes,\n"
         "                health rules (default)\n"
         "  -r 2          medium: + memory pattern test over all free HBM, PCIe and HCCS\n"
         "                bandwidth against the topology, compute TFLOPS and HBM bandwidth against\n"
         "                the chip's reference (test programs run on the node)\n"
         "  -r 3          long: + targeted stress with a thermal watch\n"
         "  -i id         only this card's chips\n"
         "  --duration S  level 3 stress length in the node's seconds (default 60)\n"
         "  -v            also print what each test measured\n"
         "Exit: 0 all Pass, 1 Warn, 2 Fail, 3 Unknown (stale node), 4 usage, 5 no node,\n"
         "      130 interrupted (the test jobs are cancelled).\n";
}

namespace {

// What `npu-smi diag ...` asked for.
struct DiagRequest {
  int level = 1;
  std::string id;  // -i: a card id, or empty for every chip
  bool json = false;
  bool verbose = false;
  pr::DiagOptions options;
};

// Parses diag's arguments into `req`. Returns the exit code to end with for -h and bad input
// (its line already printed), nothing when the diagnostics should run.
std::optional<int> parse_diag_args(Context& ctx, const std::vector<std::string>& args, DiagRequest& req) {
  CLI::App app{"npu-smi diag"};
  app.set_help_flag();
  std::string level_text = "1", duration_text;
  bool help = false;
  app.add_option("-r", level_text);
  app.add_option("-i", req.id);
  app.add_option("--duration", duration_text);
  app.add_flag("-v,--verbose", req.verbose);
  app.add_flag("--json", req.json);
  app.add_flag("-h,--help", help);
  std::string bad;
  auto usage = [&ctx](const std::string& m) {
    *ctx.err << "npu-smi: diag: " << m << "\n";
    return kExitUsage;
  };
  if (!cli::parse(app, args, bad)) return usage("unexpected argument '" + bad + "' (see npu-smi diag -h)");
  if (help) {
    *ctx.out << diag_help();
    return kExitOk;
  }
  if (!cli::parse_id(level_text, req.level) || req.level < 1 || req.level > pr::max_diag_level()) {
    return usage("-r '" + level_text + "': expected a level from 1 to " + std::to_string(pr::max_diag_level()));
  }
  if (!duration_text.empty()) {
    char* end = nullptr;
    double& seconds = req.options.stress_seconds;
    seconds = std::strtod(duration_text.c_str(), &end);
    if (end == duration_text.c_str() || *end != '\0' || !(seconds >= 1 && seconds <= 86400)) {
      return usage("--duration '" + duration_text + "': expected seconds from 1 to 86400");
    }
  }
  return std::nullopt;
}

// Active tests (level 2 and up) take seconds to minutes: SIGINT/SIGTERM ends them (the caller
// holds the InterruptGuard), a terminal is told which test runs (scripts get only the box), and
// they are judged against the node's healthy reference.
void prepare_active_tests(Context& ctx, Session& session, const DiagRequest& req, pr::DiagContext& diag) {
  // The context's stop (embedding code, tests) ends them as the signals do.
  diag.interrupted = [stop = ctx.stop] { return g_interrupted.load() || stop.stop_requested(); };
  if (ctx.err_is_tty) {
    double seconds = req.options.stress_seconds;
    diag.on_test_start = [&ctx, seconds](const pr::DiagTest& t) {
      if (t.level < 2) return;
      *ctx.err << "npu-smi: diag: running " << t.name
               << (t.level == 3 ? " (" + std::to_string(static_cast<int>(seconds)) + " s of the node's time)" : "")
               << "...\n" << std::flush;
    };
  }
  if (session.snapshot.stale()) return;
  auto reference = pr::fetch_reference(*session.client);
  if (!reference.ok()) *ctx.err << "npu-smi: diag: " << reference.status().message() << "\n";
  else diag.reference = std::move(*reference);
}

}  // namespace

int run_diag_command(Context& ctx, const std::vector<std::string>& args) {
  DiagRequest req;
  if (auto rc = parse_diag_args(ctx, args, req)) return *rc;
  int rc = kExitOk;
  auto session = open_session(ctx, rc);
  if (!session) return rc;
  std::vector<int> devices;
  if (!req.id.empty()) {
    int n = -1;
    if (!cli::parse_id(req.id, n) || (devices = devices_of_card(session->snapshot, n)).empty()) {
      *ctx.err << "npu-smi: diag: -i: no NPU id '" << req.id << "' on node '"
               << session->snapshot.node().node_name << "'\n";
      return kExitUsage;
    }
  }
  pr::DiagContext diag{session->snapshot, session->client.get(), nullptr, req.options, {}, {}};
  std::optional<InterruptGuard> guard;
  if (req.level >= 2) {
    guard.emplace();
    prepare_active_tests(ctx, *session, req, diag);
  }
  pr::DiagReport report = pr::run_diag(diag, req.level, devices);
  if (diag.interrupted && diag.interrupted()) {
    *ctx.err << "npu-smi: diag: interrupted; the test jobs still running were cancelled\n";
    return kExitInterrupted;
  }
  *ctx.out << (req.json ? json_text(diag_json(session->snapshot, report), 2) + "\n"
                        : render_diag_box(session->snapshot, report, req.verbose));
  return verdict_exit_code(report.verdict);
}

}  // namespace npukit::smi
