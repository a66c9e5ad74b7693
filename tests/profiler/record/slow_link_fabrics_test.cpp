// The slow-link rule on the node fabrics that are not a full HCCS mesh, recorded end to end.
//
// The first-generation 910 node is two 4-NPU HCCS meshes joined by one 16 GB/s host link: an
// 8-rank collective crosses it, so the rule judges it against that link, not against HCCS alone
// (a healthy node used to get a slow link, at 38% of HCCS's 30 GB/s).
//
// The A100 node is switched: each GPU reaches the others through its own 300 GB/s port into the
// switch, and its collectives run as rings whose 14 steps each pay two ports' latency. The rule
// used to skip it (a port has no device at its far end), so a degraded port went unreported, and
// a healthy ring reads only 43% of the port rate because of those latencies: the rule sets them
// aside (EMU_LINK.latencyNs) before it compares bandwidth.
#include <gtest/gtest.h>

#include <regex>

#include <nlohmann/json.hpp>

#include "tests/profiler/prof_test_util.hpp"

namespace npukit::testing {
namespace {

// The findings of resnet50-train (dp8) recorded on a fresh node of `spec`, after `fault` (if any)
// was injected on device 1. `before_latency`: the profile is then made one from before
// EMU_LINK.latencyNs existed (the column dropped from every rank's database).
std::string findings_after(const std::string& spec, const std::string& tag, const std::string& fault,
                           bool before_latency = false) {
  ScopedNode node(tag, "--spec " + spec + " --seed 7");
  TempDir dir(tag);
  if (!fault.empty()) {
    auto inject = run_command(emud() + " inject --node-name " + node.name() + " --device 1 --fault " + fault);
    EXPECT_EQ(inject.exit_code, 0) << inject.output;
  }
  auto rec = run_command(prof() + " record -o " + dir.str() + " --node-name " + node.name() + " -- " + npu_run() +
                         " resnet50-train --steps 3");
  EXPECT_EQ(rec.exit_code, 0) << rec.output;
  if (spec == "8x910") {
    EXPECT_EQ(sqlite(find_dbs(dir.str()).front(), "SELECT value FROM EMU_RUN WHERE key = 'inter_group_bytes_per_s'").output,
              "16000000000\n");
  }
  if (spec == "8xA100") {  // each port: 1.5 us (the node spec's hccs_latency_ns)
    EXPECT_EQ(sqlite(find_dbs(dir.str()).front(),
                     "SELECT DISTINCT l.latencyNs FROM EMU_LINK l JOIN STRING_IDS s ON s.id = l.kind WHERE s.value = 'hccs'").output,
              "1500\n");
    // What a GPU receives through its port is counted: the port's switch-to-GPU direction was
    // published as GPU-to-switch, so rxThroughput read 0 while the ring moved data both ways.
    EXPECT_EQ(sqlite(find_dbs(dir.str()).front(),
                     "SELECT max(rxThroughput) > 0 AND abs(sum(rxThroughput) - sum(txThroughput)) < 0.05 * sum(txThroughput) FROM HCCS").output,
              "1\n");
    // Not an Ascend chip: NPU_INFO names it as itself (it read "AscendA100-emu").
    EXPECT_EQ(sqlite(find_dbs(dir.str()).front(), "SELECT DISTINCT name FROM NPU_INFO").output, "A100-emu\n");
  }
  if (before_latency) {
    for (const std::string& db : find_dbs(dir.str())) {
      EXPECT_EQ(sqlite(db, "ALTER TABLE EMU_LINK DROP COLUMN latencyNs").exit_code, 0) << db;
    }
  }
  auto report = run_command(prof() + " report " + dir.str() + " --section findings");
  EXPECT_EQ(report.exit_code, 0) << report.output;
  return report.output;
}

TEST(TwoMeshes, AHealthyNodeHasNoSlowLink) {
  std::string report = findings_after("8x910", "mesh-ok", "");
  EXPECT_EQ(report.find("[slow_link]"), std::string::npos) << report;
}

TEST(TwoMeshes, ADegradedHccsLinkIsStillASlowLink) {
  std::string report = findings_after("8x910", "mesh-slow", "link-degraded");
  EXPECT_NE(report.find("- [slow_link] (warning"), std::string::npos) << report;
  EXPECT_NE(report.find("HCCS 30 GB/s within each mesh, 16 GB/s between the meshes"), std::string::npos) << report;
}

TEST(Switched, AHealthyNodeHasNoSlowLink) {
  std::string report = findings_after("8xA100", "switch-ok", "");
  EXPECT_EQ(report.find("[slow_link]"), std::string::npos) << report;
}

TEST(Switched, ADegradedPortIsASlowLink) {
  std::string report = findings_after("8xA100", "switch-slow", "link-degraded");
  // The allreduce stays mostly hidden behind the backward pass: a finding of small cost (info).
  EXPECT_NE(report.find("- [slow_link] ("), std::string::npos) << report;
  EXPECT_NE(report.find("300 GB/s per port into the switch; 42.0 us of link latency per call set aside"), std::string::npos)
      << report;
  // A ring waits for its slowest port, which any member's could be; the link counters say which
  // (it named "the switch port of one of devices 0, 1, 2, 3, 4, 5, 6, 7").
  EXPECT_NE(report.find("The suspect is the switch port of rank 1 (device 1), which ran at 25% of its line rate"),
            std::string::npos)
      << report;
}

// An older profile has no link latencies: it loads, and its links are judged at line rate alone
// (as before): the degraded port is still found.
TEST(Switched, AProfileWithoutLinkLatenciesIsJudgedOnRateAlone) {
  std::string report = findings_after("8xA100", "switch-old", "link-degraded", true);
  EXPECT_NE(report.find("- [slow_link] ("), std::string::npos) << report;
  EXPECT_NE(report.find("(300 GB/s per port into the switch)"), std::string::npos) << report;
}

// The diagnosis matrix's slow-link scenario degrades device 1's links from its own timeline, for
// the job only: at speed 1000 a counter sample rarely falls within it, and the link events say
// which link retrained slow (the group's one link here; "the link between devices 0 and 1" said
// nothing of its state).
TEST(SlowLinkSuspect, ALinkThatRetrainedSlowBetweenTwoSamplesIsNamedFromItsEvents) {
  ScopedNode node("retrained", "--speed 1000 --seed 7");
  TempDir dir("retrained");
  auto rec = run_command(prof() + " record -o " + dir.str() + " --node-name " + node.name() + " -- " + npu_run() + " " +
                         NPUKIT_SOURCE_DIR + "/workloads/diagnosis/slow-link.json");
  ASSERT_EQ(rec.exit_code, 0) << rec.output;
  // Whether or not a sample fell within the fault (one can on a loaded machine), the events alone
  // name the link: the samples of the links' rates are taken out.
  for (const std::string& db : find_dbs(dir.str())) {
    EXPECT_EQ(sqlite(db, "DELETE FROM EMU_COUNTER WHERE fieldId = 404").exit_code, 0) << db;
  }
  auto report = run_command(prof() + " report " + dir.str() + " --section findings");
  EXPECT_NE(report.output.find("The suspect is the link between rank 0 (device 0) and rank 1 (device 1), which ran at 25% of "
                               "its line rate during the recording."),
            std::string::npos)
      << report.output;
}

}  // namespace
}  // namespace npukit::testing

namespace npukit::testing {
namespace {

// A degraded link of a data-parallel group whose gradient AllReduces run beside the tensor-parallel
// ones (ernie3-train, dp4 x tp2): the step waits for the tensor-parallel AllReduces anyway, so
// the slow link costs what the same job without the fault says, not the whole of its
// collectives' extra time with no compute beside them (4.4 ms per step named, 0.2 true).
TEST(SlowLinkCost, ACollectiveBesideAnotherGroupsCostsOnlyWhatItAddsAlone) {
  ScopedNode node("dp-link", "--speed 1000 --seed 7");
  TempDir dir("dp-link");
  FaultAgainstClean run = fault_against_clean(node, "ernie3-train --steps 4", "inject --link 0-2 --fault link-degraded", dir.str());
  const nlohmann::json* link = run.costed("slow_link", std::max(0.25 * run.truth_ms, 0.1));
  ASSERT_NE(link, nullptr) << "the degraded dp link is found";
  const nlohmann::json& report = run.report;
  EXPECT_EQ(report["header"]["faults"][0]["where"], "link-degraded on link 0-2");
  // A mesh AllReduce waits for its slowest transfer, over any of the group's links: the link
  // counters name the one (it named "the links among devices 0, 2, 4, 6").
  EXPECT_NE((*link)["text"].get<std::string>().find("The suspect is the link between rank 0 (device 0) and rank 2 (device 2), "
                                                    "which ran at 25% of its line rate during the recording."),
            std::string::npos)
      << (*link)["text"];
}

}  // namespace
}  // namespace npukit::testing
