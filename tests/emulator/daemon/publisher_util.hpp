// A node published on an in-process bus, as the daemon publishes it, with an event cursor opened
// before anything happens: for the tests of what the Publisher puts on the bus.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <memory>
#include <string>
#include <vector>

#include "emulator/daemon/publisher.hpp"
#include "telemetry/client.hpp"
#include "tests/emulator/test_util.hpp"

namespace npukit::emu::testing {

struct PublishedNode {
  std::unique_ptr<Node> node;
  std::shared_ptr<telemetry::InProcessBus> bus;
  std::unique_ptr<Publisher> publisher;
  std::unique_ptr<telemetry::Client> client;
  std::unique_ptr<telemetry::EventCursor> cursor;

  // Every event of `type` since the last call (or since the node was made); events of other
  // types are read and dropped.
  std::vector<telemetry::Event> drain(telemetry::EventType type) {
    std::vector<telemetry::Event> out;
    for (;;) {
      telemetry::EventBatch batch = cursor->next(4096);
      EXPECT_EQ(batch.missed, 0u);
      for (const auto& e : batch.events) {
        if (e.type == type) out.push_back(e);
      }
      if (batch.events.empty()) return out;
    }
  }
  // Every event since the last call, of any type.
  std::vector<telemetry::Event> drain_all() {
    std::vector<telemetry::Event> out;
    for (;;) {
      telemetry::EventBatch batch = cursor->next(4096);
      EXPECT_EQ(batch.missed, 0u);
      out.insert(out.end(), batch.events.begin(), batch.events.end());
      if (batch.events.empty()) return out;
    }
  }
  telemetry::Snapshot publish() {
    publisher->publish(1.0, 0);
    auto s = client->snapshot();
    EXPECT_TRUE(s.ok()) << s.status().message();
    return s.ok() ? *s : telemetry::Snapshot();
  }
  // The bus link index of the fabric link src -> dst (-1 for the host side).
  int bus_link(int src, int dst) const {
    std::vector<int> ids = published_links(*node);
    for (std::size_t i = 0; i < ids.size(); ++i) {
      const Link& l = node->fabric().links()[static_cast<std::size_t>(ids[i])];
      if (l.src == src && l.dst == dst && l.kind == LinkKind::kHccs) return static_cast<int>(i);
    }
    return -1;
  }
};

inline PublishedNode publish_node(const std::string& tag, NodeOptions options = {}) {
  PublishedNode p;
  p.node = make_node(options);
  std::string name = "emu-" + tag + "-" + std::to_string(getpid());
  auto bus = telemetry::InProcessBus::create(writer_options_for(*p.node, name));
  EXPECT_TRUE(bus.ok()) << bus.status().message();
  p.bus = *bus;
  p.publisher = std::make_unique<Publisher>(*p.node, p.bus->writer());
  p.client = p.bus->client();
  auto cursor = p.client->open_events(/*lossless=*/false);
  EXPECT_TRUE(cursor.ok()) << cursor.status().message();
  p.cursor = std::move(*cursor);
  return p;
}

}  // namespace npukit::emu::testing
