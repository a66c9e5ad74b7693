// ViewState: everything npu-top's user controls (sort, filter, selection, focused device, view
// and history window, refresh interval, pause, dialogs). The collector never sees it; the
// renderer draws a Frame through it. Functions here are pure: the visible process list is
// recomputed from (Frame, ViewState) on every draw.
//
// Selection follows the process (pid and device) across refreshes and re-sorting; when that
// process goes away the selection stays at the same row index. With any rows visible one is
// always selected.
//
// Thread-safety: plain values and pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "smi/top/layout.hpp"
#include "smi/top/model.hpp"

namespace npukit::top {

// The process table's columns, in display order; also the sort keys.
enum class SortKey : uint8_t { kPid, kDevice, kMemory, kShare, kName };
inline constexpr int kSortKeyCount = 5;
// "pid", "npu", "memory", "share", "name" (the --sort values).
const char* sort_key_name(SortKey key);
std::optional<SortKey> parse_sort_key(std::string_view name);
// Column header text of `key` fitted to `width` (memory and share labels come from the field
// registry; see format.hpp).
std::string sort_key_label(SortKey key, int width);
// The process table's columns for a row `width` cells wide (ids are SortKey values).
std::vector<ColumnSpan> process_columns(int width);

enum class Mode : uint8_t { kNormal, kHelp, kFilter, kSignalPick, kSignalConfirm };

struct ProcessKey {
  int32_t pid = 0;
  int32_t device = 0;
  bool operator==(const ProcessKey&) const = default;
};

struct SignalChoice {
  int number;
  const char* name;  // "SIGTERM"
};
std::span<const SignalChoice> signal_choices();

// Refresh interval steps for +/- (any value from --interval is allowed; +/- snap to these).
inline constexpr double kIntervalSteps[] = {0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0};
inline constexpr double kMinInterval = 0.05;
inline constexpr double kMaxInterval = 3600.0;
// History windows for 'w', seconds.
inline constexpr int kWindowSeconds[] = {30, 60, 300, 900, 3600};

struct ViewState {
  SortKey sort = SortKey::kMemory;
  bool descending = true;
  std::string filter;  // case-insensitive substring of the name or the pid
  std::optional<ProcessKey> selected;
  int selected_index = 0;
  int focus_device = 0;  // whose history the compact view's history panel shows
  DeviceView device_view = DeviceView::kAuto;
  int window = 1;  // index into kWindowSeconds
  double interval_s = 1.0;
  bool paused = false;
  Mode mode = Mode::kNormal;
  int signal_index = 0;  // into signal_choices()
  ProcessKey signal_target;
  std::string signal_target_name;
  std::string status;  // one line for the footer (signal sent or refused, ...)
  bool mono = false;   // drawing options, fixed at start
  bool unicode = true;
};

uint64_t window_ns(const ViewState& v);
// The next step above (direction > 0) or below the current interval, clamped to the steps.
double step_interval(double current, int direction);

// Rows matching the filter, sorted (ties: pid, then device).
std::vector<const ProcessRow*> visible_processes(const Frame& f, const ViewState& v);
// Index of the selected row in `rows`, -1 when rows is empty.
int selected_row(const std::vector<const ProcessRow*>& rows, const ViewState& v);
// Selects row `index` (clamped) of `rows`.
void select_row(ViewState& v, const std::vector<const ProcessRow*>& rows, int index);
// First row shown when `page` rows fit: whole pages, so the list does not jitter.
int first_visible_row(int selected, int page);

}  // namespace npukit::top
