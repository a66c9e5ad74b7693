// deploy/k8s: the node-problem-detector custom-plugin config and the npu-exporter DaemonSet.
// The manifests parse (YAML with Debian's python3-yaml, installed when missing; JSON with
// nlohmann) and say what the programs do; the NPD rule's command is run as NPD runs it (its
// path and args, $NPU_NODE, its timeout and output limit) on an OK, a warning, a failing and an
// absent node.
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "tests/daemon_util.hpp"

namespace npukit::testing {
namespace {

using nlohmann::json;

std::string source(const std::string& rel) { return std::string(NPUKIT_SOURCE_DIR) + "/" + rel; }

json read_json(const std::string& rel) {
  std::ifstream in(source(rel));
  return json::parse(in, nullptr, false);
}

// Every document of a YAML file, as JSON ("" and a reason when PyYAML cannot be had).
json read_yaml(const std::string& rel, std::string& why) {
  why = ensure_debian_package("PyYAML", "python3-yaml", "/usr/bin/python3 -c \"import yaml\"");
  if (!why.empty()) return json();
  auto r = run_command("/usr/bin/python3 -c 'import json,sys,yaml; print(json.dumps(list(yaml.safe_load_all(open(sys.argv[1])))))' " +
                       source(rel));
  return json::parse(r.output, nullptr, false);
}

double seconds_of(const std::string& duration) { return std::stod(duration.substr(0, duration.size() - 1)); }

TEST(K8s, ExporterDaemonSetRunsTheExporterOnTheBusItReads) {
  std::string why;
  json docs = read_yaml("deploy/k8s/npu-exporter-daemonset.yaml", why);
  if (!why.empty()) GTEST_SKIP() << why;
  ASSERT_TRUE(docs.is_array()) << docs.dump();
  const json* ds = nullptr;
  for (const json& d : docs) {
    if (d["kind"] == "DaemonSet") ds = &d;
  }
  ASSERT_NE(ds, nullptr);
  EXPECT_EQ((*ds)["apiVersion"], "apps/v1");
  const json& spec = (*ds)["spec"];
  const json& labels = spec["template"]["metadata"]["labels"];
  for (const auto& [key, value] : spec["selector"]["matchLabels"].items()) EXPECT_EQ(labels[key], value) << key;
  EXPECT_FALSE(spec["selector"]["matchLabels"].empty());
  const json& pod = spec["template"]["spec"];
  const json& c = pod["containers"][0];
  EXPECT_EQ(c["command"][0], "/usr/bin/npu-exporter");
  EXPECT_EQ(c["args"], json::array({"--listen", "0.0.0.0:9101"}));
  EXPECT_EQ(c["ports"][0]["containerPort"], 9101);
  EXPECT_EQ(spec["template"]["metadata"]["annotations"]["prometheus.io/port"], "9101");
  EXPECT_EQ(c["volumeMounts"][0]["mountPath"], "/dev/shm");  // the bus is POSIX shared memory
  EXPECT_EQ(pod["volumes"][0]["hostPath"]["path"], "/dev/shm");
  EXPECT_EQ(c["env"][0]["name"], "NPU_NODE");
}

TEST(K8s, NpdRuleMeetsThePluginContractOnEveryNodeState) {
  json cfg = read_json("deploy/k8s/npu-problem-monitor.json");
  ASSERT_TRUE(cfg.is_object());
  EXPECT_EQ(cfg["plugin"], "custom");
  const json& rule = cfg["rules"][0];
  EXPECT_EQ(rule["condition"], cfg["conditions"][0]["type"]);
  EXPECT_EQ(rule["path"], "/usr/bin/npu-smi");
  std::size_t max_len = cfg["pluginConfig"]["max_output_length"];
  double timeout_s = seconds_of(rule["timeout"]);
  EXPECT_LE(timeout_s, 5.0);
  std::string command = std::string(NPUKIT_BUILD_DIR) + "/smi/npu-smi";  // the rule's path, built here
  for (const json& a : rule["args"]) command += " " + a.get<std::string>();

  ScopedNode node("npd");
  auto run_as_npd = [&](const std::string& node_name, int expected_exit, const std::string& starts) {
    auto t0 = std::chrono::steady_clock::now();
    // NPD reads stdout only; stderr must not be needed to understand the line.
    auto r = run_command("(NPU_NODE=" + node_name + " " + command + " 2>/dev/null)");
    double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    EXPECT_EQ(r.exit_code, expected_exit) << r.output;
    EXPECT_LT(took, timeout_s) << r.output;
    ASSERT_FALSE(r.output.empty());
    EXPECT_EQ(r.output.find('\n'), r.output.size() - 1) << "one line: " << r.output;
    EXPECT_LE(r.output.size() - 1, max_len) << r.output;
    EXPECT_EQ(r.output.rfind(starts, 0), 0u) << r.output;
  };
  run_as_npd(node.name(), 0, "NPUs OK: 8 chips PASS");
  ASSERT_EQ(run_command(emud() + " inject --node-name " + node.name() + " --device 2 --fault ecc-storm").exit_code, 0);
  ASSERT_TRUE(eventually([&] { return run_command("NPU_NODE=" + node.name() + " " + command).output.find("warning") != std::string::npos; }));
  run_as_npd(node.name(), 0, "NPUs OK, 1 warning(s): NPU 2 has ");
  ASSERT_EQ(run_command(emud() + " inject --node-name " + node.name() + " --device 5 --fault aicore-hang").exit_code, 0);
  ASSERT_TRUE(eventually([&] { return run_command("NPU_NODE=" + node.name() + " " + command).exit_code == 1; }));
  run_as_npd(node.name(), 1, "NPU problem: NPU 5 had an AI Core task time out");
  // One down link is one problem, named by its link (its two ends only warn).
  ASSERT_EQ(run_command(emud() + " reset --node-name " + node.name() + " --device 5").exit_code, 0);
  ASSERT_EQ(run_command(emud() + " inject --node-name " + node.name() + " --link 3-4 --fault link-down").exit_code, 0);
  run_as_npd(node.name(), 1, "NPU problem: HCCS link 3-4 down");
  run_as_npd("no-such-node", 2, "NPU health unknown: ");
}

}  // namespace
}  // namespace npukit::testing
