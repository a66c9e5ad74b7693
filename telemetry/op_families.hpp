// Op families and the fusion pattern table: which framework ops CANN's graph compiler launches as
// one kernel. Shared data, read by two layers: the workload compiler fuses by it
// (workloads/fusion.hpp) and the profiler's unfused_kernels finding reads a profile's kernels
// against it (profiler/analyze/findings_fusion.cpp), so the finding names what the compiler would
// have fused, no more and no less.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace npukit::telemetry {

// An op's family, from its name in a program: a framework op ("aten::mm", "conv2d",
// "elementwise_add") or a kernel name ("ReluGrad", "DropOutDoMask"). kOther: none known.
enum class Family { kMatmul, kBatchMatmul, kConv, kRelu, kGelu, kSoftmax, kLayerNorm, kBatchNorm, kEltwise,
                    kEmbedding, kLoss, kReduce, kActivationGrad, kBatchNormGrad, kDropout, kTranspose, kOther };
Family family_of(std::string_view op);

// One kernel: an op of the heads' families, then in order at most one op of each slot's families
// (or, for a chain, any number of the heads' families), each taking the previous one's output
// as its first input.
struct FusionPattern {
  std::string name;                         // as the docs list it
  std::vector<Family> heads;                // families that may start the kernel
  std::vector<std::vector<Family>> slots;   // then, in order, at most one op of each slot
  bool chain = false;                       // or: any number of the heads' families after a head
};
const std::vector<FusionPattern>& fusion_patterns();

// How many ops from the head `first` the pattern takes (1: the head alone). `joins(i)`: whether
// op i may join op i - 1's kernel (it exists, may fuse, and takes op i - 1's output first);
// `family(i)`: op i's family.
template <typename Joins, typename FamilyAt>
std::size_t fusion_extent(const FusionPattern& p, std::size_t first, Joins joins, FamilyAt family) {
  auto in = [](const std::vector<Family>& fs, Family f) {
    for (Family x : fs) {
      if (x == f) return true;
    }
    return false;
  };
  if (!in(p.heads, family(first))) return 1;
  std::size_t n = 1;
  if (p.chain) {
    while (joins(first + n) && in(p.heads, family(first + n))) ++n;
    return n;
  }
  for (const auto& slot : p.slots) {
    if (joins(first + n) && in(slot, family(first + n))) ++n;
  }
  return n;
}

}  // namespace npukit::telemetry
