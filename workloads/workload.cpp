#include "workloads/workload.hpp"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <filesystem>
#include <tuple>

#include "telemetry/incidents.hpp"
#include "telemetry/json_reader.hpp"
#include "workloads/ops.hpp"
#include "telemetry/data_dir.hpp"

namespace npukit::work {

namespace {

using nlohmann::json;

Result<std::vector<std::vector<int64_t>>> read_shapes(const json& j, ObjectReader& r) {
  std::vector<std::vector<int64_t>> shapes;
  if (!j.is_array()) {
    r.fail("inputs", "expected an array of shapes");
    return shapes;
  }
  constexpr std::size_t kMaxRank = 8;                    // as CANN's tensors
  constexpr int64_t kMaxDim = int64_t{1} << 31, kMaxElements = int64_t{1} << 40;
  for (std::size_t i = 0; i < j.size(); ++i) {
    std::string at = "inputs[" + std::to_string(i) + "]";
    bool object = j[i].is_object();
    if (object && j[i].contains("dtype") && !j[i]["dtype"].is_string()) r.fail(at + ".dtype", "expected a string");
    const json& shape = object && j[i].contains("shape") ? j[i]["shape"] : j[i];
    std::vector<int64_t> dims;
    bool ok = shape.is_array() && shape.size() <= kMaxRank;
    int64_t elements = 1;
    for (std::size_t k = 0; ok && k < shape.size(); ++k) {
      const json& d = shape[k];
      ok = d.is_number_integer() && (d.get<int64_t>() == -1 || (d.get<int64_t>() >= 1 && d.get<int64_t>() <= kMaxDim));
      if (!ok) break;
      dims.push_back(d.get<int64_t>());
      int64_t dim = std::max<int64_t>(d.get<int64_t>(), 1);
      elements = elements > kMaxElements / dim ? kMaxElements + 1 : elements * dim;
    }
    if (!ok) r.fail(at, "expected an array of at most 8 dims (integers in [1, 2^31], -1 for dynamic)");
    else if (elements > kMaxElements) r.fail(at, "more than 2^40 elements");
    shapes.push_back(std::move(dims));
  }
  return shapes;
}

// One layer, or {"block": [layers...], "repeat": N}: N copies of the block's layers in order
// (a model's repeated blocks, e.g. a transformer layer), appended to `out`.
void read_layer_list(const json& list, const std::string& path, std::vector<Layer>& out, Status& err,
                     const std::string& prefix, int depth) {
  for (std::size_t i = 0; err.ok() && i < list.size(); ++i) {
    std::string at = path + "[" + std::to_string(i) + "]";
    ObjectReader r(list[i], at, err, prefix);
    if (r.has("block")) {
      int64_t repeat = r.integer("repeat", 1);
      if (err.ok() && (repeat < 1 || repeat > 100000)) r.fail("repeat", "must be in [1, 100000]");
      if (err.ok() && (!r.raw("block").is_array() || depth > 4)) r.fail("block", "expected an array of layers (nested at most 4 deep)");
      r.only({"block", "repeat", "comment"});
      std::vector<Layer> block;
      if (err.ok()) read_layer_list(r.raw("block"), at + ".block", block, err, prefix, depth + 1);
      constexpr std::size_t kMaxLayers = 100'000;  // after expanding blocks
      if (err.ok() && !block.empty() && out.size() + block.size() * static_cast<std::size_t>(repeat) > kMaxLayers) {
        r.fail("repeat", "the model expands to more than 100000 layers");
      }
      for (int64_t k = 0; err.ok() && k < repeat; ++k) out.insert(out.end(), block.begin(), block.end());
      continue;
    }
    Layer l;
    l.op = r.text("op", "", true);
    if (r.has("inputs")) {
      l.inputs = *read_shapes(r.raw("inputs"), r);
      l.raw_inputs = r.raw("inputs");
    }
    else r.fail("inputs", "missing");
    if (r.has("attrs")) {
      l.attrs = r.raw("attrs");
      if (!l.attrs.is_object()) r.fail("attrs", "expected an object");
    }
    if (err.ok()) {
      std::string problem = input_problem(l.op, l.inputs, l.attrs);
      if (!problem.empty()) r.fail("inputs", problem);
    }
    l.repeat = r.integer("repeat", 1);
    if (err.ok() && (l.repeat < 1 || l.repeat > 100000)) r.fail("repeat", "must be in [1, 100000]");
    l.trainable = r.boolean("trainable", true);
    if (r.has("vary") && err.ok()) telemetry::read_vary(r.raw("vary"), at + ".vary", l.raw_inputs, l.vary, err, prefix);
    r.only({"op", "inputs", "attrs", "repeat", "trainable", "vary", "comment"});
    out.push_back(std::move(l));
  }
}

void read_layers(const json& doc, Workload& w, Status& err, const std::string& prefix) {
  if (!doc.contains("layers")) return;
  if (!doc["layers"].is_array()) {
    if (err.ok()) err = InvalidArgument(prefix + "layers: expected an array");
    return;
  }
  read_layer_list(doc["layers"], "layers", w.layers, err, prefix, 0);
}

// A fault's action, and for an injection its fault, named as the node knows them (the injectable
// faults are those the incident table says raise an incident), so a typo is refused with the
// file and field instead of failing the job once it runs.
void check_fault(ObjectReader& r, const FaultAt& f) {
  static constexpr std::array<std::string_view, 4> kActions{"inject", "clear", "reset", "power-limit"};
  if (std::find(kActions.begin(), kActions.end(), f.action) == kActions.end()) {
    r.fail("action", "expected inject, clear, reset or power-limit, got '" + f.action + "'");
    return;
  }
  if (f.action != "inject") return;
  std::vector<std::string> known;
  for (const telemetry::IncidentKind& k : telemetry::incident_kinds()) {
    for (const std::string& name : k.faults) {
      if (std::find(known.begin(), known.end(), name) == known.end()) known.push_back(name);
    }
  }
  if (std::find(known.begin(), known.end(), f.fault) != known.end()) return;
  std::string list;
  for (const std::string& name : known) list += (list.empty() ? "" : ", ") + name;
  r.fail("fault", "unknown fault '" + f.fault + "' (expected one of: " + list + ")");
}

void read_faults(const json& doc, Workload& w, Status& err, const std::string& prefix) {
  if (!doc.contains("faults")) return;
  if (!doc["faults"].is_array()) {
    if (err.ok()) err = InvalidArgument(prefix + "faults: expected an array");
    return;
  }
  for (std::size_t i = 0; err.ok() && i < doc["faults"].size(); ++i) {
    ObjectReader r(doc["faults"][i], "faults[" + std::to_string(i) + "]", err, prefix);
    FaultAt f;
    f.at_ms = r.number("at_ms", 0, true);
    std::string link = r.text("link", "");
    if (link.empty()) {
      f.device = static_cast<int>(r.integer("device", 0, true));
    } else if (auto ends = telemetry::parse_link_ends(link); !ends.ok()) {
      r.fail("link", ends.status().message());
    } else {
      std::tie(f.device, f.peer) = *ends;
    }
    f.action = r.text("action", "inject");
    f.fault = r.text("fault", "");
    f.watts = r.number("watts", 0, false);
    check_fault(r, f);
    r.only({"at_ms", "device", "link", "action", "fault", "watts"});
    w.faults.push_back(std::move(f));
  }
}

// `extra`: every member typed and bounded, so a sweep or stress test never runs on a value it
// cannot use (a matmul of -1, a billion copies a step).
void read_extra(const json& doc, Workload& w, Status& err, const std::string& prefix) {
  if (!doc.contains("extra")) return;
  ObjectReader r(doc["extra"], "extra", err, prefix);
  if (!doc["extra"].is_object()) return r.fail("", std::string("expected an object, got ") + doc["extra"].type_name());
  constexpr int64_t kMaxDim = 1 << 16, kMaxCount = 100'000, kMaxBytes = int64_t{1} << 40;
  Extra& x = w.extra;
  if (r.has("m")) x.m = r.integer_in("m", 1, 1, kMaxDim);
  x.matmuls_per_step = r.integer_in("matmuls_per_step", x.matmuls_per_step, 1, kMaxCount);
  if (r.has("bytes")) x.bytes = r.integer_in("bytes", 1, 1, kMaxBytes);
  x.copies_per_step = r.integer_in("copies_per_step", x.copies_per_step, 1, kMaxCount);
  x.allocs_per_step = r.integer_in("allocs_per_step", x.allocs_per_step, 1, kMaxCount);
  x.iters = r.integer_in("iters", x.iters, 1, kMaxCount);
  x.dtype = r.text("dtype", x.dtype);
  x.min_bytes = r.integer_in("min_bytes", x.min_bytes, 1, kMaxBytes);
  x.max_bytes = r.integer_in("max_bytes", x.max_bytes, 1, kMaxBytes);
  x.factor = r.integer_in("factor", x.factor, 2, 1024);
  x.algo = r.text("algo", x.algo);
  x.redop = r.text("redop", x.redop);
  if (r.has("sizes")) {
    const json& sizes = r.raw("sizes");
    bool ok = sizes.is_array() && sizes.size() <= 1000;
    for (std::size_t i = 0; ok && i < sizes.size(); ++i) {
      const json& mkn = sizes[i];
      ok = mkn.is_array() && mkn.size() == 3;
      std::array<int64_t, 3> dims{};
      for (std::size_t k = 0; ok && k < 3; ++k) {
        ok = mkn[k].is_number_integer() && mkn[k].get<int64_t>() >= 1 && mkn[k].get<int64_t>() <= kMaxDim;
        if (ok) dims[k] = mkn[k].get<int64_t>();
      }
      if (ok) x.sizes.push_back(dims);
    }
    if (!ok) r.fail("sizes", "expected up to 1000 [m, k, n] triples of integers in [1, 65536]");
  }
  if (err.ok() && x.min_bytes > x.max_bytes) r.fail("min_bytes", "must be <= max_bytes");
  if (err.ok() && x.dtype != "float32" && x.dtype != "float16" && x.dtype != "bfloat16" && x.dtype != "int8" && x.dtype != "int32") {
    r.fail("dtype", "expected float32, float16, bfloat16, int8 or int32, got '" + x.dtype + "'");
  }
  r.only({"m", "matmuls_per_step", "bytes", "copies_per_step", "allocs_per_step", "iters", "dtype", "min_bytes", "max_bytes",
          "factor", "algo", "redop", "sizes", "comment"});
}

// "parallel": {"dp", "tp", "pp", "micro_batches", "devices"}, or Paddle's fleet names for the same
// degrees: dp_degree, mp_degree (tensor), pp_degree, accumulate_steps (micro-batches).
void read_parallel(const json& doc, Workload& w, Status& err, const std::string& prefix) {
  if (!doc.contains("parallel")) return;
  ObjectReader r(doc["parallel"], "parallel", err, prefix);
  struct Degree {
    const char* name;
    const char* paddle;
    int Workload::*field;
  };
  for (const Degree& d : {Degree{"dp", "dp_degree", &Workload::dp}, Degree{"tp", "mp_degree", &Workload::tp},
                          Degree{"pp", "pp_degree", &Workload::pp}}) {
    if (r.has(d.name) && r.has(d.paddle)) r.fail(d.paddle, std::string("give ") + d.name + " or " + d.paddle + ", not both");
    const char* key = r.has(d.paddle) ? d.paddle : d.name;
    int v = static_cast<int>(r.integer(key, 1));
    if (err.ok() && (v < 1 || v > 64)) r.fail(key, "must be in [1, 64]");
    w.*d.field = v;
  }
  if (r.has("devices")) {
    const json& d = r.raw("devices");
    for (const auto& x : d) {
      if (!x.is_number_integer()) r.fail("devices", "expected an array of device ids");
      else w.devices.push_back(x.get<int>());
    }
  }
  const char* micro = r.has("accumulate_steps") ? "accumulate_steps" : "micro_batches";
  w.micro_batches = static_cast<int>(r.integer(micro, w.pp));
  if (err.ok() && (w.micro_batches < 1 || w.micro_batches > 1024)) r.fail(micro, "must be in [1, 1024]");
  r.only({"dp", "tp", "pp", "micro_batches", "dp_degree", "mp_degree", "pp_degree", "accumulate_steps", "devices"});
  if (err.ok() && !w.devices.empty() && static_cast<int>(w.devices.size()) != w.ranks()) {
    r.fail("devices", "expected " + std::to_string(w.ranks()) + " device ids (dp x tp x pp), got " +
                          std::to_string(w.devices.size()));
  }
}

}  // namespace

Result<Workload> parse_workload(const json& doc, const std::string& file) {
  std::string prefix = "workload error: " + file + ": ";
  Status err;
  ObjectReader r(doc, "workload", err, prefix);
  if (!err.ok()) return err;
  Workload w;
  w.name = r.text("name", "", true);
  w.description = r.text("description", "");
  w.kind = r.text("kind", "train");
  static const char* kKinds[] = {"train", "infer", "allreduce-sweep", "matmul-sweep", "hbm-bandwidth", "burn",
                                 "allocator-churn"};
  if (err.ok() && std::find_if(std::begin(kKinds), std::end(kKinds), [&](const char* k) { return w.kind == k; }) ==
                      std::end(kKinds)) {
    r.fail("kind", "unknown kind '" + w.kind + "'");
  }
  w.dtype = r.text("dtype", "float16");
  w.steps = r.integer_in("steps", 10, 1, 10'000'000);
  w.samples_per_step = r.integer_in("samples_per_step", 1, 1, 10'000'000);
  w.unit = r.text("unit", "samples/s");
  w.input_bytes_per_sample = r.integer_in("input_bytes_per_sample", 0, 0, int64_t{1} << 34);
  w.loader_ms = r.number("loader_ms", 0);
  w.host_input_samples_per_s = r.number("host_input_samples_per_s", 0);
  w.allocator = r.text("allocator", "caching");
  w.host_sync_ms = r.number("host_sync_ms", 0);
  w.launch = r.text("launch", "eager");
  w.op_dispatch_us = r.number("op_dispatch_us", 0);
  w.jit_compile = r.boolean("jit_compile", false);
  w.fusion = r.boolean("fusion", true);
  w.resident_mib = r.integer_in("resident_mib", 0, 0, int64_t{1} << 24);
  w.params = r.integer_in("params", 0, 0, 10'000'000'000'000);
  w.optimizer = r.text("optimizer", w.kind == "train" ? "adam" : "none");
  static const char* kOptimizers[] = {"adam", "lamb", "sgd", "none"};
  if (err.ok() && std::find_if(std::begin(kOptimizers), std::end(kOptimizers),
                               [&](const char* o) { return w.optimizer == o; }) == std::end(kOptimizers)) {
    r.fail("optimizer", "expected adam, lamb, sgd or none, got '" + w.optimizer + "'");
  }
  w.loss_scale = r.number("loss_scale", 0);
  w.clip_grad_norm = r.number("clip_grad_norm", 0);
  w.master_weights = r.boolean("master_weights", false);
  if (err.ok() && !(w.loss_scale >= 0)) r.fail("loss_scale", "must be >= 0");
  if (err.ok() && !(w.clip_grad_norm >= 0)) r.fail("clip_grad_norm", "must be >= 0");
  w.grad_buckets = static_cast<int>(r.integer("grad_buckets", 4));
  w.tp_allreduce_bytes = r.integer_in("tp_allreduce_bytes", 0, 0, int64_t{1} << 40);
  if (err.ok() && w.loader_ms < 0) r.fail("loader_ms", "must be >= 0");
  if (err.ok() && !(w.host_input_samples_per_s >= 0)) r.fail("host_input_samples_per_s", "must be >= 0");
  if (err.ok() && w.host_sync_ms < 0) r.fail("host_sync_ms", "must be >= 0");
  if (err.ok() && w.op_dispatch_us < 0) r.fail("op_dispatch_us", "must be >= 0");
  if (err.ok() && w.launch != "eager" && w.launch != "graph") r.fail("launch", "expected eager or graph, got '" + w.launch + "'");
  if (err.ok() && w.allocator != "caching" && w.allocator != "direct") {
    r.fail("allocator", "expected caching or direct, got '" + w.allocator + "'");
  }
  if (err.ok() && (w.grad_buckets < 1 || w.grad_buckets > 64)) r.fail("grad_buckets", "must be in [1, 64]");
  r.only({"name", "description", "kind", "dtype", "steps", "samples_per_step", "unit", "parallel",
          "input_bytes_per_sample", "loader_ms", "host_input_samples_per_s", "host_sync_ms", "launch", "op_dispatch_us", "jit_compile", "fusion", "resident_mib", "allocator", "params", "optimizer", "loss_scale", "clip_grad_norm", "master_weights", "grad_buckets",
          "tp_allreduce_bytes", "layers", "faults", "extra", "comment"});
  read_parallel(doc, w, err, prefix);
  read_layers(doc, w, err, prefix);
  read_faults(doc, w, err, prefix);
  read_extra(doc, w, err, prefix);
  if (err.ok() && (w.kind == "train" || w.kind == "infer") && w.layers.empty()) {
    err = InvalidArgument(prefix + "layers: a " + w.kind + " workload needs at least one layer");
  }
  if (!err.ok()) return err;
  return w;
}

Result<Workload> load_workload_file(const std::string& path) {
  auto doc = parse_json_file(path, "workload error");
  if (!doc.ok()) return doc.status();
  return parse_workload(*doc, path);
}

std::string builtin_dir() { return telemetry::data_dir("NPUKIT_WORKLOAD_DIR", "workloads", NPUKIT_DEFAULT_WORKLOAD_DIR); }

std::vector<std::string> builtin_names() {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(builtin_dir(), ec)) {
    if (e.path().extension() == ".json") names.push_back(e.path().stem().string());
  }
  std::sort(names.begin(), names.end());
  names.insert(names.end(), std::begin(kInProcessBuiltins), std::end(kInProcessBuiltins));
  return names;
}

Result<Workload> load_workload(const std::string& name_or_path) {
  bool path = name_or_path.find('/') != std::string::npos || name_or_path.ends_with(".json");
  if (path) return load_workload_file(name_or_path);
  std::string file = builtin_dir() + "/" + name_or_path + ".json";
  std::error_code ec;  // one it may not read (a directory on the way it cannot search) is opened below, which names the error
  if (!std::filesystem::exists(file, ec) && !ec) {
    std::string known;
    for (const auto& n : builtin_names()) known += (known.empty() ? "" : ", ") + n;
    return NotFoundError("workload error: no built-in workload '" + name_or_path + "' (built-ins: " + known + ")");
  }
  return load_workload_file(file);
}

}  // namespace npukit::work
