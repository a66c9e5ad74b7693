#include "smi/top/canvas.hpp"

#include <algorithm>

namespace npukit::top {

namespace {

constexpr Glyphs kUnicode{
    true,   U'─', U'│', U'┌', U'┐', U'└', U'┘', U'█', U'·',
    {U' ', U'▏', U'▎', U'▍', U'▌', U'▋', U'▊', U'▉'},
    {U' ', U'▁', U'▂', U'▃', U'▄', U'▅', U'▆', U'▇', U'█'},
    U'▲',   U'▼', U'●', U'○', U'▏'};

constexpr Glyphs kAscii{
    false, '-', '|', '+', '+', '+', '+', '#', '.',
    {' ', ' ', ' ', ' ', ' ', ' ', ' ', ' '},
    {' ', '_', '_', '.', '.', '-', '-', '=', '#'},
    '^',   'v', '*', 'o', '_'};

// Decodes one code point from `s` at `i` (advancing i); malformed bytes decode as U+FFFD.
char32_t next_code_point(std::string_view s, std::size_t& i) {
  auto b = static_cast<unsigned char>(s[i++]);
  if (b < 0x80) return b;
  int extra = b >= 0xF0 ? 3 : b >= 0xE0 ? 2 : b >= 0xC0 ? 1 : -1;
  if (extra < 0) return 0xFFFD;
  char32_t cp = b & (0x3F >> extra);
  for (int k = 0; k < extra; ++k) {
    if (i >= s.size() || (static_cast<unsigned char>(s[i]) & 0xC0) != 0x80) return 0xFFFD;
    cp = (cp << 6) | (static_cast<unsigned char>(s[i++]) & 0x3F);
  }
  return cp;
}

// Code points known to take exactly one cell in every terminal font we care about: printable
// ASCII, Latin, Greek, Cyrillic, general punctuation, arrows, box drawing, blocks, geometric
// shapes. Anything else (CJK, emoji, combining marks) would break column alignment.
bool single_cell(char32_t cp) {
  return (cp >= 0x20 && cp < 0x7F) || (cp >= 0xA0 && cp < 0x0300) || (cp >= 0x0370 && cp < 0x0530) ||
         (cp >= 0x2010 && cp < 0x2028) || (cp >= 0x2190 && cp < 0x2200) || (cp >= 0x2500 && cp < 0x25A0) ||
         cp == U'●' || cp == U'○' || cp == U'▲' || cp == U'▼';
}

}  // namespace

const Glyphs& unicode_glyphs() { return kUnicode; }
const Glyphs& ascii_glyphs() { return kAscii; }

void append_utf8(std::string& out, char32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

int display_width(std::string_view text) {
  int n = 0;
  for (std::size_t i = 0; i < text.size();) {
    next_code_point(text, i);
    ++n;
  }
  return n;
}

std::string fit(std::string_view text, int w) {
  std::size_t i = 0;
  for (int n = 0; n < w && i < text.size(); ++n) next_code_point(text, i);
  return std::string(text.substr(0, i));
}

Region::Region(Canvas& canvas, Rect rect, const Glyphs& glyphs) : c_(&canvas), r_(rect), g_(&glyphs) {
  r_ = intersect(r_, Rect{0, 0, canvas.width(), canvas.height()});
}

Region Region::sub(Rect rect) const {
  Region r = *this;
  r.r_ = intersect(Rect{r_.x + rect.x, r_.y + rect.y, rect.w, rect.h}, r_);
  return r;
}

void Region::set(int x, int y, char32_t ch, Style style) const {
  if (x < 0 || y < 0 || x >= r_.w || y >= r_.h) return;
  c_->set(r_.x + x, r_.y + y, ch, style);
}

int Region::text(int x, int y, std::string_view s, Style style, int max) const {
  int limit = max < 0 ? r_.w - x : std::min(max, r_.w - x);
  int n = 0;
  for (std::size_t i = 0; i < s.size() && n < limit;) {
    char32_t cp = next_code_point(s, i);
    if (!single_cell(cp) || (!g_->unicode && cp >= 0x80)) cp = '?';
    set(x + n, y, cp, style);
    ++n;
  }
  return std::max(n, 0);
}

void Region::text_right(int right, int y, std::string_view s, Style style) const {
  text(right - display_width(s), y, s, style);
}

void Region::fill(Rect rect, char32_t ch, Style style) const {
  for (int y = rect.y; y < rect.y + rect.h; ++y) {
    for (int x = rect.x; x < rect.x + rect.w; ++x) set(x, y, ch, style);
  }
}

void Region::hline(int x, int y, int w, Style style) const { fill({x, y, w, 1}, g_->hline, style); }

void Region::box(std::string_view title, Style border, Style title_style) const {
  if (r_.w < 2 || r_.h < 2) return;
  hline(1, 0, r_.w - 2, border);
  hline(1, r_.h - 1, r_.w - 2, border);
  fill({0, 1, 1, r_.h - 2}, g_->vline, border);
  fill({r_.w - 1, 1, 1, r_.h - 2}, g_->vline, border);
  set(0, 0, g_->top_left, border);
  set(r_.w - 1, 0, g_->top_right, border);
  set(0, r_.h - 1, g_->bottom_left, border);
  set(r_.w - 1, r_.h - 1, g_->bottom_right, border);
  if (!title.empty() && r_.w > 4) {
    set(1, 0, ' ', border);
    int n = text(2, 0, title, title_style, r_.w - 5);
    set(2 + n, 0, ' ', border);
  }
}

TextCanvas::TextCanvas(int width, int height)
    : w_(std::max(width, 0)), h_(std::max(height, 0)),
      cells_(static_cast<std::size_t>(w_) * h_, U' '), styles_(cells_.size(), Style::kNormal) {}

void TextCanvas::set(int x, int y, char32_t ch, Style style) {
  if (x < 0 || y < 0 || x >= w_ || y >= h_) return;
  cells_[index(x, y)] = ch;
  styles_[index(x, y)] = style;
}

void TextCanvas::clear() {
  std::fill(cells_.begin(), cells_.end(), U' ');
  std::fill(styles_.begin(), styles_.end(), Style::kNormal);
}

std::vector<std::string> TextCanvas::lines() const {
  std::vector<std::string> out;
  for (int y = 0; y < h_; ++y) {
    std::string line;
    int end = w_;
    while (end > 0 && at(end - 1, y) == U' ') --end;
    for (int x = 0; x < end; ++x) append_utf8(line, at(x, y));
    out.push_back(std::move(line));
  }
  return out;
}

std::string TextCanvas::text() const {
  std::string s;
  for (const auto& l : lines()) s += l + "\n";
  return s;
}

bool TextCanvas::blank(Rect rect) const {
  for (int y = rect.y; y < rect.y + rect.h; ++y) {
    for (int x = rect.x; x < rect.x + rect.w; ++x) {
      if (x >= 0 && y >= 0 && x < w_ && y < h_ && at(x, y) != U' ') return false;
    }
  }
  return true;
}

}  // namespace npukit::top
