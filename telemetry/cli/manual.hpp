// A program's manual: what the command model (command_model.hpp) does not say. man_page() and
// help_footer() render it together with the model, so `--help` and the man page come from the
// same data and cannot drift (tests/install compares them for every program).
//
// Thread-safety: plain values and pure functions.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "telemetry/cli/command_model.hpp"

namespace npukit::cli {

struct ExitCode {
  std::string code;  // "0", "1-3"
  std::string meaning;
};

struct Example {
  std::string command;
  std::string what;
};

struct Manual {
  std::string name;         // "npu-run"
  std::string summary;      // one line, lower case, no full stop (the NAME section)
  std::string synopsis;     // "" for one drawn from the model: "npu-run [OPTIONS] [workload]"
  std::vector<std::string> description;  // paragraphs
  // Sections printed verbatim (npu-smi's own help texts, which its --help prints): title, text.
  // An upper-case title ("KEYS") is a section of its own, any other a subsection of OPTIONS.
  std::vector<std::pair<std::string, std::string>> verbatim;
  std::vector<ExitCode> exit_codes;
  std::vector<std::pair<std::string, std::string>> environment;  // variable, meaning
  std::vector<Example> examples;
  std::vector<std::string> see_also;  // "npu-smi(1)"
};

// The shared exit codes every program lists (4 usage, 5 no node, 6 no access; 130 when the
// program runs until interrupted): appended to a program's own by the programs.
std::vector<ExitCode> shared_exit_codes(bool interruptible);
// The environment every node-reading program documents ($NPU_NODE, $NPUKIT_*_DIR are added by
// programs that read them).
std::pair<std::string, std::string> npu_node_variable();

// The man page in roff (man(7) macros), section 1. The OPTIONS section lists the model's options,
// then one subsection per command with its own.
std::string man_page(const CommandSpec& spec, const Manual& manual);
// What --help prints after CLI11's option list: exit codes, examples, "see man <name>".
std::string help_footer(const Manual& manual);

}  // namespace npukit::cli
