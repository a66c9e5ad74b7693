#include "profiler/render/text_table.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace npukit::prof {

std::string TextTable::render(const std::string& indent) const {
  std::vector<std::size_t> width(headers_.size(), 0);
  auto measure = [&](const std::vector<std::string>& row) {
    for (std::size_t i = 0; i < row.size() && i < width.size(); ++i) width[i] = std::max(width[i], row[i].size());
  };
  measure(headers_);
  for (const auto& row : rows_) measure(row);
  auto line = [&](const std::vector<std::string>& row) {
    std::string out = indent;
    for (std::size_t i = 0; i < width.size(); ++i) {
      const std::string cell = i < row.size() ? row[i] : "";
      std::string pad(width[i] - std::min(width[i], cell.size()), ' ');
      out += (i ? "  " : "") + (i < left_ ? cell + pad : pad + cell);
    }
    out.erase(out.find_last_not_of(' ') + 1);
    return out + "\n";
  };
  std::string out = line(headers_);
  for (const auto& row : rows_) out += line(row);
  return out;
}

std::string fixed(double value, int decimals) {
  if (std::isnan(value)) return "NA";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, value);
  return buf;
}

std::string ns_to_us(int64_t ns) {
  char buf[48];
  const char* sign = ns < 0 ? "-" : "";
  int64_t a = ns < 0 ? -ns : ns;
  std::snprintf(buf, sizeof buf, "%s%lld.%03lld", sign, static_cast<long long>(a / 1000), static_cast<long long>(a % 1000));
  return buf;
}

std::string collective_display_name(const std::string& op_type) {
  std::string name = op_type;
  if (name.rfind("hcom_", 0) == 0) name.erase(0, 5);
  while (name.size() > 1 && name.back() == '_') name.pop_back();
  return name;
}

}  // namespace npukit::prof
