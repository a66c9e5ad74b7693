// The bus's hot paths against DESIGN.md section 9: a full snapshot read of 16 devices (<= 1 us),
// counter publish (<= 20 ns per field) and event record (<= 50 ns per event). Each runs against
// a real shm segment, the way npu-smi / npu-top and the daemon use it.
#include <benchmark/benchmark.h>

#include <unistd.h>

#include <string>

#include "bench/budget.hpp"
#include "telemetry/reader.hpp"
#include "telemetry/writer.hpp"

namespace npukit::telemetry {
namespace {

const bool kBudgets[] = {
    bench::register_budget({"BM_SnapshotRead16", "s_per_snapshot", "us", 1e-6, false, 1.0,
                            "DESIGN.md 9: bus snapshot read, 16 devices, all fields"}),
    bench::register_budget({"BM_CounterPublish", "s_per_field", "ns", 1e-9, false, 20.0,
                            "DESIGN.md 9: counter publish"}),
    bench::register_budget({"BM_EventRecord", "s_per_event", "ns", 1e-9, false, 50.0,
                            "DESIGN.md 9: event record"}),
};

std::unique_ptr<Writer> make_writer(int devices, const char* tag) {
  WriterOptions o;
  o.node = "bench-" + std::string(tag) + "-" + std::to_string(::getpid());
  for (int d = 0; d < devices; ++d) {
    DeviceInfo info;
    info.npu_id = d;
    info.name = "910B2";
    info.bus_id = "0000:" + std::to_string(10 + d) + ":00.0";
    o.devices.push_back(info);
  }
  auto w = Writer::create(o);
  return w.ok() ? std::move(*w) : nullptr;
}

// Every publishable device field, with a value.
void publish_all(Writer& w, int d, uint64_t k) {
  auto u = w.update_device(d);
  for (const FieldDef* f : fields_of(EntityLevel::kDevice)) {
    if (f->id != fid::kChecksum) u.set(f->id, k + f->slot);
  }
}

void BM_SnapshotRead16(benchmark::State& state) {
  auto w = make_writer(16, "snap");
  if (!w) return state.SkipWithError("cannot create the bench segment");
  for (int d = 0; d < 16; ++d) publish_all(*w, d, 1000);
  // The bench writer does not heartbeat; a long threshold keeps every read on the live path.
  auto r = Reader::open({w->node(), std::chrono::hours(1)});
  if (!r.ok()) return state.SkipWithError(r.status().message().c_str());
  Snapshot s;
  (*r)->read(&s);
  if (s.stale() || !s.checksum_ok(15)) return state.SkipWithError("snapshot is not live");
  for (auto _ : state) {
    (*r)->read(&s);
    benchmark::DoNotOptimize(s);
  }
  state.counters["fields"] = static_cast<double>(16 * fields_of(EntityLevel::kDevice).size());
  state.counters["s_per_snapshot"] = benchmark::Counter(
      static_cast<double>(state.iterations()), benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_SnapshotRead16);

// One commit of every device field (the daemon's per-tick publish of a device).
void BM_CounterPublish(benchmark::State& state) {
  auto w = make_writer(1, "pub");
  if (!w) return state.SkipWithError("cannot create the bench segment");
  uint64_t k = 0;
  for (auto _ : state) publish_all(*w, 0, ++k);
  const double fields = static_cast<double>(fields_of(EntityLevel::kDevice).size() - 1);
  state.counters["s_per_field"] = benchmark::Counter(
      static_cast<double>(state.iterations()) * fields, benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_CounterPublish);

// One field per commit: the worst case, paying the seqlock and checksum for a single value.
void BM_CounterPublishSingleField(benchmark::State& state) {
  auto w = make_writer(1, "pub1");
  if (!w) return state.SkipWithError("cannot create the bench segment");
  uint64_t k = 0;
  for (auto _ : state) w->update_device(0).set(fid::kKernelsTotal, ++k);
  state.counters["s_per_commit"] = benchmark::Counter(
      static_cast<double>(state.iterations()), benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_CounterPublishSingleField);

void BM_EventRecord(benchmark::State& state) {
  auto w = make_writer(1, "ev");
  if (!w) return state.SkipWithError("cannot create the bench segment");
  Event ev;
  ev.type = EventType::kKernel;
  ev.name_id = *w->intern("aten::mm");
  for (auto _ : state) {
    ev.ts_ns += 1000;
    benchmark::DoNotOptimize(w->record(ev));
  }
  state.counters["s_per_event"] = benchmark::Counter(
      static_cast<double>(state.iterations()), benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_EventRecord);

}  // namespace
}  // namespace npukit::telemetry
