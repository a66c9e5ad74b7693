// The layout is a pure function of the terminal size and options: checked over every size from
// 80x24 to 300x100, for 8 and 16 devices, with and without alarms, in every view.
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "smi/top/layout.hpp"
#include "smi/top/view.hpp"

namespace npukit::top {
namespace {

std::vector<std::pair<std::string, Rect>> rects_of(const Layout& l) {
  std::vector<std::pair<std::string, Rect>> out = {
      {"header", l.header}, {"banner", l.banner},       {"device header", l.device_header}, {"message", l.message},
      {"graph", l.graph},   {"processes", l.processes}, {"footer", l.footer}};
  for (std::size_t d = 0; d < l.devices.size(); ++d) out.emplace_back("device " + std::to_string(d), l.devices[d]);
  return out;
}

std::string describe(Rect r) {
  return std::to_string(r.w) + "x" + std::to_string(r.h) + "+" + std::to_string(r.x) + "+" + std::to_string(r.y);
}

// Empty when `l` is a good layout for `in`, else what is wrong.
std::string check(const Layout& l, const LayoutInput& in) {
  if (l.too_small) return "too small";
  Rect screen{0, 0, in.width, in.height};
  auto rects = rects_of(l);
  for (std::size_t i = 0; i < rects.size(); ++i) {
    const auto& [name, r] = rects[i];
    if (r.empty()) continue;
    if (intersect(r, screen) != r) return name + " " + describe(r) + " is outside the screen";
    for (std::size_t j = i + 1; j < rects.size(); ++j) {
      if (overlaps(r, rects[j].second)) return name + " overlaps " + rects[j].first;
    }
  }
  for (int y = 0; y < in.height; ++y) {
    int covered = 0;
    for (const auto& [name, r] : rects) covered += (!r.empty() && y >= r.y && y < r.bottom()) ? r.w : 0;
    if (covered != in.width) return "row " + std::to_string(y) + " is covered by " + std::to_string(covered) + " cells";
  }
  if (static_cast<int>(l.devices.size()) != in.devices) return "not every device has a place";
  for (const auto& d : l.devices) {
    bool ok = l.mode == DeviceMode::kDetailed
                  ? d.w >= kPanelMinWidth && d.h >= panel_min_height(d.w) && d.h <= kPanelMaxHeight
                                              : d.h == 1 && d.w >= kMinWidth;
    if (!ok) return "device rect " + describe(d) + " has the wrong size";
  }
  if (l.processes.h < kProcessMinRows) return "process table has " + std::to_string(l.processes.h) + " rows";
  if (l.header != Rect{0, 0, in.width, 1} || l.footer != Rect{0, in.height - 1, in.width, 1}) return "header/footer misplaced";
  if (l.mode == DeviceMode::kCompact && l.device_header.h != 1) return "compact view without a column header";
  if (!l.graph.empty() && l.graph.h < kGraphMinHeight) return "history panel too small";
  return "";
}

TEST(TopLayout, EverySizeFrom80x24To300x100HasPanelsInsideNoOverlapsAndNoEmptyRows) {
  int checked = 0;
  for (int devices : {8, 16}) {
    for (DeviceView view : {DeviceView::kAuto, DeviceView::kCompact, DeviceView::kDetailed}) {
      for (int banner : {0, 1, 3}) {
        for (int w = 80; w <= 300; ++w) {
          for (int h = 24; h <= 100; ++h) {
            LayoutInput in{w, h, devices, banner, view};
            std::string problem = check(compute_layout(in), in);
            ASSERT_EQ(problem, "") << devices << " devices at " << w << "x" << h << ", banner " << banner
                                   << ", view " << static_cast<int>(view);
            ++checked;
          }
        }
      }
    }
  }
  EXPECT_EQ(checked, 2 * 3 * 3 * 221 * 77);
}

TEST(TopLayout, SixteenDevicesFitAt80x24InTheCompactView) {
  Layout l = compute_layout({80, 24, 16, 1, DeviceView::kAuto});
  ASSERT_FALSE(l.too_small);
  EXPECT_EQ(l.mode, DeviceMode::kCompact);
  EXPECT_EQ(l.devices.size(), 16u);
  EXPECT_EQ(l.banner.h, 1);
  EXPECT_GE(l.processes.h, 3);
  Layout eight = compute_layout({80, 24, 8, 0, DeviceView::kAuto});
  EXPECT_EQ(eight.mode, DeviceMode::kCompact);
  EXPECT_FALSE(eight.graph.empty()) << "8 devices leave room for the focused device's history";
}

TEST(TopLayout, LargeTerminalsGrowIntoDetailedPanels) {
  Layout l = compute_layout({200, 60, 8, 0, DeviceView::kAuto});
  EXPECT_EQ(l.mode, DeviceMode::kDetailed);
  EXPECT_EQ(l.device_columns, 4);
  EXPECT_EQ(l.devices[0].w, 50);
  EXPECT_GE(l.devices[0].h, 14);
  EXPECT_GE(l.processes.h, 60 / 4);
  Layout big = compute_layout({300, 100, 16, 0, DeviceView::kAuto});
  EXPECT_EQ(big.mode, DeviceMode::kDetailed);
  EXPECT_EQ(big.device_columns, 6);
  EXPECT_EQ(big.devices[0].h, kPanelMaxHeight);
  // 3 rows of 6, 6 and 4 panels: the short last row stretches to the full width.
  EXPECT_EQ(big.devices[15].right(), 300);
  EXPECT_EQ(big.devices[12].w, 75);
}

TEST(TopLayout, ForcedViewsAndTheirFallback) {
  EXPECT_EQ(compute_layout({300, 100, 16, 0, DeviceView::kCompact}).mode, DeviceMode::kCompact);
  Layout small = compute_layout({80, 24, 8, 0, DeviceView::kDetailed});
  EXPECT_EQ(small.mode, DeviceMode::kCompact) << "detailed panels do not fit: compact instead";
  EXPECT_EQ(compute_layout({120, 50, 8, 0, DeviceView::kDetailed}).mode, DeviceMode::kDetailed);
}

TEST(TopLayout, WideShortTerminalsPutDeviceRowsSideBySide) {
  Layout l = compute_layout({200, 24, 16, 0, DeviceView::kAuto});
  EXPECT_EQ(l.mode, DeviceMode::kCompact);
  EXPECT_EQ(l.device_columns, 2);
  EXPECT_EQ(l.devices[1].y, l.devices[0].y);
  EXPECT_EQ(l.devices[1].x, 100);
  EXPECT_EQ(l.graph.h, kGraphMinHeight) << "8 rows of devices leave room for the history panel";
  EXPECT_GE(l.processes.h, kProcessPreferredRows);
}

TEST(TopLayout, TooSmallTerminalsAreReportedWithTheSizeNeeded) {
  for (auto [w, h] : {std::pair{59, 40}, std::pair{80, 20}, std::pair{0, 0}, std::pair{1, 1}}) {
    Layout l = compute_layout({w, h, 16, 0, DeviceView::kAuto});
    EXPECT_TRUE(l.too_small) << w << "x" << h;
    EXPECT_EQ(l.min_width, kMinWidth);
    EXPECT_EQ(l.min_height, 1 + 1 + 16 + kProcessMinRows + 1);
    EXPECT_TRUE(l.devices.empty());
  }
  EXPECT_FALSE(compute_layout({60, 21, 16, 0, DeviceView::kAuto}).too_small);
  EXPECT_FALSE(compute_layout({60, 7, 0, 0, DeviceView::kAuto}).too_small);
}

TEST(TopLayout, TheAlarmBannerShrinksBeforeAnythingElse) {
  Layout l = compute_layout({80, 22, 16, 3, DeviceView::kAuto});
  EXPECT_FALSE(l.too_small);
  EXPECT_EQ(l.banner.h, 1);
  EXPECT_EQ(l.processes.h, kProcessMinRows);
  EXPECT_EQ(compute_layout({80, 21, 16, 3, DeviceView::kAuto}).banner.h, 0);
}

TEST(TopLayout, AbsentNodeGetsAMessageArea) {
  Layout l = compute_layout({80, 24, 0, 0, DeviceView::kAuto});
  EXPECT_EQ(l.message, (Rect{0, 1, 80, 3}));
  EXPECT_TRUE(l.devices.empty());
  EXPECT_EQ(l.processes.y, 4);
}

TEST(TopLayout, ColumnsStayInsideTheRowAndDropByPriority) {
  const ColumnSpec specs[] = {{0, 5, 5, 0}, {1, 10, 20, 0, true}, {2, 8, 8, 2}, {3, 6, 12, 1}};
  for (int width = 0; width <= 120; ++width) {
    auto spans = allocate_columns(specs, width);
    int end = 0;
    for (const auto& s : spans) {
      EXPECT_GE(s.x, end) << width;
      end = s.x + s.w;
    }
    EXPECT_LE(end, width);
  }
  auto narrow = allocate_columns(specs, 23);  // 5 + 1 + 10 + 1 + 6 fits; column 2 does not
  ASSERT_EQ(narrow.size(), 3u);
  EXPECT_EQ(find_column(narrow, 2), nullptr);
  EXPECT_EQ(allocate_columns(specs, 22).size(), 2u);
  auto wide = allocate_columns(specs, 100);
  EXPECT_EQ(find_column(wide, 3)->w, 12);
  EXPECT_EQ(find_column(wide, 1)->x + find_column(wide, 1)->w, find_column(wide, 2)->x - 1);
  EXPECT_EQ(wide.back().x + wide.back().w, 100) << "flex columns take the spare cells";
}

TEST(TopLayout, ProcessColumnsFitFrom60To300) {
  for (int width = kMinWidth; width <= 300; ++width) {
    auto cols = process_columns(width);
    EXPECT_NE(find_column(cols, static_cast<int>(SortKey::kPid)), nullptr);
    EXPECT_NE(find_column(cols, static_cast<int>(SortKey::kName)), nullptr);
    EXPECT_NE(find_column(cols, static_cast<int>(SortKey::kMemory)), nullptr);
    EXPECT_LE(cols.back().x + cols.back().w, width);
  }
}

}  // namespace
}  // namespace npukit::top
