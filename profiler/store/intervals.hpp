// Interval algebra for the derived analysis: the per-device overlap of computation and
// communication (msprof's OVERLAP_ANALYSIS) and the per-step time breakdown
// (step_trace_time: Computing, Communication, Overlapped, Communication(Not Overlapped), Free).
//
// All intervals are half-open [start, end) in ns. An Intervals value is sorted and disjoint
// (union_of() establishes that); the other functions keep it. Pure functions, thread-safe.
#pragma once

#include <cstdint>
#include <vector>

namespace npukit::prof {

struct Interval {
  int64_t start = 0;
  int64_t end = 0;
  int64_t length() const { return end > start ? end - start : 0; }
  bool operator==(const Interval&) const = default;
};
using Intervals = std::vector<Interval>;

// Sorts and merges (touching intervals merge too); drops empty ones.
Intervals union_of(Intervals spans);
Intervals intersect(const Intervals& a, const Intervals& b);
Intervals subtract(const Intervals& a, const Intervals& b);
Intervals clip(const Intervals& a, Interval window);
int64_t total(const Intervals& a);

// One device's busy time split the msprof way.
struct Overlap {
  Intervals compute;         // union of compute tasks (kernels, copies)
  Intervals communication;   // union of collective tasks
  Intervals comm_not_overlapped;  // communication minus compute
  Intervals free;            // gaps between the first and the last busy instant
  Intervals busy;            // compute or communication: the device was doing something
};

struct TaskSpan {
  int64_t start = 0;
  int64_t end = 0;
  bool communication = false;
};
Overlap analyze_overlap(const std::vector<TaskSpan>& tasks);

// The breakdown of one step window. Invariants:
//   computing + comm_not_overlapped + free == step
//   overlapped + comm_not_overlapped == communication
//   preparing <= free (the idle lead before the step's first task)
struct StepBreakdown {
  int64_t step = 0;
  int64_t computing = 0;
  int64_t communication = 0;
  int64_t overlapped = 0;
  int64_t comm_not_overlapped = 0;
  int64_t free = 0;
  int64_t preparing = 0;
};
StepBreakdown breakdown(const Overlap& overlap, Interval window);

}  // namespace npukit::prof
