#include "smi/exporter/text.hpp"

#include <charconv>
#include <cmath>

namespace npukit::smi::exporter {

std::string escape_label_value(std::string_view v) {
  std::string out;
  out.reserve(v.size());
  for (char c : v) {
    if (c == '\\') out += "\\\\";
    else if (c == '"') out += "\\\"";
    else if (c == '\n') out += "\\n";
    else out += c;
  }
  return out;
}

std::string escape_help(std::string_view v) {
  std::string out;
  out.reserve(v.size());
  for (char c : v) {
    if (c == '\\') out += "\\\\";
    else if (c == '\n') out += "\\n";
    else out += c;
  }
  return out;
}

std::string format_value(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  char buf[32];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), v);
  return ec == std::errc() ? std::string(buf, end) : std::string("NaN");
}

void Exposition::family(std::string_view name, std::string_view help, std::string_view type) {
  Family f;
  f.name = std::string(name);
  f.header = "# HELP " + f.name + " " + escape_help(help) + "\n# TYPE " + f.name + " " + std::string(type) + "\n";
  families_.push_back(std::move(f));
}

void Exposition::sample(const Labels& labels, double value) {
  if (families_.empty()) return;
  Family& f = families_.back();
  f.body += f.name;
  if (!labels.empty()) {
    f.body += '{';
    bool first = true;
    for (const auto& [k, v] : labels) {
      if (!first) f.body += ',';
      first = false;
      f.body.append(k).append("=\"").append(escape_label_value(v)).append("\"");
    }
    f.body += '}';
  }
  f.body += ' ';
  f.body += format_value(value);
  f.body += '\n';
  ++samples_;
}

std::string Exposition::str() const {
  std::string out;
  for (const Family& f : families_) {
    if (f.body.empty()) continue;
    out += f.header;
    out += f.body;
  }
  return out;
}

}  // namespace npukit::smi::exporter
