// The subcommands behind npu-prof's parser (cli.cpp): each takes its parsed arguments, runs the
// library and returns an exit code from cli.hpp, printing one line per failure.
#pragma once

#include <atomic>
#include <optional>
#include <string>

#include "profiler/record/recorder.hpp"

namespace npukit::prof {

struct RecordArgs {
  RecordOptions options;
};

struct ReportArgs {
  std::string path;
  std::string format = "text";
  int top = 10;
  std::optional<int64_t> step;
  std::optional<int> rank;
  std::string out_dir;  // csv files
  bool full = false;     // text: every section
  std::string section;  // text: one section
  std::string html;     // write the HTML report here
};

struct ExportArgs {
  std::string path;
  std::string chrome;
  std::optional<int> rank;
  std::string steps;  // "A:B" (inclusive, numbered from 1), "N", "all", or "" for the default
  std::string ranks;  // "0,3", or "" for every rank
};

struct DiffArgs {
  std::string a, b;
  std::string format = "text";
  int top = 20;
};

int run_record(RecordArgs& args, const std::atomic<bool>* stop);
int run_report(const ReportArgs& args);
int run_export(const ExportArgs& args);
int run_diff(const DiffArgs& args);

}  // namespace npukit::prof
