// CSV, nvidia-smi style (what scripts already split): cells joined by ", ", one header line
// naming each column as "key [unit]" (units dropped with nounits, the header dropped with
// noheader), values in the same units: "88.6 W" unless nounits. NA when there is no value.
#pragma once

#include <string>
#include <vector>

#include "smi/common/doc.hpp"

namespace npukit::smi {

struct CsvOptions {
  bool header = true;
  bool units = true;
};

struct CsvColumn {
  std::string key;
  std::string unit;  // "" when unitless
};

std::string csv_header(const std::vector<CsvColumn>& columns, const CsvOptions& options);
// One row of `row`'s values for `columns` (looked up by key in the object).
std::string csv_row(const std::vector<CsvColumn>& columns, const Object& row, const CsvOptions& options);

}  // namespace npukit::smi
