#include "profiler/cli/cli.hpp"

#include <signal.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <cstdio>
#include <iostream>

#include "profiler/cli/cli_commands.hpp"
#include "profiler/cli/selftest.hpp"
#include "profiler/render/report_render.hpp"
#include "telemetry/cli/meta.hpp"
#include "telemetry/naming.hpp"
#include "telemetry/version.hpp"

namespace npukit::prof {

namespace {

std::atomic<bool> g_stop{false};
constexpr int kParsed = -1;  // parse(): the command line holds; run it

void on_signal(int) { g_stop.store(true); }

void install_stop_handlers() {
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGHUP, &sa, nullptr);
}

struct Args {
  RecordArgs record;
  ReportArgs report;
  ExportArgs exp;
  DiffArgs diff;
  SelftestArgs selftest;
  std::string duration;
  std::string mode = "lossless";
};

void add_record(CLI::App& app, Args& a) {
  auto* c = app.add_subcommand("record", "record what the node does into DIR/PROF_*/msprof_*.db");
  c->add_option("-o,--output", a.record.options.out_dir, "output directory (created when missing)")->required();
  c->add_option("--node-name,--node", a.record.options.node, "node to record (default $NPU_NODE or npukit)")->type_name("NODE");
  c->add_flag("--attach", a.record.options.attach, "record a running node (with --duration) instead of a command");
  c->add_option("--duration", a.duration, "attach: how long to record, e.g. 10s, 500ms, 2m");
  c->add_option("--mode", a.mode, "lossless: the node waits for the recorder rather than drop an event; lossy: "
                                  "never slows the node, counts what it misses")
      ->check(CLI::IsMember({"lossless", "lossy"}))
      ->capture_default_str();
  c->add_option("command", a.record.options.command, "the command to run, after --");
}

void add_report(CLI::App& app, Args& a) {
  auto* c = app.add_subcommand("report", "summarize a recording (text, msprof CSV files, or JSON)");
  c->add_option("DIR", a.report.path, "the recording: DIR (every rank), one rank's PROF_* directory or .db file")
      ->required();
  c->add_option("--rank", a.report.rank, "only this rank of a multi-rank recording")->check(CLI::Range(0, 65535));
  c->add_option("--format", a.report.format, "text, csv or json")
      ->check(CLI::IsMember({"text", "csv", "json"}))
      ->capture_default_str();
  c->add_option("--top", a.report.top, "rows of the top-N tables")->check(CLI::Range(1, 100000))->capture_default_str();
  c->add_option("--step", a.report.step, "only this step (numbered from 1, as npu-run prints it) in the step breakdown and the op tables")
      ->check(CLI::Range(1, 1 << 30));
  c->add_flag("--full", a.report.full, "text: every section (the default is the summary)");
  std::vector<std::string> sections(std::begin(kReportSections), std::end(kReportSections));
  c->add_option("--section", a.report.section, "text: one section in full")->check(CLI::IsMember(sections));
  c->add_option("--html", a.report.html, "write one self-contained HTML report to this file");
  c->add_option("-o,--output", a.report.out_dir,
                "csv: where to write the files (default: each rank's <PROF_dir>/mindstudio_profiler_output; "
                "with several ranks, DIR/rank_<r>/)");
}

void add_export(CLI::App& app, Args& a) {
  auto* c = app.add_subcommand("export", "export a recording for trace viewers");
  c->add_option("--chrome", a.exp.chrome, "write a Trace Event Format JSON file (Perfetto UI, chrome://tracing, speedscope)")
      ->required();
  c->add_option("DIR", a.exp.path, "the recording")->required();
  c->add_option("--steps", a.exp.steps, "steps to export: A:B (numbered from 1, inclusive), N, or all "
                                        "(default: all of a short run, else steps 2-4)");
  c->add_option("--ranks", a.exp.ranks, "ranks to export, e.g. 0,3 (default: every rank)");
  c->add_option("--rank", a.exp.rank, "only this rank of a multi-rank recording")->check(CLI::Range(0, 65535));
}

void add_diff(CLI::App& app, Args& a) {
  auto* c = app.add_subcommand("diff", "what changed between two recordings, op by op and per step");
  c->add_option("A", a.diff.a, "the baseline recording")->required();
  c->add_option("B", a.diff.b, "the recording to compare")->required();
  c->add_option("--format", a.diff.format, "text or json")->check(CLI::IsMember({"text", "json"}))->capture_default_str();
  c->add_option("--top", a.diff.top, "op rows to show")->check(CLI::Range(1, 100000))->capture_default_str();
}

void add_selftest(CLI::App& app, Args& a) {
  auto* c = app.add_subcommand("selftest", "score the diagnosis against the emulator's ground truth (the scenario matrix)");
  c->add_option("--dir", a.selftest.dir, "the matrix and its workloads (default $NPUKIT_DIAGNOSIS_DIR or the built-in)");
  c->add_option("--format", a.selftest.format, "text or json")->check(CLI::IsMember({"text", "json"}))->capture_default_str();
  c->add_option("--only", a.selftest.only, "run these scenarios (and their baselines) only")->delimiter(',');
}

int usage_error(const std::string& message) {
  std::fprintf(stderr, "npu-prof: %s\n", message.c_str());
  return kExitUsage;
}

// npu-prof's manual beyond its options (man npu-prof, and --help's footer).
cli::Manual manual() {
  cli::Manual m;
  m.name = "npu-prof";
  m.summary = "record, report and compare operator timelines of an emulated Ascend node";
  m.description = {
      "record runs a command (usually npu-run) on a node, or attaches to a running node for a while, and "
      "writes one msprof-shaped PROF_* tree per rank: an SQLite database with the tasks, operators, "
      "collectives, API calls, memory and counters, plus msprof's communication analysis tables.",
      "report answers first: the diagnosis (each finding with its estimated cost per step and what to do), "
      "then the step breakdown, slow ranks and the top operators; --full prints every section, --format "
      "csv writes msprof's CSV files and json the same report as data. export --chrome writes a trace for "
      "Perfetto or chrome://tracing; diff compares two recordings op by op and per step. selftest scores "
      "the diagnosis against causes the emulator injects on purpose.",
      "Steps are numbered from 1 everywhere, as npu-run prints them: in reports, --step, --steps, traces, "
      "diffs, STEP_TIME and the CSV exports.",
  };
  m.exit_codes = {{"0", "done"},
                  {"1", "recording or writing failed (SQLite error, disk full)"},
                  {"3", "bad input: not a profile, a damaged database, a missing path, a step that was not recorded"}};
  for (auto& e : cli::shared_exit_codes(false)) m.exit_codes.push_back(e);
  m.exit_codes.push_back({std::to_string(kExitCommandFailed), "record: the recorded command exited non-zero (the profile is still complete)"});
  m.exit_codes.push_back({std::to_string(kExitWrongDiagnosis), "selftest: a scenario's diagnosis was wrong"});
  m.environment = {cli::npu_node_variable(),
                   {"NPUKIT_DIAGNOSIS_DIR", "the selftest's scenario matrix (default: share/npukit/diagnosis beside the program)"}};
  m.examples = {{"npu-prof record -o prof -- npu-run ernie3-train --steps 10", "record a run"},
                {"npu-prof report prof", "the diagnosis and summary"},
                {"npu-prof report prof --format csv", "msprof's CSV files, per rank"},
                {"npu-prof export prof --chrome trace.json --steps 2:3", "steps 2 and 3 as a trace"},
                {"npu-prof diff before after", "what changed, op by op and per step"}};
  m.see_also = {"npu-run(1)", "npu-emud(1)", "npu-smi(1)"};
  return m;
}

void build_app(CLI::App& app, Args& a) {
  cli::present(app, manual(), "operator timelines of an emulated Ascend node in an msprof-shaped SQLite database");
  app.require_subcommand(1);
  add_record(app, a);
  add_report(app, a);
  add_export(app, a);
  add_diff(app, a);
  add_selftest(app, a);
}

cli::Program program() {
  CLI::App app;
  Args a;
  build_app(app, a);
  return {cli::describe(app), manual(), nullptr};
}

// record's options beyond what CLI11 checks; kParsed when they hold.
int check_record(Args& a) {
  RecordOptions& o = a.record.options;
  if (o.node.empty()) o.node = telemetry::node_name_from_env();
  if (Status valid = telemetry::validate_node_name(o.node); !valid.ok()) return usage_error(valid.message());
  o.lossless = a.mode == "lossless";
  if (o.attach && !o.command.empty()) return usage_error("record: --attach and a command exclude each other");
  if (o.attach && a.duration.empty()) return usage_error("record: --attach needs --duration, e.g. --duration 10s");
  if (!o.attach && o.command.empty()) return usage_error("record: give the command to record after --, or --attach --duration D");
  if (!a.duration.empty()) {
    if (!o.attach) return usage_error("record: --duration applies to --attach");
    auto d = parse_duration(a.duration);
    if (!d.ok()) return usage_error("record: " + d.status().message());
    o.duration = *d;
  }
  return kParsed;
}

// The command line, parsed and checked into `a`: kParsed, or the exit code when help was
// printed or the line is wrong (its one line printed).
int parse(CLI::App& app, Args& a, int argc, const char* const* argv) {
  build_app(app, a);
  // A first word that is no command: name it (CLI11 says only "A subcommand is required").
  auto commands = app.get_subcommands([](CLI::App*) { return true; });
  auto named = [&](const CLI::App* c) { return argc > 1 && c->get_name() == argv[1]; };
  if (argc > 1 && argv[1][0] != '-' && std::none_of(commands.begin(), commands.end(), named)) {
    return usage_error(std::string("unknown command '") + argv[1] + "': give record, report, export, diff or selftest (see --help)");
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::Success& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    return cli::parse_error_exit(app, e);
  }
  return app.got_subcommand("record") ? check_record(a) : kParsed;
}

int dispatch(CLI::App& app, Args& a) {
  if (app.got_subcommand("record")) {
    install_stop_handlers();
    return run_record(a.record, &g_stop);
  }
  if (app.got_subcommand("report")) return run_report(a.report);
  if (app.got_subcommand("export")) return run_export(a.exp);
  if (app.got_subcommand("diff")) return run_diff(a.diff);
  if (app.got_subcommand("selftest")) return run_selftest(a.selftest);
  return usage_error("give a command: record, report, export, diff or selftest (see --help)");
}

}  // namespace

int run_cli(int argc, char** argv) {
  if (auto rc = cli::answer_meta_request(argc, argv, program, std::cout)) return *rc;
  CLI::App app;
  Args a;
  int rc = parse(app, a, argc, argv);
  return rc == kParsed ? dispatch(app, a) : rc;
}

int check_args(int argc, const char* const* argv) {
  CLI::App app;
  Args a;
  int rc = parse(app, a, argc, argv);
  return rc == kParsed ? kExitOk : rc;
}

}  // namespace npukit::prof
