// The view state and the keys: sorting, filtering, selection, dialogs, signals (with a fake
// and with a real child process), interval steps and the mouse.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "smi/top/input.hpp"
#include "tests/smi/top/top_test_util.hpp"

namespace npukit::top::testing {
namespace {

Frame frame_with(std::vector<ProcessRow> rows) {
  Frame f;
  f.state = NodeState::kLive;
  f.processes = std::move(rows);
  return f;
}

Frame sample_frame() {
  return frame_with({{300, 1, 4ull << 30, "python3", 50.0, "1"},
                     {100, 0, 8ull << 30, "Trainer", 20.0, "0"},
                     {200, 0, 2ull << 30, "infer", std::nullopt, "0"},
                     {100, 1, 1ull << 30, "Trainer", 10.0, "1"}});
}

std::vector<int> pids(const Frame& f, const ViewState& v) {
  std::vector<int> out;
  for (const auto* p : visible_processes(f, v)) out.push_back(p->pid * 10 + p->device);
  return out;
}

struct FakeControl : ProcessControl {
  Status may_signal(int pid) override {
    if (pid == 300) return Status(Code::kFailedPrecondition, "pid 300 belongs to uid 0, not to you (uid 1000)");
    return Status::Ok();
  }
  Status send(int pid, int signal) override {
    sent.emplace_back(pid, signal);
    return Status::Ok();
  }
  std::vector<std::pair<int, int>> sent;
};

TEST(TopView, SortsByEveryColumnBothWays) {
  Frame f = sample_frame();
  ViewState v;
  EXPECT_EQ(v.sort, SortKey::kMemory);
  EXPECT_EQ(pids(f, v), (std::vector<int>{1000, 3001, 2000, 1001}));
  v.sort = SortKey::kPid;
  v.descending = false;
  EXPECT_EQ(pids(f, v), (std::vector<int>{1000, 1001, 2000, 3001}));
  v.sort = SortKey::kDevice;
  EXPECT_EQ(pids(f, v), (std::vector<int>{1000, 2000, 1001, 3001}));
  v.sort = SortKey::kShare;
  v.descending = true;
  EXPECT_EQ(pids(f, v), (std::vector<int>{3001, 1000, 1001, 2000})) << "no share sorts last";
  v.sort = SortKey::kName;
  v.descending = false;
  EXPECT_EQ(pids(f, v), (std::vector<int>{2000, 3001, 1000, 1001})) << "names sort case-insensitively";
}

TEST(TopView, FilterMatchesNameOrPidIgnoringCase) {
  Frame f = sample_frame();
  ViewState v;
  v.filter = "TRAIN";
  EXPECT_EQ(pids(f, v), (std::vector<int>{1000, 1001}));
  v.filter = "30";
  EXPECT_EQ(pids(f, v), (std::vector<int>{3001}));
  v.filter = "nothing";
  EXPECT_TRUE(pids(f, v).empty());
}

TEST(TopView, SelectionFollowsTheProcessAndStaysInPlaceWhenItGoesAway) {
  Frame f = sample_frame();
  ViewState v;
  FakeControl control;
  auto rows = visible_processes(f, v);
  EXPECT_EQ(selected_row(rows, v), 0) << "a row is always selected";
  handle_key(v, kKeyDown, f, 10, control);
  handle_key(v, kKeyDown, f, 10, control);
  ASSERT_TRUE(v.selected.has_value());
  EXPECT_EQ(*v.selected, (ProcessKey{200, 0}));
  handle_key(v, 's', f, 10, control);  // sort by share: infer moves to the end
  rows = visible_processes(f, v);
  EXPECT_EQ(rows[static_cast<std::size_t>(selected_row(rows, v))]->pid, 200);
  Frame gone = frame_with({f.processes[0], f.processes[1], f.processes[3]});
  rows = visible_processes(gone, v);
  EXPECT_EQ(selected_row(rows, v), 2) << "same index as before";
  handle_key(v, kKeyEnd, f, 10, control);
  EXPECT_EQ(v.selected_index, 3);
  handle_key(v, kKeyPageUp, f, 2, control);
  EXPECT_EQ(v.selected_index, 1);
  handle_key(v, kKeyHome, f, 2, control);
  EXPECT_EQ(v.selected_index, 0);
  EXPECT_EQ(first_visible_row(5, 4), 4);
  EXPECT_EQ(first_visible_row(3, 4), 0);
}

TEST(TopView, KeysDoWhatTheHelpSays) {
  Frame f = sample_frame();
  FakeControl control;
  ViewState v;
  EXPECT_EQ(handle_key(v, 'q', f, 10, control), Outcome::kQuit);
  EXPECT_EQ(handle_key(v, kKeyEscape, f, 10, control), Outcome::kQuit);
  for (char32_t k : {U'h', U'?'}) {
    EXPECT_EQ(handle_key(v, k, f, 10, control), Outcome::kRedraw);
    EXPECT_EQ(v.mode, Mode::kHelp);
    EXPECT_EQ(handle_key(v, kKeyResize, f, 10, control), Outcome::kRedraw);
    EXPECT_EQ(v.mode, Mode::kHelp) << "a resize keeps the help open";
    EXPECT_EQ(handle_key(v, 'q', f, 10, control), Outcome::kRedraw) << "q closes the help, not the program";
    EXPECT_EQ(v.mode, Mode::kNormal);
  }
  // Each key's effect, and the footer line that says what it did (the change may not show).
  handle_key(v, 's', f, 10, control);
  EXPECT_EQ(v.sort, SortKey::kShare);
  EXPECT_EQ(v.status, "sorted by share");
  handle_key(v, 'r', f, 10, control);
  EXPECT_FALSE(v.descending);
  EXPECT_EQ(v.status, "sorted ascending");
  EXPECT_EQ(handle_key(v, '-', f, 10, control), Outcome::kCollect);
  EXPECT_DOUBLE_EQ(v.interval_s, 0.5);
  EXPECT_EQ(v.status, "refresh every 0.5s");
  handle_key(v, '+', f, 10, control);
  handle_key(v, '+', f, 10, control);
  EXPECT_DOUBLE_EQ(v.interval_s, 2.0);
  EXPECT_EQ(v.status, "refresh every 2s");
  EXPECT_EQ(handle_key(v, 'p', f, 10, control), Outcome::kRedraw);
  EXPECT_TRUE(v.paused);
  EXPECT_EQ(v.status, "paused (p resumes)");
  EXPECT_EQ(handle_key(v, ' ', f, 10, control), Outcome::kCollect);
  EXPECT_FALSE(v.paused);
  EXPECT_EQ(v.status, "resumed");
  handle_key(v, 'v', f, 10, control);
  EXPECT_EQ(v.device_view, DeviceView::kCompact);
  EXPECT_EQ(v.status, "view: compact");
  handle_key(v, 'w', f, 10, control);
  EXPECT_EQ(window_ns(v), 300'000'000'000ull);
  EXPECT_EQ(v.status, "history window 5m");
  handle_key(v, ']', f, 10, control);
  EXPECT_EQ(v.status, "history of NPU " + std::to_string(v.focus_device));
  EXPECT_EQ(handle_key(v, 'x', f, 10, control), Outcome::kRedraw);
  EXPECT_EQ(v.status, "no action on that key: h shows the keys");
  EXPECT_EQ(handle_key(v, kKeyResize, f, 10, control), Outcome::kRedraw);
  EXPECT_EQ(v.status, "no action on that key: h shows the keys") << "a resize keeps the last word";
}

TEST(TopView, FilterIsTypedLiveKeptWithEnterAndClearedWithEscape) {
  Frame f = sample_frame();
  FakeControl control;
  ViewState v;
  handle_key(v, '/', f, 10, control);
  EXPECT_EQ(v.mode, Mode::kFilter);
  for (char32_t c : std::u32string(U"trainX")) handle_key(v, c, f, 10, control);
  handle_key(v, kKeyBackspace, f, 10, control);
  EXPECT_EQ(v.filter, "train");
  EXPECT_EQ(pids(f, v).size(), 2u);
  EXPECT_EQ(handle_key(v, 'q', f, 10, control), Outcome::kRedraw) << "q is text while filtering";
  handle_key(v, kKeyBackspace, f, 10, control);
  handle_key(v, kKeyEnter, f, 10, control);
  EXPECT_EQ(v.mode, Mode::kNormal);
  EXPECT_EQ(v.filter, "train");
  handle_key(v, '/', f, 10, control);
  handle_key(v, kKeyEscape, f, 10, control);
  EXPECT_EQ(v.filter, "");
  EXPECT_EQ(v.mode, Mode::kNormal);
}

TEST(TopView, SignalsNeedOwnershipAndConfirmation) {
  Frame f = sample_frame();
  FakeControl control;
  ViewState v;
  handle_key(v, kKeyDown, f, 10, control);  // python3, pid 300: not ours
  handle_key(v, 'k', f, 10, control);
  EXPECT_EQ(v.mode, Mode::kNormal);
  EXPECT_EQ(v.status, "pid 300 belongs to uid 0, not to you (uid 1000)");
  handle_key(v, kKeyHome, f, 10, control);  // Trainer, pid 100
  handle_key(v, 'k', f, 10, control);
  ASSERT_EQ(v.mode, Mode::kSignalPick);
  EXPECT_EQ(v.signal_target, (ProcessKey{100, 0}));
  handle_key(v, kKeyEnter, f, 10, control);
  ASSERT_EQ(v.mode, Mode::kSignalConfirm);
  handle_key(v, 'n', f, 10, control);
  EXPECT_TRUE(control.sent.empty());
  EXPECT_EQ(v.status, "SIGTERM to PID 100 cancelled");
  handle_key(v, 'k', f, 10, control);
  for (int i = 0; i < 3; ++i) handle_key(v, kKeyDown, f, 10, control);
  handle_key(v, kKeyEnter, f, 10, control);
  EXPECT_EQ(handle_key(v, 'y', f, 10, control), Outcome::kCollect);
  ASSERT_EQ(control.sent.size(), 1u);
  EXPECT_EQ(control.sent[0], (std::pair{100, SIGKILL}));
  EXPECT_EQ(v.status, "sent SIGKILL to PID 100 (Trainer)");
  handle_key(v, 'k', f, 10, control);
  EXPECT_EQ(handle_key(v, kKeyEscape, f, 10, control), Outcome::kRedraw);
  EXPECT_EQ(v.mode, Mode::kNormal) << "Esc closes the dialog and does not quit";
  Frame empty = frame_with({});
  handle_key(v, 'k', empty, 10, control);
  EXPECT_EQ(v.status, "no process selected");
}

TEST(TopView, TheSystemControlSignalsOnlyLiveProcessesOfThisUser) {
  pid_t child = fork();
  if (child == 0) {
    execl("/bin/sleep", "sleep", "60", static_cast<char*>(nullptr));
    _exit(127);
  }
  ASSERT_GT(child, 0);
  auto control = system_process_control();
  EXPECT_TRUE(control->may_signal(child).ok()) << control->may_signal(child).message();
  EXPECT_FALSE(control->may_signal(1).ok());
  EXPECT_FALSE(control->may_signal(0).ok());
  EXPECT_FALSE(control->may_signal(-1).ok()) << "kill(-1) would signal everything";
  EXPECT_FALSE(control->send(0, SIGTERM).ok());
  ASSERT_TRUE(control->send(child, SIGTERM).ok());
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFSIGNALED(status));
  EXPECT_EQ(WTERMSIG(status), SIGTERM);
  Status gone = control->may_signal(child);
  EXPECT_EQ(gone.code(), Code::kNotFound) << gone.message();
}

TEST(TopView, IntervalStepsSnapAndStayInRange) {
  EXPECT_DOUBLE_EQ(step_interval(1.0, 1), 2.0);
  EXPECT_DOUBLE_EQ(step_interval(1.0, -1), 0.5);
  EXPECT_DOUBLE_EQ(step_interval(0.3, -1), 0.2);
  EXPECT_DOUBLE_EQ(step_interval(0.3, 1), 0.5);
  EXPECT_DOUBLE_EQ(step_interval(0.1, -1), 0.1);
  EXPECT_DOUBLE_EQ(step_interval(10, 1), 10);
  EXPECT_DOUBLE_EQ(step_interval(0.05, -1), 0.05) << "a --interval below the steps is kept";
  EXPECT_DOUBLE_EQ(step_interval(60, 1), 60);
}

TEST(TopView, MouseSortsSelectsAndFocuses) {
  Frame f = sample_frame();
  ViewState v;
  Layout l = compute_layout({100, 30, 0, 0, DeviceView::kAuto});
  auto cols = process_columns(l.processes.w);
  const ColumnSpan* pid = find_column(cols, static_cast<int>(SortKey::kPid));
  ASSERT_NE(pid, nullptr);
  EXPECT_EQ(handle_mouse(v, pid->x + 1, l.processes.y, MouseButton::kLeft, f, l), Outcome::kRedraw);
  EXPECT_EQ(v.sort, SortKey::kPid);
  EXPECT_TRUE(v.descending);
  handle_mouse(v, pid->x + 1, l.processes.y, MouseButton::kLeft, f, l);
  EXPECT_FALSE(v.descending) << "a second click reverses";
  handle_mouse(v, 5, l.processes.y + 3, MouseButton::kLeft, f, l);
  EXPECT_EQ(v.selected_index, 2);
  handle_mouse(v, 5, l.processes.y + 3, MouseButton::kWheelUp, f, l);
  EXPECT_EQ(v.selected_index, 1);
  EXPECT_EQ(handle_mouse(v, 5, l.processes.y + 20, MouseButton::kLeft, f, l), Outcome::kNone);
  Layout dev = compute_layout({100, 30, 8, 0, DeviceView::kCompact});
  handle_mouse(v, 10, dev.devices[6].y, MouseButton::kLeft, f, dev);
  EXPECT_EQ(v.focus_device, 6);
}

}  // namespace
}  // namespace npukit::top::testing
