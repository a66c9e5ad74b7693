// Helpers for npu-prof's tests: run the tools, record a workload on a fresh node, query a
// database with the sqlite3 CLI, compare against goldens (NPUKIT_UPDATE_GOLDEN=1 rewrites them;
// a mismatch prints the differing lines), and check the reference's section 6 invariants.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/daemon_util.hpp"
#include "tests/golden_util.hpp"

namespace npukit::testing {

inline std::string prof() { return NPU_PROF_PATH; }
inline std::string npu_run() { return NPU_RUN_PATH; }
inline std::string data_path(const std::string& name) { return std::string(NPUKIT_TEST_DATA_DIR) + "/profiler/" + name; }

// A fresh empty directory under the system temp dir, removed at scope exit.
class TempDir {
 public:
  explicit TempDir(const std::string& tag)
      : path_(std::filesystem::temp_directory_path() / ("npuprof-" + std::to_string(getpid()) + "-" + tag)) {
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  std::string str() const { return path_.string(); }
  std::string operator/(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

inline std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

inline std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

// Every PROF_*/msprof_*.db under `dir`, in PROF_ number order (a recording's rank order).
inline std::vector<std::string> find_dbs(const std::string& dir) {
  std::vector<std::string> found;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir)) {
    std::string name = e.path().filename().string();
    if (name.rfind("msprof_", 0) == 0 && e.path().extension() == ".db") found.push_back(e.path().string());
  }
  std::sort(found.begin(), found.end());
  return found;
}

// The first rank's database under `dir` ("" when there is none).
inline std::string find_db(const std::string& dir) {
  auto found = find_dbs(dir);
  return found.empty() ? "" : found.front();
}

// Runs the sqlite3 CLI on `db` (list mode, '|' separators).
inline CommandResult sqlite(const std::string& db, const std::string& sql) {
  return run_command("sqlite3 '" + db + "' \"" + sql + "\"");
}

// A one-number query over each database, summed (a count over a whole multi-rank recording).
inline int64_t sqlite_sum(const std::vector<std::string>& dbs, const std::string& sql) {
  int64_t total = 0;
  for (const std::string& db : dbs) total += std::stoll(sqlite(db, sql).output);
  return total;
}

// A query's output from each database, concatenated in rank order.
inline std::string sqlite_each(const std::vector<std::string>& dbs, const std::string& sql) {
  std::string out;
  for (const std::string& db : dbs) out += sqlite(db, sql).output;
  return out;
}

// The summary's "communication not overlapped X% (of which the pipeline's bubble Y%)": Y is a
// part of X (it read 26.2% of 26.0%: the critical stage's wait beside every rank's mean) and, in a
// pipeline without other communication to speak of, most of it.
inline void expect_bubble_part_of_exposed(const std::string& report_text) {
  std::smatch m;
  std::string flat = std::regex_replace(report_text, std::regex(R"(\s+)"), " ");
  static const std::regex kLine(R"(communication not overlapped ([0-9.]+)% \(of which the pipeline's bubble ([0-9.]+)%\))");
  ASSERT_TRUE(std::regex_search(flat, m, kLine)) << report_text;
  EXPECT_LE(std::stod(m[2]), std::stod(m[1])) << report_text;
  EXPECT_GT(std::stod(m[2]), 0.5 * std::stod(m[1])) << report_text;
}

// npu-run's "step time  X ms mean over steps 2-N" (0, and a test failure, when it has none).
inline double mean_step_ms(const std::string& npu_run_output) {
  std::smatch m;
  EXPECT_TRUE(std::regex_search(npu_run_output, m, std::regex(R"(step time +([0-9.]+) ms mean)"))) << npu_run_output;
  return m.empty() ? 0 : std::stod(m[1].str());
}

// A fault's true cost, as the diagnosis matrix takes it, and the report of the faulted run: on
// `node`, `job` (npu-run's arguments) runs clean (recorded into `clean_dir` when one is given),
// then after `npu-emud <inject> --node-name <node>` it is recorded into `dir`; the truth is the
// faulted run's mean step time less the clean one's (steps after the first).
struct FaultAgainstClean {
  double truth_ms = 0;
  nlohmann::json report;        // npu-prof report DIR --format json of the faulted run
  nlohmann::json clean_report;  // ... and of the clean run, when it was recorded
  const nlohmann::json* finding(const std::string& id) const {
    for (const nlohmann::json& f : report["findings"]) {
      if (f["id"] == id) return &f;
    }
    return nullptr;
  }
  // Finding `id`, expected present and costing the truth within `tolerance_ms` (nullptr when absent).
  const nlohmann::json* costed(const std::string& id, double tolerance_ms) const {
    const nlohmann::json* f = finding(id);
    EXPECT_NE(f, nullptr) << report["findings"].dump(1);
    if (f != nullptr) {
      EXPECT_NEAR((*f)["cost_ms_per_step"].get<double>(), truth_ms, tolerance_ms) << "truth " << truth_ms << ": " << f->dump();
    }
    return f;
  }
};
// `inject` empty: the cause is `faulted_options`, npu-run options the faulted run adds to `job`
// (`--host-input-rate 16000`).
inline FaultAgainstClean fault_against_clean(const ScopedNode& node, const std::string& job, const std::string& inject,
                                             const std::string& dir, const std::string& clean_dir = "",
                                             const std::string& faulted_options = "") {
  auto run = [&](const std::string& into, const std::string& options) {
    const std::string args = job + (options.empty() ? "" : " " + options);
    return run_command(into.empty() ? npu_run() + " " + args + " --node " + node.name()
                                    : prof() + " record -o " + into + " --node-name " + node.name() + " -- " + npu_run() + " " + args);
  };
  FaultAgainstClean out;
  auto clean = run(clean_dir, "");
  EXPECT_EQ(clean.exit_code, 0) << clean.output;
  if (!inject.empty()) {
    auto injected = run_command(emud() + " " + inject + " --node-name " + node.name());
    EXPECT_EQ(injected.exit_code, 0) << injected.output;
  }
  auto faulted = run(dir, faulted_options);
  EXPECT_EQ(faulted.exit_code, 0) << faulted.output;
  out.truth_ms = mean_step_ms(faulted.output) - mean_step_ms(clean.output);
  auto report_of = [](const std::string& d) {
    return nlohmann::json::parse(run_command("(" + prof() + " report " + d + " --format json 2>/dev/null)").output, nullptr, false);
  };
  out.report = report_of(dir);
  EXPECT_TRUE(out.report.is_object());
  if (!clean_dir.empty()) out.clean_report = report_of(clean_dir);
  return out;
}

// A cause behind another: `behind` (npu-emud arguments) is on `node` for both runs, `cause` only
// for the faulted one. The other cause sets the pace, so `cause` costs the step about nothing:
// finding `id` must say the step hides it, at under `within_ms` per step, as info.
inline void expect_hidden_behind(const ScopedNode& node, const std::string& behind, const std::string& job,
                                 const std::string& cause, const std::string& dir, const std::string& id,
                                 double within_ms) {
  ASSERT_EQ(run_command(emud() + " " + behind + " --node-name " + node.name()).exit_code, 0);
  FaultAgainstClean run = fault_against_clean(node, job, cause, dir);
  EXPECT_LT(std::abs(run.truth_ms), within_ms) << "the other cause sets the pace";
  const nlohmann::json* f = run.finding(id);
  ASSERT_NE(f, nullptr) << run.report["findings"].dump(1);
  EXPECT_LT((*f)["cost_ms_per_step"].get<double>(), within_ms) << f->dump();
  EXPECT_EQ((*f)["severity"], "info");
  EXPECT_NE((*f)["text"].get<std::string>().find("hides most of it"), std::string::npos) << f->dump();
}

inline void expect_golden(const std::string& name, const std::string& actual) {
  npukit::testing::expect_golden_file(data_path(name), actual);
}

// A workload recorded on its own fresh node (seed 7), once per test process.
struct RecordedRun {
  std::string dir;              // the -o directory
  std::vector<std::string> dbs;  // one per rank, in rank order
  std::string db;               // rank 0's
  CommandResult record;
};

inline RecordedRun record_on_fresh_node(const std::string& tag, const std::string& workload_args,
                                        const std::string& record_args = "") {
  static std::vector<std::unique_ptr<ScopedNode>> nodes;  // stopped at exit
  static std::vector<std::unique_ptr<TempDir>> dirs;
  nodes.push_back(std::make_unique<ScopedNode>(tag, "--seed 7"));
  dirs.push_back(std::make_unique<TempDir>(tag));
  RecordedRun run;
  run.dir = dirs.back()->str();
  run.record = run_command(prof() + " record -o " + run.dir + " --node-name " + nodes.back()->name() + " " + record_args +
                           " -- " + npu_run() + " " + workload_args);
  run.dbs = find_dbs(run.dir);
  run.db = run.dbs.empty() ? "" : run.dbs.front();
  return run;
}

// The small deterministic workload (tests/data/profiler/small-train.json) recorded in fast mode.
inline const RecordedRun& small_run() {
  static RecordedRun run = record_on_fresh_node("small", data_path("small-train.json"));
  return run;
}

}  // namespace npukit::testing
