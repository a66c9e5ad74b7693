#include "smi/top/app.hpp"

#include <cstdio>
#include <langinfo.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <iostream>
#include <thread>

#include "smi/top/canvas.hpp"
#include "smi/top/collector.hpp"
#include "smi/top/curses.hpp"
#include "smi/top/input.hpp"
#include "smi/top/recording.hpp"
#include "smi/top/render.hpp"
#include "telemetry/naming.hpp"

namespace npukit::top {

namespace {

// Where frames come from: the node's bus, or a recording replayed on an in-process bus.
struct Source {
  std::unique_ptr<Replayer> replayer;
  std::unique_ptr<Collector> collector;
  std::size_t replayed = 0;

  // The next frame: a replay advances one recorded frame per call (and stays on the last).
  std::shared_ptr<const Frame> next() {
    if (replayer && replayed < replayer->frames()) replayer->step(replayed++);
    return collector->collect();
  }
};

Result<Source> open_source(const Options& o) {
  Source s;
  if (o.replay.empty()) {
    s.collector = Collector::for_node({.node = o.node});
    return s;
  }
  auto rec = load_recording(o.replay);
  if (!rec.ok()) return rec.status();
  std::string node = rec->node.node_name;
  auto replayer = Replayer::create(std::move(*rec));
  if (!replayer.ok()) return InvalidArgument(o.replay + ": " + replayer.status().message());
  s.replayer = std::move(*replayer);
  s.collector = std::make_unique<Collector>(CollectorOptions{.node = node}, s.replayer->opener(), s.replayer->clock());
  return s;
}

}  // namespace

Result<std::pair<int, int>> parse_size(std::string_view text) {
  auto bad = [&] { return InvalidArgument("invalid size '" + std::string(text) + "': use WxH, e.g. 120x40 (1-1000 each)"); };
  auto x = text.find('x');
  if (x == std::string_view::npos || x == 0 || x + 1 >= text.size()) return bad();
  auto number = [](std::string_view s) {
    if (s.empty() || s.size() > 4 || !std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; })) return -1;
    return std::stoi(std::string(s));
  };
  int w = number(text.substr(0, x)), h = number(text.substr(x + 1));
  if (w < 1 || h < 1 || w > 1000 || h > 1000) return bad();
  return std::pair{w, h};
}

Status validate(const Options& o) {
  if (!(o.interval_s >= kMinInterval && o.interval_s <= kMaxInterval)) {
    char given[32];  // as given: 0, 1e+300, nan (std::to_string printed 0.000000)
    std::snprintf(given, sizeof given, "%g", o.interval_s);
    return InvalidArgument(std::string("--interval ") + given + ": use 0.05 to 3600 seconds");
  }
  if (o.frames < 0) return InvalidArgument("--frames must be positive");
  if (!o.record.empty() && o.frames == 0) return InvalidArgument("--record needs --frames N (headless mode)");
  if (!o.record.empty() && !o.replay.empty()) return InvalidArgument("--record and --replay cannot be combined");
  if (std::find(std::begin(kWindowSeconds), std::end(kWindowSeconds), o.window_s) == std::end(kWindowSeconds)) {
    return InvalidArgument("--window " + std::to_string(o.window_s) + ": use 30, 60, 300, 900 or 3600");
  }
  if (o.replay.empty()) return telemetry::validate_node_name(o.node);
  return Status::Ok();
}

ViewState initial_view(const Options& o, bool unicode) {
  ViewState v;
  if (o.sort) v.sort = *o.sort;
  v.descending = !o.ascending;
  v.filter = o.filter;
  v.device_view = o.view;
  auto w = std::find(std::begin(kWindowSeconds), std::end(kWindowSeconds), o.window_s);
  v.window = w == std::end(kWindowSeconds) ? 1 : static_cast<int>(w - std::begin(kWindowSeconds));
  v.interval_s = o.interval_s;
  v.mono = o.mono;
  v.unicode = unicode && !o.ascii;
  return v;
}

namespace {

// The first view: a replay shows the interval its recording was made at unless -d says otherwise
// (it said "every 1s" over a recording of -d 0.2).
ViewState view_of(const Options& o, const Source& s) {
  ViewState v = initial_view(o, locale_is_utf8());
  if (s.replayer && !o.interval_given && s.replayer->interval_s() > 0) v.interval_s = s.replayer->interval_s();
  return v;
}

}  // namespace

bool locale_is_utf8() {
  const char* codeset = nl_langinfo(CODESET);
  return codeset != nullptr && (std::strcmp(codeset, "UTF-8") == 0 || std::strcmp(codeset, "utf8") == 0);
}

int run_headless(const Options& o, std::ostream& out, std::ostream& err) {
  auto source = open_source(o);
  if (!source.ok()) {
    err << "npu-top: " << source.status().message() << "\n";
    return kExitUsage;
  }
  Source& s = *source;
  ViewState v = view_of(o, s);
  TextCanvas canvas(o.width, o.height);
  Recording rec;
  int frames = s.replayer ? std::min<int>(o.frames, static_cast<int>(s.replayer->frames())) : o.frames;
  auto interval = std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(o.interval_s));
  auto next = std::chrono::steady_clock::now();
  bool stale = false;  // the last frame's node was stale: printed, and exit 5 as --help says
  for (int i = 0; i < frames; ++i) {
    if (!s.replayer && i > 0) {
      next += interval;
      std::this_thread::sleep_until(next);
    }
    auto f = s.next();
    if (i == 0 && f->state == NodeState::kAbsent) {
      err << "npu-top: " << f->message << "\n";
      return f->denied ? kExitPermission : kExitNoNode;
    }
    stale = f->state == NodeState::kStale;
    if (!o.record.empty() && f->state != NodeState::kAbsent) record_frame(rec, *f);
    render(canvas, *f, v);
    out << (i > 0 ? "\n" : "") << canvas.text() << std::flush;
  }
  if (!o.record.empty()) {
    rec.interval_s = o.interval_s;
    Status saved = save_recording(o.record, rec);
    if (!saved.ok()) {
      err << "npu-top: " << saved.message() << "\n";
      return kExitError;
    }
  }
  return stale && !s.replayer ? kExitNoNode : kExitOk;
}

int run(const Options& o) {
  if (o.frames > 0) return run_headless(o, std::cout, std::cerr);
  if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
    std::cerr << "npu-top: not a terminal; for text output use --frames N [--size WxH]\n";
    return kExitUsage;
  }
  auto source = open_source(o);
  if (!source.ok()) {
    std::cerr << "npu-top: " << source.status().message() << "\n";
    return kExitUsage;
  }
  auto control = system_process_control();
  Source& s = *source;
  return run_curses(o, [&s] { return s.next(); }, view_of(o, s), *control);
}

}  // namespace npukit::top
