#include "emulator/engine/task_queue.hpp"

#include <gtest/gtest.h>

#include <deque>
#include <memory>
#include <random>

namespace npukit::emu {
namespace {

// Random pushes and pops at both ends, checked against std::deque: the ring wraps and grows
// across the wrap point many times.
TEST(RingQueue, BehavesAsADequeAcrossWrapsAndGrowth) {
  RingQueue<int> ring;
  std::deque<int> reference;
  std::mt19937 rng(7);
  for (int i = 0; i < 20000; ++i) {
    int op = static_cast<int>(rng() % 10);
    if (op < 6 || reference.empty()) {
      ring.push_back(int{i});
      reference.push_back(i);
    } else if (op < 9) {
      ASSERT_EQ(ring.front(), reference.front()) << "at op " << i;
      ring.pop_front();
      reference.pop_front();
    } else {
      ASSERT_EQ(ring.back(), reference.back()) << "at op " << i;
      ring.pop_back();
      reference.pop_back();
    }
    ASSERT_EQ(ring.size(), reference.size());
    ASSERT_EQ(ring.empty(), reference.empty());
  }
  while (!reference.empty()) {
    ASSERT_EQ(ring.front(), reference.front());
    ring.pop_front();
    reference.pop_front();
  }
}

// A slot that owned something lets go of it when its element leaves (not when the slot is reused).
TEST(RingQueue, ARetiredElementIsReleasedAtOnce) {
  RingQueue<std::shared_ptr<int>> ring;
  auto owned = std::make_shared<int>(1);
  ring.push_back(std::shared_ptr<int>(owned));
  ring.push_back(std::make_shared<int>(2));
  EXPECT_EQ(owned.use_count(), 2);
  ring.pop_front();
  EXPECT_EQ(owned.use_count(), 1);
  ring.push_back(std::shared_ptr<int>(owned));
  ring.pop_back();
  EXPECT_EQ(owned.use_count(), 1);
}

}  // namespace
}  // namespace npukit::emu
