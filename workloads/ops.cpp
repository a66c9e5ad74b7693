#include "workloads/ops.hpp"

#include <algorithm>

namespace npukit::work {

namespace {

StepOp op(std::string name, std::vector<Shape> inputs, std::vector<std::string> dtypes,
          nlohmann::json attrs = nlohmann::json::object()) {
  return {std::move(name), std::move(inputs), std::move(dtypes), std::move(attrs)};
}

int64_t conv_dim(int64_t in, int64_t k, int64_t stride, int64_t pad) { return (in + 2 * pad - k) / stride + 1; }

Shape conv_output(const StepOp& f) {
  const Shape& x = f.inputs[0];
  const Shape& w = f.inputs[1];
  auto pair = [&](const char* key, int64_t fallback, int i) {
    return f.attrs.contains(key) ? f.attrs[key][i].get<int64_t>() : fallback;
  };
  return {x[0], w[0], conv_dim(x[2], w[2], pair("strides", 1, 0), pair("pads", 0, 0)),
          conv_dim(x[3], w[3], pair("strides", 1, 1), pair("pads", 0, 1))};
}

// Transpose's perm attr (default: the dims reversed), or empty when it is not a permutation of s.
std::vector<int64_t> perm_of(const StepOp& f, const Shape& s) {
  std::vector<int64_t> perm;
  if (f.attrs.is_object() && f.attrs.contains("perm") && f.attrs["perm"].is_array()) {
    for (const auto& d : f.attrs["perm"]) perm.push_back(d.is_number_integer() ? d.get<int64_t>() : -1);
  } else {
    for (std::size_t d = s.size(); d-- > 0;) perm.push_back(static_cast<int64_t>(d));
  }
  std::vector<bool> seen(s.size(), false);
  if (perm.size() != s.size()) return {};
  for (int64_t d : perm) {
    if (d < 0 || d >= static_cast<int64_t>(s.size()) || seen[static_cast<std::size_t>(d)]) return {};
    seen[static_cast<std::size_t>(d)] = true;
  }
  return perm;
}

Shape swap_last_two(Shape s) {
  std::swap(s[s.size() - 1], s[s.size() - 2]);
  return s;
}

}  // namespace


int64_t elements(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

namespace {

// Whether attrs[key], when present, is an array of at least two integers >= lo.
bool int_pair(const nlohmann::json& attrs, const char* key, int64_t lo) {
  if (!attrs.is_object() || !attrs.contains(key)) return true;
  const auto& v = attrs[key];
  if (!v.is_array() || v.size() < 2) return false;
  return std::all_of(v.begin(), v.end(), [&](const nlohmann::json& x) { return x.is_number_integer() && x.get<int64_t>() >= lo; });
}

}  // namespace

std::string input_problem(const std::string& op, const std::vector<Shape>& in, const nlohmann::json& attrs) {
  struct Need {
    std::size_t inputs;   // at least
    std::size_t rank;     // of input 0 (and 1 where `both`), at least
    bool exact = false;   // rank exactly
    bool both = false;    // input 1 too
  };
  Need need{0, 0};
  switch (family_of(op)) {
    case Family::kMatmul: need = {2, 2, true, true}; break;
    case Family::kBatchMatmul: need = {2, 2, false, true}; break;
    case Family::kConv: need = {2, 4, true, true}; break;
    case Family::kEmbedding: need = {2, 2, true}; break;
    case Family::kLayerNorm: need = {2, 1}; break;
    case Family::kBatchNorm: need = {1, 2}; break;
    case Family::kRelu: case Family::kGelu: case Family::kSoftmax: case Family::kLoss: case Family::kReduce:
    case Family::kTranspose: need = {1, 1}; break;
    case Family::kDropout: need = {2, 1}; break;
    default: return "";
  }
  auto rank_ok = [&](const Shape& s) { return need.exact ? s.size() == need.rank : s.size() >= need.rank; };
  bool ok = in.size() >= need.inputs && (in.empty() || rank_ok(in[0])) && (!need.both || (in.size() > 1 && rank_ok(in[1])));
  if (!ok) {
    std::string dims = std::to_string(need.rank) + (need.exact ? "" : "+") + "-D";
    std::string got;
    for (const Shape& s : in) got += (got.empty() ? "" : ", ") + std::to_string(s.size()) + "-D";
    return op + " takes " + (need.inputs == 1 ? "an input" : std::to_string(need.inputs) + " inputs") + " of " + dims +
           " shape" + (need.both ? "s" : "") + ", got " + (got.empty() ? "none" : got);
  }
  if (family_of(op) == Family::kTranspose && perm_of({op, in, {}, attrs}, in[0]).empty()) {
    return op + ": attrs perm must be a permutation of input 0's dims";
  }
  if (family_of(op) == Family::kConv && (!int_pair(attrs, "strides", 1) || !int_pair(attrs, "pads", 0))) {
    return op + ": attrs strides and pads must be arrays of two integers (strides >= 1, pads >= 0)";
  }
  return "";
}

StepOp forward_op(const Layer& layer, const std::string& dtype) {
  StepOp f{layer.op, layer.inputs, {}, layer.attrs};
  for (std::size_t i = 0; i < layer.inputs.size(); ++i) {
    const auto& raw = layer.raw_inputs[i];
    f.dtypes.push_back(raw.is_object() && raw.contains("dtype") ? raw["dtype"].get<std::string>() : dtype);
  }
  return f;
}

Shape output_shape(const StepOp& f) {
  const auto& in = f.inputs;
  if (in.empty()) return {};
  switch (family_of(f.name)) {
    case Family::kMatmul: return in.size() == 2 && in[0].size() == 2 ? Shape{in[0][0], in[1][1]} : Shape{};
    case Family::kBatchMatmul: {
      Shape s = in[0];
      if (in.size() == 2 && s.size() >= 2) s.back() = in[1].back();
      return s;
    }
    case Family::kConv: return in.size() == 2 && in[0].size() == 4 && in[1].size() == 4 ? conv_output(f) : Shape{};
    case Family::kEmbedding: {
      Shape s = in.size() == 2 ? in[1] : Shape{};
      if (!s.empty()) s.push_back(in[0][1]);
      return s;
    }
    case Family::kLoss: return Shape{in[0][0]};
    case Family::kTranspose: {
      std::vector<int64_t> perm = perm_of(f, in[0]);
      Shape out;
      for (int64_t d : perm) out.push_back(in[0][static_cast<std::size_t>(d)]);
      return out;
    }
    case Family::kReduce: return Shape{in[0][0], in[0].size() > 1 ? in[0][1] : 1};
    default: return in[0];
  }
}

std::vector<StepOp> backward_ops(const StepOp& f, const std::string& dtype) {
  const auto& in = f.inputs;
  Shape out = output_shape(f);
  switch (family_of(f.name)) {
    case Family::kMatmul:  // dA = dY x B^T, dB = A^T x dY
      return {op("aten::mm", {out, swap_last_two(in[1])}, {dtype, dtype}),
              op("aten::mm", {swap_last_two(in[0]), out}, {dtype, dtype})};
    case Family::kBatchMatmul:
      return {op("aten::bmm", {out, swap_last_two(in[1])}, {dtype, dtype}),
              op("aten::bmm", {swap_last_two(in[0]), out}, {dtype, dtype})};
    case Family::kConv: {
      nlohmann::json a = f.attrs;
      nlohmann::json ai = a, af = a;
      ai["input_size"] = in[0];
      af["filter_size"] = in[1];
      return {op("Conv2DBackpropInput", {out, in[1]}, {dtype, dtype}, ai),
              op("Conv2DBackpropFilter", {in[0], out}, {dtype, dtype}, af)};
    }
    case Family::kRelu: return {op("ReluGrad", {out, in[0]}, {dtype, dtype})};
    case Family::kGelu: return {op("GeluGrad", {out, in[0]}, {dtype, dtype})};
    case Family::kSoftmax: return {op("SoftmaxGrad", {out, out}, {dtype, dtype})};
    case Family::kLayerNorm: {
      Shape stats = in[0];
      stats.back() = 1;
      return {op("LayerNormGrad", {out, in[0], in[1], stats, stats}, {dtype, dtype, dtype, "float32", "float32"})};
    }
    case Family::kBatchNorm: {
      Shape c{in[0][1]};
      return {op("BatchNormGrad", {out, in[0], c, c, c}, {dtype, dtype, "float32", "float32", "float32"})};
    }
    case Family::kDropout:  // the same mask on the gradient
      return {op("DropOutDoMask", {out, in[1]}, {dtype, f.dtypes.size() > 1 ? f.dtypes[1] : "bool"}, f.attrs)};
    case Family::kTranspose: {  // the inverse permutation
      std::vector<int64_t> perm = perm_of(f, in[0]), inverse(perm.size());
      for (std::size_t d = 0; d < perm.size(); ++d) inverse[static_cast<std::size_t>(perm[d])] = static_cast<int64_t>(d);
      return {op("Transpose", {out}, {dtype}, {{"perm", inverse}})};
    }
    case Family::kEmbedding:  // dense gradient accumulation into the looked-up rows
      return {op("aten::add", {out, out}, {dtype, dtype})};
    case Family::kReduce:  // broadcast the gradient back over the reduced dims
      return {op("aten::add", {in[0], in[0]}, {dtype, dtype})};
    default: return {};  // eltwise add passes gradients through; losses produce their own
  }
}

}  // namespace npukit::work
