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
// Removes spaces and tabs before every newline and at the end.
std::string rtrim_lines(std::string_view text);

}  // namespace npukit::smi
