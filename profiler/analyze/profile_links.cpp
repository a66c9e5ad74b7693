#include "profiler/analyze/profile_links.hpp"

#include <algorithm>
#include <string>

#include "telemetry/fields.hpp"

namespace npukit::prof {

namespace {

// Each link's lowest trained rate during the recording (a degraded link reads 25%): from its
// counter samples, and from the link_state_changed events that say when it retrained (a fault
// shorter than the sampling interval, as a job's own timeline, falls between two samples).
Status load_link_rates(Db& db, ProfileData& p) {
  auto counters = db.has_column("EMU_COUNTER", "fieldId");
  if (!counters.ok()) return counters.status();
  auto types = db.has_table("EMU_EVENT_TYPE");
  if (!types.ok()) return types.status();
  auto events = db.has_table("EMU_EVENT");  // a damaged recording may lack it (the report says so)
  if (!events.ok()) return events.status();
  std::string sql;
  if (*counters) {
    sql = "SELECT linkId AS l, value AS v FROM EMU_COUNTER WHERE linkId >= 0 AND fieldId = " +
          std::to_string(telemetry::fid::kLinkRatePercent);
  }
  if (*types && *events) {
    sql += std::string(sql.empty() ? "" : " UNION ALL ") +
           "SELECT e.a AS l, e.c AS v FROM EMU_EVENT e JOIN EMU_EVENT_TYPE t ON t.id = e.type "
           "WHERE t.name = 'link_state_changed' AND e.c > 0";  // c 0: recorded before events said
  }
  if (sql.empty()) return Status::Ok();
  auto q = db.prepare("SELECT l, min(v) FROM (" + sql + ") GROUP BY l");
  if (!q.ok()) return q.status();
  while (q->next()) {
    auto link = p.links.find(q->i64(0));
    if (link != p.links.end()) link->second.least_rate_percent = q->f64(1);
  }
  return q->status();
}

}  // namespace

Status load_links(Db& db, ProfileData& p) {
  auto has = db.has_table("EMU_LINK");
  if (!has.ok() || !*has) return has.status();
  auto latency = db.has_column("EMU_LINK", "latencyNs");
  if (!latency.ok()) return latency.status();
  auto q = db.prepare(std::string("SELECT l.linkId, l.deviceA, l.deviceB, s.value, l.peakBytesPerS, ") +
                      (*latency ? "l.latencyNs" : "0") + " FROM EMU_LINK l LEFT JOIN STRING_IDS s ON s.id = l.kind");
  if (!q.ok()) return q.status();
  while (q->next()) {
    p.links[q->i64(0)] = {q->i64(0), static_cast<int>(q->i64(1)), static_cast<int>(q->i64(2)), q->text(3), q->f64(4),
                          std::max(0.0, q->f64(5))};
  }
  NPUKIT_RETURN_IF_ERROR(q->status());
  return load_link_rates(db, p);
}

}  // namespace npukit::prof
