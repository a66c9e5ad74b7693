// A program's command line as data: its commands, their options and what values they take.
// Man pages (manual.hpp) and completion (complete.hpp) read this, never the parser, so a program
// whose parser is not one CLI11 tree (npu-smi) describes itself with the same structs.
//
// Thread-safety: plain values.
#pragma once

#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace npukit::cli {

struct OptionSpec {
  std::vector<std::string> names;    // "-t", "--type"; a positional: its name ("workload")
  std::string value;                 // "" for a flag; else what it takes: "NODE", "INT", "FIELD,..."
  std::vector<std::string> choices;  // the accepted values when they are a fixed set
  std::string help;
  std::string fallback;              // the default value, when the program shows one
  bool positional = false;
  bool attached = false;             // the value is written --opt=VALUE (npu-smi --query=)
  bool global = false;               // also taken after a command (npu-smi --node-name anywhere)
  bool takes_value() const { return !value.empty(); }
  // The value is a comma-separated list ("FIELD,...").
  bool list() const { return value.find(",...") != std::string::npos; }
};

struct CommandSpec {
  std::string name;
  std::string help;
  std::vector<OptionSpec> options;
  std::vector<CommandSpec> commands;
  const CommandSpec* command(const std::string& name) const;
  const OptionSpec* option(const std::string& name) const;  // by any of its names
};

// The model of a CLI11 app and its subcommands. Options in no group (hidden) are left out; a
// CLI::IsMember check's set becomes `choices`; the type name (CLI11's, or one the program set
// with ->type_name("NODE")) becomes `value`.
CommandSpec describe(const CLI::App& app);

}  // namespace npukit::cli
