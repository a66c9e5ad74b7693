// Completion of a partial command line against a command model, for the shell scripts in
// deploy/bash-completion/. The shell passes the words before the cursor as it split them (bash
// splits "--query=x" into "--query", "=", "x") and the word being completed; the answer is the
// candidates that replace that word, already filtered by it.
//
// Thread-safety: pure, apart from what `values` does.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "telemetry/cli/command_model.hpp"

namespace npukit::cli {

// The values an option or positional takes that only the program knows at run time, by the
// option's `value` kind ("NODE", "TYPE", "FIELD,...") and the command path it sits in ("info").
using ValueLister = std::function<std::vector<std::string>(const std::string& kind, const std::vector<std::string>& path)>;

// `words`: the command line before the word being completed, without the program name.
std::vector<std::string> complete(const CommandSpec& spec, const std::vector<std::string>& words,
                                  const std::string& current, const ValueLister& values);

// The names of the nodes whose bus segments exist on this machine (/dev/shm/npukit-*), sorted:
// what "NODE" completes to. Some may be stale; completion does not check.
std::vector<std::string> node_names_on_this_machine();

}  // namespace npukit::cli
