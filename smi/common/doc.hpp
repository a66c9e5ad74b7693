// The npu-smi document model: every query builds one Document (an ordered tree of labelled
// values), and renderers print it: the npu-smi key/value text (render_kv), JSON (render_json),
// CSV (csv.hpp) and the boxed `info` tables (smi/cli/table.hpp). Nothing prints JSON by hand
// (STYLE.md item 6).
//
// A Value carries both forms of one reading, fixed when the document is built:
//   data  the machine value for JSON: a number in the unit its key names (bytes for
//         npu_hbm_used_bytes), a string, or null when there is no value;
//   text  what npu-smi prints: "20701" (MB), "88.6", "OK", or "NA" when there is no value.
// "No value" is a state, never 0 (STYLE.md item 3): Value::na() is null in JSON, NA in text.
//
// An Entry has a text label (npu-smi's key, "Aicore Usage Rate(%)") and a JSON key (a column
// name from columns.hpp: a registry field name such as "npu_aicore_utilization_percent",
// an identity key such as "npu_id", or a documented derived name).
//
// Thread-safety: plain values.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace npukit::smi {

struct Value {
  nlohmann::json data;  // null when there is no value
  std::string text = "NA";

  static Value na() { return {}; }
  static Value str(std::string s);
  static Value integer(int64_t v);
  // A real number: text with `decimals` digits, JSON rounded to the same precision.
  static Value real(double v, int decimals);
  // Bytes shown as MB (floor of bytes / 2^20) with the byte count in JSON.
  static Value bytes_as_mb(uint64_t bytes);
  // A value whose JSON form and text differ (e.g. an error code: 2162688001 / "0x80E18401").
  static Value pair(nlohmann::json data, std::string text) { return {std::move(data), std::move(text)}; }
  bool is_na() const { return data.is_null(); }
};

struct Object;

struct Entry {
  std::string label;  // npu-smi's text key
  std::string key;    // JSON key
  // Exactly one of these is used: a value, a nested object, or a list of objects.
  enum class Kind : uint8_t { kValue, kObject, kList } kind = Kind::kValue;
  Value value;
  std::vector<Object> children;  // kObject: one element; kList: the items
};

// An ordered list of entries (JSON object order = insertion order).
struct Object {
  std::vector<Entry> entries;

  Object& add(std::string label, std::string key, Value value);
  // Adds a value that only machine formats carry (no npu-smi text line).
  Object& add_data(std::string key, Value value) { return add("", std::move(key), std::move(value)); }
  Object& add_object(std::string key, Object child);
  Object& add_list(std::string key, std::vector<Object> items);
  // First entry with this JSON key, or nullptr.
  const Entry* find(std::string_view key) const;
  // The value under `key`, or NA when absent or not a value.
  const Value& value(std::string_view key) const;
  const std::vector<Object>& list(std::string_view key) const;
};

using Document = Object;

// {"key": data, ...}; nested objects and lists recurse.
nlohmann::json render_json(const Object& doc);

// npu-smi's key/value text: one "\t%-Ns : text" line per labelled value (`width` 30, or 40 for
// the ECC keys), a blank line before each list item, nested objects inline. Unlabelled entries
// are skipped.
std::string render_kv(const Object& doc, int width = 30);

// One "\t%-Ns : text" line.
std::string kv_line(std::string_view label, std::string_view text, int width = 30);

}  // namespace npukit::smi
