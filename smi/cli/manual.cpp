// npu-smi's command model and manual (help.hpp: smi_program). The model is a table because
// npu-smi parses each command with its own small CLI11 app (Huawei's argument rules); the test
// tests/smi/cli/manual_test.cpp checks every option here is accepted by those parsers and every
// option the help texts mention is here.
#include <string>

#include "smi/cli/diag.hpp"
#include "smi/cli/help.hpp"
#include "smi/cli/types.hpp"
#include "smi/common/columns.hpp"

namespace npukit::smi {

namespace {

using npukit::cli::CommandSpec;
using npukit::cli::OptionSpec;

OptionSpec value(std::vector<std::string> names, std::string kind, std::string help, std::vector<std::string> choices = {}) {
  OptionSpec o;
  o.names = std::move(names);
  o.value = std::move(kind);
  o.choices = std::move(choices);
  o.help = std::move(help);
  return o;
}
OptionSpec flag(std::vector<std::string> names, std::string help) { return value(std::move(names), "", std::move(help)); }
OptionSpec attached(std::string name, std::string kind, std::string help, std::vector<std::string> choices = {}) {
  OptionSpec o = value({std::move(name)}, std::move(kind), std::move(help), std::move(choices));
  o.attached = true;
  return o;
}

OptionSpec help_flag() { return flag({"-h", "--help"}, "this command's help"); }
OptionSpec card() { return value({"-i"}, "ID", "card (NPU) id"); }
OptionSpec chip() { return value({"-c"}, "ID", "chip id within the card"); }
OptionSpec json() { return flag({"--json"}, "the answer as one JSON document"); }

CommandSpec info_command() {
  CommandSpec watch{"watch", "show every chip's status in scrolling rows", {
      help_flag(), card(), chip(),
      value({"-d"}, "SECONDS", "delay between samples (0.01-100)"),
      value({"-s"}, "METRICS", "metrics letters: p t a i c m b n u"),
      flag({"--timestamp"}, "lead each row with a UTC timestamp"),
      value({"--count"}, "N", "stop after N samples"),
      value({"--format"}, "FORMAT", "row format", {"text", "csv", "json"}),
  }, {}};
  return {"info", "show hardware details (the table, or one -t type)", {
      help_flag(), flag({"-m"}, "every chip's mapping"), flag({"-l"}, "every chip's topology"),
      value({"-t"}, "TYPE", "show information of this type"), card(), chip(),
      value({"-p"}, "ID", "chip physical id (phyid-remap)"), json(),
  }, {watch}};
}

CommandSpec smi_spec() {
  CommandSpec root{"npu-smi", "", {
      help_flag(), flag({"-v"}, "the node's driver and firmware versions"),
      flag({"--version"}, "npukit's version"),
      attached("--query", "FIELD,...", "one CSV row per chip with these fields (see --help-query)"),
      attached("--query-gpu", "FIELD,...", "the same as --query (nvidia-smi's name)"),
      attached("--format", "FORMAT", "CSV options", {"csv", "csv,noheader", "csv,nounits", "csv,noheader,nounits"}),
      flag({"--help-query"}, "the fields --query takes, with units"),
      value({"-i", "--id"}, "ID", "--query: only this card"),
      value({"--node-name", "--node"}, "NODE", "the node (anywhere on the line; default $NPU_NODE, else npukit)"),
  }, {}};
  root.options.back().global = true;
  root.commands.push_back(info_command());
  root.commands.push_back({"set", "modify device configuration", {
      help_flag(), value({"-t"}, "TYPE", "what to set"), card(), chip(),
      value({"-d"}, "VALUE", "the value (ecc-enable: 0 or 1; power-limit: watts)")}, {}});
  root.commands.push_back({"clear", "clear device information", {
      help_flag(), value({"-t"}, "TYPE", "what to clear"), card(), chip()}, {}});
  root.commands.push_back({"health", "per-chip health verdict with reasons", {
      help_flag(), card(), flag({"-v", "--verbose"}, "also the active faults"), json(),
      flag({"--npd"}, "one line for node-problem-detector")}, {}});
  root.commands.push_back({"diag", "active diagnostics in a dcgmi-style result box", {
      help_flag(), value({"-r"}, "LEVEL", "1 quick, 2 medium, 3 long", {"1", "2", "3"}), card(),
      value({"--duration"}, "SECONDS", "level 3 stress length"), flag({"-v", "--verbose"}, "what each test measured"),
      json()}, {}});
  root.commands.push_back({"topo", "device link matrix with CPU affinity", {help_flag(), json()}, {}});
  root.commands.push_back({"stats", "job accounting", {help_flag(), value({"--job", "-j"}, "ID", "one job"), json()}, {}});
  return root;
}

std::vector<std::string> strings(std::span<const std::string_view> list) { return {list.begin(), list.end()}; }

// Run-time values: -t types by command, --query fields.
std::vector<std::string> smi_values(const std::string& kind, const std::vector<std::string>& path) {
  if (kind == "TYPE" && !path.empty()) {
    if (path.front() == "info") return strings(info_types());
    if (path.front() == "set") return strings(set_types());
    if (path.front() == "clear") return strings(clear_types());
  }
  if (kind == "FIELD,...") {
    std::vector<std::string> out;
    for (const Column& c : all_columns()) out.push_back(c.key);
    return out;
  }
  return {};
}

npukit::cli::Manual smi_manual() {
  npukit::cli::Manual m;
  m.name = "npu-smi";
  m.summary = "query and manage the NPUs of an npukit node, as Huawei's npu-smi does";
  m.synopsis = "npu-smi <info|set|clear|health|diag|topo|stats|-h|-v> [options...] [--node-name NODE]";
  m.description = {
      "Prints what Huawei's npu-smi prints, byte for byte, for the emulated node named by --node-name "
      "(anywhere on the line), else $NPU_NODE, else npukit: the device table (info), one -t type per card "
      "or chip, a scrolling watch, and set/clear of device settings, with Huawei's exit codes.",
      "Its extensions answer scripts: --query with CSV output (npukit's field names, or nvidia-smi's such as "
      "memory.used and power.draw), --json on every info query, health verdicts with reasons and exit "
      "codes, dcgmi-style diagnostics, the link topology and per-job accounting.",
  };
  m.verbatim = {{"npu-smi -h", top_help()},           {"npu-smi info -h", info_help()},
                {"npu-smi info watch -h", watch_help()}, {"npu-smi set -h", set_help()},
                {"npu-smi clear -h", clear_help()},      {"npu-smi health -h", health_help()},
                {"npu-smi diag -h", diag_help()},        {"npu-smi topo -h", topo_help()},
                {"npu-smi stats -h", stats_help()}};
  m.exit_codes = smi_exit_codes();
  m.environment = {npukit::cli::npu_node_variable()};
  m.examples = {{"npu-smi info", "the device table"},
                {"npu-smi info -t usages -i 0", "card 0's utilization"},
                {"npu-smi info watch -d 0.5 --count 10 --format csv", "ten samples as CSV"},
                {"npu-smi --query-gpu=index,memory.used,power.draw --format=csv", "a script written for nvidia-smi"},
                {"npu-smi health -v", "every chip's verdict with the active faults"},
                {"npu-smi set -t power-limit -i 0 -c 0 -d 250", "cap chip 0 of card 0 at 250 W"}};
  m.see_also = {"npu-top(1)", "npu-emud(1)", "npu-exporter(1)"};
  return m;
}

}  // namespace

npukit::cli::Program smi_program() { return {smi_spec(), smi_manual(), smi_values}; }

}  // namespace npukit::smi
