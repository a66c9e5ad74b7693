#include "telemetry/phase_clock.hpp"

#include <chrono>
#include <cstdio>

namespace npukit::telemetry {

namespace {

int64_t steady_ns() { return std::chrono::steady_clock::now().time_since_epoch().count(); }

constexpr int64_t kRecentNs = 10'000'000'000;

}  // namespace

PhaseClock::PhaseClock() : since_ns_(steady_ns()) {}

void PhaseClock::enter(const char* phase) {
  int64_t now = steady_ns();
  int64_t lasted = now - since_ns_.load();
  if (lasted > longest_ns_.load() || now - longest_at_ns_.load() > kRecentNs) {
    longest_ = phase_.load();
    longest_ns_ = lasted;
    longest_at_ns_ = now;
  }
  since_ns_ = now;
  phase_ = phase;
}

std::string PhaseClock::describe(const std::string& detail) const {
  char buf[96];
  std::snprintf(buf, sizeof buf, " for %.3f s; longest recent: ", static_cast<double>(steady_ns() - since_ns_.load()) / 1e9);
  char longest[48];
  std::snprintf(longest, sizeof longest, ", %.3f s", static_cast<double>(longest_ns_.load()) / 1e9);
  return std::string(phase_.load()) + detail + buf + longest_.load() + longest;
}

}  // namespace npukit::telemetry
