// npu-smi stats [--job ID] [--json]: job accounting (like dcgmi stats) for the node's running and
// recent jobs, from the node's control channel: devices, start/end (virtual seconds), exit status,
// and per chip energy, AI-core utilization (average and sampled maximum), HBM peak, highest
// temperature, throttled time by reason and ECC errors during the job.
#include <ostream>

#include "smi/cli/commands.hpp"
#include "smi/common/text.hpp"
#include "telemetry/json_reader.hpp"

namespace npukit::smi {

namespace tf = telemetry;
using nlohmann::json;

namespace {

std::string seconds(const json& ns) { return ns.is_number() ? strprintf("%.3f s", ns.get<double>() / 1e9) : "running"; }

// The job's devices with npu-smi's card and chip ids added.
json with_ids(const tf::Snapshot& s, json job) {
  for (json& d : job["accounting"]["devices"]) {
    int device = d.value("device", -1);
    if (device < 0 || device >= s.device_count()) continue;
    d["npu_id"] = s.device_info(device).npu_id;
    d["chip_id"] = s.device_info(device).chip_id;
  }
  return job;
}

std::string render_job(const json& j) {
  std::string out = strprintf("Job %d '%s' (pid %d): %s", j.value("id", 0), j.value("name", std::string()).c_str(),
                              j.value("pid", 0), j.value("state", std::string()).c_str());
  if (j["exit_code"].is_number()) out += strprintf(", exit %d", j["exit_code"].get<int>());
  out += "\n  start " + seconds(j["started_ns"]) + ", end " + seconds(j["finished_ns"]) +
         strprintf(" (virtual time), %.3f s; peak HBM reserved %.1f MiB\n", j["accounting"].value("duration_s", 0.0),
                   j.value("peak_reserved_bytes", 0.0) / (1 << 20));
  for (const json& d : j["accounting"]["devices"]) {
    out += strprintf("  NPU %d Chip %d: energy %.1f J, AI Core avg %.1f%% max %.1f%%, HBM peak %.1f MiB in use "
                     "(%.1f reserved), max temp %.1f C, throttled thermal %.2f s power cap %.2f s, ECC %llu "
                     "single-bit %llu double-bit\n",
                     d.value("npu_id", -1), d.value("chip_id", -1), d.value("energy_j", 0.0),
                     d.value("aicore_util_avg_percent", 0.0), d.value("aicore_util_max_percent", 0.0),
                     d.value("hbm_peak_allocated_bytes", 0.0) / (1 << 20), d.value("hbm_peak_reserved_bytes", 0.0) / (1 << 20),
                     d.value("temperature_max_c", 0.0), d["throttled_s"].value("thermal", 0.0),
                     d["throttled_s"].value("power_cap", 0.0),
                     static_cast<unsigned long long>(d.value("ecc_single_bit", 0)),
                     static_cast<unsigned long long>(d.value("ecc_double_bit", 0)));
  }
  return out;
}

}  // namespace

int cmd_stats(Context& ctx, Session& session, std::optional<int> job, bool as_json) {
  auto reply = ask_node(session, {{"op", "list_jobs"}});
  if (!reply.ok()) {
    *ctx.err << "npu-smi: " << reply.status().message() << "\n";
    return reply.status().code() == Code::kUnavailable ? kExitNoNode : kExitDcmiFailed;
  }
  if (!reply->value("ok", false)) {
    *ctx.err << "npu-smi: stats: " << reply->value("error", std::string("the node refused list_jobs")) << "\n";
    return kExitDcmiFailed;
  }
  json jobs = json::array();
  for (const json& j : (*reply)["jobs"]) {
    if (!job || j.value("id", -1) == *job) jobs.push_back(with_ids(session.snapshot, j));
  }
  if (job && jobs.empty()) {
    *ctx.err << "npu-smi: stats --job: no job " << *job << " on node '" << session.snapshot.node().node_name << "'\n";
    return kExitUsage;
  }
  if (as_json) {
    for (json& j : jobs) j.erase("step_ms");
    *ctx.out << json_text(json{{"node", session.snapshot.node().node_name}, {"jobs", jobs}}, 2) << "\n";
    return kExitOk;
  }
  if (jobs.empty()) *ctx.out << "No jobs on node '" << session.snapshot.node().node_name << "'.\n";
  for (const json& j : jobs) *ctx.out << render_job(j);
  return kExitOk;
}

}  // namespace npukit::smi
