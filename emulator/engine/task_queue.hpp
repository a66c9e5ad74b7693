// A stream's in-order queue of tasks: a ring buffer that grows by doubling and never shrinks, so
// a stream in steady state queues and retires tasks without touching the allocator (a std::deque
// of these ~150-byte tasks allocated a block every three pushes). References to queued tasks stay
// valid until the next push_back.
#pragma once

#include <cstddef>
#include <type_traits>
#include <utility>
#include <vector>

namespace npukit::emu {

template <typename T>
class RingQueue {
 public:
  bool empty() const { return size_ == 0; }
  std::size_t size() const { return size_; }

  T& front() { return slots_[head_]; }
  const T& front() const { return slots_[head_]; }
  T& back() { return slots_[index(size_ - 1)]; }

  void push_back(T&& value) {
    if (size_ == slots_.size()) grow();
    slots_[index(size_)] = std::move(value);
    ++size_;
  }
  void pop_front() {
    clear(slots_[head_]);
    head_ = index(1);
    --size_;
  }
  void pop_back() {
    clear(slots_[index(size_ - 1)]);
    --size_;
  }

 private:
  // A retired slot lets go of what it owns at once (a trivial type owns nothing).
  static void clear(T& slot) {
    if constexpr (!std::is_trivially_destructible_v<T>) slot = T{};
  }
  // Capacity is a power of two: wrapping is a mask.
  std::size_t index(std::size_t i) const { return (head_ + i) & (slots_.size() - 1); }
  void grow() {
    std::vector<T> bigger(slots_.empty() ? 8 : slots_.size() * 2);
    for (std::size_t i = 0; i < size_; ++i) bigger[i] = std::move(slots_[index(i)]);
    slots_ = std::move(bigger);
    head_ = 0;
  }

  std::vector<T> slots_;
  std::size_t head_ = 0;
  std::size_t size_ = 0;
};

}  // namespace npukit::emu
