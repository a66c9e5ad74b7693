// Fuzz target: a node's shared-memory segment as every reader maps it. A real daemon (8x910B2)
// publishes for a moment at start-up; its segment is the base. Each input is a list of patches
// over that base (and optionally a truncation), written to /dev/shm/npukit-fz-seg-<pid>; then the
// readers run over it: the bus client (snapshot, both kinds of event cursor, string lookups),
// `npu-smi info`, `npu-smi health`, `npu-smi info -t board -i 0 -c 0`, npu-top (one headless
// frame) and the exporter's exposition. None may crash or hang; a corrupt segment is one line.
//
// Input: a flags byte (bit 0: leave writer pid and heartbeat as patched, so the segment may read
// stale; bit 1: truncate to the next u32 mod size), then patches until the input ends:
//   kind byte (< 192: u16 offset into the first 64 KiB, where the header, identities and field
//   slots live; else a u32 offset mod size), u8 length, that many bytes.
#include <sys/mman.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <sstream>
#include <thread>
#include <vector>

#include "smi/cli/cli.hpp"
#include "smi/exporter/metrics.hpp"
#include "smi/top/app.hpp"
#include "telemetry/client.hpp"
#include "telemetry/layout.hpp"
#include "tests/fuzz/fuzz_daemon.hpp"
#include "tests/fuzz/fuzz_util.hpp"

namespace {

namespace tf = npukit::telemetry;
namespace fz = npukit::fuzz;

std::vector<uint8_t> g_base;
std::string g_node;
bool g_show = false;

// Runs a real daemon for half a second and copies its segment.
std::vector<uint8_t> capture_daemon_segment() {
  std::string name = "fz-base-" + std::to_string(::getpid());
  fz::RunningDaemon d(name, /*rate_hz=*/50);
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  std::ifstream in("/dev/shm/npukit-" + name, std::ios::binary);
  return {(std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>()};
}

void apply(std::vector<uint8_t>& seg, const uint8_t* data, std::size_t size) {
  uint8_t flags = fz::take<uint8_t>(data, size);
  if (flags & 2) seg.resize(fz::take<uint32_t>(data, size) % (seg.size() + 1));
  if (!(flags & 1) && seg.size() >= sizeof(tf::detail::SegmentHeader)) {
    auto* h = reinterpret_cast<tf::detail::SegmentHeader*>(seg.data());
    h->prefix.writer_pid = ::getpid();  // a live writer: this process
    h->heartbeat_ns.store(tf::monotonic_ns());
  }
  while (size > 0 && !seg.empty()) {
    uint8_t kind = fz::take<uint8_t>(data, size);
    std::size_t at = kind < 192 ? fz::take<uint16_t>(data, size) : fz::take<uint32_t>(data, size);
    at %= seg.size();
    std::size_t len = std::min<std::size_t>({fz::take<uint8_t>(data, size), size, seg.size() - at});
    std::copy(data, data + len, seg.begin() + static_cast<std::ptrdiff_t>(at));
    data += len;
    size -= len;
  }
}

void read_with_client() {
  auto c = tf::open_client("shm", {.node = g_node});
  if (!c.ok()) return;
  (void)(*c)->snapshot();
  for (bool lossless : {false, true}) {
    auto cursor = (*c)->open_events(lossless);
    if (!cursor.ok()) continue;
    auto batch = (*cursor)->next(4096);
    for (const auto& ev : batch.events) {
      (void)(*cursor)->resolve(ev.name_id);
      (void)(*cursor)->resolve(ev.aux_id);
    }
  }
}

void run_smi(std::vector<const char*> args) {
  std::ostringstream out, err;
  npukit::smi::Context ctx;
  ctx.out = &out;
  ctx.err = &err;
  std::istringstream in("n\n");
  ctx.in = &in;
  ctx.open = [] { return tf::open_client("shm", {.node = g_node}); };
  ctx.numa_cpulists = {"0-1"};
  ctx.timestamp = [] { return std::string("2026-01-01T00:00:00.000Z"); };
  args.insert(args.begin(), "npu-smi");
  int rc = npukit::smi::run_cli(ctx, static_cast<int>(args.size()), args.data());
  if (g_show) std::fprintf(stderr, "%s-> exit %d\n%s%s\n", args[1], rc, out.str().c_str(), err.str().c_str());
}

void run_top_frame() {
  npukit::top::Options o;
  o.node = g_node;
  o.frames = 1;
  o.interval_s = 0.05;
  std::ostringstream out, err;
  npukit::top::run_headless(o, out, err);
}

void render_exposition() {
  auto c = tf::open_client("shm", {.node = g_node});
  npukit::smi::exporter::ScrapeStatus st;
  st.node = g_node;
  if (!c.ok()) {
    (void)npukit::smi::exporter::render_metrics(nullptr, st);
    return;
  }
  auto s = (*c)->snapshot();
  st.reachable = s.ok();
  (void)npukit::smi::exporter::render_metrics(s.ok() ? &*s : nullptr, st);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  g_base = capture_daemon_segment();
  if (g_base.size() < sizeof(tf::detail::SegmentHeader)) {
    std::fprintf(stderr, "segment fuzz: the daemon's segment could not be read (%zu bytes)\n", g_base.size());
    std::abort();
  }
  g_show = std::getenv("NPUKIT_FUZZ_SHOW") != nullptr;  // debugging a seed: what npu-smi prints
  g_node = "fz-seg-" + std::to_string(::getpid());
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  std::vector<uint8_t> seg = g_base;
  apply(seg, data, size);
  std::string path = "/dev/shm/npukit-" + g_node;
  if (!fz::write_file(path, seg.data(), seg.size())) return 0;
  read_with_client();
  run_smi({"info"});
  run_smi({"health"});
  run_smi({"info", "-t", "board", "-i", "0", "-c", "0"});
  run_top_frame();
  render_exposition();
  ::unlink(path.c_str());
  return 0;
}
