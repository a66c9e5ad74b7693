#include "profiler/store/schema.hpp"

#include <array>
#include <utility>

#include "telemetry/events.hpp"

namespace npukit::prof {

namespace {

constexpr ColumnDef I(std::string_view n) { return {n, "INTEGER"}; }
constexpr ColumnDef PK(std::string_view n) { return {n, "INTEGER", true}; }
constexpr ColumnDef S(std::string_view n) { return {n, "INTEGER", false, true}; }
constexpr ColumnDef T(std::string_view n) { return {n, "TEXT"}; }
constexpr ColumnDef N(std::string_view n) { return {n, "NUMERIC"}; }
constexpr ColumnDef R(std::string_view n) { return {n, "REAL"}; }

constexpr ColumnDef kEnum[] = {PK("id"), T("name")};
constexpr ColumnDef kMetaData[] = {T("name"), T("value")};
constexpr ColumnDef kStringIds[] = {PK("id"), {"value", "TEXT NOT NULL UNIQUE"}};
constexpr ColumnDef kSession[] = {I("startTimeNs"), I("endTimeNs")};
constexpr ColumnDef kNpuInfo[] = {I("id"), T("name")};
constexpr ColumnDef kHostInfo[] = {T("hostUid"), T("hostName")};
constexpr ColumnDef kRankDevice[] = {I("rankId"), I("deviceId")};
constexpr ColumnDef kCannApi[] = {I("startNs"), I("endNs"), I("type"), I("globalTid"), PK("connectionId"), S("name")};
constexpr ColumnDef kTask[] = {I("startNs"), I("endNs"),   I("deviceId"), I("connectionId"),
                               I("globalTaskId"), I("globalPid"), S("taskType"), I("contextId"),
                               I("streamId"), I("taskId"), I("modelId")};
constexpr ColumnDef kComputeTaskInfo[] = {
    S("name"),         PK("globalTaskId"),   I("blockNum"),       I("mixBlockNum"),  S("taskType"),
    S("opType"),       S("inputFormats"),    S("inputDataTypes"), S("inputShapes"),  S("outputFormats"),
    S("outputDataTypes"), S("outputShapes"), S("attrInfo"),       S("opState"),      S("hf32Eligible"),
    S("gridDim"),      S("blockDim")};
constexpr ColumnDef kCommOp[] = {S("opName"), I("startNs"),  I("endNs"), I("connectionId"), S("groupName"),
                                 PK("opId"),  I("relay"),    I("retry"), I("dataType"),     S("algType"),
                                 N("count"),  S("opType"),   I("deviceId"), I("rankSize")};
constexpr ColumnDef kCommTaskInfo[] = {S("name"),    I("globalTaskId"), S("taskType"),      I("planeId"),
                                       S("groupName"), I("notifyId"),   I("rdmaType"),      I("srcRank"),
                                       I("dstRank"), I("transportType"), I("size"),         I("dataType"),
                                       I("linkType"), I("opId"),        I("isMaster"),      N("bandwidth")};
constexpr ColumnDef kMemcpyInfo[] = {I("globalTaskId"), I("size"), I("memcpyOperation")};
constexpr ColumnDef kTaskPmu[] = {I("globalTaskId"), S("name"), N("value")};
constexpr ColumnDef kNpuMem[] = {S("type"), I("ddr"), I("hbm"), I("timestampNs"), I("deviceId")};
constexpr ColumnDef kNpuModuleMem[] = {I("moduleId"), I("timestampNs"), I("totalReserved"), I("deviceId")};
constexpr ColumnDef kNpuOpMem[] = {S("operatorName"), I("addr"),          S("type"),         I("size"),
                                   I("timestampNs"),  I("globalTid"),     I("totalAllocate"), I("totalReserve"),
                                   S("component"),    I("deviceId")};
constexpr ColumnDef kOverlap[] = {PK("id"), I("deviceId"), I("startNs"), I("endNs"), I("type")};
constexpr ColumnDef kMstx[] = {I("startNs"),  I("endNs"),     I("eventType"),   I("rangeId"), I("category"),
                               S("message"),  I("globalTid"), I("endGlobalTid"), I("domainId"), I("connectionId")};
constexpr ColumnDef kStepTime[] = {I("id"), I("startNs"), I("endNs")};
constexpr ColumnDef kAicoreFreq[] = {I("deviceId"), I("timestampNs"), N("freq"), I("dieId")};
constexpr ColumnDef kHbm[] = {I("deviceId"), I("timestampNs"), N("bandwidth"), I("hbmId"), S("type")};
constexpr ColumnDef kHccs[] = {I("deviceId"), I("timestampNs"), N("txThroughput"), N("rxThroughput")};

constexpr ColumnDef kEmuRun[] = {{"key", "TEXT", true}, T("value")};
// type: EMU_EVENT_TYPE.id (the bus's event type ids, which are never reused).
constexpr ColumnDef kEmuEvent[] = {I("timestampNs"), I("deviceId"), I("type"), S("name"), S("message"),
                                   I("a"),           I("b"),        I("c"),    I("d")};
constexpr ColumnDef kEmuEventType[] = {PK("id"), T("name"), T("payload")};
constexpr ColumnDef kEmuStep[] = {I("jobId"), S("jobName"), I("deviceId"), I("stepId"),
                                  I("startNs"), I("endNs"), I("globalPid")};
constexpr ColumnDef kEmuCounter[] = {I("timestampNs"), I("deviceId"), I("linkId"), I("fieldId"), S("name"), R("value")};
constexpr ColumnDef kEmuLink[] = {PK("linkId"), I("deviceA"), I("deviceB"), S("kind"), N("peakBytesPerS"), N("latencyNs")};

using O = TableOrigin;
constexpr TableDef kTables[] = {
    {"META_DATA", O::kMsprof, kMetaData, "schema version and producer"},
    {"STRING_IDS", O::kMsprof, kStringIds, "every interned text value"},
    {"SESSION_TIME_INFO", O::kMsprof, kSession, "the recording window"},
    {"NPU_INFO", O::kMsprof, kNpuInfo, "devices and their (emulated) chip names"},
    {"HOST_INFO", O::kMsprof, kHostInfo, "the recording host"},
    {"RANK_DEVICE_MAP", O::kMsprof, kRankDevice, "rank of each device's job"},
    {"ENUM_API_TYPE", O::kMsprof, kEnum, ""},
    {"ENUM_HCCL_DATA_TYPE", O::kMsprof, kEnum, ""},
    {"ENUM_HCCL_LINK_TYPE", O::kMsprof, kEnum, ""},
    {"ENUM_HCCL_TRANSPORT_TYPE", O::kMsprof, kEnum, ""},
    {"ENUM_HCCL_RDMA_TYPE", O::kMsprof, kEnum, ""},
    {"ENUM_MSTX_EVENT_TYPE", O::kMsprof, kEnum, ""},
    {"ENUM_MEMCPY_OPERATION", O::kMsprof, kEnum, ""},
    {"ENUM_OVERLAP_ANALYSIS_TYPE", O::kMsprof, kEnum, ""},
    {"ENUM_MODULE", O::kMsprof, kEnum, ""},
    {"CANN_API", O::kMsprof, kCannApi, "host-side launch of every device task"},
    {"TASK", O::kMsprof, kTask, "every device task"},
    {"COMPUTE_TASK_INFO", O::kMsprof, kComputeTaskInfo, "kernels: op name, type, shapes, dtypes"},
    {"COMMUNICATION_OP", O::kMsprof, kCommOp, "collectives, one row per rank"},
    {"COMMUNICATION_TASK_INFO", O::kMsprof, kCommTaskInfo, "one row per send of each collective (all on the collective's device task)"},
    {"MEMCPY_INFO", O::kMsprof, kMemcpyInfo, "copies: size and direction"},
    {"TASK_PMU_INFO", O::kMsprof, kTaskPmu, "per-task metrics (flops)"},
    {"NPU_MEM", O::kMsprof, kNpuMem, "HBM in use, sampled"},
    {"NPU_MODULE_MEM", O::kMsprof, kNpuModuleMem, "not published by the emulator (empty)"},
    {"NPU_OP_MEM", O::kMsprof, kNpuOpMem, "HBM alloc/free events"},
    {"OVERLAP_ANALYSIS", O::kMsprof, kOverlap, "derived at finalize: compute/communication/free intervals"},
    {"MSTX_EVENTS", O::kMsprof, kMstx, "markers"},
    {"AICORE_FREQ", O::kMsprof, kAicoreFreq, "AI-core clock, sampled"},
    {"HBM", O::kMsprof, kHbm, "HBM bandwidth (read+write), sampled"},
    {"HCCS", O::kMsprof, kHccs, "HCCS link throughput per device, sampled"},
    {"STEP_TIME", O::kTorchNpu, kStepTime, "derived at finalize: step windows of the main job"},
    {"EMU_RUN", O::kEmulator, kEmuRun, "recording facts: node, clock base, command, mode, drops"},
    {"EMU_EVENT", O::kEmulator, kEmuEvent, "node events: jobs, health, throttling, faults, ECC, links"},
    {"EMU_EVENT_TYPE", O::kEmulator, kEmuEventType, "EMU_EVENT.type: the bus's event types and what a..d hold"},
    {"EMU_STEP", O::kEmulator, kEmuStep, "step windows per job and device"},
    {"EMU_COUNTER", O::kEmulator, kEmuCounter, "every sampled counter by its telemetry field name"},
    {"EMU_LINK", O::kEmulator, kEmuLink, "the node's links, one row per direction: deviceA sends, deviceB receives, -1 the host, switch or network (linkId of EMU_COUNTER rows)"},
};

using Row = std::pair<int64_t, std::string_view>;
constexpr Row kApiTypes[] = {{20000, "acl"},  {15000, "model"}, {10000, "node"},  {5500, "communication"},
                             {5000, "runtime"}, {50001, "op"},  {50002, "queue"}, {50003, "trace"},
                             {50004, "mstx"}};
constexpr Row kDataTypes[] = {{0, "INT8"},    {1, "INT16"},     {2, "INT32"},   {3, "FP16"},      {4, "FP32"},
                              {5, "INT64"},   {6, "UINT64"},    {7, "UINT8"},   {8, "UINT16"},    {9, "UINT32"},
                              {10, "FP64"},   {11, "BFP16"},    {12, "INT128"}, {14, "HIF8"},     {15, "FP8E4M3"},
                              {16, "FP8E5M2"}, {17, "FP8E8M0"}, {255, "RESERVED"}, {65534, "N/A"},
                              {65535, "INVALID_TYPE"}};
constexpr Row kLinkTypes[] = {{0, "ON_CHIP"}, {1, "HCCS"},     {2, "PCIE"},         {3, "ROCE"},
                              {4, "SIO"},     {5, "HCCS_SW"},  {6, "STANDARD_ROCE"}, {7, "UB"},
                              {8, "UBoE"},    {255, "RESERVED"}, {65534, "N/A"},     {65535, "INVALID_TYPE"}};
constexpr Row kTransportTypes[] = {{0, "SDMA"},       {1, "RDMA"},    {2, "LOCAL"},          {3, "UB"},
                                   {4, "ROCE"},       {255, "RESERVED"}, {65534, "N/A"}, {65535, "INVALID_TYPE"}};
constexpr Row kRdmaTypes[] = {{0, "RDMA_SEND_NOTIFY"}, {1, "RDMA_SEND_PAYLOAD"}, {255, "RESERVED"},
                              {65534, "N/A"},          {65535, "INVALID_TYPE"}};
constexpr Row kMstxTypes[] = {{0, "marker"}, {1, "push/pop"}, {2, "start/end"}, {3, "marker_ex"}};
constexpr Row kMemcpyOps[] = {{0, "host to host"},       {1, "host to device"},      {2, "device to host"},
                              {3, "device to device"},   {4, "managed memory"},      {5, "addr device to device"},
                              {6, "host to device ex"},  {7, "device to host ex"},   {65535, "other"}};
constexpr Row kOverlapTypes[] = {{0, "COMPUTE"}, {1, "COMMUNICATION"}, {2, "COMM_NOT_OVERLAP_COMP"},
                                 {3, "FREE"},    {65535, "RESERVE"}};
// msprof's module table (analysis code snapshot; ids differ between CANN versions).
constexpr Row kModules[] = {
    {0, "SLOG"},       {1, "IDEDD"},    {2, "SCC"},       {3, "HCCL"},      {4, "FMK"},       {5, "CCU"},
    {6, "DVPP"},       {7, "RUNTIME"},  {8, "CCE"},       {9, "HDC"},       {10, "DRV"},      {11, "NET"},
    {22, "DEVMM"},     {23, "KERNEL"},  {24, "LIBMEDIA"}, {25, "CCECPU"},   {27, "ROS"},      {28, "HCCP"},
    {29, "ROCE"},      {30, "TEFUSION"}, {31, "PROFILING"}, {32, "DP"},     {33, "APP"},      {34, "TS"},
    {35, "TSDUMP"},    {36, "AICPU"},   {37, "LP"},       {38, "TDT"},      {39, "FE"},       {40, "MD"},
    {41, "MB"},        {42, "ME"},      {43, "IMU"},      {44, "IMP"},      {45, "GE"},       {47, "CAMERA"},
    {48, "ASCENDCL"},  {49, "TEEOS"},   {50, "ISP"},      {51, "SIS"},      {52, "HSM"},      {53, "DSS"},
    {54, "PROCMGR"},   {55, "BBOX"},    {56, "AIVECTOR"}, {57, "TBE"},      {58, "FV"},       {60, "TUNE"},
    {61, "HSS"},       {62, "FFTS"},    {63, "OP"},       {64, "UDF"},      {65, "HICAID"},   {66, "TSYNC"},
    {67, "AUDIO"},     {68, "TPRT"},    {69, "ASCENDCKERNEL"}, {70, "ASYS"}, {71, "ATRACE"},  {72, "RTC"},
    {73, "SYSMONITOR"}, {74, "AMP"},    {75, "ADETECT"},  {76, "MBUFF"},    {77, "CUSTOM"}};

struct EnumTable {
  std::string_view table;
  std::span<const Row> rows;
};
constexpr EnumTable kEnums[] = {
    {"ENUM_API_TYPE", kApiTypes},          {"ENUM_HCCL_DATA_TYPE", kDataTypes},
    {"ENUM_HCCL_LINK_TYPE", kLinkTypes},   {"ENUM_HCCL_TRANSPORT_TYPE", kTransportTypes},
    {"ENUM_HCCL_RDMA_TYPE", kRdmaTypes},   {"ENUM_MSTX_EVENT_TYPE", kMstxTypes},
    {"ENUM_MEMCPY_OPERATION", kMemcpyOps}, {"ENUM_OVERLAP_ANALYSIS_TYPE", kOverlapTypes},
    {"ENUM_MODULE", kModules}};

Status fill_enums(Db& db) {
  for (const EnumTable& e : kEnums) {
    auto insert = db.prepare("INSERT INTO " + std::string(e.table) + " VALUES (?, ?)");
    if (!insert.ok()) return insert.status();
    for (const Row& r : e.rows) NPUKIT_RETURN_IF_ERROR(insert->bind(1, r.first).bind(2, r.second).run());
  }
  // The bus's own table of event types (telemetry/events.cpp), payload meanings included.
  auto events = db.prepare("INSERT INTO EMU_EVENT_TYPE VALUES (?, ?, ?)");
  if (!events.ok()) return events.status();
  for (const telemetry::EventTypeDef& t : telemetry::all_event_types()) {
    NPUKIT_RETURN_IF_ERROR(events->bind(1, int64_t{static_cast<int>(t.type)}).bind(2, t.name).bind(3, t.payload).run());
  }
  return Status::Ok();
}

}  // namespace

std::span<const TableDef> all_tables() { return kTables; }

const TableDef* find_table(std::string_view name) {
  for (const TableDef& t : kTables) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

std::string create_table_sql(const TableDef& table) {
  std::string sql = "CREATE TABLE IF NOT EXISTS " + std::string(table.name) + " (";
  for (std::size_t i = 0; i < table.columns.size(); ++i) {
    const ColumnDef& c = table.columns[i];
    if (i > 0) sql += ", ";
    sql += std::string(c.name) + " " + std::string(c.type);
    if (c.primary_key) sql += " PRIMARY KEY";
  }
  return sql + ")";
}

std::string insert_sql(const TableDef& table) {
  std::string sql = "INSERT INTO " + std::string(table.name) + " VALUES (";
  for (std::size_t i = 0; i < table.columns.size(); ++i) sql += i == 0 ? "?" : ", ?";
  return sql + ")";
}

Status create_schema(Db& db) {
  Transaction tx(db);
  NPUKIT_RETURN_IF_ERROR(tx.begun());
  for (const TableDef& t : kTables) NPUKIT_RETURN_IF_ERROR(db.exec(create_table_sql(t)));
  NPUKIT_RETURN_IF_ERROR(fill_enums(db));
  NPUKIT_RETURN_IF_ERROR(set_meta(db, "SCHEMA_VERSION", kSchemaVersion));
  NPUKIT_RETURN_IF_ERROR(set_meta(db, "SCHEMA_VERSION_MAJOR", "1"));
  NPUKIT_RETURN_IF_ERROR(set_meta(db, "SCHEMA_VERSION_MINOR", "2"));
  NPUKIT_RETURN_IF_ERROR(set_meta(db, "SCHEMA_VERSION_MICRO", "0"));
  NPUKIT_RETURN_IF_ERROR(set_meta(db, kMetaProducer, kProducer));
  NPUKIT_RETURN_IF_ERROR(set_meta(db, kMetaEmulated, "1"));
  NPUKIT_RETURN_IF_ERROR(set_meta(db, kMetaClock, "emulated"));
  return tx.commit();
}

Status create_indexes(Db& db) {
  NPUKIT_RETURN_IF_ERROR(db.exec("CREATE INDEX IF NOT EXISTS TaskIndex ON TASK(startNs, globalTaskId)"));
  return db.exec("CREATE INDEX IF NOT EXISTS CommunicationTaskIndex ON COMMUNICATION_TASK_INFO(globalTaskId)");
}

Status set_meta(Db& db, std::string_view name, std::string_view value) {
  auto del = db.prepare("DELETE FROM META_DATA WHERE name = ?");
  if (!del.ok()) return del.status();
  NPUKIT_RETURN_IF_ERROR(del->bind(1, name).run());
  auto ins = db.prepare("INSERT INTO META_DATA VALUES (?, ?)");
  if (!ins.ok()) return ins.status();
  return ins->bind(1, name).bind(2, value).run();
}

int64_t memcpy_operation(uint64_t bus_kind) {
  switch (bus_kind) {
    case 0: return 1;  // host to device
    case 1: return 2;  // device to host
    case 2: return 3;  // device to device
    default: return 65535;
  }
}

}  // namespace npukit::prof
