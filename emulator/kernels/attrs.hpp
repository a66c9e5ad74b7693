// Operator attributes: a small ordered key -> value map (stride, pads, axis, epsilon, lr, ...).
//
// Kept as a flat vector: ops carry a handful of attributes and lookups happen when a kernel is
// resolved, not per simulated task.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace npukit::emu {

using AttrValue = std::variant<int64_t, double, std::vector<int64_t>, std::string>;

class Attrs {
 public:
  Attrs() = default;
  Attrs(std::initializer_list<std::pair<std::string, AttrValue>> init) : items_(init) {}

  Attrs& set(std::string key, AttrValue value);
  bool has(const std::string& key) const;
  // Typed getters return `fallback` when the key is absent; an int is accepted as a float.
  int64_t get_int(const std::string& key, int64_t fallback) const;
  double get_float(const std::string& key, double fallback) const;
  std::vector<int64_t> get_ints(const std::string& key, std::vector<int64_t> fallback) const;
  std::string get_string(const std::string& key, std::string fallback) const;
  // "key=value;key=v1,v2" (msprof attrInfo style), keys in insertion order.
  std::string to_string() const;

  const std::vector<std::pair<std::string, AttrValue>>& items() const { return items_; }

 private:
  const AttrValue* find(const std::string& key) const;
  std::vector<std::pair<std::string, AttrValue>> items_;
};

}  // namespace npukit::emu
