// The profile database schema: msprof's tables and column names (reference/msprof-db.md
// section 7), plus clearly separate emulator-only tables (prefix EMU_). One table of table
// definitions is the single source of truth: the DDL, the tests' schema checks and the docs'
// table list all come from all_tables().
//
// Units everywhere: ns of Unix time (CLOCK_REALTIME), bytes, bytes/s, MHz. Text-valued columns
// of msprof tables are INTEGER ids into STRING_IDS.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "profiler/store/sqlite_db.hpp"

namespace npukit::prof {

// META_DATA SCHEMA_VERSION and its parts (msprof's code snapshot constants: 1 / 2 / 0).
inline constexpr std::string_view kSchemaVersion = "1.2.0";
inline constexpr std::string_view kProducer = "npukit npu-prof 0.1.0";

// META_DATA keys we add beside msprof's SCHEMA_VERSION*.
inline constexpr std::string_view kMetaProducer = "PRODUCER";
inline constexpr std::string_view kMetaEmulated = "EMULATED";
inline constexpr std::string_view kMetaClock = "CLOCK";
// "recording" while the recorder runs, "complete" after finalize. A database still saying
// "recording" was left by a recorder that died: it holds every committed batch.
inline constexpr std::string_view kMetaState = "RECORDING_STATE";

// Sentinels msprof uses for "none".
inline constexpr int64_t kNoId32 = 4294967295;  // modelId, contextId, dstRank
inline constexpr int64_t kNoNotifyId = -1;      // 18446744073709551615 as a signed 64-bit value

enum class TableOrigin { kMsprof, kTorchNpu, kEmulator };

struct ColumnDef {
  std::string_view name;
  std::string_view type;  // INTEGER, TEXT, NUMERIC, REAL
  bool primary_key = false;
  bool string_id = false;  // INTEGER id into STRING_IDS
};

struct TableDef {
  std::string_view name;
  TableOrigin origin;
  std::span<const ColumnDef> columns;
  std::string_view description;
};

std::span<const TableDef> all_tables();
const TableDef* find_table(std::string_view name);

// "CREATE TABLE IF NOT EXISTS <name> (...)".
std::string create_table_sql(const TableDef& table);
// "INSERT INTO <name> VALUES (?,?,...)".
std::string insert_sql(const TableDef& table);

// Creates every table and fills the ENUM_* tables (all rows, used or not) and META_DATA's
// schema rows. Indexes come later (create_indexes) so recording inserts stay cheap.
Status create_schema(Db& db);
// msprof's TaskIndex and CommunicationTaskIndex (a rank's database holds one device: the
// TASK(startNs) index serves its per-stream queries too).
Status create_indexes(Db& db);

// Sets META_DATA name = value (replacing an existing row).
Status set_meta(Db& db, std::string_view name, std::string_view value);

// ENUM ids the recorder writes.
namespace enum_id {
inline constexpr int64_t kApiAcl = 20000;
inline constexpr int64_t kApiNode = 10000;
inline constexpr int64_t kApiCommunication = 5500;
inline constexpr int64_t kApiRuntime = 5000;
inline constexpr int64_t kDataTypeNA = 65534;
inline constexpr int64_t kLinkHccs = 1;
inline constexpr int64_t kLinkPcie = 2;
inline constexpr int64_t kLinkRoce = 3;
inline constexpr int64_t kTransportSdma = 0;
inline constexpr int64_t kTransportRdma = 1;
inline constexpr int64_t kRdmaNA = 65534;
inline constexpr int64_t kMstxMarker = 0;
inline constexpr int64_t kOverlapCompute = 0;
inline constexpr int64_t kOverlapCommunication = 1;
inline constexpr int64_t kOverlapCommNotOverlapComp = 2;
inline constexpr int64_t kOverlapFree = 3;
}  // namespace enum_id

// ENUM_MEMCPY_OPERATION id for the bus's memcpy kind (0 H2D, 1 D2H, 2 D2D); 65535 other.
int64_t memcpy_operation(uint64_t bus_kind);

}  // namespace npukit::prof
