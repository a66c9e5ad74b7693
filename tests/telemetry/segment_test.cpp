// The shared-memory segment: naming, identity, values and statuses, the process table,
// refusal and recovery, foreign/wrong-version segments, staleness, and seqlock consistency
// against readers in other processes.
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <thread>

#include "telemetry/layout.hpp"
#include "telemetry/naming.hpp"
#include "telemetry/reader.hpp"
#include "telemetry/writer.hpp"
#include "tests/telemetry/bus_test_util.hpp"

namespace npukit::telemetry {
namespace {

using testing::Child;
using testing::NodeCleanup;
using testing::eventually;
using testing::publish_generation;
using testing::small_options;
using testing::unique_node;

std::unique_ptr<Writer> make_writer(const std::string& node, int devices = 2) {
  auto w = Writer::create(small_options(node, devices));
  EXPECT_TRUE(w.ok()) << w.status().message();
  return w.ok() ? std::move(*w) : nullptr;
}

std::unique_ptr<Reader> make_reader(const std::string& node,
                                    std::chrono::nanoseconds stale_after = std::chrono::seconds(2)) {
  auto r = Reader::open({node, stale_after, std::chrono::milliseconds(1)});
  EXPECT_TRUE(r.ok()) << r.status().message();
  return r.ok() ? std::move(*r) : nullptr;
}

// Maps an existing segment read-write, as a hostile or buggy process could.
detail::SegmentHeader* map_header(const std::string& node, int* fd_out) {
  int fd = ::shm_open(shm_name(node).c_str(), O_RDWR, 0);
  *fd_out = fd;
  void* p = ::mmap(nullptr, sizeof(detail::SegmentHeader), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  return p == MAP_FAILED ? nullptr : static_cast<detail::SegmentHeader*>(p);
}

TEST(Segment, NodeNamesAreValidated) {
  EXPECT_TRUE(validate_node_name("npukit").ok());
  EXPECT_TRUE(validate_node_name("node-1.a_B").ok());
  EXPECT_TRUE(validate_node_name(std::string(48, 'a')).ok());
  for (std::string bad : {std::string(), std::string(49, 'a'), std::string("a/b"), std::string("a b"),
                          std::string("x\n")}) {
    Status s = validate_node_name(bad);
    EXPECT_EQ(s.code(), Code::kInvalidArgument) << bad;
    EXPECT_EQ(s.message(), "invalid node name '" + bad + "': use 1-48 characters of [A-Za-z0-9_.-]");
  }
  auto w = Writer::create(small_options("../etc"));
  EXPECT_EQ(w.status().code(), Code::kInvalidArgument);
  auto r = Reader::open({"bad name"});
  EXPECT_EQ(r.status().code(), Code::kInvalidArgument);
}

TEST(Segment, NamesDeriveFromTheNode) {
  EXPECT_EQ(shm_name("n1"), "/npukit-n1");
  ::setenv("NPU_NODE", "fromenv", 1);
  EXPECT_EQ(node_name_from_env(), "fromenv");
  ::setenv("NPU_NODE", "", 1);
  EXPECT_EQ(node_name_from_env(), "npukit");
  ::unsetenv("NPU_NODE");
  EXPECT_EQ(node_name_from_env(), "npukit");
  ::setenv("XDG_RUNTIME_DIR", "/nonexistent-dir", 1);
  EXPECT_EQ(control_socket_path("n1"), "/tmp/npukit-n1.sock");
  ::setenv("XDG_RUNTIME_DIR", "/dev", 1);
  EXPECT_EQ(control_socket_path("n1"), "/dev/npukit-n1.sock");
  ::unsetenv("XDG_RUNTIME_DIR");
  EXPECT_EQ(no_daemon_message("n1"),
            "no npukit node 'n1' is running (start one with: npu-emud start --node-name n1)");
}

TEST(Segment, IdentityRoundTrips) {
  auto bus = testing::open_test_bus();
  ASSERT_TRUE(bus->writer);
  Snapshot s = bus->reader->snapshot();
  ASSERT_FALSE(s.stale()) << s.stale_reason();
  EXPECT_EQ(s.node().node_name, bus->node);
  EXPECT_EQ(s.node().node_spec, "2x910B2");
  EXPECT_EQ(s.node().driver_version, "23.0.2.1");
  EXPECT_EQ(s.node().writer_pid, ::getpid());
  EXPECT_GT(s.node().start_realtime_ns, 0u);
  ASSERT_EQ(s.device_count(), 2);
  EXPECT_EQ(s.device_info(1).bus_id, "0000:51:00.0");
  EXPECT_EQ(s.device_info(1).chip_type, "Ascend910B");
  EXPECT_EQ(s.device_info(1).aicore_count, 24);
  ASSERT_EQ(s.link_count(), 1);
  EXPECT_EQ(s.link_info(0).kind, "hccs");
  EXPECT_EQ(s.link_info(0).device_b, 1);
  EXPECT_EQ(s.device(0, fid::kDeviceInfo).as_u64(), 1u);
  EXPECT_TRUE(s.checksum_ok(0));
}

TEST(Segment, TooLongIdentityStringsAreRefused) {
  std::string node = unique_node();
  NodeCleanup cleanup(node);
  auto o = small_options(node);
  o.devices[1].bus_id = "0000:00:00.0-far-too-long";
  auto w = Writer::create(o);
  EXPECT_EQ(w.status().code(), Code::kInvalidArgument);
  EXPECT_EQ(w.status().message(), "writer for node '" + node +
                                      "': device 1 bus_id '0000:00:00.0-far-too-long' is longer than 15 characters");
  o = small_options(node);
  o.links[0].device_b = 7;
  EXPECT_EQ(Writer::create(o).status().message(),
            "writer for node '" + node + "': link 0 joins devices 0 and 7, the node has 2");
}

TEST(Segment, ValuesAndStatusesRoundTrip) {
  auto bus = testing::open_test_bus();
  ASSERT_TRUE(bus->writer);
  bus->writer->update_device(1)
      .set(fid::kPowerWatts, 88.6)
      .set(fid::kHbmUsedBytes, uint64_t{20701} << 20)
      .set(fid::kTemperatureCelsius, 51)
      .set_status(fid::kVoltageVolts, SampleStatus::kNotSupported);
  bus->writer->update_node().set(fid::kNodeLagNs, -1500).set(fid::kNodeVirtualTimeNs, 123456789u);
  bus->writer->update_link(0).set(fid::kLinkUp, 1).set(fid::kLinkTxBytesTotal, 4096);
  Snapshot s = bus->reader->snapshot();
  EXPECT_DOUBLE_EQ(*s.device(1, fid::kPowerWatts).number(), 88.6);
  EXPECT_EQ(s.device(1, fid::kHbmUsedBytes).as_u64(), uint64_t{20701} << 20);
  EXPECT_DOUBLE_EQ(s.device(1, fid::kTemperatureCelsius).as_f64(), 51.0);
  EXPECT_EQ(s.device(1, fid::kVoltageVolts).status, SampleStatus::kNotSupported);
  EXPECT_FALSE(s.device(1, fid::kVoltageVolts).number().has_value()) << "no value is never 0";
  EXPECT_EQ(s.device(0, fid::kPowerWatts).status, SampleStatus::kBlank);
  EXPECT_EQ(s.node_field(fid::kNodeLagNs).as_i64(), -1500);
  EXPECT_EQ(s.node_field(fid::kNodeVirtualTimeNs).as_u64(), 123456789u);
  EXPECT_EQ(s.node_field(fid::kNodeDeviceCount).as_u64(), 2u);
  EXPECT_GT(s.node_field(fid::kNodeHeartbeatNs).as_u64(), 0u);
  EXPECT_EQ(s.link(0, fid::kLinkUp).as_u64(), 1u);
  EXPECT_EQ(s.link(0, fid::kLinkTxBytesTotal).as_u64(), 4096u);
  EXPECT_TRUE(s.checksum_ok(0));
  EXPECT_TRUE(s.checksum_ok(1));
  // Wrong level, unknown entity or field: blank, never 0-as-a-value.
  EXPECT_EQ(s.device(0, fid::kLinkUp).status, SampleStatus::kBlank);
  EXPECT_EQ(s.device(5, fid::kPowerWatts).status, SampleStatus::kBlank);
  EXPECT_EQ(s.node_field(FieldId{9}).status, SampleStatus::kBlank);
  // A later update keeps untouched fields.
  bus->writer->update_device(1).set(fid::kPowerWatts, 99.5);
  s = bus->reader->snapshot();
  EXPECT_DOUBLE_EQ(s.device(1, fid::kPowerWatts).as_f64(), 99.5);
  EXPECT_EQ(s.device(1, fid::kHbmUsedBytes).as_u64(), uint64_t{20701} << 20);
  // And a status can go back to blank.
  bus->writer->update_device(1).set_status(fid::kPowerWatts, SampleStatus::kBlank);
  EXPECT_EQ(bus->reader->snapshot().device(1, fid::kPowerWatts).status, SampleStatus::kBlank);
}

TEST(Segment, RejectedPublishesAreCounted) {
  auto bus = testing::open_test_bus();
  ASSERT_TRUE(bus->writer);
  bus->writer->update_device(0).set(fid::kLinkUp, 1);            // link field on a device
  bus->writer->update_device(0).set(FieldId{9}, 1);              // unknown id
  bus->writer->update_node().set(fid::kNodeHeartbeatNs, 5);      // filled by the reader
  bus->writer->update_device(0).set(fid::kChecksum, 5);          // computed by the writer
  bus->writer->update_device(7).set(fid::kPowerWatts, 1.0);      // no such device
  Snapshot s = bus->reader->snapshot();
  EXPECT_EQ(s.node_field(fid::kBusPublishErrorsTotal).as_u64(), 5u);
  EXPECT_TRUE(s.checksum_ok(0));
}

TEST(Segment, ProcessTableRoundTripsAndOverflowIsReported) {
  auto bus = testing::open_test_bus([](WriterOptions& o) { o.max_processes = 2; });
  ASSERT_TRUE(bus->writer);
  std::vector<ProcessInfo> procs = {{124528, 0, 17400ull << 20, "python3.8"},
                                    {990711, 1, 7746ull << 20, std::string(40, 'x')}};
  EXPECT_TRUE(bus->writer->set_processes(procs).ok());
  Snapshot s = bus->reader->snapshot();
  ASSERT_EQ(s.processes().size(), 2u);
  EXPECT_EQ(s.processes()[0].pid, 124528);
  EXPECT_EQ(s.processes()[0].name, "python3.8");
  EXPECT_EQ(s.processes()[0].hbm_bytes, 17400ull << 20);
  EXPECT_EQ(s.processes()[1].device, 1);
  EXPECT_EQ(s.processes()[1].name, std::string(32, 'x')) << "names are cut to 32 bytes, like npu-smi";
  procs.push_back({3, 0, 1, "third"});
  Status over = bus->writer->set_processes(procs);
  EXPECT_EQ(over.code(), Code::kOutOfMemory);
  EXPECT_EQ(over.message(), "process table of /npukit-" + bus->node + " holds 2 processes; 1 not published");
  s = bus->reader->snapshot();
  EXPECT_EQ(s.processes().size(), 2u);
  EXPECT_EQ(s.node_field(fid::kBusPublishErrorsTotal).as_u64(), 1u);
  EXPECT_TRUE(bus->writer->set_processes({}).ok());
  EXPECT_TRUE(bus->reader->snapshot().processes().empty());
}

TEST(Segment, SecondWriterIsRefusedWhileTheFirstLives) {
  std::string node = unique_node();
  NodeCleanup cleanup(node);
  auto w = make_writer(node);
  ASSERT_TRUE(w);
  auto second = Writer::create(small_options(node));
  EXPECT_EQ(second.status().code(), Code::kFailedPrecondition);
  EXPECT_EQ(second.status().message(),
            "node '" + node + "' is already running (pid " + std::to_string(::getpid()) + ")");
}

TEST(Segment, ClosedWriterReadsStaleAndIsUnlinked) {
  auto bus = testing::open_test_bus();
  ASSERT_TRUE(bus->writer);
  bus->writer->update_device(0).set(fid::kPowerWatts, 50.0);
  bus->writer->set_processes(std::vector<ProcessInfo>{{1, 0, 1, "p"}});
  bus->writer.reset();
  Snapshot s = bus->reader->snapshot();
  EXPECT_TRUE(s.stale());
  EXPECT_EQ(s.stale_reason(), "writer pid " + std::to_string(::getpid()) + " closed the segment");
  EXPECT_EQ(s.device(0, fid::kPowerWatts).status, SampleStatus::kStale);
  EXPECT_EQ(s.health(0), Health::kUnknown);
  EXPECT_TRUE(s.processes().empty());
  auto again = Reader::open({bus->node});
  EXPECT_EQ(again.status().code(), Code::kUnavailable);
  EXPECT_EQ(again.status().message(), no_daemon_message(bus->node));
}

TEST(Segment, SilentWriterReadsStaleAfterTheHeartbeatThreshold) {
  std::string node = unique_node();
  NodeCleanup cleanup(node);
  auto w = make_writer(node);
  auto r = make_reader(node, std::chrono::milliseconds(100));
  ASSERT_TRUE(w && r);
  w->update_device(0).set(fid::kHealth, 0).set(fid::kPowerWatts, 70.0);
  EXPECT_FALSE(r->snapshot().stale());
  EXPECT_EQ(r->snapshot().health(0), Health::kOk);
  ASSERT_TRUE(eventually([&] { return r->snapshot().stale(); }, std::chrono::seconds(2)));
  Snapshot s = r->snapshot();
  EXPECT_NE(s.stale_reason().find("heartbeat is "), std::string::npos) << s.stale_reason();
  EXPECT_NE(s.stale_reason().find("(threshold 0.1 s)"), std::string::npos) << s.stale_reason();
  for (const FieldDef* f : fields_of(EntityLevel::kDevice)) {
    EXPECT_EQ(s.device(0, f->id).status, SampleStatus::kStale) << f->name;
  }
  EXPECT_EQ(s.device(0, fid::kHealth).as_u64(), static_cast<uint64_t>(Health::kUnknown));
  EXPECT_EQ(s.health(0), Health::kUnknown);
  w->heartbeat();
  EXPECT_FALSE(r->snapshot().stale());
  EXPECT_DOUBLE_EQ(r->snapshot().device(0, fid::kPowerWatts).as_f64(), 70.0);
}

TEST(Segment, KilledWriterReadsStaleAndANewWriterRecovers) {
  std::string node = unique_node();
  NodeCleanup cleanup(node);
  Child writer({"writer", node});
  ASSERT_EQ(writer.read_line(), "ready");
  auto r = make_reader(node, std::chrono::milliseconds(500));
  ASSERT_TRUE(r);
  EXPECT_FALSE(r->snapshot().stale());
  EXPECT_EQ(r->writer_pid(), writer.pid());
  const int dead_pid = writer.pid();
  writer.signal(SIGKILL);
  EXPECT_EQ(writer.wait(), 128 + SIGKILL);
  auto t0 = std::chrono::steady_clock::now();
  ASSERT_TRUE(eventually([&] { return r->snapshot().stale(); }, std::chrono::seconds(2)));
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(2));
  EXPECT_EQ(r->snapshot().stale_reason(), "writer pid " + std::to_string(dead_pid) + " is gone");
  EXPECT_EQ(r->snapshot().health(0), Health::kUnknown);
  // The killed writer left its segment behind; a new writer takes the name over.
  auto reopened = Reader::open({node});
  ASSERT_TRUE(reopened.ok()) << reopened.status().message();
  EXPECT_TRUE((*reopened)->snapshot().stale());
  auto w = make_writer(node);
  ASSERT_TRUE(w);
  EXPECT_TRUE(r->replaced());
  auto fresh = make_reader(node);
  ASSERT_TRUE(fresh);
  EXPECT_FALSE(fresh->snapshot().stale());
  EXPECT_EQ(fresh->writer_pid(), ::getpid());
}

// A killed writer its parent has not reaped yet is a zombie: kill(pid, 0) still succeeds. In a
// container whose init reaps late, the daemon read live for seconds after SIGKILL.
TEST(Segment, AKilledWriterNotYetReapedReadsStale) {
  std::string node = unique_node();
  NodeCleanup cleanup(node);
  Child writer({"writer", node});
  ASSERT_EQ(writer.read_line(), "ready");
  auto r = make_reader(node, std::chrono::seconds(30));  // the heartbeat cannot tell in time
  ASSERT_TRUE(r);
  EXPECT_FALSE(r->snapshot().stale());
  writer.signal(SIGKILL);
  EXPECT_TRUE(eventually([&] { return r->snapshot().stale(); }, std::chrono::seconds(2)));
  EXPECT_EQ(r->snapshot().stale_reason(), "writer pid " + std::to_string(writer.pid()) + " is gone");
  EXPECT_EQ(writer.wait(), 128 + SIGKILL);
}

TEST(Segment, ForeignSegmentIsRefused) {
  std::string node = unique_node();
  NodeCleanup cleanup(node);
  int fd = ::shm_open(shm_name(node).c_str(), O_CREAT | O_EXCL | O_RDWR, 0600);
  ASSERT_GE(fd, 0);
  std::string garbage(8192, '\x5a');
  ASSERT_EQ(::write(fd, garbage.data(), garbage.size()), static_cast<ssize_t>(garbage.size()));
  ::close(fd);
  auto r = Reader::open({node});
  EXPECT_EQ(r.status().code(), Code::kFailedPrecondition);
  EXPECT_EQ(r.status().message(), "shm segment /npukit-" + node + " is not an npukit segment (bad magic)");
  auto w = Writer::create(small_options(node));
  EXPECT_EQ(w.status().code(), Code::kFailedPrecondition);
  EXPECT_EQ(w.status().message(), "shm segment /npukit-" + node +
                                      " exists and is not an npukit segment (bad magic); remove "
                                      "/dev/shm/npukit-" + node + " if nothing else uses it");
}

// A live writer whose slots hold garbage (here 4 KiB of 0x01 over the slots: every sequence word
// odd, as a write never finished) made npu-smi info wait a second per slot, and for ever before:
// the whole snapshot now gives up after 1 s and reads stale, naming why.
TEST(Segment, GarbageSequenceWordsReadStaleWithinASecond) {
  std::string node = unique_node();
  NodeCleanup cleanup(node);
  auto w = make_writer(node, 8);
  ASSERT_TRUE(w);
  publish_generation(*w, 0, 1);
  int fd = ::shm_open(shm_name(node).c_str(), O_RDWR, 0);
  ASSERT_GE(fd, 0);
  std::string ones(4096, '\x01');
  ASSERT_EQ(::pwrite(fd, ones.data(), ones.size(), 4096), 4096);
  ::close(fd);
  auto r = make_reader(node);
  ASSERT_TRUE(r);
  auto t0 = std::chrono::steady_clock::now();
  Snapshot s = r->snapshot();
  double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_LT(took, 3.0) << "one 1 s deadline for the whole snapshot (was 1 s per slot, or for ever); slack for a loaded machine";
  EXPECT_TRUE(s.stale());
  EXPECT_NE(s.stale_reason().find("never read as a finished write within 1 s (writer hung mid-commit, or a corrupt segment)"),
            std::string::npos) << s.stale_reason();
}

TEST(Segment, WrongAbiVersionAndFieldTableAreRefused) {
  std::string node = unique_node();
  NodeCleanup cleanup(node);
  auto w = make_writer(node);
  ASSERT_TRUE(w);
  int fd = -1;
  detail::SegmentHeader* h = map_header(node, &fd);
  ASSERT_NE(h, nullptr);
  h->prefix.abi_version = detail::kAbiVersion + 6;
  auto r = Reader::open({node});
  EXPECT_EQ(r.status().code(), Code::kFailedPrecondition);
  EXPECT_EQ(r.status().message(), "shm segment /npukit-" + node + " has ABI version " +
                                      std::to_string(detail::kAbiVersion + 6) + ", this tool speaks " +
                                      std::to_string(detail::kAbiVersion));
  h->prefix.abi_version = detail::kAbiVersion;
  h->prefix.field_table_hash ^= 1;
  r = Reader::open({node});
  EXPECT_EQ(r.status().code(), Code::kFailedPrecondition);
  EXPECT_NE(r.status().message().find("was written with a different field table"), std::string::npos)
      << r.status().message();
  h->prefix.field_table_hash ^= 1;
  h->prefix.total_bytes += 4096;
  r = Reader::open({node});
  EXPECT_NE(r.status().message().find(" has a corrupt header: its capacities need "), std::string::npos)
      << r.status().message();
  h->prefix.total_bytes -= 4096;
  EXPECT_TRUE(Reader::open({node}).ok());
  // A zeroed lossless_readers capacity on a file large enough: the header disagrees with itself,
  // which is corrupt, not truncated (it used to say "truncated" of a file larger than needed).
  uint32_t readers = h->caps.lossless_readers;
  h->caps.lossless_readers = 0;
  r = Reader::open({node});
  EXPECT_EQ(r.status().code(), Code::kFailedPrecondition);
  EXPECT_EQ(r.status().message().find(" is truncated"), std::string::npos) << r.status().message();
  EXPECT_NE(r.status().message().find(" has a corrupt header: its capacities need "), std::string::npos)
      << r.status().message();
  h->caps.lossless_readers = readers;
  EXPECT_TRUE(Reader::open({node}).ok());
  ::munmap(h, sizeof *h);
  ::close(fd);
}

TEST(Segment, UninitialisedSegmentIsStartingUpAndRecoverable) {
  std::string node = unique_node();
  NodeCleanup cleanup(node);
  int fd = ::shm_open(shm_name(node).c_str(), O_CREAT | O_EXCL | O_RDWR, 0600);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::ftruncate(fd, 65536), 0);  // a writer killed before it initialised anything
  ::close(fd);
  auto r = Reader::open({node});
  EXPECT_EQ(r.status().code(), Code::kUnavailable);
  EXPECT_EQ(r.status().message(), "node '" + node + "' is starting up (shm segment /npukit-" + node +
                                      " is not initialised yet)");
  auto w = make_writer(node);
  EXPECT_TRUE(w);
}

// Seqlock consistency across processes: two helper readers check every snapshot while the
// writer publishes at full speed.
TEST(Segment, ReadersInOtherProcessesNeverSeeTornSnapshots) {
  std::string node = unique_node();
  NodeCleanup cleanup(node);
  auto w = make_writer(node, 4);
  ASSERT_TRUE(w);
  Child a({"check-snapshots", node});
  Child b({"check-snapshots", node});
  ASSERT_EQ(a.read_line(), "ready");
  ASSERT_EQ(b.read_line(), "ready");
  const uint64_t updates = testing::scaled(200000);
  for (uint64_t k = 1; k <= updates; ++k) publish_generation(*w, static_cast<int>(k % 4), k);
  w.reset();  // readers stop at the closed segment
  for (Child* c : {&a, &b}) {
    std::string result = c->read_line();
    EXPECT_EQ(c->wait(), 0) << result;
    EXPECT_NE(result.find(" torn=0 unsettled=0 "), std::string::npos) << result;
  }
}

// The same in threads, so TSan sees every access of the seqlock protocol.
TEST(Segment, ReaderThreadsNeverSeeTornSnapshots) {
  auto bus = testing::open_test_bus();
  ASSERT_TRUE(bus->writer);
  std::atomic<bool> done{false};
  std::atomic<uint64_t> torn{0}, reads{0};
  std::vector<std::thread> readers;
  for (int t = 0; t < 2; ++t) {
    readers.emplace_back([&] {
      Snapshot s;
      while (!done.load()) {
        bus->reader->read(&s);
        for (int d = 0; d < s.device_count(); ++d) torn += testing::generation_consistent(s, d) ? 0 : 1;
        ++reads;
      }
    });
  }
  // Publish at least 50k generations and until the readers have read a while alongside (on a
  // loaded machine they may not be scheduled before 50k publishes are done).
  auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  for (uint64_t k = 1; k <= testing::scaled(50000) || (reads.load() < 1000 && std::chrono::steady_clock::now() < give_up); ++k) {
    publish_generation(*bus->writer, static_cast<int>(k % 2), k);
  }
  done = true;
  for (auto& t : readers) t.join();
  EXPECT_EQ(torn.load(), 0u);
  EXPECT_GE(reads.load(), 1000u);
}

// A reader frozen at any point (SIGSTOP, possibly mid-read) cannot delay the writer: the writer
// has no code path that waits on a non-lossless reader.
TEST(Segment, StoppedReaderNeverDelaysTheWriter) {
  auto bus = testing::open_test_bus([](WriterOptions& o) { o.event_capacity = 1024; });
  ASSERT_TRUE(bus->writer);
  Child reader({"spin-reader", bus->node});
  ASSERT_EQ(reader.read_line(), "ready");
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  reader.signal(SIGSTOP);
  auto t0 = std::chrono::steady_clock::now();
  for (uint64_t k = 1; k <= 100000; ++k) publish_generation(*bus->writer, static_cast<int>(k % 2), k);
  for (uint64_t i = 0; i < 10 * 1024; ++i) bus->writer->record(testing::test_event(i));
  auto elapsed = std::chrono::steady_clock::now() - t0;
  reader.signal(SIGCONT);
  EXPECT_LT(elapsed, std::chrono::seconds(10));
}

}  // namespace
}  // namespace npukit::telemetry
