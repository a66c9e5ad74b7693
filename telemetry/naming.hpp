// Names of a node's bus objects, and the messages every tool prints about them.
//
//   shared memory segment  /npukit-<node>   (POSIX shm; on Linux the file /dev/shm/npukit-<node>)
//   control socket         <dir>/npukit-<node>.sock, <dir> = $XDG_RUNTIME_DIR when it is set
//                          to an existing directory, else /tmp. The writer also records the
//                          socket path in the segment header, so a client running with another
//                          $XDG_RUNTIME_DIR (another user, sudo) still finds the daemon's socket.
//
// A node name is 1-48 characters of [A-Za-z0-9_.-]; anything else is InvalidArgument, so a
// name can never escape /dev/shm or the runtime directory.
//
// Thread-safety: pure functions, except node_name_from_env() and control_socket_path(), which
// read the environment.
#pragma once

#include <string>
#include <string_view>

#include "telemetry/status.hpp"

namespace npukit::telemetry {

inline constexpr std::string_view kDefaultNodeName = "npukit";
inline constexpr std::size_t kMaxNodeNameLength = 48;

// InvalidArgument "invalid node name '<name>': use 1-48 characters of [A-Za-z0-9_.-]".
Status validate_node_name(std::string_view node);
// $NPU_NODE when set and non-empty, else "npukit" (not validated: callers validate).
std::string node_name_from_env();
// Set by `npu-prof record` in the environment of the command it wraps, to the node it records:
// a tool that would run work where the recorder cannot see it (a node inside its own process)
// refuses instead of leaving a profile of something else.
inline constexpr const char* kRecorderNodeEnv = "NPUKIT_RECORDING_NODE";
// "/npukit-<node>" (the name given to shm_open).
std::string shm_name(std::string_view node);
// Where that segment shows in the file system: "/dev/shm/npukit-<node>".
std::string shm_path(std::string_view node);
// The default control socket path for `node` (see above).
std::string control_socket_path(std::string_view node);
// "no npukit node '<node>' is running (start one with: npu-emud start --node-name <node>)".
std::string no_daemon_message(std::string_view node);
// Why `node` has no bus: a cluster's own name (its control socket is there and its hosts
// <node>-0 .. publish one each) says which names to read instead; else no_daemon_message().
std::string no_bus_message(std::string_view node);
// How many hosts the cluster named `node` has (its daemon's socket is up and <node>-0 .. publish);
// 0 when `node` is not a running cluster's name.
int cluster_host_count(std::string_view node);

}  // namespace npukit::telemetry
