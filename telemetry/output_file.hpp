// Output files a user keeps (profiles' info files, npu-top recordings): created 0644 less the
// user's umask, whatever the stream library's default (0666 less the umask) would be, so a
// recording is never group-writable and `umask 077` keeps it private (docs/reliability.md).
#pragma once

#include <string>

#include "telemetry/status.hpp"

namespace npukit::telemetry {

// Writes `text` to `path` (created 0644 & ~umask, or truncated if it exists).
// Errors name the path: "<path>: cannot write: <strerror>".
Status write_output_file(const std::string& path, const std::string& text);

}  // namespace npukit::telemetry
