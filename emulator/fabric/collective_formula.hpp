// The textbook time of a collective on a fully connected fabric (every pair of ranks has its own
// link in each direction, as on an 8x910B2 HCCS mesh), in the alpha-beta-gamma model:
//   alpha     the link latency, ns
//   beta      ns per byte on a link: 1 / (line rate x link efficiency)
//   gamma     ns per byte reduced: 3 bytes of HBM traffic (read both operands, write one)
//   overhead  the runtime's launch overhead, paid once per collective
// With S the call's bytes (count x element size, NCCL's counts) and c = ceil(S / n):
//   AllReduce      ring 2(n-1)(alpha + c beta) + (n-1) c gamma;  mesh 2(alpha + c beta) + (n-1) c gamma
//   ReduceScatter  ring (n-1)(alpha + S beta + S gamma);         mesh alpha + S beta + (n-1) S gamma
//   AllGather      ring (n-1)(alpha + S beta);                   mesh alpha + S beta
//   AlltoAll       alpha + S beta (both: every pair at once)
//   Broadcast      ring n (alpha + c beta) (scatter, then all-gather);  mesh alpha + S beta
// plus the overhead. The schedule the emulator runs (collectives.cpp) must agree within 5%
// (tests/emulator/fabric/collective_formula_test.cpp); bench/allreduce_sweep prints both.
#pragma once

#include "emulator/fabric/collectives.hpp"

namespace npukit::emu {

struct AlphaBetaGamma {
  double alpha_ns = 0;
  double beta_ns_per_byte = 0;
  double gamma_ns_per_byte = 0;
  double overhead_ns = 0;
};

// The model's parameters for the link from `device_a` to `device_b` of `fabric` and the chip `spec`.
AlphaBetaGamma alpha_beta_gamma(const Fabric& fabric, const DeviceSpec& spec, int device_a, int device_b);

// The formula's time, ns, for `op` over `n` ranks moving `bytes` (count x element size).
// kAuto is not an algorithm here: pass kRing or kMesh.
double collective_formula_ns(CollectiveOp op, CollectiveAlgo algo, int n, uint64_t bytes, const AlphaBetaGamma& p);

// AllReduce across hosts (plan_hierarchical_allreduce), with L ranks on each of H hosts:
//   level 0 (`intra`, link `within`) on c0 = ceil(S / L): mesh 2(alpha + c0 beta), ring
//   2(L-1)(alpha + c0 beta), plus (L-1) c0 gamma either way;
//   level 1 (a ring over the hosts' RoCE ports, link `across`) on c1 = ceil(c0 / H):
//   2(H-1)(alpha + c1 beta) + (H-1) c1 gamma;  plus the overhead once.
double hierarchical_allreduce_formula_ns(int hosts, int per_host, uint64_t bytes, CollectiveAlgo intra,
                                         const AlphaBetaGamma& within, const AlphaBetaGamma& across);

}  // namespace npukit::emu
