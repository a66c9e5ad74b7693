// Grouping tasks by a few STRING_IDS ids (name, op type, shapes...): a hash map keyed by the ids,
// one lookup per task while scanning a recording of millions of tasks.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <unordered_map>

namespace npukit::prof {

template <std::size_t N>
struct IdsHash {
  std::size_t operator()(const std::array<int64_t, N>& k) const {
    uint64_t h = 1469598103934665603ull;  // FNV-1a over the ids
    for (int64_t v : k) h = (h ^ static_cast<uint64_t>(v)) * 1099511628211ull;
    return static_cast<std::size_t>(h);
  }
};

template <std::size_t N, typename V>
using Groups = std::unordered_map<std::array<int64_t, N>, V, IdsHash<N>>;

}  // namespace npukit::prof
