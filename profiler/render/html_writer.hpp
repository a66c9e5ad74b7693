// Small building blocks of the HTML report (report_html.cpp): escaping, numbers that carry the
// JSON pointer they were read from (so a test can check the page against `--format json`), and
// inline SVG charts. Everything is drawn here; the page loads nothing at view time.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace npukit::prof::html {

std::string escape(const std::string& text);
// A JSON pointer token: "~" -> "~0", "/" -> "~1".
std::string pointer_token(const std::string& key);

// `value` shown with `digits` decimals, tagged with the report JSON's pointer and the factor
// from the JSON value to the one shown (1e-6 for ns shown as ms).
std::string checked(double value, int digits, const std::string& pointer, double scale = 1);
std::string fixed(double value, int digits);

struct Segment {
  std::string label;
  double value = 0;
  std::string color;
};
// One horizontal stacked bar `width` px wide for `full` (the longest bar's total), with a
// <title> per segment.
std::string stacked_bar(const std::vector<Segment>& segments, double full, int width, int height);
// A legend line for the segments' colors.
std::string legend(const std::vector<Segment>& segments);
// A step-line chart of (x, y) points, x increasing; y from 0 (or y_min) to y_max; `unit` in tooltips.
std::string sparkline(const std::vector<std::pair<double, double>>& points, double x_end, double y_min, double y_max,
                      const std::string& color, const std::string& label, int width, int height);

}  // namespace npukit::prof::html
