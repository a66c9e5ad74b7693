// The dashboard's layout: a pure function of the terminal size, the number of devices, the
// number of alarm lines wanted and the view option. No state, no I/O, no curses, so it is tested
// over every terminal size (tests/smi/top/layout_test.cpp).
//
// Rules (docs/npu-top.md has the picture):
//   - Row 0 is the header, the last row the footer; an alarm banner of up to 3 rows follows the
//     header when there are alarms, taking at most half of the rows beyond the minimum size
//     (at least one while there is any).
//   - Detailed view: one boxed panel per device (gauges, and history graphs when the panel is
//     large enough) in a grid of ceil(N / rows) columns x rows, panels at least 40 wide and at
//     most 20 rows tall; at least 10 rows when 60+ wide (graphs beside the gauges), else 13
//     (graphs below). The grid uses the fewest rows that fit the width, and a short last row
//     stretches its panels to the full width. Chosen in auto view whenever the grid fits above
//     at least 6 process rows; panels grow while the process table keeps max(6, height / 4).
//   - Compact view: a column header row, then one row per device (in 2 or more side-by-side
//     columns when the width allows 90+ cells per column, the device count divides evenly and one
//     column would take more than half the height). If at least 7 rows are left above
//     max(6, height / 4) process rows, a history panel for the focused device (up to 14 rows)
//     follows the device rows.
//   - The process table (a header row and at least one row) takes every remaining row.
//   - Too small (below 60 columns, or fewer rows than header + devices + 2 process rows +
//     footer): too_small is set with the minimum size, and nothing else is laid out.
//   - No devices (node absent): a 3-row message area instead of the device rows.
// Every row of the screen belongs to exactly one rectangle; rectangles never overlap.
#pragma once

#include <span>
#include <vector>

namespace npukit::top {

struct Rect {
  int x = 0, y = 0, w = 0, h = 0;
  bool empty() const { return w <= 0 || h <= 0; }
  int right() const { return x + w; }
  int bottom() const { return y + h; }
  bool contains(int px, int py) const { return px >= x && px < right() && py >= y && py < bottom(); }
  bool operator==(const Rect&) const = default;
};
Rect intersect(Rect a, Rect b);
bool overlaps(Rect a, Rect b);

enum class DeviceView { kAuto, kCompact, kDetailed };
enum class DeviceMode { kCompact, kDetailed };

struct LayoutInput {
  int width = 80;
  int height = 24;
  int devices = 0;
  int banner_lines = 0;  // alarm lines the dashboard would like to show
  DeviceView view = DeviceView::kAuto;
};

struct Layout {
  bool too_small = false;
  int min_width = 0, min_height = 0;  // the smallest size that fits these devices
  DeviceMode mode = DeviceMode::kCompact;
  int device_columns = 1;    // compact: side-by-side device columns; detailed: grid columns
  Rect header, banner, device_header, message, graph, processes, footer;
  std::vector<Rect> devices;  // one per device, in device order
};

inline constexpr int kMinWidth = 60;
inline constexpr int kPanelMinWidth = 40;
inline constexpr int kPanelMinHeight = 10;         // gauges only: when graphs fit beside them
inline constexpr int kPanelSideGraphsWidth = 60;   // panels this wide put the graphs beside the gauges
inline constexpr int kPanelGraphsBelowHeight = 13; // narrower panels need this for graphs below
inline constexpr int kPanelMaxHeight = 20;
inline constexpr int kCompactColumnWidth = 90;
inline constexpr int kGraphMinHeight = 7;
inline constexpr int kGraphMaxHeight = 14;
inline constexpr int kProcessMinRows = 2;
inline constexpr int kProcessPreferredRows = 6;
inline constexpr int kMaxBannerLines = 3;

Layout compute_layout(const LayoutInput& in);
// The smallest panel height for panels `width` wide: room for the gauges and the history graphs.
int panel_min_height(int width);

// Table columns: allocate_columns() places the columns of `specs` in a row of `width` cells.
// Columns are kept in priority order (0 first) while their minimum widths and one-cell gaps fit;
// the rest are dropped. Spare cells then raise kept columns towards their preferred width (in
// priority order), and what is still left is shared by the flex columns (or stays at the end).
// The result is in `specs` order, left to right, within [0, width).
struct ColumnSpec {
  int id;
  int min;
  int pref;
  int priority;
  bool flex = false;
};
struct ColumnSpan {
  int id;
  int x;
  int w;
};
std::vector<ColumnSpan> allocate_columns(std::span<const ColumnSpec> specs, int width);
// The span of column `id` in `spans`, or nullptr when it was dropped.
const ColumnSpan* find_column(const std::vector<ColumnSpan>& spans, int id);

}  // namespace npukit::top
