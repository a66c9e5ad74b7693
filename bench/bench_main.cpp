// Shared main for the bench binaries: runs Google Benchmark as usual, then prints a table of
// each budgeted figure, its budget and a verdict. Exits 0 even when over budget (benches inform;
// they are not tests) unless --budget-strict is given.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "bench/budget.hpp"

namespace npukit::bench {

namespace {

std::vector<Budget>& budgets() {
  static std::vector<Budget> b;
  return b;
}

struct Row {
  const Budget* budget;
  std::string run;  // the run's name: one budget can judge several runs (an 8-NPU node, a cluster)
  double figure;
};

// "BM_X/node_8/200/iterations:5" -> "BM_X/node_8/200": the argument shows, the run count does not.
std::string run_label(std::string name) {
  if (auto at = name.find("/iterations:"); at != std::string::npos) name.erase(at);
  return name;
}

// A figure to judge: a single run, or the mean or median of repetitions. A spread (stddev, cv)
// is not a figure of the thing measured; judging it against the budget printed "OVER BUDGET".
bool judged(const benchmark::BenchmarkReporter::Run& run) {
  return run.run_type != benchmark::BenchmarkReporter::Run::RT_Aggregate || run.aggregate_name == "mean" ||
         run.aggregate_name == "median";
}

class BudgetReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    ConsoleReporter::ReportRuns(runs);
    for (const auto& run : runs) {
      if (!judged(run)) continue;
      for (const auto& b : budgets()) {
        std::string name = run.benchmark_name();
        auto it = run.counters.find(b.counter);
        if (name.rfind(b.benchmark, 0) == 0 && it != run.counters.end()) {
          rows.push_back({&b, run_label(name), it->second.value / b.scale});
        }
      }
    }
  }
  std::vector<Row> rows;
};

}  // namespace

bool register_budget(Budget b) {
  budgets().push_back(std::move(b));
  return true;
}

}  // namespace npukit::bench

int main(int argc, char** argv) {
  bool strict = false;
  std::vector<char*> args;
  for (int i = 0; i < argc; ++i) {
    if (std::strcmp(argv[i], "--budget-strict") == 0) strict = true;
    else args.push_back(argv[i]);
  }
  int n = static_cast<int>(args.size());
  benchmark::Initialize(&n, args.data());
  npukit::bench::BudgetReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();
  bool all_ok = true;
  std::printf("\n%-48s %16s %24s  %s\n", "figure", "measured", "budget", "verdict");
  for (const auto& row : reporter.rows) {
    const auto& b = *row.budget;
    bool ok = b.at_least ? row.figure >= b.limit : row.figure <= b.limit;
    all_ok = all_ok && ok;
    char budget[64];
    std::snprintf(budget, sizeof budget, "%s %.3g %s", b.at_least ? ">=" : "<=", b.limit, b.unit.c_str());
    std::printf("%-48s %10.3f %-5s %24s  %s  (%s)\n", row.run.c_str(), row.figure, b.unit.c_str(),
                budget, ok ? "OK" : "OVER BUDGET", b.reference.c_str());
  }
  return strict && !all_ok ? 1 : 0;
}
