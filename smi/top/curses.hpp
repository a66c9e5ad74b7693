// The curses frontend of npu-top: a Canvas over the terminal, the style -> colour mapping and
// the event loop. Everything it draws comes from render() (render.hpp); everything a key
// does comes from handle_key() (input.hpp).
//
// Loop: collect a frame every interval (fixed rate, skipped while paused), draw when a frame
// arrives or a key changed the view, otherwise sleep in the terminal read until the next tick,
// so an idle dashboard costs one collect + one draw per interval. Resize (SIGWINCH) redraws at
// the new size; SIGINT, SIGTERM and SIGHUP end the loop and restore the terminal.
//
// Colour: 256-colour mid tones (readable on dark and light backgrounds) when the terminal has
// them, else the 8 basic colours, always over the terminal's own background; none with --mono
// or a non-empty NO_COLOR (attributes only: bold, reverse, dim, underline).
//
// Thread-safety: runs on the calling thread; one per process (curses is global).
#pragma once

#include <functional>
#include <memory>

#include "smi/top/app.hpp"
#include "smi/top/input.hpp"
#include "smi/top/model.hpp"
#include "smi/top/view.hpp"

namespace npukit::top {

using FrameSource = std::function<std::shared_ptr<const Frame>()>;

// Runs the dashboard until the user quits or a signal arrives. kExitError when the terminal
// cannot be set up.
int run_curses(const Options& o, const FrameSource& next_frame, ViewState view, ProcessControl& control);

}  // namespace npukit::top
