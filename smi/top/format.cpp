#include "smi/top/format.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "smi/top/canvas.hpp"

namespace npukit::top {

namespace tf = ::npukit::telemetry;

namespace {

std::string printf_string(const char* format, double a, double b = 0) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, a, b);
  return buf;
}

// Bytes in GiB with one decimal below 100 GiB, none above.
std::string gib(double bytes) {
  double g = bytes / (1024.0 * 1024.0 * 1024.0);
  return printf_string(g < 99.95 ? "%.1f" : "%.0f", g);
}

}  // namespace

const char* missing_text(tf::SampleStatus status) {
  return status == tf::SampleStatus::kNotSupported ? "NA" : "-";
}

std::string field_label(tf::FieldId id, int width, bool unit_in_values) {
  const tf::FieldDef* def = tf::find_field(id);
  if (def == nullptr || width <= 0) return "";
  std::string_view label = def->label;
  std::string_view base = label.substr(0, label.rfind('('));
  if (!unit_in_values && display_width(label) <= width) return std::string(label);
  if (display_width(base) <= width) return std::string(base);
  return fit(base, width);
}

std::string format_percent(const tf::Sample& s) {
  auto v = s.number();
  return v ? printf_string("%.0f%%", *v) : missing_text(s.status);
}

std::string format_celsius(const tf::Sample& s) {
  auto v = s.number();
  return v ? printf_string("%.0fC", *v) : missing_text(s.status);
}

std::string format_mhz(const tf::Sample& s) {
  auto v = s.number();
  return v ? printf_string("%.0fMHz", *v) : missing_text(s.status);
}

std::string format_watts(const tf::Sample& used, const tf::Sample& limit) {
  auto u = used.number();
  auto l = limit.number();
  std::string a = u ? printf_string("%.0f", *u) : missing_text(used.status);
  std::string b = l ? printf_string("%.0f", *l) : missing_text(limit.status);
  return a + "/" + b + "W";
}

std::string format_memory(const tf::Sample& used, const tf::Sample& total) {
  auto u = used.number();
  auto t = total.number();
  std::string a = u ? gib(*u) : missing_text(used.status);
  std::string b = t ? gib(*t) : missing_text(total.status);
  return a + "/" + b + "G";
}

std::string format_bytes(uint64_t bytes) {
  auto b = static_cast<double>(bytes);
  if (b < 1024.0 * 1024.0 * 1024.0) return printf_string("%.0fM", b / (1024.0 * 1024.0));
  return gib(b) + "G";
}

std::string format_mib(uint64_t bytes) { return std::to_string(bytes / (1024 * 1024)); }

std::string format_count(uint64_t n, bool decimals) {
  if (n < 10'000) return std::to_string(n);
  const char* suffix = "kMGTPE";
  uint64_t unit = 1000;
  while (n / unit >= 1000 && suffix[1] != '\0') unit *= 1000, ++suffix;
  uint64_t whole = n / unit;
  if (decimals && whole < 100) return std::to_string(whole) + "." + std::to_string(n / (unit / 10) % 10) + *suffix;
  return std::to_string(whole) + *suffix;
}

std::string throttle_text(uint64_t reasons) { return tf::throttle_reason_names(reasons, "+"); }

std::string format_uptime(uint64_t ns) {
  uint64_t s = ns / 1'000'000'000ull;
  char buf[48];
  auto h = static_cast<unsigned long long>(s / 3600 % 24), m = static_cast<unsigned long long>(s / 60 % 60),
       sec = static_cast<unsigned long long>(s % 60), d = static_cast<unsigned long long>(s / 86400);
  if (d > 0) {
    std::snprintf(buf, sizeof buf, "%llud %02llu:%02llu:%02llu", d, h, m, sec);
  } else {
    std::snprintf(buf, sizeof buf, "%02llu:%02llu:%02llu", h, m, sec);
  }
  return buf;
}

std::string format_interval(double seconds) {
  if (std::fabs(seconds - std::round(seconds)) < 1e-9) return printf_string("%.0fs", seconds);
  std::string s = printf_string("%.2f", seconds);
  while (s.back() == '0') s.pop_back();
  return s + "s";
}

std::string format_window(uint64_t ns) {
  uint64_t s = ns / 1'000'000'000ull;
  if (s >= 3600 && s % 3600 == 0) return std::to_string(s / 3600) + "h";
  if (s >= 60 && s % 60 == 0) return std::to_string(s / 60) + "m";
  return std::to_string(s) + "s";
}

std::optional<double> fraction(const tf::Sample& used, const tf::Sample& total) {
  auto u = used.number();
  auto t = total.number();
  if (!u || !t || *t <= 0) return std::nullopt;
  return std::clamp(*u / *t, 0.0, 1.0);
}

}  // namespace npukit::top
