#include "smi/top/curses.hpp"

#include <signal.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "smi/top/canvas.hpp"
#include "smi/top/render.hpp"

#define NCURSES_WIDECHAR 1
#define NCURSES_NOMACROS 1
#include <curses.h>

namespace npukit::top {

namespace {

volatile sig_atomic_t g_stop = 0;

void on_signal(int) { g_stop = 1; }

struct Look {
  short fg256;
  short fg8;
  attr_t attrs;       // with colour
  attr_t mono_attrs;  // without
};

// Index = Style. Colours are mid tones so they read on dark and light backgrounds.
constexpr Look kLooks[kStyleCount] = {
    {-1, -1, A_NORMAL, A_NORMAL},               // kNormal
    {244, -1, A_NORMAL, A_DIM},                 // kDim
    {-1, -1, A_BOLD, A_BOLD},                   // kBold
    {-1, -1, A_REVERSE | A_BOLD, A_REVERSE | A_BOLD},  // kTitle
    {-1, -1, A_BOLD | A_UNDERLINE, A_BOLD | A_UNDERLINE},  // kColumns
    {-1, -1, A_REVERSE, A_REVERSE},             // kSelected
    {33, COLOR_CYAN, A_BOLD, A_BOLD | A_UNDERLINE},  // kFocus
    {28, COLOR_GREEN, A_NORMAL, A_NORMAL},      // kGood
    {172, COLOR_YELLOW, A_BOLD, A_BOLD},        // kWarn
    {160, COLOR_RED, A_BOLD, A_BOLD | A_REVERSE},  // kCrit
    {33, COLOR_CYAN, A_NORMAL, A_NORMAL},       // kAccent
    {134, COLOR_MAGENTA, A_NORMAL, A_NORMAL},   // kPower
    {166, COLOR_RED, A_NORMAL, A_NORMAL},       // kTemp
};

class CursesCanvas final : public Canvas {
 public:
  explicit CursesCanvas(bool colour) : colour_(colour) {}
  int width() const override { return COLS; }
  int height() const override { return LINES; }
  void set(int x, int y, char32_t ch, Style style) override {
    if (x < 0 || y < 0 || x >= COLS || y >= LINES) return;
    const Look& look = kLooks[static_cast<int>(style)];
    wchar_t text[2] = {static_cast<wchar_t>(ch), 0};
    cchar_t cell;
    short pair = colour_ ? static_cast<short>(static_cast<int>(style) + 1) : 0;
    setcchar(&cell, text, colour_ ? look.attrs : look.mono_attrs, pair, nullptr);
    mvwadd_wch(stdscr, y, x, &cell);
  }
  void clear() override { werase(stdscr); }

 private:
  bool colour_;
};

// Sets up colour pairs (pair = style + 1); false when colour is off or unavailable.
bool setup_colour(bool mono) {
  const char* no_color = std::getenv("NO_COLOR");
  if (mono || (no_color != nullptr && *no_color != '\0') || !has_colors()) return false;
  start_color();
  use_default_colors();
  bool rich = COLORS >= 256;
  for (int s = 0; s < kStyleCount; ++s) {
    short fg = rich ? kLooks[s].fg256 : kLooks[s].fg8;
    init_pair(static_cast<short>(s + 1), fg, -1);
  }
  return true;
}

// Curses for the loop's lifetime: set up in the constructor, the terminal restored at the end.
class Terminal {
 public:
  explicit Terminal(bool mouse) {
    screen_ = newterm(nullptr, stdout, stdin);
    if (screen_ == nullptr) return;
    cbreak();
    noecho();
    keypad(stdscr, TRUE);
    curs_set(0);
    set_escdelay(25);
    if (mouse) {
      mousemask(BUTTON1_PRESSED | BUTTON4_PRESSED | BUTTON5_PRESSED, nullptr);
      mouseinterval(0);
    }
  }
  ~Terminal() {
    if (screen_ == nullptr) return;
    endwin();
    delscreen(screen_);
  }
  bool ok() const { return screen_ != nullptr; }

 private:
  SCREEN* screen_ = nullptr;
};

char32_t translate(int rc, wint_t ch) {
  if (rc == OK) {
    if (ch == 27) return kKeyEscape;
    if (ch == '\n' || ch == '\r') return kKeyEnter;
    if (ch == 127 || ch == 8) return kKeyBackspace;
    return static_cast<char32_t>(ch);
  }
  switch (ch) {
    case KEY_UP: return kKeyUp;
    case KEY_DOWN: return kKeyDown;
    case KEY_LEFT: return kKeyLeft;
    case KEY_RIGHT: return kKeyRight;
    case KEY_PPAGE: return kKeyPageUp;
    case KEY_NPAGE: return kKeyPageDown;
    case KEY_HOME: return kKeyHome;
    case KEY_END: return kKeyEnd;
    case KEY_ENTER: return kKeyEnter;
    case KEY_BACKSPACE: return kKeyBackspace;
    case KEY_RESIZE: return kKeyResize;
    default: return 0;
  }
}

Outcome mouse_outcome(ViewState& v, const Frame& f, const Layout& l) {
  MEVENT ev;
  if (getmouse(&ev) != OK) return Outcome::kNone;
  MouseButton button = MouseButton::kLeft;
  if (ev.bstate & BUTTON4_PRESSED) button = MouseButton::kWheelUp;
  else if (ev.bstate & BUTTON5_PRESSED) button = MouseButton::kWheelDown;
  else if (!(ev.bstate & BUTTON1_PRESSED)) return Outcome::kNone;
  return handle_mouse(v, ev.x, ev.y, button, f, l);
}

void install_signal_handlers() {
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  for (int s : {SIGINT, SIGTERM, SIGHUP}) sigaction(s, &sa, nullptr);
}

}  // namespace

int run_curses(const Options& o, const FrameSource& next_frame, ViewState v, ProcessControl& control) {
  using Clock = std::chrono::steady_clock;
  Terminal term(o.mouse);
  if (!term.ok()) {
    std::fprintf(stderr, "npu-top: cannot set up the terminal (TERM=%s); use --frames N for text output\n",
                 std::getenv("TERM") ? std::getenv("TERM") : "");
    return kExitError;
  }
  install_signal_handlers();
  CursesCanvas canvas(setup_colour(v.mono));
  auto interval = [&] { return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(v.interval_s)); };
  std::shared_ptr<const Frame> frame = next_frame();
  Clock::time_point due = Clock::now() + interval();
  Layout layout;
  bool dirty = true;
  while (g_stop == 0) {
    if (dirty) {
      layout = render(canvas, *frame, v);
      wrefresh(stdscr);
      dirty = false;
    }
    auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(due - Clock::now()).count();
    wtimeout(stdscr, v.paused ? 1000 : static_cast<int>(std::clamp<long long>(wait, 0, 1000)));
    wint_t ch = 0;
    int rc = wget_wch(stdscr, &ch);
    if (rc == ERR) {
      if (!v.paused && Clock::now() >= due) {
        frame = next_frame();
        due += interval();
        if (due < Clock::now()) due = Clock::now() + interval();  // fell behind: no burst
        dirty = true;
      }
      continue;
    }
    Outcome out = rc == KEY_CODE_YES && ch == KEY_MOUSE
                      ? mouse_outcome(v, *frame, layout)
                      : handle_key(v, translate(rc, ch), *frame, layout.processes.h - 1, control);
    if (out == Outcome::kQuit) break;
    if (out == Outcome::kCollect) {
      frame = next_frame();
      due = Clock::now() + interval();
    }
    dirty = dirty || out != Outcome::kNone;
  }
  return kExitOk;
}

}  // namespace npukit::top
