#include "telemetry/data_dir.hpp"

#include <cstdlib>
#include <filesystem>

namespace npukit::telemetry {

namespace fs = std::filesystem;

std::string data_dir(const char* env, const char* subdir, const char* source_dir) {
  if (const char* value = std::getenv(env); value != nullptr && *value != '\0') return value;
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    fs::path installed = exe.parent_path().parent_path() / "share" / "npukit" / subdir;
    if (fs::is_directory(installed, ec)) return installed.string();
  }
  return source_dir;
}

std::string data_dir_hint(const std::string& dir, const char* env) {
  return dir + " (set " + std::string(env) + " to look elsewhere)";
}

}  // namespace npukit::telemetry
