// Budgets from DESIGN.md section 9, attached to benchmarks so every run prints the measured
// figure beside its budget and a verdict. A benchmark reports its figure as a user counter.
#pragma once

#include <string>

namespace npukit::bench {

struct Budget {
  std::string benchmark;  // benchmark name (prefix match, so arguments may follow)
  std::string counter;    // the user counter holding the figure
  std::string unit;       // printed after the figure, e.g. "M tasks/s"
  double scale;           // figure = counter / scale
  bool at_least;          // true: figure >= limit passes; false: figure <= limit passes
  double limit;
  std::string reference;  // where the budget comes from
};

// Registers a budget; call from a static initializer in each bench file.
bool register_budget(Budget b);

}  // namespace npukit::bench
