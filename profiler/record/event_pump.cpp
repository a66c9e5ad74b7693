#include "profiler/record/event_pump.hpp"

#include <algorithm>

namespace npukit::prof {

namespace {
constexpr std::size_t kReadEvents = 16384;
constexpr std::size_t kPopEvents = 32768;
constexpr std::size_t kShortRead = 4096;  // events merged into one popped batch (one transaction)
}  // namespace

EventPump::EventPump(std::unique_ptr<telemetry::EventCursor> cursor, std::size_t capacity_events, Sampler sampler,
                     std::chrono::milliseconds sample_interval)
    : cursor_(std::move(cursor)), capacity_(capacity_events), sampler_(std::move(sampler)), sample_interval_(sample_interval) {
  thread_ = std::thread([this] { run(); });
}

EventPump::~EventPump() { stop(); }

void EventPump::stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  room_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void EventPump::resolve_new(PumpBatch& batch) {
  for (const telemetry::Event& e : batch.events) {
    for (uint32_t id : {e.name_id, e.aux_id}) {
      if (id == 0 || (id < known_.size() && known_[id])) continue;
      if (id >= known_.size()) known_.resize(std::max<std::size_t>(id + 1, known_.size() * 2), false);
      known_[id] = true;
      auto text = cursor_->resolve(id);
      // An unresolvable id maps to "" (the mapper then records an empty name, never garbage).
      batch.strings.emplace_back(id, text.ok() ? *text : std::string());
    }
  }
}

void EventPump::run() {
  auto next_sample = std::chrono::steady_clock::now() + sample_interval_;
  while (true) {
    {
      std::unique_lock<std::mutex> lock(mu_);
      room_.wait(lock, [&] { return stopping_ || queued_events_ < capacity_; });
      if (stopping_) {
        finished_ = true;
        return;
      }
    }
    telemetry::EventBatch read = cursor_->next(kReadEvents, std::chrono::milliseconds(20));
    // A short read means the pump keeps up: let events gather for a moment rather than wake
    // the writer per event (2 ms of a fast node is far less than the ring holds).
    if (!read.events.empty() && read.events.size() < kShortRead) std::this_thread::sleep_for(std::chrono::milliseconds(2));
    PumpBatch batch{std::move(read.events), read.missed, read.lossless_lost, {}, std::nullopt};
    resolve_new(batch);
    if (sampler_ && std::chrono::steady_clock::now() >= next_sample) {
      next_sample = std::chrono::steady_clock::now() + sample_interval_;
      batch.snapshot = sampler_();
    }
    std::lock_guard<std::mutex> lock(mu_);
    at_head_ = batch.events.size() < kReadEvents;
    if (!batch.events.empty() || batch.missed != 0 || batch.lossless_lost || batch.snapshot) {
      queued_events_ += batch.events.size();
      queue_.push_back(std::move(batch));
      ready_.notify_one();
    }
    if (finishing_ && at_head_) {
      finished_ = true;
      return;
    }
  }
}

void EventPump::finish() {
  std::lock_guard<std::mutex> lock(mu_);
  finishing_ = true;
}

bool EventPump::drained() {
  std::lock_guard<std::mutex> lock(mu_);
  return (finished_ || stopping_) && queue_.empty();
}

std::optional<PumpBatch> EventPump::pop(std::chrono::milliseconds wait) {
  std::unique_lock<std::mutex> lock(mu_);
  if (!ready_.wait_for(lock, wait, [&] { return !queue_.empty(); })) return std::nullopt;
  PumpBatch batch = std::move(queue_.front());
  queue_.pop_front();
  // Merge what else is queued (reads can be a few events each when the pump keeps up), so the
  // writer gets few large transactions rather than many small ones; up to the next counter
  // sample, which ends a batch (it was taken after its events were read: each sample is kept).
  while (!queue_.empty() && batch.events.size() < kPopEvents && !batch.snapshot) {
    PumpBatch& next = queue_.front();
    batch.events.insert(batch.events.end(), next.events.begin(), next.events.end());
    batch.strings.insert(batch.strings.end(), std::make_move_iterator(next.strings.begin()),
                         std::make_move_iterator(next.strings.end()));
    batch.missed += next.missed;
    batch.lossless_lost = batch.lossless_lost || next.lossless_lost;
    batch.snapshot = std::move(next.snapshot);
    queue_.pop_front();
  }
  queued_events_ -= std::min(queued_events_, batch.events.size());
  room_.notify_one();
  return batch;
}

bool EventPump::caught_up() {
  std::lock_guard<std::mutex> lock(mu_);
  return queue_.empty() && at_head_;
}

}  // namespace npukit::prof
