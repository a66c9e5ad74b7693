#include <filesystem>
#include <fstream>
#include <regex>

#include "profiler/analyze/report_build.hpp"
#include "profiler/render/report_render.hpp"
#include "profiler/store/schema.hpp"
#include "profiler/render/text_table.hpp"

namespace npukit::prof {

namespace {

namespace fs = std::filesystem;

std::string field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

std::string line(const std::vector<std::string>& cells) {
  std::string out;
  for (std::size_t i = 0; i < cells.size(); ++i) out += (i ? "," : "") + field(cells[i]);
  return out + "\n";
}

std::string us(double ns) { return fixed(ns / 1e3, 3); }

class CsvFile {
 public:
  CsvFile(const fs::path& path, const std::vector<std::string>& header) : path_(path), out_(path) { out_ << line(header); }
  void row(const std::vector<std::string>& cells) { out_ << line(cells); }
  Status close() {
    out_.close();
    if (!out_) return Status(Code::kInternal, path_.string() + ": cannot write");
    return Status::Ok();
  }

 private:
  fs::path path_;
  std::ofstream out_;
};

std::vector<std::string> stat_cells(const DurationStats& s) {
  return {std::to_string(s.count), us(static_cast<double>(s.total)), us(static_cast<double>(s.min)), us(s.avg),
          us(static_cast<double>(s.max)), fixed(s.ratio, 2)};
}

Status op_summary(const fs::path& path, const ProfileData& d, const std::vector<std::size_t>& sel) {
  CsvFile f(path, {"Device_id", "Model ID", "Task ID", "Stream ID", "Op Name", "OP Type", "OP State", "Task Type",
                   "Task Start Time(us)", "Task Duration(us)", "Task Wait Time(us)", "Block Num", "HF32 Eligible",
                   "Mix Block Num", "Input Shapes", "Input Data Types", "Input Formats", "Output Shapes",
                   "Output Data Types", "Output Formats", "Context ID"});
  std::vector<int64_t> waits = wait_times(d);
  const std::string none = std::to_string(kNoId32);
  for (std::size_t i : sel) {
    const TaskRecord& t = d.tasks[i];
    bool kernel = t.op_type >= 0;
    const std::string& type = d.str(t.task_type);
    std::string na = "N/A";
    // Kernels carry their op fields; copies and collectives have none (N/A, as msprof prints).
    auto op_field = [&](int64_t id) { return kernel && id >= 0 ? d.str(id) : na; };
    // msprof shows communication ops without a task or stream id.
    bool comm = type == "COMMUNICATION";
    f.row({std::to_string(t.device), none, comm ? na : std::to_string(t.task_id), comm ? na : std::to_string(t.stream),
           kernel ? d.str(t.name) : type, kernel ? d.str(t.op_type) : type, op_field(t.state), type, ns_to_us(t.start),
           ns_to_us(t.duration()), ns_to_us(waits[i]), std::to_string(t.block_num), op_field(t.hf32), "0",
           op_field(t.shapes), op_field(t.dtypes), op_field(t.formats), op_field(t.out_shapes), op_field(t.out_dtypes),
           op_field(t.out_formats), none});
  }
  return f.close();
}

Status op_statistic(const fs::path& path, const Report& r) {
  CsvFile f(path, {"Device_id", "OP Type", "Core Type", "Count", "Total Time(us)", "Min Time(us)", "Avg Time(us)",
                   "Max Time(us)", "Ratio(%)"});
  for (const DeviceOpTypeRow& row : r.device_op_types) {
    std::vector<std::string> cells = {std::to_string(row.device), row.row.op_type, row.row.core_type};
    for (std::string& c : stat_cells(row.row.stats)) cells.push_back(std::move(c));
    f.row(cells);
  }
  return f.close();
}

Status communication_statistic(const fs::path& path, const Report& r) {
  CsvFile f(path, {"Device_id", "OP Type", "Count", "Total Time(us)", "Min Time(us)", "Avg Time(us)", "Max Time(us)",
                   "Ratio(%)"});
  for (const DeviceCommTypeRow& row : r.device_comm_types) {
    std::vector<std::string> cells = {std::to_string(row.device), row.row.op_type};
    for (std::string& c : stat_cells(row.row.stats)) cells.push_back(std::move(c));
    f.row(cells);
  }
  return f.close();
}

Status step_trace_time(const fs::path& path, const Report& r) {
  CsvFile f(path, {"Device_id", "Step", "Computing", "Communication(Not Overlapped)", "Overlapped", "Communication", "Free",
                   "Stage", "Bubble", "Communication(Not Overlapped and Exclude Receive)", "Preparing"});
  // As msprof-analyze derives them: Bubble is the step's receive time, Stage the rest of the
  // step's span (computing + communication not overlapped + free, less the bubble).
  for (const StepRow& s : r.steps) {
    const StepBreakdown& b = s.b;
    int64_t stage = b.computing + b.comm_not_overlapped + b.free - s.bubble;
    f.row({std::to_string(s.device), std::to_string(s.step), us(static_cast<double>(b.computing)),
           us(static_cast<double>(b.comm_not_overlapped)), us(static_cast<double>(b.overlapped)),
           us(static_cast<double>(b.communication)), us(static_cast<double>(b.free)), us(static_cast<double>(stage)),
           us(static_cast<double>(s.bubble)), us(static_cast<double>(b.comm_not_overlapped - s.bubble)),
           us(static_cast<double>(b.preparing))});
  }
  return f.close();
}

}  // namespace

std::string db_timestamp(const std::string& db_path) {
  std::smatch m;
  std::string name = fs::path(db_path).filename().string();
  static const std::regex kName(R"(msprof_(\d{14})\.db)");
  return std::regex_match(name, m, kName) ? m[1].str() : "";
}

Result<std::vector<std::string>> write_csv(const Report& r, const ProfileData& d, const std::vector<std::size_t>& sel,
                                           const std::string& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (!fs::is_directory(dir, ec)) return InvalidArgument(dir + ": cannot create the output directory" + (ec ? ": " + ec.message() : ""));
  std::string ts = db_timestamp(d.db_path);
  std::string suffix = ts.empty() ? ".csv" : "_" + ts + ".csv";
  fs::path base(dir);
  std::vector<std::string> written = {(base / ("op_summary" + suffix)).string(), (base / ("op_statistic" + suffix)).string(),
                                      (base / ("communication_statistic" + suffix)).string(),
                                      (base / "step_trace_time.csv").string()};
  NPUKIT_RETURN_IF_ERROR(op_summary(written[0], d, sel));
  NPUKIT_RETURN_IF_ERROR(op_statistic(written[1], r));
  NPUKIT_RETURN_IF_ERROR(communication_statistic(written[2], r));
  NPUKIT_RETURN_IF_ERROR(step_trace_time(written[3], r));
  return written;
}

}  // namespace npukit::prof
