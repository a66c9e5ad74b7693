#include "profiler/analyze/time_sanity.hpp"

#include <algorithm>
#include <string>
#include <vector>

namespace npukit::prof {

namespace {

// The window a row's times must fall in: kMaxSessionNs either side of the session's start.
struct Window {
  int64_t lo, hi;
  bool holds(int64_t t) const { return t >= lo && t <= hi; }
  bool holds(int64_t start, int64_t end) const { return holds(start) && holds(end) && end >= start; }
};

template <typename T, typename Pred>
void drop(std::vector<T>& rows, const char* table, Pred possible, ProfileData& p) {
  std::size_t before = rows.size();
  std::erase_if(rows, [&](const T& r) { return !possible(r); });
  if (std::size_t n = before - rows.size(); n > 0) {
    p.damage.push_back(std::string(table) + ": " + std::to_string(n) + " row" + (n == 1 ? "" : "s") +
                       " with impossible times skipped");
  }
}

}  // namespace

void drop_impossible_times(ProfileData& p) {
  if (p.session_start == 0 && p.session_end == 0) return;  // no session recorded: no window to judge by
  constexpr int64_t kMaxStart = int64_t{1} << 62;
  if (p.session_start < 0 || p.session_start > kMaxStart || p.session_end < p.session_start ||
      p.session_end - p.session_start > kMaxSessionNs) {
    p.damage.push_back("SESSION_TIME_INFO: impossible session times (" + std::to_string(p.session_start) + " to " +
                       std::to_string(p.session_end) + ")");
    p.session_start = std::max<int64_t>(0, std::min(p.session_start, kMaxStart));
    p.session_end = p.session_start;
  }
  const Window w{p.session_start - kMaxSessionNs, p.session_start + kMaxSessionNs};
  drop(p.tasks, "TASK", [&](const TaskRecord& t) { return w.holds(t.start, t.end); }, p);
  drop(p.collectives, "COMMUNICATION_OP", [&](const CollectiveRecord& c) { return w.holds(c.start, c.end); }, p);
  drop(p.steps, "STEP_TIME", [&](const StepWindow& s) { return w.holds(s.window.start, s.window.end); }, p);
  drop(p.memory, "NPU_MEM", [&](const MemorySample& m) { return w.holds(m.ts); }, p);
  drop(p.events, "EMU_EVENT", [&](const NodeEvent& e) { return w.holds(e.ts); }, p);
  drop(p.alloc_calls, "NPU_OP_MEM",
       [&](const ProfileData::AllocCall& a) { return w.holds(a.ts) && a.host_ns >= 0 && a.host_ns <= kMaxSessionNs; }, p);
  drop(p.launches, "CANN_API", [&](const LaunchRecord& l) { return w.holds(l.start, l.end); }, p);
  drop(p.counters, "EMU_COUNTER", [&](const CounterSample& c) { return w.holds(c.ts); }, p);
}

}  // namespace npukit::prof
