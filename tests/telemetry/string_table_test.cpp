// The append-only string table: interning, resolution from another mapping, capacity limits
// (an error value and a counter, never silent), and concurrent resolution while interning.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "telemetry/reader.hpp"
#include "telemetry/string_table.hpp"
#include "telemetry/writer.hpp"
#include "tests/telemetry/bus_test_util.hpp"

namespace npukit::telemetry {
namespace {

std::unique_ptr<testing::TestBus> table_bus(uint32_t strings, uint32_t bytes) {
  return testing::open_test_bus([&](WriterOptions& o) {
    o.string_capacity = strings;
    o.string_bytes = bytes;
  });
}

TEST(StringTable, InternIsIdempotentAndResolvesInAnotherMapping) {
  auto bus = table_bus(64, 4096);
  ASSERT_TRUE(bus->writer);
  auto a = bus->writer->intern("aten::mm");
  auto b = bus->writer->intern("aten::add");
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(*a, 1u);
  EXPECT_EQ(*b, 2u);
  EXPECT_EQ(*bus->writer->intern("aten::mm"), 1u);
  EXPECT_EQ(*bus->writer->intern(""), 0u);
  EXPECT_EQ(*bus->reader->resolve(1), "aten::mm");
  EXPECT_EQ(*bus->reader->resolve(2), "aten::add");
  EXPECT_EQ(*bus->reader->resolve(0), "");
  EXPECT_EQ(bus->reader->snapshot().node_field(fid::kBusStringsInterned).as_u64(), 2u);
}

TEST(StringTable, UnknownIdIsNotFound) {
  auto bus = table_bus(64, 4096);
  ASSERT_TRUE(bus->writer);
  ASSERT_TRUE(bus->writer->intern("x").ok());
  auto r = bus->reader->resolve(7);
  EXPECT_EQ(r.status().code(), Code::kNotFound);
  EXPECT_EQ(r.status().message(), "string id 7 is not in the string table (1 strings)");
}

TEST(StringTable, FullTableIsAnErrorAndCounted) {
  auto bus = table_bus(3, 4096);
  ASSERT_TRUE(bus->writer);
  for (std::string s : {"a", "b", "c"}) ASSERT_TRUE(bus->writer->intern(s).ok());
  auto full = bus->writer->intern("d");
  EXPECT_EQ(full.status().code(), Code::kOutOfMemory);
  EXPECT_EQ(full.status().message(), "string table of shm segment /npukit-" + bus->node +
                                         " is full (3 strings, 3 of 4096 bytes); 'd' not interned");
  EXPECT_EQ(*bus->writer->intern("b"), 2u) << "existing strings still intern";
  EXPECT_EQ(*bus->reader->resolve(3), "c");
  EXPECT_EQ(bus->reader->snapshot().node_field(fid::kBusStringTableFullTotal).as_u64(), 1u);
}

TEST(StringTable, ByteCapacityIsEnforced) {
  auto bus = table_bus(64, 10);
  ASSERT_TRUE(bus->writer);
  ASSERT_TRUE(bus->writer->intern("123456").ok());
  EXPECT_EQ(bus->writer->intern("12345").status().code(), Code::kOutOfMemory);
  EXPECT_TRUE(bus->writer->intern("1234").ok());
  EXPECT_EQ(bus->reader->snapshot().node_field(fid::kBusStringTableFullTotal).as_u64(), 1u);
}

TEST(StringTable, OverlongStringIsRejected) {
  auto bus = table_bus(64, 1 << 16);
  ASSERT_TRUE(bus->writer);
  auto r = bus->writer->intern(std::string(detail::kMaxStringLength + 1, 'x'));
  EXPECT_EQ(r.status().code(), Code::kInvalidArgument);
  EXPECT_EQ(r.status().message(), "string of 1025 bytes exceeds the string table's limit of 1024 bytes");
  EXPECT_TRUE(bus->writer->intern(std::string(detail::kMaxStringLength, 'x')).ok());
}

TEST(StringTable, ResolvingWhileTheWriterInterns) {
  const uint32_t n = 4000;
  auto bus = table_bus(n, n * 16);
  ASSERT_TRUE(bus->writer);
  std::atomic<bool> started{false}, done{false};
  std::atomic<uint64_t> bad{0}, checked{0};
  std::thread reader([&] {
    for (bool last = false; !last;) {
      last = done.load();
      uint32_t count = static_cast<uint32_t>(bus->reader->snapshot().node_field(fid::kBusStringsInterned).as_u64());
      for (uint32_t id = 1; id <= count; ++id) {
        auto s = bus->reader->resolve(id);
        bad += s.ok() && *s == "s" + std::to_string(id) ? 0 : 1;
      }
      checked += count;
      started = true;
    }
  });
  while (!started.load()) std::this_thread::yield();
  for (uint32_t i = 1; i <= n; ++i) {
    EXPECT_EQ(*bus->writer->intern("s" + std::to_string(i)), i);
    if (i % 500 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  done = true;
  reader.join();
  EXPECT_EQ(bad.load(), 0u);
  EXPECT_GE(checked.load(), n) << "the final pass resolves every string";
}

}  // namespace
}  // namespace npukit::telemetry
