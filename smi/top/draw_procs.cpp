// The process table (draw.hpp).
#include <algorithm>
#include <cstdio>

#include "smi/top/draw.hpp"
#include "smi/top/format.hpp"

namespace npukit::top {

namespace {

std::string share_text(const ProcessRow& p) {
  if (!p.share) return "-";
  char buf[16];
  std::snprintf(buf, sizeof buf, "%.1f", *p.share);
  return buf;
}

std::string cell_text(const ProcessRow& p, SortKey key) {
  switch (key) {
    case SortKey::kPid: return std::to_string(p.pid);
    case SortKey::kDevice: return p.npu.empty() ? std::to_string(p.device) : p.npu;
    case SortKey::kMemory: return format_mib(p.hbm_bytes);
    case SortKey::kShare: return share_text(p);
    case SortKey::kName: return p.name.empty() ? "?" : p.name;
  }
  return "";
}

std::string empty_text(const Frame& f, const ViewState& v) {
  if (f.state == NodeState::kAbsent) return "(no node)";
  if (f.state == NodeState::kStale) return "(no process table: the node is stale)";
  if (!v.filter.empty() && !f.processes.empty()) return "(no process matches \"" + v.filter + "\")";
  return "(no processes on the NPUs)";
}

void draw_header(const Region& r, const std::vector<ColumnSpan>& cols, const ViewState& v, std::size_t total,
                 int first, int shown) {
  r.fill({0, 0, r.width(), 1}, ' ', Style::kColumns);
  for (const auto& c : cols) {
    auto key = static_cast<SortKey>(c.id);
    bool sorted = key == v.sort;
    std::string label = sort_key_label(key, c.w - (sorted ? 1 : 0));
    if (sorted) append_utf8(label, v.descending ? r.glyphs().arrow_down : r.glyphs().arrow_up);
    if (key == SortKey::kName) r.text(c.x, 0, label, Style::kColumns);
    else r.text_right(c.x + c.w, 0, label, Style::kColumns);
  }
  if (static_cast<int>(total) > shown) {
    std::string where = " " + std::to_string(first + 1) + "-" + std::to_string(first + shown) + "/" +
                        std::to_string(total) + " ";
    r.text_right(r.width(), 0, where, Style::kColumns);
  }
}

}  // namespace

void draw_processes(const Region& r, const Frame& f, const ViewState& v) {
  if (r.height() <= 0) return;
  auto cols = process_columns(r.width());
  auto rows = visible_processes(f, v);
  const int page = r.height() - 1;
  const int sel = selected_row(rows, v);
  const int first = first_visible_row(sel, page);
  const int shown = std::min(page, static_cast<int>(rows.size()) - first);
  draw_header(r, cols, v, rows.size(), first, std::max(shown, 0));
  if (rows.empty()) {
    r.text(1, 1, empty_text(f, v), Style::kDim);
    return;
  }
  for (int i = 0; i < shown; ++i) {
    const ProcessRow& p = *rows[static_cast<std::size_t>(first + i)];
    bool selected = first + i == sel;
    Style style = selected ? Style::kSelected : Style::kNormal;
    if (selected) r.fill({0, 1 + i, r.width(), 1}, ' ', style);
    for (const auto& c : cols) {
      auto key = static_cast<SortKey>(c.id);
      std::string text = fit(cell_text(p, key), c.w);
      if (key == SortKey::kName) r.text(c.x, 1 + i, text, style);
      else r.text_right(c.x + c.w, 1 + i, text, key == SortKey::kShare && !p.share && !selected ? Style::kDim : style);
    }
  }
}

}  // namespace npukit::top
