// What the Publisher puts on the bus besides task events: HBM alloc/free events, link state
// changes, ECC errors (node_events.hpp), and link / HCCS bandwidth utilization.
#include "emulator/daemon/publisher.hpp"

#include <gtest/gtest.h>

#include <set>
#include <tuple>

#include "emulator/runtime/program_runner.hpp"
#include "telemetry/comm_group.hpp"
#include "tests/emulator/daemon/publisher_util.hpp"

namespace npukit::emu {
namespace {

namespace tf = telemetry;
using nlohmann::json;
using testing::make_context;
using testing::publish_node;
using testing::PublishedNode;

constexpr uint64_t kGiB = 1ull << 30;

// `n` ranks on devices 0..n-1 (pids pid_base + d), a stream each, and a ring communicator over them.
struct Ring {
  std::vector<Context*> ranks;
  std::vector<StreamId> streams;
  CommId comm{};
};
Ring ring_of(Node& node, int n, uint32_t pid_base, const std::string& name) {
  Ring ring;
  for (int d = 0; d < n; ++d) {
    ring.ranks.push_back(&make_context(node, d, pid_base + static_cast<uint32_t>(d)));
    ring.streams.push_back(ring.ranks.back()->create_stream());
  }
  auto comm = node.create_communicator(name, ring.ranks, CollectiveAlgo::kRing);
  EXPECT_TRUE(comm.ok()) << comm.status().message();
  if (comm.ok()) ring.comm = *comm;
  return ring;
}

TEST(PublisherEvents, AnAllocThenAFreeOfNBytesAreTwoEventsAtTheirVirtualTimes) {
  PublishedNode p = publish_node("alloc");
  Context& ctx = make_context(*p.node, 2, 4242, AllocatorPolicy::kDirect);
  p.node->host_wait(5'000'000);
  constexpr uint64_t kBytes = 3ull << 20;
  Nanos alloc_at = p.node->now();
  auto ptr = ctx.malloc(kBytes);
  ASSERT_TRUE(ptr.ok()) << ptr.status().message();
  Nanos free_at = p.node->now();
  EXPECT_GT(free_at, alloc_at) << "a direct malloc blocks the host for its modelled cost";
  ASSERT_TRUE(ctx.free(*ptr).ok());

  std::vector<tf::Event> all = p.drain_all();
  // A non-caching allocator holds what is allocated: each call changes it, and says so first.
  ASSERT_EQ(all.size(), 4u);
  EXPECT_EQ(all[0].type, tf::EventType::kReserved);
  EXPECT_EQ(all[0].words[0], kBytes);
  EXPECT_EQ(all[0].words[1], 4242u);
  EXPECT_EQ(all[2].type, tf::EventType::kReserved);
  EXPECT_EQ(all[2].words[0], 0u);
  std::vector<tf::Event> events{all[1], all[3]};
  const tf::Event& a = events[0];
  EXPECT_EQ(a.type, tf::EventType::kAlloc);
  EXPECT_EQ(a.device, 2);
  EXPECT_EQ(a.ts_ns, static_cast<uint64_t>(alloc_at));
  // c: the pid, and the call's host cost (what the malloc blocked the host for) above it.
  EXPECT_EQ(a.words, (std::array<uint64_t, 4>{kBytes, *ptr, 4242 | static_cast<uint64_t>(free_at - alloc_at) << 32, kBytes}));
  const tf::Event& f = events[1];
  EXPECT_EQ(f.type, tf::EventType::kFree);
  EXPECT_EQ(f.device, 2);
  EXPECT_EQ(f.ts_ns, static_cast<uint64_t>(free_at));
  EXPECT_EQ(f.words[0], kBytes);
  EXPECT_EQ(f.words[1], *ptr);
  EXPECT_EQ(f.words[2] & 0xffffffff, 4242u);
  EXPECT_GT(f.words[2] >> 32, 0u) << "a direct free costs host time too";
  EXPECT_EQ(f.words[3], 0u);
}

// What a caching allocator holds from the device (msprof's totalReserve) changes when it grows a
// segment, not on every call: a second small block from the same 2 MiB segment says nothing.
TEST(PublisherEvents, AReservedEventComesWhenTheAllocatorsHoldingChangesNotOnEveryCall) {
  PublishedNode p = publish_node("reserved");
  Context& ctx = make_context(*p.node, 1, 4343, AllocatorPolicy::kCaching);
  auto a = ctx.malloc(1024);
  auto b = ctx.malloc(1024);
  ASSERT_TRUE(a.ok() && b.ok());
  ASSERT_TRUE(ctx.free(*a).ok());
  std::vector<tf::Event> events = p.drain_all();
  std::vector<tf::EventType> types;
  for (const tf::Event& e : events) types.push_back(e.type);
  EXPECT_EQ(types, (std::vector<tf::EventType>{tf::EventType::kReserved, tf::EventType::kAlloc, tf::EventType::kAlloc,
                                                tf::EventType::kFree}));
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events[0].device, 1);
  EXPECT_EQ(events[0].ts_ns, events[1].ts_ns);
  EXPECT_EQ(events[0].words[0], ctx.allocator_stats().reserved_bytes);
  EXPECT_GE(events[0].words[0], 2048u);
  EXPECT_EQ(events[0].words[1], 4343u);
}

json buffer_op(const char* op, const char* buf, uint64_t bytes = 0) {
  json j = {{"op", op}, {"buf", buf}};
  if (bytes > 0) j["bytes"] = bytes;
  return j;
}

TEST(PublisherEvents, AProgramsAllocsAndFreesPairUpIncludingWhatTheJobStillHeldAtItsEnd) {
  PublishedNode p = publish_node("runner");
  json program = {{"name", "mem"}, {"repeat", 3}, {"process", {{"pid", 777}, {"name", "python3"}}},
                  {"ranks", {{{"device", 1}, {"streams", 1},
                              {"setup", {buffer_op("alloc", "w", kGiB)}},
                              {"step", {buffer_op("alloc", "t", 4096), {{"op", "host_delay"}, {"ns", 1'000'000}},
                                        buffer_op("free", "t")}}}}}};
  auto parsed = tf::parse_program(program);
  ASSERT_TRUE(parsed.ok()) << parsed.status().message();
  auto runner = ProgramRunner::create(*p.node, *parsed);
  ASSERT_TRUE(runner.ok()) << runner.status().message();
  Nanos start = p.node->now(), end = -1;
  (*runner)->start(nullptr, [&](const Status& s) {
    EXPECT_TRUE(s.ok()) << s.message();
    end = p.node->now();
  });
  p.node->run_until_idle();
  ASSERT_GE(end, 0);

  std::vector<tf::Event> events;
  for (const tf::Event& e : p.drain_all()) {
    if (e.type == tf::EventType::kAlloc || e.type == tf::EventType::kFree) events.push_back(e);
  }
  ASSERT_EQ(events.size(), 8u) << "the setup's alloc, an alloc and a free per step, the end's free";
  for (const tf::Event& e : events) {
    EXPECT_EQ(e.device, 1);
    EXPECT_EQ(e.words[2] & 0xffffffff, 777u);
  }
  EXPECT_EQ(events[0].type, tf::EventType::kAlloc);
  EXPECT_EQ(events[0].ts_ns, static_cast<uint64_t>(start));
  EXPECT_EQ(events[0].words[0], kGiB);
  EXPECT_EQ(events[0].words[3], kGiB);
  for (int step = 0; step < 3; ++step) {
    const tf::Event& a = events[1 + 2 * step];
    const tf::Event& f = events[2 + 2 * step];
    EXPECT_EQ(a.type, tf::EventType::kAlloc);
    EXPECT_EQ(f.type, tf::EventType::kFree);
    EXPECT_EQ(a.words[0], 4096u);
    EXPECT_EQ(f.words[0], 4096u);
    EXPECT_EQ(f.words[1], a.words[1]) << "the free names the address the alloc returned";
    EXPECT_EQ(a.words[3], kGiB + 4096);
    EXPECT_EQ(f.words[3], kGiB);
    EXPECT_GE(f.ts_ns, a.ts_ns + 1'000'000) << "the host delay sits between them";
    EXPECT_GE(a.ts_ns, events[2 * step].ts_ns);
  }
  const tf::Event& last = events[7];
  EXPECT_EQ(last.type, tf::EventType::kFree);
  EXPECT_EQ(last.words[0], kGiB);
  EXPECT_EQ(last.words[1], events[0].words[1]);
  EXPECT_EQ(last.words[3], 0u);
  EXPECT_EQ(last.ts_ns, static_cast<uint64_t>(end));
}

// The bus indices of the HCCS links between `device` and its peers, both directions.
std::set<uint64_t> hccs_links_of(const PublishedNode& p, int device, std::set<int> except = {}) {
  std::set<uint64_t> out;
  for (int peer = 0; peer < p.node->device_count(); ++peer) {
    if (peer == device || except.count(peer)) continue;
    out.insert(static_cast<uint64_t>(p.bus_link(device, peer)));
    out.insert(static_cast<uint64_t>(p.bus_link(peer, device)));
  }
  return out;
}

// Checks the link events: every one from `device`, in state `up`, at `at`; returns their links.
std::set<uint64_t> links_of(const std::vector<tf::Event>& events, int device, bool up, Nanos at) {
  std::set<uint64_t> out;
  for (const tf::Event& e : events) {
    EXPECT_EQ(e.device, device);
    EXPECT_EQ(e.words[1], up ? 1u : 0u);
    EXPECT_EQ(e.ts_ns, static_cast<uint64_t>(at));
    out.insert(e.words[0]);
  }
  EXPECT_EQ(out.size(), events.size()) << "one event per link";
  return out;
}

TEST(PublisherEvents, LinkStateEventsNameEveryLinkThatChangedAndNoOther) {
  PublishedNode p = publish_node("links");
  constexpr auto kLink = tf::EventType::kLinkStateChanged;
  Node& node = *p.node;
  node.host_wait(1'000'000);
  ASSERT_TRUE(node.inject_fault(3, FaultKind::kLinkDown).ok());
  auto down3 = p.drain(kLink);
  EXPECT_EQ(down3.size(), 14u) << "3 -> peer and peer -> 3 for the 7 peers of the full mesh";
  EXPECT_EQ(links_of(down3, 3, false, node.now()), hccs_links_of(p, 3));
  tf::Snapshot snap = p.publish();
  for (int l = 0; l < snap.link_count(); ++l) {
    bool down = hccs_links_of(p, 3).count(static_cast<uint64_t>(l)) > 0;
    EXPECT_EQ(snap.link(l, tf::fid::kLinkUp).as_u64(), down ? 0u : 1u) << "link " << l;
  }
  ASSERT_TRUE(node.inject_fault(3, FaultKind::kLinkDown).ok());
  EXPECT_TRUE(p.drain(kLink).empty()) << "nothing changed";

  // Device 5 goes down too: its links to 3 already are.
  node.host_wait(1'000'000);
  ASSERT_TRUE(node.inject_fault(5, FaultKind::kLinkDown).ok());
  EXPECT_EQ(links_of(p.drain(kLink), 5, false, node.now()), hccs_links_of(p, 5, {3}));
  // Clearing 3 brings back its links except those to 5, whose fault holds them down.
  node.host_wait(1'000'000);
  ASSERT_TRUE(node.clear_faults(3).ok());
  EXPECT_EQ(links_of(p.drain(kLink), 3, true, node.now()), hccs_links_of(p, 3, {5}));
  EXPECT_FALSE(node.fabric().links()[node.fabric().path(3, 5)[0]].up);
  node.host_wait(1'000'000);
  ASSERT_TRUE(node.reset_device(5).ok());
  EXPECT_EQ(links_of(p.drain(kLink), 5, true, node.now()), hccs_links_of(p, 5));
  snap = p.publish();
  for (int l = 0; l < snap.link_count(); ++l) EXPECT_EQ(snap.link(l, tf::fid::kLinkUp).as_u64(), 1u) << "link " << l;
}

// A degraded link stays up but retrains at a quarter of its rate: one event per direction saying
// the rate (the profiler names the link from them when no counter sample fell in the fault), and
// another when it is restored.
TEST(PublisherEvents, ALinkThatRetrainsSlowSaysItsNewRate) {
  PublishedNode p = publish_node("retrain");
  constexpr auto kLink = tf::EventType::kLinkStateChanged;
  Node& node = *p.node;
  node.host_wait(1'000'000);
  ASSERT_TRUE(node.inject_link_fault(2, 5, FaultKind::kLinkDegraded, "control").ok());
  auto slow = p.drain(kLink);
  std::set<uint64_t> links;
  for (const tf::Event& e : slow) {
    links.insert(e.words[0]);
    EXPECT_EQ(e.words[1], 1u) << "it stays up";
    EXPECT_EQ(e.words[2], 25u) << "% of its line rate";
  }
  EXPECT_EQ(slow.size(), 2u);
  EXPECT_EQ(links, (std::set<uint64_t>{static_cast<uint64_t>(p.bus_link(2, 5)), static_cast<uint64_t>(p.bus_link(5, 2))}));
  node.refresh_links();  // as every publish does: a rate that did not change is no event
  EXPECT_TRUE(p.drain(kLink).empty()) << "nothing changed";
  node.host_wait(1'000'000);
  ASSERT_TRUE(node.clear_link_faults(5, 2).ok());
  auto restored = p.drain(kLink);
  ASSERT_EQ(restored.size(), 2u);
  for (const tf::Event& e : restored) EXPECT_EQ(e.words[2], 100u);
  // A link that is down says its new rate when it comes up, not as another "down" (npu-top
  // counted a second outage).
  node.host_wait(1'000'000);
  ASSERT_TRUE(node.inject_link_fault(2, 5, FaultKind::kLinkDown, "control").ok());
  EXPECT_EQ(p.drain(kLink).size(), 2u);
  ASSERT_TRUE(node.inject_link_fault(2, 5, FaultKind::kLinkDegraded, "control").ok());
  EXPECT_TRUE(p.drain(kLink).empty()) << "still down";
}

TEST(PublisherEvents, EccErrorsAreEventsAndAStormIsOneEventPerTickWithItsCount) {
  PublishedNode p = publish_node("ecc");
  constexpr auto kEcc = tf::EventType::kEccError;
  Node& node = *p.node;
  ASSERT_TRUE(node.inject_fault(1, FaultKind::kHbmDoubleBit).ok());
  auto ecc = p.drain(kEcc);
  ASSERT_EQ(ecc.size(), 1u);
  EXPECT_EQ(ecc[0].device, 1);
  EXPECT_EQ(ecc[0].ts_ns, 0u);
  EXPECT_EQ(ecc[0].words, (std::array<uint64_t, 4>{2, 1, 1, 1}));

  // 2000 single-bit errors per second, added every 10 ms tick: 100 events of 20, not 2000 events.
  ASSERT_TRUE(node.inject_fault(4, FaultKind::kEccStorm).ok());
  node.host_wait(1'000'000'000);
  ecc = p.drain(kEcc);
  ASSERT_EQ(ecc.size(), 100u);
  uint64_t sum = 0;
  for (std::size_t i = 0; i < ecc.size(); ++i) {
    const tf::Event& e = ecc[i];
    EXPECT_EQ(e.device, 4);
    EXPECT_EQ(e.ts_ns, 10'000'000u * (i + 1)) << "at its tick";
    EXPECT_EQ(e.words[0], 1u);
    EXPECT_EQ(e.words[1], 20u);
    EXPECT_EQ(e.words[2], 0u);
    sum += e.words[1];
    EXPECT_EQ(e.words[3], sum) << "the device's aggregate after";
  }
  EXPECT_EQ(p.publish().device(4, tf::fid::kEccSingleBitTotal).as_u64(), sum);

  // With ECC disabled a storm counts nothing and says nothing.
  node.device(4).health().ecc().enabled = false;
  node.host_wait(100'000'000);
  EXPECT_TRUE(p.drain(kEcc).empty());
}

TEST(FabricFlow, SpreadsATransfersBytesEvenlyOverItsTimeOnTheLink) {
  auto spec = load_node_spec("8x910B2");
  ASSERT_TRUE(spec.ok()) << spec.status().message();
  Fabric fabric(*spec);
  const int link = fabric.path(0, 1)[0];
  Nanos end = fabric.reserve(0, 1, kGiB, 1'000'000);
  EXPECT_EQ(fabric.links()[link].bytes_total, kGiB) << "the counter counts at scheduling";
  fabric.account(1'000'000);
  EXPECT_EQ(fabric.links()[link].bytes_flow, 0.0);
  Nanos mid = 1'000'000 + (end - 1'000'000) / 2;
  fabric.account(mid);
  EXPECT_NEAR(fabric.links()[link].bytes_flow, kGiB * static_cast<double>(mid - 1'000'000) / static_cast<double>(end - 1'000'000), 1e-3);
  fabric.account(end);
  EXPECT_EQ(fabric.links()[link].bytes_flow, static_cast<double>(kGiB));
  EXPECT_EQ(fabric.links()[fabric.path(1, 0)[0]].bytes_flow, 0.0);
}

TEST(PublisherLinks, A1GiBAllreduceShowsOnTheLinksItUsesAndIdleLinksReadZero) {
  PublishedNode p = publish_node("allreduce", {.jitter = 0});
  Node& node = *p.node;
  auto [ranks, streams, comm] = ring_of(node, 8, 600, "world");
  for (int r = 0; r < 8; ++r) {
    ASSERT_TRUE(ranks[r]->all_reduce(streams[r], comm, 0, 0, kGiB / 2, DType::kFloat16).ok());
  }
  node.host_wait(30'000'000);  // inside the 44 ms ring allreduce

  tf::Snapshot snap = p.publish();
  std::vector<int> fabric_ids = published_links(node);
  ASSERT_EQ(snap.link_count(), static_cast<int>(fabric_ids.size()));
  int busy = 0;
  std::vector<double> out_util(8, 0.0);  // per device: its busy outgoing link's utilization
  for (int l = 0; l < snap.link_count(); ++l) {
    const Link& link = node.fabric().links()[fabric_ids[l]];
    std::optional<double> util = snap.link(l, tf::fid::kLinkBandwidthUtil).number();
    ASSERT_TRUE(util.has_value()) << "link " << l;
    if (link.bytes_total == 0) {
      EXPECT_EQ(*util, 0.0) << node.fabric().describe(link.id) << " carried nothing";
      continue;
    }
    ++busy;
    EXPECT_EQ(link.kind, LinkKind::kHccs);
    EXPECT_GT(*util, 50.0) << node.fabric().describe(link.id);
    EXPECT_LE(*util, 80.0) << "a saturated link moves 80% of its line rate";
    out_util[link.src] = *util;
  }
  EXPECT_EQ(busy, 8) << "a ring uses one outgoing link per device";
  for (int d = 0; d < 8; ++d) {
    std::optional<double> hccs = snap.device(d, tf::fid::kHccsBandwidthUtil).number();
    ASSERT_TRUE(hccs.has_value());
    EXPECT_NEAR(*hccs, out_util[d] / 7, 1e-9) << "one busy link of seven, device " << d;
  }

  // Long after it finished, a full window later, everything reads 0 again.
  node.run_until_idle();
  node.host_wait(200'000'000);
  snap = p.publish();
  for (int l = 0; l < snap.link_count(); ++l) EXPECT_EQ(*snap.link(l, tf::fid::kLinkBandwidthUtil).number(), 0.0);
  for (int d = 0; d < 8; ++d) EXPECT_EQ(*snap.device(d, tf::fid::kHccsBandwidthUtil).number(), 0.0);
}

// A PCIe-only node's PCIe link carries both the device's host copies and the collectives that go
// through the host: the device's PCIe counters and its PCIe links' counters are the same bytes.
// They were disjoint (the device counted only copies, the link only collectives), so npu-smi and
// the exporter disagreed on what one link moved.
TEST(PublisherLinks, ADevicesPcieCountersAndItsPcieLinksCountTheSameBytes) {
  PublishedNode p = publish_node("pcie-bytes", {.spec = "4x310P3", .jitter = 0});
  Node& node = *p.node;
  auto [ranks, streams, comm] = ring_of(node, 2, 700, "pair");
  for (int r = 0; r < 2; ++r) ASSERT_TRUE(ranks[r]->all_reduce(streams[r], comm, 0, 0, 1 << 20, DType::kFloat16).ok());
  ASSERT_TRUE(ranks[0]->memcpy_h2d(streams[0], 0, nullptr, 3 << 20).ok());
  ASSERT_TRUE(ranks[1]->memcpy_d2h(streams[1], nullptr, 0, 5 << 20).ok());
  node.run_until_idle();
  tf::Snapshot snap = p.publish();
  std::vector<int> ids = published_links(node);
  for (int d = 0; d < 2; ++d) {
    uint64_t up = 0, down = 0, fabric = 0;
    for (int l = 0; l < snap.link_count(); ++l) {
      const tf::LinkInfo& info = snap.link_info(l);
      if (info.kind != "pcie") continue;
      uint64_t bytes = snap.link(l, tf::fid::kLinkTxBytesTotal).as_u64();
      if (info.device_a == d) up += bytes;
      if (info.device_b == d) down += bytes;
      fabric += info.device_a == d || info.device_b == d ? node.fabric().links()[static_cast<std::size_t>(ids[static_cast<std::size_t>(l)])].bytes_total : 0;
    }
    EXPECT_GT(fabric, 0u) << "device " << d << ": the allreduce went through the host";
    EXPECT_EQ(snap.device(d, tf::fid::kPcieTxBytesTotal).as_u64(), up) << "device " << d;
    EXPECT_EQ(snap.device(d, tf::fid::kPcieRxBytesTotal).as_u64(), down) << "device " << d;
  }
  EXPECT_GE(snap.device(0, tf::fid::kPcieRxBytesTotal).as_u64(), uint64_t{3} << 20);
  EXPECT_GE(snap.device(1, tf::fid::kPcieTxBytesTotal).as_u64(), uint64_t{5} << 20);
}

// A collective through the host loads the device's PCIe link as a host copy does: the device's
// PCIe bandwidth utilization counts both. It counted only copies (0% during a PCIe allreduce while
// the link itself read busy).
TEST(PublisherLinks, ACollectiveThroughTheHostShowsInTheDevicesPcieUtilization) {
  PublishedNode p = publish_node("pcie-util", {.spec = "4x310P3", .jitter = 0});
  Node& node = *p.node;
  auto [ranks, streams, comm] = ring_of(node, 2, 710, "pair");
  for (int r = 0; r < 2; ++r) ASSERT_TRUE(ranks[r]->all_reduce(streams[r], comm, 0, 0, kGiB, DType::kFloat16).ok());
  node.host_wait(30'000'000);  // inside the allreduce (physics samples every 10 ms)
  tf::Snapshot snap = p.publish();
  for (int d = 0; d < 2; ++d) {
    double links = 0;  // the device's two PCIe directions, each a share of the same line rate
    for (int l = 0; l < snap.link_count(); ++l) {
      const tf::LinkInfo& info = snap.link_info(l);
      if (info.kind == "pcie" && (info.device_a == d || info.device_b == d)) links += *snap.link(l, tf::fid::kLinkBandwidthUtil).number();
    }
    EXPECT_GT(links, 10.0) << "device " << d << ": the allreduce is on its PCIe link";
    EXPECT_NEAR(*snap.device(d, tf::fid::kPcieBandwidthUtil).number(), std::min(links, 100.0), 1.0) << "device " << d;
  }
}

TEST(PublisherLinks, ADeviceWithoutHccsLinksHasNoHccsFigure) {
  PublishedNode p = publish_node("pcie", {.spec = "4x310P3"});
  tf::Snapshot snap = p.publish();
  for (int d = 0; d < snap.device_count(); ++d) {
    EXPECT_EQ(snap.device(d, tf::fid::kHccsBandwidthUtil).status, tf::SampleStatus::kNotSupported);
  }
  for (int l = 0; l < snap.link_count(); ++l) EXPECT_EQ(*snap.link(l, tf::fid::kLinkBandwidthUtil).number(), 0.0);
}

// Every published link is one direction of a fabric link: device_a sends, device_b receives,
// -1 the host or switch. A PCIe link's two directions, and an 8xA100's port into its switch, were
// both published device first ((d, -1) twice), so nothing could tell what the host sent from
// what it received (the profile's HCCS rxThroughput on an A100 read 0).
TEST(PublisherLinks, EachLinkIsPublishedInTheDirectionItCarries) {
  for (const char* spec : {"8x910B2", "4x310P3", "8xA100"}) {
    PublishedNode p = publish_node(std::string("dir-") + spec, {.spec = spec});
    tf::Snapshot snap = p.publish();
    std::vector<int> ids = published_links(*p.node);
    ASSERT_EQ(snap.link_count(), static_cast<int>(ids.size())) << spec;
    std::set<std::tuple<int, int, std::string>> seen;
    int from_far_end = 0;
    for (int l = 0; l < snap.link_count(); ++l) {
      const Link& fabric = p.node->fabric().links()[static_cast<std::size_t>(ids[static_cast<std::size_t>(l)])];
      const tf::LinkInfo& info = snap.link_info(l);
      EXPECT_EQ(info.device_a, fabric.src) << spec << " link " << l;
      EXPECT_EQ(info.device_b, fabric.dst) << spec << " link " << l;
      EXPECT_TRUE(seen.insert({info.device_a, info.device_b, info.kind}).second)
          << spec << ": two links publish " << info.device_a << " -> " << info.device_b << " " << info.kind;
      from_far_end += info.device_a < 0;
    }
    EXPECT_GT(from_far_end, 0) << spec << ": no link carries data from the host or switch";
  }
}

// A lost device gives no readings: not its temperature or power, nor its current clock or the
// memory in use (they read 1850 MHz and 1258 MiB live-looking beside "no sensors"); its limits,
// capacity and maximum clock are what the spec says and stay.
TEST(PublisherSensors, ALostDeviceReportsNoReadingsButKeepsItsSpec) {
  PublishedNode p = publish_node("lost", {});
  ASSERT_TRUE(p.node->inject_fault(2, FaultKind::kDeviceLost).ok());
  tf::Snapshot snap = p.publish();
  for (auto f : {tf::fid::kPowerWatts, tf::fid::kTemperatureCelsius, tf::fid::kAicoreClockMhz, tf::fid::kHbmUsedBytes}) {
    EXPECT_EQ(snap.device(2, f).status, tf::SampleStatus::kNotSupported) << tf::find_field(f)->name;
    EXPECT_EQ(snap.device(1, f).status, tf::SampleStatus::kOk) << tf::find_field(f)->name;
  }
  for (auto f : {tf::fid::kHbmTotalBytes, tf::fid::kAicoreClockMaxMhz, tf::fid::kPowerLimitWatts}) {
    EXPECT_EQ(snap.device(2, f).status, tf::SampleStatus::kOk) << tf::find_field(f)->name;
  }
  // Nor its links' state (they read up beside "fell off the bus"); the others stay up.
  int touching = 0;
  for (int l = 0; l < snap.link_count(); ++l) {
    const auto& info = snap.link_info(l);
    bool on_2 = info.device_a == 2 || info.device_b == 2;
    touching += on_2;
    tf::Sample up = snap.link(l, tf::fid::kLinkUp);
    if (on_2) EXPECT_EQ(up.status, tf::SampleStatus::kNotSupported) << info.device_a << "-" << info.device_b;
    else EXPECT_EQ(up.as_u64(), 1u) << info.device_a << "-" << info.device_b;
  }
  EXPECT_GT(touching, 0);
}

TEST(PublisherCollectives, EachCollectiveEventNamesItsCommunicatorAndDataType) {
  PublishedNode p = publish_node("groups", {.jitter = 0});
  Node& node = *p.node;
  std::vector<Context*> ranks;
  std::vector<StreamId> streams;
  for (int d : {1, 3, 5, 7}) {
    ranks.push_back(&make_context(node, d, 700 + d));
    streams.push_back(ranks.back()->create_stream());
  }
  auto comm = node.create_communicator("dp1", ranks, CollectiveAlgo::kAuto);
  ASSERT_TRUE(comm.ok());
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    ASSERT_TRUE(ranks[r]->all_reduce(streams[r], *comm, 0, 0, 1 << 20, DType::kBFloat16).ok());
  }
  node.run_until_idle();
  std::vector<tf::Event> events = p.drain(tf::EventType::kCollective);
  ASSERT_EQ(events.size(), 4u);
  for (const tf::Event& e : events) {
    auto text = p.cursor->resolve(e.aux_id);
    ASSERT_TRUE(text.ok()) << "device " << e.device;
    EXPECT_EQ(*text, "dp1|4|1,3,5,7|MESH|HCCS");
    EXPECT_EQ(tf::unpack_dtype(e.words[2]), tf::hccl_dtype::kBfp16);
    EXPECT_EQ(e.words[1], uint64_t{2} << 20) << "bytes per rank";
  }
}

// A released communicator's slot is reused by the next job's: its collectives must carry the new
// communicator, not the one the slot held before (the publisher caches group strings by slot).
TEST(PublisherCollectives, AReusedCommunicatorSlotIsNamedAfterItsNewCommunicator) {
  PublishedNode p = publish_node("regroup", {.jitter = 0});
  Node& node = *p.node;
  auto allreduce_on = [&](const char* name, std::vector<int> devices) {
    std::vector<Context*> ranks;
    std::vector<StreamId> streams;
    for (int d : devices) {
      ranks.push_back(&make_context(node, d, 900 + d));
      streams.push_back(ranks.back()->create_stream());
    }
    auto comm = node.create_communicator(name, ranks, CollectiveAlgo::kAuto);
    EXPECT_TRUE(comm.ok());
    for (std::size_t r = 0; r < ranks.size(); ++r) {
      EXPECT_TRUE(ranks[r]->all_reduce(streams[r], *comm, 0, 0, 1024, DType::kFloat16).ok());
    }
    node.run_until_idle();
    for (Context* c : ranks) node.destroy_context(c);
    node.collectives().release_communicator(*comm);
    return *comm;
  };
  CommId first = allreduce_on("tp0", {0, 1});
  std::vector<tf::Event> before = p.drain(tf::EventType::kCollective);
  ASSERT_EQ(before.size(), 2u);
  EXPECT_EQ(*p.cursor->resolve(before[0].aux_id), "tp0|2|0,1|MESH|HCCS");
  CommId second = allreduce_on("dp0", {2, 4, 6});
  ASSERT_EQ(second, first);  // the slot was reused
  std::vector<tf::Event> after = p.drain(tf::EventType::kCollective);
  ASSERT_EQ(after.size(), 3u);
  for (const tf::Event& e : after) EXPECT_EQ(*p.cursor->resolve(e.aux_id), "dp0|3|2,4,6|MESH|HCCS");
}

TEST(PublisherCollectives, AGroupAcrossThe910sMeshesIsARingOverPcie) {
  PublishedNode p = publish_node("groups910", {.spec = "8x910", .jitter = 0});
  Node& node = *p.node;
  std::vector<Context*> ranks = {&make_context(node, 0, 801), &make_context(node, 4, 802)};
  std::vector<StreamId> streams = {ranks[0]->create_stream(), ranks[1]->create_stream()};
  auto comm = node.create_communicator("x", ranks, CollectiveAlgo::kAuto);
  ASSERT_TRUE(comm.ok());
  for (int r = 0; r < 2; ++r) ASSERT_TRUE(ranks[r]->all_reduce(streams[r], *comm, 0, 0, 1024, DType::kFloat32).ok());
  node.run_until_idle();
  std::vector<tf::Event> events = p.drain(tf::EventType::kCollective);
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(*p.cursor->resolve(events[0].aux_id), "x|2|0,4|RING|PCIE");
  EXPECT_EQ(tf::unpack_dtype(events[0].words[2]), tf::hccl_dtype::kFp32);
}

}  // namespace
}  // namespace npukit::emu
