// The npu-top binary: usage errors, exit codes, headless frames from a live daemon and from a
// recording, and --record.
#include <sys/stat.h>

#include <csignal>
#include <cstdio>

#include "tests/daemon_util.hpp"
#include <optional>

#include "tests/smi/top/top_test_util.hpp"

namespace npukit::top::testing {
namespace {

using npukit::testing::run_command;

std::string top() { return std::string(NPUKIT_BUILD_DIR) + "/smi/npu-top"; }

TEST(TopCli, BadUsageExits4WithOneClearLine) {
  const std::pair<std::string, std::string> cases[] = {
      {"--bogus", "--bogus"},
      {"--frames 1 --size 10", "invalid size '10': use WxH"},
      {"--frames 1 --size 0x24", "invalid size '0x24'"},
      {"--size 80x24", "--size is for headless mode: add --frames N"},
      {"--frames 1 --interval 0", "--interval 0: use 0.05 to 3600 seconds"},
      {"--frames 0", "--frames"},
      {"--record /tmp/x.json", "--record needs --frames N"},
      {"--frames 1 --window 7", "--window 7: use 30, 60, 300, 900 or 3600"},
      {"--frames 1 --view huge", "--view"},
      {"--frames 1 --node 'bad/name'", "invalid node name 'bad/name'"},
      {"--frames 1 --replay /nonexistent.json", "/nonexistent.json: cannot open the recording"},
      {"< /dev/null", "not a terminal; for text output use --frames N"},
  };
  for (const auto& [args, message] : cases) {
    auto r = run_command(top() + " " + args);
    EXPECT_EQ(r.exit_code, 4) << args << "\n" << r.output;
    EXPECT_NE(r.output.find(message), std::string::npos) << args << "\n" << r.output;
  }
  auto help = run_command(top() + " --help");
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_NE(help.output.find("--frames"), std::string::npos);
}

TEST(TopCli, HeadlessWithoutANodeExits5WithTheMessage) {
  std::string node = test_node_name();
  auto r = run_command(top() + " --node " + node + " --frames 2");
  EXPECT_EQ(r.exit_code, 5) << r.output;
  EXPECT_NE(r.output.find("no npukit node '" + node + "' is running (start one with: npu-emud start --node-name " + node + ")"),
            std::string::npos) << r.output;
  auto env = run_command("NPU_NODE=" + node + " " + top() + " --frames 1");
  EXPECT_EQ(env.exit_code, 5);
  EXPECT_NE(env.output.find("'" + node + "'"), std::string::npos) << "NPU_NODE names the node";
}

TEST(TopCli, HeadlessRendersNFramesOfTheRequestedSize) {
  auto r = run_command(top() + " --replay " + data_path("rec-16x910B2.json") + " --frames 3 --size 90x30 2>/dev/null");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto lines = split_lines(r.output);
  ASSERT_EQ(lines.size(), 3u * 30 + 2);
  EXPECT_EQ(lines[30], "");
  EXPECT_EQ(lines[61], "");
  for (const auto& l : lines) EXPECT_LE(display_width(l), 90) << l;
  EXPECT_NE(lines[0].find("lab-b16"), std::string::npos) << lines[0];
}

// At 80x24 the temperature graph is one row (label and value first); its newest column is the
// same column as the AICore and Power graphs' newest, so the three read as one time axis.
TEST(TopCli, TheOneRowTemperatureGraphEndsWhereTheOthersDo) {
  npukit::testing::ScopedNode node("align");
  auto r = run_command(top() + " --node " + node.name() + " --frames 4 --interval 0.1 --size 80x24 --ascii");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto lines = split_lines(r.output);
  std::vector<std::string> last(lines.end() - 24, lines.end());
  auto newest_column = [](const std::string& row) {  // the last drawn cell inside the box
    std::size_t end = row.find_last_not_of(' ', row.size() - 2);
    return end;
  };
  std::optional<std::size_t> util, temp;
  for (std::size_t i = 0; i + 1 < last.size(); ++i) {
    if (last[i].rfind("|AICore", 0) == 0) util = newest_column(last[i + 1]);
    if (last[i].rfind("|Temp", 0) == 0) temp = newest_column(last[i]);
  }
  ASSERT_TRUE(util && temp) << r.output;
  EXPECT_EQ(*util, *temp) << "\n" << [&] { std::string s; for (auto& l : last) s += l + "\n"; return s; }();
}

TEST(TopCli, HeadlessFramesOfALiveNodeShowEveryDevice) {
  npukit::testing::ScopedNode node("cli");
  auto r = run_command(top() + " --node " + node.name() + " --frames 2 --interval 0.2 --size 100x30 --ascii");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto lines = split_lines(r.output);
  ASSERT_EQ(lines.size(), 61u);
  EXPECT_NE(lines[31].find(node.name() + "  8x910B2  8 NPUs  * live"), std::string::npos) << lines[31];
  for (int d = 0; d < 8; ++d) {
    std::string row = lines[static_cast<std::size_t>(31 + 2 + d)];
    EXPECT_EQ(row.rfind((d < 10 ? "  " : " ") + std::to_string(d) + " ", 0), 0u) << row;
    EXPECT_NE(row.find("/64.0G"), std::string::npos) << row;
    EXPECT_NE(row.find("OK"), std::string::npos) << row;
  }
}

// A node whose daemon died: the headless frames show it STALE and npu-top exits 5, as its --help
// says (it exited 0, so a script could not tell a dead node's frame from a live one's).
TEST(TopCli, HeadlessFramesOfAStaleNodeExit5) {
  npukit::testing::ScopedNode node("stalecli");
  int pid = node.daemon_pid();
  ASSERT_GT(pid, 1);
  ASSERT_EQ(::kill(pid, SIGKILL), 0);
  npukit::testing::CommandResult r;
  ASSERT_TRUE(npukit::testing::eventually([&] {
    r = run_command(top() + " --node " + node.name() + " --frames 1 --size 100x30 --ascii");
    return r.output.find("STALE") != std::string::npos;
  }, std::chrono::seconds(10))) << r.output;
  EXPECT_EQ(r.exit_code, 5) << r.output;
}

TEST(TopCli, ARecordingOfALiveNodeReplaysToTheSameDeviceRows) {
  npukit::testing::ScopedNode node("rec");
  std::string file = ::testing::TempDir() + "/top-cli-" + std::to_string(getpid()) + ".json";
  std::string common = " --size 80x24 --ascii --view compact";
  auto live = run_command(top() + " --node " + node.name() + " --frames 3 --interval 0.2 --record " + file + common);
  ASSERT_EQ(live.exit_code, 0) << live.output;
  auto replayed = run_command(top() + " --replay " + file + " --frames 3" + common);
  ASSERT_EQ(replayed.exit_code, 0) << replayed.output;
  auto a = split_lines(live.output), b = split_lines(replayed.output);
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 2 * 25 + 1; i < 2 * 25 + 1 + 9; ++i) EXPECT_EQ(a[i], b[i]) << "line " << i;
  // The header says the interval it was recorded at (it said "every 1s"), unless -d says otherwise.
  EXPECT_EQ(a[0].substr(a[0].find("every")), b[0].substr(b[0].find("every"))) << a[0] << "\n" << b[0];
  auto given = run_command(top() + " --replay " + file + " --frames 1 --interval 2" + common);
  EXPECT_NE(given.output.find("every 2s"), std::string::npos) << given.output;
  auto bad = run_command(top() + " --node " + node.name() + " --frames 1 --record /nonexistent-dir/x.json");
  EXPECT_EQ(bad.exit_code, 1) << bad.output;
  EXPECT_NE(bad.output.find("/nonexistent-dir/x.json: cannot write: No such file or directory"), std::string::npos)
      << bad.output;
  // Created 0644 less the umask, never group-writable (it was the stream library's 0666 less it).
  std::remove(file.c_str());
  auto modes = run_command("umask 002 && " + top() + " --node " + node.name() + " --frames 1 --record " + file + common);
  ASSERT_EQ(modes.exit_code, 0) << modes.output;
  struct stat st {};
  ASSERT_EQ(::stat(file.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0644u);
  std::remove(file.c_str());
}

}  // namespace
}  // namespace npukit::top::testing
