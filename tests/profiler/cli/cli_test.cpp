// Bad input and failure: one clear line naming what and where, the documented exit codes
// (docs/exit-codes.md: 4 usage, 3 bad input, 5 no node, 7 the recorded command failed).
#include <sys/stat.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <tuple>

#include "tests/profiler/prof_test_util.hpp"

namespace npukit::testing {
namespace {

// Exactly one line, starting "npu-prof: ".
void expect_one_line(const CommandResult& r, const std::string& needle) {
  auto lines = lines_of(r.output);
  ASSERT_EQ(lines.size(), 1u) << r.output;
  EXPECT_EQ(lines[0].rfind("npu-prof: ", 0), 0u) << r.output;
  EXPECT_NE(r.output.find(needle), std::string::npos) << r.output;
}

TEST(Cli, MissingPathIsBadInput) {
  auto r = run_command(prof() + " report /nonexistent/prof-dir");
  EXPECT_EQ(r.exit_code, 3);
  expect_one_line(r, "/nonexistent/prof-dir: no such file or directory");
}

TEST(Cli, DirectoryWithoutRecordingIsBadInput) {
  TempDir dir("empty");
  auto r = run_command(prof() + " report " + dir.str());
  EXPECT_EQ(r.exit_code, 3);
  expect_one_line(r, dir.str() + ": no PROF_* recording in it");
}

TEST(Cli, NonDatabaseFileIsBadInput) {
  TempDir dir("notdb");
  std::ofstream(dir / "x.db") << "this is not a database, just text\n";
  auto r = run_command(prof() + " report " + (dir / "x.db"));
  EXPECT_EQ(r.exit_code, 3);
  expect_one_line(r, "x.db: not a SQLite database");
}

// A real SQLite file whose first page is damaged is called damaged, not "not a SQLite database".
TEST(Cli, DamagedSqlitePagesAreCalledDamaged) {
  TempDir dir("badpage");
  const std::string db = dir / "p.db";
  ASSERT_EQ(sqlite(db, "CREATE TABLE t(x); INSERT INTO t VALUES (1);").exit_code, 0);
  {
    std::fstream f(db, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(100);
    const std::string junk(200, '\xff');
    f.write(junk.data(), static_cast<std::streamsize>(junk.size()));
  }
  auto r = run_command(prof() + " report " + db);
  EXPECT_EQ(r.exit_code, 3);
  expect_one_line(r, "p.db: a damaged SQLite database (database disk image is malformed)");
}

TEST(Cli, ForeignDatabaseIsNotAProfile) {
  TempDir dir("foreign");
  ASSERT_EQ(sqlite(dir / "other.db", "CREATE TABLE t(x); INSERT INTO t VALUES (1);").exit_code, 0);
  auto r = run_command(prof() + " report " + (dir / "other.db"));
  EXPECT_EQ(r.exit_code, 3);
  expect_one_line(r, "other.db: not a profile database (no META_DATA table)");
}

// A copy of the small recording's database in `dir`, to damage.
std::string copy_of_small_db(const TempDir& dir) {
  const RecordedRun& run = small_run();
  EXPECT_FALSE(run.db.empty()) << run.record.output;
  std::string db = dir / "msprof_20990101000000.db";
  std::filesystem::copy_file(run.db, db);
  return db;
}

TEST(Cli, UnsupportedSchemaVersionIsNamed) {
  TempDir dir("schema2");
  std::string db = copy_of_small_db(dir);
  ASSERT_EQ(sqlite(db, "UPDATE META_DATA SET value = '2.0.0' WHERE name = 'SCHEMA_VERSION'").exit_code, 0);
  auto r = run_command(prof() + " report " + db);
  EXPECT_EQ(r.exit_code, 3);
  expect_one_line(r, "unsupported schema version 2.0.0");
}

TEST(Cli, CorruptedDatabaseIsBadInputNotACrash) {
  TempDir dir("corrupt");
  std::string db = copy_of_small_db(dir);
  {  // Overwrite the middle of the file (table pages) with garbage, keep the header.
    std::fstream f(db, std::ios::in | std::ios::out | std::ios::binary);
    auto size = std::filesystem::file_size(db);
    f.seekp(static_cast<std::streamoff>(size / 3));
    std::string junk(static_cast<std::size_t>(size / 3), '\xA5');
    f.write(junk.data(), static_cast<std::streamsize>(junk.size()));
  }
  auto r = run_command(prof() + " report " + db);
  EXPECT_EQ(r.exit_code, 3) << r.output;
  expect_one_line(r, db + ": ");
  auto e = run_command(prof() + " export --chrome " + (dir / "t.json") + " " + db);
  EXPECT_EQ(e.exit_code, 3) << e.output;
}

// A database missing a table npukit always writes, or with broken run metadata, is reported as
// damaged naming what is wrong, never as complete (report, JSON and diff), and exits 3 (bad
// input: a damaged database) after reporting what it could read; a number that does not parse is
// damage, not a crash (std::stoull aborted on an empty events_recorded).
TEST(Cli, DamagedDatabasesAreReportedAsDamagedNamingWhatIsWrong) {
  TempDir dir("damaged");
  std::string db = copy_of_small_db(dir);
  ASSERT_EQ(sqlite(db, "DROP TABLE EMU_EVENT; DROP TABLE CANN_API; UPDATE EMU_RUN SET value = '' WHERE key = 'events_recorded'; "
                       "UPDATE EMU_RUN SET value = '99999999999999999999999' WHERE key = 'events_missed'").exit_code, 0);
  auto r = run_command(prof() + " report --full " + db);
  EXPECT_EQ(r.exit_code, 3) << r.output;
  EXPECT_NE(r.output.find("Recording:  DAMAGED: no CANN_API table; no EMU_EVENT table; EMU_RUN.events_recorded is not a number "
                          "in range: ''; EMU_RUN.events_missed is not a number in range: '99999999999999999999999'"),
            std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("Recording:  complete"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("npu-prof: warning: " + db + ": damaged recording: no CANN_API table"), std::string::npos) << r.output;
  // Its finding says the database is damaged, not that the recorder stopped before finalizing.
  EXPECT_NE(r.output.find("The recording is incomplete: the database is damaged (no CANN_API table"), std::string::npos) << r.output;
  auto j = run_command(prof() + " report " + db + " --format json");
  EXPECT_EQ(j.exit_code, 3);
  EXPECT_NE(j.output.find("\"no EMU_EVENT table\""), std::string::npos);
  auto summary = run_command(prof() + " report " + db);
  EXPECT_NE(summary.output.find("Recording: DAMAGED: no CANN_API table"), std::string::npos) << summary.output;
  auto d = run_command(prof() + " diff " + db + " " + small_run().db);
  EXPECT_EQ(d.exit_code, 3) << d.output;
  TempDir run_dir("damaged-run"), ids_dir("damaged-ids");
  std::string empty_run = copy_of_small_db(run_dir);
  ASSERT_EQ(sqlite(empty_run, "DELETE FROM EMU_RUN").exit_code, 0);
  EXPECT_NE(run_command(prof() + " report " + empty_run).output.find("DAMAGED: EMU_RUN is empty (no run metadata)"), std::string::npos);
  ASSERT_EQ(sqlite(empty_run, "INSERT INTO EMU_RUN VALUES ('lossless_lost', 'x'), ('mode', 'fast')").exit_code, 0);
  EXPECT_NE(run_command(prof() + " report " + empty_run).output.find("DAMAGED: EMU_RUN.lossless_lost is not a number in range: 'x'; "
                                                                      "EMU_RUN.node is missing or empty"),
            std::string::npos) << run_command(prof() + " report " + empty_run).output;
  // Names the task rows point at, gone from STRING_IDS: blank in the report, so named as damage.
  TempDir names_dir("damaged-names");
  std::string nameless = copy_of_small_db(names_dir);
  ASSERT_EQ(sqlite(nameless, "DELETE FROM STRING_IDS WHERE id IN (SELECT opType FROM COMPUTE_TASK_INFO)").exit_code, 0);
  auto n = run_command(prof() + " report " + nameless);
  EXPECT_EQ(n.exit_code, 3) << n.output;
  EXPECT_NE(n.output.find(" task rows name ids that are not there (shown blank)"), std::string::npos) << n.output;
  std::string huge_id = copy_of_small_db(ids_dir);
  ASSERT_EQ(sqlite(huge_id, "INSERT INTO STRING_IDS VALUES (4611686018427387904, 'x')").exit_code, 0);  // was bad_alloc
  auto h = run_command(prof() + " report " + huge_id);
  EXPECT_EQ(h.exit_code, 3);
  expect_one_line(h, "corrupted profile database: STRING_IDS id 4611686018427387904 out of range");
  // Times no recording can have overflowed the analysis's arithmetic (found by tests/fuzz/profile):
  // such rows are skipped and named.
  TempDir times_dir("damaged-times");
  std::string far = copy_of_small_db(times_dir);
  ASSERT_EQ(sqlite(far, "UPDATE TASK SET startNs = -9000000000000000000 WHERE rowid = (SELECT min(rowid) FROM TASK); "
                        "UPDATE NPU_MEM SET timestampNs = 9000000000000000000").exit_code, 0);
  auto t = run_command(prof() + " report " + far);
  EXPECT_EQ(t.exit_code, 3) << t.output;
  EXPECT_NE(t.output.find("DAMAGED: TASK: 1 row with impossible times skipped; NPU_MEM: "), std::string::npos) << t.output;
}

TEST(Cli, BadArgumentsAreUsageErrors) {
  EXPECT_EQ(run_command(prof()).exit_code, 4);
  EXPECT_EQ(run_command(prof() + " report").exit_code, 4);
  EXPECT_EQ(run_command(prof() + " report x --format xml").exit_code, 4);
  EXPECT_EQ(run_command(prof() + " report x --top 0").exit_code, 4);
  auto unknown = run_command(prof() + " frobnicate");
  EXPECT_EQ(unknown.exit_code, 4);
  EXPECT_EQ(unknown.output, "npu-prof: unknown command 'frobnicate': give record, report, export, diff or selftest (see --help)\n");
  auto no_cmd = run_command(prof() + " record -o /tmp/x");
  EXPECT_EQ(no_cmd.exit_code, 4);
  expect_one_line(no_cmd, "give the command to record after --");
  auto no_dur = run_command(prof() + " record -o /tmp/x --attach");
  EXPECT_EQ(no_dur.exit_code, 4);
  expect_one_line(no_dur, "--attach needs --duration");
  auto bad_dur = run_command(prof() + " record -o /tmp/x --attach --duration soon");
  EXPECT_EQ(bad_dur.exit_code, 4);
  expect_one_line(bad_dur, "invalid duration 'soon'");
  auto bad_node = run_command(prof() + " record -o /tmp/x --node-name 'a/b' -- true");
  EXPECT_EQ(bad_node.exit_code, 4);
  expect_one_line(bad_node, "invalid node name 'a/b'");
  // A misspelt scenario is named, before anything runs (it was skipped in silence, or with no
  // name left "no scenario to run", exit 3).
  for (const char* only : {"loader,nosuch", "nosuch"}) {
    auto bad_only = run_command(prof() + " selftest --only " + only);
    EXPECT_EQ(bad_only.exit_code, 4) << only << ": " << bad_only.output;
    expect_one_line(bad_only, "selftest --only: no scenario 'nosuch' in ");
  }
  EXPECT_EQ(run_command(prof() + " --help").exit_code, 0);
}

TEST(Cli, NoNodeRunning) {
  TempDir dir("nonode");
  auto r = run_command(prof() + " record -o " + dir.str() + " --node-name " + unique_node("absent") + " -- true");
  EXPECT_EQ(r.exit_code, 5);
  expect_one_line(r, "is running (start one with: npu-emud start --node-name");
}

TEST(Cli, CommandThatCannotRunOrFails) {
  ScopedNode node("cmdfail");
  TempDir dir("cmdfail");
  auto missing = run_command(prof() + " record -o " + (dir / "a") + " --node-name " + node.name() + " -- /no/such/tool");
  EXPECT_EQ(missing.exit_code, 3);
  EXPECT_NE(missing.output.find("cannot run '/no/such/tool'"), std::string::npos) << missing.output;
  // Refused before anything is written: no unfinished PROF_ trees are left behind.
  EXPECT_FALSE(std::filesystem::exists(dir / "a")) << "a recording of nothing was left in " << (dir / "a");
  auto unknown = run_command(prof() + " record -o " + (dir / "a") + " --node-name " + node.name() + " -- no-such-tool-on-path");
  EXPECT_EQ(unknown.exit_code, 3);
  EXPECT_NE(unknown.output.find("cannot run 'no-such-tool-on-path': No such file or directory"), std::string::npos) << unknown.output;
  EXPECT_FALSE(std::filesystem::exists(dir / "a"));
  // A failing command still leaves a finished, reportable profile; the exit code says it failed.
  auto failing = run_command(prof() + " record -o " + (dir / "b") + " --node-name " + node.name() + " -- " + npu_run() +
                             " no-such-workload");
  EXPECT_EQ(failing.exit_code, 7) << failing.output;
  EXPECT_NE(failing.output.find("the recorded command exited with status"), std::string::npos) << failing.output;
  std::string db = find_db(dir / "b");
  ASSERT_FALSE(db.empty());
  EXPECT_EQ(sqlite(db, "SELECT value FROM META_DATA WHERE name = 'RECORDING_STATE'").output, "complete\n");
  EXPECT_EQ(run_command(prof() + " report " + (dir / "b")).exit_code, 0);
}

// npu-run --standalone (and mlp-train) run on a node inside npu-run, which the recorder cannot
// see: under npu-prof record they refuse with one line instead of leaving a profile of the idle
// node the recorder watched.
TEST(Cli, RecordRefusesWorkThatWouldRunOutOfItsSight) {
  ScopedNode node("wrap");
  TempDir dir("wrap");
  const std::pair<std::string, std::string> cases[] = {
      {data_path("small-train.json") + " --standalone --fast",
       "npu-run: --standalone runs on a node inside npu-run, which npu-prof record cannot see (it records node '" +
           node.name() + "'); drop --standalone to run the workload on that node"},
      {"mlp-train --steps 2", "npu-run: mlp-train runs on a node inside npu-run, which npu-prof record cannot see"}};
  int n = 0;
  for (const auto& [args, line] : cases) {
    std::string out = dir / ("r" + std::to_string(n++));
    auto r = run_command(prof() + " record -o " + out + " --node-name " + node.name() + " -- " + npu_run() + " " + args);
    EXPECT_EQ(r.exit_code, 7) << r.output;
    EXPECT_NE(r.output.find(line), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("the recorded command exited with status 4"), std::string::npos) << r.output;
    EXPECT_EQ(sqlite_sum(find_dbs(out), "SELECT count(*) FROM TASK"), 0) << "nothing else was recorded";
  }
  // Outside a recorder --standalone runs as before.
  auto plain = run_command(npu_run() + " " + data_path("small-train.json") + " --standalone --fast --steps 1");
  EXPECT_EQ(plain.exit_code, 0) << plain.output;
}

TEST(Cli, SeveralRecordingsInOneDirectoryNeedAChoice) {
  ScopedNode node("two");
  TempDir dir("two");
  for (int i = 0; i < 2; ++i) {
    ASSERT_EQ(run_command(prof() + " record -o " + dir.str() + " --node-name " + node.name() + " -- true").exit_code, 0);
  }
  auto r = run_command(prof() + " report " + dir.str());
  EXPECT_EQ(r.exit_code, 3);
  expect_one_line(r, "holds 2 recordings; name one");
  // Each recording is its ranks' trees (an idle node's: every device's), numbered on from the
  // last; a recording is one timestamp and tag.
  std::set<std::string> recordings;
  int trees = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir.str())) {
    std::string name = e.path().filename().string();
    recordings.insert(name.substr(12));
    ++trees;
  }
  EXPECT_EQ(recordings.size(), 2u);
  EXPECT_EQ(trees, 16);
  EXPECT_TRUE(std::filesystem::exists(dir / "PROF_000016_" + *recordings.rbegin()) ||
              std::filesystem::exists(dir / "PROF_000016_" + *recordings.begin()));
}

// Profiles are created like any output file: 0644 less the user's umask (docs/reliability.md),
// so `umask 077` keeps a recording private; the databases, directories and info files alike.
// Files are created 0644 less the umask (umask 002 used to leave info.json files 0664, group-
// writable, beside 0644 databases); directories follow the umask as mkdir does.
TEST(Cli, ProfileFilesFollowTheUmask) {
  ScopedNode node("modes");
  for (auto [umask, file_mode, dir_mode] : {std::tuple{"022", 0644u, 0755u}, std::tuple{"077", 0600u, 0700u},
                                             std::tuple{"002", 0644u, 0775u}}) {
    TempDir dir(std::string("modes") + umask);
    std::string out = dir / "rec";
    auto r = run_command(std::string("umask ") + umask + " && " + prof() + " record -o " + out + " --node-name " + node.name() + " -- true");
    ASSERT_EQ(r.exit_code, 0) << r.output;
    int files = 0;
    for (const auto& e : std::filesystem::recursive_directory_iterator(out)) {
      struct stat st {};
      ASSERT_EQ(::stat(e.path().c_str(), &st), 0);
      EXPECT_EQ(st.st_mode & 0777, e.is_directory() ? dir_mode : file_mode) << e.path() << " with umask " << umask;
      files += !e.is_directory();
    }
    EXPECT_GE(files, 16) << "8 databases and their info files";
  }
}

TEST(Cli, RankNarrowsAMultiRankRecordingToOneRank) {
  const RecordedRun& run = small_run();
  auto all = run_command(prof() + " report " + run.dir + " --full");
  ASSERT_EQ(all.exit_code, 0) << all.output;
  EXPECT_NE(all.output.find("devices 0,1 "), std::string::npos) << all.output.substr(0, 400);
  EXPECT_NE(all.output.find("Recording:  complete, 2 ranks (one PROF_ tree each)"), std::string::npos);
  auto one = run_command(prof() + " report " + run.dir + " --rank 1 --format json");
  ASSERT_EQ(one.exit_code, 0) << one.output;
  auto j = nlohmann::json::parse(one.output, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << one.output;
  EXPECT_EQ(j["header"]["tasks"], 51);
  EXPECT_EQ(j["header"]["ranks"], 1);
  for (const auto& step : j["steps"]) EXPECT_EQ(step["device"], 1);
  auto missing = run_command(prof() + " report " + run.dir + " --rank 7");
  EXPECT_EQ(missing.exit_code, 3);
  expect_one_line(missing, "no rank 7 in this recording (ranks: 0, 1)");
  // One rank's PROF_ tree or database is a recording of that rank alone.
  auto tree = run_command(prof() + " report " + std::filesystem::path(run.dbs[1]).parent_path().string() + " --format json");
  ASSERT_EQ(tree.exit_code, 0) << tree.output;
  EXPECT_EQ(nlohmann::json::parse(tree.output)["header"]["tasks"], 51);
}

}  // namespace
}  // namespace npukit::testing
