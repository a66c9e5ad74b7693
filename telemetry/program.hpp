// Programs: the per-rank task lists that workloads compile and the emulator executes. They
// travel down the bus (the `submit` control request), so their format lives here, beside the
// protocol.
//
// JSON shape (every field named here; unknown fields are errors so typos surface):
//   { "name": "resnet50-train", "allocator": "caching", "launch": "eager", "dispatch_ns": 0, "repeat": 10,
//     "process": {"pid": 4242, "name": "python3"},
//     "comms": [{"name": "world", "algo": "auto", "ranks": [0, 1, ...]}],  // optional communicators
//     (or "comm": {"name": "world", "algo": "auto"}: one communicator over all ranks)
//     "ranks": [ { "device": 0, "streams": 2, "events": 1,
//                  "setup": [ <op>... ],                     // once
//                  "step":  [ <op>... ] } ] }                // `repeat` times
// Ops ("op" selects the kind; buffers are per-rank names):
//   {"op":"alloc","buf":"w","bytes":N}      {"op":"free","buf":"w"}      {"op":"empty_cache"}
//   (an alloc may add "bytes_by_step":[N0,N1,...]: in step k it allocates N[k % n], as the
//   activations of a varying batch do; `bytes` is then the largest)
//   {"op":"kernel","stream":S,"name":"aten::mm","inputs":[{"shape":[..],"dtype":"float16"}],
//    "attrs":{"k":v},"block_dim":0,
//    "vary":{"input":I,"dim":D,"values":[v0,v1,...]}}   (optional: in step k, dim D of input I is
//    values[k % n], as a batch whose sequence length changes from step to step)
//   {"op":"memcpy","stream":S,"kind":"H2D"|"D2H"|"D2D","bytes":N}
//   {"op":"record","stream":S,"event":E}   {"op":"wait","stream":S,"event":E}
//   {"op":"collective","stream":S,"kind":"AllReduce","count":N,"dtype":"float16",
//    "reduce":"sum","root":R,"peer":P,"comm":C}   (C indexes "comms"; 0 by default)
//   {"op":"host_delay","ns":N}             (host-side time: data loading, Python overhead)
//   {"op":"sync"} / {"op":"sync","stream":S}
//   {"op":"memtest","stream":S,"buf":"b","patterns":4}   (diagnostics: writes and reads back
//    `patterns` bit patterns over buffer b on the stream; pages that fail are job findings)
// "jit_compile": true: the framework compiles each op online for every static shape it has not
// compiled before in this process (torch_npu's jit_compile=True), a host cost (spec
// runtime.op_compile_ns) before its launch; false (default): prebuilt kernels, no compile.
// Faults: "faults": [{"at_ns": N, "device": D, "action": "inject", "fault": "over-temperature"}]
// Values are checked when the program is parsed; errors name the JSON path
// ("program error: ranks[0].step[3].stream: stream 2 does not exist (rank has 2 streams)").
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "telemetry/status.hpp"

namespace npukit::telemetry {

// The bit patterns a memtest op can write, in order (0x00.., 0xFF.., 0x55.., 0xAA.., walking ones...).
inline constexpr uint64_t kMaxMemTestPatterns = 8;

struct ProgramOp {
  enum class Kind : uint8_t { kAlloc, kFree, kEmptyCache, kKernel, kMemcpy, kRecord, kWait, kCollective,
                              kHostDelay, kSync, kMemTest, kInput };
  Kind kind = Kind::kKernel;
  int stream = -1;           // -1: none / all (sync)
  int event = -1;
  std::string buffer;        // alloc/free/memtest
  uint64_t bytes = 0;        // alloc, memcpy
  std::vector<uint64_t> bytes_by_step;  // alloc: step k allocates [k % n] (empty: `bytes`)
  std::string name;          // kernel op name; collective kind; memcpy kind
  nlohmann::json inputs;     // kernel: [{"shape":[...],"dtype":"..."}]
  nlohmann::json attrs;      // kernel attributes (object)
  uint32_t block_dim = 0;
  uint64_t count = 0;        // collective elements; memtest patterns; input samples
  std::string dtype;         // collective dtype
  std::string reduce = "sum";
  int root_or_peer = 0;
  int comm = 0;              // collective: index into Program::comms
  int64_t ns = 0;            // host_delay
  struct Vary {              // kernel: a dim that changes from step to step
    int input = -1;          // -1: none
    int dim = 0;
    std::vector<int64_t> values;
  } vary;
};

inline constexpr std::size_t kMaxVaryValues = 4096;

struct CommSpec {
  std::string name = "world";
  std::string algo = "auto";
  std::vector<int> ranks;  // program ranks in communicator-rank order; empty = all ranks
};

// A fault on the program's timeline, relative to the job's start.
struct ProgramFault {
  int64_t at_ns = 0;
  int device = 0;
  int peer = -2;                  // else the fault is on the link device-peer (-1: the host, -3: its
                                  // RoCE port, -4: its port into the node's switch; incidents.hpp)
  std::string action = "inject";  // inject, clear, reset, power-limit
  std::string fault;              // for inject
  double watts = 0;               // for power-limit
};

struct RankProgram {
  int device = 0;
  int streams = 1;
  int events = 0;
  std::vector<ProgramOp> setup;
  std::vector<ProgramOp> step;
  // >= 0: this rank runs the setup and step of that earlier rank (which has its own; streams and
  // events equal), and carries none: a job of 1,024 identical ranks holds one copy.
  int ops_of = -1;
};

// The rank whose setup and step rank `r` runs (itself, or its ops_of).
inline const RankProgram& ops_of(const std::vector<RankProgram>& ranks, std::size_t r) {
  return ranks[r].ops_of >= 0 ? ranks[static_cast<std::size_t>(ranks[r].ops_of)] : ranks[r];
}

struct Program {
  std::string name;
  uint32_t pid = 0;
  std::string process_name;
  std::string allocator = "caching";
  std::string launch = "eager";  // eager: a host launch per op; graph: kernels and collectives captured
  int64_t dispatch_ns = 0;       // eager: the framework's host time per op before its launch call
  bool jit_compile = false;      // eager: compile each op online for each new static shape
  std::string layout;            // how the ranks split the model, e.g. "dp4 x tp2" ("" = not said)
  // The input pipeline of each host (data loader workers, decoding and augmentation on its CPUs,
  // shared by the job's ranks on that host): samples it prepares per second. An "input" op takes
  // its samples from its host's pipeline and waits until they are ready. 0: no limit.
  double host_input_samples_per_s = 0;
  int64_t repeat = 1;
  std::vector<CommSpec> comms;
  std::vector<ProgramFault> faults;
  std::vector<RankProgram> ranks;
};

Result<Program> parse_program(const nlohmann::json& j);
// Reads a kernel's "vary" object at `path` against its `inputs` (shapes, or {shape, dtype}); a
// problem goes to `err` (when it is still ok) as "<prefix><path>.<member>: ...".
void read_vary(const nlohmann::json& j, const std::string& path, const nlohmann::json& inputs, ProgramOp::Vary& out,
               Status& err, const std::string& prefix);
nlohmann::json program_to_json(const Program& p);

}  // namespace npukit::telemetry
