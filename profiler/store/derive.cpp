#include "profiler/store/derive.hpp"

#include "profiler/store/schema.hpp"

namespace npukit::prof {

Result<std::optional<int64_t>> main_job(Db& db) {
  auto q = db.prepare("SELECT jobId FROM EMU_STEP GROUP BY jobId ORDER BY count(*) DESC, jobId LIMIT 1");
  if (!q.ok()) return q.status();
  std::optional<int64_t> job;
  if (q->next()) job = q->i64(0);
  if (!q->status().ok()) return q->status();
  return job;
}

Result<std::vector<StepWindow>> load_step_windows(Db& db, int64_t job) {
  auto q = db.prepare("SELECT deviceId, stepId, startNs, endNs FROM EMU_STEP WHERE jobId = ? ORDER BY stepId, deviceId");
  if (!q.ok()) return q.status();
  q->bind(1, job);
  std::vector<StepWindow> out;
  while (q->next()) out.push_back({static_cast<int>(q->i64(0)), q->i64(1) + kFirstStep, {q->i64(2), q->i64(3)}});
  if (!q->status().ok()) return q->status();
  return out;
}

Result<uint64_t> write_overlap(Db& db, const std::map<int, Overlap>& overlap) {
  auto ins = db.prepare("INSERT INTO OVERLAP_ANALYSIS VALUES (?, ?, ?, ?, ?)");
  if (!ins.ok()) return ins.status();
  int64_t id = 0;
  for (const auto& [device, o] : overlap) {
    const std::pair<int64_t, const Intervals*> kinds[] = {{enum_id::kOverlapCompute, &o.compute},
                                                          {enum_id::kOverlapCommunication, &o.communication},
                                                          {enum_id::kOverlapCommNotOverlapComp, &o.comm_not_overlapped},
                                                          {enum_id::kOverlapFree, &o.free}};
    for (const auto& [type, intervals] : kinds) {
      for (const Interval& i : *intervals) {
        NPUKIT_RETURN_IF_ERROR(
            ins->bind(1, id++).bind(2, int64_t{device}).bind(3, i.start).bind(4, i.end).bind(5, type).run());
      }
    }
  }
  return static_cast<uint64_t>(id);
}

}  // namespace npukit::prof
