// Where the shipped data is found (device and node specs, built-in workloads, the diagnosis
// matrix): the environment variable when set; else beside the running binary, installed as
// <prefix>/bin/<tool> with the data in <prefix>/share/npukit/<subdir>; else the source tree the
// binary was built from (a build tree). Nothing else reads paths compiled in.
#pragma once

#include <string>

namespace npukit::telemetry {

// `env`: the override ("NPUKIT_SPEC_DIR"); `subdir`: under share/npukit ("specs");
// `source_dir`: the build tree's copy (a path compiled in).
std::string data_dir(const char* env, const char* subdir, const char* source_dir);

// For a message when something is missing there: "<dir> (set <env> to look elsewhere)".
std::string data_dir_hint(const std::string& dir, const char* env);

}  // namespace npukit::telemetry
