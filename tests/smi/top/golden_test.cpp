// Golden frames: recordings of the emulator (tests/data/top/rec-*.json, made by record.sh)
// replayed and rendered as headless text, compared with tests/data/top/golden/*.txt.
// NPUKIT_UPDATE_GOLDEN=1 rewrites the goldens; a mismatch lists the differing lines.
#include <cstdlib>

#include "tests/daemon_util.hpp"
#include "tests/golden_util.hpp"
#include "tests/smi/top/top_test_util.hpp"

namespace npukit::top::testing {
namespace {

void expect_golden(const std::string& name, const std::string& actual) {
  npukit::testing::expect_golden_file(data_path("golden/" + name), actual);
}

struct GoldenCase {
  const char* golden;
  const char* recording;
  int width, height;
  bool unicode;
  void (*adjust)(ViewState&);
};

const GoldenCase kCases[] = {
    {"rec8-80x24.txt", "rec-8x910B2.json", 80, 24, true, nullptr},
    {"rec8-120x40-ascii.txt", "rec-8x910B2.json", 120, 40, false, [](ViewState& v) { v.window = 0; }},
    {"rec8-200x60.txt", "rec-8x910B2.json", 200, 60, true, [](ViewState& v) { v.window = 0; }},
    {"rec8-100x30-help.txt", "rec-8x910B2.json", 100, 30, true, [](ViewState& v) { v.mode = Mode::kHelp; }},
    {"rec16-80x24.txt", "rec-16x910B2.json", 80, 24, true, nullptr},
    {"rec16-300x100.txt", "rec-16x910B2.json", 300, 100, true, [](ViewState& v) { v.window = 0; }},
    {"rec16-160x50-compact-by-npu.txt", "rec-16x910B2.json", 160, 50, true,
     [](ViewState& v) {
       v.device_view = DeviceView::kCompact;
       v.sort = SortKey::kDevice;
       v.descending = false;
       v.focus_device = 9;
     }},
};

TEST(TopGolden, RecordedNodesRenderAsTheGoldenFrames) {
  for (const auto& c : kCases) {
    auto frames = replay(c.recording);
    ASSERT_FALSE(frames.empty()) << c.recording;
    ViewState v;
    v.unicode = c.unicode;
    if (c.adjust != nullptr) c.adjust(v);
    expect_golden(c.golden, render_text(*frames.back(), v, c.width, c.height));
  }
}

TEST(TopGolden, HeadlessBinaryPrintsTheSameFrames) {
  std::string cmd = std::string(NPUKIT_BUILD_DIR) + "/smi/npu-top --replay " + data_path("rec-8x910B2.json") +
                    " --frames 100 --size 120x40 --ascii --window 30";
  auto r = npukit::testing::run_command(cmd);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto lines = split_lines(r.output);
  ASSERT_EQ(lines.size(), 24u * 40 + 23) << "24 recorded frames of 40 lines, an empty line between frames";
  std::string last;
  for (std::size_t i = lines.size() - 40; i < lines.size(); ++i) last += lines[i] + "\n";
  std::string diff = npukit::testing::golden_line_diff(read_file(data_path("golden/rec8-120x40-ascii.txt")), last);
  EXPECT_TRUE(diff.empty()) << diff;
}

}  // namespace
}  // namespace npukit::top::testing
