#include "telemetry/event_ring.hpp"

#include <unistd.h>

#include <algorithm>
#include <thread>

#include "telemetry/seqlock.hpp"
#include "telemetry/segment.hpp"
#include "telemetry/string_table.hpp"

namespace npukit::telemetry::detail {

namespace {

constexpr auto kSeqCst = std::memory_order_seq_cst;

std::atomic_ref<uint64_t> owner_of(ReaderSlot* s) { return std::atomic_ref<uint64_t>(s->owner); }
std::atomic_ref<uint64_t> cursor_of(ReaderSlot* s) { return std::atomic_ref<uint64_t>(s->cursor); }

int owner_pid(uint64_t owner) { return static_cast<int>(owner >> 32); }

void encode(const Event& ev, uint64_t out[kEventRecordWords - 1]) {
  out[0] = static_cast<uint64_t>(ev.type) |
           (static_cast<uint64_t>(static_cast<uint32_t>(ev.device)) << 32);
  out[1] = ev.ts_ns;
  out[2] = ev.name_id | (static_cast<uint64_t>(ev.aux_id) << 32);
  std::copy(ev.words.begin(), ev.words.end(), out + 3);
}

void decode(uint64_t seq, const uint64_t in[kEventRecordWords - 1], Event* ev) {
  ev->seq = seq;
  ev->type = static_cast<EventType>(in[0] & 0xffff);
  ev->device = static_cast<int32_t>(static_cast<uint32_t>(in[0] >> 32));
  ev->ts_ns = in[1];
  ev->name_id = static_cast<uint32_t>(in[2]);
  ev->aux_id = static_cast<uint32_t>(in[2] >> 32);
  std::copy(in + 3, in + kEventRecordWords - 1, ev->words.begin());
}

// Backoff for polling loops: spin, then yield, then sleep.
void backoff(uint32_t round) {
  if (round < 64) {
    cpu_relax();
  } else if (round < 256) {
    std::this_thread::yield();
  } else {
    std::this_thread::sleep_for(std::chrono::microseconds(20));
  }
}

}  // namespace

uint64_t RingWriter::record(const Event& ev) {
  const uint64_t seq = next_;
  SegmentHeader* h = v_.header();
  if (h->lossless_count.load(kSeqCst) != 0) {
    uint64_t epoch = h->lossless_epoch.load(kSeqCst);
    if (epoch != cached_epoch_ || seq >= safe_until_) {
      cached_epoch_ = epoch;
      safe_until_ = min_cursor() + v_.caps.events;
      if (seq >= safe_until_) wait_for_room(seq);
    }
  }
  uint64_t words[kEventRecordWords - 1];
  encode(ev, words);
  uint64_t* rec = v_.event_record(seq);
  store_relaxed(rec, 2 * seq + 1);  // record seqlock: odd while filling
  copy_in(rec + 1, words, kEventRecordWords - 1);
  store_release(rec, 2 * seq + 2);
  h->event_head.store(seq + 1, kSeqCst);
  next_ = seq + 1;
  return seq;
}

uint64_t RingWriter::min_cursor() const {
  uint64_t m = ~uint64_t{0} - v_.caps.events;  // no reader: never wait
  for (uint32_t i = 0; i < v_.caps.lossless_readers; ++i) {
    ReaderSlot* s = v_.reader_slot(i);
    if (owner_of(s).load(kSeqCst) != 0) m = std::min(m, cursor_of(s).load(std::memory_order_acquire));
  }
  return m;
}

bool RingWriter::release_slot(ReaderSlot* slot, uint64_t owner, std::atomic<uint64_t>& counter) const {
  if (!owner_of(slot).compare_exchange_strong(owner, 0, kSeqCst)) return false;
  v_.header()->lossless_count.fetch_sub(1, kSeqCst);
  counter.fetch_add(1, std::memory_order_relaxed);
  return true;
}

void RingWriter::reap_dead_readers() const {
  if (v_.header()->lossless_count.load(kSeqCst) == 0) return;
  for (uint32_t i = 0; i < v_.caps.lossless_readers; ++i) {
    ReaderSlot* s = v_.reader_slot(i);
    uint64_t owner = owner_of(s).load(kSeqCst);
    if (owner != 0 && !pid_alive(owner_pid(owner))) {
      release_slot(s, owner, v_.header()->lossless_dead_readers_total);
    }
  }
}

// Waits until no registered reader still needs the record `seq` overwrites; drops dead readers
// at once and evicts live ones that stay behind past the timeout.
void RingWriter::wait_for_room(uint64_t seq) {
  const uint64_t start = monotonic_ns();
  uint64_t next_pid_check = start + 1000000;
  SegmentHeader* h = v_.header();
  for (uint32_t round = 0;; ++round) {
    safe_until_ = min_cursor() + v_.caps.events;
    if (seq < safe_until_) return;
    uint64_t now = monotonic_ns();
    bool timed_out = now - start >= timeout_ns_;
    if (now >= next_pid_check || timed_out) {
      next_pid_check = now + 1000000;
      reap_dead_readers();
    }
    if (timed_out) {
      for (uint32_t i = 0; i < v_.caps.lossless_readers; ++i) {
        ReaderSlot* s = v_.reader_slot(i);
        uint64_t owner = owner_of(s).load(kSeqCst);
        if (owner != 0 && cursor_of(s).load(std::memory_order_acquire) + v_.caps.events <= seq) {
          release_slot(s, owner, h->lossless_timeouts_total);
        }
      }
      continue;  // recompute: the evicted no longer count
    }
    backoff(round);
  }
}

Result<std::unique_ptr<RingCursor>> RingCursor::open(const View& read, std::shared_ptr<const void> keepalive,
                                                     bool lossless, const View& write,
                                                     std::shared_ptr<const void> write_keepalive,
                                                     const std::string& segment_name) {
  std::unique_ptr<RingCursor> c(new RingCursor());
  c->read_ = read;
  c->keepalive_ = std::move(keepalive);
  c->pos_ = read.header()->event_head.load(std::memory_order_acquire);
  if (!lossless) return c;
  static std::atomic<uint32_t> next_tag{1};
  c->token_ = (static_cast<uint64_t>(::getpid()) << 32) | (next_tag.fetch_add(1) & 0x7fffffffu) | 1u;
  SegmentHeader* h = write.header();
  for (uint32_t i = 0; i < write.caps.lossless_readers && c->slot_ == nullptr; ++i) {
    ReaderSlot* s = write.reader_slot(i);
    uint64_t expected = 0;
    if (owner_of(s).compare_exchange_strong(expected, c->token_, kSeqCst)) c->slot_ = s;
  }
  if (c->slot_ == nullptr) {
    return Status(Code::kFailedPrecondition, "all " + std::to_string(write.caps.lossless_readers) +
                                                 " lossless reader slots of shm segment " +
                                                 segment_name + " are taken");
  }
  c->write_keepalive_ = std::move(write_keepalive);
  c->write_header_ = h;
  cursor_of(c->slot_).store(h->event_head.load(kSeqCst), kSeqCst);
  h->lossless_epoch.fetch_add(1, kSeqCst);
  h->lossless_count.fetch_add(1, kSeqCst);
  c->pos_ = h->event_head.load(kSeqCst);  // events from here on are never overwritten unread
  cursor_of(c->slot_).store(c->pos_, std::memory_order_release);
  return c;
}

RingCursor::~RingCursor() {
  if (slot_ == nullptr) return;
  uint64_t token = token_;
  if (owner_of(slot_).compare_exchange_strong(token, 0, kSeqCst)) {
    write_header_->lossless_count.fetch_sub(1, kSeqCst);
  }
}

bool RingCursor::read_one(uint64_t seq, Event* out) const {
  const uint64_t* rec = read_.event_record(seq);
  uint64_t begin = load_acquire(rec);
  if (begin != 2 * seq + 2) return false;
  uint64_t words[kEventRecordWords - 1];
  copy_out(words, rec + 1, kEventRecordWords - 1);
  if (load_relaxed(rec) != begin) return false;
  decode(seq, words, out);
  return true;
}

uint64_t RingCursor::wait_for_head(std::chrono::nanoseconds wait) const {
  const auto& head = read_.header()->event_head;
  uint64_t h = head.load(std::memory_order_acquire);
  if (h != pos_ || wait.count() <= 0) return h;
  const uint64_t deadline = monotonic_ns() + static_cast<uint64_t>(wait.count());
  for (uint32_t round = 0; h == pos_ && monotonic_ns() < deadline; ++round) {
    backoff(round);
    h = head.load(std::memory_order_acquire);
  }
  return h;
}

void RingCursor::check_registration(EventBatch& batch) {
  if (slot_ == nullptr || owner_of(slot_).load(std::memory_order_acquire) == token_) return;
  batch.lossless_lost = true;  // the writer evicted us (stalled past the lossless timeout)
  slot_ = nullptr;
}

EventBatch RingCursor::next(std::size_t max_events, std::chrono::nanoseconds wait) {
  EventBatch batch;
  check_registration(batch);
  uint64_t head = wait_for_head(wait);
  const uint64_t cap = read_.caps.events;
  batch.events.reserve(std::min<uint64_t>(max_events, head - pos_));
  while (pos_ < head && batch.events.size() < max_events) {
    if (head - pos_ > cap) {  // lapped: the oldest records are gone
      batch.missed += head - cap - pos_;
      pos_ = head - cap;
    }
    Event ev;
    if (read_one(pos_, &ev)) {
      batch.events.push_back(ev);
      ++pos_;
      continue;
    }
    // Overwritten while we looked: the writer is at least a lap ahead of pos_.
    head = read_.header()->event_head.load(std::memory_order_acquire);
    uint64_t resume = std::max(pos_ + 1, head > cap ? head - cap : 0);
    batch.missed += resume - pos_;
    pos_ = resume;
  }
  if (slot_ != nullptr) cursor_of(slot_).store(pos_, std::memory_order_release);
  total_missed_ += batch.missed;
  return batch;
}

Result<std::string> RingCursor::resolve(uint32_t string_id) const {
  auto s = resolve_string(read_, string_id);
  if (!s.ok()) return s.status();
  return std::string(*s);
}

}  // namespace npukit::telemetry::detail
