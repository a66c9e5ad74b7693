// The schema: msprof's table and column names in msprof's order (reference section 1.2 and
// msprof's ST field lists), ENUM rows, META_DATA, string interning, and the writer's mechanics.
#include <gtest/gtest.h>

#include "profiler/store/profile_writer.hpp"
#include "profiler/store/schema.hpp"
#include "tests/profiler/prof_test_util.hpp"

namespace npukit::testing {
namespace {

std::string columns_of(const std::string& db, const std::string& table) {
  auto r = sqlite(db, "SELECT group_concat(name, ',') FROM pragma_table_info('" + table + "')");
  return r.output.empty() ? "" : r.output.substr(0, r.output.size() - 1);
}

class SchemaTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto w = prof::ProfileWriter::create(dir_ / "s.db", 1000);
    ASSERT_TRUE(w.ok()) << w.status().message();
    writer_ = std::move(*w);
  }
  std::string db() const { return dir_ / "s.db"; }
  TempDir dir_{"schema"};
  std::unique_ptr<prof::ProfileWriter> writer_;
};

TEST_F(SchemaTest, MsprofTablesHaveMsprofColumnsInOrder) {
  const std::pair<const char*, const char*> expected[] = {
      {"TASK", "startNs,endNs,deviceId,connectionId,globalTaskId,globalPid,taskType,contextId,streamId,taskId,modelId"},
      {"COMPUTE_TASK_INFO", "name,globalTaskId,blockNum,mixBlockNum,taskType,opType,inputFormats,inputDataTypes,"
                            "inputShapes,outputFormats,outputDataTypes,outputShapes,attrInfo,opState,hf32Eligible,"
                            "gridDim,blockDim"},
      {"CANN_API", "startNs,endNs,type,globalTid,connectionId,name"},
      {"COMMUNICATION_OP", "opName,startNs,endNs,connectionId,groupName,opId,relay,retry,dataType,algType,count,opType,"
                           "deviceId,rankSize"},
      {"COMMUNICATION_TASK_INFO", "name,globalTaskId,taskType,planeId,groupName,notifyId,rdmaType,srcRank,dstRank,"
                                  "transportType,size,dataType,linkType,opId,isMaster,bandwidth"},
      {"MEMCPY_INFO", "globalTaskId,size,memcpyOperation"},
      {"TASK_PMU_INFO", "globalTaskId,name,value"},
      {"STRING_IDS", "id,value"},
      {"META_DATA", "name,value"},
      {"SESSION_TIME_INFO", "startTimeNs,endTimeNs"},
      {"NPU_MEM", "type,ddr,hbm,timestampNs,deviceId"},
      {"NPU_OP_MEM", "operatorName,addr,type,size,timestampNs,globalTid,totalAllocate,totalReserve,component,deviceId"},
      {"OVERLAP_ANALYSIS", "id,deviceId,startNs,endNs,type"},
      {"STEP_TIME", "id,startNs,endNs"},
      {"AICORE_FREQ", "deviceId,timestampNs,freq,dieId"},
      {"HBM", "deviceId,timestampNs,bandwidth,hbmId,type"},
      {"HCCS", "deviceId,timestampNs,txThroughput,rxThroughput"},
      {"MSTX_EVENTS", "startNs,endNs,eventType,rangeId,category,message,globalTid,endGlobalTid,domainId,connectionId"},
      {"RANK_DEVICE_MAP", "rankId,deviceId"},
      {"NPU_INFO", "id,name"},
      {"HOST_INFO", "hostUid,hostName"}};
  for (const auto& [table, cols] : expected) EXPECT_EQ(columns_of(db(), table), cols) << table;
}

TEST_F(SchemaTest, EnumTablesHoldMsprofRows) {
  EXPECT_EQ(sqlite(db(), "SELECT name FROM ENUM_API_TYPE WHERE id = 5500").output, "communication\n");
  EXPECT_EQ(sqlite(db(), "SELECT name FROM ENUM_HCCL_DATA_TYPE WHERE id = 65534").output, "N/A\n");
  EXPECT_EQ(sqlite(db(), "SELECT name FROM ENUM_HCCL_LINK_TYPE WHERE id = 1").output, "HCCS\n");
  EXPECT_EQ(sqlite(db(), "SELECT name FROM ENUM_MEMCPY_OPERATION WHERE id = 1").output, "host to device\n");
  EXPECT_EQ(sqlite(db(), "SELECT group_concat(name, ',') FROM ENUM_OVERLAP_ANALYSIS_TYPE").output,
            "COMPUTE,COMMUNICATION,COMM_NOT_OVERLAP_COMP,FREE,RESERVE\n");
  EXPECT_EQ(sqlite(db(), "SELECT name FROM ENUM_MODULE WHERE id = 48").output, "ASCENDCL\n");
  EXPECT_EQ(sqlite(db(), "SELECT count(*) FROM ENUM_MSTX_EVENT_TYPE").output, "4\n");
}

TEST_F(SchemaTest, MetaDataCarriesVersionProducerAndState) {
  auto meta = sqlite(db(), "SELECT name || '=' || value FROM META_DATA ORDER BY name");
  EXPECT_NE(meta.output.find("SCHEMA_VERSION=1.2.0\n"), std::string::npos) << meta.output;
  EXPECT_NE(meta.output.find("SCHEMA_VERSION_MINOR=2\n"), std::string::npos);
  EXPECT_NE(meta.output.find("EMULATED=1\n"), std::string::npos);
  EXPECT_NE(meta.output.find("RECORDING_STATE=recording\n"), std::string::npos);
  EXPECT_EQ(sqlite(db(), "PRAGMA journal_mode").output, "wal\n");
  ASSERT_TRUE(writer_->finalize().ok());
  EXPECT_EQ(sqlite(db(), "SELECT value FROM META_DATA WHERE name = 'RECORDING_STATE'").output, "complete\n");
  EXPECT_EQ(sqlite(db(), "PRAGMA journal_mode").output, "delete\n");
  EXPECT_FALSE(std::filesystem::exists(db() + "-wal"));
  EXPECT_EQ(sqlite(db(), "SELECT name FROM sqlite_master WHERE type = 'index' AND name NOT LIKE 'sqlite_%' ORDER BY name").output,
            "CommunicationTaskIndex\nTaskIndex\n");
}

TEST_F(SchemaTest, StringsAreInternedOnceWithDenseIds) {
  ASSERT_TRUE(writer_->begin_batch().ok());
  auto a = writer_->intern("MatMulV2"), b = writer_->intern("AI_CORE"), c = writer_->intern("MatMulV2");
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  EXPECT_EQ(*a, *c);
  EXPECT_EQ(*b, *a + 1);
  ASSERT_TRUE(writer_->commit_batch().ok());
  EXPECT_EQ(sqlite(db(), "SELECT count(*), max(id) + 1 FROM STRING_IDS").output, "2|2\n");
  EXPECT_EQ(sqlite(db(), "SELECT id FROM STRING_IDS WHERE value = 'AI_CORE'").output, std::to_string(*b) + "\n");
}

TEST_F(SchemaTest, RowCountMismatchIsAnErrorNotACrash) {
  ASSERT_TRUE(writer_->begin_batch().ok());
  Status s = writer_->insert(prof::Table::kMemcpyInfo, {int64_t{1}, int64_t{2}});
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("MEMCPY_INFO: 2 values for 3 columns"), std::string::npos) << s.message();
}

TEST_F(SchemaTest, SessionWindowWidensWithEveryCommit) {
  ASSERT_TRUE(writer_->begin_batch().ok());
  writer_->note_time(500, 2500);
  ASSERT_TRUE(writer_->commit_batch().ok());
  EXPECT_EQ(sqlite(db(), "SELECT * FROM SESSION_TIME_INFO").output, "500|2500\n");
}

TEST(Schema, CreatingOverAnExistingFileFails) {
  TempDir dir("exists");
  std::ofstream(dir / "x.db") << "x";
  auto w = prof::ProfileWriter::create(dir / "x.db", 0);
  ASSERT_FALSE(w.ok());
  EXPECT_NE(w.status().message().find("already exists"), std::string::npos);
}

TEST(Schema, EveryTableIsDefinedOnceAndEmulatorTablesArePrefixed) {
  std::set<std::string> names;
  for (const prof::TableDef& t : prof::all_tables()) {
    EXPECT_TRUE(names.insert(std::string(t.name)).second) << t.name;
    bool emu = std::string(t.name).rfind("EMU_", 0) == 0;
    EXPECT_EQ(emu, t.origin == prof::TableOrigin::kEmulator) << t.name;
  }
}

}  // namespace
}  // namespace npukit::testing
