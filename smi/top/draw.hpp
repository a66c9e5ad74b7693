// Internal to the renderer (render.cpp and the draw_*.cpp files): the drawing pieces
// each panel is made of. Everything draws into a Region, so nothing escapes its rectangle.
#pragma once

#include <optional>
#include <string>

#include "smi/top/canvas.hpp"
#include "smi/top/layout.hpp"
#include "smi/top/model.hpp"
#include "smi/top/view.hpp"

namespace npukit::top {

// Display thresholds (colour only; the device's own health decides alarms).
inline constexpr double kTempWarnC = 75.0;
inline constexpr double kTempCritC = 85.0;
inline constexpr double kMemoryWarn = 0.80;
inline constexpr double kMemoryCrit = 0.95;
inline constexpr double kPowerWarn = 0.95;  // of the power limit: capping is near

Style health_style(telemetry::Health h, bool stale);
Style temperature_style(const telemetry::Sample& s);
Style memory_style(std::optional<double> fraction);
Style power_style(std::optional<double> fraction);

// The memory a device reports: HBM on "hbm" layout devices, on-chip DDR on "classic" ones.
struct MemoryFields {
  telemetry::FieldId used;
  telemetry::FieldId total;
};
MemoryFields memory_fields(const Frame& f, int device);

// `s` as a fraction of `full`, clamped to [0, 1]; nullopt when it has no value.
std::optional<double> percent_fraction(const telemetry::Sample& s, double full = 100.0);

// A horizontal bar `w` cells wide at (x, y), `fraction` of it filled (eighths with Unicode);
// a missing fraction draws only the dim track.
void draw_bar(const Region& r, int x, int y, int w, std::optional<double> fraction, Style fill);
// A gauge: bar, then `value` right-aligned in the last `value_w` cells.
void draw_gauge(const Region& r, int x, int y, int w, std::optional<double> fraction, Style fill,
                const std::string& value, Style value_style, int value_w);

// The history of device `device`'s metric `m` over the view's window as one row of levels.
void draw_sparkline(const Region& r, const Frame& f, const ViewState& v, Metric m, int device);
// One history graph of device `device`'s metric `m` over the view's window: a label row (field
// label left, current value right) above an area chart, or label, sparkline and value on one
// row when the region is one row tall. Gaps (no value) stay blank; zero is a dim baseline.
void draw_graph(const Region& r, const Frame& f, const ViewState& v, Metric m, int device);

// The device rows or panels, the compact header row and the focused device's history panel.
void draw_devices(Canvas& c, const Layout& l, const Frame& f, const ViewState& v, const Glyphs& g);
// The process table (header row + rows) in `r`.
void draw_processes(const Region& r, const Frame& f, const ViewState& v);

}  // namespace npukit::top
