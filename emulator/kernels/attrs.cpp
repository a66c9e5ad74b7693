#include "emulator/kernels/attrs.hpp"

#include <sstream>

namespace npukit::emu {

Attrs& Attrs::set(std::string key, AttrValue value) {
  for (auto& [k, v] : items_) {
    if (k == key) {
      v = std::move(value);
      return *this;
    }
  }
  items_.emplace_back(std::move(key), std::move(value));
  return *this;
}

const AttrValue* Attrs::find(const std::string& key) const {
  for (const auto& [k, v] : items_) {
    if (k == key) return &v;
  }
  return nullptr;
}

bool Attrs::has(const std::string& key) const { return find(key) != nullptr; }

int64_t Attrs::get_int(const std::string& key, int64_t fallback) const {
  const AttrValue* v = find(key);
  if (v == nullptr) return fallback;
  if (auto* i = std::get_if<int64_t>(v)) return *i;
  if (auto* d = std::get_if<double>(v)) return static_cast<int64_t>(*d);
  return fallback;
}

double Attrs::get_float(const std::string& key, double fallback) const {
  const AttrValue* v = find(key);
  if (v == nullptr) return fallback;
  if (auto* d = std::get_if<double>(v)) return *d;
  if (auto* i = std::get_if<int64_t>(v)) return static_cast<double>(*i);
  return fallback;
}

std::vector<int64_t> Attrs::get_ints(const std::string& key, std::vector<int64_t> fallback) const {
  const AttrValue* v = find(key);
  if (v == nullptr) return fallback;
  if (auto* l = std::get_if<std::vector<int64_t>>(v)) return *l;
  if (auto* i = std::get_if<int64_t>(v)) return {*i};
  return fallback;
}

std::string Attrs::get_string(const std::string& key, std::string fallback) const {
  const AttrValue* v = find(key);
  if (v == nullptr) return fallback;
  if (auto* s = std::get_if<std::string>(v)) return *s;
  return fallback;
}

std::string Attrs::to_string() const {
  std::ostringstream out;
  bool first = true;
  for (const auto& [k, v] : items_) {
    if (!first) out << ';';
    first = false;
    out << k << '=';
    if (auto* i = std::get_if<int64_t>(&v)) out << *i;
    if (auto* d = std::get_if<double>(&v)) out << *d;
    if (auto* s = std::get_if<std::string>(&v)) out << *s;
    if (auto* l = std::get_if<std::vector<int64_t>>(&v)) {
      for (std::size_t j = 0; j < l->size(); ++j) out << (j ? "," : "") << (*l)[j];
    }
  }
  return out.str();
}

}  // namespace npukit::emu
