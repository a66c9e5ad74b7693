// The Chrome trace export: valid Trace Event Format, slices nested per track, every flow
// bound at both ends, every track named (reference section 3 and the section 6 JSON rules).
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <set>

#include "tests/profiler/prof_test_util.hpp"

namespace npukit::testing {
namespace {

using nlohmann::json;

std::pair<int64_t, int64_t> track_of(const json& e) { return {e["pid"].get<int64_t>(), e["tid"].get<int64_t>()}; }

// A slice as an importer sees it: ts and ts + dur added in double precision.
struct Slice {
  double start, end;
};

class ChromeTrace : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    const RecordedRun& run = small_run();
    ASSERT_FALSE(run.db.empty()) << run.record.output;
    dir_ = new TempDir("chrome");
    auto r = run_command(prof() + " export --chrome " + (*dir_ / "trace.json") + " " + run.dir);
    ASSERT_EQ(r.exit_code, 0) << r.output;
    trace_ = new json(json::parse(read_file(*dir_ / "trace.json"), nullptr, false));
  }
  static void TearDownTestSuite() {
    delete trace_;
    delete dir_;
  }
  static const json& events() { return (*trace_)["traceEvents"]; }
  // X slices per (pid, tid), sorted by start, longer first.
  static std::map<std::pair<int64_t, int64_t>, std::vector<Slice>> slices() {
    std::map<std::pair<int64_t, int64_t>, std::vector<Slice>> out;
    for (const json& e : events()) {
      if (e["ph"] != "X") continue;
      double ts = e["ts"].get<double>(), dur = e["dur"].get<double>();
      out[track_of(e)].push_back({ts, ts + dur});
    }
    for (auto& [track, list] : out) {
      std::sort(list.begin(), list.end(), [](const Slice& a, const Slice& b) {
        return a.start != b.start ? a.start < b.start : a.end > b.end;
      });
    }
    return out;
  }
  static TempDir* dir_;
  static json* trace_;
};

TempDir* ChromeTrace::dir_ = nullptr;
json* ChromeTrace::trace_ = nullptr;

TEST_F(ChromeTrace, IsAnObjectWithEventsAndABaseTime) {
  ASSERT_FALSE(trace_->is_discarded());
  ASSERT_TRUE(trace_->contains("traceEvents"));
  EXPECT_EQ((*trace_)["displayTimeUnit"], "ms");
  EXPECT_GT((*trace_)["otherData"]["baseTimeNanoseconds"].get<int64_t>(), 0);
  std::map<std::string, int> phases;
  for (const json& e : events()) ++phases[e["ph"].get<std::string>()];
  EXPECT_EQ(phases["X"], 102 + 102 + 6 + [&] {  // tasks + launch calls + step slices + overlap slices
    int n = 0;
    for (const json& e : events()) n += e["ph"] == "X" && e["cat"] == "overlap";
    return n;
  }());
  EXPECT_EQ(phases["s"], 102);
  EXPECT_EQ(phases["f"], 102);
  EXPECT_GT(phases["C"], 0);
  EXPECT_GT(phases["M"], 0);
  EXPECT_EQ(phases["B"], phases["E"]);
}

// A zero-length item is an instant event, never a zero-length slice.
TEST_F(ChromeTrace, SlicesHavePositiveDurations) {
  for (const json& e : events()) {
    if (e["ph"] == "X") {
      EXPECT_GT(e["dur"].get<double>(), 0.0) << e.dump();
    }
  }
}

// Strict nesting in the importer's arithmetic: a slice inside another ends no later than it, and
// a slice that starts after another ends has ended first; siblings never overlap.
TEST_F(ChromeTrace, SlicesNestStrictlyPerTrackInDoublePrecision) {
  int checked = 0;
  for (const auto& [track, list] : slices()) {
    std::vector<Slice> stack;
    for (const Slice& s : list) {
      while (!stack.empty() && stack.back().end <= s.start) stack.pop_back();
      if (!stack.empty()) {
        EXPECT_LE(s.end, stack.back().end) << "pid " << track.first << " tid " << track.second << ": slice ["
                                           << s.start << ", " << s.end << ") overlaps [" << stack.back().start << ", "
                                           << stack.back().end << ") without nesting";
      }
      stack.push_back(s);
      ++checked;
    }
  }
  EXPECT_GT(checked, 200);
}

TEST_F(ChromeTrace, EveryFlowIsPairedAndBoundToSlices) {
  auto tracks = slices();
  auto bound = [&](const json& e) {
    auto it = tracks.find(track_of(e));
    if (it == tracks.end()) return false;
    double t = e["ts"].get<double>();
    for (const Slice& s : it->second) {
      if (s.start <= t && t < s.end) return true;
    }
    return false;
  };
  std::map<std::tuple<std::string, std::string, int64_t>, int> starts, ends;
  for (const json& e : events()) {
    if (e["ph"] != "s" && e["ph"] != "f") continue;
    auto key = std::make_tuple(e["cat"].get<std::string>(), e["name"].get<std::string>(), e["id"].get<int64_t>());
    (e["ph"] == "s" ? starts : ends)[key]++;
    EXPECT_TRUE(bound(e)) << "flow event not inside a slice of its track: " << e.dump();
    if (e["ph"] == "f") {
      EXPECT_EQ(e.value("bp", ""), "e") << e.dump();
    }
    EXPECT_EQ(e["cat"], "HostToDevice");
  }
  EXPECT_EQ(starts, ends);
  for (const auto& [key, n] : starts) EXPECT_EQ(n, 1);
}

TEST_F(ChromeTrace, EveryTrackIsNamed) {
  std::set<int64_t> named_pids;
  std::set<std::pair<int64_t, int64_t>> named_tids;
  std::set<std::string> process_names, thread_names;
  for (const json& e : events()) {
    if (e["ph"] != "M") continue;
    if (e["name"] == "process_name") named_pids.insert(e["pid"].get<int64_t>()), process_names.insert(e["args"]["name"]);
    if (e["name"] == "thread_name") named_tids.insert(track_of(e)), thread_names.insert(e["args"]["name"]);
  }
  for (const json& e : events()) {
    std::string ph = e["ph"];
    if (ph == "M") continue;
    EXPECT_TRUE(named_pids.count(e["pid"].get<int64_t>())) << "unnamed process: " << e.dump();
    if (ph != "C") {
      EXPECT_TRUE(named_tids.count(track_of(e))) << "unnamed thread: " << e.dump();
    }
  }
  // Processes per rank, threads per stream; no name repeats a pid (viewers add it themselves).
  for (const char* p : {"Rank 0 Ascend Hardware (device 0)", "Rank 1 Ascend Hardware (device 1)", "Rank 0 CANN",
                        "Rank 1 CANN", "Rank 0 Overlap Analysis"}) {
    EXPECT_TRUE(process_names.count(p)) << p;
  }
  for (const std::string& p : process_names) EXPECT_EQ(p.find("pid"), std::string::npos) << p;
  for (const char* t : {"Stream 0", "Computing", "Communication(Not Overlapped)", "Free", "Steps", "Host thread"}) {
    EXPECT_TRUE(thread_names.count(t)) << t;
  }
}

TEST_F(ChromeTrace, DeviceSlicesCarryTheirOpFields) {
  bool matmul = false;
  for (const json& e : events()) {
    if (e["ph"] != "X" || e["cat"] == "cann" || e["name"] != "aten::mm") continue;
    matmul = true;
    EXPECT_EQ(e["args"]["OP Type"], "MatMulV2");
    EXPECT_EQ(e["cat"], "AI_CORE");
    EXPECT_TRUE(e["args"].contains("connection_id"));
  }
  EXPECT_TRUE(matmul);
}

// --steps and --ranks narrow the trace: only rank 1's processes, only tasks of step 1 (as the
// report's step filter counts them), one step slice.
TEST(ChromeExport, StepsAndRanksNarrowTheTrace) {
  const RecordedRun& run = small_run();
  TempDir dir("chrome-narrow");
  auto r = run_command(prof() + " export --chrome " + (dir / "t.json") + " --steps 1:1 --ranks 1 " + run.dir);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find(", steps 1-1)"), std::string::npos) << r.output;
  json trace = json::parse(read_file(dir / "t.json"));
  std::set<int64_t> pids;
  int tasks = 0, steps = 0;
  for (const json& e : trace["traceEvents"]) {
    pids.insert(e["pid"].get<int64_t>() % 10000000);
    if (e["ph"] == "X" && e.contains("args") && e["args"].contains("Task Id")) ++tasks;
    if (e["ph"] == "X" && e["cat"] == "step") {
      ++steps;
      EXPECT_EQ(e["name"], "Step 1");
    }
  }
  EXPECT_EQ(pids, std::set<int64_t>{1}) << "device 1's processes only";
  auto in_step = sqlite(run.dbs[1], "SELECT count(*) FROM TASK t, STEP_TIME s WHERE s.id = 1 "
                                    "AND t.startNs >= s.startNs AND t.startNs < s.endNs");
  EXPECT_EQ(std::to_string(tasks) + "\n", in_step.output);
  EXPECT_GT(tasks, 10);
  EXPECT_EQ(steps, 1);
  // Bad selections: one line each.
  auto bad = run_command(prof() + " export --chrome " + (dir / "u.json") + " --steps 3:1 " + run.dir);
  EXPECT_EQ(bad.exit_code, 4) << bad.output;
  EXPECT_NE(bad.output.find("npu-prof: export: --steps '3:1': use A:B"), std::string::npos) << bad.output;
  auto missing = run_command(prof() + " export --chrome " + (dir / "v.json") + " --steps 7:8 " + run.dir);
  EXPECT_EQ(missing.exit_code, 3) << missing.output;
  EXPECT_NE(missing.output.find("no step 7-8 recorded"), std::string::npos) << missing.output;
  // Partly recorded: the steps written, not those asked for (it said "steps 2-9" of a shorter run).
  auto partly_steps = run_command(prof() + " export --chrome " + (dir / "s.json") + " --steps 2:99 " + run.dir);
  EXPECT_EQ(partly_steps.exit_code, 0) << partly_steps.output;
  EXPECT_NE(partly_steps.output.find(" of the 2-99 asked for: the recording has steps 1-"), std::string::npos) << partly_steps.output;
  EXPECT_EQ(partly_steps.output.find(", steps 2-99"), std::string::npos) << partly_steps.output;
  auto norank = run_command(prof() + " export --chrome " + (dir / "w.json") + " --ranks 5 " + run.dir);
  EXPECT_EQ(norank.exit_code, 3) << norank.output;
  // One rank there and one not: refused naming the missing one (it exported rank 1 alone, exit 0).
  auto partly = run_command(prof() + " export --chrome " + (dir / "w.json") + " --ranks 1,5 " + run.dir);
  EXPECT_EQ(partly.exit_code, 3) << partly.output;
  EXPECT_NE(partly.output.find(": no rank 5 in this recording (ranks: "), std::string::npos) << partly.output;
}

}  // namespace
}  // namespace npukit::testing
