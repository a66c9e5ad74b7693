// Small text helpers shared by the consumers' renderers: printf into a std::string (the
// renderers reuse npu-smi's own printf formats, which is what keeps widths byte-exact), and
// trailing-whitespace removal for formats whose columns are padded (watch's %-12s).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "telemetry/snapshot.hpp"

namespace npukit::smi {

[[gnu::format(printf, 1, 2)]] std::string strprintf(const char* format, ...);
// An error code as npu-smi and the dashboards print it: "0x80E01802" (8 hex digits, upper case).
std::string error_code_text(uint64_t code);
// How npu-smi addresses a chip (telemetry/snapshot.hpp).
using telemetry::chip_label;
using telemetry::chip_short_label;
// The chip family npu-smi prints as Chip Type and before the Chip Name of -m: "Ascend" for
// "Ascend910B" (the type's letters before its model number); a type that is not an Ascend
// chip's ("A100" of a what-if spec) is its own family.
std::string chip_family(std::string_view chip_type);
// Removes spaces and tabs before every newline and at the end.
std::string rtrim_lines(std::string_view text);

}  // namespace npukit::smi
