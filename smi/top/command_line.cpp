// npu-top's command line (app.hpp: parse_command_line).
#include <algorithm>
#include <cstdio>
#include <string>

#include <CLI/CLI.hpp>
#include <iostream>

#include "smi/top/app.hpp"
#include "smi/top/input.hpp"
#include "telemetry/cli/meta.hpp"
#include "telemetry/naming.hpp"
#include "telemetry/version.hpp"

namespace npukit::top {

namespace {

// What the command line sets before it becomes Options.
struct Raw {
  std::string size, view = "auto", sort;
  bool no_mouse = false;
};

// npu-top's manual beyond its options (man npu-top, and --help's footer).
cli::Manual manual() {
  cli::Manual m;
  m.name = "npu-top";
  m.summary = "live dashboard of an npukit node";
  m.description = {
      "Shows every NPU of a node at once: AI Core, HBM, power, temperature and clock with their history, "
      "links, alarms and the processes holding each device, refreshed every --interval seconds. It reads "
      "the node's bus and never slows the node. When no node is running it says how to start one and "
      "keeps retrying; a node that stops is shown as stopped.",
      "With --frames N it runs without a terminal and prints N frames as text (for scripts, logs and "
      "tests); --record saves them, and --replay shows a recording.",
  };
  std::size_t width = 0;
  for (const KeyHelp& k : key_help()) width = std::max(width, k.keys.size());
  std::string keys;
  for (const KeyHelp& k : key_help()) {
    keys += std::string(k.keys) + std::string(width + 2 - k.keys.size(), ' ') + std::string(k.action) + "\n";
  }
  m.verbatim = {{"KEYS", keys}};
  m.exit_codes = {{"0", "quit (q or Esc), or every headless frame printed"},
                  {"1", "the terminal could not be set up, or --record could not be written"}};
  for (auto& e : cli::shared_exit_codes(false)) m.exit_codes.push_back(e);
  for (cli::ExitCode& e : m.exit_codes) {
    if (e.code == std::to_string(kExitNoNode) || e.code == std::to_string(kExitPermission)) e.meaning += " (headless mode only)";
  }
  m.environment = {cli::npu_node_variable(), {"NO_COLOR", "when set, no colour (as --mono)"}};
  m.examples = {{"npu-top --node-name lab", "the dashboard of node lab"},
                {"npu-top --frames 1 --size 120x40", "one frame as text, 120 columns by 40 rows"},
                {"npu-top --frames 30 --record run.json", "30 frames, saved for npu-top --replay run.json"}};
  m.see_also = {"npu-smi(1)", "npu-emud(1)"};
  return m;
}

void build_app(CLI::App& app, Options& o, Raw& r) {
  cli::present(app, manual(), "live dashboard of an npukit node (q quits, h shows the keys)");
  o.node = telemetry::node_name_from_env();
  app.add_option("--node,--node-name", o.node, "node name (default $NPU_NODE or npukit)")->type_name("NODE");
  app.add_option("--interval,-d", o.interval_s, "refresh interval, seconds (0.05-3600; +/- change it live)")
      ->capture_default_str();
  app.add_option("--frames,-n", o.frames, "headless: render N frames as text to stdout, then exit")
      ->check(CLI::Range(1, 1 << 30));
  app.add_option("--size", r.size, "headless screen size WxH (default 80x24)");
  app.add_flag("--mono", o.mono, "no colour (also when NO_COLOR is set)");
  app.add_flag("--ascii", o.ascii, "ASCII glyphs only (default when the locale is not UTF-8)");
  app.add_flag("--no-mouse", r.no_mouse, "do not capture the mouse");
  app.add_option("--view", r.view, "device view")->check(CLI::IsMember({"auto", "compact", "detailed"}))->capture_default_str();
  app.add_option("--window", o.window_s, "history window, seconds (30, 60, 300, 900, 3600)")->capture_default_str();
  app.add_option("--sort", r.sort, "process sort column")->check(CLI::IsMember({"pid", "npu", "memory", "share", "name"}));
  app.add_flag("--ascending", o.ascending, "sort ascending (default descending)");
  app.add_option("--filter", o.filter, "show only processes whose name or pid contains TEXT");
  app.add_option("--record", o.record, "headless: also save the collected frames as a recording (JSON)");
  app.add_option("--replay", o.replay, "show a recording instead of a live node");
}

cli::Program program() {
  CLI::App app;
  Options o;
  Raw r;
  build_app(app, o, r);
  return {cli::describe(app), manual(), nullptr};
}

}  // namespace

int parse_command_line(int argc, const char* const* argv, Options& o) {
  if (auto rc = cli::answer_meta_request(argc, argv, program, std::cout)) return *rc;
  CLI::App app;
  Raw r;
  build_app(app, o, r);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return cli::parse_error_exit(app, e);
  }
  o.interval_given = app.get_option("--interval")->count() > 0;
  if (!r.size.empty()) {
    auto wh = parse_size(r.size);
    if (!wh.ok()) {
      std::fprintf(stderr, "npu-top: %s\n", wh.status().message().c_str());
      return kExitUsage;
    }
    if (o.frames == 0) {
      std::fprintf(stderr, "npu-top: --size is for headless mode: add --frames N\n");
      return kExitUsage;
    }
    std::tie(o.width, o.height) = *wh;
  }
  o.mouse = !r.no_mouse;
  o.view = r.view == "compact" ? DeviceView::kCompact : r.view == "detailed" ? DeviceView::kDetailed : DeviceView::kAuto;
  if (!r.sort.empty()) o.sort = parse_sort_key(r.sort);
  if (auto s = validate(o); !s.ok()) {
    std::fprintf(stderr, "npu-top: %s\n", s.message().c_str());
    return kExitUsage;
  }
  return kParsedArgs;
}

}  // namespace npukit::top
