// --query=<columns> --format=csv[,noheader][,nounits] and --help-query.
#include <ostream>

#include "smi/common/columns.hpp"
#include "smi/cli/commands.hpp"
#include "smi/common/text.hpp"

namespace npukit::smi {

namespace {

const char* kind_title(Column::Kind k) {
  switch (k) {
    case Column::Kind::kIdentity: return "Identity (static device info)";
    case Column::Kind::kField: return "Telemetry fields (the bus's field registry)";
    case Column::Kind::kDerived: return "Derived (computed from registry fields)";
    case Column::Kind::kNvidia: return "nvidia-smi --query-gpu names (nvidia-smi's units; each names what it reads)";
  }
  return "";
}

}  // namespace

int cmd_query(Context& ctx, const Session& session, const QueryOptions& q) {
  const telemetry::Snapshot& s = session.snapshot;
  std::vector<CsvColumn> cols;
  for (const std::string& key : q.columns) cols.push_back({key, find_column(key)->unit});
  std::string text = q.csv.header ? csv_header(cols, q.csv) : "";
  for (int d = 0; d < s.device_count(); ++d) {
    if (q.npu && s.device_info(d).npu_id != *q.npu) continue;
    Object row;
    for (const std::string& key : q.columns) row.add("", key, column_value(*find_column(key), s, d));
    text += csv_row(cols, row, q.csv);
  }
  *ctx.out << text;
  return kExitOk;
}

std::string help_query_text() {
  std::string out =
      "List of valid properties to query for the switch \"--query=\" (comma separated).\n"
      "Values print in the unit shown; NA when the device has no value.\n";
  Column::Kind kind = Column::Kind::kIdentity;
  bool first = true;
  for (const Column& c : all_columns()) {
    if (first || c.kind != kind) {
      out += strprintf("\n%s:\n", kind_title(c.kind));
      kind = c.kind;
      first = false;
    }
    std::string unit = c.unit.empty() ? "-" : "[" + c.unit + "]";
    out += strprintf("  %-42s %-8s %s\n", c.key.c_str(), unit.c_str(), c.description.c_str());
  }
  return out;
}

}  // namespace npukit::smi
