// Gauges, bars and history graphs (draw.hpp).
#include <algorithm>
#include <cmath>

#include "smi/top/draw.hpp"
#include "smi/top/format.hpp"

namespace npukit::top {

namespace {

struct MetricSpec {
  telemetry::FieldId field;
  Style style;
};

constexpr MetricSpec kMetrics[kMetricCount] = {
    {telemetry::fid::kAicoreUtil, Style::kAccent},
    {telemetry::fid::kPowerWatts, Style::kPower},
    {telemetry::fid::kTemperatureCelsius, Style::kTemp},
};

// The graph's value range: utilization 0-100 %, power 0 to the power limit, temperature 0 to
// 100 C, each widened to the largest value shown.
double graph_top(const Frame& f, Metric m, int device, const std::vector<float>& cols) {
  double top = m == Metric::kUtil ? 100.0 : m == Metric::kTemp ? 100.0 : 1.0;
  if (m == Metric::kPower) top = value_of(f, device, telemetry::fid::kPowerLimitWatts).value_or(top);
  for (float c : cols) {
    if (!std::isnan(c)) top = std::max(top, static_cast<double>(c));
  }
  return top;
}

std::string graph_value(const Frame& f, Metric m, int device) {
  telemetry::Sample s = f.snapshot.device(device, kMetrics[static_cast<int>(m)].field);
  if (m == Metric::kUtil) return format_percent(s);
  if (m == Metric::kTemp) return format_celsius(s);
  auto w = s.number();
  return w ? std::to_string(static_cast<long>(std::lround(*w))) + "W" : missing_text(s.status);
}

// An area chart of `vals` (one per column) scaled to [0, top], `rows` tall, bottom row at y.
void draw_area(const Region& r, int x0, int bottom, int rows, const std::vector<float>& vals, double top,
               Style style) {
  const Glyphs& g = r.glyphs();
  for (std::size_t i = 0; i < vals.size(); ++i) {
    if (std::isnan(vals[i])) continue;
    int x = x0 + static_cast<int>(i);
    double frac = std::clamp(static_cast<double>(vals[i]) / top, 0.0, 1.0);
    auto eighths = static_cast<int>(std::lround(frac * rows * 8));
    if (eighths == 0) {
      r.set(x, bottom, g.level[1], vals[i] > 0 ? style : Style::kDim);
      continue;
    }
    for (int k = 0; k < eighths / 8; ++k) r.set(x, bottom - k, g.level[8], style);
    if (eighths % 8 != 0) r.set(x, bottom - eighths / 8, g.level[eighths % 8], style);
  }
}

}  // namespace

Style health_style(telemetry::Health h, bool stale) {
  if (stale) return Style::kDim;
  switch (h) {
    case telemetry::Health::kOk: return Style::kGood;
    case telemetry::Health::kWarning: return Style::kWarn;
    default: return Style::kCrit;
  }
}

Style temperature_style(const telemetry::Sample& s) {
  auto t = s.number();
  if (!t) return Style::kDim;
  return *t >= kTempCritC ? Style::kCrit : *t >= kTempWarnC ? Style::kWarn : Style::kNormal;
}

Style memory_style(std::optional<double> fraction) {
  if (!fraction) return Style::kDim;
  return *fraction >= kMemoryCrit ? Style::kCrit : *fraction >= kMemoryWarn ? Style::kWarn : Style::kGood;
}

Style power_style(std::optional<double> fraction) {
  if (!fraction) return Style::kDim;
  return *fraction >= kPowerWarn ? Style::kWarn : Style::kNormal;
}

MemoryFields memory_fields(const Frame& f, int device) {
  bool classic = device < f.snapshot.device_count() && !f.snapshot.device_info(device).has_hbm();
  if (classic) return {telemetry::fid::kDdrUsedBytes, telemetry::fid::kDdrTotalBytes};
  return {telemetry::fid::kHbmUsedBytes, telemetry::fid::kHbmTotalBytes};
}

std::optional<double> percent_fraction(const telemetry::Sample& s, double full) {
  auto v = s.number();
  if (!v || full <= 0) return std::nullopt;
  return std::clamp(*v / full, 0.0, 1.0);
}

void draw_bar(const Region& r, int x, int y, int w, std::optional<double> fraction, Style fill) {
  const Glyphs& g = r.glyphs();
  for (int i = 0; i < w; ++i) r.set(x + i, y, g.bar_empty, Style::kDim);
  if (!fraction || w <= 0) return;
  int eighths = static_cast<int>(std::lround(std::clamp(*fraction, 0.0, 1.0) * w * 8));
  if (!g.unicode) eighths = eighths / 8 * 8 + (eighths % 8 >= 4 ? 8 : 0);
  for (int i = 0; i < eighths / 8; ++i) r.set(x + i, y, g.bar_full, fill);
  if (eighths % 8 != 0) r.set(x + eighths / 8, y, g.bar_partial[eighths % 8], fill);
}

void draw_gauge(const Region& r, int x, int y, int w, std::optional<double> fraction, Style fill,
                const std::string& value, Style value_style, int value_w) {
  int bar_w = std::max(0, w - value_w - 1);
  draw_bar(r, x, y, bar_w, fraction, fill);
  Region cell = r.sub({x + w - value_w, y, value_w, 1});
  cell.text_right(value_w, 0, fit(value, value_w), value_style);
}

void draw_sparkline(const Region& r, const Frame& f, const ViewState& v, Metric m, int device) {
  if (r.width() <= 0 || r.height() <= 0 || !f.history) return;
  auto cols = history_columns(*f.history, m, device, f.now_ns, window_ns(v), r.width());
  draw_area(r, 0, 0, 1, cols, graph_top(f, m, device, cols), kMetrics[static_cast<int>(m)].style);
}

void draw_graph(const Region& r, const Frame& f, const ViewState& v, Metric m, int device) {
  if (r.height() <= 0 || r.width() <= 0) return;
  const MetricSpec& spec = kMetrics[static_cast<int>(m)];
  std::string value = graph_value(f, m, device);
  int value_w = display_width(value);
  if (r.height() == 1) {
    // "Temp 49C ▁▂▃": the label and value first, then the graph up to the right edge, each column
    // at the same time as the same column of the taller graphs above it (they span the width).
    int label_w = std::min(7, r.width() / 4);
    std::string label = field_label(spec.field, label_w);
    r.text(0, 0, label, Style::kDim);
    int value_x = display_width(label) + 1;
    r.text(value_x, 0, value, spec.style);
    int x0 = value_x + value_w + 1;
    if (!f.history || x0 >= r.width()) return;
    auto cols = history_columns(*f.history, m, device, f.now_ns, window_ns(v), r.width());
    std::vector<float> shown(cols.begin() + x0, cols.end());
    draw_area(r, x0, 0, 1, shown, graph_top(f, m, device, cols), spec.style);
    return;
  }
  r.text(0, 0, field_label(spec.field, r.width() - value_w - 1), Style::kDim);
  r.text_right(r.width(), 0, value, spec.style);
  if (!f.history) return;
  auto cols = history_columns(*f.history, m, device, f.now_ns, window_ns(v), r.width());
  draw_area(r, 0, r.height() - 1, r.height() - 1, cols, graph_top(f, m, device, cols), spec.style);
}

}  // namespace npukit::top
