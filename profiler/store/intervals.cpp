#include "profiler/store/intervals.hpp"

#include <algorithm>
#include <iterator>

namespace npukit::prof {

Intervals union_of(Intervals spans) {
  auto earlier = [](const Interval& a, const Interval& b) { return a.start < b.start; };
  // Spans mostly come in start order already (tasks are stored by start): no sort for those.
  if (!std::is_sorted(spans.begin(), spans.end(), earlier)) std::sort(spans.begin(), spans.end(), earlier);
  Intervals out;
  for (const Interval& s : spans) {
    if (s.end <= s.start) continue;
    if (!out.empty() && s.start <= out.back().end) {
      out.back().end = std::max(out.back().end, s.end);
    } else {
      out.push_back(s);
    }
  }
  return out;
}

Intervals intersect(const Intervals& a, const Intervals& b) {
  Intervals out;
  std::size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    int64_t lo = std::max(a[i].start, b[j].start);
    int64_t hi = std::min(a[i].end, b[j].end);
    if (lo < hi) out.push_back({lo, hi});
    if (a[i].end < b[j].end) ++i;
    else ++j;
  }
  return out;
}

Intervals subtract(const Intervals& a, const Intervals& b) {
  Intervals out;
  std::size_t j = 0;
  for (Interval cur : a) {
    while (j < b.size() && b[j].end <= cur.start) ++j;
    std::size_t k = j;
    while (k < b.size() && b[k].start < cur.end) {
      if (b[k].start > cur.start) out.push_back({cur.start, b[k].start});
      cur.start = std::max(cur.start, b[k].end);
      ++k;
    }
    if (cur.start < cur.end) out.push_back(cur);
  }
  return out;
}

// Binary search for the first interval ending after the window starts: O(log n + k).
Intervals clip(const Intervals& a, Interval window) {
  Intervals out;
  auto it = std::upper_bound(a.begin(), a.end(), window.start, [](int64_t t, const Interval& i) { return t < i.end; });
  for (; it != a.end() && it->start < window.end; ++it) {
    Interval c{std::max(it->start, window.start), std::min(it->end, window.end)};
    if (c.start < c.end) out.push_back(c);
  }
  return out;
}

int64_t total(const Intervals& a) {
  int64_t sum = 0;
  for (const Interval& i : a) sum += i.length();
  return sum;
}

Overlap analyze_overlap(const std::vector<TaskSpan>& tasks) {
  Intervals compute, comm;
  for (const TaskSpan& t : tasks) (t.communication ? comm : compute).push_back({t.start, t.end});
  Overlap o;
  o.compute = union_of(std::move(compute));
  o.communication = union_of(std::move(comm));
  o.comm_not_overlapped = subtract(o.communication, o.compute);
  Intervals& busy = o.busy;
  busy.reserve(o.compute.size() + o.communication.size());
  std::merge(o.compute.begin(), o.compute.end(), o.communication.begin(), o.communication.end(), std::back_inserter(busy),
             [](const Interval& a, const Interval& b) { return a.start < b.start; });
  busy = union_of(std::move(busy));
  if (!busy.empty()) o.free = subtract(Intervals{{busy.front().start, busy.back().end}}, busy);
  return o;
}

StepBreakdown breakdown(const Overlap& overlap, Interval window) {
  StepBreakdown b;
  b.step = window.length();
  Intervals compute = clip(overlap.compute, window);
  Intervals comm = clip(overlap.communication, window);
  Intervals busy = compute;
  busy.insert(busy.end(), comm.begin(), comm.end());
  busy = union_of(std::move(busy));
  b.computing = total(compute);
  b.communication = total(comm);
  b.comm_not_overlapped = total(subtract(comm, compute));
  b.overlapped = b.communication - b.comm_not_overlapped;
  b.free = b.step - total(busy);
  b.preparing = busy.empty() ? b.step : busy.front().start - window.start;
  return b;
}

}  // namespace npukit::prof
