// Every program's --help and man page: both goldens, and drawn from one command model, so an
// option one of them mentions is in the other. And the bash completion, in a real bash.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <regex>
#include <set>

#include "tests/daemon_util.hpp"
#include "tests/golden_util.hpp"

namespace npukit {
namespace {

using testing::run_command;

struct Tool {
  const char* name;
  const char* path;
  std::vector<std::string> commands;  // each has its own --help
};

const std::vector<Tool>& tools() {
  static const std::vector<Tool> all = {
      {"npu-emud", NPU_EMUD_PATH, {"start", "stop", "status", "inject", "clear", "reset", "set"}},
      {"npu-run", NPU_RUN_PATH, {}},
      {"npu-prof", NPU_PROF_PATH, {"record", "report", "export", "diff", "selftest"}},
      {"npu-smi", NPU_SMI_PATH, {"info", "info watch", "set", "clear", "health", "diag", "topo", "stats"}},
      {"npu-top", NPU_TOP_PATH, {}},
      {"npu-exporter", NPU_EXPORTER_PATH, {}},
  };
  return all;
}

std::string golden(const std::string& file) { return std::string(NPUKIT_TEST_DATA_DIR) + "/install/" + file; }

// Every option an option-looking word names: -x or --long, at the start of a word.
std::set<std::string> options_in(const std::string& text) {
  static const std::regex option(R"((?:^|[\s\[(|,])(--?[a-z][a-z0-9-]*))");
  std::set<std::string> out;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), option); it != std::sregex_iterator(); ++it) {
    out.insert((*it)[1]);
  }
  return out;
}

// The man page as text: roff's escaped hyphens and font changes undone.
std::string man_text(const std::string& roff) {
  std::string text = std::regex_replace(roff, std::regex(R"(\\-)"), "-");
  return std::regex_replace(text, std::regex(R"(\\f[BIR])"), "");
}

TEST(Manual, HelpAndManPageMatchTheirGoldens) {
  for (const Tool& t : tools()) {
    auto help = run_command(std::string(t.path) + " --help");
    EXPECT_EQ(help.exit_code, 0) << t.name;
    testing::expect_golden_file(golden(std::string(t.name) + ".help.txt"), help.output);
    auto man = run_command(std::string(t.path) + " --help-man");
    EXPECT_EQ(man.exit_code, 0) << t.name;
    testing::expect_golden_file(golden(std::string(t.name) + ".1"), man.output);
  }
}

TEST(Manual, EveryOptionInTheHelpIsInTheManPageAndTheOtherWayRound) {
  for (const Tool& t : tools()) {
    std::string help = run_command(std::string(t.path) + " --help").output;
    for (const std::string& c : t.commands) help += run_command(std::string(t.path) + " " + c + " --help").output;
    std::string man = man_text(run_command(std::string(t.path) + " --help-man").output);
    std::set<std::string> in_help = options_in(help), in_man = options_in(man);
    EXPECT_GT(in_help.size(), 2u) << t.name;
    for (const std::string& o : in_help) EXPECT_TRUE(in_man.count(o)) << t.name << ": " << o << " is in --help, not in the man page";
    for (const std::string& o : in_man) {
      if (o == "--help-man" || o == "--help-query") continue;
      EXPECT_TRUE(in_help.count(o)) << t.name << ": " << o << " is in the man page, not in --help";
    }
  }
}

TEST(Manual, TheManPageRendersWithoutWarnings) {
  std::string missing = testing::ensure_debian_package("man", "man-db");
  if (!missing.empty()) GTEST_SKIP() << missing;
  std::filesystem::path dir = std::filesystem::temp_directory_path() / ("npukit-man-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  for (const Tool& t : tools()) {
    std::string page = (dir / (std::string(t.name) + ".1")).string();
    run_command(std::string(t.path) + " --help-man > " + page);
    auto r = run_command("LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -l " + page + " 2>&1 >/dev/null");
    EXPECT_EQ(r.output, "") << t.name;
    auto text = run_command("LC_ALL=C.UTF-8 MANWIDTH=80 man -P cat -l " + page);
    EXPECT_NE(text.output.find("EXIT STATUS"), std::string::npos) << t.name << text.output;
    EXPECT_NE(text.output.find("EXAMPLES"), std::string::npos) << t.name;
  }
  std::filesystem::remove_all(dir);
}

// What the completion function answers in a real bash for a partial line (the words as bash
// splits them; the last one is being completed).
std::string complete_in_bash(const std::string& words) {
  std::string path = std::string(NPUKIT_BUILD_DIR) + "/smi:" + NPUKIT_BUILD_DIR + "/emulator:" + NPUKIT_BUILD_DIR +
                     "/workloads:" + NPUKIT_BUILD_DIR + "/profiler";
  std::string script = "source " + std::string(NPUKIT_SOURCE_DIR) + "/deploy/bash-completion/npukit; COMP_WORDS=(" +
                       words + "); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); _npukit_complete; printf \"%s\\n\" \"${COMPREPLY[@]}\"";
  return run_command("PATH=" + path + ":$PATH bash --norc --noprofile -c '" + script + "'").output;
}

TEST(Completion, InARealBashEveryToolCompletesItsOwnLine) {
  EXPECT_EQ(complete_in_bash("npu-smi info -t \"\""), "board\ncommon\nusages\nhealth\ntemp\npower\nmemory\necc\nproc-mem\nproduct\nsensors\ntopo\nphyid-remap\n");
  EXPECT_EQ(complete_in_bash("npu-smi set -t p"), "power-limit\n");
  EXPECT_EQ(complete_in_bash("npu-smi --query-gpu = memory.u"), "memory.used\n");
  EXPECT_EQ(complete_in_bash("npu-smi --query = npu_id,npu_power_w"), "npu_id,npu_power_watts\n");
  EXPECT_EQ(complete_in_bash("npu-smi he"), "health\n");
  EXPECT_EQ(complete_in_bash("npu-emud inject --fault over"), "over-temperature\n");
  EXPECT_EQ(complete_in_bash("npu-run ernie"), "ernie3-medium-seed\nernie3-train\n");
  EXPECT_EQ(complete_in_bash("npu-run resnet50-train --no-f"), "--no-fusion\n");
  EXPECT_EQ(complete_in_bash("npu-prof report x --format j"), "json\n");
  EXPECT_EQ(complete_in_bash("npu-top --vi"), "--view\n");
  EXPECT_EQ(complete_in_bash("npu-exporter --li"), "--listen\n");
}

TEST(Completion, NodeNamesAreTheRunningNodes) {
  testing::ScopedNode node("compl");
  std::string out = complete_in_bash("npu-smi info --node-name \"" + node.name().substr(0, 5) + "\"");
  EXPECT_NE(out.find(node.name() + "\n"), std::string::npos) << out;
  out = complete_in_bash("npu-top --node \"\"");
  EXPECT_NE(out.find(node.name() + "\n"), std::string::npos) << out;
}

}  // namespace
}  // namespace npukit
