#include "smi/top/view.hpp"

#include <signal.h>

#include <algorithm>
#include <cctype>
#include <cmath>

#include "smi/top/canvas.hpp"
#include "smi/top/format.hpp"

namespace npukit::top {

namespace {

constexpr const char* kSortNames[kSortKeyCount] = {"pid", "npu", "memory", "share", "name"};

constexpr ColumnSpec kProcessColumns[] = {
    {static_cast<int>(SortKey::kPid), 7, 7, 0},
    {static_cast<int>(SortKey::kDevice), 4, 4, 0},
    {static_cast<int>(SortKey::kMemory), 8, 19, 0},
    {static_cast<int>(SortKey::kShare), 9, 9, 1},
    {static_cast<int>(SortKey::kName), 8, 32, 0, true},
};

constexpr SignalChoice kSignals[] = {
    {SIGTERM, "SIGTERM"}, {SIGINT, "SIGINT"},   {SIGHUP, "SIGHUP"},   {SIGKILL, "SIGKILL"},
    {SIGUSR1, "SIGUSR1"}, {SIGUSR2, "SIGUSR2"}, {SIGSTOP, "SIGSTOP"}, {SIGCONT, "SIGCONT"},
};

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool matches(const ProcessRow& p, const std::string& needle) {
  if (needle.empty()) return true;
  return lower(p.name).find(needle) != std::string::npos || std::to_string(p.pid).find(needle) != std::string::npos;
}

// Negative, zero or positive as a sorts before, with or after b on `key` (ascending).
int compare(const ProcessRow& a, const ProcessRow& b, SortKey key) {
  auto cmp = [](auto x, auto y) { return x < y ? -1 : (y < x ? 1 : 0); };
  switch (key) {
    case SortKey::kPid: return cmp(a.pid, b.pid);
    case SortKey::kDevice: return cmp(a.device, b.device);
    case SortKey::kMemory: return cmp(a.hbm_bytes, b.hbm_bytes);
    case SortKey::kShare: return cmp(a.share.value_or(-1.0), b.share.value_or(-1.0));
    case SortKey::kName: return cmp(lower(a.name), lower(b.name));
  }
  return 0;
}

}  // namespace

const char* sort_key_name(SortKey key) { return kSortNames[static_cast<int>(key)]; }

std::optional<SortKey> parse_sort_key(std::string_view name) {
  for (int i = 0; i < kSortKeyCount; ++i) {
    if (name == kSortNames[i]) return static_cast<SortKey>(i);
  }
  return std::nullopt;
}

std::string sort_key_label(SortKey key, int width) {
  switch (key) {
    case SortKey::kPid: return fit("PID", width);
    case SortKey::kDevice: return fit("NPU", width);
    case SortKey::kMemory: return field_label(tf::fid::kProcessHbmUsedBytes, width, false);
    case SortKey::kShare: return fit("Share(%)", width);
    case SortKey::kName: return fit("Process name", width);
  }
  return "";
}

std::vector<ColumnSpan> process_columns(int width) { return allocate_columns(kProcessColumns, width); }

std::span<const SignalChoice> signal_choices() { return kSignals; }

uint64_t window_ns(const ViewState& v) {
  int i = std::clamp(v.window, 0, static_cast<int>(std::size(kWindowSeconds)) - 1);
  return static_cast<uint64_t>(kWindowSeconds[i]) * 1'000'000'000ull;
}

double step_interval(double current, int direction) {
  if (direction > 0) {
    for (double s : kIntervalSteps) {
      if (s > current + 1e-9) return s;
    }
    return std::max(current, kIntervalSteps[std::size(kIntervalSteps) - 1]);
  }
  for (auto it = std::rbegin(kIntervalSteps); it != std::rend(kIntervalSteps); ++it) {
    if (*it < current - 1e-9) return *it;
  }
  return std::min(current, kIntervalSteps[0]);
}

std::vector<const ProcessRow*> visible_processes(const Frame& f, const ViewState& v) {
  std::vector<const ProcessRow*> rows;
  std::string needle = lower(v.filter);
  for (const auto& p : f.processes) {
    if (matches(p, needle)) rows.push_back(&p);
  }
  std::stable_sort(rows.begin(), rows.end(), [&](const ProcessRow* a, const ProcessRow* b) {
    int c = compare(*a, *b, v.sort);
    if (c != 0) return v.descending ? c > 0 : c < 0;
    if (a->pid != b->pid) return a->pid < b->pid;
    return a->device < b->device;
  });
  return rows;
}

int selected_row(const std::vector<const ProcessRow*>& rows, const ViewState& v) {
  if (rows.empty()) return -1;
  if (v.selected) {
    for (std::size_t i = 0; i < rows.size(); ++i) {
      if (ProcessKey{rows[i]->pid, rows[i]->device} == *v.selected) return static_cast<int>(i);
    }
  }
  return std::clamp(v.selected_index, 0, static_cast<int>(rows.size()) - 1);
}

void select_row(ViewState& v, const std::vector<const ProcessRow*>& rows, int index) {
  if (rows.empty()) {
    v.selected.reset();
    v.selected_index = 0;
    return;
  }
  index = std::clamp(index, 0, static_cast<int>(rows.size()) - 1);
  v.selected = ProcessKey{rows[static_cast<std::size_t>(index)]->pid, rows[static_cast<std::size_t>(index)]->device};
  v.selected_index = index;
}

int first_visible_row(int selected, int page) {
  if (page <= 0 || selected <= 0) return 0;
  return selected / page * page;
}

}  // namespace npukit::top
