// Seqlock and word-copy primitives over memory shared with other processes (internal to the
// bus; used by the writer and the readers of both backends).
//
// Every shared word is accessed through std::atomic_ref, so readers racing the writer is
// well-defined C++ and TSan models it exactly (no standalone fences, which TSan ignores):
//   writer: seq = odd (relaxed); payload stores (release); seq = even (release)
//   reader: s0 = seq (acquire), odd -> retry; payload loads (acquire); s1 = seq (relaxed);
//           s0 != s1 -> retry
// If a payload load observes a store of a newer write, that store's release makes the odd seq
// visible to the later s1 load, so the read retries. On x86 all of these are plain moves.
// A reader never blocks the writer. A sequence word is only ever written by one thread.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace npukit::telemetry::detail {

static_assert(std::atomic_ref<uint64_t>::is_always_lock_free, "the bus needs lock-free 64-bit atomics");

// atomic_ref needs a non-const referent; loads through it never write.
inline std::atomic_ref<uint64_t> word(const uint64_t* p) {
  return std::atomic_ref<uint64_t>(*const_cast<uint64_t*>(p));
}

inline uint64_t load_relaxed(const uint64_t* p) { return word(p).load(std::memory_order_relaxed); }
inline uint64_t load_acquire(const uint64_t* p) { return word(p).load(std::memory_order_acquire); }
inline void store_relaxed(uint64_t* p, uint64_t v) { word(p).store(v, std::memory_order_relaxed); }
inline void store_release(uint64_t* p, uint64_t v) { word(p).store(v, std::memory_order_release); }

// Payload copies inside a seqlock write / read section.
inline void copy_in(uint64_t* shared, const uint64_t* local, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) store_release(shared + i, local[i]);
}
inline void copy_out(uint64_t* local, const uint64_t* shared, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) local[i] = load_acquire(shared + i);
}

inline void seq_write_begin(uint64_t* seq) { store_relaxed(seq, load_relaxed(seq) + 1); }
inline void seq_write_end(uint64_t* seq) { store_release(seq, load_relaxed(seq) + 1); }

// Returns the sequence to pass to seq_read_valid(); an odd value means "retry now".
inline uint64_t seq_read_begin(const uint64_t* seq) { return load_acquire(seq); }
inline bool seq_read_valid(const uint64_t* seq, uint64_t begin) {
  return (begin & 1) == 0 && load_relaxed(seq) == begin;
}

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

}  // namespace npukit::telemetry::detail
