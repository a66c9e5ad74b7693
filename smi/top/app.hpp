// npu-top's program logic; npu_top_main.cpp only parses arguments into Options.
//
// Modes:
//   interactive  (default) the curses dashboard on the terminal (curses.hpp); a node that is
//                absent is shown as such and retried every interval.
//   headless     --frames N: renders N frames of --size WxH (default 80x24) as plain text to
//                stdout, one interval apart, frames separated by an empty line. With --replay
//                the frames come from a recording, one per recorded frame, without waiting
//                (interactive: one recorded frame per interval, staying on the last).
//   --record F   (headless) also saves what was collected as a recording (recording.hpp).
//
// Exit codes (docs/npu-top.md):
//   0 ok; 1 runtime failure (the terminal could not be set up, --record could not be written);
//   2 usage (bad option or value, no terminal and no --frames, unreadable --replay file);
//   3 no node: headless mode and the node is not running at the first frame;
//   4 permission: headless mode and the node is another user's, private to them (npu-emud
//     start --access shares it); the dashboard shows the refusal and keeps retrying.
//
// Thread-safety: run() and run_headless() own the calling thread until they return.
#pragma once

#include "telemetry/exit_codes.hpp"
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>

#include "smi/top/layout.hpp"
#include "smi/top/view.hpp"
#include "telemetry/status.hpp"

namespace npukit::top {

inline constexpr int kExitOk = exit_code::kOk;
inline constexpr int kExitError = 1;
inline constexpr int kExitUsage = exit_code::kUsage;
inline constexpr int kExitNoNode = exit_code::kNoNode;
inline constexpr int kExitPermission = exit_code::kNoAccess;

struct Options {
  std::string node = "npukit";
  double interval_s = 1.0;
  bool interval_given = false;  // -d on the command line (a replay otherwise shows its recording's)
  int frames = 0;  // > 0: headless
  int width = 80;  // headless size
  int height = 24;
  bool mono = false;   // --mono (NO_COLOR is read by the curses frontend)
  bool ascii = false;  // --ascii, or a locale that is not UTF-8
  bool mouse = true;
  DeviceView view = DeviceView::kAuto;
  int window_s = 60;
  std::optional<SortKey> sort;
  bool ascending = false;
  std::string filter;
  std::string record;  // --record FILE (headless)
  std::string replay;  // --replay FILE
};

// "WxH" with 1 <= W, H <= 1000; InvalidArgument naming the text otherwise.
Result<std::pair<int, int>> parse_size(std::string_view text);
// Checks the combination of options (ranges, --record needs --frames, ...).
Status validate(const Options& o);
// The ViewState the dashboard starts with.
ViewState initial_view(const Options& o, bool unicode);
// True when the C library's locale (after setlocale(LC_ALL, "")) uses UTF-8.
bool locale_is_utf8();

// The command line into `o` (defaults from $NPU_NODE): kParsedArgs when it holds, else the exit
// code (help printed: kExitOk; a wrong option or value: one line on stderr, kExitUsage).
inline constexpr int kParsedArgs = -1;
int parse_command_line(int argc, const char* const* argv, Options& o);

int run_headless(const Options& o, std::ostream& out, std::ostream& err);
// Headless when o.frames > 0, else the curses dashboard (needs a terminal on stdin/stdout).
int run(const Options& o);

}  // namespace npukit::top
