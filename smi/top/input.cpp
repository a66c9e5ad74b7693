#include "smi/top/input.hpp"

#include <algorithm>

#include "smi/top/canvas.hpp"
#include "smi/top/format.hpp"

namespace npukit::top {

namespace {

// Actions stay within 48 cells so the help fits an 80-column terminal.
constexpr KeyHelp kKeys[] = {
    {"q Esc", "quit (Esc first closes a dialog or the filter)", "q:quit"},
    {"h ?", "this help (any key closes it)", "h:help"},
    {"Up Dn PgUp PgDn Home End", "select a process", ""},
    {"s", "sort by next column: PID NPU memory share name", "s:sort"},
    {"r", "reverse the sort order", ""},
    {"/", "filter by name or pid (Enter keeps, Esc clears)", "/:filter"},
    {"k", "signal the selected process (yours; asks first)", "k:kill"},
    {"Left Right [ ]", "focus the previous/next NPU (history panel)", ""},
    {"+ -", "refresh slower/faster (0.1 s to 10 s)", "+-:rate"},
    {"p Space", "pause/resume collection", "p:pause"},
    {"v", "device view: auto, compact, detailed", "v:view"},
    {"w", "history window: 30s, 1m, 5m, 15m, 1h", "w:window"},
    {"mouse", "click: sort by header, select row, focus NPU", ""},
};

constexpr char32_t kCtrlU = 0x15;

bool is_text(char32_t key) { return key >= 0x20 && key < 0x110000 && key != 0x7F; }

Outcome move_selection(ViewState& v, const Frame& f, int delta, bool absolute) {
  auto rows = visible_processes(f, v);
  if (rows.empty()) return Outcome::kNone;
  int cur = selected_row(rows, v);
  select_row(v, rows, absolute ? delta : cur + delta);
  return Outcome::kRedraw;
}

Outcome start_signal(ViewState& v, const Frame& f, ProcessControl& control) {
  auto rows = visible_processes(f, v);
  int i = selected_row(rows, v);
  if (i < 0) {
    v.status = "no process selected";
    return Outcome::kRedraw;
  }
  const ProcessRow& p = *rows[static_cast<std::size_t>(i)];
  Status may = control.may_signal(p.pid);
  if (!may.ok()) {
    v.status = may.message();
    return Outcome::kRedraw;
  }
  v.signal_target = {p.pid, p.device};
  v.signal_target_name = p.name;
  v.signal_index = 0;
  v.mode = Mode::kSignalPick;
  return Outcome::kRedraw;
}

const char* view_name(DeviceView view) {
  switch (view) {
    case DeviceView::kAuto: return "auto (by screen size)";
    case DeviceView::kCompact: return "compact";
    case DeviceView::kDetailed: return "detailed";
  }
  return "";
}

// Every key that changes the view says what it did in the footer: the change may not show on
// its own (a compact view that auto already chose, a refresh rate, a sort with no processes).
Outcome say(ViewState& v, std::string what, Outcome outcome) {
  v.status = std::move(what);
  return outcome;
}

Outcome normal_key(ViewState& v, char32_t key, const Frame& f, int page, ProcessControl& control) {
  const int devices = f.devices();
  switch (key) {
    case 'q': case kKeyEscape: return Outcome::kQuit;
    case 'h': case '?': v.mode = Mode::kHelp; return Outcome::kRedraw;
    case '/': v.mode = Mode::kFilter; return Outcome::kRedraw;
    case 's':
      v.sort = static_cast<SortKey>((static_cast<int>(v.sort) + 1) % kSortKeyCount);
      return say(v, std::string("sorted by ") + sort_key_name(v.sort), Outcome::kRedraw);
    case 'r':
      v.descending = !v.descending;
      return say(v, v.descending ? "sorted descending" : "sorted ascending", Outcome::kRedraw);
    case 'k': return start_signal(v, f, control);
    case kKeyUp: return move_selection(v, f, -1, false);
    case kKeyDown: return move_selection(v, f, 1, false);
    case kKeyPageUp: return move_selection(v, f, -std::max(page, 1), false);
    case kKeyPageDown: return move_selection(v, f, std::max(page, 1), false);
    case kKeyHome: return move_selection(v, f, 0, true);
    case kKeyEnd: return move_selection(v, f, 1 << 30, true);
    case kKeyLeft: case '[':
      if (devices > 0) v.focus_device = (v.focus_device + devices - 1) % devices;
      return say(v, "history of NPU " + std::to_string(v.focus_device), Outcome::kRedraw);
    case kKeyRight: case ']':
      if (devices > 0) v.focus_device = (v.focus_device + 1) % devices;
      return say(v, "history of NPU " + std::to_string(v.focus_device), Outcome::kRedraw);
    case '+': case '=':
      v.interval_s = step_interval(v.interval_s, 1);
      return say(v, "refresh every " + format_interval(v.interval_s), Outcome::kCollect);
    case '-': case '_':
      v.interval_s = step_interval(v.interval_s, -1);
      return say(v, "refresh every " + format_interval(v.interval_s), Outcome::kCollect);
    case 'p': case ' ':
      v.paused = !v.paused;
      return say(v, v.paused ? "paused (p resumes)" : "resumed", v.paused ? Outcome::kRedraw : Outcome::kCollect);
    case 'v':
      v.device_view = static_cast<DeviceView>((static_cast<int>(v.device_view) + 1) % 3);
      return say(v, std::string("view: ") + view_name(v.device_view), Outcome::kRedraw);
    case 'w':
      v.window = (v.window + 1) % static_cast<int>(std::size(kWindowSeconds));
      return say(v, "history window " + format_window(window_ns(v)), Outcome::kRedraw);
    case kKeyResize: return Outcome::kRedraw;
    default:
      if (key < 0x20 || key >= kKeyUp) return Outcome::kNone;
      return say(v, "no action on that key: h shows the keys", Outcome::kRedraw);
  }
}

Outcome filter_key(ViewState& v, char32_t key, const Frame& f) {
  if (key == kKeyEnter) {
    v.mode = Mode::kNormal;
  } else if (key == kKeyEscape) {
    v.filter.clear();
    v.mode = Mode::kNormal;
  } else if (key == kKeyBackspace) {
    if (!v.filter.empty()) v.filter = fit(v.filter, display_width(v.filter) - 1);
  } else if (key == kCtrlU) {
    v.filter.clear();
  } else if (is_text(key) && display_width(v.filter) < 40) {
    append_utf8(v.filter, key);
  } else {
    return key == kKeyResize ? Outcome::kRedraw : Outcome::kNone;
  }
  select_row(v, visible_processes(f, v), 0);
  return Outcome::kRedraw;
}

Outcome signal_key(ViewState& v, char32_t key, ProcessControl& control) {
  const int n = static_cast<int>(signal_choices().size());
  if (v.mode == Mode::kSignalPick) {
    if (key == kKeyUp) v.signal_index = (v.signal_index + n - 1) % n;
    else if (key == kKeyDown) v.signal_index = (v.signal_index + 1) % n;
    else if (key == kKeyEnter) v.mode = Mode::kSignalConfirm;
    else if (key == kKeyEscape || key == 'q') v.mode = Mode::kNormal;
    else return key == kKeyResize ? Outcome::kRedraw : Outcome::kNone;
    return Outcome::kRedraw;
  }
  const SignalChoice& sig = signal_choices()[static_cast<std::size_t>(v.signal_index)];
  std::string who = "PID " + std::to_string(v.signal_target.pid);
  v.mode = Mode::kNormal;
  if (key != 'y' && key != 'Y') {
    v.status = std::string(sig.name) + " to " + who + " cancelled";
    return Outcome::kRedraw;
  }
  Status s = control.may_signal(v.signal_target.pid);
  if (s.ok()) s = control.send(v.signal_target.pid, sig.number);
  v.status = s.ok() ? "sent " + std::string(sig.name) + " to " + who + " (" + v.signal_target_name + ")"
                    : s.message();
  return Outcome::kCollect;
}

}  // namespace

std::span<const KeyHelp> key_help() { return kKeys; }

Outcome handle_key(ViewState& v, char32_t key, const Frame& f, int page, ProcessControl& control) {
  switch (v.mode) {
    case Mode::kHelp:
      if (key != kKeyResize) v.mode = Mode::kNormal;
      return Outcome::kRedraw;
    case Mode::kFilter:
      return filter_key(v, key, f);
    case Mode::kSignalPick:
    case Mode::kSignalConfirm:
      return signal_key(v, key, control);
    case Mode::kNormal:
      break;
  }
  if (key != kKeyResize) v.status.clear();
  return normal_key(v, key, f, page, control);
}

Outcome handle_mouse(ViewState& v, int x, int y, MouseButton button, const Frame& f, const Layout& l) {
  if (v.mode != Mode::kNormal || l.too_small) return Outcome::kNone;
  if (button == MouseButton::kWheelUp || button == MouseButton::kWheelDown) {
    return move_selection(v, f, button == MouseButton::kWheelUp ? -1 : 1, false);
  }
  for (std::size_t d = 0; d < l.devices.size(); ++d) {
    if (l.devices[d].contains(x, y)) {
      v.focus_device = static_cast<int>(d);
      return Outcome::kRedraw;
    }
  }
  if (!l.processes.contains(x, y)) return Outcome::kNone;
  if (y == l.processes.y) {
    for (const auto& c : process_columns(l.processes.w)) {
      if (x < c.x || x >= c.x + c.w) continue;
      auto key = static_cast<SortKey>(c.id);
      v.descending = key == v.sort ? !v.descending : true;
      v.sort = key;
      return Outcome::kRedraw;
    }
    return Outcome::kNone;
  }
  auto rows = visible_processes(f, v);
  int page = l.processes.h - 1;
  int index = first_visible_row(selected_row(rows, v), page) + (y - l.processes.y - 1);
  if (index >= static_cast<int>(rows.size())) return Outcome::kNone;
  select_row(v, rows, index);
  return Outcome::kRedraw;
}

}  // namespace npukit::top
