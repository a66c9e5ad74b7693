// End to end in a real terminal: a daemon with a workload, npu-top (curses) in a tmux pane,
// keys sent with send-keys and the screen read with capture-pane.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>

#include "tests/daemon_util.hpp"
#include "tests/tmux_util.hpp"
#include "tests/smi/top/top_test_util.hpp"

namespace npukit::top::testing {
namespace {

using nlohmann::json;
using npukit::testing::eventually;
using npukit::testing::Tmux;
using npukit::testing::run_command;
using npukit::testing::ScopedNode;

std::string top() { return std::string(NPUKIT_BUILD_DIR) + "/smi/npu-top"; }

// The screen's device rows (compact view): the lines starting with the device's number.
std::vector<std::string> device_rows(const std::string& screen, int devices) {
  std::vector<std::string> rows(static_cast<std::size_t>(devices));
  for (const auto& line : split_lines(screen)) {
    for (int d = 0; d < devices; ++d) {
      std::string prefix = (d < 10 ? "  " : " ") + std::to_string(d) + " ";
      if (line.rfind(prefix, 0) == 0 && line.find("/64.0G") != std::string::npos) rows[static_cast<std::size_t>(d)] = line;
    }
  }
  return rows;
}

json training_program(int ranks, const std::string& name, int pid) {
  json list = json::array();
  for (int r = 0; r < ranks; ++r) {
    int n = 2048 + 1024 * (r % 4);
    json mm = {{"op", "kernel"}, {"stream", 0}, {"name", "aten::mm"},
               {"inputs", {{{"shape", {n, n}}, {"dtype", "float16"}}, {{"shape", {n, n}}, {"dtype", "float16"}}}}};
    list.push_back({{"device", r}, {"streams", 1}, {"setup", {{{"op", "alloc"}, {"buf", "w"}, {"bytes", (2ll + r) << 30}}}},
                    {"step", {mm, mm, {{"op", "host_delay"}, {"ns", 4'000'000 * (1 + r % 3)}}}}});
  }
  return {{"name", name}, {"repeat", 1'000'000}, {"process", {{"pid", pid}, {"name", name}}}, {"ranks", list}};
}

pid_t spawn_sleeper() {
  pid_t child = fork();
  if (child == 0) {
    execl("/bin/sleep", "sleep", "120", static_cast<char*>(nullptr));
    _exit(127);
  }
  return child;
}

TEST(TopTmux, ALoadedNodeLiveWithWorkingKeysSignalAndResize) {
  ScopedNode node("tmux");
  ASSERT_TRUE(node.control({{"op", "submit"}, {"program", training_program(8, "e2e-train", 0)}}).value("ok", false));
  pid_t victim = spawn_sleeper();
  ASSERT_GT(victim, 0);
  json one = training_program(1, "victim", victim);
  one["ranks"][0]["device"] = 5;
  ASSERT_TRUE(node.control({{"op", "submit"}, {"program", one}}).value("ok", false));

  Tmux t("live", 120, 40, top() + " --node " + node.name() + " --interval 0.2 --ascii");
  ASSERT_TRUE(t.shows("e2e-train")) << t.last_screen;
  ASSERT_TRUE(t.shows("9/9 procs")) << t.last_screen;
  auto before = device_rows(t.last_screen, 8);
  for (int d = 0; d < 8; ++d) EXPECT_FALSE(before[static_cast<std::size_t>(d)].empty()) << "NPU " << d << "\n" << t.last_screen;
  EXPECT_TRUE(eventually([&] { return device_rows(t.screen(), 8) != before; }, std::chrono::seconds(8)))
      << "the values change as the workload runs";

  EXPECT_NE(t.screen().find("Process memory(MB)v"), std::string::npos) << "sorted by memory";
  t.keys("s");
  ASSERT_TRUE(t.shows("Share(%)v")) << t.last_screen;
  t.keys("s");
  ASSERT_TRUE(t.shows("Process namev")) << t.last_screen;

  t.keys("/ v i c t i m Enter");
  ASSERT_TRUE(t.shows("filter \"victim\"  1/9 procs")) << t.last_screen;
  EXPECT_EQ(t.last_screen.find("e2e-train"), std::string::npos) << t.last_screen;

  t.keys("k");
  ASSERT_TRUE(t.shows("send a signal")) << t.last_screen;
  t.keys("Enter");
  ASSERT_TRUE(t.shows("Send SIGTERM to PID " + std::to_string(victim) + " (victim) on NPU 5?")) << t.last_screen;
  t.keys("y");
  int status = 0;
  EXPECT_TRUE(eventually([&] { return waitpid(victim, &status, WNOHANG) == victim; }));
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM);
  ASSERT_TRUE(t.shows("sent SIGTERM to PID " + std::to_string(victim))) << t.last_screen;

  t.keys("h");
  ASSERT_TRUE(t.shows("npu-top help")) << t.last_screen;
  t.keys("x");
  ASSERT_TRUE(eventually([&] { return t.screen().find("npu-top help") == std::string::npos; })) << t.screen();

  t.resize(80, 24);
  ASSERT_TRUE(eventually([&] { return split_lines(t.screen()).size() <= 24 && device_rows(t.screen(), 8)[7] != ""; }))
      << t.screen();
  std::string small = t.screen();
  for (const auto& line : split_lines(small)) EXPECT_LE(line.size(), 80u) << line;
  EXPECT_EQ(small.find("too small"), std::string::npos) << small;
  EXPECT_NE(small.find("npu-top  " + node.name()), std::string::npos) << small;

  t.keys("q");
  EXPECT_TRUE(eventually([&] { return !t.running(); })) << "q quits";
}

TEST(TopTmux, EscapeQuitsAndAKilledDaemonShowsStale) {
  ScopedNode node("stale");
  Tmux t("stale", 100, 30, top() + " --node " + node.name() + " --interval 0.2 --ascii");
  ASSERT_TRUE(t.shows("* live")) << t.last_screen;
  int pid = node.daemon_pid();
  ASSERT_GT(pid, 1);
  ASSERT_EQ(::kill(pid, SIGKILL), 0);
  ASSERT_TRUE(t.shows("STALE", std::chrono::seconds(6))) << t.last_screen;
  // The stale screen once drawn (a capture can catch the terminal mid-redraw): the reason, and
  // no frozen values.
  EXPECT_TRUE(eventually([&] {
    t.last_screen = t.screen();
    return t.last_screen.find("values are not live") != std::string::npos && t.last_screen.find("/64.0G") == std::string::npos;
  })) << "a stale node's screen says why and shows no frozen values:\n" << t.last_screen;
  t.keys("Escape");
  EXPECT_TRUE(eventually([&] { return !t.running(); })) << "Esc quits";
  EXPECT_EQ(run_command(npukit::testing::emud() + " start --node-name " + node.name()).exit_code, 0);  // clean up
}

// `npu-emud stop` is not a crash: the dashboard says the node stopped and how to start it, and
// shows it again as soon as it is back.
TEST(TopTmux, ACleanlyStoppedNodeIsShownStoppedNotStale) {
  ScopedNode node("stop");
  Tmux t("stop", 80, 24, top() + " --node " + node.name() + " --interval 0.2 --ascii");
  ASSERT_TRUE(t.shows("* live")) << t.last_screen;
  ASSERT_EQ(run_command(npukit::testing::emud() + " stop --node-name " + node.name()).exit_code, 0);
  ASSERT_TRUE(t.shows("was stopped", std::chrono::seconds(6))) << t.last_screen;
  EXPECT_NE(t.last_screen.find("npu-emud start --node-name " + node.name()), std::string::npos) << t.last_screen;
  EXPECT_EQ(t.last_screen.find("STALE"), std::string::npos) << t.last_screen;
  EXPECT_EQ(run_command(npukit::testing::emud() + " start --node-name " + node.name()).exit_code, 0);
  EXPECT_TRUE(t.shows("* live", std::chrono::seconds(6))) << t.last_screen;
}

TEST(TopTmux, ColourUnlessNoColorOrMono) {
  const std::string replay = " --replay " + data_path("rec-8x910B2.json");
  const std::pair<std::string, bool> cases[] = {
      {"env TERM=tmux-256color " + top() + replay, true},
      {"env TERM=tmux-256color NO_COLOR=1 " + top() + replay, false},
      {"env TERM=tmux-256color " + top() + replay + " --mono", false},
  };
  int n = 0;
  for (const auto& [command, colour] : cases) {
    Tmux t("colour" + std::to_string(n++), 100, 30, command);
    ASSERT_TRUE(t.shows("lab-a01")) << command << "\n" << t.last_screen;
    std::string attrs = t.screen_with_attributes();
    EXPECT_EQ(attrs.find("38;5;") != std::string::npos, colour) << command;
    EXPECT_NE(attrs.find("\x1b[0;7m"), std::string::npos) << "the selected row is reversed either way: " << command;
    t.keys("q");
  }
}

TEST(TopTmux, SixteenDevicesFitAt80x24) {
  ScopedNode node("sixteen", "--spec " + data_path("16x910B2.json"));
  Tmux t("sixteen", 80, 24, top() + " --node " + node.name() + " --ascii");
  ASSERT_TRUE(t.shows("16 NPUs")) << t.last_screen;
  // The header can be on the screen before the rows of the same first frame (a capture between
  // the two writes, seen once on a loaded machine): look again until the frame is whole.
  std::vector<std::string> rows;
  std::string screen;
  auto whole = [&] {
    rows = device_rows(screen = t.screen(), 16);
    return std::none_of(rows.begin(), rows.end(), [](const std::string& r) { return r.empty(); });
  };
  EXPECT_TRUE(eventually(whole));
  for (int d = 0; d < 16; ++d) EXPECT_FALSE(rows[static_cast<std::size_t>(d)].empty()) << "NPU " << d << "\n" << screen;
  EXPECT_LE(split_lines(screen).size(), 24u);
  t.keys("q");
  EXPECT_TRUE(eventually([&] { return !t.running(); }));
}

}  // namespace
}  // namespace npukit::top::testing
