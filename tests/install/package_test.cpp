// The Debian package as a user gets it: CPack builds it from this build tree, lintian finds no
// error in it, and unpacked into a throwaway root its programs run from another directory,
// reading only the data installed beside them (share/npukit).
#include <gtest/gtest.h>

#include <filesystem>

#include "tests/daemon_util.hpp"
#include "tests/tmux_util.hpp"

namespace npukit {
namespace {

namespace fs = std::filesystem;
using testing::ensure_debian_package;
using testing::run_command;

// Built once per test process, removed at its exit.
struct Package {
  fs::path dir;   // the .deb's folder
  fs::path deb;
  fs::path root;  // where it was unpacked

  Package() : dir(fs::temp_directory_path() / ("npukit-pkg-" + std::to_string(getpid()))), root(dir / "root") {
    fs::remove_all(dir);
    fs::create_directories(dir);
    auto r = run_command("cd " NPUKIT_BUILD_DIR " && cpack -G DEB -B " + dir.string());
    EXPECT_EQ(r.exit_code, 0) << r.output;
    for (const auto& e : fs::directory_iterator(dir)) {
      if (e.path().extension() == ".deb") deb = e.path();
    }
    if (deb.empty()) return;
    r = run_command("dpkg -x " + deb.string() + " " + root.string());
    EXPECT_EQ(r.exit_code, 0) << r.output;
  }
  ~Package() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
};

const Package& package() {
  static Package p;
  return p;
}

TEST(Package, LintianFindsNoError) {
  const Package& p = package();
  ASSERT_FALSE(p.deb.empty()) << "cpack made no .deb in " << p.dir;
  std::string missing = ensure_debian_package("lintian", "lintian");
  if (!missing.empty()) GTEST_SKIP() << missing;
  auto r = run_command("lintian --no-tag-display-limit " + p.deb.string());
  EXPECT_EQ(run_command("lintian " + p.deb.string() + " | grep -c '^E:'").output, "0\n") << r.output;
}

TEST(Package, HoldsTheProgramsTheirDataTheDocsAndTheServices) {
  const Package& p = package();
  ASSERT_FALSE(p.deb.empty());
  for (const char* file : {"usr/bin/npu-emud", "usr/bin/npu-run", "usr/bin/npu-prof", "usr/bin/npu-smi",
                           "usr/bin/npu-top", "usr/bin/npu-exporter", "usr/share/npukit/specs/nodes/8x910B2.json",
                           "usr/share/npukit/workloads/ernie3-train.json", "usr/share/npukit/diagnosis/matrix.json",
                           "usr/share/npukit/deploy/prometheus/npu-alerts.yml", "usr/share/doc/npukit/copyright",
                           "usr/share/doc/npukit/changelog.gz", "usr/share/doc/npukit/npu-smi.md",
                           "usr/lib/systemd/system/npu-emud@.service", "usr/lib/systemd/system/npu-exporter@.service"}) {
    EXPECT_TRUE(fs::exists(p.root / file)) << file;
  }
  for (const char* program : {"npu-emud", "npu-run", "npu-prof", "npu-smi", "npu-top", "npu-exporter"}) {
    EXPECT_TRUE(fs::exists(p.root / "usr/share/man/man1" / (std::string(program) + ".1.gz"))) << program;
    EXPECT_TRUE(fs::exists(p.root / "usr/share/bash-completion/completions" / program)) << program;
  }
  auto deps = run_command("dpkg-deb -f " + p.deb.string() + " Depends");
  for (const char* lib : {"libsqlite3-0", "libncursesw6", "libcpp-httplib"}) {
    EXPECT_NE(deps.output.find(lib), std::string::npos) << deps.output;
  }
}

TEST(Package, ItsProgramsRunFromElsewhereOnTheirOwnData) {
  const Package& p = package();
  ASSERT_FALSE(p.deb.empty());
  std::string bin = (p.root / "usr/bin").string();
  std::string node = testing::unique_node("pkg");
  // A spec and a workload that only the unpacked tree has: found only if the programs read it.
  fs::path share = p.root / "usr/share/npukit";
  fs::copy_file(share / "specs/nodes/4x310P3.json", share / "specs/nodes/pkg-only.json", fs::copy_options::overwrite_existing);
  fs::copy_file(share / "workloads/burn.json", share / "workloads/pkg-only-burn.json", fs::copy_options::overwrite_existing);
  // From /, with no variable pointing anywhere.
  std::string env = "cd / && env -u NPUKIT_SPEC_DIR -u NPUKIT_WORKLOAD_DIR -u NPUKIT_DIAGNOSIS_DIR NPU_NODE=" + node + " ";
  auto r = run_command(env + bin + "/npu-emud start --spec pkg-only --seed 7");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto info = run_command(env + bin + "/npu-smi info");
  auto health = run_command(env + bin + "/npu-smi health");
  auto list = run_command(env + bin + "/npu-run --list");
  auto run = run_command(env + bin + "/npu-run burn --steps 1");
  run_command(env + bin + "/npu-emud stop");
  EXPECT_EQ(info.exit_code, 0) << info.output;
  EXPECT_NE(info.output.find("310P3"), std::string::npos) << info.output;
  EXPECT_EQ(health.exit_code, 0) << health.output;
  EXPECT_NE(health.output.find("PASS"), std::string::npos) << health.output;
  EXPECT_NE(list.output.find("ernie3-train"), std::string::npos) << list.output;
  EXPECT_NE(list.output.find("pkg-only-burn"), std::string::npos) << list.output;
  EXPECT_EQ(run.exit_code, 0) << run.output;
}

// systemd reads both units and finds nothing wrong (the programs pointed at the unpacked tree).
// Starting them needs systemd as PID 1, which a test container does not have.
TEST(Package, SystemdAcceptsItsUnits) {
  const Package& p = package();
  ASSERT_FALSE(p.deb.empty());
  if (run_command("command -v systemd-analyze").exit_code != 0) GTEST_SKIP() << "no systemd-analyze on this machine";
  fs::path units = p.dir / "units";
  fs::create_directories(units);
  std::string list;
  for (const char* unit : {"npu-emud", "npu-exporter"}) {
    fs::path to = units / (std::string(unit) + "@lab.service");
    auto r = run_command("sed 's|/usr/bin/|" + (p.root / "usr/bin").string() + "/|g' " +
                         (p.root / "usr/lib/systemd/system" / (std::string(unit) + "@.service")).string() + " > " + to.string());
    ASSERT_EQ(r.exit_code, 0) << r.output;
    list += " " + to.string();
  }
  auto verify = run_command("cd " + units.string() + " && systemd-analyze verify --man=no" + list);
  EXPECT_EQ(verify.exit_code, 0) << verify.output;
  EXPECT_EQ(verify.output, "") << "a warning about the units";
}

TEST(Package, ManRendersItsPageAndBashCompletesItsTypes) {
  const Package& p = package();
  ASSERT_FALSE(p.deb.empty());
  for (const auto& [program, package_name] : {std::pair{"man", "man-db"}, std::pair{"tmux", "tmux"}}) {
    std::string missing = ensure_debian_package(program, package_name);
    if (!missing.empty()) GTEST_SKIP() << missing;
  }
  // man, from the unpacked tree's man directory, as a user would type it.
  auto man = run_command("cd / && MANPATH=" + (p.root / "usr/share/man").string() + " MANWIDTH=80 man -P cat npu-smi");
  EXPECT_EQ(man.exit_code, 0) << man.output;
  EXPECT_NE(man.output.find("NPU-SMI(1)"), std::string::npos) << man.output;
  EXPECT_NE(man.output.find("--query-gpu=FIELD,..."), std::string::npos) << man.output;
  EXPECT_NE(man.output.find("EXIT STATUS"), std::string::npos);
  // A real interactive bash in a real terminal, with the installed completion and programs.
  std::string bin = (p.root / "usr/bin").string();
  std::string completion = (p.root / "usr/share/bash-completion/completions/npu-smi").string();
  testing::Tmux term("completion", 120, 30, "env -i TERM=xterm HOME=/tmp PATH=" + bin + ":/usr/bin:/bin bash --norc --noprofile -i");
  term.keys("'source " + completion + "' Enter");
  term.keys("'npu-smi info -t ' Tab Tab");
  EXPECT_TRUE(term.shows("phyid-remap")) << term.last_screen;
  for (const char* type : {"board", "common", "usages", "health", "temp", "power", "memory", "ecc", "proc-mem", "sensors"}) {
    EXPECT_NE(term.last_screen.find(type), std::string::npos) << type << "\n" << term.last_screen;
  }
  term.keys("C-u 'npu-smi --query-gpu=memory.u' Tab");
  EXPECT_TRUE(term.shows("npu-smi --query-gpu=memory.used")) << term.last_screen;
}

}  // namespace
}  // namespace npukit
