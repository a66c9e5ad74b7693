// Multi-process tests of npu-emud: the real daemon binary, read through the bus from this
// process, controlled over its socket.
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <set>
#include <thread>

#include "emulator/daemon/daemon.hpp"
#include "telemetry/incidents.hpp"
#include "tests/daemon_util.hpp"

namespace npukit::testing {
namespace {

using nlohmann::json;
namespace tf = telemetry;

json small_program(int ranks, int repeat) {
  json rank_list = json::array();
  for (int r = 0; r < ranks; ++r) {
    json mm = {{"op", "kernel"}, {"stream", 0}, {"name", "aten::mm"},
               {"inputs", {{{"shape", {8192, 8192}}, {"dtype", "float16"}}, {{"shape", {8192, 8192}}, {"dtype", "float16"}}}}};
    rank_list.push_back({{"device", r}, {"streams", 1},
                         {"setup", {{{"op", "alloc"}, {"buf", "w"}, {"bytes", 2ll << 30}}}},
                         {"step", {mm, mm, mm, mm, {{"op", "host_delay"}, {"ns", 20'000'000}}}}});
  }
  return {{"name", "daemon-test"}, {"repeat", repeat}, {"process", {{"pid", 0}, {"name", "pytest"}}},
          {"ranks", rank_list}};
}

TEST(Daemon, StartStatusStopAndExitCodes) {
  std::string name = unique_node("life");
  EXPECT_EQ(run_command(emud() + " status --node-name " + name).exit_code, 5);
  auto start = run_command(emud() + " start --node-name " + name + " --spec 8x910B3");
  ASSERT_EQ(start.exit_code, 0) << start.output;
  EXPECT_NE(start.output.find("node '" + name + "' (8x910B3, 8 devices) is ready"), std::string::npos);
  auto again = run_command(emud() + " start --node-name " + name);
  EXPECT_EQ(again.exit_code, 3);
  EXPECT_NE(again.output.find("is already running (pid "), std::string::npos) << again.output;
  auto status = run_command(emud() + " status --node-name " + name);
  EXPECT_EQ(status.exit_code, 0) << status.output;
  EXPECT_NE(status.output.find("8x910B3, 8 devices"), std::string::npos);
  auto stop = run_command(emud() + " stop --node-name " + name);
  EXPECT_EQ(stop.exit_code, 0) << stop.output;
  EXPECT_EQ(run_command(emud() + " status --node-name " + name).exit_code, 5);
  EXPECT_EQ(run_command(emud() + " stop --node-name " + name).exit_code, 5);
  EXPECT_EQ(run_command(emud() + " start --node-name 'bad/name'").exit_code, 4);
  EXPECT_EQ(run_command(emud() + " start --node-name " + name + " --spec 9x9").exit_code, 3);
  // Option values out of range are usage errors naming the option (--speed -1 was the node
  // failing to start, exit 3; --device -1 said to name a device).
  auto speed = run_command(emud() + " start --node-name " + name + " --speed -1");
  EXPECT_EQ(speed.exit_code, 4);
  EXPECT_EQ(speed.output, "npu-emud: --speed: must be in (0, 1000], got -1\n");
  auto device = run_command(emud() + " inject --node-name " + name + " --device -1 --fault ecc-storm");
  EXPECT_EQ(device.exit_code, 4);
  EXPECT_NE(device.output.find("npu-emud: --device: Value -1 not in range 0 to 65535"), std::string::npos) << device.output;
  // --host -1 printed a 300-digit "range" (CLI11's NonNegativeNumber: 0 to the largest double).
  auto host = run_command(emud() + " inject --node-name " + name + " --host -1 --fault host-slow");
  EXPECT_EQ(host.exit_code, 4);
  EXPECT_EQ(host.output.find("npu-emud: --host: Value -1 not in range 0 to 1023\n"), 0u) << host.output;
  ::unlink((tf::control_socket_path(name).substr(0, tf::control_socket_path(name).size() - 5) + ".log").c_str());
}

// Without its spec files (an installed program moved away from share/npukit, or a wrong override)
// the daemon says where it looked and which variable points elsewhere (it said "known: " and
// nothing else).
TEST(Daemon, MissingSpecFilesNameWhereItLookedAndTheOverride) {
  std::string name = unique_node("nospec");
  auto r = run_command("NPUKIT_SPEC_DIR=/nonexistent-npukit-specs " + emud() + " start --node-name " + name);
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("no node spec '8x910B2': no specs in /nonexistent-npukit-specs/nodes "
                          "(set NPUKIT_SPEC_DIR to look elsewhere)"),
            std::string::npos)
      << r.output;
  EXPECT_EQ(run_command(emud() + " status --node-name " + name).exit_code, 5) << "nothing started";
}

TEST(Daemon, PublishesEveryDeviceLive) {
  ScopedNode node("live");
  auto client = node.client();
  ASSERT_TRUE(eventually([&] {
    auto s = client->snapshot();
    return s.ok() && !s->stale() && s->node_field(tf::fid::kNodeVirtualTimeNs).as_u64() > 300'000'000;
  }));
  auto snap = client->snapshot();
  ASSERT_EQ(snap->device_count(), 8);
  for (int d = 0; d < 8; ++d) {
    EXPECT_TRUE(snap->checksum_ok(d));
    EXPECT_NEAR(*snap->device(d, tf::fid::kPowerWatts).number(), 90.0, 1.0);
    EXPECT_EQ(snap->health(d), tf::Health::kOk);
    EXPECT_EQ(snap->device_info(d).bus_id.size(), 12u);
  }
  EXPECT_EQ(snap->node().node_spec, "8x910B2");
}

// A job whose submitter dies (SIGKILL: no chance to cancel) is cancelled by the daemon, which
// frees its memory; it used to run on as an orphan holding the devices. The submitter is reaped
// only afterwards: a killed process stays a zombie until then (kill(pid, 0) still succeeds), and
// a parent that reaps late must not keep the job alive.
TEST(Daemon, AJobDiesWithTheProcessThatSubmittedIt) {
  ScopedNode node("orphan");
  pid_t child = ::fork();
  if (child == 0) {
    auto c = telemetry::ShmClient::open({.node = node.name()});
    if (c.ok()) (void)(*c)->control({{"op", "submit"}, {"program", small_program(2, 100000)}});
    ::pause();  // until killed
    ::_exit(0);
  }
  ASSERT_GT(child, 0);
  ASSERT_TRUE(eventually([&] { return !node.control({{"op", "list_jobs"}})["jobs"].empty(); }));
  ASSERT_EQ(node.control({{"op", "list_jobs"}})["jobs"][0]["state"], "running");
  ::kill(child, SIGKILL);
  json job;
  EXPECT_TRUE(eventually([&] { return (job = node.control({{"op", "list_jobs"}})["jobs"][0])["state"] == "cancelled"; }))
      << job.dump();
  ::waitpid(child, nullptr, 0);
  EXPECT_EQ(job["error"], "cancelled: its submitting process " + std::to_string(child) + " exited");
  EXPECT_TRUE(eventually([&] { return node.client()->snapshot()->processes().empty(); }));
}

// Private by default: segment and socket 0600; another user gets one line and the documented
// code from every tool (6, "no access", in each). --access all opens reading, never
// control. Run as root, switching to nobody with setpriv.
TEST(Daemon, NodesArePrivateByDefaultAndAccessAllOpensReadingOnly) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to run tools as uid 65534";
  const std::string as_nobody = "setpriv --reuid=65534 --regid=65534 --clear-groups ";
  const std::string smi = std::string(NPUKIT_BUILD_DIR) + "/smi/npu-smi", prof = std::string(NPUKIT_BUILD_DIR) + "/profiler/npu-prof";
  const std::string top_path = NPU_TOP_PATH, run_path = NPU_RUN_PATH;
  // The workload nobody submits, where nobody can read it whatever the checkout's directory
  // allows (a clone under a 0700 mktemp directory: npu-run would stop at reading the file).
  const std::string burn = "/tmp/npukit-burn-" + std::to_string(::getpid()) + ".json";
  std::filesystem::copy_file(std::string(NPUKIT_SOURCE_DIR) + "/workloads/builtin/burn.json", burn,
                             std::filesystem::copy_options::overwrite_existing);
  ::chmod(burn.c_str(), 0644);
  struct RemoveBurn {
    std::string path;
    ~RemoveBurn() { std::remove(path.c_str()); }
  } remove_burn{burn};
  {
    ScopedNode node("private");
    struct stat st {};
    ASSERT_EQ(::stat(tf::shm_path(node.name()).c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0600u);
    ASSERT_EQ(::stat(tf::control_socket_path(node.name()).c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0600u);
    auto info = run_command(as_nobody + smi + " info --node-name " + node.name());
    EXPECT_EQ(info.exit_code, 6) << info.output;
    EXPECT_NE(info.output.find("Permission denied (the node is private to its owner; npu-emud start --access group|all shares it)"),
              std::string::npos) << info.output;
    auto inject = run_command(as_nobody + emud() + " inject --node-name " + node.name() + " --device 0 --fault ecc-storm");
    EXPECT_EQ(inject.exit_code, 6) << inject.output;
    auto record = run_command(as_nobody + prof + " record -o /tmp/npukit-denied-" + node.name() + " --node-name " + node.name() +
                              " --attach --duration 1");
    EXPECT_EQ(record.exit_code, 6) << record.output;
    auto top = run_command(as_nobody + top_path + " --frames 1 --node " + node.name());
    EXPECT_EQ(top.exit_code, 6) << top.output;
    EXPECT_NE(top.output.find("Permission denied (the node is private to its owner"), std::string::npos) << top.output;
    auto job = run_command(as_nobody + run_path + " " + burn + " --steps 1 --node " + node.name());
    EXPECT_EQ(job.exit_code, 6) << job.output;
    EXPECT_EQ(job.output.find("--standalone"), std::string::npos) << "no node-less hint for a refusal: " << job.output;
  }
  ScopedNode open("open", "--access all");
  EXPECT_EQ(run_command(as_nobody + smi + " info --node-name " + open.name()).exit_code, 0);
  EXPECT_EQ(run_command(as_nobody + top_path + " --frames 1 --node " + open.name()).exit_code, 0);
  auto inject = run_command(as_nobody + emud() + " inject --node-name " + open.name() + " --device 0 --fault ecc-storm");
  EXPECT_EQ(inject.exit_code, 6) << inject.output;
  EXPECT_NE(inject.output.find("permission denied: uid 65534 may not inject"), std::string::npos) << inject.output;
  auto job = run_command(as_nobody + run_path + " " + burn + " --steps 1 --node " + open.name());
  EXPECT_EQ(job.exit_code, 6) << job.output;
  EXPECT_NE(job.output.find("npu-run: permission denied: uid 65534 may not submit"), std::string::npos) << job.output;
  auto set = run_command(as_nobody + smi + " set -t power-limit -i 0 -c 0 -d 300 --node-name " + open.name());
  EXPECT_EQ(set.exit_code, 6) << set.output;
  EXPECT_NE(set.output.find("permission denied: uid 65534 may not set"), std::string::npos) << set.output;
}

// A step of one sync takes no virtual time, so a billion of them never let the node thread reach
// the wall-mapped time: the daemon once answered nothing, `stop` included (found by
// tests/fuzz/control). It simulates in 20 ms slices and serves requests in between.
TEST(Daemon, AProgramThatNeverAdvancesTimeCannotLockTheDaemon) {
  ScopedNode node("spin");
  json spin = {{"name", "spin"}, {"repeat", 1'000'000'000'000ll},
               {"ranks", {{{"device", 0}, {"streams", 1}, {"step", {{{"op", "sync"}}}}}}}};
  json reply = node.control({{"op", "submit"}, {"program", spin}});
  ASSERT_TRUE(reply.value("ok", false)) << reply.dump();
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  auto c = telemetry::ShmClient::open({.node = node.name(), .control_timeout = std::chrono::seconds(2)});
  ASSERT_TRUE(c.ok());
  auto start = std::chrono::steady_clock::now();
  auto status = (*c)->control({{"op", "status"}});
  ASSERT_TRUE(status.ok()) << status.status().message();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(500));
  EXPECT_EQ((*status)["jobs_running"], 1);
  auto cancel = (*c)->control({{"op", "cancel"}, {"job", reply["job"]}});
  ASSERT_TRUE(cancel.ok()) << cancel.status().message();
  EXPECT_TRUE(eventually([&] { return node.control({{"op", "job_status"}, {"job", reply["job"]}})["job"]["state"] == "cancelled"; }));
  EXPECT_EQ(run_command(emud() + " stop --node-name " + node.name()).exit_code, 0);
}

TEST(Daemon, ItsLogIsNeverWrittenThroughASymlink) {
  const std::string node = unique_node("log");
  std::string sock = tf::control_socket_path(node);
  const std::string log = sock.substr(0, sock.size() - 5) + ".log", victim = "/tmp/npukit-victim-" + node;
  ASSERT_EQ(run_command("printf precious > " + victim).exit_code, 0);
  ASSERT_EQ(::symlink(victim.c_str(), log.c_str()), 0);
  auto start = run_command(emud() + " start --node-name " + node);
  EXPECT_EQ(start.exit_code, 0) << start.output;
  EXPECT_EQ(run_command(emud() + " stop --node-name " + node).exit_code, 0);
  struct stat st {};
  ASSERT_EQ(::stat(victim.c_str(), &st), 0);
  EXPECT_EQ(st.st_size, 8) << "the daemon wrote its log through the symlink";
  ::unlink(log.c_str());
  ::unlink(victim.c_str());
}

TEST(Daemon, RunsASubmittedProgramAndAccountsItsMemoryPerProcess) {
  ScopedNode node("job");
  json reply = node.control({{"op", "submit"}, {"program", small_program(2, 10)}});
  ASSERT_TRUE(reply.value("ok", false)) << reply.dump();
  int job = reply["job"];
  auto client = node.client();
  ASSERT_TRUE(eventually([&] {
    auto s = client->snapshot();
    return s.ok() && !s->processes().empty();
  }));
  auto snap = client->snapshot();
  const auto& procs = snap->processes();
  ASSERT_EQ(procs.size(), 2u);
  EXPECT_EQ(procs[0].pid, static_cast<int>(getpid()));  // the submitting process, from its credentials
  EXPECT_EQ(procs[0].name, "pytest");
  EXPECT_EQ(procs[0].hbm_bytes, 2ull << 30);
  ASSERT_TRUE(eventually([&] {
    auto s = client->snapshot();
    return s.ok() && *s->device(0, tf::fid::kAicoreUtil).number() > 30.0;
  }));
  EXPECT_DOUBLE_EQ(*client->snapshot()->device(5, tf::fid::kAicoreUtil).number(), 0.0);
  ASSERT_TRUE(eventually([&] {
    return node.control({{"op", "job_status"}, {"job", job}})["job"]["state"] == "done";
  }, std::chrono::seconds(10)));
  json status = node.control({{"op", "job_status"}, {"job", job}});
  EXPECT_EQ(status["job"]["steps_done"], 10);
  EXPECT_GE(status["job"]["step_ms"][0].get<double>(), 20.0);  // the host delay overlaps the matmuls
  EXPECT_TRUE(eventually([&] { return client->snapshot()->processes().empty(); }));
}

TEST(Daemon, AJobHoldingNoMemoryIsStillListedAsTheDevicesUser) {
  ScopedNode node("nomem");
  json program = small_program(1, 20);
  program["ranks"][0].erase("setup");  // compute only: no device memory held
  program["process"]["name"] = "burn";
  json reply = node.control({{"op", "submit"}, {"program", program}});
  ASSERT_TRUE(reply.value("ok", false)) << reply.dump();
  auto client = node.client();
  ASSERT_TRUE(eventually([&] {
    auto s = client->snapshot();
    return s.ok() && !s->processes().empty();
  }));
  auto procs = client->snapshot()->processes();
  ASSERT_EQ(procs.size(), 1u);
  EXPECT_EQ(procs[0].device, 0);
  EXPECT_EQ(procs[0].name, "burn");
  EXPECT_EQ(procs[0].hbm_bytes, 0u);
  EXPECT_EQ(procs[0].pid, static_cast<int>(getpid()));
}

TEST(Daemon, BadProgramsAndRequestsGetAnErrorReplyAndTheDaemonStaysUp) {
  ScopedNode node("bad");
  json p = small_program(1, 1);
  p["ranks"][0]["step"][0]["name"] = "roi_align_v9";
  json reply = node.control({{"op", "submit"}, {"program", p}});
  EXPECT_FALSE(reply.value("ok", true));
  EXPECT_EQ(reply["error"], "NotFound: Operator roi_align_v9 does not have kernel for NPU");
  p = small_program(1, 1);
  p["ranks"][0]["device"] = 11;
  reply = node.control({{"op", "submit"}, {"program", p}});
  EXPECT_EQ(reply["error"], "invalid device id 11 (this node has devices 0-7)");
  EXPECT_EQ(node.control({{"op", "frobnicate"}})["error"], "unknown op 'frobnicate'");
  auto raw = tf::ControlClient::connect(node.name(), tf::control_socket_path(node.name()), std::chrono::seconds(5));
  ASSERT_TRUE(raw.ok());
  EXPECT_EQ(node.control({{"op", "inject"}, {"device", "x"}})["error"], "missing integer \"device\" (or \"npu_id\" and \"chip_id\")");
  EXPECT_TRUE(node.control({{"op", "status"}}).value("ok", false));  // still serving
}

TEST(Daemon, FaultsInjectedFromTheCliShowOnTheBus) {
  ScopedNode node("fault");
  auto r = run_command(emud() + " inject --node-name " + node.name() + " --device 2 --fault hbm-double-bit");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto client = node.client();
  ASSERT_TRUE(eventually([&] { return client->snapshot()->health(2) == tf::Health::kAlarm; }));
  auto snap = client->snapshot();
  EXPECT_EQ(snap->device(2, tf::fid::kErrorCode).as_u64(), 0x80E01802u);
  EXPECT_EQ(snap->device(2, tf::fid::kEccDoubleBitTotal).as_u64(), 1u);
  EXPECT_EQ(snap->health(1), tf::Health::kOk);
  EXPECT_EQ(run_command(emud() + " inject --node-name " + node.name() + " --device 2 --fault melt").exit_code, 3);
  ASSERT_EQ(run_command(emud() + " clear --node-name " + node.name() + " --device 2").exit_code, 0);
  EXPECT_TRUE(eventually([&] { return client->snapshot()->health(2) == tf::Health::kOk; }));
  ASSERT_EQ(run_command(emud() + " set --node-name " + node.name() + " --device 1 --power-limit 150").exit_code, 0);
  EXPECT_TRUE(eventually([&] { return *client->snapshot()->device(1, tf::fid::kPowerLimitWatts).number() == 150.0; }));
  EXPECT_EQ(run_command(emud() + " set --node-name " + node.name() + " --device 1 --power-limit 900").exit_code, 3);
}

TEST(Daemon, StatusListsActiveFaultsAndAJobsFaultsEndWithIt) {
  ScopedNode node("active");
  ASSERT_EQ(run_command(emud() + " inject --node-name " + node.name() + " --device 6 --fault ecc-storm").exit_code, 0);
  json program = small_program(1, 6);
  program["name"] = "hot-job";
  program["faults"] = json::array({{{"at_ns", 0}, {"device", 0}, {"fault", "over-temperature"}}});
  json reply = node.control({{"op", "submit"}, {"program", program}});
  ASSERT_TRUE(reply.value("ok", false)) << reply.dump();
  int job = reply["job"];
  auto has = [](const json& faults, int device, const std::string& fault) {
    for (const json& f : faults) {
      if (f["device"] == device && f["fault"] == fault) return true;
    }
    return false;
  };
  ASSERT_TRUE(eventually([&] { return has(node.control({{"op", "status"}})["faults"], 0, "over-temperature"); }));
  auto text = run_command(emud() + " status --node-name " + node.name());
  EXPECT_NE(text.output.find("active fault: device 0 over-temperature since "), std::string::npos) << text.output;
  EXPECT_NE(text.output.find("(from job " + std::to_string(job) + " 'hot-job')"), std::string::npos) << text.output;
  EXPECT_NE(text.output.find("active fault: device 6 ecc-storm since 0."), std::string::npos) << text.output;
  EXPECT_NE(text.output.find("(from control)"), std::string::npos);
  ASSERT_TRUE(eventually([&] {
    return node.control({{"op", "job_status"}, {"job", job}})["job"]["state"] == "done";
  }, std::chrono::seconds(10)));
  json faults = node.control({{"op", "status"}})["faults"];
  EXPECT_FALSE(has(faults, 0, "over-temperature")) << faults.dump();  // ended with its job
  EXPECT_TRUE(has(faults, 6, "ecc-storm")) << faults.dump();          // injected by hand: stays
}

TEST(Daemon, KilledDaemonReadsStaleAndTheNextStartRecovers) {
  ScopedNode node("kill");
  int pid = node.daemon_pid();
  ASSERT_GT(pid, 1);
  ASSERT_EQ(::kill(pid, SIGKILL), 0);
  auto client = tf::ShmClient::open({.node = node.name()});
  ASSERT_TRUE(client.ok());
  auto t0 = std::chrono::steady_clock::now();
  ASSERT_TRUE(eventually([&] {
    auto s = (*client)->snapshot();
    return !s.ok() || s->stale();
  }, std::chrono::seconds(3)));
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(2100));
  auto snap = (*client)->snapshot();
  if (snap.ok()) {
    EXPECT_EQ(snap->health(0), tf::Health::kUnknown);
    EXPECT_EQ(snap->device(0, tf::fid::kPowerWatts).status, tf::SampleStatus::kStale);
  }
  auto status = run_command(emud() + " status --node-name " + node.name());
  EXPECT_EQ(status.exit_code, 5);
  EXPECT_NE(status.output.find("is stale"), std::string::npos) << status.output;
  auto restart = run_command(emud() + " start --node-name " + node.name());
  EXPECT_EQ(restart.exit_code, 0) << restart.output;
  EXPECT_EQ(run_command(emud() + " status --node-name " + node.name()).exit_code, 0);
}

TEST(Daemon, AnotherUserMayReadButNotMutate) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to become another user";
  ScopedNode node("uid", "");
  std::string sock = tf::control_socket_path(node.name());
  ASSERT_EQ(::chmod(sock.c_str(), 0666), 0);  // let the other user connect at all
  pid_t child = fork();
  if (child == 0) {
    if (setgid(65534) != 0 || setuid(65534) != 0) _exit(10);
    auto c = tf::ControlClient::connect(node.name(), sock, std::chrono::seconds(5));
    if (!c.ok()) _exit(11);
    auto status = (*c)->call({{"op", "status"}});
    if (!status.ok() || !status->value("ok", false)) _exit(12);
    auto inject = (*c)->call({{"op", "inject"}, {"device", 0}, {"fault", "device-lost"}});
    if (!inject.ok()) _exit(13);
    if (inject->value("ok", true)) _exit(14);
    if (inject->value("error", std::string()) != "permission denied: uid 65534 may not inject") _exit(15);
    _exit(0);
  }
  int wstatus = 0;
  waitpid(child, &wstatus, 0);
  ASSERT_TRUE(WIFEXITED(wstatus));
  EXPECT_EQ(WEXITSTATUS(wstatus), 0) << "10 setuid, 11 connect, 12 status, 13 call, 14 allowed, 15 message";
  auto snap = node.client()->snapshot();
  EXPECT_EQ(snap->health(0), tf::Health::kOk);  // nothing was injected
}

TEST(Daemon, TwoNamedNodesRunSideBySide) {
  ScopedNode a("sidea");
  ScopedNode b("sideb", "--spec 4x310P3");
  ASSERT_TRUE(eventually([&] {
    auto sa = a.client()->snapshot();
    auto sb = b.client()->snapshot();
    return sa.ok() && sb.ok() && !sa->stale() && !sb->stale();
  }));
  EXPECT_EQ(a.client()->snapshot()->node().node_spec, "8x910B2");
  EXPECT_EQ(b.client()->snapshot()->node().node_spec, "4x310P3");
  EXPECT_EQ(b.client()->snapshot()->device_info(3).npu_id, 1);
  EXPECT_EQ(b.client()->snapshot()->device_info(3).chip_id, 1);
}

// A cluster publishes one bus per host, named <node>-<h>: each shows its own 8 NPUs numbered from
// 0 (as that machine's npu-smi does) with their RoCE ports, takes requests in its own numbering,
// and shows only its own faults and processes.
TEST(Daemon, AClusterPublishesOneBusPerHost) {
  ScopedNode node("clu", "--spec 2x8x910B2");
  const std::string host0 = node.name() + "-0", host1 = node.name() + "-1";
  auto open = [](const std::string& name) {
    auto c = telemetry::ShmClient::open({.node = name});
    EXPECT_TRUE(c.ok()) << c.status().message();
    return c.ok() ? std::move(*c) : nullptr;
  };
  auto bus0 = open(host0), bus1 = open(host1);
  ASSERT_TRUE(bus0 && bus1);
  // One host cannot stop alone: refused, naming the cluster (it stopped every host and said only
  // that host had stopped).
  auto stop_one = run_command(emud() + " stop --node-name " + host1);
  EXPECT_EQ(stop_one.exit_code, 3) << stop_one.output;
  EXPECT_NE(stop_one.output.find("is one host of cluster '" + node.name() + "'"), std::string::npos) << stop_one.output;
  EXPECT_EQ(run_command(emud() + " status --node-name " + host0).exit_code, 0);
  // The cluster's own name has no bus: a reader pointed at it says which names to read.
  auto own = run_command(std::string(NPU_SMI_PATH) + " info --node-name " + node.name());
  EXPECT_EQ(own.exit_code, 5) << own.output;
  EXPECT_EQ(own.output, "npu-smi: '" + node.name() + "' is a cluster of 2 hosts, each with its own bus: name a host, " + host0 +
                            " .. " + host1 + " (--node-name " + host0 + ")\n");
  auto snap = bus1->snapshot();
  ASSERT_TRUE(snap.ok());
  EXPECT_EQ(snap->device_count(), 8);
  // One virtual clock: both buses state one realtime base for it (profiles of the hosts line up).
  EXPECT_EQ(snap->node().start_realtime_ns, bus0->snapshot()->node().start_realtime_ns);
  EXPECT_EQ(snap->node().node_spec, "8x910B2");
  int roce = 0;
  for (int l = 0; l < snap->link_count(); ++l) roce += snap->link_info(l).kind == "roce" ? 1 : 0;
  EXPECT_EQ(roce, 16) << "each NPU's RoCE port, up and down";
  auto r = run_command(emud() + " inject --node-name " + host1 + " --device 3 --fault hbm-double-bit");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  ASSERT_TRUE(eventually([&] { return bus1->snapshot()->health(3) == tf::Health::kAlarm; }));
  EXPECT_EQ(bus0->snapshot()->health(3), tf::Health::kOk) << "host 0's NPU 3 is another chip";
  auto status1 = run_command(emud() + " status --node-name " + host1);
  EXPECT_NE(status1.output.find("node '" + host1 + "': 8x910B2, 8 devices"), std::string::npos) << status1.output;
  EXPECT_NE(status1.output.find("active fault: device 3 hbm-double-bit"), std::string::npos) << status1.output;
  EXPECT_NE(run_command(emud() + " status --node-name " + host0).output.find("active faults: none"), std::string::npos);
  // Host 1's NPU 3's RoCE port, in host 1's numbering: that port of that host only slows down.
  r = run_command(emud() + " inject --node-name " + host1 + " --link 3-roce --fault link-degraded");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto port_rate = [](const tf::Snapshot& s, int device) {
    for (int l = 0; l < s.link_count(); ++l) {
      const auto& info = s.link_info(l);
      if (info.kind == "roce" && info.device_a == device) {  // the bus writes a port's far end as -1
        return s.link(l, tf::fid::kLinkRatePercent).number().value_or(-1);
      }
    }
    return -2.0;
  };
  ASSERT_TRUE(eventually([&] { return port_rate(*bus1->snapshot(), 3) == 25.0; })) << port_rate(*bus1->snapshot(), 3);
  EXPECT_EQ(port_rate(*bus0->snapshot(), 3), 100.0) << "host 0's NPU 3's port is another port";
  EXPECT_EQ(port_rate(*bus1->snapshot(), 4), 100.0);
  EXPECT_NE(run_command(emud() + " status --node-name " + host1).output.find("active fault: link 3-roce link-degraded"),
            std::string::npos);
  auto health = run_command(std::string(NPU_SMI_PATH) + " health --node-name " + host1);
  EXPECT_NE(health.output.find("roce link 3-roce runs at 25% of its line rate"), std::string::npos) << health.output;
  auto bad = run_command(emud() + " inject --node-name " + host1 + " --device 8 --fault hbm-double-bit");
  EXPECT_EQ(bad.exit_code, 3) << bad.output;
  EXPECT_NE(bad.output.find("invalid device id 8 (this node has devices 0-7)"), std::string::npos) << bad.output;
  json program = small_program(1, 1000);
  program["ranks"][0]["device"] = 2;
  auto submitted = bus1->control({{"op", "submit"}, {"program", program}});
  ASSERT_TRUE(submitted.ok()) << submitted.status().message();
  json reply = *submitted;
  ASSERT_TRUE(reply.value("ok", false)) << reply.dump();
  ASSERT_TRUE(eventually([&] {
    auto s = bus1->snapshot();
    return s.ok() && !s->processes().empty() && s->processes()[0].device == 2;
  })) << "host 1's device 2 runs it";
  EXPECT_TRUE(bus0->snapshot()->processes().empty()) << "nothing runs on host 0";
  (void)bus1->control({{"op", "cancel"}, {"job", reply["job"]}});
}

// Host faults act on a whole host: a slow host is one incident on its own npu-smi health (the
// other host clean); a host that is down stops publishing, so its readers see it stale, its
// last words (host_down) still the verdict, until cleared. A device request cannot name one, nor a host socket another host.
TEST(Daemon, AHostFaultActsOnThatHostOnly) {
  ScopedNode node("hostf", "--spec 2x8x910B2");
  const std::string host0 = node.name() + "-0", host1 = node.name() + "-1";
  auto health = [](const std::string& host) { return run_command(std::string(NPU_SMI_PATH) + " health --node-name " + host); };
  auto r = run_command(emud() + " inject --node-name " + node.name() + " --host 1 --fault host-slow");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("inject done on host 1"), std::string::npos) << r.output;
  auto slow = health(host1);
  EXPECT_EQ(slow.exit_code, 1) << slow.output;  // WARN
  EXPECT_NE(slow.output.find("Node " + host1 + " (8x910B2): WARN"), std::string::npos) << slow.output;
  EXPECT_NE(slow.output.find("0x80F00002  node          host " + host1 + " is slow"), std::string::npos) << slow.output;
  EXPECT_EQ(health(host0).exit_code, 0);
  auto wrong = run_command(emud() + " inject --node-name " + host0 + " --host 1 --fault host-slow");
  EXPECT_EQ(wrong.exit_code, 3) << wrong.output;
  EXPECT_NE(wrong.output.find("no host 1 here (node '" + host0 + "' has host 0)"), std::string::npos) << wrong.output;
  auto on_device = run_command(emud() + " inject --node-name " + host0 + " --device 2 --fault host-down");
  EXPECT_EQ(on_device.exit_code, 3) << on_device.output;
  EXPECT_NE(on_device.output.find("host-down acts on a whole host"), std::string::npos) << on_device.output;
  ASSERT_EQ(run_command(emud() + " inject --node-name " + node.name() + " --host 1 --fault host-down").exit_code, 0);
  // Its last words are the cause, one incident for the host (it read PASS until the bus went stale,
  // then never named host_down; its eight lost NPUs were eight more incidents).
  auto down = health(host1);
  EXPECT_EQ(down.exit_code, 2) << down.output;
  EXPECT_NE(down.output.find("Critical 0x80F00003  node          host " + host1 + " is down"), std::string::npos) << down.output;
  EXPECT_EQ(down.output.find("Critical 0xFFFFFFFF"), std::string::npos) << down.output;
  // Once its bus is stale, its last words still hold: FAIL, host_down, not UNKNOWN "telemetry
  // stale" (a script's exit code went from 2 to 3 two seconds after the host died).
  ASSERT_TRUE(eventually([&] { return health(host1).output.find("is stale") != std::string::npos; }, std::chrono::seconds(8)))
      << health(host1).output;
  auto quiet = health(host1);
  EXPECT_EQ(quiet.exit_code, 2) << quiet.output;
  EXPECT_NE(quiet.output.find("Node " + host1 + " (8x910B2): FAIL"), std::string::npos) << quiet.output;
  EXPECT_NE(quiet.output.find("Critical 0x80F00003  node          host " + host1 + " is down"), std::string::npos) << quiet.output;
  EXPECT_EQ(quiet.output.find("telemetry stale"), std::string::npos) << quiet.output;
  EXPECT_EQ(health(host0).exit_code, 0) << "host 0 keeps publishing";
  ASSERT_EQ(run_command(emud() + " clear --node-name " + node.name() + " --host 1").exit_code, 0);
  ASSERT_TRUE(eventually([&] { return health(host1).exit_code == 0; }, std::chrono::seconds(8))) << health(host1).output;
}

}  // namespace
}  // namespace npukit::testing

namespace npukit::testing {
namespace {

TEST(Daemon, TaskEventsCarryWhatAProfilerNeeds) {
  ScopedNode node("events");
  auto client = node.client();
  auto cursor = client->open_events(/*lossless=*/false);
  ASSERT_TRUE(cursor.ok()) << cursor.status().message();
  nlohmann::json program = {
      {"name", "ev"}, {"repeat", 2}, {"process", {{"pid", 0}, {"name", "evtest"}}},
      {"ranks", {{{"device", 1}, {"streams", 1},
                  {"step", {{{"op", "kernel"}, {"stream", 0}, {"name", "aten::mm"},
                             {"inputs", {{{"shape", {256, 512}}, {"dtype", "float16"}}, {{"shape", {512, 128}}, {"dtype", "float16"}}}}},
                            {{"op", "memcpy"}, {"stream", 0}, {"kind", "D2H"}, {"bytes", 4096}}}}}}}};
  ASSERT_TRUE(node.control({{"op", "submit"}, {"program", program}}).value("ok", false));
  std::vector<telemetry::Event> kernels, launches, steps, copies;
  ASSERT_TRUE(eventually([&] {
    auto batch = (*cursor)->next(1024, std::chrono::milliseconds(50));
    for (const auto& e : batch.events) {
      if (e.type == telemetry::EventType::kKernel) kernels.push_back(e);
      if (e.type == telemetry::EventType::kLaunch) launches.push_back(e);
      if (e.type == telemetry::EventType::kStep) steps.push_back(e);
      if (e.type == telemetry::EventType::kMemcpy) copies.push_back(e);
    }
    return steps.size() >= 2;
  }));
  ASSERT_EQ(kernels.size(), 2u);
  ASSERT_EQ(copies.size(), 2u);
  EXPECT_EQ(launches.size(), 4u);
  const auto& k = kernels[0];
  EXPECT_EQ(k.device, 1);
  EXPECT_EQ(*(*cursor)->resolve(k.name_id), "MatMulV2");
  EXPECT_EQ(*(*cursor)->resolve(k.aux_id), "aten::mm|256,512;512,128|FLOAT16;FLOAT16|256,128|FLOAT16|static|NO");
  EXPECT_EQ(telemetry::unpack_pid(k.words[1]), static_cast<uint32_t>(getpid()));
  uint64_t task_id = k.words[3] >> 8 & ((1ull << 48) - 1);
  bool linked = false;
  for (const auto& l : launches) linked = linked || (l.words[0] == task_id && l.ts_ns <= k.ts_ns);
  EXPECT_TRUE(linked) << "a launch event carries the kernel's task id";
  EXPECT_GT(k.words[0], 0u);
  EXPECT_EQ(*(*cursor)->resolve(steps[0].name_id), "ev");
  EXPECT_EQ(steps[1].words[1], 1u);
}

}  // namespace
}  // namespace npukit::testing

namespace npukit::testing {
namespace {

TEST(Daemon, AllocLinkAndEccEventsReachTheBus) {
  ScopedNode node("nodeev");
  auto client = node.client();
  auto cursor = client->open_events(/*lossless=*/false);
  ASSERT_TRUE(cursor.ok()) << cursor.status().message();
  ASSERT_TRUE(node.control({{"op", "submit"}, {"program", small_program(1, 1)}}).value("ok", false));
  ASSERT_EQ(run_command(emud() + " inject --node-name " + node.name() + " --device 2 --fault link-down").exit_code, 0);
  ASSERT_EQ(run_command(emud() + " inject --node-name " + node.name() + " --device 6 --fault hbm-double-bit").exit_code, 0);
  std::vector<telemetry::Event> allocs, frees, links, ecc;
  ASSERT_TRUE(eventually([&] {
    auto batch = (*cursor)->next(1024, std::chrono::milliseconds(50));
    for (const auto& e : batch.events) {
      if (e.type == telemetry::EventType::kAlloc) allocs.push_back(e);
      if (e.type == telemetry::EventType::kFree) frees.push_back(e);
      if (e.type == telemetry::EventType::kLinkStateChanged) links.push_back(e);
      if (e.type == telemetry::EventType::kEccError) ecc.push_back(e);
    }
    return !frees.empty() && links.size() >= 14 && !ecc.empty();
  }, std::chrono::seconds(10)));
  ASSERT_EQ(allocs.size(), 1u);
  ASSERT_EQ(frees.size(), 1u) << "the job's buffer is freed when it ends";
  EXPECT_EQ(allocs[0].device, 0);
  EXPECT_EQ(allocs[0].words[0], 2ull << 30);
  EXPECT_EQ(allocs[0].words[2] & 0xffffffff, static_cast<uint64_t>(getpid())) << "the submitting process";
  EXPECT_EQ(frees[0].words[1], allocs[0].words[1]);
  EXPECT_GT(frees[0].ts_ns, allocs[0].ts_ns);
  EXPECT_EQ(links.size(), 14u);
  std::set<uint64_t> distinct;
  for (const auto& e : links) {
    EXPECT_EQ(e.device, 2);
    EXPECT_EQ(e.words[1], 0u);
    distinct.insert(e.words[0]);
  }
  EXPECT_EQ(distinct.size(), 14u);
  ASSERT_EQ(ecc.size(), 1u);
  EXPECT_EQ(ecc[0].device, 6);
  EXPECT_EQ(ecc[0].words, (std::array<uint64_t, 4>{2, 1, 1, 1}));
}

}  // namespace
}  // namespace npukit::testing

// For a stall's report (the control fuzz target prints it when a request goes unanswered): what
// the node thread and the control server's thread are doing and for how long: before run() the
// node thread is starting, then an idle node waits between publishes while the server polls.
namespace npukit::testing {
namespace {

TEST(Daemon, ItsActivityNamesTheNodeThreadsPhase) {
  emu::DaemonOptions o;
  o.node_name = unique_node("activity");
  auto d = emu::Daemon::create(o);
  ASSERT_TRUE(d.ok()) << d.status().message();
  EXPECT_EQ((*d)->activity().rfind("node thread: starting for ", 0), 0u) << (*d)->activity();
  std::thread node([&] { (*d)->run(); });
  std::string seen;
  EXPECT_TRUE(eventually([&] { return (seen = (*d)->activity()).rfind("node thread: waiting for ", 0) == 0; })) << seen;
  EXPECT_NE(seen.find("; longest recent: "), std::string::npos) << seen;
  EXPECT_EQ(seen.find("node thread: waiting for 0.000 s; longest recent: none"), std::string::npos) << seen;
  const std::string server = "; control server '" + o.node_name + "': polling for ";
  EXPECT_TRUE(eventually([&] { return (seen = (*d)->activity()).find(server) != std::string::npos; })) << seen;
  EXPECT_NE(seen.find(" connections"), std::string::npos) << "and its connections: " << seen;
  (*d)->request_stop();
  node.join();
}

}  // namespace
}  // namespace npukit::testing

namespace npukit::testing {
namespace {

namespace tf = telemetry;

// A chip that fell off the bus reads nothing: no power, temperature, clock or usage (its AI Core
// usage read 0% in npu-smi, JSON and npu-top beside NA power).
TEST(Daemon, ALostDeviceReadsNoValues) {
  ScopedNode node("lost");
  auto inject = run_command(emud() + " inject --node-name " + node.name() + " --device 2 --fault device-lost");
  ASSERT_EQ(inject.exit_code, 0) << inject.output;
  ASSERT_TRUE(eventually([&] {
    auto snap = node.client()->snapshot();
    return snap.ok() && !snap->device(2, tf::fid::kPowerWatts).number().has_value();
  }));
  auto snap = node.client()->snapshot();
  for (auto f : {tf::fid::kAicoreUtil, tf::fid::kCubeUtil, tf::fid::kVectorUtil, tf::fid::kNpuUtil,
                 tf::fid::kHbmBandwidthUtil, tf::fid::kAicoreClockMhz, tf::fid::kTemperatureCelsius}) {
    EXPECT_FALSE(snap->device(2, f).number().has_value()) << "field " << f;
  }
  EXPECT_TRUE(snap->device(1, tf::fid::kAicoreUtil).number().has_value());  // its neighbours still read
}

}  // namespace
}  // namespace npukit::testing

namespace npukit::testing {
namespace {

// A host's job accounting (npu-smi stats) shows the jobs that ran on its own NPUs, numbered as it
// numbers them (host 1 listed host 0's job as its NPU 0-1, and its own NPUs as "NPU -1 Chip -1").
TEST(Daemon, AHostsJobAccountingIsItsOwnNpus) {
  ScopedNode node("acct", "--spec 2x8x910B2 --speed 100");
  auto run = run_command(std::string(NPU_RUN_PATH) + " resnet50-train --node " + node.name() + " --devices 9 --steps 1");
  ASSERT_EQ(run.exit_code, 0) << run.output;
  auto host0 = run_command(std::string(NPU_SMI_PATH) + " stats --json --node-name " + node.name() + "-0");
  auto host1 = run_command(std::string(NPU_SMI_PATH) + " stats --json --node-name " + node.name() + "-1");
  ASSERT_EQ(host1.exit_code, 0) << host1.output;
  auto jobs0 = nlohmann::json::parse(host0.output, nullptr, false), jobs1 = nlohmann::json::parse(host1.output, nullptr, false);
  EXPECT_TRUE(jobs0["jobs"].empty()) << host0.output;
  ASSERT_EQ(jobs1["jobs"].size(), 1u) << host1.output;
  const auto& devices = jobs1["jobs"][0]["accounting"]["devices"];
  ASSERT_EQ(devices.size(), 1u) << host1.output;
  EXPECT_EQ(devices[0]["device"], 1);
  EXPECT_EQ(devices[0]["npu_id"], 1);
}

}  // namespace
}  // namespace npukit::testing
