#include "emulator/kernels/op_descriptor.hpp"

#include <algorithm>
#include <cctype>
#include <mutex>
#include <unordered_map>

namespace npukit::emu {

namespace {

struct Table {
  std::mutex mu;
  std::vector<OpDescriptor> list{OpDescriptor{}};
  std::unordered_map<std::string, uint32_t> index;
};

Table& table() {
  static Table t;
  return t;
}

// msprof spells dtypes FLOAT16, FLOAT, INT32, ...
std::string msprof_dtype(DType t) {
  if (t == DType::kFloat32) return "FLOAT";
  std::string s = dtype_name(t);
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  return s;
}

}  // namespace

std::string OpDescriptor::bus_text() const {
  return op + "|" + shapes + "|" + dtypes + "|" + out_shapes + "|" + out_dtypes + "|" + state + "|" + hf32;
}

uint32_t intern_op_descriptor(const std::string& op, const std::vector<TensorDesc>& inputs,
                              const std::vector<TensorDesc>& outputs, bool cube) {
  OpDescriptor d;
  d.op = op;
  bool dynamic = false, fp32 = !inputs.empty();
  auto list = [&dynamic](const std::vector<TensorDesc>& tensors, std::string& shapes, std::string& dtypes) {
    for (std::size_t i = 0; i < tensors.size(); ++i) {
      shapes += (i ? ";" : "") + shape_str(tensors[i].shape);
      dtypes += (i ? ";" : "") + msprof_dtype(tensors[i].dtype);
      dynamic = dynamic || std::any_of(tensors[i].shape.begin(), tensors[i].shape.end(), [](int64_t x) { return x < 0; });
    }
  };
  list(inputs, d.shapes, d.dtypes);
  list(outputs, d.out_shapes, d.out_dtypes);
  for (const TensorDesc& t : inputs) fp32 = fp32 && t.dtype == DType::kFloat32;
  d.state = dynamic ? "dynamic" : "static";
  d.hf32 = cube && fp32 ? "YES" : "NO";
  std::string key = d.bus_text();
  Table& t = table();
  std::lock_guard lock(t.mu);
  auto [it, inserted] = t.index.emplace(key, static_cast<uint32_t>(t.list.size()));
  if (inserted) t.list.push_back(std::move(d));
  return it->second;
}

OpDescriptor op_descriptor(uint32_t id) {
  Table& t = table();
  std::lock_guard lock(t.mu);
  return id < t.list.size() ? t.list[id] : OpDescriptor{};
}

}  // namespace npukit::emu
