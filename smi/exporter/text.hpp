// The Prometheus text exposition format (version 0.0.4), written family by family: every family
// gets its HELP and TYPE lines, label values and HELP text are escaped, values are printed in
// the shortest form that reads back exactly, and a family with no samples is left out.
//
// Thread-safety: an Exposition is a value built by one thread.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace npukit::smi::exporter {

inline constexpr std::string_view kContentType = "text/plain; version=0.0.4; charset=utf-8";

using Labels = std::vector<std::pair<std::string_view, std::string>>;

class Exposition {
 public:
  // Starts a family ("gauge" or "counter"); samples added until the next family() belong to it.
  void family(std::string_view name, std::string_view help, std::string_view type);
  void sample(const Labels& labels, double value);
  // The whole exposition: families in the order they were started, empty ones left out.
  std::string str() const;
  std::size_t sample_count() const { return samples_; }

 private:
  struct Family {
    std::string header;  // HELP and TYPE lines
    std::string name;
    std::string body;
  };
  std::vector<Family> families_;
  std::size_t samples_ = 0;
};

// "a\\b\"c\nd" escaping of a label value; HELP text escapes only backslash and newline.
std::string escape_label_value(std::string_view v);
std::string escape_help(std::string_view v);
// Shortest exact decimal ("42", "0.1", "1e+21"), or NaN / +Inf / -Inf.
std::string format_value(double v);

}  // namespace npukit::smi::exporter
