// A recording as one database per rank reads the same as the same recording in one database (an
// older single-tree profile): the ranks merge into one ProfileData whose report is identical,
// and --rank picks one.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <filesystem>

#include "profiler/analyze/merge.hpp"
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

// A rank's part of the merge: its own STRING_IDS and its tasks (start, end, name) as stored.
prof::ProfileData part(int device, std::vector<std::string> strings, const std::vector<std::array<int64_t, 3>>& tasks) {
  prof::ProfileData p;
  p.strings = std::move(strings);
  p.string_known.assign(p.strings.size(), true);
  for (std::size_t i = 0; i < tasks.size(); ++i) {
    prof::TaskRecord t;
    t.device = device, t.global_task_id = static_cast<int64_t>(i), t.task_id = static_cast<int64_t>(i);
    t.start = tasks[i][0], t.end = tasks[i][1], t.name = static_cast<prof::TaskRecord::Id>(tasks[i][2]);
    p.tasks.push_back(t);
  }
  return p;
}

// Merged tasks are in (start, device) order, equal keys in rank order then in the order the rank
// stored them, whether or not a rank's tasks were stored in start order; each task's name is
// its rank's string, renumbered into the shared table, and globalTaskIds count from 0 in order.
TEST(Merge, TasksComeInStartOrderWithTiesInRankThenStoredOrder) {
  std::vector<prof::ProfileData> parts;
  parts.push_back(part(1, {"matmul", "add"}, {{30, 31, 0}, {10, 12, 1}, {10, 11, 0}, {20, 25, 1}}));  // not in start order
  parts.push_back(part(0, {"add", "cast"}, {{10, 13, 1}, {10, 14, 0}}));
  parts.push_back(part(1, {"cast"}, {{5, 6, 0}, {10, 15, 0}}));
  prof::ProfileData merged = prof::merge_ranks(std::move(parts), "merged");
  std::vector<std::string> got;
  for (const prof::TaskRecord& t : merged.tasks) {
    got.push_back(std::to_string(t.start) + "/" + std::to_string(t.device) + "/" + std::to_string(t.end) + " " + merged.str(t.name));
    EXPECT_EQ(t.global_task_id, static_cast<int64_t>(got.size() - 1));
  }
  EXPECT_EQ(got, (std::vector<std::string>{"5/1/6 cast", "10/0/13 cast", "10/0/14 add", "10/1/12 add", "10/1/11 matmul",
                                           "10/1/15 cast", "20/1/25 add", "30/1/31 matmul"}));
}

// The top tasks' waits are the gaps wait_times() gives every task: since the previous task on
// the same device and stream, in (start, globalTaskId) order, never negative.
TEST(TopTasks, TheirWaitsAreTheGapsOnTheirOwnStream) {
  prof::ProfileData d;
  d.strings = {"AI_CORE", "a", "b", "c", "e"};
  d.string_known.assign(d.strings.size(), true);
  // device, stream, start, end, name: streams interleave; device 1 stream 0 is a separate stream.
  const int64_t rows[][5] = {{0, 0, 0, 10, 1}, {0, 1, 5, 40, 2}, {0, 0, 25, 30, 3}, {1, 0, 26, 90, 4},
                             {0, 0, 60, 100, 4}, {0, 1, 38, 45, 1}};
  for (const auto& row : rows) {
    prof::TaskRecord t;
    t.device = static_cast<int32_t>(row[0]), t.stream = row[1], t.start = row[2], t.end = row[3];
    t.task_type = 0, t.name = static_cast<prof::TaskRecord::Id>(row[4]), t.op_type = t.name;
    t.global_task_id = static_cast<int64_t>(d.tasks.size());
    d.tasks.push_back(t);
  }
  auto report = prof::build_report(d, {.top = 10, .step = std::nullopt});
  ASSERT_TRUE(report.ok()) << report.status().message();
  std::vector<int64_t> waits = prof::wait_times(d);
  ASSERT_EQ(report->top_tasks.size(), 4u);
  std::vector<std::string> got;
  for (const prof::TopTask& top : report->top_tasks) {
    auto it = std::find_if(d.tasks.begin(), d.tasks.end(), [&](const prof::TaskRecord& t) {
      return t.device == top.device && t.start == top.start && t.end - t.start == top.duration;
    });
    ASSERT_NE(it, d.tasks.end());
    EXPECT_EQ(top.wait, waits[static_cast<std::size_t>(it - d.tasks.begin())]) << top.name;
    got.push_back(top.name + ":" + std::to_string(top.wait));
  }
  // Longest first: e's longest ran on device 1 (its stream's first task), b is stream 1's first,
  // a's longer call is stream 0's first, and c started 15 after a ended on stream 0.
  EXPECT_EQ(got, (std::vector<std::string>{"e:0", "b:0", "a:0", "c:15"}));
}

// Past a few rows the waits come from wait_times() itself: the same answers for 40 ops.
TEST(TopTasks, ManyRowsHaveTheSameWaitsAsWaitTimes) {
  prof::ProfileData d;
  d.strings = {"AI_CORE"};
  for (int op = 0; op < 40; ++op) d.strings.push_back("op" + std::to_string(op));
  d.string_known.assign(d.strings.size(), true);
  for (int i = 0; i < 400; ++i) {
    prof::TaskRecord t;
    t.device = i % 3, t.stream = i % 2, t.start = 10 * i + (i % 7), t.end = t.start + 3 + (i * 37) % 29;
    t.task_type = 0, t.name = static_cast<prof::TaskRecord::Id>(1 + i % 40), t.op_type = t.name;
    t.global_task_id = i;
    d.tasks.push_back(t);
  }
  for (int top : {10, 40}) {
    auto report = prof::build_report(d, {.top = top, .step = std::nullopt});
    ASSERT_TRUE(report.ok()) << report.status().message();
    ASSERT_EQ(report->top_tasks.size(), static_cast<std::size_t>(top));
    std::vector<int64_t> waits = prof::wait_times(d);
    int nonzero = 0;
    for (const prof::TopTask& row : report->top_tasks) {
      auto it = std::find_if(d.tasks.begin(), d.tasks.end(), [&](const prof::TaskRecord& t) {
        return t.device == row.device && t.start == row.start && t.stream == row.stream;
      });
      ASSERT_NE(it, d.tasks.end());
      EXPECT_EQ(row.wait, waits[static_cast<std::size_t>(it - d.tasks.begin())]) << row.name << " top " << top;
      nonzero += row.wait > 0;
    }
    EXPECT_GT(nonzero, 0) << "the streams have gaps to find";
  }
}

}  // namespace
}  // namespace npukit::testing
