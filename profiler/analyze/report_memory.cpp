#include "profiler/analyze/report_memory.hpp"

#include <algorithm>
#include <map>
#include <utility>

namespace npukit::prof {

void memory_tables(const ProfileData& d, Report& r) {
  std::map<int, MemoryRow> rows;
  const int64_t first_task = r.header.first_task;
  std::map<int, std::pair<int64_t, int64_t>> busy;  // per device, its first task start and last task end
  for (const TaskRecord& t : d.tasks) {
    auto [it, fresh] = busy.try_emplace(t.device, t.start, t.end);
    it->second = {std::min(it->second.first, t.start), std::max(it->second.second, t.end)};
  }
  for (const MemorySample& m : d.memory) {
    auto [it, fresh] = rows.try_emplace(m.device, MemoryRow{m.device, m.bytes, m.ts, m.bytes, m.bytes, 0});
    MemoryRow& row = it->second;
    auto window = busy.find(m.device);
    if (window != busy.end() && m.ts >= window->second.first && m.ts <= window->second.second) ++row.samples_in_job;
    row.ddr = m.ddr;
    // A peak held since before the job (flat memory) is placed at the job's first sample of it,
    // not at a sample taken seconds before the first task (a negative "at" time).
    bool into_job = m.bytes == row.peak_bytes && row.peak_ts < first_task && m.ts >= first_task;
    if (m.bytes > row.peak_bytes || into_job) row.peak_bytes = m.bytes, row.peak_ts = m.ts;
    row.last_bytes = m.bytes;
    ++row.samples;
  }
  for (const auto& [device, peak] : d.allocator_peak) {
    auto [it, fresh] = rows.try_emplace(device, MemoryRow{.device = device});
    it->second.allocated_peak = peak.allocated;
    it->second.reserved_peak = peak.reserved;
  }
  for (auto& [device, row] : rows) {
    auto capacity = d.hbm_capacity.find(device);
    row.capacity_bytes = capacity == d.hbm_capacity.end() ? 0 : capacity->second;
    r.memory.push_back(row);
  }
  constexpr int kSlots = 24;
  int64_t span = std::max<int64_t>(1, d.session_end - d.session_start);
  std::map<std::pair<int, int>, MemoryPoint> slots;
  for (const MemorySample& m : d.memory) {
    int slot = static_cast<int>(std::clamp<int64_t>((m.ts - d.session_start) * kSlots / span, 0, kSlots - 1));
    auto [it, fresh] = slots.try_emplace({m.device, slot}, MemoryPoint{m.device, m.ts, m.bytes});
    if (m.bytes > it->second.bytes) it->second = {m.device, m.ts, m.bytes};
  }
  for (auto& [key, point] : slots) r.memory_timeline.push_back(point);
}

}  // namespace npukit::prof
