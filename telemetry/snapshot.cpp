#include "telemetry/snapshot.hpp"

#include <algorithm>
#include <bit>
#include <cstring>

namespace npukit::telemetry {

namespace {

constexpr std::size_t level_index(EntityLevel level) { return static_cast<std::size_t>(level); }

}  // namespace

uint64_t Sample::as_u64() const {
  switch (type) {
    case ValueType::kU64: return bits;
    case ValueType::kI64: return static_cast<uint64_t>(std::bit_cast<int64_t>(bits));
    case ValueType::kF64: return static_cast<uint64_t>(std::bit_cast<double>(bits));
  }
  return bits;
}

int64_t Sample::as_i64() const {
  switch (type) {
    case ValueType::kU64: return static_cast<int64_t>(bits);
    case ValueType::kI64: return std::bit_cast<int64_t>(bits);
    case ValueType::kF64: return static_cast<int64_t>(std::bit_cast<double>(bits));
  }
  return static_cast<int64_t>(bits);
}

double Sample::as_f64() const {
  switch (type) {
    case ValueType::kU64: return static_cast<double>(bits);
    case ValueType::kI64: return static_cast<double>(std::bit_cast<int64_t>(bits));
    case ValueType::kF64: return std::bit_cast<double>(bits);
  }
  return 0;
}

std::optional<double> Sample::number() const {
  if (!ok()) return std::nullopt;
  return as_f64();
}

Sample Snapshot::sample(EntityLevel level, int entity, FieldId id) const {
  const FieldDef* f = find_field(id);
  if (f == nullptr || f->level != level || level == EntityLevel::kProcess || entity < 0) return {};
  std::size_t n = field_count(level);
  std::size_t i = static_cast<std::size_t>(entity) * n + f->slot;
  const auto& values = values_[level_index(level)];
  if (i >= values.size()) return {};
  return {static_cast<SampleStatus>(statuses_[level_index(level)][i]), f->type, values[i]};
}

Sample Snapshot::node_field(FieldId id) const { return sample(EntityLevel::kNode, 0, id); }
Sample Snapshot::device(int device, FieldId id) const {
  return sample(EntityLevel::kDevice, device, id);
}
Sample Snapshot::link(int link, FieldId id) const { return sample(EntityLevel::kLink, link, id); }

Health Snapshot::health(int device) const {
  Sample s = this->device(device, fid::kHealth);
  if (stale_ || !s.ok() || s.bits > static_cast<uint64_t>(Health::kUnknown)) return Health::kUnknown;
  return static_cast<Health>(s.bits);
}

bool Snapshot::checksum_ok(int device) const {
  std::size_t n = field_count(EntityLevel::kDevice);
  const auto& values = values_[level_index(EntityLevel::kDevice)];
  std::size_t base = static_cast<std::size_t>(device) * n;
  if (device < 0 || base + n > values.size()) return false;
  const auto& statuses = statuses_[level_index(EntityLevel::kDevice)];
  uint64_t want = device_checksum(&values[base], &statuses[base], n);
  std::size_t slot = find_field(fid::kChecksum)->slot;
  return statuses[base + slot] == static_cast<uint8_t>(SampleStatus::kOk) &&
         values[base + slot] == want;
}

uint64_t device_checksum(const uint64_t* values, const uint8_t* statuses, std::size_t n) {
  const std::size_t skip = find_field(fid::kChecksum)->slot;
  uint64_t h = kChecksumSeed;
  for (std::size_t i = 0; i < n; ++i) h += i == skip ? 0 : checksum_term(i, values[i], statuses[i]);
  return h;
}

void SnapshotBuilder::set_identity(std::shared_ptr<const SnapshotIdentity> identity) {
  s_.identity_ = std::move(identity);
}

void SnapshotBuilder::resize(EntityLevel level, std::size_t entities) {
  std::size_t n = entities * field_count(level);
  s_.values_[level_index(level)].resize(n);
  s_.statuses_[level_index(level)].resize(n);
}

uint64_t* SnapshotBuilder::values(EntityLevel level, int entity) {
  return s_.values_[level_index(level)].data() + static_cast<std::size_t>(entity) * field_count(level);
}

uint8_t* SnapshotBuilder::statuses(EntityLevel level, int entity) {
  return s_.statuses_[level_index(level)].data() +
         static_cast<std::size_t>(entity) * field_count(level);
}

void SnapshotBuilder::keep_only(std::span<const FieldId> keep) {
  for (std::size_t l = 0; l < 3; ++l) {
    auto level = static_cast<EntityLevel>(l);
    std::vector<bool> kept(field_count(level), false);
    for (FieldId id : keep) {
      const FieldDef* f = find_field(id);
      if (f != nullptr && f->level == level) kept[f->slot] = true;
    }
    for (std::size_t i = 0; i < s_.values_[l].size(); ++i) {
      if (kept[i % kept.size()]) continue;
      s_.values_[l][i] = 0;
      s_.statuses_[l][i] = static_cast<uint8_t>(SampleStatus::kBlank);
    }
  }
}

void SnapshotBuilder::mark_stale(std::string reason) {
  s_.stale_ = true;
  s_.stale_reason_ = std::move(reason);
  std::size_t n = field_count(EntityLevel::kDevice);
  // The error codes the writer last published stay (status kStale): they may say why it went
  // quiet (host_down). Every other value is cleared.
  std::vector<bool> kept(n, false);
  for (FieldId id : {fid::kErrorCode, fid::kErrorCode2, fid::kErrorCode3, fid::kErrorCode4}) kept[find_field(id)->slot] = true;
  for (std::size_t l = 0; l < 3; ++l) {
    const bool device_level = l == level_index(EntityLevel::kDevice);
    for (std::size_t i = 0; i < s_.values_[l].size(); ++i) {
      if (!(device_level && kept[i % n])) s_.values_[l][i] = 0;
    }
    std::fill(s_.statuses_[l].begin(), s_.statuses_[l].end(),
              static_cast<uint8_t>(SampleStatus::kStale));
  }
  std::size_t slot = find_field(fid::kHealth)->slot;
  auto& dev = s_.values_[level_index(EntityLevel::kDevice)];
  for (std::size_t i = slot; i < dev.size(); i += n) dev[i] = static_cast<uint64_t>(Health::kUnknown);
  s_.processes_.clear();
}

std::string chip_label(int npu_id, int chip_id, bool multi_chip) {
  return "NPU " + std::to_string(npu_id) + (multi_chip ? " Chip " + std::to_string(chip_id) : "");
}

std::string chip_short_label(int npu_id, int chip_id, bool multi_chip) {
  return std::to_string(npu_id) + (multi_chip ? "-" + std::to_string(chip_id) : "");
}

namespace {
bool multi_chip(const Snapshot& s) { return s.node().card_count < s.device_count(); }
}  // namespace

std::string chip_label(const Snapshot& s, int device) {
  const DeviceInfo& info = s.device_info(device);
  return chip_label(info.npu_id, info.chip_id, multi_chip(s));
}

std::string chip_short_label(const Snapshot& s, int device) {
  const DeviceInfo& info = s.device_info(device);
  return chip_short_label(info.npu_id, info.chip_id, multi_chip(s));
}

}  // namespace npukit::telemetry
