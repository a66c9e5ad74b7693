// A TaskObserver that keeps every finished task in memory: for tests, the runtime demo and
// short what-if runs (long runs publish to the telemetry bus instead).
#pragma once

#include <vector>

#include "emulator/engine/engine.hpp"

namespace npukit::emu {

class TimelineRecorder final : public TaskObserver {
 public:
  void on_task_end(const TaskRecord& record) override { records_.push_back(record); }
  const std::vector<TaskRecord>& records() const { return records_; }
  void clear() { records_.clear(); }

 private:
  std::vector<TaskRecord> records_;
};

}  // namespace npukit::emu
