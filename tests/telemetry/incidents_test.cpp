// The incident table (telemetry/incidents.json) and the link root-cause rule.
#include "telemetry/incidents.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <set>
#include <sstream>

namespace npukit::telemetry {
namespace {

TEST(Incidents, KindsAndCodesAreUniqueAndEveryMessageFitsIn80Chars) {
  std::set<std::string> kinds;
  std::set<uint32_t> codes;
  ASSERT_GE(incident_kinds().size(), 14u);
  for (const IncidentKind& k : incident_kinds()) {
    EXPECT_TRUE(kinds.insert(k.kind).second) << k.kind;
    EXPECT_TRUE(codes.insert(k.code).second) << k.kind;
    EXPECT_NE(k.severity, Health::kOk) << k.kind;
    // The widest values a message can get: a multi-chip label, 5-digit figures, a long pair.
    std::vector<std::pair<std::string_view, std::string>> wide{
        {"npu", "NPU 15 Chip 1"}, {"link", "HCCS"}, {"memory", "HBM"}, {"pair", "14-15"}, {"value", "99999"}, {"limit", "99999"}};
    std::string message = fill(k.message, wide);
    EXPECT_LE(message.size(), 80u) << k.kind << ": " << message;
    EXPECT_EQ(message.find('{'), std::string::npos) << k.kind << ": unknown placeholder in " << k.message;
  }
  EXPECT_EQ(incident("link_down").code, 0x80D18002u);
  EXPECT_EQ(find_incident(0x80E18401u)->kind, "temperature_high");
  EXPECT_EQ(find_incident(0x12345678u), nullptr);
  EXPECT_EQ(incident("link_down").entity, IncidentEntity::kLink);
  EXPECT_STREQ(handling_name(incident("ecc_double_bit").handling), "reset_npu");
}

// docs/faults.md lists every kind of the table (code, kind, severity): the page users read to
// learn what an error code means must not lag the table.
TEST(Incidents, TheFaultsPageHasARowForEveryKind) {
  std::ifstream in(std::string(NPUKIT_SOURCE_DIR) + "/docs/faults.md");
  ASSERT_TRUE(in) << "docs/faults.md";
  std::stringstream text;
  text << in.rdbuf();
  for (const IncidentKind& k : incident_kinds()) {
    char code[16];
    std::snprintf(code, sizeof code, "0x%08X", k.code);
    std::string row = std::string("| `") + code + "` | " + k.kind + " | " + health_name(k.severity);
    EXPECT_NE(text.str().find(row), std::string::npos) << "docs/faults.md lacks the row of " << k.kind << ": " << row;
  }
}

TEST(Incidents, FillReplacesEveryPlaceholderAndLeavesUnknownOnes) {
  std::vector<std::pair<std::string_view, std::string>> v{{"a", "1"}, {"b", "{a}"}};
  EXPECT_EQ(fill("{a}+{a}={b} {c}", v), "1+1={a} {c}");
}

std::vector<LinkState> mesh(int n) {
  std::vector<LinkState> out;
  for (int a = 0; a < n; ++a) {
    for (int b = 0; b < n; ++b) {
      if (a != b) out.push_back({a, b, "hccs", LinkCondition::kOk});
    }
  }
  return out;
}

void set(std::vector<LinkState>& links, int a, int b, LinkCondition c) {
  for (LinkState& l : links) {
    if ((l.device_a == a && l.device_b == b) || (l.device_a == b && l.device_b == a)) l.condition = c;
  }
}

TEST(LinkIncidents, AllLinksOfAChipDownIsOneChipIncidentTouchingEveryPeer) {
  auto links = mesh(8);
  for (int p = 1; p < 8; ++p) set(links, 0, p, LinkCondition::kDown);
  auto incidents = link_incidents(links, 8);
  ASSERT_EQ(incidents.size(), 1u);
  EXPECT_EQ(incidents[0].kind->kind, "links_down");
  EXPECT_EQ(incidents[0].device, 0);
  EXPECT_EQ(incidents[0].peers, (std::vector<int>{1, 2, 3, 4, 5, 6, 7}));
}

TEST(LinkIncidents, EachOtherUnhealthyLinkIsItsOwnIncidentAndTheWorseDirectionNamesIt) {
  auto links = mesh(4);
  set(links, 2, 3, LinkCondition::kDegraded);
  set(links, 0, 1, LinkCondition::kFlapping);
  links[0].condition = LinkCondition::kDown;  // 0->1 down right now, 1->0 flapping
  auto incidents = link_incidents(links, 4);
  ASSERT_EQ(incidents.size(), 2u);
  EXPECT_EQ(incidents[0].kind->kind, "link_down");
  EXPECT_EQ(incidents[0].device_a, 0);
  EXPECT_EQ(incidents[0].device_b, 1);
  EXPECT_EQ(incidents[1].kind->kind, "link_degraded");
  EXPECT_EQ(incidents[1].peers, (std::vector<int>{2, 3}));
  EXPECT_TRUE(link_incidents(mesh(4), 4).empty());
}

TEST(LinkIncidents, ConditionFromTheBusFields) {
  EXPECT_EQ(link_condition(true, 100, 0), LinkCondition::kOk);
  EXPECT_EQ(link_condition(false, 100, 1), LinkCondition::kDown);
  EXPECT_EQ(link_condition(true, 100, 2), LinkCondition::kFlapping);
  EXPECT_EQ(link_condition(true, 25, 0), LinkCondition::kDegraded);
  EXPECT_EQ(*parse_link_ends("2-3"), (std::pair{2, 3}));
  EXPECT_EQ(*parse_link_ends("4-host"), (std::pair{4, -1}));
  EXPECT_FALSE(parse_link_ends("2_3").ok());
  EXPECT_FALSE(parse_link_ends("-3").ok());
  EXPECT_EQ(link_ends_name(4, -1), "4-host");
  // A switched node's HCCS port is the switch's, not the host's (its PCIe link is the host's).
  EXPECT_EQ(*parse_link_ends("4-switch"), (std::pair{4, kSwitchPort}));
  EXPECT_EQ(link_ends_name(4, kSwitchPort), "4-switch");
  EXPECT_EQ(link_ends_name(4, -1, "hccs"), "4-switch");
  EXPECT_EQ(link_ends_name(4, -1, "pcie"), "4-host");
  EXPECT_EQ(link_ends_name(4, -1, "roce"), "4-roce");
  EXPECT_EQ(link_ends_name(4, 5, "hccs"), "4-5");
}

}  // namespace
}  // namespace npukit::telemetry
