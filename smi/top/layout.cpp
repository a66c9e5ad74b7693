#include "smi/top/layout.hpp"

#include <algorithm>
#include <numeric>

namespace npukit::top {

Rect intersect(Rect a, Rect b) {
  int x0 = std::max(a.x, b.x), y0 = std::max(a.y, b.y);
  int x1 = std::min(a.right(), b.right()), y1 = std::min(a.bottom(), b.bottom());
  if (x1 <= x0 || y1 <= y0) return {x0, y0, 0, 0};
  return {x0, y0, x1 - x0, y1 - y0};
}

bool overlaps(Rect a, Rect b) { return !a.empty() && !b.empty() && !intersect(a, b).empty(); }

namespace {

int ceil_div(int a, int b) { return (a + b - 1) / b; }

struct Grid {
  int cols = 0;
  int rows = 0;
};

// The detailed grid with the fewest rows whose panels are at least kPanelMinWidth wide, and
// the fewest columns for that many rows (balanced rows).
Grid detailed_grid(int width, int devices) {
  int max_cols = std::min(devices, width / kPanelMinWidth);
  if (max_cols < 1) return {};
  int rows = ceil_div(devices, max_cols);
  return {ceil_div(devices, rows), rows};
}

// Rows the process table should keep when panels or the history panel could grow.
int process_share(int height) { return std::max(kProcessPreferredRows, height / 4); }

// Side-by-side compact columns: more only while one column would take over half of `rows`,
// each column keeps kCompactColumnWidth cells and the devices divide evenly.
int compact_columns(int width, int devices, int rows) {
  int max_cols = width / kCompactColumnWidth;
  int cols = 1;
  while (ceil_div(devices, cols) * 2 > rows) {
    int next = cols + 1;
    while (next <= max_cols && devices % next != 0) ++next;
    if (next > max_cols) break;
    cols = next;
  }
  return cols;
}

// `n` rectangles of height `row_h` in a row-major grid of `cols` columns over `area`; a short
// last row stretches its rectangles over the full width.
void place_grid(std::vector<Rect>& out, Rect area, int n, int cols, int row_h) {
  for (int i = 0; i < n; ++i) {
    int row = i / cols, col = i % cols;
    int in_row = std::min(cols, n - row * cols);
    int base = area.w / in_row, extra = area.w % in_row;
    int x = area.x + col * base + std::min(col, extra);
    out.push_back({x, area.y + row * row_h, base + (col < extra ? 1 : 0), row_h});
  }
}

// Lays out the device rows (and the history panel) of the compact view from row `top`;
// returns the first row after them.
int layout_compact(Layout& l, int width, int devices, int top, int bottom) {
  l.mode = DeviceMode::kCompact;
  l.device_columns = compact_columns(width, devices, bottom - top - 1);
  int rows = ceil_div(devices, l.device_columns);
  l.device_header = {0, top, width, 1};
  ++top;
  place_grid(l.devices, {0, top, width, rows}, devices, l.device_columns, 1);
  top += rows;
  int spare = bottom - top - process_share(bottom + 1);
  if (spare >= kGraphMinHeight) {
    l.graph = {0, top, width, std::min(kGraphMaxHeight, spare)};
    top += l.graph.h;
  }
  return top;
}

}  // namespace

Layout compute_layout(const LayoutInput& in) {
  Layout l;
  const int width = in.width, height = in.height, devices = std::max(in.devices, 0);
  const int device_rows = devices == 0 ? 3 : 1 + devices;
  l.min_width = kMinWidth;
  l.min_height = 1 + device_rows + kProcessMinRows + 1;
  if (width < l.min_width || height < l.min_height) {
    l.too_small = true;
    return l;
  }
  // The banner takes at most half of the rows beyond the minimum (at least one when there are any).
  int spare = height - l.min_height;
  int banner = std::min(std::clamp(in.banner_lines, 0, kMaxBannerLines), spare > 0 ? std::max(1, spare / 2) : 0);
  l.header = {0, 0, width, 1};
  l.footer = {0, height - 1, width, 1};
  if (banner > 0) l.banner = {0, 1, width, banner};
  int top = 1 + banner;
  const int bottom = height - 1;
  if (devices == 0) {
    l.message = {0, top, width, 3};
    top += 3;
  } else {
    Grid grid = detailed_grid(width, devices);
    int room = bottom - top - kProcessPreferredRows;
    int min_h = grid.cols > 0 ? panel_min_height(width / grid.cols) : 0;
    bool fits = grid.cols > 0 && grid.rows * min_h <= room;
    if (fits && in.view != DeviceView::kCompact) {
      l.mode = DeviceMode::kDetailed;
      l.device_columns = grid.cols;
      int share = (bottom - top - process_share(height)) / grid.rows;
      int panel_h = std::clamp(share, min_h, kPanelMaxHeight);
      place_grid(l.devices, {0, top, width, grid.rows * panel_h}, devices, grid.cols, panel_h);
      top += grid.rows * panel_h;
    } else {
      top = layout_compact(l, width, devices, top, bottom);
    }
  }
  l.processes = {0, top, width, bottom - top};
  return l;
}

int panel_min_height(int width) {
  return width >= kPanelSideGraphsWidth ? kPanelMinHeight : kPanelGraphsBelowHeight;
}

std::vector<ColumnSpan> allocate_columns(std::span<const ColumnSpec> specs, int width) {
  std::vector<std::size_t> order(specs.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return specs[a].priority < specs[b].priority; });
  std::vector<int> w(specs.size(), 0);
  int used = 0, kept = 0;
  for (std::size_t i : order) {
    int need = specs[i].min + (kept > 0 ? 1 : 0);
    if (used + need > width) break;
    w[i] = specs[i].min;
    used += need;
    ++kept;
  }
  int spare = width - used;
  for (std::size_t i : order) {
    if (w[i] == 0) continue;
    int add = std::min(spare, std::max(0, specs[i].pref - specs[i].min));
    w[i] += add;
    spare -= add;
  }
  int flex = 0;
  for (std::size_t i = 0; i < specs.size(); ++i) flex += (w[i] > 0 && specs[i].flex) ? 1 : 0;
  std::vector<ColumnSpan> out;
  int x = 0, flex_seen = 0;
  for (std::size_t i = 0; i < specs.size(); ++i) {
    if (w[i] == 0) continue;
    if (specs[i].flex && flex > 0) {
      w[i] += spare / flex + (flex_seen < spare % flex ? 1 : 0);
      ++flex_seen;
    }
    out.push_back({specs[i].id, x, w[i]});
    x += w[i] + 1;
  }
  return out;
}

const ColumnSpan* find_column(const std::vector<ColumnSpan>& spans, int id) {
  for (const auto& s : spans) {
    if (s.id == id) return &s;
  }
  return nullptr;
}

}  // namespace npukit::top
