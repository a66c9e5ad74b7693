// npu-top's command line (app.hpp: parse_command_line).
#include <cstdio>
#include <string>

#include <CLI/CLI.hpp>

#include "smi/top/app.hpp"
#include "telemetry/naming.hpp"
#include "telemetry/version.hpp"

namespace npukit::top {

int parse_command_line(int argc, const char* const* argv, Options& o) {
  CLI::App app{"npu-top: live dashboard of an npukit node (q quits, h shows the keys)"};
  o.node = telemetry::node_name_from_env();
  std::string size, view = "auto", sort;
  bool no_mouse = false;
  app.add_option("--node,--node-name", o.node, "node name (default $NPU_NODE or npukit)");
  app.add_option("--interval,-d", o.interval_s, "refresh interval, seconds (0.05-3600; +/- change it live)")
      ->capture_default_str();
  app.add_option("--frames,-n", o.frames, "headless: render N frames as text to stdout, then exit")
      ->check(CLI::PositiveNumber);
  app.add_option("--size", size, "headless screen size WxH (default 80x24)");
  app.add_flag("--mono", o.mono, "no colour (also when NO_COLOR is set)");
  app.add_flag("--ascii", o.ascii, "ASCII glyphs only (default when the locale is not UTF-8)");
  app.add_flag("--no-mouse", no_mouse, "do not capture the mouse");
  app.add_option("--view", view, "device view")->check(CLI::IsMember({"auto", "compact", "detailed"}))->capture_default_str();
  app.add_option("--window", o.window_s, "history window, seconds (30, 60, 300, 900, 3600)")->capture_default_str();
  app.add_option("--sort", sort, "process sort column")->check(CLI::IsMember({"pid", "npu", "memory", "share", "name"}));
  app.add_flag("--ascending", o.ascending, "sort ascending (default descending)");
  app.add_option("--filter", o.filter, "show only processes whose name or pid contains TEXT");
  app.add_option("--record", o.record, "headless: also save the collected frames as a recording (JSON)");
  app.add_option("--replay", o.replay, "show a recording instead of a live node");
  app.set_version_flag("--version", telemetry::version_line("npu-top"));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? kExitOk : kExitUsage;
  }
  if (!size.empty()) {
    auto wh = parse_size(size);
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
  o.mouse = !no_mouse;
  o.view = view == "compact" ? DeviceView::kCompact : view == "detailed" ? DeviceView::kDetailed : DeviceView::kAuto;
  if (!sort.empty()) o.sort = parse_sort_key(sort);
  if (auto s = validate(o); !s.ok()) {
    std::fprintf(stderr, "npu-top: %s\n", s.message().c_str());
    return kExitUsage;
  }
  return kParsedArgs;
}

}  // namespace npukit::top
