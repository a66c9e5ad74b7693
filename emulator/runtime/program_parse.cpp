#include "emulator/runtime/program_parse.hpp"

#include <algorithm>

namespace npukit::emu {

Result<std::vector<TensorDesc>> parse_inputs(const nlohmann::json& inputs) {
  std::vector<TensorDesc> out;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const auto& in = inputs[i];
    std::string where = "inputs[" + std::to_string(i) + "]";
    if (!in.is_object() || !in.contains("shape") || !in["shape"].is_array()) {
      return InvalidArgument(where + ": expected {\"shape\": [...], \"dtype\": \"...\"}");
    }
    TensorDesc d;
    // Kernels multiply dims and scale element counts (x256 and more): a program arrives over the
    // socket unchecked, and 2.5e18 x 256 overflowed (found by tests/fuzz/program). 2^48 elements
    // is far beyond any device's memory and leaves the arithmetic room.
    constexpr int64_t kMaxElements = int64_t{1} << 48;
    int64_t elements = 1;
    if (in["shape"].size() > 8) return InvalidArgument(where + ".shape: at most 8 dims");
    for (const auto& dim : in["shape"]) {
      if (!dim.is_number_integer()) return InvalidArgument(where + ".shape: dims must be integers");
      int64_t v = dim.get<int64_t>();
      if (v < -1 || v > kMaxElements) return InvalidArgument(where + ".shape: dims must be in [0, 2^48], or -1 for dynamic");
      if (v > 0 && elements > kMaxElements / v) return InvalidArgument(where + ".shape: more than 2^48 elements");
      if (v > 0) elements *= v;
      d.shape.push_back(v);
    }
    if (in.contains("dtype") && !in["dtype"].is_string()) return InvalidArgument(where + ".dtype: expected a string");
    auto dtype = parse_dtype(in.value("dtype", std::string("float16")));
    if (!dtype.ok()) return InvalidArgument(where + ".dtype: " + dtype.status().message());
    d.dtype = *dtype;
    out.push_back(std::move(d));
  }
  return out;
}

Attrs parse_attrs(const nlohmann::json& attrs) {
  Attrs a;
  for (const auto& [k, v] : attrs.items()) {
    if (v.is_number_integer()) a.set(k, v.get<int64_t>());
    else if (v.is_number()) a.set(k, v.get<double>());
    else if (v.is_string()) a.set(k, v.get<std::string>());
    else if (v.is_array() && std::all_of(v.begin(), v.end(), [](const nlohmann::json& e) { return e.is_number_integer(); })) {
      a.set(k, v.get<std::vector<int64_t>>());  // other arrays, like other values, are not attributes any kernel reads
    }
  }
  return a;
}

Result<CollectiveCall> parse_call(const telemetry::ProgramOp& op) {
  auto kind = parse_collective_op(op.name);
  if (!kind.ok()) return kind.status();
  auto dtype = parse_dtype(op.dtype);
  if (!dtype.ok()) return dtype.status();
  auto reduce = parse_reduce_op(op.reduce);
  if (!reduce.ok()) return reduce.status();
  CollectiveCall c;
  c.op = *kind;
  c.dtype = *dtype;
  c.reduce = *reduce;
  c.count = op.count;
  c.root_or_peer = op.root_or_peer;
  return c;
}

Result<std::vector<FusedPart>> parse_epilogue(const nlohmann::json& attrs) {
  std::vector<FusedPart> parts;
  if (!attrs.is_object() || !attrs.contains("epilogue")) return parts;
  const auto& list = attrs["epilogue"];
  if (!list.is_array() || list.empty() || list.size() > 8) {
    return InvalidArgument("attrs.epilogue: expected an array of 1 to 8 fused ops");
  }
  for (std::size_t i = 0; i < list.size(); ++i) {
    const auto& p = list[i];
    std::string where = "attrs.epilogue[" + std::to_string(i) + "]";
    if (!p.is_object() || !p.contains("op") || !p["op"].is_string()) {
      return InvalidArgument(where + ": expected {\"op\": \"...\", \"inputs\": [...]}");
    }
    FusedPart part{p["op"].get<std::string>(), {}, {}};
    if (p.contains("inputs")) {
      if (!p["inputs"].is_array()) return InvalidArgument(where + ".inputs: expected an array");
      auto in = parse_inputs(p["inputs"]);
      if (!in.ok()) return InvalidArgument(where + "." + in.status().message());
      part.extra_inputs = std::move(*in);
    }
    if (p.contains("attrs")) {
      if (!p["attrs"].is_object()) return InvalidArgument(where + ".attrs: expected an object");
      part.attrs = parse_attrs(p["attrs"]);
    }
    parts.push_back(std::move(part));
  }
  return parts;
}

}  // namespace npukit::emu
