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

std::string chip_family(std::string_view chip_type) {
  if (chip_type.rfind("Ascend", 0) != 0) return std::string(chip_type);
  return std::string(chip_type.substr(0, chip_type.find_first_of("0123456789")));
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
