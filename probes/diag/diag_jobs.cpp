#include "probes/diag/diag_jobs.hpp"

#include <thread>

namespace npukit::probes {

namespace tf = telemetry;
using nlohmann::json;

namespace {

constexpr auto kPollInterval = std::chrono::milliseconds(20);

struct Tracked {
  int id = 0;
  bool ended = false;
};

std::string reply_error(const Result<json>& reply, const char* what) {
  if (!reply.ok()) return reply.status().message();
  return reply->value("error", std::string(what) + " refused");
}

// One poll of job `t`; true once it has ended.
bool poll(tf::Client& client, Tracked& t, JobOutcome& out) {
  auto reply = client.control({{"op", "job_status"}, {"job", t.id}, {"since_step", out.step_ms.size()}});
  if (!reply.ok() || !reply->value("ok", false)) {
    out.error = reply_error(reply, "job_status");
    return true;
  }
  const json& job = (*reply)["job"];
  for (const json& ms : job.value("step_ms", json::array())) out.step_ms.push_back(ms.get<double>());
  std::string state = job.value("state", std::string());
  if (state == "running") return false;
  out.ok = state == "done";
  out.error = out.ok ? "" : job.value("error", state);
  out.findings = job.value("findings", json::array());
  out.accounting = job.value("accounting", json());
  return true;
}

}  // namespace

std::vector<JobOutcome> run_jobs(tf::Client& client, const std::vector<tf::Program>& programs,
                                 std::chrono::milliseconds deadline, const std::function<void()>& tick,
                                 const std::function<bool()>& interrupted) {
  std::vector<JobOutcome> out(programs.size());
  std::vector<Tracked> jobs(programs.size());
  for (std::size_t i = 0; i < programs.size(); ++i) {
    auto reply = client.control({{"op", "submit"}, {"program", tf::program_to_json(programs[i])}});
    if (!reply.ok() || !reply->value("ok", false)) {
      out[i].error = reply_error(reply, "submit");
      jobs[i].ended = true;
    } else {
      jobs[i].id = reply->value("job", 0);
    }
  }
  auto give_up = std::chrono::steady_clock::now() + deadline;
  for (bool running = true; running;) {
    running = false;
    for (std::size_t i = 0; i < jobs.size(); ++i) {
      if (!jobs[i].ended) jobs[i].ended = poll(client, jobs[i], out[i]);
      running = running || !jobs[i].ended;
    }
    if (tick) tick();
    if (!running) break;
    bool stop = interrupted && interrupted();
    if (stop || std::chrono::steady_clock::now() > give_up) {
      for (std::size_t i = 0; i < jobs.size(); ++i) {
        if (jobs[i].ended) continue;
        (void)client.control({{"op", "cancel"}, {"job", jobs[i].id}});
        out[i].error = stop ? "interrupted (cancelled)"
                            : "did not finish within " + std::to_string(deadline.count() / 1000) + " s (cancelled)";
      }
      break;
    }
    std::this_thread::sleep_for(kPollInterval);
  }
  return out;
}

const json* JobOutcome::account_of(int device) const {
  if (!accounting.is_object() || !accounting.contains("devices") || !accounting["devices"].is_array()) return nullptr;
  for (const json& d : accounting["devices"]) {
    if (d.is_object() && d.value("device", -1) == device) return &d;
  }
  return nullptr;
}

std::optional<uint64_t> JobOutcome::counted(int device, const char* key) const {
  const json* d = account_of(device);
  if (d == nullptr || !d->contains(key) || !(*d)[key].is_number()) return std::nullopt;
  return (*d)[key].get<uint64_t>();
}

std::chrono::milliseconds deadline_for(const tf::Snapshot& s, double virtual_seconds) {
  double speed = s.node_field(tf::fid::kNodeSpeedRatio).number().value_or(1.0);
  if (speed <= 0) speed = 1.0;
  return std::chrono::milliseconds(static_cast<int64_t>((virtual_seconds * 3 + 4.0) / speed * 1000) + 10000);
}

}  // namespace npukit::probes
