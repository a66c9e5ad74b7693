#include "emulator/runtime/job_steps.hpp"

#include <algorithm>

namespace npukit::emu {

void JobSteps::add(const StepReport& s, std::vector<double>& step_ms) {
  Pending& p = pending_[s.step];
  ++p.ranks;
  p.start = std::min(p.start, s.start);
  p.end = std::max(p.end, s.end);
  for (auto it = pending_.find(next_); it != pending_.end() && it->second.ranks >= ranks_;
       it = pending_.find(next_)) {
    Nanos from = last_done_ >= 0 ? last_done_ : it->second.start;
    step_ms.push_back(static_cast<double>(it->second.end - from) / 1e6);
    last_done_ = it->second.end;
    pending_.erase(it);
    ++next_;
  }
}

}  // namespace npukit::emu
