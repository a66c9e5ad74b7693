// ProfileWriter::finalize(): launches whose task never ran are removed (every CANN_API row links
// to a TASK row), found from the connectionIds the writer was told about.
#include <gtest/gtest.h>

#include "profiler/store/profile_writer.hpp"
#include "tests/profiler/prof_test_util.hpp"

namespace npukit::testing {
namespace {

using prof::Table;

class FinalizeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto w = prof::ProfileWriter::create(dir_ / "f.db", 1000);
    ASSERT_TRUE(w.ok()) << w.status().message();
    writer_ = std::move(*w);
    ASSERT_TRUE(writer_->begin_batch().ok());
  }
  void launch(int64_t connection) {
    auto name = writer_->intern("aclnnAdd");
    ASSERT_TRUE(name.ok());
    ASSERT_TRUE(writer_->insert(Table::kCannApi, {connection * 10, connection * 10 + 5, int64_t{1}, int64_t{7}, connection, *name}).ok());
    writer_->note_launch(connection);
  }
  void task(int64_t connection) {
    int64_t start = connection * 10 + 6, end = start + 3;
    ASSERT_TRUE(writer_->insert(Table::kTask, {start, end, int64_t{0}, connection, writer_->next_global_task_id(), int64_t{7},
                                               int64_t{0}, int64_t{0}, int64_t{1}, connection, int64_t{0}}).ok());
    writer_->note_task(0, start, end, false, connection);
  }
  std::string launches() { return sqlite(dir_ / "f.db", "SELECT group_concat(connectionId) FROM CANN_API").output; }
  TempDir dir_{"finalize"};
  std::unique_ptr<prof::ProfileWriter> writer_;
};

TEST_F(FinalizeTest, ALaunchWhoseTaskNeverRanIsRemoved) {
  for (int64_t c : {1, 2, 3}) launch(c);
  task(1);
  task(3);
  auto stats = writer_->finalize();
  ASSERT_TRUE(stats.ok()) << stats.status().message();
  EXPECT_EQ(stats->orphan_launches, 1u);
  EXPECT_EQ(launches(), "1,3\n");
}

TEST_F(FinalizeTest, EveryLaunchWithItsTaskStaysInAnyOrder) {
  task(2);  // noted before its launch: still a match
  for (int64_t c : {3, 1, 2}) launch(c);
  task(3);
  task(1);
  auto stats = writer_->finalize();
  ASSERT_TRUE(stats.ok()) << stats.status().message();
  EXPECT_EQ(stats->orphan_launches, 0u);
  EXPECT_EQ(launches(), "1,2,3\n");
}

// A reader holding the database open (an `npu-prof report` of the recording as it finishes)
// blocks the switch out of WAL mode: the recording still ends complete, in WAL mode, readable by
// that reader and by a new one. It failed the whole recording ("database is locked").
TEST_F(FinalizeTest, AReaderHoldingTheDatabaseOpenDoesNotFailTheHandOver) {
  for (int64_t c : {1, 2}) launch(c), task(c);
  ASSERT_TRUE(writer_->commit_batch().ok());
  auto reader = prof::Db::open(dir_ / "f.db", prof::Db::Mode::kReadOnly);
  ASSERT_TRUE(reader.ok()) << reader.status().message();
  ASSERT_TRUE(reader->query_i64("SELECT count(*) FROM TASK").ok());
  auto stats = writer_->finalize();
  ASSERT_TRUE(stats.ok()) << stats.status().message();
  EXPECT_EQ(stats->left_in_wal, 1u);
  EXPECT_EQ(*reader->query_i64("SELECT count(*) FROM STEP_TIME") + *reader->query_i64("SELECT count(*) FROM TASK"), 2);
  EXPECT_EQ(sqlite(dir_ / "f.db", "SELECT value FROM META_DATA WHERE name = 'RECORDING_STATE'").output, "complete\n");
  EXPECT_EQ(launches(), "1,2\n");
}

TEST_F(FinalizeTest, WithNoReaderTheDatabaseEndsAsOneFile) {
  launch(1), task(1);
  auto stats = writer_->finalize();
  ASSERT_TRUE(stats.ok()) << stats.status().message();
  EXPECT_EQ(stats->left_in_wal, 0u);
  EXPECT_EQ(sqlite(dir_ / "f.db", "PRAGMA journal_mode").output, "delete\n");
}

}  // namespace
}  // namespace npukit::testing
