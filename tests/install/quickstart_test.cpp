// The quick start's promises that a fresh clone relies on: the demo never fails silently, and
// the README and docs stand alone (no link outside the repository, none to a missing file).
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "tests/daemon_util.hpp"

namespace npukit {
namespace {

namespace fs = std::filesystem;
using testing::run_command;

// A job that does not fit the chip ends with the runtime's own line and a hint, exit 1 (it used
// to exit 5 after 6 s with the reason only in out/demo/run.log).
TEST(Quickstart, ADemoThatDoesNotFitSaysWhyAndWhatToTry) {
  fs::path out = fs::temp_directory_path() / ("npukit-demo-" + std::to_string(getpid()));
  auto r = run_command(std::string(NPUKIT_SOURCE_DIR) + "/scripts/demo.sh --spec 8x910 --steps 2 --built " +
                       NPUKIT_BUILD_DIR + " --out " + out.string());
  fs::remove_all(out);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("npu-run: ernie3-train failed: acl_rt_malloc failed"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("hint: ernie3-train does not fit in the HBM of each 8x910 device"), std::string::npos) << r.output;
}

// Every markdown file a reader of the repository gets (README.md, docs/, each folder's README):
// no link leaves the repository, and every relative link names a file that exists.
TEST(Quickstart, TheReadmeAndDocsLinkOnlyInsideTheRepository) {
  const fs::path root = fs::canonical(NPUKIT_SOURCE_DIR);
  std::vector<fs::path> files = {root / "README.md"};
  for (const auto& e : fs::recursive_directory_iterator(root)) {
    std::string rel = fs::relative(e.path(), root).string();
    if (rel.rfind("build", 0) == 0 || rel.rfind(".git", 0) == 0 || rel.rfind("out", 0) == 0) continue;
    if (e.path().extension() == ".md" && rel != "README.md") files.push_back(e.path());
  }
  static const std::regex link(R"(\]\(([^)#\s]+)(#[^)]*)?\))");
  int checked = 0;
  for (const fs::path& f : files) {
    std::ifstream in(f);
    std::stringstream text;
    text << in.rdbuf();
    std::string s = text.str();
    EXPECT_EQ(s.find("../shared"), std::string::npos) << f << " names ../shared, which no clone has";
    for (auto it = std::sregex_iterator(s.begin(), s.end(), link); it != std::sregex_iterator(); ++it) {
      std::string target = (*it)[1];
      if (target.find("://") != std::string::npos || target.rfind("mailto:", 0) == 0) continue;
      fs::path resolved = fs::weakly_canonical(f.parent_path() / target);
      std::string r = resolved.string();
      EXPECT_EQ(r.rfind(root.string(), 0), 0u) << f << ": " << target << " leaves the repository";
      EXPECT_TRUE(fs::exists(resolved)) << f << ": " << target << " does not exist";
      ++checked;
    }
  }
  EXPECT_GT(files.size(), 10u);
  EXPECT_GT(checked, 0);
}

}  // namespace
}  // namespace npukit
