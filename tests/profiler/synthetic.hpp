// Constructed timelines: bus events built by hand (telemetry/events.cpp payloads) and written
// through the real EventMapper/ProfileWriter into a database, so tests know every interval.
#pragma once

#include <map>
#include <string>

#include "profiler/record/event_mapper.hpp"
#include "profiler/store/profile_writer.hpp"
#include "telemetry/comm_group.hpp"
#include "telemetry/events.hpp"

namespace npukit::testing {

namespace tf = telemetry;

class SyntheticBus {
 public:
  // The clock base is 0: database timestamps equal the bus timestamps.
  uint32_t id(const std::string& s) {
    auto [it, fresh] = ids_.try_emplace(s, static_cast<uint32_t>(ids_.size() + 1));
    if (fresh) strings_[it->second] = s;
    return it->second;
  }
  prof::EventMapper::Resolver resolver() {
    return [this](uint32_t i) -> Result<std::string> {
      auto it = strings_.find(i);
      if (it == strings_.end()) return NotFoundError("no string " + std::to_string(i));
      return it->second;
    };
  }

  // unit: 0 cube, 1 vector, 2 AI CPU.
  tf::Event kernel(int device, uint64_t ts, uint64_t dur, uint32_t stream, uint64_t task, const std::string& kernel,
                   const std::string& aux, int unit = 0, double flops = 1e9, uint64_t cores = 20) {
    tf::Event e = base(tf::EventType::kKernel, device, ts);
    e.name_id = id(kernel);
    e.aux_id = id(aux);
    e.words = {dur, tf::pack_stream_pid(stream, 4242), 0, static_cast<uint64_t>(unit) | task << 8 | cores << 56};
    e.set_f64(2, flops);
    return e;
  }
  // `group`: the communicator description (telemetry/comm_group.hpp), "" for none (an older
  // producer's event). With a group the data type is fp16.
  tf::Event collective(int device, uint64_t ts, uint64_t dur, uint32_t stream, uint64_t task, uint64_t bytes,
                       const std::string& op = "hcom_allReduce_", const std::string& group = "") {
    tf::Event e = base(tf::EventType::kCollective, device, ts);
    e.name_id = id(op);
    e.aux_id = group.empty() ? 0 : id(group);
    uint64_t c = group.empty() ? task : tf::pack_task_dtype(task, tf::hccl_dtype::kFp16);
    e.words = {dur, bytes, c, tf::pack_stream_pid(stream, 4242)};
    return e;
  }
  tf::Event memcpy(int device, uint64_t ts, uint64_t dur, uint32_t stream, uint64_t task, uint64_t bytes, uint64_t kind) {
    tf::Event e = base(tf::EventType::kMemcpy, device, ts);
    e.words = {dur, bytes, kind | task << 8, tf::pack_stream_pid(stream, 4242)};
    return e;
  }
  tf::Event launch(int device, uint64_t ts, uint32_t stream, uint64_t task, const std::string& name) {
    tf::Event e = base(tf::EventType::kLaunch, device, ts);
    e.name_id = id(name);
    e.words = {task, tf::pack_stream_pid(stream, 4242), 0, 0};
    return e;
  }
  tf::Event step(int device, uint64_t ts, uint64_t dur, uint64_t index, uint64_t job = 1) {
    tf::Event e = base(tf::EventType::kStep, device, ts);
    e.name_id = id("synthetic-job");
    e.words = {job, index, dur, 4242};
    return e;
  }
  tf::Event node_event(tf::EventType type, int device, uint64_t ts, std::array<uint64_t, 4> words) {
    tf::Event e = base(type, device, ts);
    e.words = words;
    return e;
  }

 private:
  tf::Event base(tf::EventType type, int device, uint64_t ts) {
    tf::Event e;
    e.seq = seq_++;
    e.type = type;
    e.device = device;
    e.ts_ns = ts;
    return e;
  }
  std::map<std::string, uint32_t> ids_;
  std::map<uint32_t, std::string> strings_;
  uint64_t seq_ = 0;
};

}  // namespace npukit::testing
