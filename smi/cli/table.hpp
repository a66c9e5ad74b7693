// `npu-smi info`: the boxed table, built as one Document (render_json prints --json) and drawn
// byte for byte in npu-smi's two layouts (shared/reference/npu-smi.md section 1.3):
//   HBM layout (910 / 910B): 98 columns; the power column prints `-` when there is no value
//     (a literal NA confuses table parsers there); the DDR pair is npu-smi's forced 0 / 0.
//   classic layout (310P): 106 columns, power NA, plus the process table.
// Both end with the process table: one block per card closed by a `+===+` row, "No running
// processes found in NPU n" for a card without processes.
#pragma once

#include <string>

#include "smi/common/doc.hpp"
#include "telemetry/snapshot.hpp"

namespace npukit::smi {

// {node, tool_version, driver_version, layout, stale, cards: [{npu_id, chips: [...],
// processes: [...]}]}.
Document build_info_doc(const telemetry::Snapshot& s);
// The table for a document from build_info_doc (layout chosen by its "layout" value).
std::string render_info_table(const Document& doc);

}  // namespace npukit::smi
