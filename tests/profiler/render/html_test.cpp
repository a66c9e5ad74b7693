// The HTML report in a real browser: Debian's Chromium renders it headless with no console
// errors, every number on the page equals the JSON report's value at the pointer it is tagged
// with, the page fetches nothing, and a screenshot is taken (docs/img/ keeps one).
#include <gtest/gtest.h>

#include <cmath>
#include <regex>

#include <nlohmann/json.hpp>

#include "tests/profiler/prof_test_util.hpp"

namespace npukit::testing {
namespace {

using nlohmann::json;

const char* kChromium = "chromium --headless --no-sandbox --disable-gpu --enable-logging=stderr --v=0 ";

// Console errors and uncaught exceptions Chromium logged while loading `file`.
std::vector<std::string> console_errors(const std::string& file) {
  // stderr (the log) to the pipe, stdout (the DOM) away
  CommandResult r = run_command(std::string("(timeout 120 ") + kChromium + "--dump-dom file://" + file + " 2>&1 >/dev/null)");
  std::vector<std::string> out;
  for (const std::string& line : lines_of(r.output)) {
    if (line.find("CONSOLE") != std::string::npos || line.find("Uncaught") != std::string::npos) out.push_back(line);
  }
  return out;
}

std::string dump_dom(const std::string& file) {
  return run_command(std::string("(timeout 120 ") + kChromium + "--dump-dom file://" + file + " 2>/dev/null)").output;
}

struct Checked {
  std::string pointer;
  int digits = 0;
  double scale = 1, shown = 0;
};

std::vector<Checked> checked_numbers(const std::string& dom) {
  static const std::regex kNumber(R"re(data-json="([^"]+)" data-digits="(\d+)" data-scale="([^"]+)">([^<]+)<)re");
  std::vector<Checked> out;
  for (std::sregex_iterator it(dom.begin(), dom.end(), kNumber), end; it != end; ++it) {
    out.push_back({(*it)[1], std::stoi((*it)[2]), std::stod((*it)[3]), std::stod((*it)[4])});
  }
  return out;
}

TEST(HtmlReport, RendersInChromiumWithTheJsonsNumbers) {
  std::string why = ensure_debian_package("chromium", "chromium");
  if (!why.empty()) GTEST_SKIP() << "no chromium: " << why;
  // The detector finds an error when there is one (so "none" below means none).
  TempDir tmp("html");
  std::ofstream(tmp / "broken.html") << "<!doctype html><script>console.error('broken page'); undefinedCall();</script>";
  EXPECT_FALSE(console_errors(tmp / "broken.html").empty());

  RecordedRun run = record_on_fresh_node("html", std::string(NPUKIT_SOURCE_DIR) + "/workloads/diagnosis/straggler.json");
  ASSERT_EQ(run.record.exit_code, 0) << run.record.output;
  std::string page = tmp / "report.html";
  auto wrote = run_command(prof() + " report " + run.dir + " --html " + page);
  ASSERT_EQ(wrote.exit_code, 0) << wrote.output;
  EXPECT_EQ(wrote.output, "npu-prof: wrote " + page + "\n");
  json report = json::parse(run_command(prof() + " report " + run.dir + " --format json").output, nullptr, false);
  ASSERT_TRUE(report.is_object());

  std::string html = read_file(page);
  EXPECT_EQ(html.find("http://"), std::string::npos) << "the page must fetch nothing";
  EXPECT_EQ(html.find("https://"), std::string::npos);
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_TRUE(console_errors(page).empty());

  std::string dom = dump_dom(page);
  ASSERT_NE(dom.find("<section id=\"summary\">"), std::string::npos) << dom.substr(0, 400);
  std::vector<Checked> numbers = checked_numbers(dom);
  EXPECT_GE(numbers.size(), 30u);
  bool p50 = false, straggler = false, cost = false;
  for (const Checked& n : numbers) {
    json::json_pointer at(n.pointer);
    ASSERT_TRUE(report.contains(at)) << n.pointer;
    double expected = report[at].get<double>() * n.scale;
    EXPECT_NEAR(n.shown, expected, 0.5 * std::pow(10.0, -n.digits) + 1e-9) << n.pointer;
    p50 = p50 || n.pointer == "/summary/step_p50_ms";
    straggler = straggler || n.pointer == "/ranks/verdict/excess_ms";
    cost = cost || n.pointer == "/findings/0/cost_ms_per_step";
  }
  EXPECT_TRUE(p50 && straggler && cost) << "summary, straggler verdict and the top finding's cost are on the page";
  EXPECT_NE(dom.find("Straggler: rank 1 (device 1)"), std::string::npos);

  std::string png = tmp / "report.png";
  run_command(std::string("timeout 120 ") + kChromium + "--window-size=1200,1600 --screenshot=" + png + " file://" + page);
  EXPECT_GT(std::filesystem::exists(png) ? std::filesystem::file_size(png) : 0, 10'000u);
}

TEST(HtmlReport, AnUnwritablePathIsOneClearLine) {
  const RecordedRun& run = small_run();
  auto r = run_command(prof() + " report " + run.dir + " --html /nonexistent-dir/report.html");
  EXPECT_EQ(r.exit_code, 3) << r.output;  // kExitBadInput
  EXPECT_EQ(r.output, "npu-prof: /nonexistent-dir/report.html: cannot open for writing\n");
}

}  // namespace
}  // namespace npukit::testing
