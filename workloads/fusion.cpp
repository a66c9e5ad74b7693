#include "workloads/fusion.hpp"

#include <algorithm>

namespace npukit::work {

namespace {

// Whether `next` takes `prev`'s output as its first input.
bool consumes(const StepOp& prev, const StepOp& next) {
  Shape out = output_shape(prev);
  return !out.empty() && !next.inputs.empty() && next.inputs[0] == out;
}

// How many ops from `first` the pattern takes (1: the head alone).
std::size_t extent(const FusionPattern& p, const std::vector<StepOp>& ops, std::size_t first,
                   const std::vector<bool>& fusible) {
  auto joins = [&](std::size_t i) {
    return i < ops.size() && (fusible.empty() || fusible[i]) && consumes(ops[i - 1], ops[i]);
  };
  return telemetry::fusion_extent(p, first, joins, [&](std::size_t i) { return family_of(ops[i].name); });
}

}  // namespace

std::vector<FusionGroup> fusion_groups(const std::vector<StepOp>& ops, bool enabled, const std::vector<bool>& fusible) {
  std::vector<FusionGroup> groups;
  for (std::size_t i = 0; i < ops.size();) {
    std::size_t n = 1;
    if (enabled && (fusible.empty() || fusible[i])) {
      for (const FusionPattern& p : fusion_patterns()) n = std::max(n, extent(p, ops, i, fusible));
    }
    groups.push_back({i, n});
    i += n;
  }
  return groups;
}

StepOp fused_op(const std::vector<StepOp>& ops, const FusionGroup& g) {
  StepOp head = ops[g.first];
  if (g.count == 1) return head;
  nlohmann::json epilogue = nlohmann::json::array();
  for (std::size_t i = g.first + 1; i < g.first + g.count; ++i) {
    const StepOp& part = ops[i];
    nlohmann::json inputs = nlohmann::json::array();
    for (std::size_t k = 1; k < part.inputs.size(); ++k) inputs.push_back({{"shape", part.inputs[k]}, {"dtype", part.dtypes[k]}});
    nlohmann::json entry = {{"op", part.name}, {"inputs", inputs}};
    nlohmann::json attrs = part.attrs.is_object() ? part.attrs : nlohmann::json::object();
    attrs.erase("comment");
    if (!attrs.empty()) entry["attrs"] = attrs;
    epilogue.push_back(entry);
  }
  if (!head.attrs.is_object()) head.attrs = nlohmann::json::object();
  head.attrs["epilogue"] = epilogue;
  return head;
}

}  // namespace npukit::work
