#include "telemetry/program.hpp"

#include "telemetry/incidents.hpp"

#include "telemetry/json_reader.hpp"

#include <algorithm>
#include <set>

namespace npukit::telemetry {

namespace {

using nlohmann::json;
using Kind = ProgramOp::Kind;

constexpr const char* kPrefix = "program error: ";

struct OpName {
  Kind kind;
  const char* name;
};
constexpr OpName kOpNames[] = {
    {Kind::kAlloc, "alloc"},   {Kind::kFree, "free"},         {Kind::kEmptyCache, "empty_cache"},
    {Kind::kKernel, "kernel"}, {Kind::kMemcpy, "memcpy"},     {Kind::kRecord, "record"},
    {Kind::kWait, "wait"},     {Kind::kCollective, "collective"}, {Kind::kHostDelay, "host_delay"},
    {Kind::kSync, "sync"},     {Kind::kMemTest, "memtest"},  {Kind::kInput, "input"},
};

const char* op_name(Kind k) {
  for (const auto& o : kOpNames) {
    if (o.kind == k) return o.name;
  }
  return "?";
}

void check_index(ObjectReader& r, const char* field, int value, int limit, const char* what) {
  if (value < 0 || value >= limit) {
    r.fail(field, std::string(what) + " " + std::to_string(value) + " does not exist (rank has " +
                      std::to_string(limit) + " " + what + "s)");
  }
}

void read_bytes_by_step(const json& list, ProgramOp& op, ObjectReader& r) {
  if (!list.is_array() || list.empty() || list.size() > kMaxVaryValues) {
    r.fail("bytes_by_step", "expected 1 to " + std::to_string(kMaxVaryValues) + " sizes");
    return;
  }
  for (std::size_t i = 0; i < list.size(); ++i) {
    if (!list[i].is_number_integer() || list[i].get<int64_t>() < 1 || list[i].get<uint64_t>() > op.bytes) {
      r.fail("bytes_by_step[" + std::to_string(i) + "]", "expected a size in [1, bytes]");
      return;
    }
    op.bytes_by_step.push_back(list[i].get<uint64_t>());
  }
}

ProgramOp parse_op(const json& j, const std::string& path, const RankProgram& rank, Status& err) {
  ObjectReader r(j, path, err, kPrefix);
  ProgramOp op;
  std::string kind = r.text("op", "", true);
  bool known = false;
  for (const auto& o : kOpNames) {
    if (kind == o.name) {
      op.kind = o.kind;
      known = true;
    }
  }
  if (!known) {
    r.fail("op", "unknown op '" + kind + "'");
    return op;
  }
  op.stream = static_cast<int>(r.integer("stream", -1, false));
  bool needs_stream = op.kind == Kind::kKernel || op.kind == Kind::kMemcpy || op.kind == Kind::kRecord ||
                      op.kind == Kind::kWait || op.kind == Kind::kCollective ||
                      op.kind == Kind::kMemTest;
  if (needs_stream || op.stream != -1) check_index(r, "stream", op.stream, rank.streams, "stream");
  switch (op.kind) {
    case Kind::kAlloc:
      op.buffer = r.text("buf", "", true);
      op.bytes = static_cast<uint64_t>(r.integer("bytes", 0, true));
      if (err.ok() && op.bytes == 0) r.fail("bytes", "must be > 0");
      if (r.has("bytes_by_step")) read_bytes_by_step(j["bytes_by_step"], op, r);
      r.only({"op", "buf", "bytes", "bytes_by_step"});
      break;
    case Kind::kFree:
      op.buffer = r.text("buf", "", true);
      r.only({"op", "buf"});
      break;
    case Kind::kEmptyCache: r.only({"op"}); break;
    case Kind::kKernel:
      op.name = r.text("name", "", true);
      op.inputs = r.has("inputs") ? r.raw("inputs") : json::array();
      if (!op.inputs.is_array()) r.fail("inputs", "expected an array of {shape, dtype}");
      op.attrs = r.has("attrs") ? r.raw("attrs") : json::object();
      if (!op.attrs.is_object()) r.fail("attrs", "expected an object");
      op.block_dim = static_cast<uint32_t>(r.integer("block_dim", 0));
      if (r.has("vary")) read_vary(j["vary"], path + ".vary", op.inputs, op.vary, err, kPrefix);
      r.only({"op", "stream", "name", "inputs", "attrs", "block_dim", "vary"});
      break;
    case Kind::kMemcpy:
      op.name = r.text("kind", "", true);
      if (err.ok() && op.name != "H2D" && op.name != "D2H" && op.name != "D2D") {
        r.fail("kind", "expected H2D, D2H or D2D, got '" + op.name + "'");
      }
      op.bytes = static_cast<uint64_t>(r.integer("bytes", 0, true));
      r.only({"op", "stream", "kind", "bytes"});
      break;
    case Kind::kRecord:
    case Kind::kWait:
      op.event = static_cast<int>(r.integer("event", -1, true));
      check_index(r, "event", op.event, rank.events, "event");
      r.only({"op", "stream", "event"});
      break;
    case Kind::kCollective:
      op.name = r.text("kind", "", true);
      op.count = static_cast<uint64_t>(r.integer("count", 0, true));
      op.dtype = r.text("dtype", "float16");
      op.reduce = r.text("reduce", "sum");
      op.root_or_peer = static_cast<int>(r.has("peer") ? r.integer("peer", 0) : r.integer("root", 0));
      op.comm = static_cast<int>(r.integer("comm", 0));
      r.only({"op", "stream", "kind", "count", "dtype", "reduce", "root", "peer", "comm"});
      break;
    case Kind::kHostDelay:
      op.ns = r.integer("ns", 0, true);
      if (err.ok() && op.ns < 0) r.fail("ns", "must be >= 0");
      r.only({"op", "ns"});
      break;
    case Kind::kSync: r.only({"op", "stream"}); break;
    case Kind::kInput: {
      const int64_t samples = r.integer("samples", 0, true);
      if (err.ok() && samples <= 0) r.fail("samples", "must be > 0");
      op.count = static_cast<uint64_t>(std::max<int64_t>(samples, 0));
      r.only({"op", "samples"});
      break;
    }
    case Kind::kMemTest:
      op.buffer = r.text("buf", "", true);
      op.count = static_cast<uint64_t>(r.integer("patterns", 4));
      if (err.ok() && (op.count < 1 || op.count > kMaxMemTestPatterns)) {
        r.fail("patterns", "must be 1.." + std::to_string(kMaxMemTestPatterns));
      }
      r.only({"op", "stream", "buf", "patterns"});
      break;
  }
  return op;
}

std::vector<ProgramOp> parse_ops(const json& j, const char* key, const std::string& path,
                                 const RankProgram& rank, Status& err) {
  std::vector<ProgramOp> ops;
  if (!j.contains(key)) return ops;
  const json& list = j[key];
  if (!list.is_array()) {
    if (err.ok()) err = InvalidArgument(kPrefix + path + "." + key + ": expected an array");
    return ops;
  }
  for (std::size_t i = 0; i < list.size() && err.ok(); ++i) {
    ops.push_back(parse_op(list[i], path + "." + key + "[" + std::to_string(i) + "]", rank, err));
  }
  return ops;
}

json op_to_json(const ProgramOp& op) {
  json j = {{"op", op_name(op.kind)}};
  if (op.stream >= 0) j["stream"] = op.stream;
  switch (op.kind) {
    case Kind::kAlloc:
      j["buf"] = op.buffer;
      j["bytes"] = op.bytes;
      if (!op.bytes_by_step.empty()) j["bytes_by_step"] = op.bytes_by_step;
      break;
    case Kind::kFree: j["buf"] = op.buffer; break;
    case Kind::kKernel:
      j["name"] = op.name;
      j["inputs"] = op.inputs;
      if (!op.attrs.empty()) j["attrs"] = op.attrs;
      if (op.block_dim) j["block_dim"] = op.block_dim;
      if (op.vary.input >= 0) j["vary"] = {{"input", op.vary.input}, {"dim", op.vary.dim}, {"values", op.vary.values}};
      break;
    case Kind::kMemcpy: j["kind"] = op.name; j["bytes"] = op.bytes; break;
    case Kind::kRecord:
    case Kind::kWait: j["event"] = op.event; break;
    case Kind::kCollective:
      j["kind"] = op.name;
      j["count"] = op.count;
      j["dtype"] = op.dtype;
      j["reduce"] = op.reduce;
      j[op.name == "Send" || op.name == "Recv" ? "peer" : "root"] = op.root_or_peer;
      if (op.comm) j["comm"] = op.comm;
      break;
    case Kind::kHostDelay: j["ns"] = op.ns; break;
    case Kind::kInput: j["samples"] = op.count; break;
    case Kind::kMemTest: j["buf"] = op.buffer; j["patterns"] = op.count; break;
    default: break;
  }
  return j;
}

void parse_comms(const json& j, Program& p, Status& err) {
  if (!j.is_object() || !j.contains("comms")) return;
  if (!j["comms"].is_array()) {
    if (err.ok()) err = InvalidArgument(std::string(kPrefix) + "program.comms: expected an array");
    return;
  }
  for (std::size_t i = 0; err.ok() && i < j["comms"].size(); ++i) {
    ObjectReader cr(j["comms"][i], "comms[" + std::to_string(i) + "]", err, kPrefix);
    CommSpec c;
    c.name = cr.text("name", "comm" + std::to_string(i));
    c.algo = cr.text("algo", "auto");
    if (cr.has("ranks")) {
      const json& ranks = cr.raw("ranks");
      if (!ranks.is_array()) cr.fail("ranks", "expected an array of rank indices");
      for (const auto& r : ranks) {
        if (!r.is_number_integer()) cr.fail("ranks", "expected an array of rank indices");
        else c.ranks.push_back(r.get<int>());
      }
    }
    cr.only({"name", "algo", "ranks"});
    p.comms.push_back(std::move(c));
  }
}

void parse_faults(const json& j, Program& p, Status& err) {
  if (!j.is_object() || !j.contains("faults")) return;
  if (!j["faults"].is_array()) {
    if (err.ok()) err = InvalidArgument(std::string(kPrefix) + "program.faults: expected an array");
    return;
  }
  for (std::size_t i = 0; err.ok() && i < j["faults"].size(); ++i) {
    ObjectReader fr(j["faults"][i], "faults[" + std::to_string(i) + "]", err, kPrefix);
    ProgramFault f;
    f.at_ns = fr.integer("at_ns", 0, true);
    f.device = static_cast<int>(fr.integer("device", 0, true));
    f.peer = static_cast<int>(fr.integer("peer", -2, false));
    f.action = fr.text("action", "inject");
    f.fault = fr.text("fault", "");
    f.watts = fr.number("watts", 0, false);
    if (err.ok() && f.action != "inject" && f.action != "clear" && f.action != "reset" && f.action != "power-limit") {
      fr.fail("action", "expected inject, clear, reset or power-limit, got '" + f.action + "'");
    }
    if (err.ok() && f.action == "inject" && f.fault.empty()) fr.fail("fault", "missing");
    if (err.ok() && f.action == "power-limit" && !(f.watts > 0)) fr.fail("watts", "expected a power limit > 0 W");
    if (err.ok() && f.peer < -2 && f.peer != kRocePort && f.peer != kSwitchPort) {
      fr.fail("peer", "expected a device id, -1 (the host), " + std::to_string(kRocePort) + " (its RoCE port) or " +
                          std::to_string(kSwitchPort) + " (its port into the node's switch)");
    }
    fr.only({"at_ns", "device", "peer", "action", "fault", "watts"});
    p.faults.push_back(std::move(f));
  }
}

// Every collective names an existing communicator.
void check_collective_comms(const Program& p, Status& err) {
  for (std::size_t r = 0; err.ok() && r < p.ranks.size(); ++r) {
    for (const auto* ops : {&p.ranks[r].setup, &p.ranks[r].step}) {
      for (std::size_t i = 0; i < ops->size(); ++i) {
        const ProgramOp& op = (*ops)[i];
        if (op.kind != Kind::kCollective) continue;
        if (op.comm < 0 || op.comm >= static_cast<int>(p.comms.size())) {
          err = InvalidArgument(std::string(kPrefix) + "ranks[" + std::to_string(r) + "]." +
                                (ops == &p.ranks[r].setup ? "setup" : "step") + "[" + std::to_string(i) +
                                "].comm: communicator " + std::to_string(op.comm) + " does not exist (program has " +
                                std::to_string(p.comms.size()) + ")");
          return;
        }
      }
    }
  }
}

}  // namespace

void read_vary(const json& j, const std::string& path, const json& inputs, ProgramOp::Vary& out, Status& err,
               const std::string& prefix) {
  ObjectReader r(j, path, err, prefix);
  out.input = static_cast<int>(r.integer("input", 0, true));
  out.dim = static_cast<int>(r.integer("dim", 0, true));
  r.only({"input", "dim", "values"});
  if (!err.ok()) return;
  std::size_t count = inputs.is_array() ? inputs.size() : 0;
  if (out.input < 0 || static_cast<std::size_t>(out.input) >= count) {
    r.fail("input", "input " + std::to_string(out.input) + " does not exist (the kernel has " + std::to_string(count) +
                        " inputs)");
    return;
  }
  const json& in = inputs[static_cast<std::size_t>(out.input)];  // a shape, or {shape, dtype}
  const json& shape = in.is_object() && in.contains("shape") ? in["shape"] : in;
  std::size_t dims = shape.is_array() ? shape.size() : 0;
  if (out.dim < 0 || static_cast<std::size_t>(out.dim) >= dims) {
    r.fail("dim", "dim " + std::to_string(out.dim) + " does not exist (input " + std::to_string(out.input) + " has " +
                      std::to_string(dims) + " dims)");
    return;
  }
  const json* values = r.has("values") ? &j["values"] : nullptr;
  if (values == nullptr || !values->is_array() || values->empty() || values->size() > kMaxVaryValues) {
    r.fail("values", "expected 1 to " + std::to_string(kMaxVaryValues) + " dim sizes");
    return;
  }
  out.values.clear();
  for (std::size_t i = 0; i < values->size(); ++i) {
    const json& v = (*values)[i];
    if (!v.is_number_integer() || v.get<int64_t>() < 1) {
      r.fail("values[" + std::to_string(i) + "]", "expected a dim size >= 1");
      return;
    }
    out.values.push_back(v.get<int64_t>());
  }
}

Result<Program> parse_program(const json& j) {
  Status err;
  ObjectReader r(j, "program", err, kPrefix);
  Program p;
  p.name = r.text("name", "", true);
  p.allocator = r.text("allocator", "caching");
  p.launch = r.text("launch", "eager");
  if (err.ok() && p.launch != "eager" && p.launch != "graph") r.fail("launch", "expected eager or graph, got '" + p.launch + "'");
  p.dispatch_ns = r.integer("dispatch_ns", 0);
  p.jit_compile = r.boolean("jit_compile", false);
  p.layout = r.text("layout", "");
  p.host_input_samples_per_s = r.number("host_input_samples_per_s", 0);
  if (err.ok() && p.dispatch_ns < 0) r.fail("dispatch_ns", "must be >= 0");
  if (err.ok() && !(p.host_input_samples_per_s >= 0)) r.fail("host_input_samples_per_s", "must be >= 0");
  p.repeat = r.integer("repeat", 1);
  if (err.ok() && p.repeat < 0) r.fail("repeat", "must be >= 0");
  if (r.has("process")) {
    ObjectReader pr(j["process"], "program.process", err, kPrefix);
    p.pid = static_cast<uint32_t>(pr.integer("pid", 0));
    p.process_name = pr.text("name", "");
    pr.only({"pid", "name"});
  }
  if (r.has("comm")) {
    ObjectReader cr(j["comm"], "program.comm", err, kPrefix);
    CommSpec c;
    c.name = cr.text("name", "world");
    c.algo = cr.text("algo", "auto");
    cr.only({"name", "algo"});
    p.comms.push_back(c);
  }
  parse_comms(j, p, err);
  parse_faults(j, p, err);
  r.only({"name", "allocator", "launch", "dispatch_ns", "jit_compile", "layout", "host_input_samples_per_s", "repeat", "process", "comm", "comms", "faults", "ranks"});
  if (!r.has("ranks") || !j["ranks"].is_array() || j["ranks"].empty()) r.fail("ranks", "expected a non-empty array");
  for (std::size_t i = 0; err.ok() && i < j["ranks"].size(); ++i) {
    std::string path = "ranks[" + std::to_string(i) + "]";
    const json& rj = j["ranks"][i];
    ObjectReader rr(rj, path, err, kPrefix);
    RankProgram rank;
    rank.device = static_cast<int>(rr.integer("device", 0, true));
    rank.streams = static_cast<int>(rr.integer("streams", 1));
    rank.events = static_cast<int>(rr.integer("events", 0));
    if (err.ok() && (rank.streams < 1 || rank.streams > 64)) rr.fail("streams", "must be in [1, 64]");
    if (err.ok() && (rank.events < 0 || rank.events > 1024)) rr.fail("events", "must be in [0, 1024]");
    rank.ops_of = static_cast<int>(rr.integer("ops_of", -1));
    rr.only({"device", "streams", "events", "setup", "step", "ops_of"});
    if (!err.ok()) break;
    if (rank.ops_of >= 0) {  // another rank's ops: an earlier one with its own, the same streams and events
      const bool valid = rank.ops_of < static_cast<int>(i) && p.ranks[static_cast<std::size_t>(rank.ops_of)].ops_of < 0;
      if (!valid) rr.fail("ops_of", "must name an earlier rank with its own ops");
      else if (rj.contains("setup") || rj.contains("step")) rr.fail("ops_of", "a rank with ops_of has no setup or step of its own");
      else if (p.ranks[static_cast<std::size_t>(rank.ops_of)].streams != rank.streams ||
               p.ranks[static_cast<std::size_t>(rank.ops_of)].events != rank.events) {
        rr.fail("ops_of", "rank " + std::to_string(rank.ops_of) + " has other streams or events");
      }
    } else if (rank.ops_of != -1) {
      rr.fail("ops_of", "must be a rank index or -1");
    }
    if (!err.ok()) break;
    if (rank.ops_of < 0) {
      rank.setup = parse_ops(rj, "setup", path, rank, err);
      rank.step = parse_ops(rj, "step", path, rank, err);
    }
    p.ranks.push_back(std::move(rank));
  }
  check_collective_comms(p, err);
  if (!err.ok()) return err;
  return p;
}

json program_to_json(const Program& p) {
  json ranks = json::array();
  for (const auto& r : p.ranks) {
    json setup = json::array(), step = json::array();
    if (r.ops_of >= 0) {
      ranks.push_back({{"device", r.device}, {"streams", r.streams}, {"events", r.events}, {"ops_of", r.ops_of}});
      continue;
    }
    for (const auto& op : r.setup) setup.push_back(op_to_json(op));
    for (const auto& op : r.step) step.push_back(op_to_json(op));
    ranks.push_back({{"device", r.device}, {"streams", r.streams}, {"events", r.events},
                     {"setup", setup}, {"step", step}});
  }
  json j = {{"name", p.name}, {"allocator", p.allocator}, {"launch", p.launch}, {"dispatch_ns", p.dispatch_ns}, {"layout", p.layout}, {"repeat", p.repeat},
            {"process", {{"pid", p.pid}, {"name", p.process_name}}}, {"ranks", ranks}};
  if (p.jit_compile) j["jit_compile"] = true;
  if (p.host_input_samples_per_s > 0) j["host_input_samples_per_s"] = p.host_input_samples_per_s;
  if (!p.comms.empty()) {
    j["comms"] = json::array();
    for (const auto& c : p.comms) j["comms"].push_back({{"name", c.name}, {"algo", c.algo}, {"ranks", c.ranks}});
  }
  if (!p.faults.empty()) {
    j["faults"] = json::array();
    for (const auto& f : p.faults) {
      j["faults"].push_back({{"at_ns", f.at_ns}, {"device", f.device}, {"action", f.action}, {"fault", f.fault}});
      if (f.peer != -2) j["faults"].back()["peer"] = f.peer;
      if (f.action == "power-limit") j["faults"].back()["watts"] = f.watts;
    }
  }
  return j;
}

}  // namespace npukit::telemetry
