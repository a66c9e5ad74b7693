// Golden-file comparison shared by the test suites: compare text with a file under tests/data,
// or rewrite the file when NPUKIT_UPDATE_GOLDEN=1. A mismatch lists the differing lines.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

namespace npukit::testing {

// Empty when equal line by line; else each differing line, numbered from 1.
inline std::string golden_line_diff(const std::string& expected, const std::string& actual) {
  auto lines = [](const std::string& text) {
    std::vector<std::string> v;
    std::istringstream in(text);
    for (std::string l; std::getline(in, l);) v.push_back(l);
    return v;
  };
  std::vector<std::string> e = lines(expected), a = lines(actual);
  std::string out;
  for (std::size_t i = 0; i < std::max(e.size(), a.size()); ++i) {
    std::string el = i < e.size() ? e[i] : "<missing>", al = i < a.size() ? a[i] : "<missing>";
    if (el != al) out += "line " + std::to_string(i + 1) + ":\n  expected: " + el + "\n  actual:   " + al + "\n";
  }
  return out;
}

// Compares `actual` with the file at `path` byte for byte; NPUKIT_UPDATE_GOLDEN=1 rewrites it.
inline void expect_golden_file(const std::string& path, const std::string& actual) {
  const char* update = std::getenv("NPUKIT_UPDATE_GOLDEN");
  if (update != nullptr && std::string(update) == "1") {
    std::ofstream(path, std::ios::binary) << actual;
    return;
  }
  std::ifstream in(path, std::ios::binary);
  ASSERT_TRUE(in.good()) << "missing golden " << path << " (regenerate with NPUKIT_UPDATE_GOLDEN=1)";
  std::string expected((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (expected == actual) return;
  std::string diff = golden_line_diff(expected, actual);
  ADD_FAILURE() << "output differs from golden " << path << " (NPUKIT_UPDATE_GOLDEN=1 regenerates it):\n"
                << (diff.empty() ? "(only line endings differ)\n" : diff);
}

}  // namespace npukit::testing
