// The first-generation 910 node is two 4-NPU HCCS meshes joined by one 16 GB/s host link: an
// 8-rank collective crosses it. The slow-link rule judges such a communicator against that link,
// not against HCCS alone: a healthy node has no slow link (it used to name one, at 38% of HCCS's
// 30 GB/s), and a degraded HCCS link still is one.
#include <gtest/gtest.h>

#include "tests/profiler/prof_test_util.hpp"

namespace npukit::testing {
namespace {

// The findings (one line each) of resnet50-train (dp8) recorded on a fresh 8x910 node, after
// `fault` (if any) was injected on device 1.
std::string two_mesh_report(const std::string& tag, const std::string& fault) {
  ScopedNode node(tag, "--spec 8x910 --seed 7");
  TempDir dir(tag);
  if (!fault.empty()) {
    auto inject = run_command(emud() + " inject --node-name " + node.name() + " --device 1 --fault " + fault);
    EXPECT_EQ(inject.exit_code, 0) << inject.output;
  }
  auto rec = run_command(prof() + " record -o " + dir.str() + " --node-name " + node.name() + " -- " + npu_run() +
                         " resnet50-train --steps 3");
  EXPECT_EQ(rec.exit_code, 0) << rec.output;
  EXPECT_EQ(sqlite(find_dbs(dir.str()).front(), "SELECT value FROM EMU_RUN WHERE key = 'inter_group_bytes_per_s'").output,
            "16000000000\n");
  return run_command(prof() + " report " + dir.str() + " --section findings").output;
}

TEST(TwoMeshes, AHealthyNodeHasNoSlowLink) {
  std::string report = two_mesh_report("mesh-ok", "");
  EXPECT_EQ(report.find("[slow_link]"), std::string::npos) << report;
}

TEST(TwoMeshes, ADegradedHccsLinkIsStillASlowLink) {
  std::string report = two_mesh_report("mesh-slow", "link-degraded");
  EXPECT_NE(report.find("- [slow_link] (warning"), std::string::npos) << report;
  EXPECT_NE(report.find("HCCS 30 GB/s within each mesh, 16 GB/s between the meshes"), std::string::npos) << report;
}

}  // namespace
}  // namespace npukit::testing
