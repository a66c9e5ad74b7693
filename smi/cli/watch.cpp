// info watch: npu-smi's scrolling monitor (header once, %-12s columns, flushed per card),
// plus sub-second -d, --timestamp, --count and --format csv|json (one line per sample).
#include <chrono>
#include <cmath>
#include <ostream>

#include "smi/common/columns.hpp"
#include "smi/cli/commands.hpp"
#include "smi/common/text.hpp"
#include "telemetry/json_reader.hpp"

namespace npukit::smi {

namespace tf = telemetry;
namespace fid = telemetry::fid;

namespace {

struct WatchColumn {
  char letter;
  const char* header;  // npu-smi's header; a leading space is part of it for n and u
  std::string key;
  Value (*read)(const tf::Snapshot& s, int d);
};

bool memory_is_hbm(const tf::Snapshot& s, int d) { return s.device_info(d).has_hbm(); }

Value read_power(const tf::Snapshot& s, int d) {
  if (s.device_info(d).chip_type == "Ascend310P") return Value::pair(nullptr, "NA");  // npu-smi: NA on 310P
  return field_real(s, d, fid::kPowerWatts, 1);
}
Value read_temp(const tf::Snapshot& s, int d) { return field_integer(s, d, fid::kTemperatureCelsius); }
Value read_aicore(const tf::Snapshot& s, int d) { return field_integer(s, d, fid::kAicoreUtil); }
Value read_aicpu(const tf::Snapshot& s, int d) { return field_integer(s, d, fid::kAicpuUtil); }
Value read_ctrlcpu(const tf::Snapshot& s, int d) { return field_integer(s, d, fid::kCtrlcpuUtil); }
Value read_memory(const tf::Snapshot& s, int d) {
  return memory_is_hbm(s, d) ? usage_percent(s, d, fid::kHbmUsedBytes, fid::kHbmTotalBytes)
                             : usage_percent(s, d, fid::kDdrUsedBytes, fid::kDdrTotalBytes);
}
Value read_membw(const tf::Snapshot& s, int d) { return field_integer(s, d, fid::kHbmBandwidthUtil); }
Value read_npu(const tf::Snapshot& s, int d) { return field_integer(s, d, fid::kNpuUtil); }
Value read_cube(const tf::Snapshot& s, int d) { return field_integer(s, d, fid::kCubeUtil); }

const std::vector<WatchColumn>& watch_columns() {
  static const std::vector<WatchColumn> cols = {
      {'p', "Pwr(W)", key_of(fid::kPowerWatts), read_power},
      {'t', "Temp(C)", key_of(fid::kTemperatureCelsius), read_temp},
      {'a', "AI Core(%)", key_of(fid::kAicoreUtil), read_aicore},
      {'i', "AI Cpu(%)", key_of(fid::kAicpuUtil), read_aicpu},
      {'c', "Ctrl Cpu(%)", key_of(fid::kCtrlcpuUtil), read_ctrlcpu},
      {'m', "Memory(%)", "npu_hbm_usage_percent", read_memory},
      {'b', "Memory BW(%)", key_of(fid::kHbmBandwidthUtil), read_membw},
      {'n', " NPU Util(%)", key_of(fid::kNpuUtil), read_npu},
      {'u', " AI Cube(%)", key_of(fid::kCubeUtil), read_cube},
  };
  return cols;
}

Value read_na(const tf::Snapshot&, int) { return Value::na(); }

// The columns in npu-smi's fixed order: the -s letters given (all when none). NPU Util and AI
// Cube are the 910B family's: without -s they are left out on other chips; asked for with -s
// n or u, they print NA there, as the driver prints every selected header.
// Memory(%) is HBM usage on HBM-layout chips and DDR usage on the others (its key says which).
std::vector<WatchColumn> selected(const std::string& types, const tf::Snapshot& s) {
  bool cube_family = s.device_count() > 0 && s.device_info(0).chip_type == "Ascend910B";
  bool hbm = s.device_count() == 0 || memory_is_hbm(s, 0);
  std::vector<WatchColumn> out;
  for (const WatchColumn& c : watch_columns()) {
    if (!types.empty() && types.find(c.letter) == std::string::npos) continue;
    bool family_only = c.letter == 'n' || c.letter == 'u';
    if (family_only && !cube_family && types.empty()) continue;
    out.push_back(c);
    if (family_only && !cube_family) out.back().read = read_na;
    if (c.letter == 'm' && !hbm) out.back().key = "npu_ddr_usage_percent";
  }
  return out;
}

std::vector<int> watched_devices(const tf::Snapshot& s, const WatchOptions& w) {
  std::vector<int> devs;
  for (int d = 0; d < s.device_count(); ++d) {
    const tf::DeviceInfo& info = s.device_info(d);
    if (w.npu && info.npu_id != *w.npu) continue;
    if (w.chip && info.chip_id != *w.chip) continue;
    devs.push_back(d);
  }
  return devs;
}

Object sample_row(const tf::Snapshot& s, int d, const std::vector<WatchColumn>& cols, const std::string& ts) {
  Object row;
  row.add("", "timestamp", Value::str(ts));
  row.add("", "npu_id", Value::integer(s.device_info(d).npu_id)).add("", "chip_id", Value::integer(s.device_info(d).chip_id));
  for (const WatchColumn& c : cols) row.add(c.header, c.key, c.read(s, d));
  return row;
}

std::string text_header(const std::vector<WatchColumn>& cols, bool timestamp) {
  std::string line = timestamp ? strprintf("%-26s", "Timestamp") : "";
  line += strprintf("%-12s%-12s", "NpuID(Idx)", "ChipId(Idx)");
  for (const WatchColumn& c : cols) line += c.header[0] == ' ' ? strprintf(" %-12s", c.header + 1) : strprintf("%-12s", c.header);
  return rtrim_lines(line) + "\n";
}

std::string text_row(const Object& row, const std::vector<WatchColumn>& cols, bool timestamp) {
  std::string line = timestamp ? strprintf("%-26s", row.value("timestamp").text.c_str()) : "";
  line += strprintf("%-12s%-12s", row.value("npu_id").text.c_str(), row.value("chip_id").text.c_str());
  for (const WatchColumn& c : cols) {
    const char* text = row.value(c.key).text.c_str();
    line += c.header[0] == ' ' ? strprintf(" %-12s", text) : strprintf("%-12s", text);
  }
  return rtrim_lines(line) + "\n";
}

std::vector<CsvColumn> csv_columns(const std::vector<WatchColumn>& cols) {
  std::vector<CsvColumn> out = {{"timestamp", ""}, {"npu_id", ""}, {"chip_id", ""}};
  for (const WatchColumn& c : cols) out.push_back({c.key, unit_of(c.key)});
  return out;
}

// Prints one sample; text and CSV flush after each card, like npu-smi.
void print_sample(Context& ctx, const tf::Snapshot& s, const WatchOptions& w, const std::vector<WatchColumn>& cols) {
  std::string ts = ctx.timestamp ? ctx.timestamp() : utc_timestamp();
  std::vector<int> devs = watched_devices(s, w);
  if (w.format == WatchOptions::Format::kJson) {
    std::vector<Object> rows;
    for (int d : devs) rows.push_back(sample_row(s, d, cols, ts));
    for (auto& r : rows) r.entries.erase(r.entries.begin());  // the timestamp is the sample's
    Document doc;
    doc.add("", "timestamp", Value::str(ts)).add_list("devices", std::move(rows));
    *ctx.out << json_text(render_json(doc)) << "\n" << std::flush;
    return;
  }
  CsvOptions csv{.header = false, .units = false};
  for (std::size_t i = 0; i < devs.size(); ++i) {
    Object row = sample_row(s, devs[i], cols, ts);
    *ctx.out << (w.format == WatchOptions::Format::kCsv ? csv_row(csv_columns(cols), row, csv) : text_row(row, cols, w.timestamp));
    bool card_done = i + 1 == devs.size() || s.device_info(devs[i + 1]).npu_id != s.device_info(devs[i]).npu_id;
    if (card_done) *ctx.out << std::flush;
  }
}

}  // namespace

int cmd_watch(Context& ctx, Session& session, const WatchOptions& w) {
  std::vector<WatchColumn> cols = selected(w.types, session.snapshot);
  if (w.format == WatchOptions::Format::kText) *ctx.out << text_header(cols, w.timestamp);
  if (w.format == WatchOptions::Format::kCsv) *ctx.out << csv_header(csv_columns(cols), CsvOptions{});
  bool warned = session.snapshot.stale();  // open_session already said so
  tf::WatchOptions opts;
  opts.interval = std::chrono::nanoseconds(static_cast<int64_t>(std::llround(w.delay_s * 1e9)));
  opts.count = w.count;
  opts.stop = ctx.stop;
  Status st = session.client->watch(opts, [&](const tf::Snapshot& s) {
    if (s.stale() && !warned) *ctx.err << stale_warning(s);
    warned = warned || s.stale();
    print_sample(ctx, s, w, cols);
    return ctx.out->good();
  });
  if (!st.ok()) {
    *ctx.err << "npu-smi: " << st.message() << "\n";
    return st.code() == Code::kUnavailable ? kExitNoNode : kExitBusError;
  }
  return kExitOk;
}

}  // namespace npukit::smi
