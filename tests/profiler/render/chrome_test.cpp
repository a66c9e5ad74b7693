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

int64_t ns(const json& v) { return std::llround(v.get<double>() * 1000.0); }
std::pair<int64_t, int64_t> track_of(const json& e) { return {e["pid"].get<int64_t>(), e["tid"].get<int64_t>()}; }

struct Slice {
  int64_t start, end;
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
      if (e["ph"] == "X") out[track_of(e)].push_back({ns(e["ts"]), ns(e["ts"]) + ns(e["dur"])});
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
  EXPECT_EQ(phases["X"], 102 + 102 + 6 + [&] {  // tasks + launches + step slices + overlap slices
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

TEST_F(ChromeTrace, CompleteEventsHaveNonNegativeDurations) {
  for (const json& e : events()) {
    if (e["ph"] == "X") {
      EXPECT_GE(e["dur"].get<double>(), 0.0) << e.dump();
    }
  }
}

TEST_F(ChromeTrace, SlicesNestPerTrack) {
  for (const auto& [track, list] : slices()) {
    std::vector<Slice> stack;
    for (const Slice& s : list) {
      while (!stack.empty() && stack.back().end <= s.start && !(stack.back().end == s.start && s.end == s.start &&
                                                                 stack.back().start == s.start)) {
        stack.pop_back();
      }
      if (!stack.empty()) {
        EXPECT_LE(s.end, stack.back().end) << "pid " << track.first << " tid " << track.second << ": slice [" << s.start
                                           << ", " << s.end << ") overlaps [" << stack.back().start << ", "
                                           << stack.back().end << ") without nesting";
      }
      stack.push_back(s);
    }
  }
}

TEST_F(ChromeTrace, EveryFlowIsPairedAndBoundToSlices) {
  auto tracks = slices();
  auto bound = [&](const json& e) {
    auto it = tracks.find(track_of(e));
    if (it == tracks.end()) return false;
    int64_t t = ns(e["ts"]);
    for (const Slice& s : it->second) {
      if (s.start <= t && t <= s.end) return true;
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
  for (const char* p : {"Ascend Hardware (device 0)", "Ascend Hardware (device 1)", "Overlap Analysis (device 0)"}) {
    EXPECT_TRUE(process_names.count(p)) << p;
  }
  bool cann = false;
  for (const std::string& p : process_names) cann = cann || p.rfind("CANN (pid ", 0) == 0;
  EXPECT_TRUE(cann);
  for (const char* t : {"Stream 0", "Computing", "Communication(Not Overlapped)", "Free", "Steps",
                        "Host thread (device 0)"}) {
    EXPECT_TRUE(thread_names.count(t)) << t;
  }
}

TEST_F(ChromeTrace, DeviceSlicesCarryTheirOpFields) {
  bool matmul = false;
  for (const json& e : events()) {
    if (e["ph"] != "X" || e["cat"] != "task" || e["name"] != "aten::mm") continue;
    matmul = true;
    EXPECT_EQ(e["args"]["OP Type"], "MatMulV2");
    EXPECT_EQ(e["args"]["Task Type"], "AI_CORE");
    EXPECT_TRUE(e["args"].contains("connection_id"));
  }
  EXPECT_TRUE(matmul);
}

}  // namespace
}  // namespace npukit::testing
