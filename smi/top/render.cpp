#include "smi/top/render.hpp"

#include <algorithm>
#include <sstream>
#include <vector>

#include "smi/top/draw.hpp"
#include "smi/top/format.hpp"
#include "smi/top/input.hpp"

namespace npukit::top {

namespace {

constexpr std::string_view kSeparator = "   ";

std::string alarm_text(const Alarm& a) { return "! " + a.text; }

// "8 NPUs", or "4 NPUs, 8 chips" where cards hold two chips (310P): npu-smi's NPU is the card.
std::string npu_count(const telemetry::Snapshot& s) {
  const int chips = s.device_count();
  const int cards = s.node().card_count;
  if (cards <= 0 || cards >= chips) return std::to_string(chips) + " NPUs";
  return std::to_string(cards) + " NPUs, " + std::to_string(chips) + " chips";
}

Style severity_style(Severity s) {
  return s == Severity::kCritical ? Style::kCrit : s == Severity::kWarning ? Style::kWarn : Style::kAccent;
}

void draw_header(const Region& r, const Frame& f, const ViewState& v) {
  const Glyphs& g = r.glyphs();
  r.fill({0, 0, r.width(), 1}, ' ', Style::kTitle);
  std::string right = "every " + format_interval(v.interval_s) + "  window " + format_window(window_ns(v)) + " ";
  if (v.paused) right = "PAUSED  " + right;
  int right_x = std::max(0, r.width() - display_width(right));
  Region left = r.sub({0, 0, right_x - 1, 1});
  int x = left.text(1, 0, "npu-top", Style::kTitle) + 3;
  std::string node = f.node;
  if (f.state != NodeState::kAbsent) {
    node += "  " + f.snapshot.node().node_spec + "  " + npu_count(f.snapshot);
  }
  x += left.text(x, 0, node, Style::kTitle) + 2;
  std::string state;
  append_utf8(state, f.state == NodeState::kLive ? g.dot_live : g.dot_dead);
  state += f.state == NodeState::kLive ? " live" : f.state == NodeState::kStale ? " STALE" : " absent";
  x += left.text(x, 0, state, f.state == NodeState::kLive ? Style::kTitle : Style::kCrit) + 2;
  auto vt = f.snapshot.node_field(telemetry::fid::kNodeVirtualTimeNs);
  if (f.state == NodeState::kLive && vt.ok()) {
    std::string up = "up " + format_uptime(vt.as_u64());
    if (x + display_width(up) <= left.width()) left.text(x, 0, up, Style::kTitle);  // whole or not at all
  }
  r.text(right_x, 0, right, v.paused ? Style::kWarn : Style::kTitle);
}

void draw_banner(const Region& r, const Frame& f) {
  auto lines = pack_alarms(f.alarms, r.width(), r.height());
  for (std::size_t y = 0; y < lines.size(); ++y) {
    int x = 0;
    for (const Alarm* a : lines[y].alarms) {
      x += r.text(x, static_cast<int>(y), alarm_text(*a), severity_style(a->severity));
      x += display_width(kSeparator);
    }
    if (lines[y].more > 0) r.text(x, static_cast<int>(y), "+" + std::to_string(lines[y].more) + " more", Style::kDim);
  }
}

// The message wrapped at word boundaries to the region's width (a node name makes it long).
void draw_message(const Region& r, const Frame& f, const ViewState& v) {
  int y = 0;
  std::string line;
  auto flush = [&] {
    if (!line.empty()) r.text(1, y++, line, Style::kCrit);
    line.clear();
  };
  // Clauses ("...; start it with: npu-emud start ...") start a line when the whole does not fit,
  // so the command to type stays in one piece.
  std::vector<std::string> clauses;
  const bool fits = display_width(f.message) <= r.width() - 2;
  for (std::size_t start = 0; start < f.message.size();) {
    std::size_t cut = f.message.size(), keep = 0;  // keep: the punctuation that ends the clause
    for (const char* sep : {"; ", ": ", " ("}) {
      std::size_t at = f.message.find(sep, start);
      if (!fits && at != std::string::npos && at < cut) cut = at, keep = sep[0] == ' ' ? 0 : 1;
    }
    clauses.push_back(f.message.substr(start, cut - start + keep));
    start = cut + (cut < f.message.size() ? 1 : 0);
  }
  for (const std::string& clause : clauses) {
    std::istringstream words(clause);
    for (std::string w; words >> w;) {
      if (!line.empty() && display_width(line) + 1 + display_width(w) > r.width() - 2) flush();
      line += (line.empty() ? "" : " ") + w;
    }
    flush();
  }
  r.text(1, y, "retrying every " + format_interval(v.interval_s) + "; q quits", Style::kDim);
}

// The dialog's hint, or as many key hints as fit in `width`.
std::string footer_hints(const ViewState& v, int width) {
  switch (v.mode) {
    case Mode::kHelp: return "any key closes the help";
    case Mode::kSignalPick: return "Up/Down choose  Enter send  Esc cancel";
    case Mode::kSignalConfirm: return "y sends  any other key cancels";
    default: break;
  }
  // Every hint two spaces apart when they fit, else one space apart, else the first ones.
  for (const char* gap : {"  ", " "}) {
    std::string hints;
    bool all = true;
    for (const auto& k : key_help()) {
      if (k.hint.empty()) continue;
      std::string next = hints + (hints.empty() ? "" : gap) + std::string(k.hint);
      if (display_width(next) > width) {
        all = false;
        if (std::string(gap) == " ") return hints;
        break;
      }
      hints = std::move(next);
    }
    if (all) return hints;
  }
  return "";
}

void draw_footer(const Region& r, const Frame& f, const ViewState& v) {
  if (v.mode == Mode::kFilter) {
    int x = r.text(0, 0, "Filter: ", Style::kBold);
    x += r.text(x, 0, v.filter, Style::kNormal);
    r.set(x, 0, r.glyphs().cursor, Style::kNormal);
    r.text(x + 3, 0, "Enter keeps  Esc clears", Style::kDim);
    return;
  }
  std::string right;
  if (!v.filter.empty()) right = "filter \"" + v.filter + "\"  ";
  right += std::to_string(visible_processes(f, v).size()) + "/" + std::to_string(f.processes.size()) + " procs";
  int right_x = std::max(0, r.width() - display_width(right));
  r.text(right_x, 0, right, v.filter.empty() ? Style::kDim : Style::kWarn);
  Region left = r.sub({0, 0, right_x - 1, 1});
  int x = 0;
  if (!v.status.empty()) x = left.text(0, 0, v.status, Style::kWarn) + 2;
  left.text(x, 0, footer_hints(v, left.width() - x), Style::kDim);
}

// A centred dialog box of at most w x h, its interior cleared; returns the interior.
Region dialog(Canvas& c, const Glyphs& g, int w, int h, const std::string& title) {
  w = std::min(w, c.width() - 2);
  h = std::min(h, c.height() - 2);
  Region box(c, {(c.width() - w) / 2, (c.height() - h) / 2, w, h}, g);
  box.fill({0, 0, w, h}, ' ', Style::kNormal);
  box.box(title, Style::kBold, Style::kBold);
  return box.sub({2, 1, w - 4, h - 2});
}

void draw_help(Canvas& c, const Glyphs& g) {
  std::vector<std::pair<std::string, std::string>> lines;
  for (const auto& k : key_help()) lines.emplace_back(std::string(k.keys), std::string(k.action));
  lines.emplace_back("", "");
  lines.emplace_back("NA  -", "not supported by the device; no value right now");
  lines.emplace_back("Share(%)", "the NPU's AI-core utilization split by HBM held");
  lines.emplace_back("colour", "NO_COLOR or --mono: none; --ascii: no UTF-8");
  int key_w = 0, action_w = 0;
  for (const auto& [k, a] : lines) {
    key_w = std::max(key_w, display_width(k));
    action_w = std::max(action_w, display_width(a));
  }
  Region in = dialog(c, g, key_w + action_w + 6, static_cast<int>(lines.size()) + 2, "npu-top help");
  key_w = std::min(key_w, in.width() / 3);
  for (std::size_t i = 0; i < lines.size(); ++i) {
    in.text(0, static_cast<int>(i), lines[i].first, Style::kBold, key_w);
    in.text(key_w + 2, static_cast<int>(i), lines[i].second, Style::kNormal);
  }
}

void draw_signal_dialog(Canvas& c, const Glyphs& g, const ViewState& v) {
  std::string who = "PID " + std::to_string(v.signal_target.pid) + " (" + v.signal_target_name + ") on NPU " +
                    std::to_string(v.signal_target.device);
  const auto& sig = signal_choices()[static_cast<std::size_t>(v.signal_index)];
  if (v.mode == Mode::kSignalConfirm) {
    Region in = dialog(c, g, display_width(who) + 24, 4, "confirm");
    in.text(0, 0, "Send " + std::string(sig.name) + " to " + who + "?", Style::kBold);
    in.text(0, 1, "y: send   any other key: cancel", Style::kDim);
    return;
  }
  auto choices = signal_choices();
  Region in = dialog(c, g, std::max(40, display_width(who) + 8), static_cast<int>(choices.size()) + 3,
                     "send a signal");
  in.text(0, 0, who, Style::kBold);
  for (std::size_t i = 0; i < choices.size(); ++i) {
    bool on = static_cast<int>(i) == v.signal_index;
    std::string line = std::to_string(choices[i].number) + "  " + choices[i].name;
    if (on) in.fill({0, 1 + static_cast<int>(i), in.width(), 1}, ' ', Style::kSelected);
    in.text(1, 1 + static_cast<int>(i), line, on ? Style::kSelected : Style::kNormal);
  }
}

void draw_too_small(Canvas& c, const Glyphs& g, const Layout& l, int devices) {
  Region r(c, {0, 0, c.width(), c.height()}, g);
  const std::string lines[] = {
      "terminal " + std::to_string(c.width()) + "x" + std::to_string(c.height()) + " is too small",
      "npu-top needs " + std::to_string(l.min_width) + "x" + std::to_string(l.min_height) + " for " +
          std::to_string(devices) + " NPUs",
      "enlarge it, or q to quit"};
  int y = std::max(0, (c.height() - 3) / 2);
  for (int i = 0; i < 3; ++i) {
    int x = std::max(0, (c.width() - display_width(lines[i])) / 2);
    r.text(x, y + i, lines[i], i == 0 ? Style::kWarn : Style::kNormal);
  }
}

}  // namespace

std::vector<BannerLine> pack_alarms(const std::vector<Alarm>& alarms, int width, int max_lines) {
  std::vector<BannerLine> lines;
  int used = width;
  const int sep = display_width(kSeparator);
  for (const auto& a : alarms) {
    int w = display_width(alarm_text(a));
    if (lines.empty() || used + sep + w > width) {
      lines.emplace_back();
      used = -sep;
    }
    lines.back().alarms.push_back(&a);
    used += sep + w;
  }
  if (static_cast<int>(lines.size()) <= max_lines) return lines;
  int more = 0;
  for (std::size_t i = static_cast<std::size_t>(std::max(max_lines, 0)); i < lines.size(); ++i) {
    more += static_cast<int>(lines[i].alarms.size());
  }
  lines.resize(static_cast<std::size_t>(std::max(max_lines, 0)));
  if (lines.empty()) return lines;
  auto& last = lines.back();
  auto line_width = [&] {
    int w = 0;
    for (const Alarm* a : last.alarms) w += display_width(alarm_text(*a)) + sep;
    return w + display_width("+" + std::to_string(more) + " more");
  };
  while (last.alarms.size() > 1 && line_width() > width) {
    last.alarms.pop_back();
    ++more;
  }
  last.more = more;
  return lines;
}

Layout layout_for(const Frame& f, const ViewState& v, int width, int height) {
  int banner = static_cast<int>(pack_alarms(f.alarms, width, kMaxBannerLines).size());
  return compute_layout({width, height, f.devices(), banner, v.device_view});
}

Layout render(Canvas& c, const Frame& f, const ViewState& v) {
  c.clear();
  const Glyphs& g = v.unicode ? unicode_glyphs() : ascii_glyphs();
  Layout l = layout_for(f, v, c.width(), c.height());
  if (l.too_small) {
    draw_too_small(c, g, l, f.devices());
    return l;
  }
  draw_header(Region(c, l.header, g), f, v);
  if (!l.banner.empty()) draw_banner(Region(c, l.banner, g), f);
  if (!l.message.empty()) draw_message(Region(c, l.message, g), f, v);
  draw_devices(c, l, f, v, g);
  draw_processes(Region(c, l.processes, g), f, v);
  draw_footer(Region(c, l.footer, g), f, v);
  if (v.mode == Mode::kHelp) draw_help(c, g);
  if (v.mode == Mode::kSignalPick || v.mode == Mode::kSignalConfirm) draw_signal_dialog(c, g, v);
  return l;
}

}  // namespace npukit::top
