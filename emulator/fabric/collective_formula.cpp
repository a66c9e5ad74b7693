#include "emulator/fabric/collective_formula.hpp"

namespace npukit::emu {

AlphaBetaGamma alpha_beta_gamma(const Fabric& fabric, const DeviceSpec& spec, int device_a, int device_b) {
  AlphaBetaGamma p;
  p.alpha_ns = static_cast<double>(fabric.transfer_time(device_a, device_b, 0));
  p.beta_ns_per_byte = static_cast<double>(fabric.transfer_time(device_a, device_b, 1ull << 30) -
                                           fabric.transfer_time(device_a, device_b, 0)) /
                       static_cast<double>(1ull << 30);
  p.gamma_ns_per_byte = static_cast<double>(kReduceHbmBytesPerByte) / (spec.hbm.bandwidth_bps * spec.efficiency.hbm) * 1e9;
  p.overhead_ns = static_cast<double>(spec.runtime.kernel_launch_ns);
  return p;
}

double collective_formula_ns(CollectiveOp op, CollectiveAlgo algo, int n, uint64_t bytes, const AlphaBetaGamma& p) {
  if (n < 2) return p.overhead_ns;
  const bool ring = algo == CollectiveAlgo::kRing;
  const double s = static_cast<double>(bytes);
  const double c = static_cast<double>((bytes + static_cast<uint64_t>(n) - 1) / static_cast<uint64_t>(n));
  const double a = p.alpha_ns, b = p.beta_ns_per_byte, g = p.gamma_ns_per_byte;
  const double steps = n - 1;
  double t = 0;
  switch (op) {
    case CollectiveOp::kAllReduce: t = (ring ? 2 * steps : 2) * (a + c * b) + steps * c * g; break;
    case CollectiveOp::kReduceScatter: t = ring ? steps * (a + s * b + s * g) : a + s * b + steps * s * g; break;
    case CollectiveOp::kAllGather: t = ring ? steps * (a + s * b) : a + s * b; break;
    case CollectiveOp::kAllToAll: t = a + s * b; break;
    case CollectiveOp::kBroadcast: t = ring ? n * (a + c * b) : a + s * b; break;
    case CollectiveOp::kSend:
    case CollectiveOp::kRecv: t = a + s * b; break;
  }
  return p.overhead_ns + t;
}

double hierarchical_allreduce_formula_ns(int hosts, int per_host, uint64_t bytes, CollectiveAlgo intra,
                                         const AlphaBetaGamma& within, const AlphaBetaGamma& across) {
  const auto ceil_div = [](uint64_t a, uint64_t b) { return (a + b - 1) / b; };
  const uint64_t c0 = ceil_div(bytes, static_cast<uint64_t>(per_host));
  const auto c1 = static_cast<double>(ceil_div(c0, static_cast<uint64_t>(hosts)));
  const double l = per_host - 1, h = hosts - 1;
  double t = across.overhead_ns + 2 * h * (across.alpha_ns + c1 * across.beta_ns_per_byte) + h * c1 * across.gamma_ns_per_byte;
  if (per_host > 1) {
    const double steps = intra == CollectiveAlgo::kRing ? 2 * l : 2;
    t += steps * (within.alpha_ns + static_cast<double>(c0) * within.beta_ns_per_byte) +
         l * static_cast<double>(c0) * within.gamma_ns_per_byte;
  }
  return t;
}

}  // namespace npukit::emu
