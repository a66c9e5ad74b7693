// npu-smi's help texts: Huawei's wording for the compatible commands, with the npukit
// extensions and the exit-code table appended (docs/npu-smi.md says the same).
#pragma once

#include <string>
#include <vector>

#include "telemetry/cli/meta.hpp"

namespace npukit::smi {

std::string top_help();
std::string info_help();
std::string watch_help();
std::string set_help();
std::string clear_help();
std::string health_help();
std::string topo_help();
std::string stats_help();
// npu-smi's exit codes: Huawei's for its commands, ours for the extensions (top_help lists them).
std::vector<npukit::cli::ExitCode> smi_exit_codes();
// The command model (for completion and the man page: npu-smi's parsers are one CLI11 app per
// command, so the model is this table, checked against the parsers by tests/smi/cli) and manual.
npukit::cli::Program smi_program();

}  // namespace npukit::smi
