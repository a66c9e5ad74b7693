// A job's step times as the job sees them. Step k is done when every rank has finished it; its
// time runs from when step k-1 was done on every rank (for the first step, from the earliest
// rank's start) to when the last rank finished step k. Ranks kept in lock-step by collectives give
// each rank's own step time; ranks that run free (a burn on each chip) give the slowest rank's
// pace, which is the job's: it ends when its slowest rank does.
#pragma once

#include <cstddef>
#include <limits>
#include <map>
#include <vector>

#include "emulator/runtime/program_runner.hpp"

namespace npukit::emu {

class JobSteps {
 public:
  explicit JobSteps(std::size_t ranks = 1) : ranks_(ranks) {}

  // One rank finished one step: appends to `step_ms` (virtual ms) every step now done on all
  // ranks, in step order.
  void add(const StepReport& s, std::vector<double>& step_ms);

 private:
  struct Pending {
    std::size_t ranks = 0;
    Nanos start = std::numeric_limits<Nanos>::max();
    Nanos end = 0;
  };
  std::size_t ranks_;
  std::map<int64_t, Pending> pending_;  // by step, until every rank has finished it
  int64_t next_ = 0;                    // the first step not yet done on every rank
  Nanos last_done_ = -1;                // when step next_ - 1 was done on every rank
};

}  // namespace npukit::emu
