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

uint32_t intern_op_descriptor(const std::string& op, const std::vector<TensorDesc>& inputs) {
  OpDescriptor d;
  d.op = op;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    d.shapes += (i ? ";" : "") + shape_str(inputs[i].shape);
    d.dtypes += (i ? ";" : "") + msprof_dtype(inputs[i].dtype);
  }
  std::string key = d.op + '\x1f' + d.shapes + '\x1f' + d.dtypes;
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
