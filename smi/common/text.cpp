#include "smi/common/text.hpp"

#include <cstdarg>
#include <cstdio>

namespace npukit::smi {

std::string strprintf(const char* format, ...) {
  va_list args;
  va_start(args, format);
  va_list copy;
  va_copy(copy, args);
  int n = std::vsnprintf(nullptr, 0, format, copy);
  va_end(copy);
  std::string out(n > 0 ? static_cast<std::size_t>(n) : 0, '\0');
  if (n > 0) std::vsnprintf(out.data(), out.size() + 1, format, args);
  va_end(args);
  return out;
}

std::string chip_label(int npu_id, int chip_id, bool multi_chip) {
  return "NPU " + std::to_string(npu_id) + (multi_chip ? " Chip " + std::to_string(chip_id) : "");
}

std::string chip_short_label(int npu_id, int chip_id, bool multi_chip) {
  return std::to_string(npu_id) + (multi_chip ? "-" + std::to_string(chip_id) : "");
}

namespace {
bool multi_chip(const telemetry::Snapshot& s) { return s.node().card_count < s.device_count(); }
}  // namespace

std::string chip_label(const telemetry::Snapshot& s, int device) {
  const telemetry::DeviceInfo& info = s.device_info(device);
  return chip_label(info.npu_id, info.chip_id, multi_chip(s));
}

std::string chip_short_label(const telemetry::Snapshot& s, int device) {
  const telemetry::DeviceInfo& info = s.device_info(device);
  return chip_short_label(info.npu_id, info.chip_id, multi_chip(s));
}

std::string error_code_text(uint64_t code) {
  return strprintf("0x%08llX", static_cast<unsigned long long>(code));
}

std::string rtrim_lines(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  std::size_t pending_from = 0;  // start of a run of spaces/tabs not yet written
  bool pending = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == ' ' || c == '\t') {
      if (!pending) pending_from = i;
      pending = true;
      continue;
    }
    if (pending && c != '\n') out.append(text.substr(pending_from, i - pending_from));
    pending = false;
    out += c;
  }
  return out;
}

}  // namespace npukit::smi
