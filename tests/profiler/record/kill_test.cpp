// A recorder killed with SIGKILL mid-run leaves a database that passes integrity_check, holds
// every committed batch, and that report, export and the sqlite3 CLI still read; report says
// the recording is incomplete.
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>

#include <algorithm>

#include "profiler/record/recorder.hpp"
#include "tests/profiler/invariants.hpp"

extern char** environ;

namespace npukit::testing {
namespace {

pid_t spawn(const std::vector<std::string>& args) {
  std::vector<char*> argv;
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  pid_t pid = -1;
  EXPECT_EQ(posix_spawn(&pid, argv[0], nullptr, nullptr, argv.data(), environ), 0);
  return pid;
}

// Starts `npu-prof record -- npu-run resnet50-train --steps 400` into `dir` and waits until the
// first rank's database answers `ready_sql` with 1: the moment to kill something mid-run. The job
// (30 s paced) outlasts the recorder's lag on a loaded machine, where its writer, at nice 19
// while the job runs, commits seconds behind it (a 40-step job had ended by then, and was found
// "done", not cancelled); the kill ends it early.
pid_t record_until(const ScopedNode& node, const TempDir& dir, const std::string& ready_sql) {
  pid_t recorder = spawn({prof(), "record", "-o", dir.str(), "--node-name", node.name(), "--", npu_run(),
                          "resnet50-train", "--steps", "400"});
  EXPECT_GT(recorder, 0);
  EXPECT_TRUE(eventually([&] {
    std::string db = find_db(dir.str());
    if (db.empty()) return false;
    auto n = sqlite(db, ready_sql);
    return n.exit_code == 0 && n.output == "1\n";
  }, std::chrono::seconds(20)));
  return recorder;
}

TEST(Kill, SigkilledRecorderLeavesAUsableDatabase) {
  ScopedNode node("kill", "--seed 7");
  TempDir dir("kill");
  auto idle = node.client()->snapshot();  // HBM in use before any job (the firmware's share)
  ASSERT_TRUE(idle.ok());
  // Some batches committed, at least one finished step on every rank (so the step breakdown has
  // something to show), then kill mid-run.
  pid_t recorder = record_until(node, dir, "SELECT (SELECT count(*) FROM TASK) > 2000 AND (SELECT count(*) FROM EMU_STEP) >= 8");
  ASSERT_GT(recorder, 0);
  ASSERT_EQ(::kill(recorder, SIGKILL), 0);
  int status = 0;
  ASSERT_EQ(::waitpid(recorder, &status, 0), recorder);
  ASSERT_TRUE(WIFSIGNALED(status));

  // Every rank's database: intact, marked as still recording, consistent in what it committed
  // (launches of tasks still running may lack their task).
  std::vector<std::string> dbs = find_dbs(dir.str());
  EXPECT_EQ(dbs.size(), 8u) << "one tree per rank of the 8-device run";
  for (const std::string& rank_db : dbs) {
    EXPECT_EQ(sqlite(rank_db, "PRAGMA integrity_check").output, "ok\n") << rank_db;
    EXPECT_EQ(sqlite(rank_db, "SELECT value FROM META_DATA WHERE name = 'RECORDING_STATE'").output, "recording\n");
    for (const std::string& v : invariant_violations(rank_db, false)) ADD_FAILURE() << rank_db << ": " << v;
  }
  auto tasks = sqlite_sum(dbs, "SELECT count(*) FROM TASK");
  EXPECT_GT(tasks, 2000);

  auto report = run_command(prof() + " report " + dir.str() + " --full");
  ASSERT_EQ(report.exit_code, 0) << report.output;
  EXPECT_NE(report.output.find("the recording is incomplete"), std::string::npos) << report.output.substr(0, 600);
  EXPECT_NE(report.output.find("Recording:  INCOMPLETE"), std::string::npos);
  EXPECT_NE(report.output.find("[incomplete_recording]"), std::string::npos);
  EXPECT_NE(report.output.find("== Step breakdown"), std::string::npos);
  auto json = run_command("(" + prof() + " report " + dir.str() + " --format json 2>/dev/null)");
  auto j = nlohmann::json::parse(json.output, nullptr, false);
  ASSERT_FALSE(j.is_discarded());
  EXPECT_EQ(j["header"]["complete"], false);
  EXPECT_EQ(j["header"]["tasks"], tasks);
  EXPECT_FALSE(j["steps"].empty()) << "the step breakdown is recomputed from the tasks";
  EXPECT_EQ(run_command(prof() + " export --chrome " + (dir / "t.json") + " " + dir.str()).exit_code, 0);

  // The recorder's death reached its command (SIGTERM through PR_SET_PDEATHSIG), and the
  // command's job died with it: cancelled by the daemon, its memory free for the next run.
  nlohmann::json jobs;
  EXPECT_TRUE(eventually([&] {
    jobs = node.control({{"op", "list_jobs"}})["jobs"];
    return !jobs.empty() && std::none_of(jobs.begin(), jobs.end(), [](const nlohmann::json& j) { return j["state"] == "running"; });
  }, std::chrono::seconds(10))) << jobs.dump();
  EXPECT_EQ(jobs.back()["state"], "cancelled") << jobs.dump();
  EXPECT_TRUE(eventually([&] {
    auto s = node.client()->snapshot();
    for (int d = 0; s.ok() && d < s->device_count(); ++d) {
      if (s->device(d, telemetry::fid::kHbmUsedBytes).as_u64() != idle->device(d, telemetry::fid::kHbmUsedBytes).as_u64()) return false;
    }
    return s.ok();
  })) << "HBM still held after the job ended";
}


// The daemon killed mid-recording: the recorder keeps what came before, and the profile says the
// node went away instead of "complete" (it said complete, with only the job's exit code to tell).
TEST(Kill, ADaemonKilledMidRecordingLeavesAnIncompleteProfile) {
  ScopedNode node("killnode", "--seed 7");
  TempDir dir("killnode");
  pid_t recorder = record_until(node, dir, "SELECT (SELECT count(*) FROM TASK) > 500");
  ASSERT_GT(recorder, 0);
  auto pid = node.control({{"op", "ping"}}).value("pid", 0);
  ASSERT_GT(pid, 0);
  ASSERT_EQ(::kill(pid, SIGKILL), 0);
  int status = 0;
  ASSERT_EQ(::waitpid(recorder, &status, 0), recorder);
  for (const std::string& rank_db : find_dbs(dir.str())) {
    EXPECT_EQ(sqlite(rank_db, "PRAGMA integrity_check").output, "ok\n") << rank_db;
  }
  auto report = run_command(prof() + " report " + dir.str());
  ASSERT_EQ(report.exit_code, 0) << report.output;
  EXPECT_NE(report.output.find("Recording: INCOMPLETE: the node went away during the recording"), std::string::npos)
      << report.output.substr(0, 800);
  EXPECT_EQ(report.output.find("Recording: complete"), std::string::npos);
}

// The CI kill loop's miss: the daemon died before the job's first task, npu-run exited 5 at once
// (its control socket closed), and the recorder, whose next bus sample was still to come, called
// the recording complete. Here the command kills the daemon itself and the sample interval is
// long, so only a look at the bus after the command failed can tell.
TEST(Kill, ACommandThatFailsBecauseItsNodeDiedIsAnIncompleteRecording) {
  ScopedNode node("killearly", "--seed 7");
  TempDir dir("killearly");
  int daemon = node.daemon_pid();
  ASSERT_GT(daemon, 1);
  std::FILE* log = std::tmpfile();
  prof::RecordOptions options{.out_dir = dir.str(),
                              .node = node.name(),
                              .command = {"/bin/sh", "-c", "kill -KILL " + std::to_string(daemon) + "; exit 5"},
                              .sample_interval = std::chrono::seconds(30),
                              .log = log};
  auto result = prof::record(options, nullptr);
  std::fclose(log);
  ASSERT_TRUE(result.ok()) << result.status().message();
  EXPECT_EQ(result->command_exit, 5);
  auto report = run_command(prof() + " report " + dir.str());
  ASSERT_EQ(report.exit_code, 0) << report.output;
  EXPECT_NE(report.output.find("Recording: INCOMPLETE: the node went away during the recording"), std::string::npos)
      << report.output.substr(0, 800);
}

}  // namespace
}  // namespace npukit::testing
