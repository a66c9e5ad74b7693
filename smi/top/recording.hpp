// Recordings: what npu-top saw of a node, frame by frame, as JSON (`npu-top --record FILE`),
// and a Replayer that publishes them again on an in-process bus (`npu-top --replay FILE`), so a
// dashboard can be rendered from a recorded node: the golden frames in tests/data/top come
// from recordings of the emulator.
//
// Format (version 1):
//   { "format": "npu-top-recording", "version": 1,
//     "node": {"node_name", "node_spec", "topology", "driver_version", "tool_version", "card_count"},
//     "devices": [ {"npu_id", "chip_id", "logic_id", "phy_id", "aicore_count", "aicpu_count", "name",
//                   "chip_name", "chip_type", "bus_id", "serial_number", "firmware_version",
//                   "smi_layout"}, ... ],
//     "fields": [ "npu_aicore_utilization_percent", ... ],      // registry names (aliases accepted)
//     "frames": [ { "virtual_time_ns": N,
//                   "devices": [ [v, ...], ... ],   // per device, per field: a number (ok),
//                                                   // "NA" (not supported) or null (no value)
//                   "processes": [ [pid, device, hbm_bytes, "name"], ... ],
//                   "events": [ {"type": "ecc_error", "device": 2, "ts_ns": N,
//                                "words": [a, b, c, d], "name": "", "aux": ""}, ... ],
//                   "stale": "reason" } ] }         // only on a frame of a stale node
// Events are those the collector keeps for alarms (collector.hpp). A live npu-top sees no
// events from before its first frame, so the first frame of a recording never has any.
// Replaying a stale frame closes the bus: every later frame reads stale too.
//
// Thread-safety: values; a Replayer is driven by one thread.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "smi/top/collector.hpp"
#include "smi/top/model.hpp"
#include "telemetry/client.hpp"

namespace npukit::top {

struct RecordedFrame {
  uint64_t virtual_time_ns = 0;
  std::vector<std::vector<tf::Sample>> devices;  // [device][field index]
  std::vector<tf::ProcessInfo> processes;
  std::vector<ReceivedEvent> events;
  std::string stale;
};

struct Recording {
  tf::NodeInfo node;
  double interval_s = 0;  // the refresh interval it was recorded at (0: not kept, older recordings)
  std::vector<tf::DeviceInfo> devices;
  std::vector<tf::FieldId> fields;
  std::vector<RecordedFrame> frames;
};

// The device fields a new recording keeps: those npu-top draws.
std::span<const tf::FieldId> recorded_fields();
// Appends `f` (which must not be absent) to `rec`; the first frame sets the node's identity.
void record_frame(Recording& rec, const Frame& f);

nlohmann::json recording_to_json(const Recording& rec);
// Errors name `where` (the file) and the JSON path.
Result<Recording> recording_from_json(const nlohmann::json& j, const std::string& where);
Result<Recording> load_recording(const std::string& path);
Status save_recording(const std::string& path, const Recording& rec);

class Replayer {
 public:
  // InvalidArgument when the recording has no devices or no frames.
  static Result<std::unique_ptr<Replayer>> create(Recording rec);
  std::size_t frames() const { return rec_.frames.size(); }
  double interval_s() const { return rec_.interval_s; }  // 0 when the recording did not keep it
  // Publishes frame `i` (values, process table, events; a stale frame closes the bus).
  void step(std::size_t i);
  // For a Collector: clients of the bus, and the current frame's virtual time as the clock.
  Collector::Opener opener();
  Collector::Clock clock();

 private:
  Replayer(Recording rec, std::shared_ptr<tf::InProcessBus> bus) : rec_(std::move(rec)), bus_(std::move(bus)) {}
  Recording rec_;
  std::shared_ptr<tf::InProcessBus> bus_;
  uint64_t now_ns_ = 0;
};

}  // namespace npukit::top
