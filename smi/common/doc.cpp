#include "smi/common/doc.hpp"

#include <cmath>
#include <cstdio>

namespace npukit::smi {

Value Value::str(std::string s) {
  Value v;
  v.data = s;
  v.text = std::move(s);
  return v;
}

Value Value::integer(int64_t i) { return {nlohmann::json(i), std::to_string(i)}; }

Value Value::real(double d, int decimals) {
  if (!std::isfinite(d)) return na();
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.*f", decimals, d);
  double scale = std::pow(10.0, decimals);
  return {nlohmann::json(std::round(d * scale) / scale), buf};
}

Value Value::bytes_as_mb(uint64_t bytes) { return {nlohmann::json(bytes), std::to_string(bytes >> 20)}; }

Object& Object::add(std::string label, std::string key, Value value) {
  Entry e;
  e.label = std::move(label);
  e.key = std::move(key);
  e.value = std::move(value);
  entries.push_back(std::move(e));
  return *this;
}

Object& Object::add_object(std::string key, Object child) {
  Entry e;
  e.key = std::move(key);
  e.kind = Entry::Kind::kObject;
  e.children.push_back(std::move(child));
  entries.push_back(std::move(e));
  return *this;
}

Object& Object::add_list(std::string key, std::vector<Object> items) {
  Entry e;
  e.key = std::move(key);
  e.kind = Entry::Kind::kList;
  e.children = std::move(items);
  entries.push_back(std::move(e));
  return *this;
}

const Entry* Object::find(std::string_view key) const {
  for (const auto& e : entries) {
    if (e.key == key) return &e;
  }
  return nullptr;
}

const Value& Object::value(std::string_view key) const {
  static const Value kNa;
  const Entry* e = find(key);
  return e != nullptr && e->kind == Entry::Kind::kValue ? e->value : kNa;
}

const std::vector<Object>& Object::list(std::string_view key) const {
  static const std::vector<Object> kEmpty;
  const Entry* e = find(key);
  return e != nullptr && e->kind == Entry::Kind::kList ? e->children : kEmpty;
}

nlohmann::json render_json(const Object& doc) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& e : doc.entries) {
    switch (e.kind) {
      case Entry::Kind::kValue: j[e.key] = e.value.data; break;
      case Entry::Kind::kObject: j[e.key] = render_json(e.children.front()); break;
      case Entry::Kind::kList: {
        nlohmann::json items = nlohmann::json::array();
        for (const auto& c : e.children) items.push_back(render_json(c));
        j[e.key] = std::move(items);
        break;
      }
    }
  }
  return j;
}

std::string kv_line(std::string_view label, std::string_view text, int width) {
  char buf[256];
  std::snprintf(buf, sizeof(buf), "\t%-*.*s : ", width, static_cast<int>(label.size()), label.data());
  std::string line = buf;
  line.append(text);
  line += '\n';
  return line;
}

namespace {

void append_kv(std::string& out, const Object& doc, int width) {
  for (const auto& e : doc.entries) {
    switch (e.kind) {
      case Entry::Kind::kValue:
        if (!e.label.empty()) out += kv_line(e.label, e.value.text, width);
        break;
      case Entry::Kind::kObject: append_kv(out, e.children.front(), width); break;
      case Entry::Kind::kList:
        for (const auto& c : e.children) {
          out += '\n';
          append_kv(out, c, width);
        }
        break;
    }
  }
}

}  // namespace

std::string render_kv(const Object& doc, int width) {
  std::string out;
  append_kv(out, doc, width);
  return out;
}

}  // namespace npukit::smi
