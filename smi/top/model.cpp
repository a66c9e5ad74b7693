#include "smi/top/model.hpp"

#include <algorithm>
#include <limits>

namespace npukit::top {

History::History(int devices, std::size_t capacity)
    : devices_(std::max(devices, 0)), capacity_(std::max<std::size_t>(capacity, 2)), times_(capacity_) {
  for (auto& v : values_) v.assign(static_cast<std::size_t>(devices_) * capacity_, std::nanf(""));
}

void History::push(uint64_t t_ns, const std::vector<float> (&values)[kMetricCount]) {
  times_[head_] = t_ns;
  for (int m = 0; m < kMetricCount; ++m) {
    for (int d = 0; d < devices_; ++d) {
      auto i = static_cast<std::size_t>(d);
      values_[m][i * capacity_ + head_] = i < values[m].size() ? values[m][i] : std::nanf("");
    }
  }
  head_ = (head_ + 1) % capacity_;
  count_ = std::min(count_ + 1, capacity_);
}

namespace {

// Mean gap between the last (up to 8) samples, ns; 1 s with fewer than two samples.
double typical_gap(const History& h) {
  std::size_t n = h.size();
  if (n < 2) return 1e9;
  std::size_t k = std::min<std::size_t>(n - 1, 8);
  double gap = static_cast<double>(h.time(n - 1) - h.time(n - 1 - k)) / static_cast<double>(k);
  return std::max(gap, 1.0);
}

}  // namespace

std::vector<float> history_columns(const History& h, Metric m, int device, uint64_t now_ns,
                                   uint64_t window_ns, int columns) {
  std::vector<float> out(static_cast<std::size_t>(std::max(columns, 0)), std::nanf(""));
  std::size_t n = h.size();
  if (n == 0 || columns <= 0 || window_ns == 0 || device < 0 || device >= h.devices()) return out;
  const double cap = 1.5 * typical_gap(h);
  const double start = static_cast<double>(now_ns) - static_cast<double>(window_ns);
  const double bin = static_cast<double>(window_ns) / columns;
  for (std::size_t i = n; i-- > 0;) {
    double t = static_cast<double>(h.time(i));
    double next = i + 1 < n ? static_cast<double>(h.time(i + 1)) : static_cast<double>(now_ns);
    double span = std::clamp(next - t, 1.0, cap);
    if (t + span <= start) break;
    float v = h.value(m, device, i);
    if (std::isnan(v)) continue;
    auto k0 = static_cast<long>(std::floor((t - start) / bin));
    auto k1 = static_cast<long>(std::ceil((t + span - start) / bin)) - 1;
    k0 = std::clamp(k0, 0L, static_cast<long>(columns) - 1);
    k1 = std::min(k1, static_cast<long>(columns) - 1);
    for (long k = k0; k <= k1; ++k) {
      float& c = out[static_cast<std::size_t>(k)];
      c = std::isnan(c) ? v : std::max(c, v);
    }
  }
  return out;
}

}  // namespace npukit::top
