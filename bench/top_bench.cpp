// npu-top's CPU cost against DESIGN.md section 9: at 1 Hz with 16 devices it may use <= 2% of
// one core. Measured the way people run it: the curses dashboard in a terminal (a 200x60 tmux
// pane) on a live 16-device npu-emud node running a workload, CPU time read from
// /proc/<pid>/stat over 20 s after a 3 s warm-up. Beside it, for reference, the in-process cost
// of one frame (collect + layout + render of 16 devices at 200x60).
#include <benchmark/benchmark.h>

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "bench/budget.hpp"
#include "smi/top/canvas.hpp"
#include "smi/top/collector.hpp"
#include "smi/top/render.hpp"
#include "telemetry/client.hpp"

namespace npukit::top {
namespace {

const bool kBudget = bench::register_budget(
    {"BM_NpuTopCpu1Hz16Devices", "cpu_percent", "%core", 1.0, false, 2.0,
     "DESIGN.md 9: npu-top at 1 Hz, 16 devices"});

std::string run(const std::string& command) {
  std::string out;
  if (FILE* p = popen((command + " 2>&1").c_str(), "r")) {
    char buf[512];
    while (std::fgets(buf, sizeof buf, p) != nullptr) out += buf;
    pclose(p);
  }
  return out;
}

// utime + stime of `pid`, seconds.
double cpu_seconds(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::istringstream rest(stat.substr(stat.rfind(')') + 2));
  std::string field;
  unsigned long long utime = 0, stime = 0;
  for (int i = 3; i <= 15 && rest >> field; ++i) {
    if (i == 14) utime = std::stoull(field);
    if (i == 15) stime = std::stoull(field);
  }
  return static_cast<double>(utime + stime) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

nlohmann::json workload(int devices) {
  nlohmann::json ranks = nlohmann::json::array();
  for (int r = 0; r < devices; ++r) {
    nlohmann::json mm = {{"op", "kernel"}, {"stream", 0}, {"name", "aten::mm"},
                         {"inputs", {{{"shape", {4096, 4096}}, {"dtype", "float16"}}, {{"shape", {4096, 4096}}, {"dtype", "float16"}}}}};
    ranks.push_back({{"device", r}, {"streams", 1}, {"setup", {{{"op", "alloc"}, {"buf", "w"}, {"bytes", 4ll << 30}}}},
                     {"step", {mm, mm, {{"op", "host_delay"}, {"ns", 5'000'000}}}}});
  }
  return {{"name", "bench"}, {"repeat", 1'000'000}, {"process", {{"pid", 0}, {"name", "bench.py"}}}, {"ranks", ranks}};
}

void BM_NpuTopCpu1Hz16Devices(benchmark::State& state) {
  const std::string node = "bench-top-" + std::to_string(getpid());
  const std::string tmux = "tmux -L " + node + " ";
  const std::string emud = NPU_EMUD_PATH;
  run(emud + " start --node-name " + node + " --spec " + NPUKIT_TOP_SPEC);
  auto client = telemetry::ShmClient::open({.node = node});
  if (!client.ok()) return state.SkipWithError(("no node: " + client.status().message()).c_str());
  auto reply = (*client)->control({{"op", "submit"}, {"program", workload(16)}});
  if (!reply.ok() || !reply->value("ok", false)) return state.SkipWithError("cannot submit the workload");
  run(tmux + "new-session -d -s top -x 200 -y 60 'exec " + std::string(NPU_TOP_PATH) + " --node " + node + " --interval 1'");
  std::this_thread::sleep_for(std::chrono::seconds(3));
  int pid = std::atoi(run(tmux + "display -p -t top '#{pane_pid}'").c_str());
  double cpu = 0, wall = 0;
  for (auto _ : state) {
    double c0 = cpu_seconds(pid);
    auto t0 = std::chrono::steady_clock::now();
    std::this_thread::sleep_for(std::chrono::seconds(20));
    cpu = cpu_seconds(pid) - c0;
    wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
  std::string screen = run(tmux + "capture-pane -p -t top");
  std::string socket = run(tmux + "display -p '#{socket_path}'");
  run(tmux + "kill-server");
  if (!socket.empty()) ::unlink(socket.substr(0, socket.find('\n')).c_str());
  run(emud + " stop --node-name " + node);
  if (pid <= 0 || screen.find("16 NPUs") == std::string::npos) return state.SkipWithError("npu-top did not run");
  state.counters["cpu_percent"] = 100.0 * cpu / wall;
}
BENCHMARK(BM_NpuTopCpu1Hz16Devices)->Iterations(1)->Unit(benchmark::kSecond);

// One dashboard frame of a 16-device in-process node: collect, then render at 200x60.
void BM_TopFrame16Devices(benchmark::State& state) {
  telemetry::WriterOptions o;
  o.node = "bench-frame-" + std::to_string(getpid());
  o.node_info.node_spec = "16x910B2";
  for (int d = 0; d < 16; ++d) {
    telemetry::DeviceInfo info;
    info.npu_id = d;
    info.name = "910B2";
    info.bus_id = "0000:10:00.0";
    info.smi_layout = "hbm";
    o.devices.push_back(info);
  }
  auto bus = telemetry::InProcessBus::create(o);
  if (!bus.ok()) return state.SkipWithError("cannot create the bus");
  auto& w = (*bus)->writer();
  uint64_t now = 0;
  Collector collector({.node = o.node}, [b = *bus]() -> Result<std::unique_ptr<telemetry::Client>> { return b->client(); },
                      [&now] { return now; });
  TextCanvas canvas(200, 60);
  ViewState view;
  for (auto _ : state) {
    now += 1'000'000'000;
    for (int d = 0; d < 16; ++d) {
      auto u = w.update_device(d);
      u.set(telemetry::fid::kAicoreUtil, static_cast<double>(now / 1'000'000'000 % 100));
      u.set(telemetry::fid::kPowerWatts, 200.0).set(telemetry::fid::kTemperatureCelsius, 55.0);
    }
    render(canvas, *collector.collect(), view);
    benchmark::DoNotOptimize(canvas.at(0, 0));
  }
  state.counters["s_per_frame"] = benchmark::Counter(static_cast<double>(state.iterations()),
                                                     benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_TopFrame16Devices)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace npukit::top
