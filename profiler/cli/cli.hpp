// npu-prof's command line: argument parsing and dispatch to the library. Every failure prints
// one line "npu-prof: <what and where>" on stderr and returns one of these exit codes:
#pragma once

#include "telemetry/exit_codes.hpp"

namespace npukit::prof {

inline constexpr int kExitOk = exit_code::kOk;
inline constexpr int kExitFailed = 1;                   // recording/writing failed (SQLite, disk full, ...)
inline constexpr int kExitBadInput = 3;                 // missing path, not a profile, corrupted database
inline constexpr int kExitUsage = exit_code::kUsage;    // bad arguments
inline constexpr int kExitNoNode = exit_code::kNoNode;  // no node running, stale node
inline constexpr int kExitNoAccess = exit_code::kNoAccess;  // the node's events are not ours to read
inline constexpr int kExitCommandFailed = 7;   // record: the command failed (the profile is still written)
inline constexpr int kExitWrongDiagnosis = 8;  // selftest: a scenario's diagnosis was wrong

int run_cli(int argc, char** argv);
// Parses and checks a command line exactly as run_cli does, running nothing (no file is read,
// no command started): kExitOk, or the code run_cli would return before running (help: 0).
int check_args(int argc, const char* const* argv);

}  // namespace npukit::prof#include "telemetry/exit_codes.hpp"

