// The man page and --help footer drawn from a command model and a manual.
#include <gtest/gtest.h>

#include <CLI/CLI.hpp>

#include "telemetry/cli/manual.hpp"
#include "telemetry/cli/meta.hpp"
#include "telemetry/version.hpp"

namespace npukit::cli {
namespace {

CommandSpec model() {
  CLI::App app{"a tool", "tool"};
  std::string s;
  int n = 3;
  app.add_option("--count,-n", n, "how many")->capture_default_str();
  app.add_option("--mode", s, "pace")->check(CLI::IsMember({"fast", "paced"}));
  app.add_option("--steps", n, "steps")->check(CLI::Range(1, 9));
  app.add_option("file", s, "a file");
  bool flag = false;
  app.add_flag("--hidden-flag", flag, "not shown")->group("");
  app.add_subcommand("go", "go somewhere")->add_flag("--far", flag, "far away");
  return describe(app);
}

Manual manual() {
  Manual m;
  m.name = "tool";
  m.summary = "do one thing";
  m.description = {"First paragraph with --count.", ".A line starting with a dot"};
  m.exit_codes = {{"0", "done"}, {"4", "usage"}};
  m.environment = {{"TOOL_DIR", "where"}};
  m.examples = {{"tool -n 2 a.txt", "twice"}};
  m.see_also = {"npu-smi(1)", "npu-top(1)"};
  return m;
}

TEST(Describe, ReadsOptionsValuesChoicesDefaultsAndCommandsFromCLI11) {
  CommandSpec spec = model();
  EXPECT_EQ(spec.name, "tool");
  const OptionSpec* count = spec.option("-n");
  ASSERT_NE(count, nullptr);
  EXPECT_EQ(count->names, (std::vector<std::string>{"-n", "--count"}));
  EXPECT_EQ(count->value, "INT");
  EXPECT_EQ(count->fallback, "3");
  EXPECT_EQ(spec.option("--mode")->choices, (std::vector<std::string>{"fast", "paced"}));
  EXPECT_EQ(spec.option("--mode")->value, "TEXT");
  EXPECT_EQ(spec.option("--steps")->value, "INT");  // not "INT:INT in [1 - 9]"
  EXPECT_EQ(spec.option("--hidden-flag"), nullptr);
  EXPECT_EQ(spec.option("file"), nullptr);  // positionals are not found by option name
  ASSERT_NE(spec.command("go"), nullptr);
  EXPECT_NE(spec.command("go")->option("--far"), nullptr);
}

TEST(ManPage, HasEverySectionWithRoffEscapes) {
  std::string page = man_page(model(), manual());
  EXPECT_EQ(page.rfind(".TH TOOL 1 \"\" \"npukit " + std::string(telemetry::kVersion) + "\" \"npukit manual\"\n", 0), 0u) << page;
  EXPECT_NE(page.find(".SH NAME\ntool \\- do one thing\n"), std::string::npos);
  EXPECT_NE(page.find(".SH SYNOPSIS\n\\fBtool\\fR [\\fIOPTIONS\\fR] \\fICOMMAND\\fR [\\fIOPTIONS\\fR] [\\fIfile\\fR]\n"),
            std::string::npos) << page;
  EXPECT_NE(page.find("First paragraph with \\-\\-count.\n.PP\n\\&.A line starting with a dot\n"), std::string::npos);
  EXPECT_NE(page.find(".TP\n\\fB\\-n\\fR, \\fB\\-\\-count\\fR \\fIINT\\fR\nhow many (default: 3)\n"), std::string::npos) << page;
  EXPECT_NE(page.find("pace (one of: fast, paced)"), std::string::npos);
  EXPECT_NE(page.find(".SS \"tool go\"\ngo somewhere\n"), std::string::npos);
  EXPECT_NE(page.find(".SH EXIT STATUS\n.TP\n.B 0\ndone\n"), std::string::npos);
  EXPECT_NE(page.find(".SH ENVIRONMENT\n.TP\n.B TOOL_DIR\nwhere\n"), std::string::npos);
  EXPECT_NE(page.find(".SH EXAMPLES\n.TP\n.B tool \\-n 2 a.txt\ntwice\n"), std::string::npos);
  EXPECT_NE(page.find(".SH SEE ALSO\n.BR npu\\-smi (1),\n.BR npu\\-top (1)\n"), std::string::npos);
  EXPECT_EQ(page.find("hidden"), std::string::npos);
}

TEST(ManPage, VerbatimSectionsKeepTheirLinesWithTabsExpanded) {
  Manual m = manual();
  m.verbatim = {{"KEYS", "q\tquit\n\\ back\n"}, {"tool go -h", "Usage: tool go\n"}};
  std::string page = man_page(model(), m);
  EXPECT_NE(page.find(".SH \"KEYS\"\n.nf\nq       quit\n\\e back\n.fi\n"), std::string::npos) << page;
  EXPECT_NE(page.find(".SS \"tool go \\-h\"\n.nf\nUsage: tool go\n.fi\n"), std::string::npos) << page;
}

TEST(HelpFooter, ListsExitCodesExamplesAndTheManPage) {
  EXPECT_EQ(help_footer(manual()),
            "Exit codes:\n  0     done\n  4     usage\n\nExamples:\n  tool -n 2 a.txt\n      twice\n\n"
            "The manual: man tool\n");
}

TEST(SharedExitCodes, AreTheSameNumbersInEveryProgram) {
  auto codes = shared_exit_codes(true);
  ASSERT_EQ(codes.size(), 4u);
  EXPECT_EQ(codes[0].code, "4");
  EXPECT_EQ(codes[1].code, "5");
  EXPECT_EQ(codes[2].code, "6");
  EXPECT_EQ(codes[3].code, "130");
  EXPECT_EQ(shared_exit_codes(false).size(), 3u);
}

TEST(MetaRequest, AnswersHelpManAndCompleteAndLeavesTheRest) {
  int calls = 0;
  auto program = [&] {
    ++calls;
    return Program{model(), manual(), nullptr};
  };
  std::ostringstream out;
  const char* normal[] = {"tool", "go"};
  EXPECT_FALSE(answer_meta_request(2, normal, program, out).has_value());
  EXPECT_EQ(calls, 0);
  const char* man[] = {"tool", "--help-man"};
  EXPECT_EQ(answer_meta_request(2, man, program, out), 0);
  EXPECT_NE(out.str().find(".SH NAME"), std::string::npos);
  out.str("");
  const char* comp[] = {"tool", "--complete", "1", "go", "--f"};
  EXPECT_EQ(answer_meta_request(5, comp, program, out), 0);
  EXPECT_EQ(out.str(), "--far\n");
  const char* bad[] = {"tool", "--complete", "3", "go"};  // says 3 words, has 1
  EXPECT_EQ(answer_meta_request(4, bad, program, out), 4);
}

}  // namespace
}  // namespace npukit::cli
