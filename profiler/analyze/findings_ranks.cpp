// Per-rank rows and the slow-rank rule: which rank the others wait for, and in which phase of its
// step it loses the time.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>

#include "profiler/analyze/findings_internal.hpp"
#include "profiler/analyze/ranks.hpp"

namespace npukit::prof {

namespace {

constexpr double kStragglerShare = 0.05;  // own work this much above the other ranks' median
constexpr double kTiedShare = 0.01;       // a rank this close (of its work) to the most own work is as slow
constexpr double kPartShare = 0.95;       // a straggler costing less than this of its excess: said so

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// The phases a rank's own work splits into, as named in the finding.
struct Phase {
  const char* name;
  double RankRow::*field;
};
constexpr Phase kPhases[] = {{"computing", &RankRow::computing},
                             {"waiting for input", &RankRow::preparing},
                             {"idle between tasks", &RankRow::other_idle}};

// The median of `value` over every rank (its index) that `skip` does not take.
template <typename Skip, typename Value>
double others_median(const std::vector<RankRow>& ranks, Skip skip, Value value) {
  std::vector<double> v;
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    if (!skip(i)) v.push_back(value(ranks[i]));
  }
  return median(std::move(v));
}

}  // namespace

FirstSteps first_steps(const Report& r) {
  FirstSteps first;
  for (const StepRow& s : r.steps) {
    auto [it, fresh] = first.try_emplace(s.device, s.step, 0);
    it->second.first = std::min(it->second.first, s.step), ++it->second.second;
  }
  return first;
}

bool is_warm_up(const FirstSteps& first, const StepRow& s) {
  auto it = first.find(s.device);
  return it != first.end() && it->second.second > 1 && s.step == it->second.first;
}

std::vector<RankRow> rank_rows(const Report& r) {
  // A device's first step is its warm-up (compiles, first allocations, a slow host's first input
  // twice as slow): with later steps recorded, the rows are theirs, as the step time npu-run
  // prints and the diagnosis matrix's truth are (slow_host read 12.45 ms for a true 10.0: (19.8 +
  // 3 x 10.0) / 4).
  const FirstSteps first = first_steps(r);
  std::map<int, RankRow> by_device;
  for (const StepRow& s : r.steps) {
    if (is_warm_up(first, s)) continue;
    RankRow& row = by_device[s.device];
    row.device = s.device, ++row.steps;
    row.step += static_cast<double>(s.b.step), row.computing += static_cast<double>(s.b.computing);
    row.communication += static_cast<double>(s.b.communication);
    row.comm_exposed += static_cast<double>(s.b.comm_not_overlapped), row.preparing += static_cast<double>(s.b.preparing);
    row.other_idle += static_cast<double>(s.b.free - s.b.preparing), row.bubble += static_cast<double>(s.bubble_not_overlapped);
    row.receive += static_cast<double>(s.bubble);
  }
  std::vector<RankRow> out;
  for (auto& [device, row] : by_device) {
    auto n = static_cast<double>(row.steps);
    row.step /= n, row.computing /= n, row.communication /= n, row.comm_exposed /= n, row.preparing /= n, row.other_idle /= n, row.bubble /= n, row.receive /= n;
    auto rank = r.header.device_ranks.find(device);
    row.rank = rank == r.header.device_ranks.end() ? -1 : rank->second;
    out.push_back(row);
  }
  return out;
}

StragglerVerdict straggler(const std::vector<RankRow>& ranks) {
  StragglerVerdict v;
  if (ranks.size() < 2) return v;
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    double base = others_median(ranks, [i](std::size_t j) { return j == i; }, [](const RankRow& r) { return r.work(); });
    double excess = ranks[i].work() - base;
    if (v.index >= 0 && excess <= v.excess_ns) continue;
    v.index = static_cast<int>(i), v.excess_ns = excess, v.baseline_ns = base;
  }
  const auto slowest = static_cast<std::size_t>(v.index);
  std::vector<bool> slow_set(ranks.size(), false);
  slow_set[slowest] = true;
  for (const RankRow* row : critical_ranks(ranks)) {  // as slow as it: within 1% of the most own work
    const auto i = static_cast<std::size_t>(row - ranks.data());
    if (i != slowest) v.tied.push_back(static_cast<int>(i));
  }
  if (2 * (v.tied.size() + 1) >= ranks.size()) v.tied.clear();  // half or more alike: they set the pace
  for (int i : v.tied) slow_set[static_cast<std::size_t>(i)] = true;
  // The median of `value` over the ranks outside the slow set.
  auto others = [&](auto value) { return others_median(ranks, [&](std::size_t j) { return slow_set[j]; }, value); };
  v.baseline_ns = others([](const RankRow& r) { return r.work(); });
  v.excess_ns = ranks[slowest].work() - v.baseline_ns;
  double worst_phase = -1;
  for (const Phase& p : kPhases) {
    double excess = ranks[slowest].*p.field - others([&](const RankRow& r) { return r.*p.field; });
    if (excess > worst_phase) worst_phase = excess, v.phase = p.name, v.phase_excess_ns = excess;
  }
  v.slow = v.baseline_ns > 0 && v.excess_ns / v.baseline_ns >= kStragglerShare;
  return v;
}

bool straggler_apart_from(const std::vector<RankRow>& ranks, int device) {
  if (ranks.size() < 2) return false;
  const StragglerVerdict v = straggler(ranks);
  return v.slow && ranks[static_cast<std::size_t>(v.index)].device != device;
}

double straggler_threshold() { return kStragglerShare; }

const RankRow& critical_rank(const std::vector<RankRow>& ranks) {
  return *std::max_element(ranks.begin(), ranks.end(), [](const RankRow& a, const RankRow& b) { return a.work() < b.work(); });
}

std::vector<const RankRow*> critical_ranks(const std::vector<RankRow>& ranks) {
  std::vector<const RankRow*> out;
  if (ranks.empty()) return out;
  const double most = critical_rank(ranks).work();
  for (const RankRow& r : ranks) {
    if (most - r.work() <= kTiedShare * most) out.push_back(&r);
  }
  return out;
}

std::string straggler_label(const ReportHeader& header, const std::vector<RankRow>& ranks, const StragglerVerdict& v) {
  std::string out = header.rank_label(ranks[static_cast<std::size_t>(v.index)].device);
  for (std::size_t k = 0; k < v.tied.size(); ++k) {
    out += (k + 1 == v.tied.size() ? " and " : ", ") + header.rank_label(ranks[static_cast<std::size_t>(v.tied[k])].device);
  }
  return out;
}

namespace {

// Each host's ranks (rows of r.ranks), in host order; empty unless recorded on several hosts.
std::vector<std::pair<std::string, std::vector<const RankRow*>>> ranks_by_host(const Report& r) {
  std::vector<std::pair<std::string, std::vector<const RankRow*>>> out;
  for (const std::string& h : r.header.hosts()) out.push_back({h, {}});
  for (const RankRow& row : r.ranks) {
    for (auto& [host, rows] : out) {
      if (host == r.header.host_of(row.device)) rows.push_back(&row);
    }
  }
  std::erase_if(out, [](const auto& h) { return h.second.empty(); });
  return out;
}

// The median over one host's ranks of `value`.
template <typename Value>
double host_median(const std::vector<const RankRow*>& rows, Value value) {
  std::vector<double> v;
  for (const RankRow* row : rows) v.push_back(value(*row));
  return median(std::move(v));
}

// The least over one host's ranks of `value`: its fastest rank.
template <typename Value>
double host_least(const std::vector<const RankRow*>& rows, Value value) {
  double least = value(*rows.front());
  for (const RankRow* row : rows) least = std::min(least, value(*row));
  return least;
}

}  // namespace

HostVerdict slow_host_verdict(const Report& r) {
  HostVerdict v;
  auto hosts = ranks_by_host(r);
  if (hosts.size() < 2) return v;
  auto work = [](const RankRow& row) { return row.work(); };
  // The median over the hosts in `among` (all but `skip`) of each one's median.
  auto median_of = [&](auto value, auto among) {
    std::vector<double> m;
    for (std::size_t i = 0; i < hosts.size(); ++i) {
      if (among(i)) m.push_back(host_median(hosts[i].second, value));
    }
    return m.empty() ? 0.0 : median(std::move(m));
  };
  // Each host against the median of the others: every one the threshold over it is slow (two
  // slow hosts of four were one named and one folded into the others' baseline). A slow host is
  // slow throughout: even its fastest rank is over the threshold, and it has two ranks or more,
  // or one slow NPU is told from its host by nothing (one degraded NPU of a host with two ranks
  // made their median, and so the host, slow: "look at the host", its cost halved).
  std::vector<std::pair<double, std::size_t>> slow;  // (excess over the others, host), slowest first
  std::size_t worst = 0;
  double worst_excess = 0;
  for (std::size_t i = 0; i < hosts.size(); ++i) {
    double others = median_of(work, [i](std::size_t j) { return j != i; });
    double excess = host_median(hosts[i].second, work) - others;
    if (i == 0 || excess > worst_excess) worst = i, worst_excess = excess;
    double fastest_excess = host_least(hosts[i].second, work) - others;
    bool throughout = hosts[i].second.size() >= 2 && others > 0 && fastest_excess / others >= kStragglerShare;
    if (throughout) slow.emplace_back(excess, i);
  }
  std::sort(slow.begin(), slow.end(), std::greater<>());
  if (!slow.empty()) worst = slow.front().second;
  std::set<std::size_t> slow_set;
  for (const auto& [excess, i] : slow) slow_set.insert(i);
  if (slow_set.size() == hosts.size()) slow_set = {worst};  // all "slow": the slowest against the rest
  auto fast = [&](std::size_t j) { return slow_set.empty() ? j != worst : !slow_set.count(j); };
  v.host = hosts[worst].first;
  v.baseline_ns = median_of(work, fast);
  v.work_ns = host_median(hosts[worst].second, work);
  v.excess_ns = v.work_ns - v.baseline_ns;
  for (std::size_t i : slow_set.empty() ? std::set<std::size_t>{worst} : slow_set) {
    for (const RankRow* row : hosts[i].second) v.ranks.push_back(row->rank >= 0 ? row->rank : row->device);
  }
  for (const auto& [excess, i] : slow) {
    if (slow_set.count(i)) v.slow_hosts.push_back(hosts[i].first);
  }
  std::sort(v.ranks.begin(), v.ranks.end());
  double worst_phase = -1;
  for (const Phase& p : kPhases) {
    auto field = [&](const RankRow& row) { return row.*p.field; };
    double excess = host_median(hosts[worst].second, field) - median_of(field, fast);
    if (excess > worst_phase) worst_phase = excess, v.phase = p.name, v.phase_excess_ns = excess;
  }
  v.slow = !v.slow_hosts.empty() && v.baseline_ns > 0 && v.excess_ns / v.baseline_ns >= kStragglerShare;
  if (!v.slow) v.slow_hosts.clear();
  return v;
}

namespace {

// "8-15", or "8, 10, 12" when they do not run on.
std::string rank_list(const std::vector<int>& ranks) {
  bool run = !ranks.empty() && ranks.back() - ranks.front() + 1 == static_cast<int>(ranks.size());
  if (run && ranks.size() > 1) return std::to_string(ranks.front()) + "-" + std::to_string(ranks.back());
  std::string out;
  for (int rank : ranks) out += (out.empty() ? "" : ", ") + std::to_string(rank);
  return out;
}

}  // namespace

void slow_host(const HostVerdict& v, std::vector<Finding>& out, Measured& measured) {
  if (v.host.empty()) return;
  measured["slow_host"] = std::max(0.0, v.excess_ns);
  if (!v.slow) return;
  std::string who = "Straggler host: " + v.host + " (ranks " + rank_list(v.ranks) + ") works ";
  if (v.slow_hosts.size() > 1) {
    who = "Straggler hosts: " + v.slow_host_names() + " (ranks " + rank_list(v.ranks) + "); the slowest, " + v.host + ", works ";
  }
  Finding f{"slow_host",
            who + ms(v.work_ns) + " per step against " + ms(v.baseline_ns) + " on the other hosts (the median), " +
                pct(v.excess_ns / v.baseline_ns) + " slower; its ranks lose " + ms(v.phase_excess_ns) + " of it " + v.phase +
                " (the phase where they differ most), and every rank waits for them in the cross-host collectives.",
            {{"work_ms_per_step", v.work_ns / 1e6},
             {"other_hosts_median_ms_per_step", v.baseline_ns / 1e6},
             {"percent_slower", 100 * v.excess_ns / v.baseline_ns},
             {"phase_excess_ms_per_step", v.phase_excess_ns / 1e6},
             {"ranks", static_cast<double>(v.ranks.size())},
             {"hosts", static_cast<double>(v.slow_hosts.size())}}};
  f.cost_ns_per_step = v.excess_ns, f.step_ns = v.work_ns;
  out.push_back(std::move(f));
}

namespace {

// The steps (each device's warm-up left out, as in rank_rows) in which `device` worked
// kStragglerShare more than the median of the ranks not in `slow` that step, and its mean excess
// in them. A fault that struck mid-run slows some steps only: its average over all of them said
// "17% slower" of a rank 33% slower from step 11 on and as fast as the others before.
struct SlowSteps {
  std::vector<int64_t> steps;  // ascending
  int of = 0;                  // steps compared
  int64_t first = 0, last = 0; // the first and last step compared
  double excess_ns = 0;        // mean over `steps`
  double rest_share = 0;       // the other steps' mean excess, share of their baseline
};
SlowSteps slow_steps(const Report& r, int device, const std::set<int>& slow) {
  const FirstSteps first = first_steps(r);
  std::map<int64_t, std::vector<double>> others;
  std::map<int64_t, double> mine;
  for (const StepRow& s : r.steps) {
    if (is_warm_up(first, s)) continue;
    double work = static_cast<double>(s.b.step - s.b.comm_not_overlapped);
    if (s.device == device) mine[s.step] = work;
    else if (!slow.count(s.device)) others[s.step].push_back(work);
  }
  SlowSteps out;
  double rest = 0, rest_base = 0;
  for (const auto& [step, work] : mine) {
    auto o = others.find(step);
    if (o == others.end()) continue;
    double base = median(o->second);
    if (out.of++ == 0) out.first = step;
    out.last = step;
    if (base > 0 && (work - base) / base >= kStragglerShare) {
      out.steps.push_back(step), out.excess_ns += work - base;
    } else {
      rest += work - base, rest_base += base;
    }
  }
  if (!out.steps.empty()) out.excess_ns /= static_cast<double>(out.steps.size());
  out.rest_share = rest_base > 0 ? rest / rest_base : 0;
  return out;
}

// ", all of it in 10 of 19 steps (steps 11-20), 78.915 ms more in each (a cause that began
// during the run)": only when the slow steps are one run from the first or to the last step
// compared and the other steps were as fast as the rest of the ranks'; else "" (a rank slow
// throughout, jitter taking some of its steps under the threshold, read as a cause that came).
// Whether `device` throttled while most other ranks' devices did not (a hot chip, not a node
// under its power limit).
bool throttled_apart(const Report& r, int device) {
  std::set<int> throttled;
  for (const ThrottlePeriod& p : r.throttles) throttled.insert(p.device);
  if (!throttled.count(device)) return false;
  int others = 0, others_throttled = 0;
  for (const RankRow& row : r.ranks) {
    if (row.device == device) continue;
    ++others, others_throttled += static_cast<int>(throttled.count(row.device));
  }
  return 2 * others_throttled < others;
}

std::size_t row_of(const std::vector<RankRow>& ranks, int device) {
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    if (ranks[i].device == device) return i;
  }
  return 0;
}

bool pipeline(const ProfileData& d) {
  return std::any_of(d.collectives.begin(), d.collectives.end(), [](const CollectiveRecord& c) { return c.src_rank >= 0; });
}

std::string when_slow(const SlowSteps& s) {
  if (s.steps.size() < 2 || static_cast<int>(s.steps.size()) == s.of) return "";
  const bool run = s.steps.back() - s.steps.front() + 1 == static_cast<int64_t>(s.steps.size());
  const bool at_an_end = s.steps.front() == s.first || s.steps.back() == s.last;
  if (!run || !at_an_end || std::abs(s.rest_share) >= kStragglerShare / 2) return "";
  return ", all of it in " + std::to_string(s.steps.size()) + " of " + std::to_string(s.of) + " steps (steps " +
         std::to_string(s.steps.front()) + "-" + std::to_string(s.steps.back()) + "), " + ms(s.excess_ns) +
         " more in each (a cause that " + (s.steps.front() == s.first ? "ended" : "began") + " during the run)";
}

}  // namespace

void slow_rank(const ProfileData& d, const Report& r, const HostVerdict& host, std::vector<Finding>& out,
               Measured& measured) {
  if (r.ranks.size() < 2) return;
  StragglerVerdict v = straggler(r.ranks);
  measured["slow_rank"] = std::max(0.0, v.excess_ns);
  if (!v.slow) return;
  const RankRow& slow = r.ranks[static_cast<std::size_t>(v.index)];
  // A slow host is the root cause of its ranks' slowness: one finding, not two. So is a
  // throttled clock on the rank's device (the throttling finding costs it; a burn with one hot
  // chip showed both at the same 24.5 ms, the findings' total twice the truth), unless most other
  // ranks' devices throttle too (a 310P3 node under its power limit): then the throttle is not
  // what sets this rank apart.
  if (host.is_slow(r.header.host_of(slow.device))) return;
  if (throttled_apart(r, slow.device)) return;
  // So is a starved input pipeline for a rank whose excess is waiting for input: the rank fed last
  // (its host feeds its ranks one after another) is data_loader_starvation's, not a straggler.
  auto starved = [](const Finding& f) { return f.id == "data_loader_starvation"; };
  if (v.phase == std::string("waiting for input") && std::any_of(out.begin(), out.end(), starved)) return;
  std::set<int> slow_devices = {slow.device};
  for (int i : v.tied) slow_devices.insert(r.ranks[static_cast<std::size_t>(i)].device);
  const SlowSteps steps = slow_steps(r, slow.device, slow_devices);
  // Its extra work costs the step what the others wait for it, which a replay of the collectives
  // at the others' pace tells: little of it when they wait for something else anyway (a slow
  // link's group), part of it when some of it fills a pipeline's bubble or another rank is slow
  // too. The replay takes one pace for the whole run, so only a rank slow in every step is
  // replayed (one slow in some steps read half its cost). It scales only the rank's work between
  // collectives, not what overlaps them (a gradient bucket's allreduce beside the backward pass),
  // so it reads short by up to that overlap (0.38 of 0.49 ms for the matrix's dp2 straggler): it
  // stands when it is lower by more, or says the step hides most of the excess. Otherwise, and
  // where the job cannot be replayed, the excess.
  double cost = v.excess_ns;
  bool hidden = false;
  if (static_cast<int>(steps.steps.size()) == steps.of) {
    std::map<int, double> pace;
    for (int device : slow_devices) pace[device] = v.baseline_ns / r.ranks[row_of(r.ranks, device)].work();
    const std::optional<double> replayed = straggler_replay_cost(d, pace);
    hidden = replayed && *replayed < kHiddenShare * v.excess_ns;
    // What the replay cannot see is at most its collectives' time beside its work: a replay short
    // of the excess by more than that says the step hides part of it (another cause on another rank).
    const double unseen = slow.communication - slow.comm_exposed;
    if (replayed && (hidden || *replayed < v.excess_ns - unseen)) cost = std::min(v.excess_ns, *replayed);
  }
  measured["slow_rank"] = cost;
  const bool one = v.tied.empty();
  std::string name = straggler_label(r.header, r.ranks, v);
  // Ranks joined by collectives wait for the straggler there; ranks that run free do not wait,
  // but the job ends with its slowest rank.
  const bool collectives = !r.comm_types.empty();
  std::string effect = collectives ? (one ? "the other ranks wait for it in their collectives" : "the other ranks wait for them in their collectives")
                                   : "the job, whose ranks share no collective, ends when " + std::string(one ? "this rank does" : "these ranks do");
  if (!hidden && cost < kPartShare * v.excess_ns) {
    effect += "; the step loses " + ms(cost) + " of it (replayed with " + std::string(one ? "it" : "them") +
              " at the others' pace: the rest falls in time the ranks wait for one another anyway" +
              (pipeline(d) ? ", a pipeline's bubble)" : ")");
  }
  if (hidden) {
    effect = "the step hides most of it: the ranks wait in their collectives for other ranks anyway (replayed with " +
             std::string(one ? "it" : "them") + " at the others' pace, the step ends " + ms(cost) + " sooner)";
  }
  std::string who = one ? "Straggler: " + name + " works " : "Stragglers: " + name + " work up to ";
  const std::string when = when_slow(steps);
  Finding f{"slow_rank",
            who + ms(slow.work()) + " per step against " + ms(v.baseline_ns) + " on the other ranks (the median), " +
                pct(v.excess_ns / v.baseline_ns) + " slower on average" + when + "; " +
                (one ? "it loses " : "the slowest loses ") +
                ms(v.phase_excess_ns) + " of it " + v.phase + " (the phase where it differs most), and " + effect + ".",
            {{"work_ms_per_step", slow.work() / 1e6},
             {"others_median_ms_per_step", v.baseline_ns / 1e6},
             {"percent_slower", 100 * v.excess_ns / v.baseline_ns},
             {"phase_excess_ms_per_step", v.phase_excess_ns / 1e6},
             {"device", static_cast<double>(slow.device)},
             {"ranks", static_cast<double>(v.tied.size() + 1)},
             {"slow_steps", static_cast<double>(steps.steps.size())},
             {"steps_compared", static_cast<double>(steps.of)}}};
  if (!when.empty()) f.numbers.push_back({"excess_in_slow_steps_ms", steps.excess_ns / 1e6});
  f.numbers.push_back({"costs_ms_per_step", cost / 1e6});
  f.cost_ns_per_step = cost, f.step_ns = slow.step;
  out.push_back(std::move(f));
}

}  // namespace npukit::prof
