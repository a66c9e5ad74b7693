#include "smi/common/csv.hpp"

namespace npukit::smi {

namespace {

// Quotes a cell that would break the ", " framing.
std::string cell(const std::string& text) {
  if (text.find_first_of(",\"\n") == std::string::npos) return text;
  std::string q = "\"";
  for (char c : text) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

}  // namespace

std::string csv_header(const std::vector<CsvColumn>& columns, const CsvOptions& options) {
  std::string line;
  for (std::size_t i = 0; i < columns.size(); ++i) {
    if (i > 0) line += ", ";
    line += columns[i].key;
    if (options.units && !columns[i].unit.empty()) line += " [" + columns[i].unit + "]";
  }
  return line + "\n";
}

std::string csv_row(const std::vector<CsvColumn>& columns, const Object& row, const CsvOptions& options) {
  std::string line;
  for (std::size_t i = 0; i < columns.size(); ++i) {
    if (i > 0) line += ", ";
    const Value& v = row.value(columns[i].key);
    std::string text = cell(v.text);
    if (options.units && !v.is_na() && !columns[i].unit.empty()) text += " " + columns[i].unit;
    line += text;
  }
  return line + "\n";
}

}  // namespace npukit::smi
