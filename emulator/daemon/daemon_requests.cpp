// The daemon's control requests, executed on the node thread (daemon.hpp).
#include <algorithm>
#include <fstream>

#include "emulator/daemon/daemon.hpp"
#include "telemetry/incidents.hpp"

namespace npukit::emu {

namespace tf = telemetry;
using nlohmann::json;

namespace {

json status_reply(const Status& s, std::string_view code = "invalid_argument") {
  return s.ok() ? json{{"ok", true}} : tf::error_reply(s.message(), code);
}

// The process name of `pid` as the kernel knows it ("" when gone).
std::string process_name_of(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/comm");
  std::string name;
  std::getline(in, name);
  return name;
}

// The device a request names: {"device": index} or npu-smi's {"npu_id": card, "chip_id": chip}.
Result<int> local_device_of(const json& body, const NodeSpec& spec, int devices) {
  int chips = std::max(1, spec.device_spec.chips_per_card);
  if (body.contains("npu_id")) {
    if (!body["npu_id"].is_number_integer() || !body.value("chip_id", json(0)).is_number_integer()) {
      return InvalidArgument("\"npu_id\" and \"chip_id\" must be integers");
    }
    int card = body["npu_id"].get<int>(), chip = body.value("chip_id", 0);
    if (card < 0 || card >= devices / chips || chip < 0 || chip >= chips) {
      return InvalidArgument("no NPU " + std::to_string(card) + " chip " + std::to_string(chip) + " (this node has NPUs 0-" +
                             std::to_string(devices / chips - 1) + ", chips 0-" + std::to_string(chips - 1) + ")");
    }
    return card * chips + chip;
  }
  if (!body.contains("device") || !body["device"].is_number_integer()) {
    return InvalidArgument("missing integer \"device\" (or \"npu_id\" and \"chip_id\")");
  }
  int d = body["device"].get<int>();
  if (d < 0 || d >= devices) {
    return InvalidArgument("invalid device id " + std::to_string(d) + " (this node has devices 0-" +
                           std::to_string(devices - 1) + ")");
  }
  return d;
}

// The node's id of the device a request names in `view`'s numbering.
Result<int> device_of(const json& body, const NodeSpec& spec, const HostView& view) {
  auto local = local_device_of(body, spec, view.count);
  if (!local.ok()) return local.status();
  return view.first + *local;
}

}  // namespace

json Daemon::execute(const tf::Request& request, const Face& face) {
  const std::string& op = request.op;
  const json& body = request.body;
  if (op == "status") return status_json(face);
  if (op == "reference") return reference_json();
  if (op == "submit") return submit(request, face);
  if (op == "list_jobs") {  // a host's: the jobs that ran on its devices, in its numbering
    json list = json::array();
    for (const auto& [id, job] : jobs_) {
      json j = job_json(job, job.step_ms.size(), face.view);
      if (face.view.count < 0 || !j["accounting"]["devices"].empty()) list.push_back(std::move(j));
    }
    return {{"ok", true}, {"jobs", list}};
  }
  if (op == "job_status" || op == "cancel") {
    int id = body.value("job", 0);
    auto it = jobs_.find(id);
    if (it == jobs_.end()) return tf::error_reply("no job " + std::to_string(id) + " on this node", "not_found");
    if (op == "cancel" && it->second.state == "running") it->second.runner->cancel();
    return {{"ok", true}, {"job", job_json(it->second, body.value("since_step", std::size_t{0}), face.view)}};
  }
  if (op == "inject" || op == "clear" || op == "reset" || op == "set" || op == "clear_ecc") {
    return device_request(request, face);
  }
  if (op == "stop") {
    // One host of a cluster cannot stop alone (the hosts share one clock and one process): refuse
    // rather than stop every host while the caller named one.
    auto whole = std::find_if(faces_.begin(), faces_.end(), [](const Face& f) { return !f.writer; });
    if (face.writer && whole != faces_.end()) {
      return tf::error_reply("'" + face.name + "' is one host of cluster '" + whole->name +
                                 "': its hosts stop together (npu-emud stop --node-name " + whole->name + ")",
                             "invalid_argument");
    }
    request_stop();
    json buses = json::array();  // the segments that go with it (a cluster's, one per host)
    for (const Face& f : faces_) {
      if (f.writer) buses.push_back(f.name);
    }
    return {{"ok", true}, {"stopping", true}, {"buses", buses}};
  }
  return tf::error_reply("unknown op '" + op + "'", "unknown_op");
}

json Daemon::submit(const tf::Request& request, const Face& face) {
  if (!request.body.contains("program")) return tf::error_reply("submit needs a \"program\"", "invalid_argument");
  auto program = tf::parse_program(request.body["program"]);
  if (!program.ok()) return tf::error_reply(program.status().message(), "invalid_argument");
  if (program->pid == 0) program->pid = static_cast<uint32_t>(request.peer.pid);
  if (program->process_name.empty()) program->process_name = process_name_of(request.peer.pid);
  for (tf::RankProgram& r : program->ranks) r.device += face.view.first;  // a host's ids -> the node's
  Job job;
  job.id = next_job_++;
  job.name = program->name;
  job.pid = program->pid;
  job.owner_pid = request.peer.pid;
  job.steps_total = program->repeat;
  job.started_ns = node_->now();
  auto runner = ProgramRunner::create(*node_, std::move(*program), "job " + std::to_string(job.id) + " '" + job.name + "'");
  // A fault injected by hand stays until cleared; a job's own timeline faults end with the job.
  if (!runner.ok()) return tf::error_reply(runner.status().message(), "invalid_program");
  job.runner = std::move(*runner);
  int id = job.id;
  auto [it, inserted] = jobs_.emplace(id, std::move(job));
  Job& j = it->second;
  // The devices by rank (for profilers laying out one profile per rank), then the job's settings:
  // "0,1,2,3;allocator=caching;launch=eager;layout=dp2 x tp2".
  const tf::Program& prog = j.runner->program();
  std::string devices;
  for (const tf::RankProgram& r : prog.ranks) devices += (devices.empty() ? "" : ",") + std::to_string(r.device);
  devices += ";allocator=" + prog.allocator + ";launch=" + prog.launch + (prog.layout.empty() ? "" : ";layout=" + prog.layout);
  record(tf::EventType::kJobStarted, -1, j.name, {static_cast<uint64_t>(id), j.pid, 0, 0}, devices);
  std::vector<int> used;
  for (const tf::RankProgram& r : prog.ranks) {
    if (std::find(used.begin(), used.end(), r.device) == used.end()) used.push_back(r.device);
  }
  j.steps = JobSteps(prog.ranks.size());
  j.account = start_account(*node_, used);
  schedule_accounting();
  j.runner->start(
      [this, id](const StepReport& s) {
        Job& job = jobs_[id];
        job.steps.add(s, job.step_ms);
        int device = job.runner->program().ranks[s.rank].device;
        record_at(tf::EventType::kStep, device, s.start, job.name,
                              {static_cast<uint64_t>(id), static_cast<uint64_t>(s.step),
                               static_cast<uint64_t>(s.end - s.start), job.pid});
      },
      [this, id](const Status& s) {
        Job& done = jobs_[id];
        done.finished_ns = node_->now();
        done.peak_reserved_bytes = done.runner->peak_reserved_bytes();
        done.state = s.ok() ? "done" : s.message() == "cancelled" ? "cancelled" : "failed";
        done.exit_code = s.ok() ? 0 : done.state == "cancelled" ? 2 : 1;
        sample_account(done.account, *node_);
        done.error = s.ok() ? "" : done.state == "cancelled" && !done.cancel_reason.empty() ? done.cancel_reason : s.message();
        record(tf::EventType::kJobFinished, -1, done.name,
                           {static_cast<uint64_t>(id), s.ok() ? 0u : static_cast<uint64_t>(s.code()), 0, 0},
                           done.error);
      });
  return {{"ok", true}, {"job", id}};
}

void Daemon::schedule_accounting() {
  if (accounting_scheduled_) return;
  accounting_scheduled_ = true;
  node_->scheduler().post_callback(node_->now() + kAccountingSampleNs, [this] {
    accounting_scheduled_ = false;
    bool running = false;
    for (auto& [id, job] : jobs_) {
      if (job.state != "running") continue;
      sample_account(job.account, *node_);
      running = true;
    }
    if (running) schedule_accounting();
  }, /*background=*/true);
}

json Daemon::job_json(const Job& job, std::size_t since_step, const HostView& view) const {
  json steps = json::array();
  for (std::size_t i = std::min(since_step, job.step_ms.size()); i < job.step_ms.size(); ++i) {
    steps.push_back(job.step_ms[i]);
  }
  json j = {{"id", job.id},
            {"name", job.name},
            {"pid", job.pid},
            {"state", job.state},
            {"steps_done", job.step_ms.size()},
            {"steps_total", job.steps_total},
            {"step_ms", steps},
            {"first_step", std::min(since_step, job.step_ms.size())},
            {"virtual_ms", static_cast<double>((job.finished_ns ? job.finished_ns : node_->now()) - job.started_ns) / 1e6},
            {"peak_reserved_bytes", job.runner ? std::max(job.peak_reserved_bytes, job.runner->peak_reserved_bytes())
                                               : job.peak_reserved_bytes}};
  if (!job.error.empty()) j["error"] = job.error;
  j["started_ns"] = job.started_ns;
  j["finished_ns"] = job.finished_ns ? json(job.finished_ns) : json();
  j["exit_code"] = job.exit_code >= 0 ? json(job.exit_code) : json();
  j["accounting"] = account_json(job.account, *node_);
  auto peaks = job.runner ? job.runner->device_peaks() : job.device_peaks;  // a finished job's are kept
  for (json& d : j["accounting"]["devices"]) {
    auto p = peaks.find(d["device"].get<int>());
    d["hbm_peak_allocated_bytes"] = p == peaks.end() ? 0 : p->second.allocated;
    d["hbm_peak_reserved_bytes"] = p == peaks.end() ? 0 : p->second.reserved;
  }
  if (view.count >= 0) {  // one host of a cluster: its own devices, numbered from 0 as it numbers them
    json mine = json::array();
    for (json& d : j["accounting"]["devices"]) {
      int device = d["device"].get<int>();
      if (device < view.first || device >= view.first + view.count) continue;
      d["device"] = device - view.first;
      mine.push_back(std::move(d));
    }
    j["accounting"]["devices"] = std::move(mine);
  }
  json findings = json::array();
  for (const Finding& f : job.runner ? job.runner->findings() : job.findings) {
    findings.push_back({{"rank", f.rank}, {"device", f.device}, {"kind", f.kind}, {"offset", f.offset},
                        {"wrote", f.wrote}, {"read", f.read}, {"text", f.text}});
  }
  j["findings"] = std::move(findings);
  return j;
}

// What a healthy device of this node achieves (diagnostics compare against it, as DCGM compares
// against per-SKU targets): the datasheet peak times the calibrated efficiency, at the maximum
// clock. Bandwidths are bytes/s as the bus counts them (HBM: bytes read plus bytes written).
json Daemon::reference_json() const {
  const NodeSpec& node = node_->spec();
  const DeviceSpec& d = node.device_spec;
  return {{"ok", true},
          {"spec", node.name},
          {"device", d.name},
          {"matmul_fp16_flops", d.cube_peak.fp16 * d.efficiency.cube},
          {"hbm_bytes_per_s", d.hbm.bandwidth_bps * d.efficiency.hbm},
          {"pcie_bytes_per_s", d.pcie.bandwidth_bps * d.efficiency.pcie},
          {"link_efficiency", node.link_efficiency}};
}

// inject / clear on one link: {"link": "2-3"} instead of a device.
// inject / clear on a whole host of a cluster: {"host": H}. A host's own socket takes only its own
// index; the cluster's takes any.
json Daemon::host_request(const tf::Request& request, const Face& face) {
  const json& body = request.body;
  const NodeSpec& spec = node_->spec();
  if (!body["host"].is_number_integer()) return tf::error_reply("\"host\" must be an integer", "invalid_argument");
  const int host = body["host"].get<int>();
  const HostView view = face.view.on(*node_);
  const bool whole = !face.view.one_host(*node_);
  if (host < 0 || host >= spec.hosts || (!whole && spec.host_of(view.first) != host)) {
    std::string hosts = whole ? "0-" + std::to_string(spec.hosts - 1) : std::to_string(spec.host_of(view.first));
    return tf::error_reply("no host " + std::to_string(host) + " here (node '" + face.name + "' has host " + hosts + ")",
                           "invalid_argument");
  }
  const int first = host * spec.devices_per_host();
  if (request.op == "inject") {
    auto kind = parse_fault(body.value("fault", std::string()));
    if (!kind.ok()) return tf::error_reply(kind.status().message(), "invalid_argument");
    if (!acts_on_host(*kind)) {
      return tf::error_reply("a host takes " + fault_names(acts_on_host) + ", not " + fault_name(*kind), "invalid_argument");
    }
    return status_reply(node_->inject_fault(first, *kind));  // the node reports it (fault_injected)
  }
  if (request.op == "clear") {
    for (int d = first; d < first + spec.devices_per_host(); ++d) {
      Status s = node_->clear_faults(d);
      if (!s.ok()) return status_reply(s);
      record(tf::EventType::kFaultCleared, d, "all");
    }
    return {{"ok", true}};
  }
  return tf::error_reply(request.op + " acts on a device, not a host", "invalid_argument");
}

json Daemon::link_request(const tf::Request& request, const Face& face) {
  const json& body = request.body;
  if (!body["link"].is_string()) return tf::error_reply("\"link\" must be a string such as \"2-3\"", "invalid_argument");
  auto ends = tf::parse_link_ends(body["link"].get<std::string>());
  if (!ends.ok()) return tf::error_reply(ends.status().message(), "invalid_argument");
  std::string where = " on link " + tf::link_ends_name(ends->first, ends->second);
  const int limit = face.view.on(*node_).count;
  if (ends->first >= limit || ends->second >= limit) {
    return tf::error_reply("no link " + tf::link_ends_name(ends->first, ends->second) + " (this node has devices 0-" +
                               std::to_string(limit - 1) + ")", "invalid_argument");
  }
  const int a = face.view.first + ends->first;
  const int b = ends->second < 0 ? ends->second : face.view.first + ends->second;  // -1: the host
  if (request.op == "clear") {
    Status s = node_->clear_link_faults(a, b);
    if (s.ok()) record(tf::EventType::kFaultCleared, a, "all" + where);
    return status_reply(s);
  }
  if (request.op != "inject") return tf::error_reply(request.op + " acts on a device, not a link", "invalid_argument");
  auto kind = parse_fault(body.value("fault", std::string()));
  if (!kind.ok()) return tf::error_reply(kind.status().message(), "invalid_argument");
  return status_reply(node_->inject_link_fault(a, b, *kind));  // the node reports it (fault_injected)
}

json Daemon::device_request(const tf::Request& request, const Face& face) {
  json reply = device_or_link_request(request, face);
  // Readers see the change as soon as the request returns (npu-smi health right after inject).
  if (reply.value("ok", false)) publish_all();
  return reply;
}

json Daemon::device_or_link_request(const tf::Request& request, const Face& face) {
  const json& body = request.body;
  if (body.contains("link")) return link_request(request, face);
  if (body.contains("host")) return host_request(request, face);
  const HostView view = face.view.on(*node_);
  auto d = device_of(body, node_->spec(), view);
  if (!d.ok()) return tf::error_reply(d.status().message(), "invalid_argument");
  const std::string& op = request.op;
  if (op == "inject") {
    auto kind = parse_fault(body.value("fault", std::string()));
    if (!kind.ok()) return tf::error_reply(kind.status().message(), "invalid_argument");
    if (acts_on_host(*kind)) {
      return tf::error_reply(std::string(fault_name(*kind)) + " acts on a whole host: name it (npu-emud inject --host H)", "invalid_argument");
    }
    return status_reply(node_->inject_fault(*d, *kind));  // the node reports it (fault_injected)
  }
  if (op == "clear") {
    Status s = node_->clear_faults(*d);
    if (s.ok()) record(tf::EventType::kFaultCleared, *d, "all");
    return status_reply(s);
  }
  if (op == "reset") return status_reply(node_->reset_device(*d));
  if (op == "clear_ecc") {
    node_->device(*d).health().clear_ecc();
    return {{"ok", true}};
  }
  // set
  if (body.contains("power_limit_w")) {
    if (!body["power_limit_w"].is_number()) return tf::error_reply("power_limit_w must be a number", "invalid_argument");
    // A host's message names the device as the host numbers it (it said "device 10" on c-1).
    return status_reply(node_->set_power_limit(*d, body["power_limit_w"].get<double>(), *d - view.first));
  }
  if (body.contains("ecc_enable")) {
    if (!body["ecc_enable"].is_boolean()) return tf::error_reply("ecc_enable must be true or false", "invalid_argument");
    node_->device(*d).health().ecc().enabled = body["ecc_enable"].get<bool>();
    return {{"ok", true}};
  }
  return tf::error_reply("set needs power_limit_w or ecc_enable", "invalid_argument");
}

}  // namespace npukit::emu
