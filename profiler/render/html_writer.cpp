#include "profiler/render/html_writer.hpp"

#include <algorithm>
#include <cstdio>

namespace npukit::prof::html {

std::string escape(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string pointer_token(const std::string& key) {
  std::string out;
  for (char c : key) out += c == '~' ? "~0" : c == '/' ? "~1" : std::string(1, c);
  return out;
}

std::string fixed(double value, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, value);
  return buf;
}

std::string checked(double value, int digits, const std::string& pointer, double scale) {
  return "<span class=\"n\" data-json=\"" + escape(pointer) + "\" data-digits=\"" + std::to_string(digits) +
         "\" data-scale=\"" + fixed(scale, 9) + "\">" + fixed(value * scale, digits) + "</span>";
}

std::string stacked_bar(const std::vector<Segment>& segments, double full, int width, int height) {
  std::string out = "<svg class=\"bar\" width=\"" + std::to_string(width) + "\" height=\"" + std::to_string(height) +
                    "\" viewBox=\"0 0 " + std::to_string(width) + " " + std::to_string(height) + "\" role=\"img\">";
  double x = 0;
  for (const Segment& s : segments) {
    double w = full > 0 ? s.value / full * width : 0;
    if (w <= 0) continue;
    out += "<rect x=\"" + fixed(x, 2) + "\" y=\"0\" width=\"" + fixed(w, 2) + "\" height=\"" + std::to_string(height) +
           "\" fill=\"" + s.color + "\"><title>" + escape(s.label) + ": " + fixed(s.value, 3) + "</title></rect>";
    x += w;
  }
  return out + "</svg>";
}

std::string legend(const std::vector<Segment>& segments) {
  std::string out = "<p class=\"legend\">";
  for (const Segment& s : segments) {
    out += "<span><i style=\"background:" + s.color + "\"></i>" + escape(s.label) + "</span>";
  }
  return out + "</p>";
}

std::string sparkline(const std::vector<std::pair<double, double>>& points, double x_end, double y_min, double y_max,
                      const std::string& color, const std::string& label, int width, int height) {
  std::string out = "<svg class=\"spark\" width=\"" + std::to_string(width) + "\" height=\"" + std::to_string(height) +
                    "\" viewBox=\"0 0 " + std::to_string(width) + " " + std::to_string(height) + "\" role=\"img\"><title>" +
                    escape(label) + "</title>";
  if (points.empty() || x_end <= points.front().first || y_max <= y_min) return out + "</svg>";
  double x0 = points.front().first;
  auto px = [&](double x) { return fixed((x - x0) / (x_end - x0) * (width - 2) + 1, 1); };
  auto py = [&](double y) { return fixed(height - 2 - (std::clamp(y, y_min, y_max) - y_min) / (y_max - y_min) * (height - 4), 1); };
  std::string path;
  for (std::size_t i = 0; i < points.size(); ++i) {
    double next = i + 1 < points.size() ? points[i + 1].first : x_end;
    path += (i ? " " : "") + px(points[i].first) + "," + py(points[i].second) + " " + px(next) + "," + py(points[i].second);
  }
  return out + "<polyline fill=\"none\" stroke=\"" + color + "\" stroke-width=\"1.5\" points=\"" + path + "\"/></svg>";
}

}  // namespace npukit::prof::html
