// A recording as one database per rank reads the same as the same recording in one database (an
// older single-tree profile): the ranks merge into one ProfileData whose report is identical,
// and --rank picks one.
#include <gtest/gtest.h>

#include <filesystem>

#include "profiler/analyze/profile_data.hpp"
#include "profiler/analyze/report_build.hpp"
#include "profiler/render/report_render.hpp"
#include "profiler/store/prof_layout.hpp"
#include "tests/profiler/constructed.hpp"

namespace npukit::testing {
namespace {

namespace fs = std::filesystem;

// DIR/PROF_00000<n>_20260101000000_ABCDEFGH/ with device_<d>/info.json.<d> for each device.
std::string prof_tree(const std::string& dir, int n, const std::vector<int>& devices, int rank) {
  std::string tree = dir + "/PROF_00000" + std::to_string(n) + "_20260101000000_ABCDEFGH";
  fs::create_directories(tree);
  for (int d : devices) EXPECT_TRUE(prof::write_device_info(tree, d, rank, "host").ok());
  return tree;
}

// The report as JSON without what names the files.
nlohmann::json report_of(const std::string& path, std::optional<int> rank = std::nullopt) {
  auto data = prof::load_profile(path, {.launches = false, .counters = false, .rank = rank, .ranks = {}});
  EXPECT_TRUE(data.ok()) << data.status().message();
  if (!data.ok()) return {};
  auto report = prof::build_report(*data, {});
  EXPECT_TRUE(report.ok()) << report.status().message();
  nlohmann::json j = prof::render_json(*report);
  j["header"].erase("database");
  j["header"].erase("ranks");
  return j;
}

TEST(Merge, PerRankDatabasesReportAsTheSingleDatabaseDoes) {
  TempDir single("merge-single"), ranks("merge-ranks");
  constructed_db(prof_tree(single.str(), 1, {0, 1}, -1), {0, 1}, "msprof_20260101000000.db");
  for (int d : {0, 1}) constructed_db(prof_tree(ranks.str(), d + 1, {d}, d), {d}, "msprof_20260101000000.db", d);

  auto dbs = prof::find_profile_dbs(ranks.str());
  ASSERT_TRUE(dbs.ok()) << dbs.status().message();
  ASSERT_EQ(dbs->size(), 2u);
  EXPECT_EQ((*dbs)[1].rank, 1);
  EXPECT_EQ((*dbs)[1].device, 1);
  auto legacy = prof::find_profile_dbs(single.str());
  ASSERT_TRUE(legacy.ok());
  ASSERT_EQ(legacy->size(), 1u);
  EXPECT_EQ((*legacy)[0].device, -1) << "a tree of several devices is an older single-tree profile";

  nlohmann::json merged = report_of(ranks.str()), whole = report_of(single.str());
  ASSERT_FALSE(merged.is_null());
  EXPECT_EQ(merged.dump(1), whole.dump(1));
  EXPECT_EQ(merged["steps"].size(), 4u) << "two steps on each of two devices";
  // Every rank's database says its rank.
  for (const prof::RankDb& r : *dbs) {
    EXPECT_EQ(sqlite(r.db, "SELECT rankId, deviceId FROM RANK_DEVICE_MAP").output,
              std::to_string(r.rank) + "|" + std::to_string(r.device) + "\n");
  }
}

TEST(Merge, RankPicksOneDatabase) {
  TempDir ranks("merge-pick");
  for (int d : {0, 1}) constructed_db(prof_tree(ranks.str(), d + 1, {d}, d), {d}, "msprof_20260101000000.db", d);
  nlohmann::json one = report_of(ranks.str(), 1);
  ASSERT_FALSE(one.is_null());
  for (const auto& s : one["steps"]) EXPECT_EQ(s["device"], 1);
  EXPECT_EQ(one["header"]["tasks"], 5);
  auto missing = prof::load_profile(ranks.str(), {.launches = false, .counters = false, .rank = 4, .ranks = {}});
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("no rank 4 in this recording (ranks: 0, 1)"), std::string::npos)
      << missing.status().message();
}

}  // namespace
}  // namespace npukit::testing
