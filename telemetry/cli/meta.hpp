// The requests every npukit program answers before parsing its own command line (they are for
// the build and the shell, not for people, so --help does not list them):
//   PROGRAM --help-man                  the man page (roff) on stdout;
//   PROGRAM --complete N W1..WN CURRENT  completion candidates for CURRENT, one per line, after
//                                       the N words W1..WN (the line without the program name).
// And the one-line usage error every CLI11 program ends a bad command line with.
#pragma once

#include <functional>
#include <optional>
#include <ostream>
#include <string>

#include "telemetry/cli/complete.hpp"
#include "telemetry/cli/manual.hpp"

namespace CLI {
class App;
class ParseError;
}

namespace npukit::cli {

struct Program {
  CommandSpec spec;
  Manual manual;
  ValueLister values;  // run-time values beyond "NODE" (which every program completes); may be empty
};

// The answer's exit code when argv[1] is --help-man or --complete, else nullopt. `program` is
// called only then.
std::optional<int> answer_meta_request(int argc, const char* const* argv, const std::function<Program()>& program,
                                       std::ostream& out);

// Names `app` after the manual's program, with its one-line description, --version (unless the
// program declares its own) and the manual's exit codes and examples as the --help footer.
void present(CLI::App& app, const Manual& manual, const std::string& description, bool version_flag = true);

// A CLI11 parse error as every program reports it: help or version printed (exit 0), or one line
// "<tool>: <what>" on stderr and exit_code::kUsage.
int parse_error_exit(CLI::App& app, const CLI::ParseError& e);

}  // namespace npukit::cli
