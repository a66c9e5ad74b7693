// npu-top's keys and mouse: what each input does to the ViewState. Frontends translate their
// key codes into code points (printable keys) and the Key values below (special keys), so the
// whole behaviour is tested without a terminal.
//
// The key table (key_help()) is the one list of keys: the help screen and the footer hints are
// drawn from it.
//
// Signals go through ProcessControl, so tests substitute a fake; the system one refuses pids
// the user does not own (unless root) and pids <= 1 before calling kill(2).
//
// Thread-safety: functions of their arguments; ProcessControl implementations are stateless.
#pragma once

#include <memory>
#include <span>
#include <string_view>

#include "smi/top/layout.hpp"
#include "smi/top/model.hpp"
#include "smi/top/view.hpp"
#include "telemetry/status.hpp"

namespace npukit::top {

// Special keys, above the Unicode range.
enum Key : char32_t {
  kKeyUp = 0x110000,
  kKeyDown,
  kKeyLeft,
  kKeyRight,
  kKeyPageUp,
  kKeyPageDown,
  kKeyHome,
  kKeyEnd,
  kKeyEnter,
  kKeyEscape,
  kKeyBackspace,
  kKeyResize,
};

struct KeyHelp {
  std::string_view keys;    // "q Esc"
  std::string_view action;  // "quit (Esc also closes dialogs)"
  std::string_view hint;    // footer text ("q:quit"), empty when not in the footer
};
std::span<const KeyHelp> key_help();

class ProcessControl {
 public:
  virtual ~ProcessControl() = default;
  // Ok when this user may signal `pid`; otherwise why not ("pid 1 belongs to uid 0, not to you").
  virtual Status may_signal(int pid) = 0;
  virtual Status send(int pid, int signal) = 0;
};
std::unique_ptr<ProcessControl> system_process_control();

enum class Outcome : uint8_t {
  kNone,     // nothing changed
  kRedraw,   // the view changed: draw again
  kCollect,  // collect a frame now (interval changed, resumed)
  kQuit,
};

// Applies one key. `page` is the number of process rows on screen (for PgUp/PgDn).
Outcome handle_key(ViewState& v, char32_t key, const Frame& f, int page, ProcessControl& control);

enum class MouseButton : uint8_t { kLeft, kWheelUp, kWheelDown };
// A click on the process header sorts by that column (again: reverses); on a row selects it;
// the wheel moves the selection; a click on a device row or panel focuses that device.
Outcome handle_mouse(ViewState& v, int x, int y, MouseButton button, const Frame& f, const Layout& l);

}  // namespace npukit::top
