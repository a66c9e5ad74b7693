// The overlap breakdown against intervals computed by hand: first on the interval algebra,
// then end to end through a constructed database (events -> finalize -> OVERLAP_ANALYSIS,
// STEP_TIME and the report's step breakdown).
#include <gtest/gtest.h>

#include "tests/profiler/invariants.hpp"
#include "profiler/store/derive.hpp"
#include "profiler/store/intervals.hpp"
#include "profiler/analyze/profile_data.hpp"
#include "profiler/analyze/report_build.hpp"
#include "tests/profiler/constructed.hpp"

namespace npukit::testing {
namespace {

using prof::Interval;
using prof::Intervals;

TEST(Intervals, UnionIntersectSubtract) {
  Intervals u = prof::union_of({{30, 40}, {0, 10}, {5, 20}, {20, 25}, {50, 50}});
  EXPECT_EQ(u, (Intervals{{0, 25}, {30, 40}}));
  EXPECT_EQ(prof::intersect(u, {{10, 35}}), (Intervals{{10, 25}, {30, 35}}));
  EXPECT_EQ(prof::subtract(u, {{5, 8}, {22, 32}}), (Intervals{{0, 5}, {8, 22}, {32, 40}}));
  EXPECT_EQ(prof::subtract({{0, 10}}, {{0, 10}}), Intervals{});
  EXPECT_EQ(prof::total(u), 35);
  EXPECT_EQ(prof::clip(u, {24, 31}), (Intervals{{24, 25}, {30, 31}}));
}

TEST(Overlap, MatchesHandComputedIntervals) {
  prof::Overlap o = prof::analyze_overlap(hand_timeline(1));
  EXPECT_EQ(o.compute, (Intervals{{0, 20}, {30, 40}}));
  EXPECT_EQ(o.communication, (Intervals{{15, 35}, {50, 60}}));
  EXPECT_EQ(o.comm_not_overlapped, (Intervals{{20, 30}, {50, 60}}));
  EXPECT_EQ(o.free, (Intervals{{40, 50}}));

  prof::StepBreakdown whole = prof::breakdown(o, {0, 60});
  EXPECT_EQ(whole.step, 60);
  EXPECT_EQ(whole.computing, 30);
  EXPECT_EQ(whole.communication, 30);
  EXPECT_EQ(whole.overlapped, 10);  // [15,20) + [30,35)
  EXPECT_EQ(whole.comm_not_overlapped, 20);
  EXPECT_EQ(whole.free, 10);
  EXPECT_EQ(whole.preparing, 0);

  prof::StepBreakdown part = prof::breakdown(o, {-5, 25});
  EXPECT_EQ(part.step, 30);
  EXPECT_EQ(part.computing, 20);
  EXPECT_EQ(part.communication, 10);
  EXPECT_EQ(part.overlapped, 5);
  EXPECT_EQ(part.comm_not_overlapped, 5);
  EXPECT_EQ(part.free, 5);
  EXPECT_EQ(part.preparing, 5);
  EXPECT_EQ(part.computing + part.comm_not_overlapped + part.free, part.step);
}

TEST(Overlap, ConstructedDatabaseHoldsHandComputedRows) {
  TempDir dir("constructed");
  std::string db = constructed_db(dir.str());
  auto rows = sqlite(db, "SELECT deviceId, type, startNs, endNs FROM OVERLAP_ANALYSIS WHERE deviceId = 0 ORDER BY type, startNs");
  ASSERT_EQ(rows.exit_code, 0) << rows.output;
  EXPECT_EQ(rows.output,
            "0|0|0|20000\n0|0|30000|40000\n"           // COMPUTE
            "0|1|15000|35000\n0|1|50000|60000\n"       // COMMUNICATION
            "0|2|20000|30000\n0|2|50000|60000\n"       // COMM_NOT_OVERLAP_COMP
            "0|3|40000|50000\n");                      // FREE
  auto steps = sqlite(db, "SELECT id, startNs, endNs FROM STEP_TIME ORDER BY id");
  EXPECT_EQ(steps.output, "1|0|160000\n2|60000|220000\n");  // steps count from 1
  EXPECT_EQ(sqlite(db, "SELECT rankSize FROM COMMUNICATION_OP").output, "2\n2\n2\n2\n");
  EXPECT_EQ(sqlite(db, "SELECT * FROM RANK_DEVICE_MAP ORDER BY rankId").output, "0|0\n1|1\n");
  for (const std::string& v : invariant_violations(db, true)) ADD_FAILURE() << v;
}

TEST(Overlap, ReportStepBreakdownMatchesHandComputation) {
  TempDir dir("constructed-report");
  auto data = prof::load_profile(constructed_db(dir.str()));
  ASSERT_TRUE(data.ok()) << data.status().message();
  auto report = prof::build_report(*data, {});
  ASSERT_TRUE(report.ok());
  ASSERT_EQ(report->steps.size(), 4u);
  for (const prof::StepRow& s : report->steps) {
    SCOPED_TRACE("device " + std::to_string(s.device) + " step " + std::to_string(s.step));
    EXPECT_EQ(s.b.step, 60'000);
    if (s.step == 1) {  // [0,60) us: the whole timeline
      EXPECT_EQ(s.b.computing, 30'000);
      EXPECT_EQ(s.b.overlapped, 10'000);
      EXPECT_EQ(s.b.comm_not_overlapped, 20'000);
      EXPECT_EQ(s.b.free, 10'000);
    } else {  // [60,120) us: nothing ran
      EXPECT_EQ(s.b.computing, 0);
      EXPECT_EQ(s.b.free, 60'000);
      EXPECT_EQ(s.b.preparing, 60'000);
    }
  }
  // The report's overlap (computed from the tasks) is what finalize stored in OVERLAP_ANALYSIS.
  std::string stored = sqlite(data->db_path, "SELECT deviceId, type, startNs, endNs FROM OVERLAP_ANALYSIS ORDER BY id").output;
  std::string computed;
  for (const auto& [device, o] : data->overlap) {
    const prof::Intervals* kinds[] = {&o.compute, &o.communication, &o.comm_not_overlapped, &o.free};
    for (int type = 0; type < 4; ++type) {
      for (const Interval& i : *kinds[type]) {
        computed += std::to_string(device) + "|" + std::to_string(type) + "|" + std::to_string(i.start) + "|" +
                    std::to_string(i.end) + "\n";
      }
    }
  }
  EXPECT_EQ(computed, stored);
}

}  // namespace
}  // namespace npukit::testing
