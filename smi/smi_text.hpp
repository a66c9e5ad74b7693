// Small text helpers shared by the npu-smi renderers: printf into a std::string (the
// renderers reuse npu-smi's own printf formats, which is what keeps widths byte-exact), and
// trailing-whitespace removal for formats whose columns are padded (watch's %-12s).
#pragma once

#include <string>
#include <string_view>

namespace npukit::smi {

[[gnu::format(printf, 1, 2)]] std::string strprintf(const char* format, ...);
// Removes spaces and tabs before every newline and at the end.
std::string rtrim_lines(std::string_view text);

}  // namespace npukit::smi
