#include "profiler/record/rank_sinks.hpp"

#include <algorithm>
#include <atomic>
#include <charconv>
#include <filesystem>
#include <thread>

namespace npukit::prof {

namespace tf = telemetry;

Result<RankSinks> RankSinks::create(const RankSinkOptions& o, EventMapper::Resolver resolver) {
  auto dirs = o.dirs.empty() ? create_prof_dirs(o.out_dir, o.realtime_ns, o.devices) : Result<std::vector<ProfPaths>>(o.dirs);
  if (!dirs.ok()) return dirs.status();
  if (static_cast<int>(dirs->size()) != o.devices) return InternalError("one PROF_ tree per device is needed");
  RankSinks out;
  out.resolve_ = resolver;
  out.device_base_ = o.device_base;
  for (int d = 0; d < o.devices; ++d) {
    RankSink sink;
    sink.device = d;
    sink.paths = (*dirs)[static_cast<std::size_t>(d)];
    auto writer = ProfileWriter::create(sink.paths.db, o.session_start_ns);
    if (!writer.ok()) return writer.status();
    sink.writer = std::move(*writer);
    auto mapper = EventMapper::create(*sink.writer, resolver, {.clock_base_ns = o.clock_base_ns,
                                                               .link_type = o.link_type,
                                                               .device_base = o.device_base,
                                                               .host_devices = o.host_devices,
                                                               .hccs_pairs = o.hccs_pairs});
    if (!mapper.ok()) return mapper.status();
    sink.mapper = std::make_unique<EventMapper>(std::move(*mapper));
    sink.sampler = std::make_unique<CounterSampler>(*sink.writer, o.clock_base_ns, d);
    out.sinks_.push_back(std::move(sink));
  }
  return out;
}

Status RankSinks::begin_batch() {
  for (RankSink& s : sinks_) NPUKIT_RETURN_IF_ERROR(s.writer->begin_batch());
  return Status::Ok();
}

Status RankSinks::commit_batch() {
  for (RankSink& s : sinks_) NPUKIT_RETURN_IF_ERROR(s.writer->commit_batch());
  return Status::Ok();
}

Status RankSinks::set_run(std::string_view key, std::string_view value) {
  for (RankSink& s : sinks_) NPUKIT_RETURN_IF_ERROR(s.writer->set_run(key, value));
  return Status::Ok();
}

Status RankSinks::insert_every(Table table, std::initializer_list<SqlValue> values) {
  for (RankSink& s : sinks_) NPUKIT_RETURN_IF_ERROR(s.writer->insert(table, values));
  return Status::Ok();
}

Status RankSinks::note_job(const tf::Event& e) {
  if (e.aux_id == 0) return Status::Ok();
  auto text = resolve_(e.aux_id);
  if (!text.ok()) return text.status();
  // "0,1,2,3;allocator=caching;...": the devices by rank come before the first ';'.
  std::string_view list(text->data(), std::min(text->find(';'), text->size()));
  int rank = 0;
  for (std::size_t pos = 0; pos <= list.size(); ++rank) {
    std::size_t comma = std::min(list.find(',', pos), list.size());
    int device = -1;
    if (std::from_chars(list.data() + pos, list.data() + comma, device).ec == std::errc()) ranks_.try_emplace(device, rank);
    pos = comma + 1;
  }
  return Status::Ok();
}

Status RankSinks::write_sink(RankSink& sink, const Batch& batch) {
  NPUKIT_RETURN_IF_ERROR(sink.writer->begin_batch());
  for (const tf::Event& e : *batch.events) {
    if (e.device == sink.device || e.device < 0 || static_cast<std::size_t>(e.device) >= sinks_.size()) {
      NPUKIT_RETURN_IF_ERROR(sink.mapper->map(e));
    }
  }
  if (batch.snapshot != nullptr) {
    NPUKIT_RETURN_IF_ERROR(sink.sampler->sample(*batch.snapshot));
    note_holdings(sink, *batch.snapshot);  // after the batch's events: the sample follows them
  }
  for (const auto& [key, value] : batch.run) NPUKIT_RETURN_IF_ERROR(sink.writer->set_run(key, value));
  return sink.writer->commit_batch();
}

Status RankSinks::write(const Batch& batch, int threads) {
  for (const tf::Event& e : *batch.events) {
    if (e.type == tf::EventType::kJobStarted) NPUKIT_RETURN_IF_ERROR(note_job(e));
  }
  if (sinks_.empty()) return Status::Ok();
  std::size_t n = std::clamp<std::size_t>(static_cast<std::size_t>(std::max(threads, 1)), 1, sinks_.size());
  std::vector<Status> results(n);
  auto group = [&](std::size_t g) {
    for (std::size_t i = g; i < sinks_.size() && results[g].ok(); i += n) results[g] = write_sink(sinks_[i], batch);
  };
  std::vector<std::thread> pool;
  for (std::size_t g = 1; g < n; ++g) pool.emplace_back(group, g);
  group(0);
  for (std::thread& t : pool) t.join();
  for (const Status& s : results) NPUKIT_RETURN_IF_ERROR(s);
  return Status::Ok();
}

Status RankSinks::describe(const tf::Snapshot& snap) {
  for (RankSink& s : sinks_) NPUKIT_RETURN_IF_ERROR(s.sampler->describe(snap));
  return Status::Ok();
}

Status RankSinks::sample(const tf::Snapshot& snap) {
  for (RankSink& s : sinks_) {
    NPUKIT_RETURN_IF_ERROR(s.sampler->sample(snap));
    note_holdings(s, snap);
  }
  return Status::Ok();
}

void RankSinks::note_holdings(RankSink& sink, const tf::Snapshot& snap) {
  for (const tf::ProcessInfo& p : snap.processes()) {
    if (p.device == sink.device && p.hbm_bytes > 0) {
      sink.mapper->note_reserved(p.device, static_cast<uint32_t>(p.pid), static_cast<int64_t>(p.hbm_bytes));
    }
  }
}

uint64_t RankSinks::samples() const { return sinks_.empty() ? 0 : sinks_.front().sampler->samples(); }

int RankSinks::rank_of(int device) const {
  auto it = ranks_.find(device_base_ + device);
  return it == ranks_.end() ? device_base_ + device : it->second;
}

bool RankSinks::any_busy() const {
  return std::any_of(sinks_.begin(), sinks_.end(), [](const RankSink& s) { return s.writer->rows(Table::kTask) > 0; });
}

// A device that ran no task while recording has nothing to profile: its tree goes, unless no
// device of the recording ran anything (an idle node's recording keeps its counters). Decided
// over every bus: a cluster's hosts the job did not touch kept all their trees, as ranks.
Status RankSinks::drop_idle_ranks(bool recording_busy) {
  if (!recording_busy) return Status::Ok();
  std::vector<bool> busy;
  for (RankSink& s : sinks_) busy.push_back(s.writer->rows(Table::kTask) > 0);
  std::vector<RankSink> kept;
  for (std::size_t i = 0; i < sinks_.size(); ++i) {
    if (busy[i]) {
      kept.push_back(std::move(sinks_[i]));
      continue;
    }
    std::string dir = sinks_[i].paths.prof_dir;
    sinks_[i].sampler.reset();
    sinks_[i].mapper.reset();
    sinks_[i].writer.reset();  // closes the database before its tree goes
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
    if (ec) return InternalError(dir + ": cannot remove: " + ec.message());
  }
  sinks_ = std::move(kept);
  return Status::Ok();
}

Result<FinalizeStats> RankSinks::finalize(const std::string& host_uid, bool recording_busy) {
  NPUKIT_RETURN_IF_ERROR(drop_idle_ranks(recording_busy));
  std::vector<Result<FinalizeStats>> results(sinks_.size(), FinalizeStats{});
  std::atomic<std::size_t> next{0};
  auto work = [&] {
    for (std::size_t i; (i = next++) < sinks_.size();) {
      RankSink& s = sinks_[i];
      results[i] = s.writer->finalize(rank_of(s.device));
    }
  };
  std::size_t threads = std::min<std::size_t>(sinks_.size(), std::max(1u, std::thread::hardware_concurrency()));
  std::vector<std::thread> pool;
  for (std::size_t t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (std::thread& t : pool) t.join();
  FinalizeStats total;
  for (std::size_t i = 0; i < sinks_.size(); ++i) {
    if (!results[i].ok()) return results[i].status();
    total.orphan_launches += results[i]->orphan_launches;
    total.overlap_rows += results[i]->overlap_rows;
    total.left_in_wal += results[i]->left_in_wal;
    total.steps = std::max(total.steps, results[i]->steps);
    const RankSink& s = sinks_[i];
    NPUKIT_RETURN_IF_ERROR(write_device_info(s.paths.prof_dir, s.device, rank_of(s.device), host_uid));
  }
  return total;
}

}  // namespace npukit::prof
