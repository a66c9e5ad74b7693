// The client API over both backends: the explicit backend list, identical snapshots and events
// from the shm and in-process backends, watch(), control requests, staleness, and following a
// restarted daemon.
#include <gtest/gtest.h>

#include <functional>
#include <thread>

#include "telemetry/client.hpp"
#include "telemetry/naming.hpp"
#include "tests/telemetry/bus_test_util.hpp"

namespace npukit::telemetry {
namespace {

using nlohmann::json;
using testing::NodeCleanup;
using testing::small_options;
using testing::unique_node;

// One node served by either backend; `writer` publishes, `client` reads.
struct Node {
  std::unique_ptr<Writer> shm_writer;
  std::shared_ptr<InProcessBus> bus;
  std::unique_ptr<Client> client;
  Writer& writer() { return shm_writer ? *shm_writer : bus->writer(); }
};

Node make_node(std::string_view backend, const std::string& node) {
  Node n;
  if (backend == "shm") {
    auto w = Writer::create(small_options(node));
    EXPECT_TRUE(w.ok()) << w.status().message();
    n.shm_writer = std::move(*w);
  } else {
    auto b = InProcessBus::create(small_options(node));
    EXPECT_TRUE(b.ok()) << b.status().message();
    n.bus = *b;
  }
  auto c = open_client(backend, {node});
  EXPECT_TRUE(c.ok()) << c.status().message();
  if (c.ok()) n.client = std::move(*c);
  return n;
}

// Runs `body` once per backend, against a fresh node that backend serves.
void for_each_backend(const std::function<void(Node&)>& body) {
  for (std::string_view backend : {"shm", "inprocess"}) {
    SCOPED_TRACE(backend);
    std::string node = unique_node(std::string(backend));
    NodeCleanup cleanup(node);
    Node n = make_node(backend, node);
    ASSERT_TRUE(n.client);
    EXPECT_EQ(n.client->backend(), backend);
    EXPECT_EQ(n.client->node(), node);
    body(n);
  }
}

TEST(Client, BackendsAreOneExplicitList) {
  auto backends = client_backends();
  ASSERT_EQ(backends.size(), 2u);
  EXPECT_EQ(backends[0].name, "shm");
  EXPECT_EQ(backends[1].name, "inprocess");
  auto bogus = open_client("nvml", {});
  EXPECT_EQ(bogus.status().code(), Code::kNotFound);
  EXPECT_EQ(bogus.status().message(), "unknown bus backend 'nvml' (known: shm, inprocess)");
}

TEST(Client, BothBackendsServeTheSameSnapshot) {
  for_each_backend([](Node& n) {
    testing::publish_generation(n.writer(), 1, 42);
    n.writer().update_node().set(fid::kNodeVirtualTimeNs, 1000u);
    ASSERT_TRUE(n.writer().set_processes(std::vector<ProcessInfo>{{77, 1, 1 << 20, "train.py"}}).ok());
    auto s = n.client->snapshot();
    ASSERT_TRUE(s.ok()) << s.status().message();
    EXPECT_FALSE(s->stale()) << s->stale_reason();
    EXPECT_TRUE(testing::generation_consistent(*s, 1));
    EXPECT_EQ(s->device(1, fid::kKernelsTotal).as_u64(), 42u);
    EXPECT_EQ(s->device(0, fid::kKernelsTotal).status, SampleStatus::kBlank);
    EXPECT_EQ(s->node_field(fid::kNodeVirtualTimeNs).as_u64(), 1000u);
    ASSERT_EQ(s->processes().size(), 1u);
    EXPECT_EQ(s->processes()[0].name, "train.py");
    EXPECT_EQ(s->device_info(0).bus_id, "0000:50:00.0");
    EXPECT_EQ(s->health(1), Health::kAlarm);  // 42 % 4 == 2
  });
}

TEST(Client, EventsFlowThroughBothBackends) {
  for_each_backend([](Node& n) {
    auto lossy = n.client->open_events(false);
    auto lossless = n.client->open_events(true);
    ASSERT_TRUE(lossy.ok() && lossless.ok()) << lossless.status().message();
    EXPECT_TRUE((*lossless)->lossless());
    Event ev = testing::test_event(0);
    ev.name_id = *n.writer().intern("AllReduce");
    for (int i = 0; i < 10; ++i) n.writer().record(ev);
    for (auto* c : {lossy->get(), lossless->get()}) {
      EventBatch b = c->next(100);
      ASSERT_EQ(b.events.size(), 10u);
      EXPECT_EQ(b.events[9].seq, 9u);
      EXPECT_EQ(*c->resolve(b.events[0].name_id), "AllReduce");
    }
  });
}

TEST(Client, WatchDeliversCountSnapshotsWithOnlyTheRequestedFields) {
  std::string node = unique_node();
  auto bus = InProcessBus::create(small_options(node));
  ASSERT_TRUE(bus.ok());
  (*bus)->writer().update_device(0).set(fid::kPowerWatts, 10.0).set(fid::kTemperatureCelsius, 40.0);
  auto client = (*bus)->client();
  std::vector<double> power;
  int temperature_seen = 0;
  WatchOptions o;
  o.fields = {fid::kPowerWatts};
  o.interval = std::chrono::milliseconds(5);
  o.count = 3;
  auto t0 = std::chrono::steady_clock::now();
  Status st = client->watch(o, [&](const Snapshot& s) {
    power.push_back(s.device(0, fid::kPowerWatts).as_f64());
    temperature_seen += s.device(0, fid::kTemperatureCelsius).ok() ? 1 : 0;
    (*bus)->writer().update_device(0).set(fid::kPowerWatts, 10.0 + static_cast<double>(power.size()));
    return true;
  });
  EXPECT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(power, (std::vector<double>{10.0, 11.0, 12.0}));
  EXPECT_EQ(temperature_seen, 0) << "fields not asked for read blank";
  EXPECT_GE(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(10));
}

TEST(Client, WatchStopsOnTheStopTokenAndOnFalse) {
  std::string node = unique_node();
  auto bus = InProcessBus::create(small_options(node));
  ASSERT_TRUE(bus.ok());
  auto client = (*bus)->client();
  std::stop_source stop;
  WatchOptions o;
  o.interval = std::chrono::seconds(30);
  o.stop = stop.get_token();
  int calls = 0;
  std::thread stopper([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    stop.request_stop();
  });
  auto t0 = std::chrono::steady_clock::now();
  EXPECT_TRUE(client->watch(o, [&](const Snapshot&) { return ++calls > 0; }).ok());
  stopper.join();
  EXPECT_EQ(calls, 1);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(5));
  WatchOptions fast;
  fast.interval = std::chrono::milliseconds(1);
  calls = 0;
  EXPECT_TRUE(client->watch(fast, [&](const Snapshot&) { return ++calls < 4; }).ok());
  EXPECT_EQ(calls, 4);
}

TEST(Client, WatchRejectsBadArguments) {
  std::string node = unique_node();
  auto bus = InProcessBus::create(small_options(node));
  ASSERT_TRUE(bus.ok());
  auto client = (*bus)->client();
  WatchOptions o;
  o.interval = std::chrono::nanoseconds(0);
  EXPECT_EQ(client->watch(o, [](const Snapshot&) { return true; }).message(), "watch interval must be positive");
  o.interval = std::chrono::milliseconds(1);
  o.fields = {9};
  EXPECT_EQ(client->watch(o, [](const Snapshot&) { return true; }).message(), "watch: unknown field id 9");
}

TEST(Client, InProcessControlUsesTheSameDispatch) {
  std::string node = unique_node();
  auto bus = InProcessBus::create(small_options(node));
  ASSERT_TRUE(bus.ok());
  auto client = (*bus)->client();
  auto none = client->control({{"op", "status"}});
  EXPECT_EQ(none.status().code(), Code::kUnavailable);
  EXPECT_EQ(none.status().message(), "no control handler is attached to the in-process bus '" + node + "'");
  (*bus)->set_control_handler([](const Request& r) -> json { return {{"jobs", json::array()}, {"op", r.op}}; });
  auto r = client->control({{"op", "list_jobs"}});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)["ok"], true);
  EXPECT_EQ((*r)["op"], "list_jobs");
  auto bad = client->control(json::array());
  ASSERT_TRUE(bad.ok());
  EXPECT_EQ((*bad)["code"], "malformed_request");
}

TEST(Client, ShmControlFindsTheSocketTheWriterRecorded) {
  std::string node = unique_node();
  NodeCleanup cleanup(node);
  const std::string path = "/tmp/npukit-" + node + "-custom.sock";
  ControlServerOptions so;
  so.node = node;
  so.path = path;
  auto server = ControlServer::start(so, [](const Request& r) -> json { return {{"op", r.op}}; });
  ASSERT_TRUE(server.ok()) << server.status().message();
  auto o = small_options(node);
  o.control_path = path;
  auto w = Writer::create(o);
  ASSERT_TRUE(w.ok());
  auto client = open_client("shm", {node});
  ASSERT_TRUE(client.ok());
  auto r = (*client)->control({{"op", "inject"}});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ((*r)["op"], "inject");
}

TEST(Client, ShmWithoutDaemonIsUnavailable) {
  std::string node = unique_node();
  auto c = open_client("shm", {node});
  EXPECT_EQ(c.status().code(), Code::kUnavailable);
  EXPECT_EQ(c.status().message(), no_daemon_message(node));
  auto in = open_client("inprocess", {node});
  EXPECT_EQ(in.status().code(), Code::kUnavailable);
  EXPECT_EQ(in.status().message(), "no in-process bus for node '" + node + "' in this process");
}

TEST(Client, ShmControlWithoutDaemonIsUnavailable) {
  std::string node = unique_node();
  NodeCleanup cleanup(node);
  auto w = Writer::create(small_options(node));  // a segment but no control server
  ASSERT_TRUE(w.ok());
  auto client = open_client("shm", {node});
  ASSERT_TRUE(client.ok());
  auto r = (*client)->control({{"op", "status"}});
  EXPECT_EQ(r.status().code(), Code::kUnavailable);
  EXPECT_EQ(r.status().message(), no_daemon_message(node));
}

TEST(Client, ShmClientFollowsARestartedDaemon) {
  std::string node = unique_node();
  NodeCleanup cleanup(node);
  auto first = Writer::create(small_options(node));
  ASSERT_TRUE(first.ok());
  auto client = open_client("shm", {node});
  ASSERT_TRUE(client.ok());
  (*first)->update_device(0).set(fid::kPowerWatts, 1.0);
  EXPECT_DOUBLE_EQ((*client)->snapshot()->device(0, fid::kPowerWatts).as_f64(), 1.0);
  first->reset();  // a clean stop: closed, its name removed
  auto s = (*client)->snapshot();
  ASSERT_FALSE(s.ok()) << "a node stopped cleanly is absent, not stale for ever";
  EXPECT_EQ(s.status().code(), Code::kUnavailable);
  EXPECT_EQ(s.status().message(), "node '" + node + "' was stopped; start it with: npu-emud start --node-name " + node);
  auto second = Writer::create(small_options(node));
  ASSERT_TRUE(second.ok());
  (*second)->update_device(0).set(fid::kPowerWatts, 2.0);
  s = (*client)->snapshot();
  ASSERT_TRUE(s.ok());
  EXPECT_FALSE(s->stale()) << s->stale_reason();
  EXPECT_DOUBLE_EQ(s->device(0, fid::kPowerWatts).as_f64(), 2.0);
}

TEST(Client, InProcessBusIsFoundByNameOnlyWhileItLives) {
  std::string node = unique_node();
  {
    auto bus = InProcessBus::create(small_options(node));
    ASSERT_TRUE(bus.ok());
    auto dup = InProcessBus::create(small_options(node));
    EXPECT_EQ(dup.status().code(), Code::kFailedPrecondition);
    EXPECT_EQ(dup.status().message(), "this process already has an in-process bus for node '" + node + "'");
    auto c = open_client("inprocess", {node});
    ASSERT_TRUE(c.ok());
    (*bus)->writer().update_device(1).set(fid::kHbmUsedBytes, 5u);
    EXPECT_EQ((*c)->snapshot()->device(1, fid::kHbmUsedBytes).as_u64(), 5u);
  }
  EXPECT_EQ(open_client("inprocess", {node}).status().code(), Code::kUnavailable);
  EXPECT_TRUE(InProcessBus::create(small_options(node)).ok());
}

TEST(Client, ClosedInProcessBusNeverShowsLiveData) {
  std::string node = unique_node();
  auto bus = InProcessBus::create(small_options(node));
  ASSERT_TRUE(bus.ok());
  auto client = (*bus)->client();
  (*bus)->writer().update_device(0).set(fid::kHealth, 0).set(fid::kPowerWatts, 5.0);
  ASSERT_TRUE((*bus)->writer().set_processes(std::vector<ProcessInfo>{{1, 0, 1, "p"}}).ok());
  EXPECT_EQ(client->snapshot()->health(0), Health::kOk);
  (*bus)->close();
  auto s = client->snapshot();
  ASSERT_TRUE(s.ok());
  EXPECT_TRUE(s->stale());
  EXPECT_EQ(s->health(0), Health::kUnknown);
  EXPECT_FALSE(s->device(0, fid::kPowerWatts).number().has_value());
  EXPECT_TRUE(s->processes().empty());
}

TEST(Client, InProcessHeartbeatStalenessIsOptIn) {
  std::string node = unique_node();
  auto bus = InProcessBus::create(small_options(node));
  ASSERT_TRUE(bus.ok());
  auto strict = (*bus)->client(std::chrono::milliseconds(20));
  auto lenient = (*bus)->client();
  std::this_thread::sleep_for(std::chrono::milliseconds(40));
  EXPECT_TRUE(strict->snapshot()->stale());
  EXPECT_FALSE(lenient->snapshot()->stale());
  (*bus)->writer().heartbeat();
  EXPECT_FALSE(strict->snapshot()->stale());
}

}  // namespace
}  // namespace npukit::telemetry
