// Device rows (compact view), device panels (detailed view) and the focused device's history
// panel (draw.hpp).
#include <algorithm>

#include "smi/top/draw.hpp"
#include "smi/common/text.hpp"
#include "smi/top/format.hpp"

namespace npukit::top {

namespace {

namespace fid = telemetry::fid;

enum CompactColumn { kId, kAicore, kCube, kVector, kMemory, kPower, kTemp, kClock, kHealth, kEcc, kSpark };

// Minimum widths fit every label and value at 80 columns; narrower rows drop columns from the
// highest priority number up.
constexpr ColumnSpec kCompactColumns[] = {
    {kId, 3, 3, 0},       {kAicore, 12, 14, 0, true}, {kCube, 6, 6, 3},  {kVector, 8, 8, 3},
    {kMemory, 14, 22, 1, true}, {kPower, 8, 8, 2},    {kTemp, 4, 4, 2},  {kClock, 10, 15, 3},
    {kHealth, 7, 8, 1},   {kEcc, 7, 7, 5},            {kSpark, 20, 40, 4, true},
};

constexpr int kGaugeLines = 8;       // lines of a detailed panel's gauge block
constexpr int kSideGraphsWidth = kPanelSideGraphsWidth - 2;  // inner width: graphs beside the gauges

bool stale(const Frame& f) { return f.state != NodeState::kLive; }

// Volatile single-bit / double-bit ECC errors in at most `width` characters: "0/1", "73.3M/0",
// "73M/12k"; a row of '#' when even that is too wide (a count is never cut to a smaller one).
std::string ecc_text(const Frame& f, int d, int width) {
  for (bool decimals : {true, false}) {
    auto count = [&](telemetry::FieldId id) {
      auto s = f.snapshot.device(d, id);
      return s.ok() ? format_count(s.as_u64(), decimals) : std::string(missing_text(s.status));
    };
    std::string text = count(fid::kEccSingleBitVolatile) + "/" + count(fid::kEccDoubleBitVolatile);
    if (display_width(text) <= width) return text;
  }
  return std::string(static_cast<std::size_t>(std::max(width, 0)), '#');
}

std::string compact_label(int id, int w, const Frame& f, const ViewState& v) {
  switch (id) {
    case kId: return fit("NPU", w);
    case kAicore: return field_label(fid::kAicoreUtil, w);
    case kCube: return field_label(fid::kCubeUtil, w);
    case kVector: return field_label(fid::kVectorUtil, w);
    case kMemory: return field_label(memory_fields(f, 0).used, w);
    case kPower: return field_label(fid::kPowerWatts, w);
    case kTemp: return field_label(fid::kTemperatureCelsius, w);
    case kClock: return field_label(fid::kAicoreClockMhz, w);
    case kHealth: return field_label(fid::kHealth, w);
    case kEcc: return fit(field_label(fid::kEccSingleBitVolatile, 3) + "/" + field_label(fid::kEccDoubleBitVolatile, 3), w);
    case kSpark: return fit(field_label(fid::kAicoreUtil, w) + " " + format_window(window_ns(v)), w);
  }
  return "";
}

// The clock and, when throttled, why ("800MHz thermal", or "800MHz!" when the reason does not
// fit in `width`).
std::pair<std::string, Style> clock_text(const Frame& f, int d, int width) {
  std::string text = format_mhz(f.snapshot.device(d, fid::kAicoreClockMhz));
  auto t = f.snapshot.device(d, fid::kThrottleReasons);
  if (!t.ok() || t.as_u64() == 0) return {text, stale(f) ? Style::kDim : Style::kNormal};
  std::string why = text + " " + throttle_text(t.as_u64());
  return {display_width(why) <= width ? why : text + "!", Style::kWarn};
}

void draw_compact_cell(const Region& r, const ColumnSpan& c, const Frame& f, const ViewState& v, int d) {
  const auto& s = f.snapshot;
  Region cell = r.sub({c.x, 0, c.w, 1});
  auto right = [&](const std::string& t, Style st) { cell.text_right(c.w, 0, fit(t, c.w), st); };
  switch (c.id) {
    case kId: right(smi::chip_short_label(s, d), d == v.focus_device ? Style::kFocus : Style::kBold); break;
    case kAicore:
      draw_gauge(cell, 0, 0, c.w, percent_fraction(s.device(d, fid::kAicoreUtil)), Style::kAccent,
                 format_percent(s.device(d, fid::kAicoreUtil)), Style::kNormal, 4);
      break;
    case kCube: right(format_percent(s.device(d, fid::kCubeUtil)), Style::kNormal); break;
    case kVector: right(format_percent(s.device(d, fid::kVectorUtil)), Style::kNormal); break;
    case kMemory: {
      auto m = memory_fields(f, d);
      auto frac = fraction(s.device(d, m.used), s.device(d, m.total));
      draw_gauge(cell, 0, 0, c.w, frac, memory_style(frac), format_memory(s.device(d, m.used), s.device(d, m.total)),
                 Style::kNormal, 10);
      break;
    }
    case kPower: {
      auto frac = fraction(s.device(d, fid::kPowerWatts), s.device(d, fid::kPowerLimitWatts));
      right(format_watts(s.device(d, fid::kPowerWatts), s.device(d, fid::kPowerLimitWatts)), power_style(frac));
      break;
    }
    case kTemp: right(format_celsius(s.device(d, fid::kTemperatureCelsius)), temperature_style(s.device(d, fid::kTemperatureCelsius))); break;
    case kClock: {
      auto [text, style] = clock_text(f, d, c.w);
      cell.text(0, 0, text, style);
      break;
    }
    case kHealth: cell.text(0, 0, telemetry::health_name(s.health(d)), health_style(s.health(d), stale(f))); break;
    case kEcc: right(ecc_text(f, d, c.w), Style::kNormal); break;
    case kSpark: draw_sparkline(cell, f, v, Metric::kUtil, d); break;
  }
}

void draw_compact(Canvas& canvas, const Layout& l, const Frame& f, const ViewState& v, const Glyphs& g) {
  int col_w = l.devices.empty() ? l.device_header.w : l.devices[0].w;
  auto spans = allocate_columns(kCompactColumns, col_w);
  Region header(canvas, l.device_header, g);
  header.fill({0, 0, header.width(), 1}, ' ', Style::kColumns);
  for (int k = 0; k < l.device_columns; ++k) {
    for (const auto& c : spans) {
      int x = k * col_w + c.x;
      bool numeric = c.id != kClock && c.id != kHealth && c.id != kSpark;
      std::string label = compact_label(c.id, c.w, f, v);
      if (numeric) header.text_right(x + c.w, 0, label, Style::kColumns);
      else header.text(x, 0, label, Style::kColumns);
    }
  }
  for (std::size_t d = 0; d < l.devices.size(); ++d) {
    Region row(canvas, l.devices[d], g);
    for (const auto& c : allocate_columns(kCompactColumns, row.width())) {
      draw_compact_cell(row, c, f, v, static_cast<int>(d));
    }
  }
}

// The three history graphs stacked in `r` (utilization first when there is room for fewer).
void draw_graph_stack(const Region& r, const Frame& f, const ViewState& v, int d) {
  int n = std::min(kMetricCount, r.height());
  int y = 0;
  for (int m = 0; m < n; ++m) {
    int h = r.height() / n + (m < r.height() % n ? 1 : 0);
    draw_graph(r.sub({0, y, r.width(), h}), f, v, static_cast<Metric>(m), d);
    y += h;
  }
}

// A panel's health line in `w` columns: the health, its error code and why the clock throttles on
// the left, the volatile ECC counts and the process count on the right. What does not fit goes
// first from the least needed: the process count; then, when there are ECC errors to show, the
// throttle reasons (the clock gauge is drawn in warning colours) and the error code (the alarm
// banner carries it); else the ECC counts.
void draw_health_line(const Region& g, int w, const Frame& f, int d, const std::string& throttle) {
  const auto& s = f.snapshot;
  telemetry::Health h = s.health(d);
  auto code = s.device(d, fid::kErrorCode);
  std::string code_text = code.ok() && code.as_u64() != 0 ? smi::error_code_text(code.as_u64()) : "";
  auto procs = s.device(d, fid::kProcessCount);
  std::string procs_text = field_label(fid::kProcessCount, 5) + " " +
                           (procs.ok() ? std::to_string(procs.as_u64()) : missing_text(procs.status));
  std::string ecc = "ECC " + ecc_text(f, d, 11);
  auto sbe = s.device(d, fid::kEccSingleBitVolatile), dbe = s.device(d, fid::kEccDoubleBitVolatile);
  bool errors = (sbe.ok() && sbe.as_u64() > 0) || (dbe.ok() && dbe.as_u64() > 0);
  // What stays on the left, dropped from the end while the line is too long: with ECC errors to
  // show, the throttle reasons and then the error code; without, nothing (the counts give way).
  struct Left {
    bool code, throttle;
  };
  std::vector<Left> lefts = {{true, true}};
  if (errors) lefts.insert(lefts.end(), {{true, false}, {false, false}});
  for (std::size_t i = 0; i < lefts.size(); ++i) {
    std::string left = telemetry::health_name(h);
    if (lefts[i].code && !code_text.empty()) left += " " + code_text;
    if (lefts[i].throttle && !throttle.empty()) left += " " + throttle;
    int room = w - display_width(left) - 2;
    if (room < display_width(ecc) && i + 1 < lefts.size()) continue;
    int n = g.text(0, 7, telemetry::health_name(h), health_style(h, stale(f)));
    if (lefts[i].code && !code_text.empty()) n += 1 + g.text(n + 1, 7, code_text, health_style(h, stale(f)));
    if (lefts[i].throttle && !throttle.empty()) g.text(n + 1, 7, throttle, Style::kWarn);
    std::string both = ecc + "  " + procs_text;
    if (display_width(both) <= room) g.text_right(w, 7, both, Style::kDim);
    else if (display_width(ecc) <= room) g.text_right(w, 7, ecc, Style::kDim);
    return;
  }
}

void draw_panel_gauges(const Region& r, const Frame& f, int d) {
  const auto& s = f.snapshot;
  auto m = memory_fields(f, d);
  const telemetry::FieldId labels[kGaugeLines] = {fid::kAicoreUtil, fid::kCubeUtil, fid::kVectorUtil, m.used,
                                                  fid::kPowerWatts, fid::kTemperatureCelsius, fid::kAicoreClockMhz, fid::kHealth};
  int label_w = 0;
  for (auto id : labels) label_w = std::max(label_w, display_width(field_label(id, 99)));
  label_w = std::min(label_w, r.width() / 3);
  for (int i = 0; i < kGaugeLines; ++i) r.text(0, i, field_label(labels[i], label_w), Style::kDim);
  int x = label_w + 1, w = r.width() - x;
  Region g = r.sub({x, 0, w, kGaugeLines});
  auto util = [&](telemetry::FieldId id) { return percent_fraction(s.device(d, id)); };
  draw_gauge(g, 0, 0, w, util(fid::kAicoreUtil), Style::kAccent, format_percent(s.device(d, fid::kAicoreUtil)), Style::kNormal, 4);
  draw_gauge(g, 0, 1, w, util(fid::kCubeUtil), Style::kAccent, format_percent(s.device(d, fid::kCubeUtil)), Style::kNormal, 4);
  draw_gauge(g, 0, 2, w, util(fid::kVectorUtil), Style::kAccent, format_percent(s.device(d, fid::kVectorUtil)), Style::kNormal, 4);
  auto mem = fraction(s.device(d, m.used), s.device(d, m.total));
  draw_gauge(g, 0, 3, w, mem, memory_style(mem), format_memory(s.device(d, m.used), s.device(d, m.total)), Style::kNormal, 10);
  auto pw = fraction(s.device(d, fid::kPowerWatts), s.device(d, fid::kPowerLimitWatts));
  draw_gauge(g, 0, 4, w, pw, Style::kPower, format_watts(s.device(d, fid::kPowerWatts), s.device(d, fid::kPowerLimitWatts)),
             power_style(pw), 10);
  auto temp = s.device(d, fid::kTemperatureCelsius);
  draw_gauge(g, 0, 5, w, percent_fraction(temp), Style::kTemp, format_celsius(temp), temperature_style(temp), 4);
  auto clock = s.device(d, fid::kAicoreClockMhz);
  auto throttle = s.device(d, fid::kThrottleReasons);
  bool throttled = throttle.ok() && throttle.as_u64() != 0;
  draw_gauge(g, 0, 6, w, fraction(clock, s.device(d, fid::kAicoreClockMaxMhz)), throttled ? Style::kWarn : Style::kGood,
             format_mhz(clock), throttled ? Style::kWarn : Style::kNormal, 7);
  draw_health_line(g, w, f, d, throttled ? throttle_text(throttle.as_u64()) : "");
}

void draw_panel(Canvas& canvas, Rect rect, const Frame& f, const ViewState& v, const Glyphs& g, int d) {
  Region p(canvas, rect, g);
  const auto& info = f.snapshot.device_info(d);
  std::string title = smi::chip_label(f.snapshot, d) + " " + info.name + " " + info.bus_id;
  p.box(title, d == v.focus_device ? Style::kFocus : Style::kDim, Style::kBold);
  Region inner = p.sub({1, 1, p.width() - 2, p.height() - 2});
  if (inner.width() >= kSideGraphsWidth) {
    int gw = std::clamp(inner.width() / 2, 30, 44);
    draw_panel_gauges(inner.sub({0, 0, gw, kGaugeLines}), f, d);
    draw_graph_stack(inner.sub({gw + 2, 0, inner.width() - gw - 2, inner.height()}), f, v, d);
  } else {
    draw_panel_gauges(inner.sub({0, 0, inner.width(), kGaugeLines}), f, d);
    draw_graph_stack(inner.sub({0, kGaugeLines, inner.width(), inner.height() - kGaugeLines}), f, v, d);
  }
}

void draw_history_panel(Canvas& canvas, Rect rect, const Frame& f, const ViewState& v, const Glyphs& g) {
  Region p(canvas, rect, g);
  int d = std::clamp(v.focus_device, 0, std::max(0, f.devices() - 1));
  std::string title = smi::chip_label(f.snapshot, d) + " history, last " + format_window(window_ns(v)) + " ([ ] other NPU)";
  p.box(title, Style::kDim, Style::kBold);
  Region inner = p.sub({1, 1, p.width() - 2, p.height() - 2});
  if (inner.width() < 90) {
    draw_graph_stack(inner, f, v, d);
    return;
  }
  int w = (inner.width() - 2 * 2) / kMetricCount;
  for (int m = 0; m < kMetricCount; ++m) {
    int x = m * (w + 2);
    int width = m == kMetricCount - 1 ? inner.width() - x : w;
    draw_graph(inner.sub({x, 0, width, inner.height()}), f, v, static_cast<Metric>(m), d);
  }
}

}  // namespace

void draw_devices(Canvas& c, const Layout& l, const Frame& f, const ViewState& v, const Glyphs& g) {
  if (l.mode == DeviceMode::kCompact) {
    draw_compact(c, l, f, v, g);
  } else {
    for (std::size_t d = 0; d < l.devices.size(); ++d) draw_panel(c, l.devices[d], f, v, g, static_cast<int>(d));
  }
  if (!l.graph.empty()) draw_history_panel(c, l.graph, f, v, g);
}

}  // namespace npukit::top
