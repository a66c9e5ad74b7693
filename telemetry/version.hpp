// The project's version, as every tool's --version prints it: "<tool> (npukit) <version>".
// NPUKIT_VERSION comes from the top-level CMakeLists.txt's project(VERSION).
#pragma once

#include <string>
#include <string_view>

#ifndef NPUKIT_VERSION
#error "NPUKIT_VERSION must be defined by the build (CMakeLists.txt)"
#endif

namespace npukit::telemetry {

inline constexpr std::string_view kVersion = NPUKIT_VERSION;

inline std::string version_line(std::string_view tool) {
  return std::string(tool) + " (npukit) " + std::string(kVersion);
}

}  // namespace npukit::telemetry
