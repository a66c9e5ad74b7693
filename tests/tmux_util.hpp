// A real terminal for end-to-end tests: a tmux server of the test's own running one command in
// a pane; keys go in with send-keys, the screen comes out with capture-pane.
#pragma once

#include <unistd.h>

#include <chrono>
#include <string>

#include "tests/daemon_util.hpp"

namespace npukit::testing {

// A tmux server of its own (-L) running one session with `command` in a w x h window.
class Tmux {
 public:
  Tmux(const std::string& tag, int w, int h, const std::string& command)
      : server_("npukit-test-" + std::to_string(getpid()) + "-" + tag) {
    auto r = tmux("new-session -d -s main -x " + std::to_string(w) + " -y " + std::to_string(h) + " '" + command + "'");
    EXPECT_EQ(r.exit_code, 0) << r.output;
    socket_path_ = tmux("display -p '#{socket_path}'").output;
    if (!socket_path_.empty() && socket_path_.back() == '\n') socket_path_.pop_back();
  }
  ~Tmux() {
    tmux("kill-server");
    if (!socket_path_.empty()) ::unlink(socket_path_.c_str());
  }

  std::string screen() { return tmux("capture-pane -p -t main").output; }
  std::string screen_with_attributes() { return tmux("capture-pane -e -p -t main").output; }
  void keys(const std::string& keys) { tmux("send-keys -t main " + keys); }
  void resize(int w, int h) { tmux("resize-window -t main -x " + std::to_string(w) + " -y " + std::to_string(h)); }
  bool running() { return tmux("has-session -t main").exit_code == 0; }
  // Waits until the screen contains `text`; the last screen is in last_screen.
  bool shows(const std::string& text, std::chrono::milliseconds limit = std::chrono::seconds(8)) {
    return eventually([&] { return (last_screen = screen()).find(text) != std::string::npos; }, limit);
  }
  std::string last_screen;

 private:
  npukit::testing::CommandResult tmux(const std::string& args) {
    return run_command("tmux -L " + server_ + " " + args);
  }
  std::string server_;
  std::string socket_path_;
};

}  // namespace npukit::testing
