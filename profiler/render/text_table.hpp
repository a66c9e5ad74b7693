// TextTable: a plain-text table with a header row, columns padded to their widest cell; the
// first `left` columns are left-aligned (names), the others right-aligned (numbers).
//
// Thread-safety: a value type.
#pragma once

#include <string>
#include <vector>

namespace npukit::prof {

class TextTable {
 public:
  TextTable(std::vector<std::string> headers, std::size_t left) : headers_(std::move(headers)), left_(left) {}
  void add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  bool empty() const { return rows_.empty(); }
  // Every line ends with '\n'; trailing spaces are trimmed.
  std::string render(const std::string& indent = "  ") const;

 private:
  std::vector<std::string> headers_;
  std::size_t left_;
  std::vector<std::vector<std::string>> rows_;
};

// Number formatting shared by the renderers: fixed decimals, "NA" for NaN.
std::string fixed(double value, int decimals);
// ns -> us with 3 decimals (ns precision), the msprof CSV convention: "1736413971558972.912".
std::string ns_to_us(int64_t ns);
// A collective's msprof op type as a person reads it: "hcom_allReduce_" -> "allReduce". The
// databases, CSV and JSON keep msprof's name.
std::string collective_display_name(const std::string& op_type);

}  // namespace npukit::prof
