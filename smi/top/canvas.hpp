// The surface npu-top draws on. The renderer (render.hpp) only ever talks to a Canvas, so
// the headless text output (TextCanvas, here) and the curses frontend (curses.cpp) share
// every line of drawing code.
//
// A Canvas is a grid of cells; each cell holds one code point of display width 1 and a Style
// (a role such as "warning" or "selected", mapped to colours or attributes by the frontend).
// Writes outside the grid are dropped. Region narrows a Canvas to a rectangle, with its own
// origin and clipping, so a panel cannot draw outside the rectangle the layout gave it.
//
// Glyphs holds the characters for boxes, bars and graphs in two sets: Unicode (block and box
// drawing characters) and ASCII (for terminals without UTF-8, `--ascii`).
//
// Thread-safety: plain objects, one thread.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "smi/top/layout.hpp"

namespace npukit::top {

// Roles, not colours: the frontend decides what each looks like (curses.cpp), and in
// monochrome mode only bold/reverse/dim remain.
enum class Style : uint8_t {
  kNormal,
  kDim,        // labels, units, empty gauge track, "-" values
  kBold,
  kTitle,      // the header bar
  kColumns,    // column header rows
  kSelected,   // the selected process row
  kFocus,      // the focused device
  kGood,
  kWarn,
  kCrit,
  kAccent,     // utilization gauges and graphs
  kPower,      // power graph
  kTemp,       // temperature graph
};
inline constexpr int kStyleCount = static_cast<int>(Style::kTemp) + 1;

struct Glyphs {
  bool unicode;
  char32_t hline, vline, top_left, top_right, bottom_left, bottom_right;
  char32_t bar_full, bar_empty;
  char32_t bar_partial[8];  // [i]: a cell filled i/8 from the left (index 0 unused)
  char32_t level[9];        // [i]: a cell filled i/8 from the bottom
  char32_t arrow_up, arrow_down, dot_live, dot_dead, cursor;
};
const Glyphs& unicode_glyphs();
const Glyphs& ascii_glyphs();

class Canvas {
 public:
  virtual ~Canvas() = default;
  virtual int width() const = 0;
  virtual int height() const = 0;
  // Sets one cell; ignored outside the grid.
  virtual void set(int x, int y, char32_t ch, Style style) = 0;
  // Every cell to a space in kNormal.
  virtual void clear() = 0;
};

// A view of a rectangle of a Canvas: coordinates are relative to the rectangle and writes are
// clipped to it. Cheap to copy.
class Region {
 public:
  Region(Canvas& canvas, Rect rect, const Glyphs& glyphs);
  int width() const { return r_.w; }
  int height() const { return r_.h; }
  const Glyphs& glyphs() const { return *g_; }
  Region sub(Rect rect) const;  // relative rectangle, clipped to this one

  void set(int x, int y, char32_t ch, Style style) const;
  // Writes UTF-8 `text` from (x, y), at most `max` cells (-1: to the right edge); returns cells
  // written. Control characters, code points that are not one cell wide and (with ASCII glyphs)
  // anything beyond ASCII are shown as '?'.
  int text(int x, int y, std::string_view text, Style style, int max = -1) const;
  // Right-aligns `text` so it ends just before column `right`.
  void text_right(int right, int y, std::string_view text, Style style) const;
  void fill(Rect rect, char32_t ch, Style style) const;
  void hline(int x, int y, int w, Style style) const;
  // A border around the whole region with `title` set into the top edge.
  void box(std::string_view title, Style border, Style title_style) const;

 private:
  Canvas* c_;
  Rect r_;
  const Glyphs* g_;
};

// A Canvas in memory: the headless frontend and the tests. lines() encodes the grid as UTF-8
// text, trailing spaces trimmed.
class TextCanvas final : public Canvas {
 public:
  TextCanvas(int width, int height);
  int width() const override { return w_; }
  int height() const override { return h_; }
  void set(int x, int y, char32_t ch, Style style) override;
  void clear() override;

  char32_t at(int x, int y) const { return cells_[index(x, y)]; }
  Style style_at(int x, int y) const { return styles_[index(x, y)]; }
  std::vector<std::string> lines() const;
  std::string text() const;  // lines() joined with '\n', with a final '\n'
  // True when every cell of `rect` is a space.
  bool blank(Rect rect) const;

 private:
  std::size_t index(int x, int y) const { return static_cast<std::size_t>(y) * w_ + x; }
  int w_, h_;
  std::vector<char32_t> cells_;
  std::vector<Style> styles_;
};

// UTF-8 helpers shared by the canvas and the text columns.
void append_utf8(std::string& out, char32_t cp);
// Number of cells `text` takes when drawn (one per code point).
int display_width(std::string_view text);
// `text` cut to at most `w` cells (code-point boundaries kept).
std::string fit(std::string_view text, int w);

}  // namespace npukit::top
