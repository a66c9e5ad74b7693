// The rule table is the one source of findings: every finding the report can make is a rule, and
// docs/npu-prof.md documents each rule with the table's own words.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "profiler/analyze/rules.hpp"

namespace npukit::prof {
namespace {

std::string docs() {
  std::ifstream in(std::string(NPUKIT_SOURCE_DIR) + "/docs/npu-prof.md");
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(Rules, EveryRuleIsDocumented) {
  std::string text = docs();
  ASSERT_FALSE(text.empty());
  for (const RuleDef& r : all_rules()) {
    std::string row = "| `" + std::string(r.id) + "` | " + std::string(r.evidence) + " | " + std::string(r.threshold) + " | ";
    EXPECT_NE(text.find(row), std::string::npos) << "docs/npu-prof.md lacks the row of " << r.id << ": " << row;
    EXPECT_NE(text.find(std::string(r.action)), std::string::npos) << r.id;
  }
}

TEST(Rules, IdsAreUniqueAndSeveritiesGraded) {
  for (const RuleDef& r : all_rules()) EXPECT_EQ(find_rule(r.id), &r) << r.id;
  EXPECT_EQ(find_rule("no_such_rule"), nullptr);
  EXPECT_EQ(severity_of_share(0.5), Severity::kCritical);
  EXPECT_EQ(severity_of_share(0.10), Severity::kCritical);
  EXPECT_EQ(severity_of_share(0.05), Severity::kWarning);
  EXPECT_EQ(severity_of_share(0.005), Severity::kInfo);
}

}  // namespace
}  // namespace npukit::prof
