// npu-smi's command line: argv -> a command of commands.hpp -> exit code. CLI11 splits
// the arguments; the validation and its messages are npu-smi's ("Error parameter of -i",
// "Invalid card id.", "Command or option is not found.") with its exit codes, and the
// extensions report one line naming the bad input with exit code 4 (context.hpp).
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "smi/cli/context.hpp"

namespace npukit::smi {

int run_cli(Context& ctx, int argc, const char* const* argv);

namespace cli {

// An option taking zero or one value, so a missing value is ours to report (npu-smi style)
// rather than CLI11's.
struct Opt {
  std::vector<std::string> values;
  CLI::Option* option = nullptr;
  bool given() const { return option != nullptr && option->count() > 0; }
  std::string value() const { return values.empty() ? std::string() : values.front(); }
};
void add(CLI::App& app, const std::string& name, Opt& opt);
// Runs CLI11; false (with the offending argument in `bad`) on a parse error or a leftover.
bool parse(CLI::App& app, const std::vector<std::string>& args, std::string& bad);
// npu-smi's ids: decimal digits only.
bool parse_id(const std::string& text, int& out);

int run_info(Context& ctx, const std::vector<std::string>& args);
int run_set(Context& ctx, const std::vector<std::string>& args, bool clear);

}  // namespace cli
}  // namespace npukit::smi
