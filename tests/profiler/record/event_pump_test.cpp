// The pump takes the counter samples as it reads the events, so a writer that lags (it runs at
// background priority while the job runs) still gets the node as it was at each moment.
#include "profiler/record/event_pump.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <thread>

#include "telemetry/client.hpp"

namespace npukit::prof {
namespace {

namespace tf = telemetry;

TEST(EventPump, SamplesAreTakenWhenTheEventsAreReadNotWhenTheWriterGetsToThem) {
  tf::WriterOptions o;
  o.node = "pump-" + std::to_string(getpid());
  o.devices.resize(1);
  auto bus = tf::InProcessBus::create(o);
  ASSERT_TRUE(bus.ok()) << bus.status().message();
  auto set_used = [&](uint64_t gib) { (*bus)->writer().update_device(0).set(tf::fid::kHbmUsedBytes, gib << 30).commit(); };
  set_used(1);
  auto reader = (*bus)->client();
  auto sampler_client = std::shared_ptr<tf::Client>((*bus)->client());
  auto cursor = reader->open_events(/*lossless=*/false);
  ASSERT_TRUE(cursor.ok()) << cursor.status().message();
  EventPump pump(std::move(*cursor), 1 << 20,
                 [sampler_client]() -> std::optional<tf::Snapshot> {
                   auto s = sampler_client->snapshot();
                   if (!s.ok()) return std::nullopt;
                   return std::move(*s);
                 },
                 std::chrono::milliseconds(20));
  // The job's memory: 50 GiB for 300 ms, then freed; the writer pops nothing until afterwards.
  set_used(50);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  set_used(1);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  pump.stop();  // what it read stays poppable
  uint64_t peak = 0;
  int samples = 0;
  while (auto batch = pump.pop(std::chrono::milliseconds(0))) {
    if (!batch->snapshot) continue;
    ++samples;
    peak = std::max(peak, batch->snapshot->device(0, tf::fid::kHbmUsedBytes).as_u64());
  }
  EXPECT_GE(samples, 5);
  EXPECT_EQ(peak, uint64_t{50} << 30) << "the lagging writer saw only what the node held when it got there";
}

}  // namespace
}  // namespace npukit::prof
