// telemetry_test_helper: the other process in the bus's multi-process tests. Each mode prints
// "ready" once set up, then a result line; the exit status says whether its checks passed.
//
//   writer <node>                         publish generations + heartbeat every ms until killed
//   check-snapshots <node>                read snapshots until the writer closes; every device
//                                         must hold one consistent generation (exit 1: torn)
//   read-events <node> <lossless 0|1> <n> read n events (received + missed), checking order and
//                                         payload; lossless must miss none (exit 1)
//   spin-reader <node>                    read snapshots and events forever
//   hold-lossless <node>                  register a lossless cursor, never read, sleep forever
//   control-as <uid> <node> <path> <json> drop to uid/gid, send one control request, print reply
#include <grp.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

#include "telemetry/control.hpp"
#include "telemetry/reader.hpp"
#include "tests/telemetry/bus_fixtures.hpp"

namespace npukit::telemetry::testing {
namespace {

void say(const std::string& line) {
  std::printf("%s\n", line.c_str());
  std::fflush(stdout);
}

std::unique_ptr<Reader> open_reader(const std::string& node) {
  auto r = Reader::open({node, std::chrono::seconds(30)});
  if (!r.ok()) {
    say("error: " + r.status().message());
    std::exit(2);
  }
  return std::move(*r);
}

int writer(const std::string& node) {
  auto w = Writer::create(small_options(node));
  if (!w.ok()) {
    say("error: " + w.status().message());
    return 2;
  }
  say("ready");
  for (uint64_t k = 1;; ++k) {
    for (int d = 0; d < (*w)->device_count(); ++d) publish_generation(**w, d, k);
    (*w)->heartbeat();
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

int check_snapshots(const std::string& node) {
  auto r = open_reader(node);
  say("ready");
  // torn: values that disagree with each other; unsettled: a device the reader gave up on.
  uint64_t reads = 0, torn = 0, unsettled = 0, changes = 0, last = 0;
  Snapshot s;
  for (;;) {
    r->read(&s);
    if (s.stale()) break;
    ++reads;
    for (int d = 0; d < s.device_count(); ++d) {
      if (s.device(d, fid::kChecksum).status == SampleStatus::kStale) ++unsettled;
      else torn += generation_consistent(s, d) ? 0 : 1;
    }
    uint64_t k = s.device(0, fid::kKernelsTotal).bits;
    changes += k != last ? 1 : 0;
    last = k;
  }
  say("reads=" + std::to_string(reads) + " torn=" + std::to_string(torn) +
      " unsettled=" + std::to_string(unsettled) + " changes=" + std::to_string(changes));
  return torn == 0 && unsettled == 0 ? 0 : 1;
}

int read_events(const std::string& node, bool lossless, uint64_t want) {
  auto r = open_reader(node);
  auto cursor = r->open_events(lossless);
  if (!cursor.ok()) {
    say("error: " + cursor.status().message());
    return 2;
  }
  say("ready");
  // Sequence numbers must rise; a gap is allowed only where the batch reports misses.
  const uint64_t start = (*cursor)->position();
  uint64_t received = 0, missed = 0, bad = 0, next_seq = start;
  auto last_progress = std::chrono::steady_clock::now();
  while (received + missed < want) {
    EventBatch b = (*cursor)->next(4096, std::chrono::milliseconds(100));
    uint64_t gaps = 0;
    for (const Event& ev : b.events) {
      bad += (ev.seq >= next_seq && test_event_ok(ev)) ? 0 : 1;
      gaps += ev.seq > next_seq ? ev.seq - next_seq : 0;
      next_seq = ev.seq + 1;
    }
    gaps += (*cursor)->position() - next_seq;  // skipped after the batch's last event
    next_seq = (*cursor)->position();
    bad += gaps == b.missed ? 0 : 1;
    missed += b.missed;
    received += b.events.size();
    if (!b.events.empty() || b.missed != 0) last_progress = std::chrono::steady_clock::now();
    if (std::chrono::steady_clock::now() - last_progress > std::chrono::seconds(60)) break;
  }
  say("received=" + std::to_string(received) + " missed=" + std::to_string(missed) + " bad=" + std::to_string(bad));
  bool ok = bad == 0 && received + missed == want && (!lossless || missed == 0);
  return ok ? 0 : 1;
}

int spin_reader(const std::string& node) {
  auto r = open_reader(node);
  auto cursor = r->open_events(false);
  say("ready");
  Snapshot s;
  for (;;) {
    r->read(&s);
    if (cursor.ok()) (*cursor)->next(64);
  }
}

int hold_lossless(const std::string& node) {
  auto r = open_reader(node);
  auto cursor = r->open_events(true);
  if (!cursor.ok()) {
    say("error: " + cursor.status().message());
    return 2;
  }
  say("ready");
  for (;;) ::pause();
}

int control_as(int id, const std::string& node, const std::string& path, const std::string& json) {
  if (::setgroups(0, nullptr) != 0 || ::setgid(static_cast<gid_t>(id)) != 0 ||
      ::setuid(static_cast<uid_t>(id)) != 0) {
    say("error: cannot switch to uid " + std::to_string(id));
    return 4;
  }
  auto c = ControlClient::connect(node, path, std::chrono::seconds(10));
  if (!c.ok()) {
    say("error: " + c.status().message());
    return 2;
  }
  auto reply = (*c)->call(nlohmann::json::parse(json));
  if (!reply.ok()) {
    say("error: " + reply.status().message());
    return 2;
  }
  say(to_line(*reply));
  return 0;
}

}  // namespace
}  // namespace npukit::telemetry::testing

int main(int argc, char** argv) {
  using namespace npukit::telemetry::testing;
  std::string mode = argc > 1 ? argv[1] : "";
  if (mode == "writer" && argc == 3) return writer(argv[2]);
  if (mode == "check-snapshots" && argc == 3) return check_snapshots(argv[2]);
  if (mode == "read-events" && argc == 5) {
    return read_events(argv[2], std::string(argv[3]) == "1", std::strtoull(argv[4], nullptr, 10));
  }
  if (mode == "spin-reader" && argc == 3) return spin_reader(argv[2]);
  if (mode == "hold-lossless" && argc == 3) return hold_lossless(argv[2]);
  if (mode == "control-as" && argc == 6) return control_as(std::atoi(argv[2]), argv[3], argv[4], argv[5]);
  std::fprintf(stderr, "usage: telemetry_test_helper <mode> <args> (see the source)\n");
  return 64;
}
