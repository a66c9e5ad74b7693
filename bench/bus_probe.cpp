// bus_probe: what the robustness benches (kill_loop.sh) ask of a node's bus that no tool prints:
// is the writer still publishing, and what does the segment header count.
//   bus_probe --node N                       one line: live, heartbeat age, bus counters
//   bus_probe --node N --advances K --within MS
//                                            also waits for K new heartbeats within MS ms
// Exit: 0 live (and advancing, when asked), 1 stale / not advancing, 2 usage, 3 no node.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

#include "telemetry/client.hpp"
#include "telemetry/segment.hpp"

namespace {

namespace tm = npukit::telemetry;

uint64_t u64(const tm::Snapshot& s, tm::FieldId id) {
  tm::Sample v = s.node_field(id);
  return v.ok() ? v.as_u64() : 0;
}

int usage() {
  std::fprintf(stderr, "usage: bus_probe --node NAME [--advances K --within MS]\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::string node;
  int advances = 0, within_ms = 0;
  for (int i = 1; i < argc; ++i) {
    if (i + 1 >= argc) return usage();
    if (!std::strcmp(argv[i], "--node")) node = argv[++i];
    else if (!std::strcmp(argv[i], "--advances")) advances = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--within")) within_ms = std::atoi(argv[++i]);
    else return usage();
  }
  if (node.empty()) return usage();
  auto client = tm::ShmClient::open({.node = node});
  if (!client.ok()) {
    std::fprintf(stderr, "bus_probe: %s\n", client.status().message().c_str());
    return 3;
  }
  auto first = (*client)->snapshot();
  if (!first.ok()) {
    std::fprintf(stderr, "bus_probe: %s\n", first.status().message().c_str());
    return 3;
  }
  uint64_t beat = u64(*first, tm::fid::kNodeHeartbeatNs);
  int seen = 0;
  auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(within_ms);
  while (seen < advances && std::chrono::steady_clock::now() < end) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    auto s = (*client)->snapshot();
    if (!s.ok() || s->stale()) continue;
    uint64_t b = u64(*s, tm::fid::kNodeHeartbeatNs);
    if (b != beat) ++seen, beat = b;
  }
  auto last = (*client)->snapshot();
  if (!last.ok()) return 3;
  const tm::Snapshot& s = *last;
  double age_ms = static_cast<double>(tm::monotonic_ns() - u64(s, tm::fid::kNodeHeartbeatNs)) / 1e6;
  std::printf("live=%d heartbeat_age_ms=%.1f advances=%d events_total=%llu lossless_dead_readers=%llu "
              "lossless_timeouts=%llu publish_errors=%llu stale_reason=\"%s\"\n",
              s.stale() ? 0 : 1, age_ms, seen, static_cast<unsigned long long>(u64(s, tm::fid::kBusEventsTotal)),
              static_cast<unsigned long long>(u64(s, tm::fid::kBusLosslessDeadReadersTotal)),
              static_cast<unsigned long long>(u64(s, tm::fid::kBusLosslessTimeoutsTotal)),
              static_cast<unsigned long long>(u64(s, tm::fid::kBusPublishErrorsTotal)), s.stale_reason().c_str());
  return !s.stale() && seen >= advances ? 0 : 1;
}
