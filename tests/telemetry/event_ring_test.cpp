// The event ring: order and payload, overrun counting, lossless delivery to readers in other
// processes, and the writer's protection against dead or stalled lossless readers.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "telemetry/reader.hpp"
#include "telemetry/writer.hpp"
#include "tests/telemetry/bus_test_util.hpp"

namespace npukit::telemetry {
namespace {

using testing::Child;
using testing::test_event;
using testing::test_event_ok;

std::unique_ptr<testing::TestBus> ring_bus(uint32_t capacity,
                                           std::chrono::nanoseconds lossless_timeout = std::chrono::seconds(1),
                                           uint32_t slots = 8) {
  return testing::open_test_bus([&](WriterOptions& o) {
    o.event_capacity = capacity;
    o.lossless_timeout = lossless_timeout;
    o.lossless_readers = slots;
  });
}

std::unique_ptr<EventCursor> cursor(const Reader& r, bool lossless) {
  auto c = r.open_events(lossless);
  EXPECT_TRUE(c.ok()) << c.status().message();
  return c.ok() ? std::move(*c) : nullptr;
}

TEST(EventRing, EventsArriveInOrderWithTheirPayload) {
  auto bus = ring_bus(1024);
  ASSERT_TRUE(bus->writer);
  bus->writer->record(test_event(0));  // before the cursor: not delivered
  auto c = cursor(*bus->reader, false);
  EXPECT_EQ(c->position(), 1u);
  for (uint64_t i = 1; i <= 100; ++i) EXPECT_EQ(bus->writer->record(test_event(i)), i);
  EventBatch b = c->next(60);
  ASSERT_EQ(b.events.size(), 60u);
  EXPECT_EQ(b.missed, 0u);
  b = c->next(1000);
  ASSERT_EQ(b.events.size(), 40u);
  EXPECT_EQ(b.events.back().seq, 100u);
  for (const Event& ev : b.events) EXPECT_TRUE(test_event_ok(ev)) << ev.seq;
  EXPECT_TRUE(c->next(10).events.empty());
  EXPECT_EQ(c->position(), 101u);
  EXPECT_EQ(bus->reader->snapshot().node_field(fid::kBusEventsTotal).as_u64(), 101u);
}

TEST(EventRing, FloatPayloadAndStringIdsSurvive) {
  auto bus = ring_bus(64);
  ASSERT_TRUE(bus->writer);
  auto c = cursor(*bus->reader, false);
  Event ev;
  ev.type = EventType::kKernel;
  ev.device = 3;
  ev.ts_ns = 42;
  ev.name_id = *bus->writer->intern("matmul");
  ev.aux_id = *bus->writer->intern("MatMulV2");
  ev.set_f64(2, 1.5e12);
  bus->writer->record(ev);
  EventBatch b = c->next(8);
  ASSERT_EQ(b.events.size(), 1u);
  EXPECT_EQ(b.events[0].type, EventType::kKernel);
  EXPECT_EQ(b.events[0].device, 3);
  EXPECT_DOUBLE_EQ(b.events[0].f64(2), 1.5e12);
  EXPECT_EQ(*c->resolve(b.events[0].name_id), "matmul");
  EXPECT_EQ(*c->resolve(b.events[0].aux_id), "MatMulV2");
}

TEST(EventRing, OverrunIsCountedNeverSilent) {
  auto bus = ring_bus(64);
  ASSERT_TRUE(bus->writer);
  auto c = cursor(*bus->reader, false);
  for (uint64_t i = 0; i < 1000; ++i) bus->writer->record(test_event(i));
  EventBatch b = c->next(10000);
  EXPECT_EQ(b.missed, 1000u - 64u);
  ASSERT_EQ(b.events.size(), 64u);
  EXPECT_EQ(b.events.front().seq, 936u);
  for (const Event& ev : b.events) EXPECT_TRUE(test_event_ok(ev)) << ev.seq;
  EXPECT_EQ(c->total_missed(), 936u);
  for (uint64_t i = 1000; i < 1010; ++i) bus->writer->record(test_event(i));
  b = c->next(100);
  EXPECT_EQ(b.missed, 0u);
  EXPECT_EQ(b.events.size(), 10u);
  EXPECT_EQ(c->total_missed(), 936u);
}

// A lossy reader in another process: every event is either received intact or counted missed.
TEST(EventRing, LossyReaderInAnotherProcessAccountsForEveryEvent) {
  auto bus = ring_bus(256);
  ASSERT_TRUE(bus->writer);
  const uint64_t n = testing::scaled(300000);
  Child reader({"read-events", bus->node, "0", std::to_string(n)});
  ASSERT_EQ(reader.read_line(), "ready");
  for (uint64_t i = 0; i < n; ++i) bus->writer->record(test_event(i));
  std::string result = reader.read_line();
  EXPECT_EQ(reader.wait(), 0) << result;
  EXPECT_NE(result.find(" bad=0"), std::string::npos) << result;
}

TEST(EventRing, LosslessReadersInOtherProcessesReceiveEveryEventInOrder) {
  auto bus = ring_bus(4096, std::chrono::seconds(30));
  ASSERT_TRUE(bus->writer);
  const uint64_t n = testing::scaled(1000000);
  std::vector<std::unique_ptr<Child>> readers;
  for (int i = 0; i < 3; ++i) {
    readers.push_back(std::make_unique<Child>(std::vector<std::string>{"read-events", bus->node, "1", std::to_string(n)}));
    ASSERT_EQ(readers.back()->read_line(), "ready");
  }
  for (uint64_t i = 0; i < n; ++i) bus->writer->record(test_event(i));
  for (auto& r : readers) {
    std::string result = r->read_line();
    EXPECT_EQ(r->wait(), 0) << result;
    EXPECT_EQ(result, "received=" + std::to_string(n) + " missed=0 bad=0");
  }
  Snapshot s = bus->reader->snapshot();
  EXPECT_EQ(s.node_field(fid::kBusLosslessTimeoutsTotal).as_u64(), 0u);
}

// The same protocol in threads, so TSan checks the registration and cursor publication.
TEST(EventRing, LosslessReaderThreadsReceiveEveryEvent) {
  auto bus = ring_bus(256, std::chrono::seconds(30));
  ASSERT_TRUE(bus->writer);
  const uint64_t n = testing::scaled(200000);
  std::vector<std::unique_ptr<EventCursor>> cursors;
  for (int i = 0; i < 2; ++i) cursors.push_back(cursor(*bus->reader, true));
  std::atomic<uint64_t> bad{0};
  std::vector<std::thread> threads;
  for (auto& c : cursors) {
    threads.emplace_back([&bad, n, c = c.get()] {
      uint64_t expect = 0;
      while (expect < n) {
        EventBatch b = c->next(512, std::chrono::milliseconds(50));
        bad += b.missed;
        for (const Event& ev : b.events) bad += (ev.seq == expect++ && test_event_ok(ev)) ? 0 : 1;
      }
    });
  }
  for (uint64_t i = 0; i < n; ++i) bus->writer->record(test_event(i));
  for (auto& t : threads) t.join();
  EXPECT_EQ(bad.load(), 0u);
  EXPECT_TRUE(cursors[0]->lossless());
}

TEST(EventRing, DeadLosslessReaderDoesNotBlockTheWriter) {
  auto bus = ring_bus(64, std::chrono::seconds(20));
  ASSERT_TRUE(bus->writer);
  Child holder({"hold-lossless", bus->node});
  ASSERT_EQ(holder.read_line(), "ready");
  holder.signal(SIGKILL);
  holder.wait();
  auto t0 = std::chrono::steady_clock::now();
  for (uint64_t i = 0; i < 640; ++i) bus->writer->record(test_event(i));
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(5))
      << "the writer waited for a dead reader instead of reclaiming its slot";
  EXPECT_EQ(bus->reader->snapshot().node_field(fid::kBusLosslessDeadReadersTotal).as_u64(), 1u);
}

TEST(EventRing, HeartbeatReclaimsDeadLosslessReaders) {
  auto bus = ring_bus(64);
  ASSERT_TRUE(bus->writer);
  Child holder({"hold-lossless", bus->node});
  ASSERT_EQ(holder.read_line(), "ready");
  holder.signal(SIGKILL);
  holder.wait();
  bus->writer->heartbeat();
  EXPECT_EQ(bus->reader->snapshot().node_field(fid::kBusLosslessDeadReadersTotal).as_u64(), 1u);
}

TEST(EventRing, StalledLosslessReaderIsEvictedAfterTheTimeout) {
  auto bus = ring_bus(64, std::chrono::milliseconds(100));
  ASSERT_TRUE(bus->writer);
  auto stalled = cursor(*bus->reader, true);
  auto t0 = std::chrono::steady_clock::now();
  for (uint64_t i = 0; i < 200; ++i) bus->writer->record(test_event(i));
  auto waited = std::chrono::steady_clock::now() - t0;
  EXPECT_GE(waited, std::chrono::milliseconds(100));
  EXPECT_LT(waited, std::chrono::seconds(5));
  EXPECT_EQ(bus->reader->snapshot().node_field(fid::kBusLosslessTimeoutsTotal).as_u64(), 1u);
  EventBatch b = stalled->next(1000);
  EXPECT_TRUE(b.lossless_lost);
  EXPECT_FALSE(stalled->lossless());
  EXPECT_EQ(b.missed + b.events.size(), 200u);
  EXPECT_GT(b.missed, 0u);
}

TEST(EventRing, LosslessSlotsAreLimitedAndReleased) {
  auto bus = ring_bus(64, std::chrono::seconds(1), 2);
  ASSERT_TRUE(bus->writer);
  auto a = cursor(*bus->reader, true);
  auto b = cursor(*bus->reader, true);
  auto c = bus->reader->open_events(true);
  EXPECT_EQ(c.status().code(), Code::kFailedPrecondition);
  EXPECT_EQ(c.status().message(), "all 2 lossless reader slots of shm segment /npukit-" + bus->node + " are taken");
  a.reset();
  EXPECT_TRUE(bus->reader->open_events(true).ok());
}

TEST(EventRing, NextWaitsForTheFirstEvent) {
  auto bus = ring_bus(64);
  ASSERT_TRUE(bus->writer);
  auto c = cursor(*bus->reader, false);
  auto t0 = std::chrono::steady_clock::now();
  EXPECT_TRUE(c->next(10, std::chrono::milliseconds(30)).events.empty());
  EXPECT_GE(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(30));
  std::thread producer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    bus->writer->record(test_event(0));
  });
  EventBatch b = c->next(10, std::chrono::seconds(10));
  producer.join();
  EXPECT_EQ(b.events.size(), 1u);
}

}  // namespace
}  // namespace npukit::telemetry
