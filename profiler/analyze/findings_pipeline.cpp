// The pipeline-bubble rule: the stages of a pipeline-parallel job waiting for each other at their
// receives, set beside 1F1B's own floor for its stages and micro-batches.
#include <algorithm>
#include <cstdio>
#include <map>
#include <string>

#include "profiler/analyze/findings_internal.hpp"
#include "profiler/analyze/ranks.hpp"
#include "profiler/analyze/report_build.hpp"

namespace npukit::prof {

// Pipeline stages wait for each other at their Recvs: a rank's Recv time per step (the compute
// stream is blocked there, so none of it overlaps compute) is its share of the bubble. Measured on
// the stages the others wait for (critical_ranks: every stage of a balanced pipeline), the
// median of them, whose step is their work and their waits: a stage waiting beyond that waits
// for a slower stage (slow_rank), as in a collective (the median of all stages, taken before,
// ranked a stage slowed by a quarter below the bubble it caused); set beside 1F1B's own floor,
// (stages - 1) / (micro-batches + stages - 1).
void pipeline_bubble(const ProfileData& d, const Report& r, double stage_links_cost, std::vector<Finding>& out,
                     Measured& measured) {
  // Each rank's receives per step over the same steps as its step time (RankRow: after the
  // warm-up; the recording's whole receive time over them read N/(N-1) of the wait).
  if (std::none_of(r.ranks.begin(), r.ranks.end(), [](const RankRow& row) { return row.receive > 0; })) return;
  std::vector<std::pair<double, const RankRow*>> per_step;  // (receive time per step, rank)
  for (const RankRow* row : critical_ranks(r.ranks)) per_step.push_back({row->receive, row});
  std::sort(per_step.begin(), per_step.end());
  const RankRow* median_rank = per_step[per_step.size() / 2].second;
  // What a slow link between two stages adds to the receives is slow_link's cost, not the schedule's.
  const double wait = std::max(0.0, per_step[per_step.size() / 2].first - stage_links_cost);
  double step = 0;
  for (const RankRow& row : r.ranks) step = std::max(step, row.step);
  measured["pipeline_bubble"] = wait;
  std::string who = "the median stage";  // of a balanced pipeline's, every one
  if (r.ranks.size() == 1) who = r.header.rank_label(median_rank->device);  // a report of one rank (--rank)
  else if (per_step.size() == 1) who = r.header.rank_label(median_rank->device) + ", the stage the others wait for,";
  else if (per_step.size() < r.ranks.size()) who = "the median of the stages the others wait for, " + r.header.rank_label(median_rank->device) + ",";
  if (step <= 0 || wait / step < 0.05) return;
  std::string layout;
  if (auto it = d.job_settings.find("layout"); it != d.job_settings.end()) layout = it->second;
  int stages = 0, micro = 0;
  std::sscanf(layout.c_str() + std::min(layout.size(), layout.find(" x pp")), " x pp%d (%d micro", &stages, &micro);
  const double floor_share = stages > 1 && micro > 0 ? static_cast<double>(stages - 1) / (micro + stages - 1) : -1;
  std::string against_floor;
  if (floor_share >= 0) {
    std::string schedule = std::to_string(stages) + " stages over " + std::to_string(micro) + " micro-batches";
    // The floor is a share of the pipelined part of the step; the step also holds work outside
    // the pipeline (the optimizer, a data-parallel gradient allreduce), so a stage can wait less
    // than the floor of the whole step (dp2 x pp4 pipeline-train: 26.9% against 27.3%).
    against_floor = wait / step >= floor_share
                        ? "; " + schedule + " idle " + pct(floor_share) +
                              " of the pipelined step even when balanced (1F1B's (p-1)/(m+p-1)), the other " +
                              pct(wait / step - floor_share) + " is transfers and stages of unequal work"
                        : "; 1F1B's floor for " + schedule + " is " + pct(floor_share) +
                              " of the pipelined part of the step ((p-1)/(m+p-1)), and the step also holds work "
                              "outside the pipeline (the optimizer, a data-parallel gradient allreduce)";
  }
  Finding f{"pipeline_bubble",
            "Pipeline bubble: " + who + " waits " + ms(wait) + " per step (" + pct(wait / step) + " of the step) at its receives for the neighbouring stages" +
                against_floor + ".",
            {{"wait_ms_per_step", wait / 1e6}, {"percent_of_step", 100 * wait / step}}};
  if (floor_share >= 0) f.numbers.push_back({"one_f_one_b_floor_percent", 100 * floor_share});
  f.cost_ns_per_step = wait, f.step_ns = step;
  out.push_back(std::move(f));
}

}  // namespace npukit::prof
