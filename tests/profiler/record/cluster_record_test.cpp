// Recording a job across the hosts of an emulated cluster: `npu-prof record --node <cluster>`
// reads every host's bus into one multi-rank collection (global ranks, each host's own device
// ids), and the merged report names the host an injected slow-host fault made the straggler.
#include <gtest/gtest.h>
#include <cstdlib>
#include <chrono>
#include <thread>

#include <map>
#include <set>

#include "tests/profiler/invariants.hpp"

namespace npukit::testing {
namespace {

namespace fs = std::filesystem;

std::string diagnosis(const std::string& name) {
  return std::string(NPUKIT_SOURCE_DIR) + "/workloads/diagnosis/" + name + ".json";
}

// A 2-host cluster (2x8x910B2): the diagnosis matrix's 16-rank step with host 1 slowed from its
// start (the workload's own timeline), recorded once.
struct ClusterRun {
  ScopedNode node{"cluster", "--spec 2x8x910B2 --seed 7"};
  TempDir dir{"cluster"};
  CommandResult record;
  std::vector<std::string> dbs;
  ClusterRun() {
    record = run_command(prof() + " record -o " + dir.str() + " --node-name " + node.name() + " -- " + npu_run() + " " +
                         diagnosis("straggler-host"));
    dbs = find_dbs(dir.str());
  }
};

const ClusterRun& cluster_run() {
  static ClusterRun run;
  return run;
}

TEST(ClusterRecord, EveryHostsRanksLandInOneCollectionWithGlobalRanksAndLocalDevices) {
  const ClusterRun& run = cluster_run();
  ASSERT_EQ(run.record.exit_code, 0) << run.record.output;
  ASSERT_EQ(run.dbs.size(), 16u) << run.record.output;
  std::set<std::string> tags;
  std::map<int, std::set<std::string>> uids;  // host -> the hostUids its ranks carry
  for (int rank = 0; rank < 16; ++rank) {
    fs::path db(run.dbs[static_cast<std::size_t>(rank)]);
    tags.insert(db.parent_path().filename().string().substr(12));
    const int device = rank % 8;  // each host numbers its NPUs 0-7, as its npu-smi does
    std::string d = std::to_string(device);
    auto info = nlohmann::json::parse(read_file((db.parent_path() / ("device_" + d) / ("info.json." + d)).string()), nullptr, false);
    ASSERT_FALSE(info.is_discarded()) << db;
    EXPECT_EQ(info["rank_id"], rank) << db;
    EXPECT_EQ(sqlite(db.string(), "SELECT rankId, deviceId FROM RANK_DEVICE_MAP").output, std::to_string(rank) + "|" + d + "\n");
    std::string host = run.node.name() + "-" + std::to_string(rank / 8);
    EXPECT_EQ(sqlite(db.string(), "SELECT value FROM EMU_RUN WHERE key = 'node'").output, host + "\n") << db;
    // Each emulated host is a host of its own to tools that group ranks by host (they all read
    // this machine's uid and name before).
    std::string uid = info.value("hostUid", std::string());
    EXPECT_EQ(sqlite(db.string(), "SELECT hostUid || '|' || hostName FROM HOST_INFO").output, uid + "|" + host + "\n") << db;
    uids[rank / 8].insert(uid);
    // The cross-host AllReduce's group spans all 16 ranks; this rank is its own place in it.
    EXPECT_EQ(sqlite(db.string(), "SELECT DISTINCT rankSize FROM COMMUNICATION_OP").output, "16\n") << db;
    EXPECT_EQ(sqlite(db.string(), "SELECT DISTINCT srcRank FROM COMMUNICATION_TASK_INFO").output, std::to_string(rank) + "\n") << db;
    for (const std::string& v : invariant_violations(db.string(), true)) ADD_FAILURE() << db << ": " << v;
  }
  EXPECT_EQ(tags.size(), 1u) << "one recording: one timestamp and tag across hosts";
  ASSERT_EQ(uids[0].size(), 1u);
  ASSERT_EQ(uids[1].size(), 1u);
  EXPECT_NE(*uids[0].begin(), *uids[1].begin());
}

// Each host's bus has its own reader: the merged report counted only host 0's events (a second
// host's 138 k missed events were not in its header or its dropped_events finding), and named
// only host 0 as the node in --full, JSON and HTML.
TEST(ClusterRecord, TheMergedHeaderCountsEveryHostsEventsAndNamesEveryHost) {
  const ClusterRun& run = cluster_run();
  ASSERT_EQ(run.dbs.size(), 16u) << run.record.output;
  long long recorded = 0, missed = 0;
  for (const std::string& db : {run.dbs[0], run.dbs[8]}) {  // one rank of each host
    auto counts = sqlite(db, "SELECT (SELECT value FROM EMU_RUN WHERE key = 'events_recorded') || '|' || "
                             "(SELECT value FROM EMU_RUN WHERE key = 'events_missed')");
    long long r = 0, m = 0;
    ASSERT_EQ(std::sscanf(counts.output.c_str(), "%lld|%lld", &r, &m), 2) << counts.output;
    ASSERT_GT(r, 0);
    recorded += r, missed += m;
  }
  auto json_out = run_command("(" + prof() + " report " + run.dir.str() + " --format json 2>/dev/null)");
  auto report = nlohmann::json::parse(json_out.output, nullptr, false);
  ASSERT_FALSE(report.is_discarded()) << json_out.output;
  EXPECT_EQ(report["header"]["events_recorded"], recorded);
  EXPECT_EQ(report["header"]["events_missed"], missed);
  EXPECT_EQ(report["header"]["hosts"], nlohmann::json::array({run.node.name() + "-0", run.node.name() + "-1"}));
  auto full = run_command(prof() + " report " + run.dir.str() + " --full");
  EXPECT_NE(full.output.find("Node:       2 hosts of 8x910B2 ('" + run.node.name() + "-0', '" + run.node.name() + "-1')"),
            std::string::npos) << full.output.substr(0, 800);
}

// A job on one device of a 2-host cluster is one rank: the host it did not touch kept all 8 of its
// trees (idle trees were dropped per host, not over the recording), and the report counted 9 ranks.
TEST(ClusterRecord, AHostTheJobDidNotTouchLeavesNoTrees) {
  ScopedNode node("untouched", "--spec 2x8x910B2 --speed 1000");
  TempDir dir("untouched");
  auto r = run_command(prof() + " record -o " + dir.str() + " --node-name " + node.name() + " -- " + npu_run() + " " +
                       data_path("small-train.json") + " --steps 1 --devices 5");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::vector<std::string> dbs = find_dbs(dir.str());
  ASSERT_EQ(dbs.size(), 1u) << r.output;
  EXPECT_NE(dbs[0].find("PROF_000006_"), std::string::npos) << dbs[0];
  EXPECT_EQ(sqlite(dbs[0], "SELECT value FROM EMU_RUN WHERE key = 'node'").output, node.name() + "-0\n");
}

TEST(ClusterRecord, TheMergedReportNamesTheSlowHostAsTheStraggler) {
  const ClusterRun& run = cluster_run();
  ASSERT_EQ(run.record.exit_code, 0) << run.record.output;
  auto r = run_command(prof() + " report " + run.dir.str() + " --format json");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto report = nlohmann::json::parse(r.output, nullptr, false);
  ASSERT_FALSE(report.is_discarded()) << r.output;
  const std::string slow = run.node.name() + "-1";
  ASSERT_FALSE(report["findings"].empty()) << r.output;
  const auto& top = report["findings"][0];
  EXPECT_EQ(top["id"], "slow_host") << r.output;
  std::string text = top["text"];
  EXPECT_NE(text.find("Straggler host: " + slow + " (ranks 8-15)"), std::string::npos) << text;
  EXPECT_NE(text.find("waiting for input"), std::string::npos) << text;
  // One root cause, one finding: neither a slow rank nor the slow host's starved input again.
  for (const auto& f : report["findings"]) {
    EXPECT_NE(f["id"], "slow_rank") << f.dump();
    EXPECT_NE(f["id"], "data_loader_starvation") << f.dump();
  }
  auto text_report = run_command(prof() + " report " + run.dir.str());
  EXPECT_NE(text_report.output.find("(device 3 of " + slow + ")"), std::string::npos) << text_report.output;
  // The Slowest verdict names the host too: it named one of its eight tied ranks, a different one
  // from run to run.
  EXPECT_NE(text_report.output.find("  straggler host: " + slow + ", +"), std::string::npos) << text_report.output;
  EXPECT_EQ(text_report.output.find("  straggler: rank"), std::string::npos) << text_report.output;
  // What the emulator did, beside what the profile concludes.
  EXPECT_NE(text_report.output.find("Node:      2 hosts of 8x910B2"), std::string::npos) << text_report.output;
  ASSERT_EQ(report["header"]["faults"].size(), 1u) << report["header"].dump();
  EXPECT_EQ(report["header"]["faults"][0]["where"], "host-slow on " + slow + " (all 8 NPUs)");
  // The timeline injects it at 0 ms, before the first task (which waits for its input; by how
  // long depends on the paced node's lag, under 0.5 ms on a slow sanitizer build): said as such,
  // never as a negative time after it.
  EXPECT_TRUE(text_report.output.find(" s before the first task") != std::string::npos ||
              text_report.output.find("injected as the first task ran") != std::string::npos)
      << text_report.output;
  EXPECT_EQ(text_report.output.find("injected -"), std::string::npos) << text_report.output;
}

// A host going down mid-job (the workload's own timeline): the job fails on that host's first
// NPU, and the report says so beside the fault, by host.
TEST(ClusterRecord, AHostThatGoesDownFailsTheJobAndTheReportSaysWhere) {
  ScopedNode node("hostdown", "--spec 2x8x910B2 --seed 7");
  TempDir dir("hostdown");
  auto rec = run_command(prof() + " record -o " + dir.str() + " --node-name " + node.name() + " -- " + npu_run() + " " +
                         data_path("cluster-host-down.json"));
  EXPECT_NE(rec.exit_code, 0) << rec.output;
  EXPECT_NE(rec.output.find("device 8 lost"), std::string::npos) << rec.output;
  auto r = run_command(prof() + " report " + dir.str());
  EXPECT_NE(r.output.find("Failed:    the job ended in error: device 8 lost"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("Fault:     host-down on " + node.name() + "-1 (all 8 NPUs)"), std::string::npos) << r.output;
}

// A fault injected by hand before the recording starts is in the profile all the same: the
// recorder notes what the node says is in force. The workload's own timeline injects the same
// fault again: already in force, it does not take effect twice.
TEST(ClusterRecord, AFaultInForceBeforeTheRecordingIsInItsReport) {
  ScopedNode node("before", "--spec 2x8x910B2 --seed 7");
  TempDir dir("before");
  ASSERT_EQ(run_command(emud() + " inject --node-name " + node.name() + " --host 1 --fault host-slow").exit_code, 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));  // the fault is 1.5 s old when recording starts
  auto rec = run_command(prof() + " record -o " + dir.str() + " --node-name " + node.name() + " -- " + npu_run() + " " +
                         diagnosis("straggler-host"));
  ASSERT_EQ(rec.exit_code, 0) << rec.output;
  // Both hosts' sessions start with the recording: host 1's started at the injection, 1.5 s
  // before (the merged report's session grew with the fault's age).
  std::vector<std::string> dbs = find_dbs(dir.str());
  ASSERT_EQ(dbs.size(), 16u);
  auto start = [](const std::string& db) { return std::stoll(sqlite(db, "SELECT startTimeNs FROM SESSION_TIME_INFO").output); };
  EXPECT_LT(std::llabs(start(dbs[0]) - start(dbs[8])), 500'000'000LL) << "host 0 and host 1 sessions start apart";
  EXPECT_EQ(sqlite(dbs[8], "SELECT count(*) FROM EMU_EVENT e JOIN EMU_EVENT_TYPE t ON t.id = e.type "
                           "WHERE t.name = 'fault_injected' AND e.a = 1 AND e.b > 0").output,
            "1\n") << "the fault, stamped at the recording's start, keeps when it began";
  auto r = run_command(prof() + " report " + dir.str());
  EXPECT_NE(r.output.find("Fault:     host-slow on " + node.name() + "-1 (all 8 NPUs), in force when the recording started"),
            std::string::npos) << r.output;
  EXPECT_NE(r.output.find("[slow_host]"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("Fault:"), r.output.rfind("Fault:")) << "one Fault line: " << r.output;
}

// On a fresh 2x8x910B2 cluster at speed 1000: `cause` (an npu-emud command) on its host 1, then
// `job` across both hosts recorded into `dir`. Returns host 1's name, or "" when a step failed.
std::string record_with_cause_on_host1(const std::string& tag, const std::string& cause, const std::string& job, const TempDir& dir) {
  ScopedNode node(tag, "--spec 2x8x910B2 --seed 7 --speed 1000");
  auto caused = run_command(emud() + " " + cause + " --node-name " + node.name() + "-1");
  EXPECT_EQ(caused.exit_code, 0) << caused.output;
  auto rec = run_command(prof() + " record -o " + dir.str() + " --node-name " + node.name() + " -- " + npu_run() + " " + job);
  EXPECT_EQ(rec.exit_code, 0) << rec.output;
  return caused.exit_code == 0 && rec.exit_code == 0 ? node.name() + "-1" : "";
}

// A degraded RoCE port slows the AllReduce across hosts, whose every transfer between the hosts
// crosses two ports, one on each: the recording's link counters say which port retrained slow (it
// named "a RoCE port of hosts X-0, X-1").
TEST(ClusterRecord, ASlowRoCEPortIsNamedByItsHostAndRank) {
  TempDir dir("roce");
  const std::string host1 = record_with_cause_on_host1("roce", "inject --link 3-roce --fault link-degraded",
                                                       "resnet50-train --hosts 2 --steps 3", dir);
  ASSERT_FALSE(host1.empty());
  auto r = run_command(prof() + " report " + dir.str() + " --section findings");
  EXPECT_NE(r.output.find("[slow_link]"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("The suspect is the RoCE port of rank 11 (device 3 of " + host1 +
                          "), which ran at 25% of its line rate during the recording."),
            std::string::npos)
      << r.output;
}

// A power-capped NPU of host 1 is throttled: the finding and the throttle section name it as the
// report names ranks, by its host's own device id (they said "device 10", which no host has).
TEST(ClusterRecord, AThrottledNpuIsNamedByItsRankAndHost) {
  TempDir dir("capped");
  const std::string host1 = record_with_cause_on_host1("capped", "set --device 2 --power-limit 150",
                                                       "resnet50-train --hosts 2 --steps 20", dir);
  ASSERT_FALSE(host1.empty());
  const std::string rank = "rank 10 (device 2 of " + host1 + ")";
  auto r = run_command(prof() + " report " + dir.str() + " --section findings");
  EXPECT_NE(r.output.find("throttled on 1 device(s): " + rank + " (power limit)"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("device 10"), std::string::npos) << r.output;
  auto section = run_command(prof() + " report " + dir.str() + " --section throttle");
  EXPECT_NE(section.output.find(rank), std::string::npos) << section.output;
}

// HCCL runs an AllReduce across hosts within each host over HCCS, then across the hosts over RDMA
// (each NPU's RoCE port): the communication task info says RoCE/RDMA, and msprof's analysis
// tables give each rank its HCCS peers (its own host's 7 NPUs, a mesh) and its RDMA peer (the
// same local rank on the other host), never PCIe.
TEST(ClusterRecord, ACollectiveAcrossHostsIsRdmaOverRoceWithHccsWithinEachHost) {
  const ClusterRun& run = cluster_run();
  ASSERT_EQ(run.dbs.size(), 16u) << run.record.output;
  for (int rank : {3, 12}) {
    fs::path db(run.dbs[static_cast<std::size_t>(rank)]);
    // One task info row per send: SDMA over HCCS to the 7 peers in its host, RDMA over its RoCE
    // port to its peer on the other host (the op's single row read ROCE|RDMA to no rank).
    EXPECT_EQ(sqlite(db.string(), "SELECT l.name || '|' || t.name, count(DISTINCT i.dstRank) FROM COMMUNICATION_TASK_INFO i "
                                  "JOIN ENUM_HCCL_LINK_TYPE l ON l.id = i.linkType JOIN ENUM_HCCL_TRANSPORT_TYPE t ON t.id = i.transportType "
                                  "GROUP BY 1 ORDER BY 1")
                  .output,
              "HCCS|SDMA|7\nROCE|RDMA|1\n") << db;
    std::string analysis = (db.parent_path() / "analyze" / "communication_analyzer.db").string();
    const int host = rank / 8, other = 1 - host, local = rank % 8;
    std::string hccs_peers;
    for (int p = host * 8; p < host * 8 + 8; ++p) {
      if (p != rank) hccs_peers += (hccs_peers.empty() ? "" : ",") + std::to_string(p);
    }
    EXPECT_EQ(sqlite(analysis, "SELECT transport_type, group_concat(dst_rank) FROM (SELECT DISTINCT transport_type, dst_rank "
                               "FROM CommAnalyzerMatrix ORDER BY transport_type, dst_rank) GROUP BY transport_type")
                  .output,
              "HCCS|" + hccs_peers + "\nRDMA|" + std::to_string(other * 8 + local) + "\n") << analysis;
    // Per rank and op (4 MiB buckets): 2(L-1)/L of it over HCCS, 2(H-1)/H of its 1/L share over RDMA.
    EXPECT_EQ(sqlite(analysis, "SELECT DISTINCT transport_type, round(transit_size, 6) FROM CommAnalyzerBandwidth ORDER BY 1").output,
              "HCCS|7.340032\nRDMA|0.524288\n") << analysis;
  }
}

// `npu-run <job>` on a fresh 2-host cluster (2x8x910B2), recorded.
struct TwoHostRun {
  ScopedNode node;
  TempDir dir;
  CommandResult record;
  std::vector<std::string> dbs;
  TwoHostRun(const std::string& name, const std::string& job) : node{name, "--spec 2x8x910B2 --speed 100"}, dir{name} {
    record = run_command(prof() + " record -o " + dir.str() + " --node-name " + node.name() + " -- " + npu_run() + " " + job +
                         " --node " + node.name());
    dbs = find_dbs(dir.str());
  }
  // Each distinct task info row as "<label> src->dst LINK|TRANSPORT", in order; `label` is an SQL
  // expression over o (COMMUNICATION_OP), y (its opType) and g (its groupName), `where` picks the rows.
  std::string sends(const std::string& db, const std::string& label, const std::string& where) const {
    return sqlite(db, "SELECT DISTINCT " + label + " || ' ' || i.srcRank || '->' || i.dstRank || ' ' || l.name || '|' || t.name "
                      "FROM COMMUNICATION_TASK_INFO i JOIN COMMUNICATION_OP o ON o.opId = i.opId "
                      "JOIN STRING_IDS y ON y.id = o.opType JOIN STRING_IDS g ON g.id = i.groupName "
                      "JOIN ENUM_HCCL_LINK_TYPE l ON l.id = i.linkType JOIN ENUM_HCCL_TRANSPORT_TYPE t ON t.id = i.transportType "
                      "WHERE " + where + " ORDER BY 1")
        .output;
  }
  void expect_invariants() const {
    for (const std::string& db : dbs) {
      for (const std::string& v : invariant_violations(db, true)) ADD_FAILURE() << db << ": " << v;
    }
  }
};

// 6 ranks of ernie3-train (dp 3 x tp 2) on 2 hosts, 3 on each: the data-parallel group of ranks
// 0, 2, 4 has two members on host 0 and one on host 1, so it runs one ring, not HCCL's hierarchy.
// Its send between the two members on host 0 goes over their HCCS link (it was labelled PCIe:
// a ring was taken to mean PCIe), its send to host 1 over RDMA.
TEST(ClusterRecord, AGroupSpreadUnevenlyOverHostsSendsOverHccsWithinAHostAndRdmaAcross) {
  TwoHostRun run("uneven", "ernie3-train --hosts 2 --ranks 6 --steps 2");
  ASSERT_EQ(run.record.exit_code, 0) << run.record.output;
  ASSERT_EQ(run.dbs.size(), 6u) << run.record.output;
  auto dp_sends = [&](const std::string& db) {
    return run.sends(db, "(SELECT value FROM STRING_IDS WHERE id = o.algType)", "g.value LIKE 'dp%'");
  };
  EXPECT_EQ(dp_sends(run.dbs[0]), "RING 0->1 HCCS|SDMA\n") << "rank 0 (host 0) to rank 2 (host 0)";
  EXPECT_EQ(dp_sends(run.dbs[2]), "RING 1->2 ROCE|RDMA\n") << "rank 2 (host 0) to rank 4 (host 1)";
  run.expect_invariants();
}

// A pipeline longer than a host's share of the job: pipeline-train on 4 ranks over 2 hosts puts
// stages 0-1 on host 0 and 2-3 on host 1. Each Send and Receive is one transfer from the sender
// to the receiver, over HCCS within a host and RoCE between stages 1 and 2 (every one was ROCE to
// no rank: the event did not name its peer, so the group's cross-host link was taken), and the
// analysis matrix has the four directed stage links.
TEST(ClusterRecord, APipelineAcrossHostsSendsOverHccsWithinAHostAndRoceBetweenThem) {
  TwoHostRun run("pipeline", "pipeline-train --hosts 2 --ranks 4 --steps 2");
  ASSERT_EQ(run.record.exit_code, 0) << run.record.output;
  ASSERT_EQ(run.dbs.size(), 4u) << run.record.output;
  auto p2p = [&](const std::string& db) {
    return run.sends(db, "substr(y.value, 6, 4)", "y.value IN ('hcom_send_', 'hcom_receive_')");
  };
  EXPECT_EQ(p2p(run.dbs[0]), "rece 1->0 HCCS|SDMA\nsend 0->1 HCCS|SDMA\n") << "stage 0: activations out, gradients in";
  EXPECT_EQ(p2p(run.dbs[1]), "rece 0->1 HCCS|SDMA\nrece 2->1 ROCE|RDMA\nsend 1->0 HCCS|SDMA\nsend 1->2 ROCE|RDMA\n");
  EXPECT_EQ(p2p(run.dbs[2]), "rece 1->2 ROCE|RDMA\nrece 3->2 HCCS|SDMA\nsend 2->1 ROCE|RDMA\nsend 2->3 HCCS|SDMA\n");
  fs::path analysis = fs::path(run.dbs[1]).parent_path() / "analyze" / "communication_analyzer.db";
  EXPECT_EQ(sqlite(analysis.string(), "SELECT DISTINCT src_rank || '->' || dst_rank || ' ' || transport_type FROM CommAnalyzerMatrix "
                                      "WHERE group_name LIKE 'pp%' ORDER BY 1")
                .output,
            "0->1 HCCS\n1->0 HCCS\n1->2 RDMA\n2->1 RDMA\n");
  expect_bubble_part_of_exposed(run_command(prof() + " report " + run.dir.str()).output);
  run.expect_invariants();
}

TEST(ClusterRecord, OneRankOfTheCollectionReadsAlone) {
  const ClusterRun& run = cluster_run();
  auto r = run_command(prof() + " report " + run.dir.str() + " --rank 9 --section steps");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("Step breakdown"), std::string::npos) << r.output;
  // Alone, it still names its host (it read "Node: 8x910B2, 1 device" and "host-slow on rank 9 (device 1)").
  const std::string host = run.node.name() + "-1";
  auto summary = run_command(prof() + " report " + run.dir.str() + " --rank 9");
  EXPECT_NE(summary.output.find("Node:      " + host + ", a host of 8x910B2 ("), std::string::npos) << summary.output;
  EXPECT_NE(summary.output.find("host-slow on " + host + " (1 NPU recorded)"), std::string::npos) << summary.output;
}

}  // namespace
}  // namespace npukit::testing
