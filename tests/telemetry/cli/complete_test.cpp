// Completion against a command model: what each kind of partial line completes to.
#include <gtest/gtest.h>

#include <CLI/CLI.hpp>

#include "telemetry/cli/complete.hpp"

namespace npukit::cli {
namespace {

using Words = std::vector<std::string>;

// A small program: `tool [--node-name NODE] run WORKLOAD [--mode fast|paced] [--fields F,...]`.
CommandSpec model() {
  CLI::App app{"a tool", "tool"};
  std::string s;
  app.add_option("--node-name", s, "node")->type_name("NODE");
  auto* run = app.add_subcommand("run", "run a workload");
  run->add_option("workload", s, "what to run")->type_name("WORKLOAD");
  run->add_option("--mode", s, "pace")->check(CLI::IsMember({"fast", "paced"}));
  run->add_option("--fields", s, "fields")->type_name("FIELD,...");
  bool quiet = false;
  run->add_flag("--quiet", quiet, "say less");
  CommandSpec spec = describe(app);
  spec.options[1].attached = false;  // --node-name (after -h): taken as "--node-name X"
  return spec;
}

std::vector<std::string> lister(const std::string& kind, const std::vector<std::string>& path) {
  if (kind == "WORKLOAD" && path == Words{"run"}) return {"resnet", "bert"};
  if (kind == "FIELD,...") return {"power", "temperature", "memory"};
  if (kind == "NODE") return {"lab", "lab2"};
  return {};
}

TEST(Complete, CommandsThenTheirOptionsOnly) {
  EXPECT_EQ(complete(model(), {}, "", lister), (Words{"run"}));
  EXPECT_EQ(complete(model(), {"run"}, "--q", lister), (Words{"--quiet"}));
  // The root's own options do not follow a command (CLI11 would refuse them there).
  EXPECT_EQ(complete(model(), {"run"}, "--n", lister), Words{});
  EXPECT_EQ(complete(model(), {}, "--n", lister), (Words{"--node-name"}));
}

TEST(Complete, ValuesOfAnOptionFromItsSetOrTheProgram) {
  EXPECT_EQ(complete(model(), {"run", "--mode"}, "", lister), (Words{"fast", "paced"}));
  EXPECT_EQ(complete(model(), {"run", "--mode"}, "p", lister), (Words{"paced"}));
  EXPECT_EQ(complete(model(), {"--node-name"}, "", lister), (Words{"lab", "lab2"}));
  // A value already given is skipped: the next word is a command again.
  EXPECT_EQ(complete(model(), {"--node-name", "lab"}, "r", lister), (Words{"run"}));
}

TEST(Complete, PositionalsTakeTheirValuesInOrder) {
  EXPECT_EQ(complete(model(), {"run"}, "", lister), (Words{"resnet", "bert"}));
  EXPECT_EQ(complete(model(), {"run"}, "b", lister), (Words{"bert"}));
  EXPECT_EQ(complete(model(), {"run", "bert"}, "", lister), Words{});  // one positional only
}

TEST(Complete, BashSplitsAtEqualsAndACommaListCompletesItsLastItem) {
  // `tool run --fields=po<TAB>`: bash passes "--fields", "=" and the current word "po".
  EXPECT_EQ(complete(model(), {"run", "--fields", "="}, "po", lister), (Words{"power"}));
  EXPECT_EQ(complete(model(), {"run", "--fields", "="}, "power,te", lister), (Words{"power,temperature"}));
  EXPECT_EQ(complete(model(), {"run", "--fields"}, "memory,", lister),
            (Words{"memory,power", "memory,temperature", "memory,memory"}));
  // A value given with '=' is not waited for.
  EXPECT_EQ(complete(model(), {"run", "--mode", "=", "fast"}, "--q", lister), (Words{"--quiet"}));
}

TEST(Complete, UnknownWordsAndOptionsCompleteToNothingRatherThanFail) {
  EXPECT_EQ(complete(model(), {"frobnicate"}, "", lister), Words{});
  EXPECT_EQ(complete(model(), {"run", "--nope"}, "", lister), (Words{"resnet", "bert"}));
  EXPECT_EQ(complete(model(), {"--bogus", "="}, "", lister), Words{});
}

TEST(Complete, AnAttachedOptionIsOfferedWithItsEqualsSign) {
  CommandSpec spec = model();
  spec.options[1].attached = true;
  EXPECT_EQ(complete(spec, {}, "--no", lister), (Words{"--node-name="}));
}

}  // namespace
}  // namespace npukit::cli
