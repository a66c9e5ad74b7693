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
// How npu-smi addresses a chip (-i card -c chip): "NPU 3" where every card has one chip,
// "NPU 2 Chip 1" on multi-chip cards (310P); the short form for narrow columns is "3" or "2-1".
std::string chip_label(int npu_id, int chip_id, bool multi_chip);
std::string chip_short_label(int npu_id, int chip_id, bool multi_chip);
// The same for a device of a snapshot (multi-chip when the node has fewer cards than chips).
std::string chip_label(const telemetry::Snapshot& s, int device);
std::string chip_short_label(const telemetry::Snapshot& s, int device);
// Removes spaces and tabs before every newline and at the end.
std::string rtrim_lines(std::string_view text);

}  // namespace npukit::smi
