// The validation table (docs/validation.md) is what scripts/validate.sh prints today: the
// emulator is deterministic, so a change that moves any point must update the page with it.
#include <fstream>
#include <regex>
#include <sstream>

#include "tests/daemon_util.hpp"

namespace npukit::testing {
namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The lines from the table's header to its "| all |" summary row (both tables and the blank line
// between them).
std::string table_block(const std::string& text) {
  auto start = text.find("| chip | point | role |");
  auto all = text.find("| all |", start == std::string::npos ? 0 : start);
  if (start == std::string::npos || all == std::string::npos) return "";
  return text.substr(start, text.find('\n', all) - start);
}

TEST(Validation, TheDocsTableIsWhatTheEmulatorPrints) {
#ifndef NPUKIT_WITH_BENCH
  GTEST_SKIP() << "built without bench/ (NPUKIT_BENCH=OFF): the table reads bench/allreduce_sweep";
#endif
  auto r = run_command("python3 " + std::string(NPUKIT_SOURCE_DIR) + "/scripts/validate.py " + NPUKIT_BUILD_DIR);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::string printed = table_block(r.output);
  ASSERT_FALSE(printed.empty()) << r.output;
  std::string docs = read_file(std::string(NPUKIT_SOURCE_DIR) + "/docs/validation.md");
  EXPECT_EQ(table_block(docs), printed) << "docs/validation.md's table is stale: paste scripts/validate.sh's output";
  // The verdict under it quotes the overall row.
  std::smatch all;
  ASSERT_TRUE(std::regex_search(printed, all, std::regex(R"(\| all \| \d+ \| ([0-9.]+%) \| ([0-9.]+%) \|)")));
  EXPECT_NE(docs.find("we are at " + all[1].str() + " mean and " + all[2].str() + " max"), std::string::npos)
      << "the verdict does not quote " << all[0];
}

}  // namespace
}  // namespace npukit::testing
