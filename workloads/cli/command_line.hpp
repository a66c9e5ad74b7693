// npu-run's command line: `npu-run WORKLOAD [options]` (exit codes in workloads/run.hpp).
#pragma once

namespace npukit::work {

// The program: parses the command line, compiles the workload and runs it; the exit code.
int run_command_line(int argc, const char* const* argv);
// Parses and checks a command line as run_command_line does, running nothing (no workload is
// read, no node opened): kExitOk, or the code run_command_line would return before running.
int check_command_line(int argc, const char* const* argv);

}  // namespace npukit::work
