// The renderer: draws one Frame through a ViewState onto a Canvas. The same code serves the
// curses frontend and the headless text output. The layout comes from compute_layout()
// (layout.hpp); what goes into it is decided here:
//   header     program, node, spec, device count, live/STALE/absent, node uptime (virtual
//              time), refresh interval, history window, PAUSED
//   banner     alarms (most severe first) packed into up to 3 lines; "+N more" when they do not fit
//   devices    compact rows or detailed panels, and the focused device's history panel
//   message    the no-node message (when the node is absent)
//   processes  the process table
//   footer     a status message and key hints, or the filter being typed, or dialog hints
//   overlays   the help screen, the signal dialog and its confirmation, centred on top
// A terminal below the minimum size shows only a message saying what size is needed.
//
// Thread-safety: pure functions of their arguments (the canvas is written).
#pragma once

#include <vector>

#include "smi/top/canvas.hpp"
#include "smi/top/layout.hpp"
#include "smi/top/model.hpp"
#include "smi/top/view.hpp"

namespace npukit::top {

// Alarms packed greedily into lines of `width` cells, at most `max_lines`; `more` counts the
// alarms that did not fit (shown as "+N more" at the end of the last line).
struct BannerLine {
  std::vector<const Alarm*> alarms;
  int more = 0;
};
std::vector<BannerLine> pack_alarms(const std::vector<Alarm>& alarms, int width, int max_lines);

// The layout render() uses for this frame and view at this size.
Layout layout_for(const Frame& f, const ViewState& v, int width, int height);

// Clears `canvas` and draws the whole screen; returns the layout (for mouse hit-testing).
Layout render(Canvas& canvas, const Frame& f, const ViewState& v);

}  // namespace npukit::top
