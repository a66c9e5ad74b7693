// npu-smi's command table (smi/cli/manual.cpp), which completion and the man page read, against
// its parsers: every option the table lists is accepted where the table puts it.
#include <gtest/gtest.h>

#include "smi/cli/help.hpp"
#include "smi/cli/types.hpp"
#include "tests/smi/cli/smi_fixture.hpp"

namespace npukit::smi::testing {
namespace {

// A value the option accepts, from its choices or its kind.
std::string sample_value(const npukit::cli::OptionSpec& o, const npukit::cli::Program& p,
                         const std::vector<std::string>& path) {
  if (!o.choices.empty()) return o.choices.front();
  if (o.value == "SECONDS") return path == std::vector<std::string>{"diag"} ? "1" : "0.01";
  if (o.value == "METRICS") return "p";
  auto listed = p.values(o.value, path);
  return listed.empty() ? "0" : listed.front();
}

// Everything that would mean "this option is not npu-smi's here".
void expect_accepted(const SmiRun& r, const std::string& option, const std::string& line) {
  std::string all = r.out + r.err;
  EXPECT_EQ(all.find("Error parameter of " + option + "\n"), std::string::npos) << line << "\n" << all;
  EXPECT_EQ(all.find("unexpected argument '" + option), std::string::npos) << line << "\n" << all;
  EXPECT_EQ(all.find("Command or option is not found."), std::string::npos) << line << "\n" << all;
  EXPECT_NE(r.exit_code, kExitNotFound) << line;
}

void check_command(const std::shared_ptr<tf::InProcessBus>& bus, const npukit::cli::Program& p,
                   const npukit::cli::CommandSpec& spec, const std::vector<std::string>& path, int& checked) {
  for (const npukit::cli::OptionSpec& o : spec.options) {
    if (o.global) continue;  // --node-name: taken off the line by main() before any parser
    for (const std::string& name : o.names) {
      std::vector<std::string> args = path;
      std::string value = o.takes_value() ? sample_value(o, p, path) : "";
      if (o.attached) args.push_back(name + "=" + value);
      else {
        args.push_back(name);
        if (o.takes_value()) args.push_back(value);
      }
      if (path.empty() && name != "--query" && name != "--query-gpu") args.push_back("--query=npu_id");
      if (path.empty() && name != "--format") args.push_back("--format=csv");
      // Options npu-smi takes only together (-c needs -i, -i needs -t, -p is phyid-remap's).
      if (path == std::vector<std::string>{"info"} && name == "-p") args.insert(args.end(), {"-t", "phyid-remap"});
      else if (path == std::vector<std::string>{"info"} && (name == "-i" || name == "-c")) args.insert(args.end(), {"-t", "usages"});
      if (path.size() >= 1 && path[0] == "info" && name == "-c") args.insert(args.end(), {"-i", "0"});
      if (path == std::vector<std::string>{"info", "watch"} && name != "--count") args.insert(args.end(), {"--count", "1"});
      if (path == std::vector<std::string>{"info", "watch"} && name != "-d") args.insert(args.end(), {"-d", "0.01"});
      std::string line;
      for (const auto& a : args) line += a + " ";
      if (path.empty() && (name == "-h" || name == "--help" || name == "-v" || name == "--version" || name == "--help-query")) {
        args = {name};  // each is a command of its own
      }
      expect_accepted(run(bus, args), name, line);
      ++checked;
    }
  }
  for (const npukit::cli::CommandSpec& c : spec.commands) {
    std::vector<std::string> sub = path;
    sub.push_back(c.name);
    check_command(bus, p, c, sub, checked);
  }
}

TEST(SmiCommandTable, EveryOptionItListsIsAcceptedWhereItListsIt) {
  auto bus = make_bus(load_json("910b_reference.json"));
  npukit::cli::Program p = smi_program();
  int checked = 0;
  check_command(bus, p, p.spec, {}, checked);
  EXPECT_GT(checked, 40);
}

TEST(SmiCommandTable, TypesComeFromTheTablesTheParsersUse) {
  npukit::cli::Program p = smi_program();
  auto info = p.values("TYPE", {"info"});
  EXPECT_EQ(std::vector<std::string>(info_types().begin(), info_types().end()), info);
  EXPECT_EQ(p.values("TYPE", {"set"}), (std::vector<std::string>{"ecc-enable", "reset", "clear-ecc-info", "power-limit"}));
  EXPECT_EQ(p.values("TYPE", {"clear"}), (std::vector<std::string>{"ecc-info"}));
  auto fields = p.values("FIELD,...", {});
  EXPECT_NE(std::find(fields.begin(), fields.end(), "memory.used"), fields.end());
  EXPECT_NE(std::find(fields.begin(), fields.end(), "npu_power_watts"), fields.end());
}

}  // namespace
}  // namespace npukit::smi::testing
