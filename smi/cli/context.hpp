// What an npu-smi command runs against: its output streams, the bus, the host facts it
// reads (NUMA cpulists for topo), a clock for timestamps and a stop token for watch. The CLI
// fills it from the process (npu_smi_main.cpp); tests fill it with an in-process bus, string
// streams and fixed host facts, so every command is testable without a daemon.
//
// Exit codes (npu-smi's own for the compatible commands, ours for the extensions) are listed
// here once; `npu-smi -h` and docs/npu-smi.md print the same table.
//
// Thread-safety: one command at a time per Context.
#pragma once

#include "telemetry/exit_codes.hpp"
#include <functional>
#include <iosfwd>
#include <memory>
#include <stop_token>
#include <string>
#include <vector>

#include "telemetry/client.hpp"

namespace npukit::smi {

// npu-smi's codes as the shell sees them (rc & 0xFF of its negative return codes).
inline constexpr int kExitOk = 0;
inline constexpr int kExitInvalidParameter = 215;  // -9001: bad option, type or id
inline constexpr int kExitNotFound = 211;          // -9005: "Command or option is not found."
inline constexpr int kExitInvalidDeviceId = 249;   // -9007: the node rejected a device id
inline constexpr int kExitAborted = 232;           // -9016: the user declined a reset
inline constexpr int kExitDcmiFailed = 237;        // -9019: the node refused a set/clear request
inline constexpr int kExitNotSupported = 217;      // -9255: set type not supported by this chip
// Ours (extensions; also used by every command for "no node" and bus errors).
inline constexpr int kExitHealthWarn = 1;     // health: at least one WARN, no FAIL
inline constexpr int kExitHealthFail = 2;     // health: at least one FAIL (Alarm/Critical)
inline constexpr int kExitHealthUnknown = 3;  // health: stale node or a device without data
inline constexpr int kExitUsage = exit_code::kUsage;    // bad arguments to an extension option
inline constexpr int kExitNoNode = exit_code::kNoNode;  // no node running (every command)
inline constexpr int kExitBusError = exit_code::kNoAccess;  // foreign/incompatible segment, or another
                                              // user's node (private, or set refused)
inline constexpr int kExitInterrupted = exit_code::kInterrupted;  // diag: SIGINT/SIGTERM during active tests

struct Context {
  std::ostream* out = nullptr;
  std::ostream* err = nullptr;
  std::istream* in = nullptr;  // answers set -t reset's confirmation prompt
  // Opens the node's bus (ShmClient for $NPU_NODE in the CLI; an in-process bus in tests).
  std::function<Result<std::unique_ptr<telemetry::Client>>()> open;
  // The host's NUMA nodes as cpulists ("0-23"), node 0 first; topo's CPU affinity maps devices
  // onto them. Empty: read /sys/devices/system/node.
  std::vector<std::string> numa_cpulists;
  // Wall-clock timestamp text for watch rows; default: UTC ISO-8601 with milliseconds.
  std::function<std::string()> timestamp;
  std::stop_token stop;  // ends watch (SIGINT in the CLI)
  bool err_is_tty = false;  // progress lines (diag's active tests) only for people
};

// The context of the real process: std streams, ShmClient for node_name_from_env().
Context process_context(std::stop_token stop);
// "2025-01-22T04:28:41.123Z" for the current time.
std::string utc_timestamp();

}  // namespace npukit::smi
